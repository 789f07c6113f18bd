/*
 * sfxc.c — sfx through its C API (libsfx.so, sfx.h), as a C game calls it: sfx_open on the card
 * with the period and periods asked for (the engine's defaults otherwise, rewind mode among them),
 * the click loaded with sfx_load_pcm, each trigger one sfx_play with default options. The row
 * beside it, `sfxpython.py`, makes the same calls through the Python binding, so the two rows'
 * difference is the binding's cost on the way to the DAC.
 */
#include "probe.h"

#include <sfx.h>
#include <stdio.h>
#include <stdlib.h>

enum { CLICK_FRAMES = PROBE_CLICK_FRAMES, LOOP_FRAMES = PROBE_LOOP_FRAMES };

static sfx_engine *engine;
static sfx_sound click, loop;

static int fail(const char *what) {
    fprintf(stderr, "sfxc: cannot %s: %s\n", what, sfx_last_error());
    return -1;
}

static int open_engine(const struct probe_options *o) {
    sfx_config config;
    sfx_config_init(&config);
    config.device = o->device;
    config.sample_rate = PROBE_RATE;
    config.period_frames = o->period > 0 ? (uint32_t)o->period : 0;
    config.periods = o->periods > 0 ? (uint32_t)o->periods : 0;
    config.max_voices = 4096;
    config.while_no_device = SFX_NO_DEVICE_FAIL;
    if (sfx_open(&config, &engine) != 0) return fail("open the engine");
    float samples[CLICK_FRAMES];
    for (int i = 0; i < CLICK_FRAMES; i++) samples[i] = probe_click_sample(i);
    if (sfx_load_pcm(engine, samples, CLICK_FRAMES, 1, PROBE_RATE, &click) != 0) return fail("load the click");
    float *tone = malloc(sizeof(float) * LOOP_FRAMES);
    if (!tone) return fail("allocate the loop");
    for (int i = 0; i < LOOP_FRAMES; i++) tone[i] = probe_loop_sample(i);
    int status = sfx_load_pcm(engine, tone, LOOP_FRAMES, 1, PROBE_RATE, &loop);
    free(tone);
    return status == 0 ? 0 : fail("load the loop");
}

static void trigger(void) { sfx_play(engine, click, NULL, NULL); }

static int start_voices(int count, float gain) {
    sfx_play_options options;
    sfx_play_options_init(&options);
    options.volume = gain;
    options.loops = -1;
    for (int i = 0; i < count; i++)
        if (sfx_play(engine, loop, &options, NULL) != 0) return fail("start a looping voice");
    return 0;
}

static void close_engine(void) {
    if (engine) sfx_close(engine);
    engine = NULL;
}

int main(int argc, char **argv) {
    static const struct probe_client client = { "sfxc", open_engine, trigger, start_voices, close_engine };
    return probe_main(argc, argv, &client);
}
