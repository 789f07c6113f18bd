/*
 * Renders scenes through OpenAL Soft's loopback device (ALC_SOFT_loopback: 48 kHz, stereo,
 * float, HRTF off) and prints, for each, the per-channel RMS of the output and the frequency it
 * measures, so that Tests/SFXCoreTests/OpenALReferenceTests.swift can compare sfx's spatial
 * audio with OpenAL Soft's own.
 *
 * Built by that test with /usr/bin/cc ... -lopenal -lm and run with ALSOFT_CONF pointing at the
 * alsoft.conf beside this file (no limiter, no dither, no HRTF: the output is a pure function of
 * the scene).
 *
 * Input: one scene a line on stdin, as key=value words (vectors as x,y,z); a key left out keeps
 * OpenAL's default. Every scene starts from a fresh source and a listener reset to its defaults.
 *   lp= lv= lat= lup= lgain=       listener position, velocity, "at", "up", gain
 *   sp= sv= sd= rel=0|1            source position, velocity, direction, AL_SOURCE_RELATIVE
 *   inner= outer= outergain=       AL_CONE_INNER_ANGLE, AL_CONE_OUTER_ANGLE, AL_CONE_OUTER_GAIN
 *   model=none|inverse|inverse-clamped|linear|linear-clamped|exponent|exponent-clamped
 *   ref= max= rolloff=             AL_REFERENCE_DISTANCE, AL_MAX_DISTANCE (FLT_MAX unless given),
 *                                  AL_ROLLOFF_FACTOR
 *   doppler= sos=                  AL_DOPPLER_FACTOR, AL_SPEED_OF_SOUND
 *   settle= frames=                frames rendered and dropped first (4800), frames measured (48000)
 * The source plays a looping mono 48 kHz float buffer: a 1 kHz sine of amplitude 0.5.
 *
 * Output: one line a scene, "rmsLeft rmsRight frequencyHz" (frequency 0 when silent), or a
 * line starting "error:" and exit status 1.
 */
#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE 48000
#define TONE 1000.0
#define BUFFER_FRAMES 4800 /* 100 whole periods of the tone: the loop is seamless */

static LPALCLOOPBACKOPENDEVICESOFT loopbackOpen;
static LPALCISRENDERFORMATSUPPORTEDSOFT renderFormatSupported;
static LPALCRENDERSAMPLESSOFT renderSamples;

static void fail(const char *what) {
    printf("error: %s\n", what);
    fflush(stdout);
    exit(1);
}

static int vector(const char *text, ALfloat v[3]) {
    return sscanf(text, "%f,%f,%f", &v[0], &v[1], &v[2]) == 3;
}

static ALenum model(const char *name) {
    static const struct { const char *name; ALenum value; } models[] = {
        {"none", AL_NONE}, {"inverse", AL_INVERSE_DISTANCE}, {"inverse-clamped", AL_INVERSE_DISTANCE_CLAMPED},
        {"linear", AL_LINEAR_DISTANCE}, {"linear-clamped", AL_LINEAR_DISTANCE_CLAMPED},
        {"exponent", AL_EXPONENT_DISTANCE}, {"exponent-clamped", AL_EXPONENT_DISTANCE_CLAMPED},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(name, models[i].name) == 0) return models[i].value;
    fail("unknown distance model");
    return AL_NONE;
}

/* The frequency of `channel` of interleaved stereo `samples`, from its rising zero crossings,
 * each placed between two samples by linear interpolation. */
static double frequency(const float *samples, int frames, int channel) {
    double first = -1, last = -1;
    long crossings = 0;
    for (int i = 1; i < frames; i++) {
        double a = samples[2 * (i - 1) + channel], b = samples[2 * i + channel];
        if (a < 0 && b >= 0) {
            double t = (i - 1) + a / (a - b);
            if (first < 0) first = t;
            last = t;
            crossings++;
        }
    }
    return crossings > 1 ? (crossings - 1) * (double)RATE / (last - first) : 0;
}

int main(void) {
    if (!alcIsExtensionPresent(NULL, "ALC_SOFT_loopback")) fail("no ALC_SOFT_loopback");
    loopbackOpen = (LPALCLOOPBACKOPENDEVICESOFT)alcGetProcAddress(NULL, "alcLoopbackOpenDeviceSOFT");
    renderFormatSupported = (LPALCISRENDERFORMATSUPPORTEDSOFT)alcGetProcAddress(NULL, "alcIsRenderFormatSupportedSOFT");
    renderSamples = (LPALCRENDERSAMPLESSOFT)alcGetProcAddress(NULL, "alcRenderSamplesSOFT");
    if (!loopbackOpen || !renderFormatSupported || !renderSamples) fail("no loopback functions");

    ALCdevice *device = loopbackOpen(NULL);
    if (!device) fail("alcLoopbackOpenDeviceSOFT failed");
    if (!renderFormatSupported(device, RATE, ALC_STEREO_SOFT, ALC_FLOAT_SOFT)) fail("48 kHz stereo float not supported");
    const ALCint attributes[] = {
        ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
        ALC_FREQUENCY, RATE, ALC_HRTF_SOFT, ALC_FALSE, 0,
    };
    ALCcontext *context = alcCreateContext(device, attributes);
    if (!context || !alcMakeContextCurrent(context)) fail("alcCreateContext failed");
    ALCint hrtf = 1;
    alcGetIntegerv(device, ALC_HRTF_SOFT, 1, &hrtf);
    if (hrtf) fail("HRTF is on");

    static float tone[BUFFER_FRAMES];
    for (int i = 0; i < BUFFER_FRAMES; i++) tone[i] = (float)(0.5 * sin(2 * M_PI * TONE * i / RATE));
    ALuint buffer;
    alGenBuffers(1, &buffer);
    alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, tone, sizeof tone, RATE);
    if (alGetError() != AL_NO_ERROR) fail("alBufferData failed");

    char line[4096];
    float *out = NULL;
    int capacity = 0;
    while (fgets(line, sizeof line, stdin)) {
        ALfloat lp[3] = {0, 0, 0}, lv[3] = {0, 0, 0}, orientation[6] = {0, 0, -1, 0, 1, 0}, lgain = 1;
        ALfloat sp[3] = {0, 0, 0}, sv[3] = {0, 0, 0}, sd[3] = {0, 0, 0};
        ALfloat inner = 360, outer = 360, outerGain = 0, ref = 1, max = FLT_MAX, rolloff = 1;
        ALfloat doppler = 1, sos = 343.3f;
        ALint relative = 0, settle = 4800, frames = 48000;
        ALenum distanceModel = AL_INVERSE_DISTANCE_CLAMPED;
        int words = 0;
        for (char *word = strtok(line, " \t\r\n"); word; word = strtok(NULL, " \t\r\n")) {
            char *value = strchr(word, '=');
            if (!value) fail("a word without =");
            *value++ = 0;
            int ok = 1;
            if (!strcmp(word, "lp")) ok = vector(value, lp);
            else if (!strcmp(word, "lv")) ok = vector(value, lv);
            else if (!strcmp(word, "lat")) ok = vector(value, orientation);
            else if (!strcmp(word, "lup")) ok = vector(value, orientation + 3);
            else if (!strcmp(word, "lgain")) lgain = strtof(value, NULL);
            else if (!strcmp(word, "sp")) ok = vector(value, sp);
            else if (!strcmp(word, "sv")) ok = vector(value, sv);
            else if (!strcmp(word, "sd")) ok = vector(value, sd);
            else if (!strcmp(word, "rel")) relative = atoi(value);
            else if (!strcmp(word, "inner")) inner = strtof(value, NULL);
            else if (!strcmp(word, "outer")) outer = strtof(value, NULL);
            else if (!strcmp(word, "outergain")) outerGain = strtof(value, NULL);
            else if (!strcmp(word, "model")) distanceModel = model(value);
            else if (!strcmp(word, "ref")) ref = strtof(value, NULL);
            else if (!strcmp(word, "max")) max = strtof(value, NULL);
            else if (!strcmp(word, "rolloff")) rolloff = strtof(value, NULL);
            else if (!strcmp(word, "doppler")) doppler = strtof(value, NULL);
            else if (!strcmp(word, "sos")) sos = strtof(value, NULL);
            else if (!strcmp(word, "settle")) settle = atoi(value);
            else if (!strcmp(word, "frames")) frames = atoi(value);
            else fail("unknown key");
            if (!ok) fail("a vector is not x,y,z");
            words++;
        }
        if (words == 0) continue;
        if (frames < 2 || settle < 0) fail("frames or settle out of range");
        int needed = frames > settle ? frames : settle;
        if (needed > capacity) {
            free(out);
            capacity = needed;
            out = malloc(sizeof(float) * 2 * (size_t)capacity);
            if (!out) fail("out of memory");
        }

        alDistanceModel(distanceModel);
        alDopplerFactor(doppler);
        alSpeedOfSound(sos);
        alListenerfv(AL_POSITION, lp);
        alListenerfv(AL_VELOCITY, lv);
        alListenerfv(AL_ORIENTATION, orientation);
        alListenerf(AL_GAIN, lgain);

        ALuint source;
        alGenSources(1, &source);
        alSourcei(source, AL_BUFFER, (ALint)buffer);
        alSourcei(source, AL_LOOPING, AL_TRUE);
        alSourcei(source, AL_SOURCE_RELATIVE, relative ? AL_TRUE : AL_FALSE);
        alSourcefv(source, AL_POSITION, sp);
        alSourcefv(source, AL_VELOCITY, sv);
        alSourcefv(source, AL_DIRECTION, sd);
        alSourcef(source, AL_CONE_INNER_ANGLE, inner);
        alSourcef(source, AL_CONE_OUTER_ANGLE, outer);
        alSourcef(source, AL_CONE_OUTER_GAIN, outerGain);
        alSourcef(source, AL_REFERENCE_DISTANCE, ref);
        alSourcef(source, AL_MAX_DISTANCE, max);
        alSourcef(source, AL_ROLLOFF_FACTOR, rolloff);
        if (alGetError() != AL_NO_ERROR) fail("a scene's value was refused");
        alSourcePlay(source);

        if (settle > 0) renderSamples(device, out, settle);
        renderSamples(device, out, frames);
        double sum[2] = {0, 0};
        for (int i = 0; i < frames; i++)
            for (int c = 0; c < 2; c++) sum[c] += (double)out[2 * i + c] * out[2 * i + c];
        double rms[2] = {sqrt(sum[0] / frames), sqrt(sum[1] / frames)};
        double hz = frequency(out, frames, rms[1] > rms[0] ? 1 : 0);
        printf("%.9g %.9g %.9g\n", rms[0], rms[1], rms[0] + rms[1] > 1e-7 ? hz : 0.0);
        fflush(stdout);

        alSourceStop(source);
        alDeleteSources(1, &source);
        if (alGetError() != AL_NO_ERROR) fail("OpenAL reported an error");
    }
    free(out);
    alcMakeContextCurrent(NULL);
    alcDestroyContext(context);
    alcCloseDevice(device);
    return 0;
}
