// libsndfile decodes MP3 through libmpg123, which prints its own diagnostics ("error:
// dequantization failed!", "Note: Illegal Audio-MPEG-Header …") to stderr unless a decoder has
// the MPG123_QUIET flag. libsndfile (1.2) never sets it and gives no way to reach its decoder,
// and libmpg123 has no process-wide default. So sfx defines mpg123_new itself: the dynamic
// linker binds libsndfile's call to this definition (a program's symbols come before its
// libraries'), which makes the decoder with libmpg123's own mpg123_new (found with RTLD_NEXT)
// and adds MPG123_QUIET to it. Nothing else changes: libsndfile still sees every error through
// libmpg123's return values and sfx reports it in its one line.
//
// Capturing file descriptor 2 around decoding was the alternative, but descriptors are shared
// by every thread of the process, so another thread's messages would be lost while a file
// decodes. This is per decoder, and safe from any thread.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpg123.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "csfxmedia.h"

typedef mpg123_handle *(*new_function)(const char *, int *);
typedef int (*param_function)(mpg123_handle *, enum mpg123_parms, long, double);

static new_function real_new;
static param_function real_param;
static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static atomic_long quieted;

static void resolve(void) {
    real_new = (new_function)dlsym(RTLD_NEXT, "mpg123_new");
    real_param = (param_function)dlsym(RTLD_NEXT, "mpg123_param2");
    if (real_param == NULL) real_param = (param_function)dlsym(RTLD_NEXT, "mpg123_param");
}

__attribute__((visibility("default")))
mpg123_handle *mpg123_new(const char *decoder, int *error) {
    pthread_once(&resolved, resolve);
    if (real_new == NULL) {
        if (error != NULL) *error = MPG123_ERR;
        return NULL;
    }
    mpg123_handle *handle = real_new(decoder, error);
    if (handle != NULL && real_param != NULL && real_param(handle, MPG123_ADD_FLAGS, MPG123_QUIET, 0) == MPG123_OK) {
        atomic_fetch_add(&quieted, 1);
    }
    return handle;
}

long sfx_mpg123_quieted_count(void) {
    return atomic_load(&quieted);
}
