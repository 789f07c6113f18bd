/*
 * The C API from C, against an installed libsfx (built with `pkg-config --cflags --libs sfx`),
 * on the virtual card (ALSA's default). Prints "trigger <CLOCK_MONOTONIC ns>" just before each
 * play that must reach the card, so the test can match each one to the card's logged onset,
 * and "ok" at the end; on the first failed check it prints "FAIL <line>: <what>" and exits 1.
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfx.h>

#include "check.h"


/* What the completion callback saw. */
static atomic_int completions;
static atomic_int finished, stopped, stolen, rejected;
static atomic_ullong last_voice;
static atomic_int wrong_user_data;
static int user_data_tag;

static void on_complete(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data) {
    if (user_data != &user_data_tag) atomic_fetch_add(&wrong_user_data, 1);
    switch (outcome) {
    case SFX_FINISHED: atomic_fetch_add(&finished, 1); break;
    case SFX_STOPPED: atomic_fetch_add(&stopped, 1); break;
    case SFX_STOLEN: atomic_fetch_add(&stolen, 1); break;
    case SFX_REJECTED: atomic_fetch_add(&rejected, 1); printf("rejected: %s\n", detail ? detail : "(no detail)"); break;
    }
    atomic_store(&last_voice, voice);
    atomic_fetch_add(&completions, 1);
}

static void trigger(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("trigger %llu\n", (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
    fflush(stdout);
}

/* Plays `sound` with the callback, waits for it to end and for silence, and checks it finished. */
static void play_and_wait(sfx_engine *engine, sfx_sound sound, float pan) {
    sfx_play_options options;
    sfx_play_options_init(&options);
    options.pan = pan;
    options.completion = on_complete;
    options.user_data = &user_data_tag;
    int before = atomic_load(&finished);
    sfx_voice voice = 0;
    trigger();
    CHECK_STATUS(sfx_play(engine, sound, &options, &voice), SFX_OK);
    CHECK(voice != 0, "sfx_play gave voice 0");
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
    CHECK(atomic_load(&finished) == before + 1, "the play did not complete with SFX_FINISHED");
    CHECK(atomic_load(&last_voice) == voice, "the completion named another voice");
    usleep(60 * 1000);      /* silence between sounds, so that the card logs each onset */
}

/* A 16-bit mono WAV of `frames` frames of a 660 Hz tone at `rate`, in a malloc'd buffer. */
static unsigned char *wav_tone(unsigned rate, unsigned frames, size_t *size) {
    *size = 44 + 2 * (size_t)frames;
    unsigned char *wav = calloc(1, *size);
    unsigned data = 2 * frames, riff = 36 + data, fmt = 16, byte_rate = rate * 2;
    memcpy(wav, "RIFF", 4); memcpy(wav + 4, &riff, 4); memcpy(wav + 8, "WAVEfmt ", 8);
    memcpy(wav + 16, &fmt, 4);
    wav[20] = 1; wav[22] = 1;                      /* PCM, mono */
    memcpy(wav + 24, &rate, 4); memcpy(wav + 28, &byte_rate, 4);
    wav[32] = 2; wav[34] = 16;                     /* block align, bits */
    memcpy(wav + 36, "data", 4); memcpy(wav + 40, &data, 4);
    for (unsigned i = 0; i < frames; i++) {
        short sample = (short)(12000 * sin(2 * M_PI * 660 * i / rate));
        memcpy(wav + 44 + 2 * i, &sample, 2);
    }
    return wav;
}

/* Plays silently (volume 0: nothing reaches the card) from several threads at once. */
enum { threads = 4, plays_per_thread = 50 };
static sfx_engine *shared_engine;
static sfx_sound shared_sound;
static atomic_int thread_failures;

static void *play_many(void *unused) {
    (void)unused;
    sfx_play_options options = SFX_PLAY_OPTIONS_DEFAULT;
    options.volume = 0;
    options.completion = on_complete;
    options.user_data = &user_data_tag;
    for (int i = 0; i < plays_per_thread; i++) {
        if (sfx_play(shared_engine, shared_sound, &options, NULL) != SFX_OK) atomic_fetch_add(&thread_failures, 1);
        if (strcmp(sfx_last_error(), "") != 0) atomic_fetch_add(&thread_failures, 1);   /* per thread: none here */
    }
    return NULL;
}

/* A completion that calls back into sfx: plays the sound again, once. */
static atomic_int replayed;
static void replay_once(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data) {
    (void)voice; (void)detail;
    if (outcome == SFX_FINISHED && atomic_fetch_add(&replayed, 1) == 0) {
        sfx_play_options options = SFX_PLAY_OPTIONS_DEFAULT;
        options.volume = 0;
        options.completion = replay_once;
        options.user_data = user_data;
        if (sfx_play(shared_engine, *(sfx_sound *)user_data, &options, NULL) != SFX_OK) atomic_fetch_add(&thread_failures, 1);
    }
}

/* Sets sfx's mute flag in $XDG_STATE_HOME (the test's own) on or off. */
static void set_mute_flag(int on) {
    char path[4096];
    snprintf(path, sizeof path, "%s/sfx", getenv("XDG_STATE_HOME"));
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sfx/muted", getenv("XDG_STATE_HOME"));
    FILE *flag = fopen(path, "w");
    if (flag == NULL) { printf("FAIL: cannot write %s\n", path); exit(1); }
    fputs(on ? "1\n" : "0\n", flag);
    fclose(flag);
}

/* Waits (up to 10 s) until the test's vibration command has logged `lines` vibrations. */
static void wait_for_vibrations(int lines) {
    for (int tries = 0; tries < 1000; tries++) {
        FILE *log = fopen(getenv("SFX_TEST_VIBRATIONS"), "r");
        int seen = 0;
        if (log != NULL) {
            for (int c; (c = fgetc(log)) != EOF;) seen += c == '\n';
            fclose(log);
        }
        if (seen >= lines) return;
        usleep(10 * 1000);
    }
    printf("FAIL: the vibration command did not log %d vibrations\n", lines);
    exit(1);
}

int main(void) {
    sfx_engine *engine = NULL;
    sfx_sound tock = 0;

    /* Null arguments and bad handles: errors with a message, never crashes. */
    CHECK(strcmp(sfx_version(), "0.1.0") == 0, "sfx_version is not the header's version");
    CHECK(strcmp(sfx_last_error(), "") == 0, "a last error before any failure");
    CHECK_STATUS(sfx_open(NULL, NULL), SFX_ERROR_NULL);
    CHECK(strstr(sfx_last_error(), "NULL") != NULL, "the null argument's message does not say NULL");
    CHECK_STATUS(sfx_play(NULL, 1000, NULL, NULL), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_close(NULL), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_play((sfx_engine *)(uintptr_t)0xdead0, 1000, NULL, NULL), SFX_ERROR_CLOSED);
    sfx_config_init(NULL);
    sfx_play_options_init(NULL);

    /* A configuration out of range. */
    sfx_config config;
    sfx_config_init(&config);
    config.period_frames = 5;
    CHECK_STATUS(sfx_open(&config, &engine), SFX_ERROR_RANGE);
    CHECK(engine == NULL, "a failed sfx_open set an engine");
    CHECK(strstr(sfx_last_error(), "periodFrames") != NULL, "the range message does not name the setting");
    config.period_frames = 0;
    config.device = "no-such-device";
    config.while_no_device = 7;
    CHECK_STATUS(sfx_open(&config, &engine), SFX_ERROR_RANGE);
    CHECK(strstr(sfx_last_error(), "while_no_device") != NULL, "the range message does not name while_no_device");
    config.while_no_device = SFX_NO_DEVICE_FAIL;
    CHECK_STATUS(sfx_open(&config, &engine), SFX_ERROR_DEVICE);
    CHECK(engine == NULL, "a failed sfx_open set an engine");
    CHECK(strstr(sfx_last_error(), "no-such-device") != NULL, "the device error does not name the device");
    /* By default an engine opens without its device, says why, and plays on the clock. */
    config.while_no_device = SFX_NO_DEVICE_MIX;
    CHECK_STATUS(sfx_open(&config, &engine), SFX_OK);
    char why[512];
    CHECK_STATUS(sfx_device_status(engine, NULL, 0), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_device_status(engine, why, sizeof why), 0);
    CHECK(strstr(why, "no-such-device") != NULL, "sfx_device_status does not say which device is missing");
    CHECK_STATUS(sfx_device_status(engine, why, 4), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_system_sound(engine, "tock", &tock), SFX_OK);
    CHECK_STATUS(sfx_play(engine, tock, NULL, NULL), SFX_OK);
    CHECK_STATUS(sfx_wait_idle(engine, 5000), SFX_OK);
    CHECK_STATUS(sfx_close(engine), SFX_OK);

    sfx_config_init(&config);
    config.period_frames = 256;
    CHECK_STATUS(sfx_open(&config, &engine), SFX_OK);
    CHECK(engine != NULL, "sfx_open set no engine");
    CHECK_STATUS(sfx_device_status(engine, why, sizeof why), 1);
    CHECK(why[0] == 0, "a device that plays has no problem to tell");

    CHECK_STATUS(sfx_system_sound(engine, NULL, &tock), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_system_sound(engine, "tock", NULL), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_system_sound(engine, "no-such-sound-anywhere", &tock), SFX_ERROR_SOUND);
    CHECK_STATUS(sfx_system_sound(engine, "tock", &tock), SFX_OK);
    CHECK(tock >= 1000 && tock < 2000, "tock is not a bundled system sound id");
    CHECK_STATUS(sfx_load_file(engine, NULL, &tock), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_load_file(engine, "/nonexistent/coin.ogg", &(sfx_sound){0}), SFX_ERROR_SOUND);
    CHECK_STATUS(sfx_load_pcm(engine, NULL, 10, 1, 48000, &(sfx_sound){0}), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_load_memory(engine, NULL, 10, &(sfx_sound){0}), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_load_memory(engine, "not a sound file at all", 23, &(sfx_sound){0}), SFX_ERROR_SOUND);
    CHECK(strstr(sfx_last_error(), "memory") != NULL, "a bad sound in memory is not named as such");

    /* Numbers out of range and unknown sounds: errors, and no completion. */
    sfx_play_options options = SFX_PLAY_OPTIONS_DEFAULT;
    options.completion = on_complete;
    options.user_data = &user_data_tag;
    options.volume = 20;
    sfx_voice voice = 99;
    CHECK_STATUS(sfx_play(engine, tock, &options, &voice), SFX_ERROR_RANGE);
    CHECK(voice == 0, "a refused play set a voice");
    CHECK(strstr(sfx_last_error(), "volume") != NULL, "the message does not name the volume");
    options.volume = 1;
    options.group = 8;
    CHECK_STATUS(sfx_play(engine, tock, &options, NULL), SFX_ERROR_RANGE);
    options.group = SFX_GROUP_UI;
    options.pan = NAN;
    CHECK_STATUS(sfx_play(engine, tock, &options, NULL), SFX_ERROR_RANGE);
    options.pan = 0;
    CHECK_STATUS(sfx_play(engine, 123456789, &options, NULL), SFX_ERROR_SOUND);
    CHECK_STATUS(sfx_group_set_gain(engine, 3, -1), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_group_set_gain(engine, 9, 1), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_stop_all(engine, 60001), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_dispose(engine, tock), SFX_ERROR_SOUND);
    CHECK(atomic_load(&completions) == 0, "a refused play was completed");

    /* Sounds that reach the card: tock three times, a PCM tone, a WAV from memory. */
    for (int i = 0; i < 3; i++) play_and_wait(engine, tock, i - 1.0f);

    enum { rate = 22050, frames = rate / 10 };
    float *pcm = malloc(sizeof(float) * frames * 2);
    for (int i = 0; i < frames; i++) pcm[2 * i] = pcm[2 * i + 1] = 0.4f * (float)sin(2 * M_PI * 440 * i / rate);
    sfx_sound tone = 0;
    CHECK_STATUS(sfx_load_pcm(engine, pcm, frames, 3, rate, &tone), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_load_pcm(engine, pcm, 0, 2, rate, &tone), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_load_pcm(engine, pcm, frames, 2, 0, &tone), SFX_ERROR_SOUND);
    CHECK(strstr(sfx_last_error(), "sample rate 0") != NULL, "the message does not name the rate");
    CHECK_STATUS(sfx_load_pcm(engine, pcm, frames, 2, 4000000000u, &tone), SFX_ERROR_SOUND);
    CHECK_STATUS(sfx_load_pcm(engine, pcm, frames, 2, rate, &tone), SFX_OK);
    free(pcm);
    CHECK(tone >= 65536, "a loaded sound's id is below 65536");
    play_and_wait(engine, tone, 0);

    size_t size;
    unsigned char *wav = wav_tone(44100, 4410, &size);
    sfx_sound memory = 0;
    CHECK_STATUS(sfx_load_memory(engine, wav, size, &memory), SFX_OK);
    free(wav);
    CHECK(memory > tone, "the sound from memory did not get a new id");
    play_and_wait(engine, memory, 0.5f);

    /* A looping voice, changed and stopped: SFX_STOPPED. */
    options = (sfx_play_options)SFX_PLAY_OPTIONS_DEFAULT;
    options.loops = -1;
    options.completion = on_complete;
    options.user_data = &user_data_tag;
    int stopped_before = atomic_load(&stopped);
    trigger();
    CHECK_STATUS(sfx_play(engine, tone, &options, &voice), SFX_OK);
    usleep(150 * 1000);
    CHECK_STATUS(sfx_voice_set_volume(engine, voice, 0.5f), SFX_OK);
    CHECK_STATUS(sfx_voice_set_volume(engine, voice, 17), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_voice_set_pan(engine, voice, -0.5f), SFX_OK);
    CHECK_STATUS(sfx_voice_set_pan(engine, voice, 2), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_group_set_gain(engine, SFX_GROUP_EFFECTS, 0.8f), SFX_OK);
    CHECK_STATUS(sfx_voice_stop(engine, voice, 60001), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_voice_stop(engine, voice, 10), SFX_OK);
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
    CHECK(atomic_load(&stopped) == stopped_before + 1, "the stopped loop did not complete with SFX_STOPPED");
    CHECK_STATUS(sfx_voice_stop(engine, voice, 10), SFX_OK);                 /* ended: nothing to do */
    CHECK_STATUS(sfx_voice_set_volume(engine, 987654321, 1), SFX_OK);       /* never a voice: nothing to do */

    /* A muted group plays silently, and its play still completes. */
    CHECK_STATUS(sfx_group_set_muted(engine, SFX_GROUP_MUSIC, 1), SFX_OK);
    usleep(20 * 1000);      /* a mute glides over 5 ms: play once it is silent */
    options = (sfx_play_options)SFX_PLAY_OPTIONS_DEFAULT;
    options.group = SFX_GROUP_MUSIC;
    options.completion = on_complete;
    options.user_data = &user_data_tag;
    int finished_before = atomic_load(&finished);
    CHECK_STATUS(sfx_play(engine, tock, &options, NULL), SFX_OK);
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
    CHECK(atomic_load(&finished) == finished_before + 1, "the muted play did not finish");

    CHECK_STATUS(sfx_dispose(engine, tone), SFX_OK);
    CHECK_STATUS(sfx_dispose(engine, tone), SFX_ERROR_SOUND);
    CHECK_STATUS(sfx_play(engine, tone, NULL, NULL), SFX_ERROR_SOUND);
    CHECK_STATUS(sfx_vibrate(engine, (const uint32_t[]){ 0 }, 1), SFX_ERROR_RANGE);

    CHECK(atomic_load(&wrong_user_data) == 0, "a completion got another user_data");
    CHECK(atomic_load(&rejected) == 0 && atomic_load(&stolen) == 0, "a play was rejected or stolen");
    CHECK(atomic_load(&completions) == 7, "not one completion per accepted play");
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);

    /* An alert plays when not muted; muted, it vibrates (the test's settings name a command). */
    set_mute_flag(0);
    unsigned heard = 99;
    int finished_alerts = atomic_load(&finished);
    trigger();
    CHECK_STATUS(sfx_alert(engine, tock, 1, on_complete, &user_data_tag, &heard, &voice), SFX_OK);
    CHECK(heard == SFX_ALERT_PLAYED, "the alert was not (only) played");
    CHECK(voice != 0, "the alert gave no voice");
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
    CHECK(atomic_load(&finished) == finished_alerts + 1, "the alert's completion did not say SFX_FINISHED");
    usleep(60 * 1000);
    set_mute_flag(1);
    int completions_before = atomic_load(&completions);
    CHECK_STATUS(sfx_alert(engine, tock, 1, on_complete, &user_data_tag, &heard, &voice), SFX_OK);
    CHECK(heard == SFX_ALERT_VIBRATED, "the muted alert did not vibrate instead");
    CHECK(voice == 0, "the muted alert gave a voice");
    CHECK(atomic_load(&completions) == completions_before, "the muted alert called the completion");
    wait_for_vibrations(1);
    set_mute_flag(0);
    CHECK_STATUS(sfx_alert(engine, tock, 17, NULL, NULL, &heard, NULL), SFX_ERROR_RANGE);
    CHECK_STATUS(sfx_vibrate(engine, (const uint32_t[]){ 30, 20, 30 }, 3), SFX_OK);
    wait_for_vibrations(2);
    CHECK_STATUS(sfx_vibrate_cancel(engine), SFX_OK);

    /* Many threads at once, and a completion that plays again: every play completes once. */
    shared_engine = engine;
    shared_sound = tock;
    completions_before = atomic_load(&completions);
    pthread_t workers[threads];
    for (int i = 0; i < threads; i++) pthread_create(&workers[i], NULL, play_many, NULL);
    for (int i = 0; i < threads; i++) pthread_join(workers[i], NULL);
    options = (sfx_play_options)SFX_PLAY_OPTIONS_DEFAULT;
    options.volume = 0;
    options.completion = replay_once;
    options.user_data = &shared_sound;
    CHECK_STATUS(sfx_play(engine, tock, &options, NULL), SFX_OK);
    CHECK_STATUS(sfx_wait_idle(engine, 20000), SFX_OK);
    CHECK(atomic_load(&thread_failures) == 0, "a play from a thread or a completion failed");
    CHECK(atomic_load(&completions) == completions_before + threads * plays_per_thread, "not one completion per play from the threads");
    CHECK(atomic_load(&replayed) == 2, "the play made from a completion did not complete");

    /* Use after close: errors, not crashes. */
    CHECK_STATUS(sfx_close(engine), SFX_OK);
    CHECK_STATUS(sfx_play(engine, tock, NULL, NULL), SFX_ERROR_CLOSED);
    CHECK(strstr(sfx_last_error(), "closed") != NULL, "the message does not say the engine is closed");
    CHECK_STATUS(sfx_system_sound(engine, "tock", &tock), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_voice_stop(engine, voice, 0), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_group_set_muted(engine, 0, 0), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_alert(engine, tock, 1, NULL, NULL, NULL, NULL), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_wait_idle(engine, 10), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_close(engine), SFX_ERROR_CLOSED);
    printf("ok\n");
    return 0;
}
