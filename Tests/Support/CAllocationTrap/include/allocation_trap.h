// Counts the heap calls (malloc, calloc, realloc, free, memalign and friends) that one chosen
// thread makes, by interposing glibc's allocator in the test executable and forwarding to
// glibc's own entry points. Tests watch the engine's real-time thread with it: any count above
// zero there breaks the rule that the real-time thread never allocates or frees.
#pragma once
#include <stdint.h>
#include <sys/types.h>

/// Starts counting the calls of the thread with kernel id `tid` (0 stops), from zero.
void allocation_trap_watch(pid_t tid);
/// Heap calls the watched thread made since `allocation_trap_watch`.
uint64_t allocation_trap_count(void);
/// The calling thread's kernel id.
pid_t sfx_test_gettid(void);
