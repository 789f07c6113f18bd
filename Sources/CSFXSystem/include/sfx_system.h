// What Swift cannot import from the C library directly.
#pragma once
#include <sys/types.h>

/// The calling thread's kernel id (gettid(2)).
pid_t sfx_gettid(void);

/// Names the calling thread for `top -H`, `ps -L` and /proc/PID/task/TID/comm (at most 15
/// bytes are kept; pthread_setname_np). Returns 0 or an errno.
int sfx_name_thread(const char *name);

/// An anonymous in-memory file (memfd_create(2) with MFD_CLOEXEC): nothing on disk, no name in a
/// directory. Returns the descriptor, or -1 with errno set.
int sfx_memfd(const char *name);

/// The errno's symbolic name ("ENOENT"), or NULL for a number the C library does not name
/// (strerrorname_np).
const char *sfx_errno_name(int code);

/// Routes SIGINT and SIGTERM to a pipe from now on: the handler (async-signal-safe) writes the
/// signal's number, one byte, to the pipe, whose read end (close-on-exec) is returned; a thread
/// reads it and acts outside the handler. The handler is in place when this returns. Call once
/// a process; -1 with errno set when the pipe or an action cannot be made (the signals' actions
/// are then as before).
int sfx_signal_relay_install(void);

/// Gives the heap's free memory back to the system (malloc_trim(3) with no padding); 1 when
/// some was released.
int sfx_malloc_trim(void);
