/*
 * An upload with libcurl, for Upload (SFXRecording): one transfer on the caller's thread, a PUT
 * of a file's bytes (CURLOPT_UPLOAD, the body read by CURLOPT_READFUNCTION) or a multipart/form-data
 * POST built with libcurl's mime API (plain fields, then the file part). Either way the file is
 * read with pread from the caller's descriptor as libcurl sends it: never whole in memory, no
 * copy on disk, nothing named anywhere.
 *
 * The transfer runs through a multi handle, waited on 100 ms at a time, so that between waits
 * the caller's `cancelled` is asked and the stall clock read: a cancel stops the transfer within
 * 100 ms whatever libcurl is waiting for (a connect, a server that reads slowly or never
 * answers), and a stall is measured to the millisecond rather than in libcurl's whole seconds.
 * libcurl's progress function (CURLOPT_XFERINFOFUNCTION) does the same checks whenever libcurl
 * calls it, and tells the caller's `progress`.
 *
 * The answer's body is kept up to the caller's bound and the rest read and dropped; of its
 * headers only Retry-After is kept. The functions called are curl.c's (libcurl loaded on first
 * use).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define CURL_DISABLE_TYPECHECK
#pragma GCC visibility push(hidden)
#include <curl/curl.h>
#pragma GCC visibility pop

#include "csfxcurl.h"
#include "transfer.h"

/* Why sfx stopped a transfer itself. */
enum { RUNNING = 0, CANCELLED, STALLED, UNREADABLE };

typedef struct {
    const sfx_curl_upload_request *request;
    sfx_curl_upload_callbacks callbacks;
    sfx_curl_upload_response *response;
    /* The file's next byte to send (a rewind, for a redirect, sets it back). */
    curl_off_t offset;
    /* What `progress` was last told. */
    long long told_sent, told_total;
    /* Bytes sent and received (headers and body); when that count last moved. */
    long long received;
    long long activity;
    long long last_activity_ms;
    int stopped;
    int read_error;
} transfer;

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Whether to stop now (cancelled, or nothing sent or received for stall_ms); `sent` is what
 * libcurl has sent of the body. Sets t->stopped. */
static int should_stop(transfer *t, long long sent)
{
    if (t->stopped)
        return 1;
    if (t->callbacks.cancelled && t->callbacks.cancelled(t->callbacks.context)) {
        t->stopped = CANCELLED;
        return 1;
    }
    long long activity = sent + t->received;
    long long now = now_ms();
    if (activity != t->activity) {
        t->activity = activity;
        t->last_activity_ms = now;
    } else if (now - t->last_activity_ms >= t->request->stall_ms) {
        t->stopped = STALLED;
        return 1;
    }
    return 0;
}

static int on_progress(void *pointer, curl_off_t down_total, curl_off_t down_now, curl_off_t up_total, curl_off_t up_now)
{
    (void)down_total; (void)down_now;
    transfer *t = pointer;
    if (t->callbacks.progress && up_now > 0 && (up_now != t->told_sent || up_total != t->told_total)) {
        t->told_sent = up_now;
        t->told_total = up_total;
        t->callbacks.progress(t->callbacks.context, (long long)up_now, (long long)up_total);
    }
    return should_stop(t, (long long)up_now);
}

/* The file's bytes from t->offset: for the PUT's read function and the mime part's alike. */
static size_t read_file(char *buffer, size_t size, size_t count, void *pointer)
{
    transfer *t = pointer;
    size_t wanted = size * count;
    curl_off_t left = (curl_off_t)t->request->file_size - t->offset;
    if (left <= 0)
        return 0;
    if ((curl_off_t)wanted > left)
        wanted = (size_t)left;
    for (;;) {
        ssize_t got = pread(t->request->fd, buffer, wanted, (off_t)t->offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            /* An error, or the file got shorter than the Content-Length already sent. */
            t->read_error = got < 0 ? errno : 0;
            t->stopped = UNREADABLE;
            return CURL_READFUNC_ABORT;
        }
        t->offset += got;
        return (size_t)got;
    }
}

static int seek_file(void *pointer, curl_off_t offset, int origin)
{
    transfer *t = pointer;
    if (origin != SEEK_SET || offset < 0 || offset > (curl_off_t)t->request->file_size)
        return CURL_SEEKFUNC_CANTSEEK;
    t->offset = offset;
    return CURL_SEEKFUNC_OK;
}

static size_t on_body(char *data, size_t size, size_t count, void *pointer)
{
    transfer *t = pointer;
    sfx_curl_upload_response *response = t->response;
    size_t bytes = size * count;
    size_t room = response->body_capacity - response->body_size;
    size_t kept = bytes < room ? bytes : room;
    if (kept > 0) {
        memcpy(response->body + response->body_size, data, kept);
        response->body_size += kept;
    }
    if (kept < bytes)
        response->body_cut = 1;
    t->received += (long long)bytes;
    return bytes;
}

/* Each header line of each answer (a 100 Continue, a redirect, the final one). */
static size_t on_header(char *line, size_t size, size_t count, void *pointer)
{
    transfer *t = pointer;
    size_t bytes = size * count;
    t->received += (long long)bytes;
    if (bytes >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* A new answer: what an earlier one said does not hold. */
        t->response->retry_after[0] = 0;
        t->response->body_size = 0;
        t->response->body_cut = 0;
    } else if (bytes > 12 && strncasecmp(line, "Retry-After:", 12) == 0) {
        const char *value = line + 12;
        const char *end = line + bytes;
        while (value < end && (*value == ' ' || *value == '\t'))
            value++;
        while (end > value && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
            end--;
        size_t length = (size_t)(end - value);
        if (length >= sizeof t->response->retry_after)
            length = sizeof t->response->retry_after - 1;
        memcpy(t->response->retry_after, value, length);
        t->response->retry_after[length] = 0;
    }
    return bytes;
}

/* The multipart body: the fields in order, then the file part. NULL when libcurl refuses one. */
static curl_mime *form(CURL *curl, transfer *t)
{
    const sfx_curl_upload_request *request = t->request;
    curl_mime *mime = curl_mime_init(curl);
    if (!mime)
        return NULL;
    for (size_t i = 0; i < request->field_count; i++) {
        curl_mimepart *part = curl_mime_addpart(mime);
        if (!part || curl_mime_name(part, request->fields[i].name) != CURLE_OK
            || curl_mime_data(part, request->fields[i].value, request->fields[i].value_size) != CURLE_OK)
            goto failed;
    }
    curl_mimepart *file = curl_mime_addpart(mime);
    if (!file || curl_mime_name(file, request->file_field) != CURLE_OK
        || curl_mime_filename(file, request->file_name) != CURLE_OK
        || curl_mime_type(file, request->content_type) != CURLE_OK
        || curl_mime_data_cb(file, (curl_off_t)request->file_size, read_file, seek_file, NULL, t) != CURLE_OK)
        goto failed;
    return mime;
failed:
    curl_mime_free(mime);
    return NULL;
}

/* Runs the transfer on `multi` until it ends or sfx stops it; libcurl's result. */
static CURLcode run(CURLM *multi, CURL *curl, transfer *t)
{
    for (;;) {
        int running = 0;
        CURLMcode status = curl_multi_perform(multi, &running);
        if (status != CURLM_OK)
            return CURLE_FAILED_INIT;   /* the multi handle's own failure (out of memory) */
        if (!running) {
            int left = 0;
            CURLMsg *message;
            while ((message = curl_multi_info_read(multi, &left)))
                if (message->msg == CURLMSG_DONE && message->easy_handle == curl)
                    return message->data.result;
            return CURLE_OK;
        }
        curl_off_t sent = 0;
        curl_easy_getinfo(curl, CURLINFO_SIZE_UPLOAD_T, &sent);
        if (should_stop(t, (long long)sent))
            return CURLE_ABORTED_BY_CALLBACK;
        long long before = now_ms();
        int events = 0;
        if (curl_multi_wait(multi, NULL, 0, 100, &events) != CURLM_OK)
            return CURLE_FAILED_INIT;
        if (events == 0 && now_ms() - before < 1) {
            /* Nothing to wait on yet (curl_multi_wait returns at once then): no busy loop. */
            long wait = -1;
            curl_multi_timeout(multi, &wait);
            if (wait != 0)
                poll(NULL, 0, wait > 0 && wait < 10 ? (int)wait : 10);
        }
    }
}

int sfx_curl_upload(const sfx_curl_upload_request *request, const sfx_curl_upload_callbacks *callbacks,
                    sfx_curl_upload_response *response, char *detail, size_t detail_size)
{
    response->status = 0;
    response->body_size = 0;
    response->body_cut = 0;
    response->retry_after[0] = 0;
    if (!sfx_curl_available(detail, detail_size))
        return SFX_CURL_UNAVAILABLE;

    char error[CURL_ERROR_SIZE] = "";
    transfer t = { .request = request, .callbacks = *callbacks, .response = response, .last_activity_ms = now_ms() };
    CURL *curl = curl_easy_init();
    CURLM *multi = curl_multi_init();
    struct curl_slist *headers = NULL;
    curl_mime *mime = NULL;
    int kind = SFX_CURL_OTHER;
    if (!curl || !multi) {
        snprintf(detail, detail_size, "libcurl could not start a transfer");
        goto done;
    }
    for (size_t i = 0; i < request->header_count; i++) {
        struct curl_slist *more = curl_slist_append(headers, request->headers[i]);
        if (!more)
            goto out_of_memory;
        headers = more;
    }
    /* No "Expect: 100-continue": a server that does not answer it would hold every body a second. */
    struct curl_slist *more = curl_slist_append(headers, "Expect:");
    if (!more)
        goto out_of_memory;
    headers = more;

    curl_easy_setopt(curl, CURLOPT_URL, request->url);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "sfx");
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, request->stall_ms);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    if (request->multipart) {
        /* Names and file names quoted with backslashes (as browsers did before HTML5's
         * percent-encoding, and as the form servers sfx was tried with read them); libcurl
         * before 7.81 has no such option and quotes them so anyway. */
        curl_easy_setopt(curl, CURLOPT_MIME_OPTIONS, (long)CURLMIMEOPT_FORMESCAPE);
        if (!(mime = form(curl, &t)))
            goto out_of_memory;
        curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
    } else {
        curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);   /* a PUT */
        curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)request->file_size);
        curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_file);
        curl_easy_setopt(curl, CURLOPT_READDATA, &t);
        curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, seek_file);
        curl_easy_setopt(curl, CURLOPT_SEEKDATA, &t);
    }
    if (curl_multi_add_handle(multi, curl) != CURLM_OK)
        goto out_of_memory;
    CURLcode code = run(multi, curl, &t);
    curl_multi_remove_handle(multi, curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
    switch (t.stopped) {
    case CANCELLED:
        kind = SFX_CURL_ABORTED;
        snprintf(detail, detail_size, "cancelled");
        break;
    case STALLED:
        kind = SFX_CURL_TIMED_OUT;
        snprintf(detail, detail_size, "nothing sent or received for %ld ms", request->stall_ms);
        break;
    case UNREADABLE:
        kind = SFX_CURL_READ;
        if (t.read_error)
            snprintf(detail, detail_size, "cannot be read (%s)", strerror(t.read_error));
        else
            snprintf(detail, detail_size, "got shorter than its %lld bytes while it was sent", request->file_size);
        break;
    default:
        kind = sfx_curl_kind(code, error);
        snprintf(detail, detail_size, "%s", error[0] ? error : curl_easy_strerror(code));
    }
    goto done;

out_of_memory:
    snprintf(detail, detail_size, "libcurl could not set up the upload (out of memory)");
    kind = SFX_CURL_OTHER;
done:
    if (multi)
        curl_multi_cleanup(multi);
    if (curl)
        curl_easy_cleanup(curl);
    curl_mime_free(mime);
    curl_slist_free_all(headers);
    return kind;
}
