/*
 * A download with libcurl's easy interface, for HTTPDownload: one blocking transfer on the
 * caller's thread, whose body goes straight from libcurl's receive buffer to the caller's write
 * function. Nothing queues in between, so a body arriving faster than it is written waits in
 * the socket (TCP flow control), and memory stays at libcurl's buffers whatever the body.
 * The functions called are curl.c's (libcurl loaded on first use).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#define CURL_DISABLE_TYPECHECK
#pragma GCC visibility push(hidden)
#include <curl/curl.h>
#pragma GCC visibility pop

#include "csfxcurl.h"
#include "transfer.h"

typedef struct {
    CURL *curl;
    sfx_curl_download_callbacks callbacks;
    int began;
    int aborted;
} transfer;

static int begin(transfer *t)
{
    if (t->began)
        return 0;
    t->began = 1;
    long status = 0;
    curl_off_t length = -1;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    return t->callbacks.begin(t->callbacks.context, status, (long long)length);
}

static size_t on_body(char *data, size_t size, size_t count, void *pointer)
{
    transfer *t = pointer;
    size_t bytes = size * count;
    if (begin(t) != 0 || t->callbacks.write(t->callbacks.context, data, bytes) != bytes) {
        t->aborted = 1;
        return bytes == 0 ? 1 : 0;   /* anything but `bytes` stops the transfer */
    }
    return bytes;
}

static int on_progress(void *pointer, curl_off_t total, curl_off_t now, curl_off_t up_total, curl_off_t up_now)
{
    (void)total; (void)now; (void)up_total; (void)up_now;
    transfer *t = pointer;
    if (t->callbacks.cancelled(t->callbacks.context)) {
        t->aborted = 1;
        return 1;
    }
    return 0;
}

int sfx_curl_download(const char *url, long stall_seconds, const sfx_curl_download_callbacks *callbacks,
                      char *detail, size_t detail_size)
{
    if (!sfx_curl_available(detail, detail_size))
        return SFX_CURL_UNAVAILABLE;
    char error[CURL_ERROR_SIZE] = "";
    transfer t = { curl_easy_init(), *callbacks, 0, 0 };
    if (!t.curl) {
        snprintf(detail, detail_size, "libcurl could not start a transfer");
        return SFX_CURL_OTHER;
    }
    curl_easy_setopt(t.curl, CURLOPT_URL, url);
    curl_easy_setopt(t.curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(t.curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t.curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(t.curl, CURLOPT_MAXREDIRS, 10L);
    /* http and https only, redirects included (CURLPROTO_HTTP | CURLPROTO_HTTPS). */
    curl_easy_setopt(t.curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(t.curl, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(t.curl, CURLOPT_USERAGENT, "sfx");
    curl_easy_setopt(t.curl, CURLOPT_CONNECTTIMEOUT, stall_seconds);
    /* Less than a byte a second for stall_seconds: stalled (CURLE_OPERATION_TIMEDOUT). */
    curl_easy_setopt(t.curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(t.curl, CURLOPT_LOW_SPEED_TIME, stall_seconds);
    curl_easy_setopt(t.curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(t.curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(t.curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(t.curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(t.curl, CURLOPT_NOPROGRESS, 0L);
    CURLcode code = curl_easy_perform(t.curl);
    int kind;
    if (t.aborted) {
        kind = SFX_CURL_ABORTED;
    } else if (code == CURLE_OK && begin(&t) != 0) {
        kind = SFX_CURL_ABORTED;   /* an empty body: the status is looked at now */
    } else {
        kind = sfx_curl_kind(code, error);
    }
    snprintf(detail, detail_size, "%s", error[0] ? error : curl_easy_strerror(code));
    curl_easy_cleanup(t.curl);
    return kind;
}
