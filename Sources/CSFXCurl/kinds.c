/*
 * What a transfer's CURLcode means, as one of csfxcurl.h's SFX_CURL_ kinds: the same for a
 * download and an upload, so both tell a failure in the same words.
 */
#include <string.h>

#define CURL_DISABLE_TYPECHECK
#pragma GCC visibility push(hidden)
#include <curl/curl.h>
#pragma GCC visibility pop

#include "csfxcurl.h"
#include "transfer.h"

int sfx_curl_kind(CURLcode code, const char *detail)
{
    switch (code) {
    case CURLE_OK: return SFX_CURL_OK;
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_RESOLVE_PROXY: return SFX_CURL_HOST_NOT_FOUND;
    case CURLE_COULDNT_CONNECT: return SFX_CURL_REFUSED;
    case CURLE_OPERATION_TIMEDOUT: return SFX_CURL_TIMED_OUT;
    case CURLE_SSL_CONNECT_ERROR: case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER: case CURLE_SSL_CACERT_BADFILE: case CURLE_USE_SSL_FAILED: case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CRL_BADFILE: case CURLE_SSL_ISSUER_ERROR: case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return SFX_CURL_TLS;
    case CURLE_PARTIAL_FILE: case CURLE_RECV_ERROR: case CURLE_SEND_ERROR: case CURLE_GOT_NOTHING:
        return SFX_CURL_DROPPED;
    case CURLE_OUT_OF_MEMORY:
        /* libcurl 7.x answers a response header over CURL_MAX_HTTP_HEADER (100 KB) so. */
        return SFX_CURL_HEADER_TOO_LARGE;
    case CURLE_TOO_MANY_REDIRECTS: return SFX_CURL_REDIRECTS;
    default:
        if (detail && (strstr(detail, "header") || strstr(detail, "Header")))
            return SFX_CURL_HEADER_TOO_LARGE;
        return SFX_CURL_OTHER;
    }
}
