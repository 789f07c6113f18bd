#ifndef CSFXCURL_H
#define CSFXCURL_H

#include <stddef.h>

/* libcurl on demand (curl.c): URLSession calls libcurl's functions, which sfx defines, hidden,
 * and forwards to libcurl.so.4 once it is loaded at the first call. HTTPDownload calls
 * sfx_curl_download (download.c). */

/* What a download's end means. */
enum {
    SFX_CURL_OK = 0,
    SFX_CURL_HOST_NOT_FOUND,
    SFX_CURL_REFUSED,
    SFX_CURL_TLS,
    SFX_CURL_TIMED_OUT,
    SFX_CURL_DROPPED,
    SFX_CURL_HEADER_TOO_LARGE,
    SFX_CURL_REDIRECTS,
    /* A callback stopped it (begin or write said so, or cancelled did). */
    SFX_CURL_ABORTED,
    SFX_CURL_OTHER,
};

typedef struct {
    void *context;
    /* Once, before the first byte of the body (or at the end of an empty one), with the final
     * response's status and Content-Length (-1 when not given). Nonzero stops the transfer. */
    int (*begin)(void *context, long status, long long content_length);
    /* Takes `size` bytes of the body; anything but `size` stops the transfer. */
    size_t (*write)(void *context, const char *data, size_t size);
    /* Looked at while the transfer waits, at least once a second; nonzero stops it. */
    int (*cancelled)(void *context);
} sfx_curl_download_callbacks;

/* GETs `url` (http or https, redirects followed) on the calling thread until the body ends,
 * fails, or a callback stops it; a stall of `stall_seconds` with less than a byte a second (or
 * a connection not made in that time) is SFX_CURL_TIMED_OUT. Returns one of the SFX_CURL_
 * values and leaves libcurl's words in `detail`. */
int sfx_curl_download(const char *url, long stall_seconds, const sfx_curl_download_callbacks *callbacks,
                      char *detail, size_t detail_size);

#endif
