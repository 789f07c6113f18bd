#define _GNU_SOURCE
#include "sfx_system.h"
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
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

static int sfx_signal_relay_fd = -1;

static void sfx_signal_relay(int number)
{
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    /* A full pipe (64 KiB of signals nobody read) drops this one: the reader has many queued. */
    ssize_t ignored = write(sfx_signal_relay_fd, &byte, 1);
    (void)ignored;
    errno = saved;
}

int sfx_signal_relay_install(void)
{
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0)
        return -1;
    int flags = fcntl(ends[1], F_GETFL);
    fcntl(ends[1], F_SETFL, flags | O_NONBLOCK);
    sfx_signal_relay_fd = ends[1];
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = sfx_signal_relay;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    const int numbers[] = {SIGINT, SIGTERM};
    struct sigaction before[2];
    for (unsigned i = 0; i < 2; i++) {
        if (sigaction(numbers[i], &action, &before[i]) != 0) {
            int error = errno;
            for (unsigned j = 0; j < i; j++)
                sigaction(numbers[j], &before[j], NULL);
            close(ends[0]);
            close(ends[1]);
            sfx_signal_relay_fd = -1;
            errno = error;
            return -1;
        }
    }
    return ends[0];
}

int sfx_malloc_trim(void) { return malloc_trim(0); }
