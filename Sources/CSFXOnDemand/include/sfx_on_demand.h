/*
 * A library loaded on first use. Linked, a library loads at every start of every program that
 * holds it (sfx, or any ALSA client that opens the virtual card), while most of them never call
 * it; so the functions sfx calls are defined in sfx's own image and each goes through a table
 * that sfx_on_demand_ready() fills at the first call: it dlopen()s the sonames in their order,
 * then dlsym()s each function from the soname it is listed under. The table is a struct of
 * function pointers alone (SFX_ON_DEMAND_FIELD), filled in order as an array of void * (POSIX
 * makes a function's address and dlsym's void * alike).
 *
 * - Once: the first call loads, under the library's lock; every later one (from any thread)
 *   reads one atomic and returns. A failure is final too: dlopen is not tried again, and every
 *   later call fails the same way.
 * - Failure is one line that names what is missing and what to install:
 *     "<label><soname> cannot be loaded<purpose> (<dlerror>); <install>"
 *     "<label><soname> has no <function>; <upgrade>"
 *   (sfx_on_demand_error); the first soname that does not load, or the first function missing,
 *   ends the attempt. What a call does without the library (fail as the library would, set
 *   errno, stop the program) is the caller's.
 * - RTLD_NOW, and RTLD_LOCAL unless `global`: a global library's symbols, and its own
 *   libraries', join the program's as if linked (mpg123_quiet.c needs that of libsndfile).
 *
 * Header-only, static functions: each C target that includes it (the virtual card's plugin, which
 * links no Swift and no other sfx code, among them) keeps its own copy, and nothing is exported.
 * Include it before a library's header wrapped in `#pragma GCC visibility push(hidden)`: the
 * C library's functions it calls must not be declared hidden (snprintf would then be undefined
 * for the whole link, as a hidden reference in one object binds them all).
 * Use:
 *     #define PULSE_FUNCTIONS(X) X(pa_context_connect) X(pa_strerror) …
 *     static struct { PULSE_FUNCTIONS(SFX_ON_DEMAND_FIELD) } pulse;
 *     static sfx_on_demand pulse_loader = {
 *         .sonames = {"libpulse.so.0"}, .functions = {PULSE_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(pulse),
 *         .install = "install libpulse0", .upgrade = "install libpulse0 from Debian 12 or later",
 *         .lock = PTHREAD_MUTEX_INITIALIZER,
 *     };
 *     if (!sfx_on_demand_ready(&pulse_loader)) report(sfx_on_demand_error(&pulse_loader));
 * With several sonames, .functions[i] names those of sonames[i], and the table holds them in the
 * same order: first those of sonames[0], then those of sonames[1]… (ffmpeg.c, the card's pcm.c).
 */
#ifndef SFX_ON_DEMAND_H
#define SFX_ON_DEMAND_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The most sonames one library of functions spans (FFmpeg's four). */
#define SFX_ON_DEMAND_SONAMES 4

/* A field of a function table: a pointer of the function's own type, named as it is. */
#define SFX_ON_DEMAND_FIELD(name) __typeof__(name) *name;
/* A function's name in a list of them: "sf_open\0sf_close\0" ends at the empty name after the last. */
#define SFX_ON_DEMAND_NAME(name) #name "\0"
/* .table and .table_size of a function table (a struct of SFX_ON_DEMAND_FIELDs, filled in order). */
#define SFX_ON_DEMAND_TABLE(of) .table = (void **)&(of), .table_size = sizeof (of) / sizeof (void *)

typedef struct {
    const char *sonames[SFX_ON_DEMAND_SONAMES];   /* opened in this order; the rest NULL */
    int global;                                   /* RTLD_GLOBAL instead of RTLD_LOCAL */
    int lazy;                                     /* RTLD_LAZY instead of RTLD_NOW (see on_demand.c) */
    const char *functions[SFX_ON_DEMAND_SONAMES]; /* the names of those found in each (SFX_ON_DEMAND_NAME) */
    void **table;                                 /* where their addresses go, in the same order */
    size_t table_size;
    const char *label;     /* before a soname in the error ("FFmpeg's "), or NULL */
    const char *purpose;   /* after "cannot be loaded" (" for http(s)"), or NULL */
    const char *install;   /* the fix when a soname does not load: "install Debian's libsoxr0" */
    const char *upgrade;   /* the fix when a function is missing */
    pthread_mutex_t lock;  /* PTHREAD_MUTEX_INITIALIZER */
    atomic_int state;      /* 0 before the first call, then 1 loaded or -1 failed */
    char error[512];
} sfx_on_demand;

/* Opens the sonames and fills the table; 0 with library->error written at the first failure. */
static inline int sfx_on_demand_load(sfx_on_demand *library)
{
    const char *label = library->label ? library->label : "";
    void *handles[SFX_ON_DEMAND_SONAMES] = {0};
    for (unsigned i = 0; i < SFX_ON_DEMAND_SONAMES && library->sonames[i]; i++) {
        handles[i] = dlopen(library->sonames[i], (library->lazy ? RTLD_LAZY : RTLD_NOW) | (library->global ? RTLD_GLOBAL : RTLD_LOCAL));
        if (!handles[i]) {
            snprintf(library->error, sizeof library->error, "%s%s cannot be loaded%s (%s); %s", label, library->sonames[i],
                     library->purpose ? library->purpose : "", dlerror(), library->install);
            return 0;
        }
    }
    size_t slot = 0;
    for (unsigned i = 0; i < SFX_ON_DEMAND_SONAMES && library->sonames[i]; i++) {
        for (const char *name = library->functions[i]; name && *name; name += strlen(name) + 1, slot++) {
            if (slot == library->table_size)
                goto mismatch;
            if (!(library->table[slot] = dlsym(handles[i], name))) {
                snprintf(library->error, sizeof library->error, "%s%s has no %s; %s", label, library->sonames[i], name, library->upgrade);
                return 0;
            }
        }
    }
    if (slot == library->table_size)
        return 1;
mismatch:   /* a table that does not match its names: sfx's own mistake */
    snprintf(library->error, sizeof library->error, "%s%s: its function table does not match its names", label, library->sonames[0]);
    return 0;
}

/* 1 once the library is loaded and its table filled, 0 when it cannot be (now or at the first call). */
static inline int sfx_on_demand_ready(sfx_on_demand *library)
{
    int state = atomic_load_explicit(&library->state, memory_order_acquire);
    if (state == 0) {
        pthread_mutex_lock(&library->lock);
        state = atomic_load_explicit(&library->state, memory_order_relaxed);
        if (state == 0) {
            state = sfx_on_demand_load(library) ? 1 : -1;
            atomic_store_explicit(&library->state, state, memory_order_release);
        }
        pthread_mutex_unlock(&library->lock);
    }
    return state > 0;
}

/* The one line that says what is missing and what to install, or NULL when the library is loaded. */
static inline const char *sfx_on_demand_error(sfx_on_demand *library)
{
    return sfx_on_demand_ready(library) ? NULL : library->error;
}

#endif
