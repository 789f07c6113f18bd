/*
 * speexdsp's preprocessor on demand: only a recording with voice processing uses it, so
 * libspeexdsp.so.1 is loaded at the first open through sfx_on_demand.h instead of being linked
 * into every program that holds SFXRecording (checked against speex_preprocess.h:
 * libspeexdsp-dev, in script/common.sh).
 *
 * speexdsp's own voice activity detector is not used: in 1.2 it is a placeholder that prints
 * "The VAD has been replaced by a hack" to stderr when enabled, and calls nearly every frame of
 * noise speech (SPEEX_PREPROCESS_SET_VAD prints that line even to turn it off, so it is never
 * called). The recorder detects speech itself, on the denoised frames (VoiceActivity.swift).
 */
#include <stdlib.h>
#include <string.h>

/* Before the library's header, whose declarations are made hidden: the C library's must not be. */
#include "sfx_on_demand.h"

#pragma GCC visibility push(hidden)
#include <speex/speex_preprocess.h>
#pragma GCC visibility pop

#include "sfx_voice.h"

#define SFX_VOICE_FUNCTIONS(X) X(speex_preprocess_state_init) X(speex_preprocess_state_destroy) \
    X(speex_preprocess_run) X(speex_preprocess_ctl)

static struct { SFX_VOICE_FUNCTIONS(SFX_ON_DEMAND_FIELD) } real;
static sfx_on_demand speex_loader = {
    .sonames = {"libspeexdsp.so.1"}, .functions = {SFX_VOICE_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(real),
    .purpose = " for voice processing", .install = "install libspeexdsp1 (apt-get install libspeexdsp1)",
    .upgrade = "install libspeexdsp1 1.2 or newer",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

struct sfx_voice {
    SpeexPreprocessState *state;
};

const char *sfx_voice_library_error(void) { return sfx_on_demand_error(&speex_loader); }

sfx_voice *sfx_voice_open(int sample_rate, int frame_size, int suppress_db, int agc, float agc_level,
                          int agc_max_gain_db, char *error, size_t error_size)
{
    if (error_size > 0)
        error[0] = '\0';
    const char *missing = sfx_on_demand_error(&speex_loader);
    if (missing) {
        snprintf(error, error_size, "%s", missing);
        return NULL;
    }
    sfx_voice *voice = calloc(1, sizeof *voice);
    if (!voice || !(voice->state = real.speex_preprocess_state_init(frame_size, sample_rate))) {
        free(voice);
        snprintf(error, error_size, "speexdsp cannot make a preprocessor for %d-sample frames at %d Hz", frame_size, sample_rate);
        return NULL;
    }
    int denoise = suppress_db < 0, on = agc ? 1 : 0;
    real.speex_preprocess_ctl(voice->state, SPEEX_PREPROCESS_SET_DENOISE, &denoise);
    if (denoise)
        real.speex_preprocess_ctl(voice->state, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &suppress_db);
    real.speex_preprocess_ctl(voice->state, SPEEX_PREPROCESS_SET_AGC, &on);
    if (agc) {
        /* Debian's speexdsp is the floating-point build: the level is a float. */
        real.speex_preprocess_ctl(voice->state, SPEEX_PREPROCESS_SET_AGC_LEVEL, &agc_level);
        real.speex_preprocess_ctl(voice->state, SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, &agc_max_gain_db);
    }
    return voice;
}

void sfx_voice_run(sfx_voice *voice, int16_t *frame)
{
    real.speex_preprocess_run(voice->state, frame);
}

void sfx_voice_close(sfx_voice *voice)
{
    if (!voice)
        return;
    real.speex_preprocess_state_destroy(voice->state);
    free(voice);
}
