/*
 * openal.c — OpenAL Soft as a game uses it: one device, one context, a click buffer played on
 * the next free source of a small pool, and K sources looping one buffer for the voices mode.
 *
 * OpenAL Soft reads its period, periods, backend and source limit from the file named by
 * ALSOFT_CONF, which sfx-bench writes (drivers = alsa, device = the card); --period and --periods
 * are there, not here. The process takes SCHED_FIFO before the device opens, so OpenAL Soft's
 * mixing thread inherits it; the main thread, which triggers, then returns to SCHED_OTHER.
 */
#include "probe.h"

#include <AL/al.h>
#include <AL/alc.h>
#include <stdio.h>
#include <stdlib.h>

enum { CLICK_SOURCES = 4 };

static ALCdevice *device;
static ALCcontext *context;
static ALuint click_buffer, loop_buffer, click_sources[CLICK_SOURCES];
static ALuint *voices;
static int voice_count, next_click;

static int fail(const char *what) {
    fprintf(stderr, "openal: cannot %s (AL error 0x%x); check ALSOFT_CONF and the card\n", what, alGetError());
    return -1;
}

static ALuint make_buffer(float (*sample)(int), int frames) {
    short *data = malloc((size_t)frames * sizeof *data);
    if (!data) return 0;
    for (int i = 0; i < frames; i++) data[i] = (short)(sample(i) * 32767);
    ALuint buffer = 0;
    alGenBuffers(1, &buffer);
    alBufferData(buffer, AL_FORMAT_MONO16, data, frames * (int)sizeof *data, PROBE_RATE);
    free(data);
    return alGetError() == AL_NO_ERROR ? buffer : 0;
}

/* A source at the listener, so a mono buffer plays centred as in the other clients. */
static void centre(ALuint source) {
    alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE);
    alSource3f(source, AL_POSITION, 0, 0, 0);
}

static int openal_open(const struct probe_options *o) {
    probe_set_fifo(o->priority);
    device = alcOpenDevice(NULL);
    if (!device) { fprintf(stderr, "openal: cannot open the default device; check ALSOFT_CONF (drivers = alsa) and the card\n"); return -1; }
    ALCint attributes[] = { ALC_FREQUENCY, PROBE_RATE, ALC_MONO_SOURCES, o->voices + CLICK_SOURCES, 0 };
    context = alcCreateContext(device, attributes);
    if (!context || !alcMakeContextCurrent(context)) return fail("create a context");
    probe_set_fifo(0);
    click_buffer = make_buffer(probe_click_sample, PROBE_CLICK_FRAMES);
    loop_buffer = make_buffer(probe_loop_sample, PROBE_LOOP_FRAMES);
    if (!click_buffer || !loop_buffer) return fail("load the sounds");
    alGenSources(CLICK_SOURCES, click_sources);
    for (int i = 0; i < CLICK_SOURCES; i++) {
        centre(click_sources[i]);
        alSourcei(click_sources[i], AL_BUFFER, (ALint)click_buffer);
    }
    return alGetError() == AL_NO_ERROR ? 0 : fail("make the click sources");
}

static void openal_trigger(void) {
    alSourcePlay(click_sources[next_click++ % CLICK_SOURCES]);
}

static int openal_voices(int count, float gain) {
    voices = calloc((size_t)count, sizeof *voices);
    if (!voices) return fail("allocate the voices");
    alGenSources(count, voices);
    if (alGetError() != AL_NO_ERROR) return fail("make that many sources (raise `sources` in ALSOFT_CONF)");
    voice_count = count;
    for (int i = 0; i < count; i++) {
        centre(voices[i]);
        alSourcei(voices[i], AL_BUFFER, (ALint)loop_buffer);
        alSourcei(voices[i], AL_LOOPING, AL_TRUE);
        alSourcef(voices[i], AL_GAIN, gain);
    }
    alSourcePlayv(count, voices);
    return alGetError() == AL_NO_ERROR ? 0 : fail("start the voices");
}

static void openal_close(void) {
    if (voice_count) alDeleteSources(voice_count, voices);
    free(voices);
    alDeleteSources(CLICK_SOURCES, click_sources);
    alDeleteBuffers(1, &click_buffer);
    alDeleteBuffers(1, &loop_buffer);
    alcMakeContextCurrent(NULL);
    alcDestroyContext(context);
    alcCloseDevice(device);
}

int main(int argc, char **argv) {
    static const struct probe_client client = { "openal", openal_open, openal_trigger, openal_voices, openal_close };
    return probe_main(argc, argv, &client);
}
