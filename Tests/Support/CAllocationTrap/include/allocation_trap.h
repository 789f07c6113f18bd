// Counts the heap calls (malloc, calloc, realloc, free, memalign and friends) that one chosen
// thread makes, by interposing glibc's allocator in the test executable and forwarding to
// glibc's own entry points. Tests watch the engine's real-time thread with it: any count above
// zero there breaks the rule that the real-time thread never allocates or frees.
#pragma once
#include <stdint.h>
#include <sys/types.h>

/// Starts counting the calls of the thread with kernel id `tid` (0 stops), from zero.
void allocation_trap_watch(pid_t tid);
/// Starts counting, from zero, only the calls the thread with kernel id `tid` makes while it
/// runs under SCHED_FIFO: the engine's output thread runs its real-time loop, and only that,
/// under SCHED_FIFO (it drops to normal priority before it closes a lost device and reopens it).
void allocation_trap_watch_fifo(pid_t tid);
/// Puts the calling thread under SCHED_FIFO at `priority`, or back to SCHED_OTHER for 0;
/// returns 0 or -1 (errno set).
int allocation_trap_set_fifo(int priority);
/// Heap calls the watched thread made since `allocation_trap_watch`.
uint64_t allocation_trap_count(void);
/// The calling thread's kernel id.
pid_t sfx_test_gettid(void);
