// What Swift cannot import from the C library directly.
#pragma once
#include <sys/types.h>

/// The calling thread's kernel id (gettid(2)).
pid_t sfx_gettid(void);

/// An anonymous in-memory file (memfd_create(2) with MFD_CLOEXEC): nothing on disk, no name in a
/// directory. Returns the descriptor, or -1 with errno set.
int sfx_memfd(const char *name);

/// The errno's symbolic name ("ENOENT"), or NULL for a number the C library does not name
/// (strerrorname_np).
const char *sfx_errno_name(int code);
