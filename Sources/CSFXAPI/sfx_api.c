// The parts of the C API that need no engine: the version, the last error (a thread-local
// copy per thread) and the defaults of the two structs.
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include "sfx_internal.h"

#define SFX_STRINGIFY2(x) #x
#define SFX_STRINGIFY(x) SFX_STRINGIFY2(x)

const char *sfx_version(void) {
    return SFX_STRINGIFY(SFX_VERSION_MAJOR) "." SFX_STRINGIFY(SFX_VERSION_MINOR) "." SFX_STRINGIFY(SFX_VERSION_PATCH);
}

// Each thread's last message: a heap copy held under a key whose destructor frees it when the
// thread ends.
static pthread_key_t last_error_key;
static pthread_once_t last_error_once = PTHREAD_ONCE_INIT;

static void make_last_error_key(void) { pthread_key_create(&last_error_key, free); }

void sfx_internal_set_last_error(const char *message) {
    pthread_once(&last_error_once, make_last_error_key);
    char *copy = strdup(message != NULL ? message : "");
    if (copy == NULL) return; // keeps the previous message rather than none
    free(pthread_getspecific(last_error_key));
    pthread_setspecific(last_error_key, copy);
}

const char *sfx_last_error(void) {
    pthread_once(&last_error_once, make_last_error_key);
    const char *message = pthread_getspecific(last_error_key);
    return message != NULL ? message : "";
}

void sfx_config_init(sfx_config *config) {
    if (config == NULL) return;
    memset(config, 0, sizeof *config);
}

void sfx_play_options_init(sfx_play_options *options) {
    if (options == NULL) return;
    sfx_play_options defaults = SFX_PLAY_OPTIONS_DEFAULT;
    *options = defaults;
}

int sfx_internal_memory_file(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}
