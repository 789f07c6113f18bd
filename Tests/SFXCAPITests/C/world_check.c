/*
 * Sound in a game's world through the C API, against an installed libsfx on the virtual card.
 * Built with -DSCENE=1 (a tone 2 units to the listener's right, inverse clamped: heard at half
 * level on the right channel alone) or -DSCENE=2 (a tone 50 units ahead with a linear clamped
 * source whose maximum distance is 10: silent) or -DSCENE=3 (the tone, centred, sending all of
 * itself to an echo of one tap 0.5 s later at half level). Before the scene it checks the listener, the
 * world, sources, filters and HRTF through their errors; it prints "filter error: <line>" for the
 * test to read, "scene <n>" as the scene's play starts, and "ok" at the end; on the first failed
 * check "FAIL <line>: <what>" and exit 1.
 */
#define _DEFAULT_SOURCE
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfx.h>

#include "check.h"

/* A call that must fail with `expected` and a one-line message naming `name`. */
#define CHECK_ERROR(call, expected, name) do { CHECK_STATUS(call, expected); \
    CHECK(strstr(sfx_last_error(), name) != NULL, "the message does not name " name); \
    CHECK(strchr(sfx_last_error(), '\n') == NULL, "the message is more than one line"); } while (0)

#ifndef SCENE
#define SCENE 1
#endif

static atomic_int finished;

static void on_complete(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data) {
    (void)voice; (void)detail; (void)user_data;
    if (outcome == SFX_FINISHED) atomic_fetch_add(&finished, 1);
}

/* What needs no sound: every new call's NULLs, ranges and round trips. */
static void check_errors(sfx_engine *engine, sfx_sound tone) {
    /* The listener: the engine's first, a round trip, and what is refused. */
    sfx_listener listener;
    CHECK_STATUS(sfx_listener_get(engine, &listener), SFX_OK);
    CHECK(listener.position[0] == 0 && listener.forward[2] == -1 && listener.up[1] == 1 && listener.gain == 1,
          "the first listener is not at the origin facing -z, +y up, gain 1");
    sfx_listener moved = { { 1, 2, 3 }, { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, 0.5f };
    CHECK_STATUS(sfx_listener_set(engine, &moved), SFX_OK);
    CHECK_STATUS(sfx_listener_get(engine, &listener), SFX_OK);
    CHECK(memcmp(&listener, &moved, sizeof listener) == 0, "sfx_listener_get did not give what sfx_listener_set set");
    sfx_listener bad = moved;
    bad.forward[0] = 0;
    CHECK_ERROR(sfx_listener_set(engine, &bad), SFX_ERROR_RANGE, "listener.forward");
    bad = moved;
    bad.up[0] = 2; bad.up[2] = 0;
    CHECK_ERROR(sfx_listener_set(engine, &bad), SFX_ERROR_RANGE, "parallel");
    bad = moved;
    bad.position[1] = NAN;
    CHECK_ERROR(sfx_listener_set(engine, &bad), SFX_ERROR_RANGE, "listener.position");
    bad = moved;
    bad.gain = 17;
    CHECK_ERROR(sfx_listener_set(engine, &bad), SFX_ERROR_RANGE, "listener.gain");
    CHECK_ERROR(sfx_listener_set(engine, NULL), SFX_ERROR_NULL, "listener");
    CHECK_ERROR(sfx_listener_get(engine, NULL), SFX_ERROR_NULL, "listener");
    CHECK_STATUS(sfx_listener_get(engine, &listener), SFX_OK);
    CHECK(memcmp(&listener, &moved, sizeof listener) == 0, "a refused listener changed the listener");
    sfx_listener home = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, -1 }, { 0, 1, 0 }, 1 };
    CHECK_STATUS(sfx_listener_set(engine, &home), SFX_OK);

    /* The world. */
    CHECK_STATUS(sfx_world_set(engine, 1, 343.3f, 1), SFX_OK);
    CHECK_ERROR(sfx_world_set(engine, 101, 343.3f, 1), SFX_ERROR_RANGE, "doppler_factor");
    CHECK_ERROR(sfx_world_set(engine, 1, 0, 1), SFX_ERROR_RANGE, "speed_of_sound");
    CHECK_ERROR(sfx_world_set(engine, 1, 343.3f, INFINITY), SFX_ERROR_RANGE, "meters_per_unit");

    /* Sources: the defaults, as the macro gives them, and what is refused. */
    sfx_source source, macro = SFX_SOURCE_DEFAULT;
    memset(&source, 0xff, sizeof source);
    sfx_source_default(&source);
    sfx_source_default(NULL);
    CHECK(memcmp(&source, &macro, sizeof source) == 0, "sfx_source_default differs from SFX_SOURCE_DEFAULT");
    CHECK(source.distance_model == SFX_DISTANCE_INVERSE_CLAMPED && source.reference_distance == 1 &&
          source.maximum_distance == FLT_MAX && source.rolloff_factor == 1 && source.cone_inner == 360 &&
          source.cone_outer == 360 && source.cone_outer_gain == 0 && source.air_absorption == 0 && source.relative == 0,
          "the default source is not OpenAL's");
    sfx_voice voice = 1;
    source.distance_model = 7;
    CHECK_ERROR(sfx_play_source(engine, tone, &source, NULL, &voice), SFX_ERROR_RANGE, "source.distance_model");
    CHECK(voice == 0, "a refused play set a voice");
    sfx_source_default(&source);
    source.maximum_distance = 0.5f;
    CHECK_ERROR(sfx_play_source(engine, tone, &source, NULL, &voice), SFX_ERROR_RANGE, "source.maximum_distance");
    sfx_source_default(&source);
    source.cone_inner = 90; source.cone_outer = 45;
    CHECK_ERROR(sfx_play_source(engine, tone, &source, NULL, &voice), SFX_ERROR_RANGE, "source.cone_outer");
    CHECK_ERROR(sfx_play_source(engine, tone, NULL, NULL, &voice), SFX_ERROR_NULL, "source");
    CHECK_ERROR(sfx_play_at(engine, tone, 0, INFINITY, 0, NULL, &voice), SFX_ERROR_RANGE, "position");
    CHECK_ERROR(sfx_play_at(engine, 999999, 1, 0, 0, NULL, &voice), SFX_ERROR_SOUND, "999999");

    /* A voice's setters check their numbers even when the voice has ended (voice 12345 never was). */
    CHECK_STATUS(sfx_voice_set_position(engine, 12345, 1, 2, 3), SFX_OK);
    CHECK_ERROR(sfx_voice_set_position(engine, 12345, NAN, 0, 0), SFX_ERROR_RANGE, "position");
    CHECK_ERROR(sfx_voice_set_velocity(engine, 12345, 0, 0, -INFINITY), SFX_ERROR_RANGE, "velocity");
    CHECK_STATUS(sfx_voice_set_cone(engine, 12345, 90, 180, 0.25f, 0, 0, 1), SFX_OK);
    CHECK_ERROR(sfx_voice_set_cone(engine, 12345, 400, 400, 0, 0, 0, 1), SFX_ERROR_RANGE, "inner");
    CHECK_ERROR(sfx_voice_set_cone(engine, 12345, 90, 180, 2, 0, 0, 1), SFX_ERROR_RANGE, "outer_gain");
    CHECK_STATUS(sfx_voice_set_relative(engine, 12345, 1), SFX_OK);
    CHECK_ERROR(sfx_voice_set_source(engine, 12345, NULL), SFX_ERROR_NULL, "source");

    /* Filters: one line in sfx's form for a cutoff out of range, then the others. */
    sfx_filter filter = { SFX_FILTER_LOWPASS, 5, 0.7071f, 1 };
    CHECK_ERROR(sfx_voice_set_filter(engine, 12345, &filter), SFX_ERROR_RANGE, "filter.cutoff");
    printf("filter error: %s\n", sfx_last_error());
    CHECK_ERROR(sfx_group_set_filter(engine, SFX_GROUP_EFFECTS, &filter), SFX_ERROR_RANGE, "filter.cutoff");
    filter.cutoff = 1000; filter.kind = 4;
    CHECK_ERROR(sfx_voice_set_filter(engine, 12345, &filter), SFX_ERROR_RANGE, "filter.kind");
    filter.kind = SFX_FILTER_HIGHSHELF; filter.q = 2;
    CHECK_ERROR(sfx_voice_set_filter(engine, 12345, &filter), SFX_ERROR_RANGE, "slope");
    filter.kind = SFX_FILTER_BANDPASS; filter.gain = 1.5f;
    CHECK_ERROR(sfx_voice_set_filter(engine, 12345, &filter), SFX_ERROR_RANGE, "filter.gain");
    filter.gain = 1;
    CHECK_ERROR(sfx_group_set_filter(engine, 8, &filter), SFX_ERROR_RANGE, "group");
    CHECK_STATUS(sfx_group_set_filter(engine, SFX_GROUP_MUSIC, &filter), SFX_OK);
    CHECK_STATUS(sfx_group_set_filter(engine, SFX_GROUP_MUSIC, NULL), SFX_OK);
    CHECK_STATUS(sfx_voice_set_filter(engine, 12345, NULL), SFX_OK);

    /* HRTF: off here; a buffer too small says so and keeps what fits. */
    char status[128], small[3];
    CHECK_STATUS(sfx_hrtf_status(engine, status, sizeof status), SFX_OK);
    CHECK(strcmp(status, "off") == 0, "sfx_hrtf_status is not \"off\" without an HRTF");
    CHECK_ERROR(sfx_hrtf_status(engine, small, sizeof small), SFX_ERROR_RANGE, "4 bytes");
    CHECK(strcmp(small, "of") == 0, "a short buffer does not hold what fits");
    CHECK_ERROR(sfx_hrtf_status(engine, NULL, 16), SFX_ERROR_NULL, "buffer");

    /* Effect buses: names, ranges, a clear of an empty bus. */
    CHECK_STATUS(sfx_effect_set_reverb(engine, 1, "hall", SFX_GROUP_EFFECTS), SFX_OK);
    CHECK_STATUS(sfx_effect_set_reverb(engine, 1, "underwater", SFX_GROUP_MUSIC), SFX_OK);
    CHECK_ERROR(sfx_effect_set_reverb(engine, 1, "church", SFX_GROUP_EFFECTS), SFX_ERROR_SOUND, "\"stoneRoom\"");
    CHECK_ERROR(sfx_effect_set_reverb(engine, 1, NULL, SFX_GROUP_EFFECTS), SFX_ERROR_NULL, "preset");
    CHECK_ERROR(sfx_effect_set_reverb(engine, SFX_EFFECT_BUS_COUNT, "room", SFX_GROUP_EFFECTS), SFX_ERROR_RANGE, "bus");
    CHECK_ERROR(sfx_effect_set_reverb(engine, 1, "room", 8), SFX_ERROR_RANGE, "group");
    CHECK_STATUS(sfx_effect_set_echo(engine, 2, 0.25f, 0.4f, 0.5f, 0.2f, SFX_GROUP_EFFECTS), SFX_OK);
    CHECK_ERROR(sfx_effect_set_echo(engine, 2, 3, 0.4f, 0.5f, 0.2f, SFX_GROUP_EFFECTS), SFX_ERROR_RANGE, "delay");
    CHECK_ERROR(sfx_effect_set_echo(engine, 2, 0.25f, 1, 0.5f, 0.2f, SFX_GROUP_EFFECTS), SFX_ERROR_RANGE, "feedback");
    CHECK_ERROR(sfx_effect_set_echo(engine, 2, 0.25f, 0.4f, -0.5f, 0.2f, SFX_GROUP_EFFECTS), SFX_ERROR_RANGE, "wet");
    CHECK_ERROR(sfx_effect_set_echo(engine, 2, 0.25f, 0.4f, 0.5f, 1, SFX_GROUP_EFFECTS), SFX_ERROR_RANGE, "damping");
    CHECK_STATUS(sfx_effect_clear(engine, 1), SFX_OK);
    CHECK_STATUS(sfx_effect_clear(engine, 2), SFX_OK);
    CHECK_STATUS(sfx_effect_clear(engine, 3), SFX_OK);
    CHECK_ERROR(sfx_effect_clear(engine, 4), SFX_ERROR_RANGE, "bus");
    CHECK_STATUS(sfx_voice_set_send(engine, 12345, 0, 1), SFX_OK);
    CHECK_ERROR(sfx_voice_set_send(engine, 12345, 0, 1.5f), SFX_ERROR_RANGE, "level");
    CHECK_ERROR(sfx_voice_set_send(engine, 12345, 4, 0.5f), SFX_ERROR_RANGE, "bus");

    /* A voice played by sfx_play takes every setter, and a source, while it sounds. */
    sfx_play_options quiet = SFX_PLAY_OPTIONS_DEFAULT;
    quiet.volume = 0;
    CHECK_STATUS(sfx_play(engine, tone, &quiet, &voice), SFX_OK);
    sfx_source_default(&source);
    source.position[0] = 3;
    CHECK_STATUS(sfx_voice_set_source(engine, voice, &source), SFX_OK);
    CHECK_STATUS(sfx_voice_set_position(engine, voice, -1, 0, 0), SFX_OK);
    CHECK_STATUS(sfx_voice_set_velocity(engine, voice, 0, 0, 5), SFX_OK);
    CHECK_STATUS(sfx_voice_set_cone(engine, voice, 90, 180, 0.5f, 1, 0, 0), SFX_OK);
    CHECK_STATUS(sfx_voice_set_relative(engine, voice, 0), SFX_OK);
    filter.kind = SFX_FILTER_LOWPASS;
    CHECK_STATUS(sfx_voice_set_filter(engine, voice, &filter), SFX_OK);
    CHECK_STATUS(sfx_voice_stop(engine, voice, 0), SFX_OK);
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
}

/* HRTF at open: libmysofa's default set, and a file that is not there. */
static void check_hrtf(void) {
    sfx_config config;
    sfx_config_init(&config);
    CHECK(config.hrtf == NULL, "sfx_config_init left hrtf set");
    config.hrtf = "/nonexistent/head.sofa";
    sfx_engine *engine = (sfx_engine *)1;
    CHECK_ERROR(sfx_open(&config, &engine), SFX_ERROR_FAILED, "/nonexistent/head.sofa");
    printf("hrtf error: %s\n", sfx_last_error());
    CHECK(engine == NULL, "a failed sfx_open set an engine");
    config.hrtf = "default";
    CHECK_STATUS(sfx_open(&config, &engine), SFX_OK);
    char status[256];
    CHECK_STATUS(sfx_hrtf_status(engine, status, sizeof status), SFX_OK);
    printf("hrtf: %s\n", status);
    CHECK(strncmp(status, "default.sofa, ", 14) == 0, "sfx_hrtf_status does not name the default set");
    CHECK_STATUS(sfx_close(engine), SFX_OK);
    CHECK_ERROR(sfx_hrtf_status(engine, status, sizeof status), SFX_ERROR_CLOSED, "closed");
}

int main(void) {
    check_hrtf();

    sfx_engine *engine;
    CHECK_STATUS(sfx_open(NULL, &engine), SFX_OK);
    /* 0.4 s of a 660 Hz tone at half scale. */
    enum { rate = 48000, frames = 19200 };
    static float samples[frames];
    for (int i = 0; i < frames; i++) samples[i] = 0.5f * (float)sin(2 * M_PI * 660 * i / rate);
    sfx_sound tone;
    CHECK_STATUS(sfx_load_pcm(engine, samples, frames, 1, rate, &tone), SFX_OK);
    check_errors(engine, tone);

    sfx_play_options options = SFX_PLAY_OPTIONS_DEFAULT;
    options.completion = on_complete;
    sfx_voice voice = 0;
    printf("scene %d\n", SCENE);
    fflush(stdout);
#if SCENE == 1
    CHECK_STATUS(sfx_play_at(engine, tone, 2, 0, 0, &options, &voice), SFX_OK);
#elif SCENE == 3
    CHECK_STATUS(sfx_effect_set_echo(engine, 0, 0.5f, 0, 0.5f, 0, SFX_GROUP_EFFECTS), SFX_OK);
    CHECK_STATUS(sfx_play(engine, tone, &options, &voice), SFX_OK);
    CHECK_STATUS(sfx_voice_set_send(engine, voice, 0, 1), SFX_OK);
#else
    sfx_source far = SFX_SOURCE_DEFAULT;
    far.position[2] = -50;
    far.distance_model = SFX_DISTANCE_LINEAR_CLAMPED;
    far.maximum_distance = 10;
    CHECK_STATUS(sfx_play_source(engine, tone, &far, &options, &voice), SFX_OK);
#endif
    CHECK(voice != 0, "the play gave voice 0");
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
    CHECK(atomic_load(&finished) == 1, "the play did not finish");
#if SCENE == 3
    usleep(700 * 1000);     /* sfx_wait_idle does not wait for the echo, 0.5 s after the tone began */
#endif
    CHECK_STATUS(sfx_close(engine), SFX_OK);
    printf("ok\n");
    return 0;
}
