/* probe.c — the shared half of the benchmark's C clients; see probe.h. */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

uint64_t probe_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void sleep_until(uint64_t ns) {
    struct timespec at = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {}
}

int probe_set_fifo(int priority) {
    struct sched_param param = { .sched_priority = priority };
    int error = pthread_setschedparam(pthread_self(), priority > 0 ? SCHED_FIFO : SCHED_OTHER, &param);
    if (error != 0 && priority > 0)
        fprintf(stderr, "SCHED_FIFO %d refused (%s); run as root or grant rtprio in limits.conf\n", priority, strerror(error));
    return error;
}

float probe_click_sample(int frame) {
    return (frame / 16) % 2 == 0 ? 0.5f : -0.5f;
}

float probe_loop_sample(int frame) {
    double t = (double)frame / PROBE_RATE;
    return (float)(0.3 * sin(2 * M_PI * 220 * t) + 0.2 * sin(2 * M_PI * 331 * t));
}

static uint64_t process_cpu_ns(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return ((uint64_t)usage.ru_utime.tv_sec + (uint64_t)usage.ru_stime.tv_sec) * 1000000000u
         + ((uint64_t)usage.ru_utime.tv_usec + (uint64_t)usage.ru_stime.tv_usec) * 1000u;
}

static int usage(const char *program, const char *problem) {
    fprintf(stderr, "%s: %s; usage: %s --out FILE [--device PCM] [--period FRAMES] [--periods N] "
            "(--count N --min-gap-ms A --max-gap-ms B [--seed S] [--seconds T] | --voices K --seconds T) [--priority P]\n",
            program, problem, program);
    return 2;
}

static int parse(int argc, char **argv, struct probe_options *o) {
    *o = (struct probe_options){ .device = "sfxcard", .min_gap_ms = 40, .max_gap_ms = 60, .seed = 1, .priority = 70 };
    for (int i = 1; i < argc; i++) {
        const char *key = argv[i];
        if (i + 1 >= argc) return usage(argv[0], "every option takes a value");
        const char *value = argv[++i];
        char *end = NULL;
        double number = strtod(value, &end);
        int numeric = end != value && *end == '\0' && number >= 0;
        if (strcmp(key, "--out") == 0) o->out = value;
        else if (strcmp(key, "--device") == 0) o->device = value;
        else if (!numeric) {
            fprintf(stderr, "%s: %s %s is not a number ≥ 0; give e.g. %s 128\n", argv[0], key, value, key);
            return 2;
        }
        else if (strcmp(key, "--period") == 0) o->period = (int)number;
        else if (strcmp(key, "--periods") == 0) o->periods = (int)number;
        else if (strcmp(key, "--count") == 0) o->count = (int)number;
        else if (strcmp(key, "--seconds") == 0) o->seconds = number;
        else if (strcmp(key, "--min-gap-ms") == 0) o->min_gap_ms = number;
        else if (strcmp(key, "--max-gap-ms") == 0) o->max_gap_ms = number;
        else if (strcmp(key, "--seed") == 0) o->seed = (unsigned)number;
        else if (strcmp(key, "--voices") == 0) o->voices = (int)number;
        else if (strcmp(key, "--priority") == 0) o->priority = (int)number;
        else {
            fprintf(stderr, "%s: unknown option %s; see the usage with --help x\n", argv[0], key);
            return 2;
        }
    }
    if (!o->out) return usage(argv[0], "--out is missing");
    if (o->voices == 0 && o->count == 0) return usage(argv[0], "give --count or --voices");
    if (o->voices > 0 && o->seconds <= 0) return usage(argv[0], "--voices needs --seconds");
    if (o->max_gap_ms < o->min_gap_ms) return usage(argv[0], "--max-gap-ms is below --min-gap-ms");
    return 0;
}

/* Triggers at random gaps and writes each trigger's time; the file is written after the run so
 * no file I/O happens between triggers. */
static int run_triggers(const struct probe_options *o, const struct probe_client *client) {
    uint64_t *times = calloc((size_t)o->count, sizeof *times);
    if (!times) { fprintf(stderr, "%s: out of memory for %d trigger times\n", client->name, o->count); return 1; }
    unsigned state = o->seed;
    uint64_t begin = probe_now_ns(), next = begin + 200000000u; /* let the stream settle for 200 ms */
    int done = 0;
    for (; done < o->count; done++) {
        double gap = o->min_gap_ms + (o->max_gap_ms - o->min_gap_ms) * (rand_r(&state) / (double)RAND_MAX);
        next += (uint64_t)(gap * 1e6);
        if (o->seconds > 0 && next - begin > (uint64_t)(o->seconds * 1e9)) break;
        sleep_until(next);
        times[done] = probe_now_ns();
        client->trigger();
    }
    sleep_until(probe_now_ns() + (uint64_t)(o->max_gap_ms * 1e6) + 100000000u); /* the last click reaches the DAC */
    FILE *file = fopen(o->out, "w");
    if (!file) { fprintf(stderr, "%s: cannot write %s (%s); give a writable --out\n", client->name, o->out, strerror(errno)); free(times); return 1; }
    for (int i = 0; i < done; i++) fprintf(file, "%llu\n", (unsigned long long)times[i]);
    fclose(file);
    free(times);
    return 0;
}

static int run_voices(const struct probe_options *o, const struct probe_client *client) {
    if (client->start_voices(o->voices, 1.0f / (float)o->voices) != 0) return 1;
    sleep_until(probe_now_ns() + 500000000u);
    uint64_t cpu0 = process_cpu_ns(), wall0 = probe_now_ns();
    sleep_until(wall0 + (uint64_t)(o->seconds * 1e9));
    uint64_t cpu1 = process_cpu_ns(), wall1 = probe_now_ns();
    FILE *file = fopen(o->out, "w");
    if (!file) { fprintf(stderr, "%s: cannot write %s (%s); give a writable --out\n", client->name, o->out, strerror(errno)); return 1; }
    fprintf(file, "cpu %llu %llu\n", (unsigned long long)(cpu1 - cpu0), (unsigned long long)(wall1 - wall0));
    fclose(file);
    return 0;
}

int probe_main(int argc, char **argv, const struct probe_client *client) {
    struct probe_options options;
    int status = parse(argc, argv, &options);
    if (status != 0) return status;
    if (client->open(&options) != 0) return 1;
    status = options.voices > 0 ? run_voices(&options, client) : run_triggers(&options, client);
    client->close();
    return status;
}
