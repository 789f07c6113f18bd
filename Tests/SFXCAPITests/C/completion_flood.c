/*
 * Many threads play at once through the C API: THREADS threads × PLAYS plays each of a 10 ms
 * sound, as fast as they can, on an engine left at its defaults (rewind mode on the virtual
 * card). Every play sfx_play accepts must complete exactly once, and soon; a refused play
 * ("command queue is full") must never complete. Prints one line:
 *   "accepted A refused R completed C twice D refused-completed X wait-ms W idle S"
 * where W is the longest time from an accepted sfx_play to its completion and S is
 * sfx_wait_idle's status; exits 1 when a completion is missing 60 s after the last call.
 */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <sfx.h>

enum { THREADS = 16, PLAYS = 10000 };

static sfx_engine *engine;
static sfx_sound sound;
/* Per play: when it was asked for (ns), whether sfx_play accepted it, how often it completed. */
static long long asked[THREADS * PLAYS];
static atomic_int accepted_flag[THREADS * PLAYS];
static atomic_int completed_count[THREADS * PLAYS];
static atomic_long accepted, refused, completed, twice, refused_completed;
static atomic_llong longest;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void done(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data) {
    (void)voice; (void)outcome; (void)detail;
    long index = (long)(intptr_t)user_data;
    if (atomic_fetch_add(&completed_count[index], 1) > 0) atomic_fetch_add(&twice, 1);
    /* A completion may come before sfx_play has returned: wait for its verdict (never long). */
    while (atomic_load(&accepted_flag[index]) == 0) sched_yield();
    if (atomic_load(&accepted_flag[index]) < 0) atomic_fetch_add(&refused_completed, 1);
    long long waited = now_ns() - asked[index];
    long long seen = atomic_load(&longest);
    while (waited > seen && !atomic_compare_exchange_weak(&longest, &seen, waited)) {}
    atomic_fetch_add(&completed, 1);
}

static void *player(void *argument) {
    long first = (long)(intptr_t)argument * PLAYS;
    for (long index = first; index < first + PLAYS; index++) {
        sfx_play_options options = SFX_PLAY_OPTIONS_DEFAULT;
        options.completion = done;
        options.user_data = (void *)(intptr_t)index;
        asked[index] = now_ns();
        if (sfx_play(engine, sound, &options, NULL) == SFX_OK) {
            atomic_fetch_add(&accepted, 1);
            atomic_store(&accepted_flag[index], 1);
        } else {
            atomic_fetch_add(&refused, 1);
            atomic_store(&accepted_flag[index], -1);
        }
    }
    return NULL;
}

int main(void) {
    if (sfx_open(NULL, &engine) != SFX_OK) { printf("FAIL open: %s\n", sfx_last_error()); return 1; }
    float samples[480];
    for (int i = 0; i < 480; i++) samples[i] = 0.2f * (float)((i % 48) - 24) / 24.0f;
    if (sfx_load_pcm(engine, samples, 480, 1, 48000, &sound) != SFX_OK) { printf("FAIL load: %s\n", sfx_last_error()); return 1; }
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, player, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    for (int tenth = 0; tenth < 600 && atomic_load(&completed) < atomic_load(&accepted); tenth++) usleep(100000);
    int idle = sfx_wait_idle(engine, 5000);
    printf("accepted %ld refused %ld completed %ld twice %ld refused-completed %ld wait-ms %lld idle %d\n",
           atomic_load(&accepted), atomic_load(&refused), atomic_load(&completed), atomic_load(&twice),
           atomic_load(&refused_completed), atomic_load(&longest) / 1000000, idle);
    int missing = atomic_load(&completed) != atomic_load(&accepted);
    sfx_close(engine);
    return missing ? 1 : 0;
}
