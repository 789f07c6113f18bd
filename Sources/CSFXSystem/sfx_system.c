#define _GNU_SOURCE
#include "sfx_system.h"
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

pid_t sfx_gettid(void) { return gettid(); }

int sfx_name_thread(const char *name)
{
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = '\0';
    return pthread_setname_np(pthread_self(), shortened);
}

int sfx_memfd(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

const char *sfx_errno_name(int code) { return strerrorname_np(code); }
