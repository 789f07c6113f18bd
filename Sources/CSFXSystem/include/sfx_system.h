// What Swift cannot import from the C library directly.
#pragma once
#include <sys/types.h>

/// The calling thread's kernel id (gettid(2)).
pid_t sfx_gettid(void);
