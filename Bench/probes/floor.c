/*
 * floor.c — the floor: the least an alsa-lib client can do to play a click on time.
 *
 * It opens the device exactly as sfx does (RW interleaved FLOAT_LE, 48 kHz stereo, the period
 * asked for, `periods` periods per buffer, start threshold and avail_min one period), and runs
 * sfx's loop with no mixer: wait for a period of space, write one period, and when a trigger is
 * pending copy the click into that very period (in the voices mode it plays silence). The audio thread runs under SCHED_FIFO at the
 * same priority as sfx's. Triggers arrive from the schedule thread through one atomic flag.
 *
 * Rewind mode (FLOOR_REWIND_GUARD_FRAMES=G in the environment, G > 0): the least a client that
 * rewinds can do. A trigger also writes a byte to a pipe polled with the PCM's descriptors; the
 * audio thread wakes, updates the pointer (snd_pcm_avail), rewinds to G frames ahead of the DAC
 * (the smaller of snd_pcm_rewindable and snd_pcm_delay, less G), and writes again from there what
 * it wrote before with the click added from that frame. It keeps what it wrote (one buffer) for
 * that. Between triggers it wakes once a period, as in the plain mode.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <alsa/asoundlib.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static snd_pcm_t *pcm;
static snd_pcm_uframes_t period;
static float *scratch;
static pthread_t thread;
static atomic_int pending, stopping;
static int priority;
/* Rewind mode: the guard (0: off), the wake-up pipe, what was written (one buffer, by absolute
 * frame), the frames written so far. */
static long rewind_guard;
static int wake_pipe[2] = { -1, -1 };
static float *history;
static snd_pcm_uframes_t buffer_frames;
static uint64_t written;

static int fail(const char *what, int error) {
    fprintf(stderr, "floor: cannot %s (%s); check the device name and the ALSA configuration\n", what, snd_strerror(error));
    return -1;
}

static int configure(const struct probe_options *o) {
    snd_pcm_hw_params_t *hw;
    snd_pcm_sw_params_t *sw;
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_sw_params_alloca(&sw);
    unsigned rate = PROBE_RATE;
    period = (snd_pcm_uframes_t)(o->period > 0 ? o->period : 128);
    snd_pcm_uframes_t buffer = period * (snd_pcm_uframes_t)(o->periods > 0 ? o->periods : 3);
    int error;
    if ((error = snd_pcm_hw_params_any(pcm, hw)) < 0
        || (error = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0
        || (error = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_FLOAT_LE)) < 0
        || (error = snd_pcm_hw_params_set_channels(pcm, hw, PROBE_CHANNELS)) < 0
        || (error = snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, NULL)) < 0
        || (error = snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, NULL)) < 0
        || (error = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer)) < 0
        || (error = snd_pcm_hw_params(pcm, hw)) < 0)
        return fail("set the hardware parameters", error);
    snd_pcm_hw_params_get_period_size(hw, &period, NULL);
    snd_pcm_hw_params_get_buffer_size(hw, &buffer_frames);
    if ((error = snd_pcm_sw_params_current(pcm, sw)) < 0
        || (error = snd_pcm_sw_params_set_start_threshold(pcm, sw, period)) < 0
        || (error = snd_pcm_sw_params_set_avail_min(pcm, sw, period)) < 0
        || (error = snd_pcm_sw_params(pcm, sw)) < 0
        || (error = snd_pcm_prepare(pcm)) < 0)
        return fail("set the software parameters", error);
    return 0;
}

/* Renders one period: silence, with the click from its first frame when a trigger is pending
 * (a click longer than the period goes on in the next). */
static void render(int *click) {
    memset(scratch, 0, period * PROBE_CHANNELS * sizeof *scratch);
    if (atomic_exchange_explicit(&pending, 0, memory_order_acquire)) *click = 0;
    for (snd_pcm_uframes_t i = 0; i < period && *click < PROBE_CLICK_FRAMES; i++, (*click)++)
        for (int c = 0; c < PROBE_CHANNELS; c++) scratch[i * PROBE_CHANNELS + c] = probe_click_sample(*click);
}

static void *loop(void *unused) {
    (void)unused;
    probe_set_fifo(priority);
    int click = PROBE_CLICK_FRAMES;
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        int ready = snd_pcm_wait(pcm, 200);
        snd_pcm_sframes_t available = ready < 0 ? ready : snd_pcm_avail_update(pcm);
        while (available >= (snd_pcm_sframes_t)period) {
            render(&click);
            snd_pcm_sframes_t written = snd_pcm_writei(pcm, scratch, period);
            if (written < 0) { available = written; break; }
            available -= (snd_pcm_sframes_t)period;
        }
        if (available < 0 && snd_pcm_recover(pcm, (int)available, 1) < 0) {
            fprintf(stderr, "floor: the device failed (%s); check the card\n", snd_strerror((int)available));
            return NULL;
        }
    }
    return NULL;
}

/* Rewind mode: renders `count` frames from absolute frame `from` into scratch, each what was
 * written there before (when `again`) plus the click where it sounds, and keeps them. */
static void render_at(uint64_t from, snd_pcm_uframes_t count, int again, int *click) {
    for (snd_pcm_uframes_t i = 0; i < count; i++) {
        float *kept = history + ((from + i) % buffer_frames) * PROBE_CHANNELS;
        float add = *click < PROBE_CLICK_FRAMES ? probe_click_sample(*click) : 0.0f;
        if (*click < PROBE_CLICK_FRAMES) (*click)++;
        for (int c = 0; c < PROBE_CHANNELS; c++) {
            float value = (again ? kept[c] : 0.0f) + add;
            kept[c] = value;
            scratch[i * PROBE_CHANNELS + c] = value;
        }
    }
}

/* Rewinds to the guard ahead of the DAC and writes again with the click from there; returns the
 * frames rewritten, 0 when nothing could be rewound (the click then starts at the next period). */
static snd_pcm_sframes_t start_by_rewinding(int *click) {
    snd_pcm_sframes_t delay = 0;
    if (snd_pcm_delay(pcm, &delay) < 0) return 0;
    snd_pcm_sframes_t rewindable = snd_pcm_rewindable(pcm);
    snd_pcm_sframes_t amount = (rewindable < delay ? rewindable : delay) - rewind_guard;
    if (amount <= 0) return 0;
    snd_pcm_sframes_t rewound = snd_pcm_rewind(pcm, (snd_pcm_uframes_t)amount);
    if (rewound <= 0) return rewound;
    atomic_store_explicit(&pending, 0, memory_order_relaxed);
    *click = 0;
    written -= (uint64_t)rewound;
    render_at(written, (snd_pcm_uframes_t)rewound, 1, click);
    snd_pcm_sframes_t result = snd_pcm_writei(pcm, scratch, (snd_pcm_uframes_t)rewound);
    if (result > 0) written += (uint64_t)result;
    return result;
}

static void *rewind_loop(void *unused) {
    (void)unused;
    probe_set_fifo(priority);
    int click = PROBE_CLICK_FRAMES;
    struct pollfd fds[16];
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        int count = snd_pcm_poll_descriptors(pcm, fds, 15);
        if (count < 0) count = 0;
        fds[count] = (struct pollfd){ .fd = wake_pipe[0], .events = POLLIN };
        poll(fds, (nfds_t)count + 1, 200);
        if (fds[count].revents & POLLIN) {
            char bytes[64];
            while (read(wake_pipe[0], bytes, sizeof bytes) == (ssize_t)sizeof bytes) {}
        }
        unsigned short revents = 0;
        snd_pcm_poll_descriptors_revents(pcm, fds, (unsigned)count, &revents);
        snd_pcm_sframes_t available = snd_pcm_avail(pcm);
        if (available >= 0 && atomic_load_explicit(&pending, memory_order_acquire) && written >= buffer_frames) {
            snd_pcm_sframes_t result = start_by_rewinding(&click);
            if (result < 0) available = result;
        }
        while (available >= (snd_pcm_sframes_t)period) {
            if (atomic_exchange_explicit(&pending, 0, memory_order_acquire)) click = 0;
            render_at(written, period, 0, &click);
            snd_pcm_sframes_t result = snd_pcm_writei(pcm, scratch, period);
            if (result < 0) { available = result; break; }
            written += (uint64_t)result;
            available -= (snd_pcm_sframes_t)period;
        }
        if (available < 0) {
            if (snd_pcm_recover(pcm, (int)available, 1) < 0) {
                fprintf(stderr, "floor: the device failed (%s); check the card\n", snd_strerror((int)available));
                return NULL;
            }
            written = 0;   /* the stream starts again from an empty buffer */
        }
    }
    return NULL;
}

static int floor_open(const struct probe_options *o) {
    int error = snd_pcm_open(&pcm, o->device, SND_PCM_STREAM_PLAYBACK, 0);
    if (error < 0) return fail("open the device", error);
    if (configure(o) != 0) return -1;
    const char *guard = getenv("FLOOR_REWIND_GUARD_FRAMES");
    rewind_guard = guard ? strtol(guard, NULL, 10) : 0;
    scratch = calloc(buffer_frames * PROBE_CHANNELS, sizeof *scratch);
    history = calloc(buffer_frames * PROBE_CHANNELS, sizeof *history);
    if (!scratch || !history) return fail("allocate a buffer", -ENOMEM);
    if (rewind_guard > 0 && pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC) != 0) return fail("make the wake-up pipe", -errno);
    priority = o->priority;
    return pthread_create(&thread, NULL, rewind_guard > 0 ? rewind_loop : loop, NULL) == 0 ? 0 : fail("start the audio thread", -EAGAIN);
}

static void floor_trigger(void) {
    atomic_store_explicit(&pending, 1, memory_order_release);
    if (rewind_guard > 0) {
        char one = 1;
        if (write(wake_pipe[1], &one, 1) < 0) { /* a full pipe is readable already */ }
    }
}

/* The floor mixes nothing: in the voices mode it plays silence, and its CPU is what the card and
 * the write loop cost alone, the baseline every client on the card pays at that period. */
static int floor_voices(int count, float gain) {
    (void)count; (void)gain;
    return 0;
}

static void floor_close(void) {
    atomic_store(&stopping, 1);
    pthread_join(thread, NULL);
    snd_pcm_drop(pcm);
    snd_pcm_close(pcm);
    free(scratch);
    free(history);
    if (wake_pipe[0] >= 0) { close(wake_pipe[0]); close(wake_pipe[1]); }
}

int main(int argc, char **argv) {
    static const struct probe_client client = { "floor", floor_open, floor_trigger, floor_voices, floor_close };
    return probe_main(argc, argv, &client);
}
