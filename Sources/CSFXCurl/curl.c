/*
 * libcurl on demand. sfx's HTTP(S) transfers (download.c: http(s) sound URLs; upload.c:
 * uploads) call libcurl, and libcurl.so.4 with what it loads (OpenSSL, GnuTLS, Kerberos, LDAP,
 * SSH, about 30 libraries) costs every `sfx` command some 4 ms at start-up when linked, longer
 * than all of aplay. So nothing links it: the libcurl functions sfx calls are defined here,
 * hidden in sfx's own image, and each goes through a pointer that the first call fills by
 * dlopen()ing libcurl.so.4 and dlsym()ing them.
 *
 * The list is what download.c and upload.c call; a function missing here fails the link.
 * Those two ask sfx_curl_available() before their first call, so a missing libcurl is their
 * one-line error (SFX_CURL_UNAVAILABLE), never a stop.
 * The variadic setters and getters take one value after the option, a long, a pointer, a
 * curl_off_t or a function pointer, all passed alike on the 64-bit ABIs sfx builds for.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Before the libraries' headers, whose declarations are made hidden: the C library's must not be. */
#include "sfx_on_demand.h"

#define CURL_DISABLE_TYPECHECK   /* the type-checking macros would rename the definitions below */
#pragma GCC visibility push(hidden)
#include <curl/curl.h>
#pragma GCC visibility pop

#include "csfxcurl.h"
#include "transfer.h"

#define SFX_CURL_FUNCTIONS(X) \
    X(curl_easy_cleanup) X(curl_easy_getinfo) X(curl_easy_init) X(curl_easy_perform) X(curl_easy_setopt) \
    X(curl_easy_strerror) X(curl_mime_addpart) X(curl_mime_data) X(curl_mime_data_cb) X(curl_mime_filename) \
    X(curl_mime_free) X(curl_mime_init) X(curl_mime_name) X(curl_mime_type) X(curl_multi_add_handle) \
    X(curl_multi_cleanup) X(curl_multi_info_read) X(curl_multi_init) X(curl_multi_perform) X(curl_multi_remove_handle) \
    X(curl_multi_timeout) X(curl_multi_wait) X(curl_slist_append) X(curl_slist_free_all)

static struct { SFX_CURL_FUNCTIONS(SFX_ON_DEMAND_FIELD) } real;
static sfx_on_demand curl_loader = {
    .sonames = {"libcurl.so.4"}, .functions = {SFX_CURL_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(real),
    .purpose = " for http(s)", .install = "install libcurl4 (apt-get install libcurl4)",
    .upgrade = "install libcurl4 7.56 or newer",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

int sfx_curl_available(char *detail, size_t detail_size)
{
    const char *error = sfx_on_demand_error(&curl_loader);
    if (error)
        snprintf(detail, detail_size, "%s", error);
    return error == NULL;
}

/* Reached only after sfx_curl_available() said yes, unless a transfer forgot to ask: then say
 * what is missing and stop, rather than call through an empty pointer. */
static void load(void)
{
    if (!sfx_on_demand_ready(&curl_loader)) {
        fprintf(stderr, "sfx: %s\n", sfx_on_demand_error(&curl_loader));
        abort();
    }
}

#define SFX_CURL(name) (load(), real.name)

void curl_easy_cleanup(CURL *curl) { SFX_CURL(curl_easy_cleanup)(curl); }

CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
    va_list arguments;
    va_start(arguments, info);
    void *out = va_arg(arguments, void *);
    va_end(arguments);
    return SFX_CURL(curl_easy_getinfo)(curl, info, out);
}

CURL *curl_easy_init(void) { return SFX_CURL(curl_easy_init)(); }

CURLcode curl_easy_perform(CURL *curl) { return SFX_CURL(curl_easy_perform)(curl); }

CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
    va_list arguments;
    va_start(arguments, option);
    void *value = va_arg(arguments, void *);
    va_end(arguments);
    return SFX_CURL(curl_easy_setopt)(curl, option, value);
}

const char *curl_easy_strerror(CURLcode code) { return SFX_CURL(curl_easy_strerror)(code); }

curl_mimepart *curl_mime_addpart(curl_mime *mime) { return SFX_CURL(curl_mime_addpart)(mime); }

CURLcode curl_mime_data(curl_mimepart *part, const char *data, size_t size) { return SFX_CURL(curl_mime_data)(part, data, size); }

CURLcode curl_mime_data_cb(curl_mimepart *part, curl_off_t size, curl_read_callback read, curl_seek_callback seek,
                           curl_free_callback free_data, void *argument)
{
    return SFX_CURL(curl_mime_data_cb)(part, size, read, seek, free_data, argument);
}

CURLcode curl_mime_filename(curl_mimepart *part, const char *name) { return SFX_CURL(curl_mime_filename)(part, name); }

void curl_mime_free(curl_mime *mime) { SFX_CURL(curl_mime_free)(mime); }

curl_mime *curl_mime_init(CURL *curl) { return SFX_CURL(curl_mime_init)(curl); }

CURLcode curl_mime_name(curl_mimepart *part, const char *name) { return SFX_CURL(curl_mime_name)(part, name); }

CURLcode curl_mime_type(curl_mimepart *part, const char *type) { return SFX_CURL(curl_mime_type)(part, type); }

CURLMcode curl_multi_add_handle(CURLM *multi, CURL *easy) { return SFX_CURL(curl_multi_add_handle)(multi, easy); }

CURLMcode curl_multi_cleanup(CURLM *multi) { return SFX_CURL(curl_multi_cleanup)(multi); }

CURLMsg *curl_multi_info_read(CURLM *multi, int *left) { return SFX_CURL(curl_multi_info_read)(multi, left); }

CURLM *curl_multi_init(void) { return SFX_CURL(curl_multi_init)(); }

CURLMcode curl_multi_perform(CURLM *multi, int *running) { return SFX_CURL(curl_multi_perform)(multi, running); }

CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *easy) { return SFX_CURL(curl_multi_remove_handle)(multi, easy); }

CURLMcode curl_multi_timeout(CURLM *multi, long *milliseconds) { return SFX_CURL(curl_multi_timeout)(multi, milliseconds); }

CURLMcode curl_multi_wait(CURLM *multi, struct curl_waitfd *extra, unsigned int extra_count, int timeout_ms, int *events)
{
    return SFX_CURL(curl_multi_wait)(multi, extra, extra_count, timeout_ms, events);
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *data) { return SFX_CURL(curl_slist_append)(list, data); }

void curl_slist_free_all(struct curl_slist *list) { SFX_CURL(curl_slist_free_all)(list); }
