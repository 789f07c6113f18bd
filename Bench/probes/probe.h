/*
 * probe.h — what the benchmark's C clients (the raw-ALSA floor, OpenAL Soft, SDL_mixer) share:
 * one command line, one random trigger schedule, one click, one looping sound, one CPU meter.
 *
 * A client is run by sfx-bench in one of two modes:
 *
 *   latency:  client --out FILE --count N --min-gap-ms A --max-gap-ms B --seed S [--seconds T] …
 *             Plays a short click N times (or until T seconds pass) at random gaps in [A, B] ms.
 *             Each trigger's CLOCK_MONOTONIC time, taken just before the call that starts the
 *             click, is written to FILE, one nanosecond count a line.
 *   voices:   client --out FILE --voices K --seconds T …
 *             Starts K voices each looping a one-second sound, waits half a second, then
 *             writes "cpu <process CPU ns> <wall ns>" over T seconds of wall time to FILE.
 *
 * Device settings: --device NAME (ALSA PCM, default "sfxcard"), --period FRAMES and --periods N
 * (0: the library's default), --priority P (SCHED_FIFO priority of the audio thread, 70).
 *
 * A client implements `struct probe_client` and calls `probe_main`.
 */
#ifndef SFX_BENCH_PROBE_H
#define SFX_BENCH_PROBE_H

#include <stdint.h>

enum { PROBE_RATE = 48000, PROBE_CHANNELS = 2 };

struct probe_options {
    const char *device;
    const char *out;
    int period;        /* frames; 0 = the library's default */
    int periods;       /* per buffer; 0 = the library's default */
    int count;         /* triggers (latency mode) */
    double seconds;    /* latency mode: stop triggering after this long (0: no limit); voices mode: window */
    double min_gap_ms, max_gap_ms;
    unsigned seed;
    int voices;        /* > 0: voices mode */
    int priority;      /* SCHED_FIFO priority for the audio thread */
};

/* One client library behind the two modes. Each function returns 0 or prints one line and returns -1. */
struct probe_client {
    const char *name;
    int (*open)(const struct probe_options *options);      /* open the device, load the click and the loop */
    void (*trigger)(void);                                 /* start one click; called right after the time is taken */
    int (*start_voices)(int count, float gain);            /* start `count` looping voices */
    void (*close)(void);
};

/* Parses the options, runs the client in its mode, returns the process exit status. */
int probe_main(int argc, char **argv, const struct probe_client *client);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t probe_now_ns(void);

/* Puts the calling thread (and threads it creates later) under SCHED_FIFO at `priority`;
 * returns 0 or an errno, and says on stderr when refused. `priority` 0 returns to SCHED_OTHER. */
int probe_set_fifo(int priority);

/* The click every client plays: 96 mono frames (2 ms) of a 1.5 kHz square wave at ±0.5, loud
 * from its first sample so the card's onset is the click's first frame. */
enum { PROBE_CLICK_FRAMES = 96 };
float probe_click_sample(int frame);

/* The looping sound of the voices mode: one second of a 220 + 331 Hz tone at 0.5 peak. */
enum { PROBE_LOOP_FRAMES = PROBE_RATE };
float probe_loop_sample(int frame);

#endif
