#ifndef CSFXCURL_H
#define CSFXCURL_H

#include <stddef.h>

/* HTTP(S) over libcurl, loaded on first use (curl.c: the libcurl functions sfx calls are
 * defined there, hidden, and forwarded to libcurl.so.4 once it is loaded at the first call).
 * HTTPDownload calls sfx_curl_download (download.c), Upload sfx_curl_upload (upload.c); each is
 * one blocking transfer on the caller's thread. */

/* What a transfer's end means. */
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
    /* libcurl.so.4 cannot be loaded, or lacks a function: `detail` is the line that says what to install. */
    SFX_CURL_UNAVAILABLE,
    /* An upload's file could not be read (an error, or it got shorter while it was sent). */
    SFX_CURL_READ,
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

/* A plain form field of a multipart upload: its value is `value_size` bytes (NULs allowed). */
typedef struct {
    const char *name;
    const char *value;
    size_t value_size;
} sfx_curl_field;

typedef struct {
    const char *url;
    /* 0: PUT of the file's bytes. 1: POST of multipart/form-data: the `fields` in their order,
     * then the file in `file_field` with `file_name` and `content_type`. */
    int multipart;
    /* The file, opened by the caller and read with pread from offset 0 (never all in memory);
     * `file_size` bytes are sent (Content-Length), and a file that turns out shorter is
     * SFX_CURL_READ. */
    int fd;
    long long file_size;
    /* A PUT's Content-Type, or the file part's. */
    const char *content_type;
    const char *file_field;
    const char *file_name;
    const sfx_curl_field *fields;
    size_t field_count;
    /* Request headers as "Name: value" lines ("Name;" for an empty value), `header_count` of
     * them; a Content-Type among them replaces a PUT's `content_type`. */
    const char *const *headers;
    size_t header_count;
    /* Nothing sent or received for this long (a connection not made, a server that takes the
     * body and never answers, one that stops reading): SFX_CURL_TIMED_OUT. */
    long stall_ms;
} sfx_curl_upload_request;

typedef struct {
    void *context;
    /* The bytes of the body sent so far and the body's size, each time they change (for
     * multipart the whole body's, envelope included); NULL for none. */
    void (*progress)(void *context, long long sent, long long total);
    /* Looked at at least every 100 ms while the transfer runs; nonzero stops it at once
     * (SFX_CURL_ABORTED). */
    int (*cancelled)(void *context);
} sfx_curl_upload_callbacks;

/* What the server answered (the final answer, after redirects). */
typedef struct {
    long status;
    /* The body, kept in the caller's `body` up to `body_capacity` bytes: `body_size` of them
     * are, and `body_cut` says more came and was dropped (the transfer reads on to the end). */
    char *body;
    size_t body_capacity;
    size_t body_size;
    int body_cut;
    /* The Retry-After header's value, trimmed ("" when none). */
    char retry_after[64];
} sfx_curl_upload_response;

/* Uploads `request->fd`'s bytes to `request->url` (http or https; redirects followed, up to
 * 10, http and https only) on the calling thread until the answer ends, the transfer fails,
 * or `callbacks->cancelled` stops it. "Expect: 100-continue" is not sent; the User-Agent is
 * "sfx" unless a header gives one. Returns one of the SFX_CURL_ values (SFX_CURL_OK with
 * whatever status the server answered, 4xx and 5xx included), fills `response`, and leaves
 * libcurl's words (or sfx's, for a stall, a read error or libcurl missing) in `detail`. */
int sfx_curl_upload(const sfx_curl_upload_request *request, const sfx_curl_upload_callbacks *callbacks,
                    sfx_curl_upload_response *response, char *detail, size_t detail_size);

#endif
