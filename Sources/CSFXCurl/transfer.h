/*
 * What download.c and upload.c share, inside CSFXCurl (hidden: not sfx's API).
 * Include after <curl/curl.h>.
 */
#ifndef CSFXCURL_TRANSFER_H
#define CSFXCURL_TRANSFER_H

#include <stddef.h>

/* 1 once libcurl.so.4 is loaded with every function curl.c forwards; else 0, with the one line
 * that says what is missing and what to install in `detail` (curl.c). */
__attribute__((visibility("hidden"))) int sfx_curl_available(char *detail, size_t detail_size);

/* The SFX_CURL_ kind of a transfer's CURLcode; `detail` is libcurl's error buffer (kinds.c). */
__attribute__((visibility("hidden"))) int sfx_curl_kind(CURLcode code, const char *detail);

#endif
