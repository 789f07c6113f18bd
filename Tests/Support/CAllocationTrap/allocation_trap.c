#define _GNU_SOURCE
#include "allocation_trap.h"
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static _Atomic pid_t watched;
static _Atomic int fifoOnly;
static _Atomic uint64_t count;
static __thread pid_t self;

static inline void note(void) {
    pid_t target = atomic_load_explicit(&watched, memory_order_relaxed);
    if (target == 0) return;
    if (self == 0) self = gettid();
    if (self != target) return;
    // sched_getscheduler is a plain system call: it does not allocate.
    if (atomic_load_explicit(&fifoOnly, memory_order_relaxed) && sched_getscheduler(0) != SCHED_FIFO) return;
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
}

void allocation_trap_watch(pid_t tid) {
    atomic_store(&count, 0);
    atomic_store(&fifoOnly, 0);
    atomic_store(&watched, tid);
}

void allocation_trap_watch_fifo(pid_t tid) {
    atomic_store(&count, 0);
    atomic_store(&fifoOnly, 1);
    atomic_store(&watched, tid);
}

int allocation_trap_set_fifo(int priority) {
    struct sched_param param = { .sched_priority = priority };
    return sched_setscheduler(0, priority > 0 ? SCHED_FIFO : SCHED_OTHER, &param);
}

uint64_t allocation_trap_count(void) { return atomic_load(&count); }

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { note(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { note(); return __libc_realloc(p, size); }
void free(void *p) { if (p) note(); __libc_free(p); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    note();
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

pid_t sfx_test_gettid(void) { return gettid(); }
