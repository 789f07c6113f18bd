#ifndef SFX_VOICE_H
#define SFX_VOICE_H

#include <stdint.h>
#include <stddef.h>

/* speexdsp's preprocessor on demand (sfx_voice.c): noise suppression and automatic gain for one
 * channel of a recording, a frame (10 ms) at a time. libspeexdsp.so.1 is loaded at the first
 * sfx_voice_open, not linked: only recordings with voice processing need it. */

typedef struct sfx_voice sfx_voice;

/* One channel's state at `sample_rate` for frames of `frame_size` samples (speexdsp takes any
 * rate and size; sfx gives 10 ms). `suppress_db` is the most noise is attenuated (a negative
 * number of dB, 0: no suppression). With `agc`, the gain moves toward `agc_level` (speexdsp's
 * loudness target, 1 … 32768) by at most `agc_max_gain_db`. NULL with the line in `error`
 * when libspeexdsp cannot be loaded or the state cannot be made. */
sfx_voice *sfx_voice_open(int sample_rate, int frame_size, int suppress_db, int agc, float agc_level,
                          int agc_max_gain_db, char *error, size_t error_size);

/* Processes one frame in place; the output lags the input by one frame (speexdsp's overlap-add). */
void sfx_voice_run(sfx_voice *voice, int16_t *frame);

void sfx_voice_close(sfx_voice *voice);

/* NULL when libspeexdsp is loaded (or loads now), else the one line that says what to install. */
const char *sfx_voice_library_error(void);

#endif
