#ifndef CSFXCURL_H
#define CSFXCURL_H

/* libcurl on demand for FoundationNetworking (curl.c): nothing to call from Swift. URLSession
 * calls libcurl's functions, which sfx defines, hidden, and forwards to libcurl.so.4 once it is
 * loaded at the first call. */

#endif
