/*
 * floor.c — the floor: the least an alsa-lib client can do to play a click on time.
 *
 * It opens the device exactly as sfx does (RW interleaved FLOAT_LE, 48 kHz stereo, the period
 * asked for, `periods` periods per buffer, start threshold and avail_min one period), and runs
 * sfx's loop with no mixer: wait for a period of space, write one period, and when a trigger is
 * pending copy the click into that very period (in the voices mode it plays silence). The audio thread runs under SCHED_FIFO at the
 * same priority as sfx's. Triggers arrive from the schedule thread through one atomic flag.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <alsa/asoundlib.h>
#include <pthread.h>
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

static int floor_open(const struct probe_options *o) {
    int error = snd_pcm_open(&pcm, o->device, SND_PCM_STREAM_PLAYBACK, 0);
    if (error < 0) return fail("open the device", error);
    if (configure(o) != 0) return -1;
    scratch = calloc(period * PROBE_CHANNELS, sizeof *scratch);
    if (!scratch) return fail("allocate a period", -ENOMEM);
    priority = o->priority;
    return pthread_create(&thread, NULL, loop, NULL) == 0 ? 0 : fail("start the audio thread", -EAGAIN);
}

static void floor_trigger(void) {
    atomic_store_explicit(&pending, 1, memory_order_release);
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
}

int main(int argc, char **argv) {
    static const struct probe_client client = { "floor", floor_open, floor_trigger, floor_voices, floor_close };
    return probe_main(argc, argv, &client);
}
