/*
 * openalworld.c — OpenAL Soft's pure mixing cost for sound in a game world, beside sfx's
 * (Bench/Sources/SFXBench/World.swift renders the same scene through sfx's Mixer).
 *
 *   openalworld --feature positional|lowpass|hrtf|reverb|nodoppler --voices K --seconds T [--block FRAMES]
 *
 * Renders through a loopback device (ALC_SOFT_loopback: 48 kHz stereo float, no audio device,
 * no mixing thread), so what is measured is the mixer alone, on this thread. K sources loop the
 * probes' one-second 220 + 331 Hz tone at gain 1/K, each in the world (not relative, OpenAL's
 * default inverse clamped distance, reference distance 1, doppler factor 1, speed of sound
 * 343.3), each moving on its own circle (world_path below, the same in World.swift), its position
 * and velocity set every block (10 ms at the default 480 frames) inside alDeferUpdatesSOFT /
 * alProcessUpdatesSOFT, as a game batches its updates. The features:
 *   positional  the above;
 *   lowpass     and an EFX AL_FILTER_LOWPASS direct filter on each source (gain 1, gain HF 0.25);
 *   hrtf        and ALC_HRTF_SOFT on (OpenAL Soft's default HRTF; every other row asks it off);
 *   reverb      and one auxiliary effect slot holding EFX_REVERB_PRESET_CONCERTHALL (as
 *               AL_EFFECT_EAXREVERB), each source's send 0 to it;
 *   nodoppler   positional with alDopplerFactor(0) (a reference: every source at pitch 1).
 * A quarter second is rendered first (untimed), then T seconds, timed with the thread's
 * CLOCK_THREAD_CPUTIME_ID. Prints one line on stdout:
 *   cpu <thread CPU ns> <audio ns> hrtf <ALC_HRTF_SOFT 0|1> <ALC_HRTF_SPECIFIER_SOFT or ->
 * The source limit comes from the file named by ALSOFT_CONF (`sources = 4200`), which sfx-bench
 * writes, with `resampler = linear` (sfx's interpolation).
 */
#define _GNU_SOURCE
#define AL_ALEXT_PROTOTYPES
#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
#include <AL/efx.h>
#include <AL/efx-presets.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RATE = 48000, LOOP_FRAMES = 48000 };

/* Voice i's place and velocity at t seconds: a circle of radius 1.5–3.5 m about a centre 3–6 m
 * from the listener (at the origin, facing −z), travelled at 4–16 m/s, so that its distance and
 * its speed towards the listener (doppler) change all the time. World.swift's worldPath is the
 * same formula. */
static void world_path(int i, double t, float position[3], float velocity[3]) {
    double d = 3 + i % 4, phi = i * 0.7;
    double r = 1.5 + (i % 5) * 0.5, speed = 4 + (i % 5) * 3;
    double w = (i % 2 ? -1 : 1) * speed / r, theta = i * 2.399963 + w * t;
    double cx = d * cos(phi), cz = -d * sin(phi), y = (i % 3 - 1) * 0.5;
    position[0] = (float)(cx + r * cos(theta));
    position[1] = (float)y;
    position[2] = (float)(cz + r * sin(theta));
    velocity[0] = (float)(-r * w * sin(theta));
    velocity[1] = 0;
    velocity[2] = (float)(r * w * cos(theta));
}

static uint64_t thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int fail(const char *what) {
    fprintf(stderr, "openalworld: cannot %s (AL error 0x%x); check OpenAL Soft (libopenal1) and ALSOFT_CONF\n", what, alGetError());
    return 1;
}

static int usage(const char *problem) {
    fprintf(stderr, "openalworld: %s; usage: openalworld --feature positional|lowpass|hrtf|reverb|nodoppler --voices K --seconds T [--block FRAMES]\n", problem);
    return 2;
}

static void set_reverb(ALuint effect) {
    EFXEAXREVERBPROPERTIES p = EFX_REVERB_PRESET_CONCERTHALL;
    alEffecti(effect, AL_EFFECT_TYPE, AL_EFFECT_EAXREVERB);
    alEffectf(effect, AL_EAXREVERB_DENSITY, p.flDensity);
    alEffectf(effect, AL_EAXREVERB_DIFFUSION, p.flDiffusion);
    alEffectf(effect, AL_EAXREVERB_GAIN, p.flGain);
    alEffectf(effect, AL_EAXREVERB_GAINHF, p.flGainHF);
    alEffectf(effect, AL_EAXREVERB_GAINLF, p.flGainLF);
    alEffectf(effect, AL_EAXREVERB_DECAY_TIME, p.flDecayTime);
    alEffectf(effect, AL_EAXREVERB_DECAY_HFRATIO, p.flDecayHFRatio);
    alEffectf(effect, AL_EAXREVERB_DECAY_LFRATIO, p.flDecayLFRatio);
    alEffectf(effect, AL_EAXREVERB_REFLECTIONS_GAIN, p.flReflectionsGain);
    alEffectf(effect, AL_EAXREVERB_REFLECTIONS_DELAY, p.flReflectionsDelay);
    alEffectfv(effect, AL_EAXREVERB_REFLECTIONS_PAN, p.flReflectionsPan);
    alEffectf(effect, AL_EAXREVERB_LATE_REVERB_GAIN, p.flLateReverbGain);
    alEffectf(effect, AL_EAXREVERB_LATE_REVERB_DELAY, p.flLateReverbDelay);
    alEffectfv(effect, AL_EAXREVERB_LATE_REVERB_PAN, p.flLateReverbPan);
    alEffectf(effect, AL_EAXREVERB_ECHO_TIME, p.flEchoTime);
    alEffectf(effect, AL_EAXREVERB_ECHO_DEPTH, p.flEchoDepth);
    alEffectf(effect, AL_EAXREVERB_MODULATION_TIME, p.flModulationTime);
    alEffectf(effect, AL_EAXREVERB_MODULATION_DEPTH, p.flModulationDepth);
    alEffectf(effect, AL_EAXREVERB_AIR_ABSORPTION_GAINHF, p.flAirAbsorptionGainHF);
    alEffectf(effect, AL_EAXREVERB_HFREFERENCE, p.flHFReference);
    alEffectf(effect, AL_EAXREVERB_LFREFERENCE, p.flLFReference);
    alEffectf(effect, AL_EAXREVERB_ROOM_ROLLOFF_FACTOR, p.flRoomRolloffFactor);
    alEffecti(effect, AL_EAXREVERB_DECAY_HFLIMIT, p.iDecayHFLimit);
}

int main(int argc, char **argv) {
    const char *feature = NULL;
    int voices = 0, block = 480;
    double seconds = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage("an option is missing its value");
        if (!strcmp(argv[i], "--feature")) feature = argv[++i];
        else if (!strcmp(argv[i], "--voices")) voices = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--block")) block = atoi(argv[++i]);
        else return usage("unknown option");
    }
    if (!feature || voices <= 0 || seconds <= 0 || block <= 0 || block > 4096) return usage("--feature, --voices and --seconds are needed");
    int lowpass = !strcmp(feature, "lowpass"), hrtf = !strcmp(feature, "hrtf"), reverb = !strcmp(feature, "reverb");
    int nodoppler = !strcmp(feature, "nodoppler");
    if (!lowpass && !hrtf && !reverb && !nodoppler && strcmp(feature, "positional")) return usage("unknown feature");

    ALCdevice *device = alcLoopbackOpenDeviceSOFT(NULL);
    if (!device) return fail("open a loopback device (ALC_SOFT_loopback)");
    if (!alcIsRenderFormatSupportedSOFT(device, RATE, ALC_STEREO_SOFT, ALC_FLOAT_SOFT)) return fail("render 48 kHz stereo float");
    ALCint attributes[] = {
        ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT, ALC_FREQUENCY, RATE,
        ALC_HRTF_SOFT, hrtf ? ALC_TRUE : ALC_FALSE, ALC_MONO_SOURCES, voices, ALC_STEREO_SOURCES, 0,
        ALC_MAX_AUXILIARY_SENDS, reverb ? 1 : 0, 0,
    };
    ALCcontext *context = alcCreateContext(device, attributes);
    if (!context || !alcMakeContextCurrent(context)) return fail("create a loopback context");
    ALCint hrtf_on = 0;
    alcGetIntegerv(device, ALC_HRTF_SOFT, 1, &hrtf_on);
    if (nodoppler) alDopplerFactor(0.0f);
    const ALCchar *hrtf_name = hrtf_on ? alcGetString(device, ALC_HRTF_SPECIFIER_SOFT) : NULL;
    if (hrtf && !hrtf_on) return fail("turn HRTF on (ALC_HRTF_SOFT); OpenAL Soft found no HRTF data");

    float *loop = malloc(LOOP_FRAMES * sizeof *loop);
    float *output = malloc((size_t)block * 2 * sizeof *output);
    ALuint *sources = calloc((size_t)voices, sizeof *sources);
    if (!loop || !output || !sources) return fail("allocate the buffers");
    for (int i = 0; i < LOOP_FRAMES; i++) {
        double t = (double)i / RATE;
        loop[i] = (float)(0.3 * sin(2 * M_PI * 220 * t) + 0.2 * sin(2 * M_PI * 331 * t));
    }
    ALuint buffer = 0;
    alGenBuffers(1, &buffer);
    alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, loop, LOOP_FRAMES * (ALsizei)sizeof *loop, RATE);
    if (alGetError() != AL_NO_ERROR) return fail("load the loop (AL_FORMAT_MONO_FLOAT32)");

    ALuint filter = 0, effect = 0, slot = 0;
    if (lowpass) {
        alGenFilters(1, &filter);
        alFilteri(filter, AL_FILTER_TYPE, AL_FILTER_LOWPASS);
        alFilterf(filter, AL_LOWPASS_GAIN, 1.0f);
        alFilterf(filter, AL_LOWPASS_GAINHF, 0.25f);
        if (alGetError() != AL_NO_ERROR) return fail("make an EFX low-pass filter");
    }
    if (reverb) {
        alGenEffects(1, &effect);
        set_reverb(effect);
        alGenAuxiliaryEffectSlots(1, &slot);
        alAuxiliaryEffectSloti(slot, AL_EFFECTSLOT_EFFECT, (ALint)effect);
        if (alGetError() != AL_NO_ERROR) return fail("make an EAX reverb effect slot");
    }

    alGenSources(voices, sources);
    if (alGetError() != AL_NO_ERROR) return fail("make that many sources (raise `sources` in ALSOFT_CONF)");
    for (int i = 0; i < voices; i++) {
        float p[3], v[3];
        world_path(i, 0, p, v);
        alSourcei(sources[i], AL_BUFFER, (ALint)buffer);
        alSourcei(sources[i], AL_LOOPING, AL_TRUE);
        alSourcef(sources[i], AL_GAIN, 1.0f / (float)voices);
        alSourcefv(sources[i], AL_POSITION, p);
        alSourcefv(sources[i], AL_VELOCITY, v);
        if (lowpass) alSourcei(sources[i], AL_DIRECT_FILTER, (ALint)filter);
        if (reverb) alSource3i(sources[i], AL_AUXILIARY_SEND_FILTER, (ALint)slot, 0, AL_FILTER_NULL);
    }
    alSourcePlayv(voices, sources);
    if (alGetError() != AL_NO_ERROR) return fail("start the sources");

    long frame = 0;
    uint64_t cpu = 0;
    long warm = RATE / 4, timed = (long)(seconds * RATE);
    for (int pass = 0; pass < 2; pass++) {
        long end = frame + (pass == 0 ? warm : timed);
        uint64_t start = thread_cpu_ns();
        while (frame < end) {
            int frames = end - frame < block ? (int)(end - frame) : block;
            double t = (double)frame / RATE;
            alDeferUpdatesSOFT();
            for (int i = 0; i < voices; i++) {
                float p[3], v[3];
                world_path(i, t, p, v);
                alSourcefv(sources[i], AL_POSITION, p);
                alSourcefv(sources[i], AL_VELOCITY, v);
            }
            alProcessUpdatesSOFT();
            alcRenderSamplesSOFT(device, output, frames);
            frame += frames;
        }
        if (pass == 1) cpu = thread_cpu_ns() - start;
    }
    int playing = 0;
    for (int i = 0; i < voices; i++) {
        ALint state = 0;
        alGetSourcei(sources[i], AL_SOURCE_STATE, &state);
        playing += state == AL_PLAYING;
    }
    if (alGetError() != AL_NO_ERROR) return fail("render");
    if (playing != voices) {
        fprintf(stderr, "openalworld: %d of %d sources playing at the end\n", playing, voices);
        return 1;
    }
    printf("cpu %llu %llu hrtf %d %s\n", (unsigned long long)cpu, (unsigned long long)(timed * 1000000000ull / RATE),
           hrtf_on, hrtf_name ? hrtf_name : "-");

    alDeleteSources(voices, sources);
    alDeleteBuffers(1, &buffer);
    if (filter) alDeleteFilters(1, &filter);
    if (slot) alDeleteAuxiliaryEffectSlots(1, &slot);
    if (effect) alDeleteEffects(1, &effect);
    alcMakeContextCurrent(NULL);
    alcDestroyContext(context);
    alcCloseDevice(device);
    free(sources);
    free(output);
    free(loop);
    return 0;
}
