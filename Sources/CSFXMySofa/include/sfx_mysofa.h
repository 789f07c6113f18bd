#ifndef SFX_MYSOFA_H
#define SFX_MYSOFA_H

#include <stddef.h>

/* libmysofa on demand (sfx_mysofa.c): a SOFA file's head-related impulse responses, resampled
 * to the caller's rate, looked up (and interpolated between measurements) by direction.
 * libmysofa.so.1 is loaded at the first sfx_mysofa_open, not linked. */

typedef struct sfx_mysofa sfx_mysofa;

/* What sfx_mysofa_open can fail on. */
enum {
    SFX_MYSOFA_OK = 0,
    SFX_MYSOFA_LIBRARY_MISSING,  /* libmysofa cannot be loaded: error holds libmysofa1's line */
    SFX_MYSOFA_NOT_SOFA,         /* not a SOFA (HDF5) file, or one libmysofa cannot read */
    SFX_MYSOFA_WRONG_SHAPE,      /* a SOFA file, but not HRIRs for two ears on a direction grid */
    SFX_MYSOFA_READ_ERROR,       /* the file could not be read (errno in error's words) */
    SFX_MYSOFA_NO_MEMORY,
};

/* Opens `path` at `sample_rate` (libmysofa resamples and normalises the loudness of the frontal
 * direction to 1). NULL on failure, with one of the SFX_MYSOFA_ values in *status and libmysofa's
 * words (no file name) in `error`. */
sfx_mysofa *sfx_mysofa_open(const char *path, int sample_rate, int *status, char *error, size_t error_size);

/* Taps per ear of the filters sfx_mysofa_filter writes; the number of measurements in the file. */
int sfx_mysofa_filter_length(const sfx_mysofa *sofa);
int sfx_mysofa_measurements(const sfx_mysofa *sofa);

/* The lowest and highest elevation of the file's measurements, in degrees (up from the horizontal
 * plane). */
void sfx_mysofa_elevation_range(const sfx_mysofa *sofa, float *lowest, float *highest);

/* The filter toward (x, y, z) in SOFA's coordinates (x forward, y left, z up; any length > 0),
 * interpolated between the nearest measurements: filter_length taps per ear, and each ear's
 * delay from the file's Data.Delay, in frames at the sample rate. Not thread-safe for one sofa. */
void sfx_mysofa_filter(sfx_mysofa *sofa, float x, float y, float z, float *left, float *right,
                       float *left_delay_frames, float *right_delay_frames);

void sfx_mysofa_close(sfx_mysofa *sofa);

/* NULL when libmysofa is loaded (or loads now), else the one line that says what to install. */
const char *sfx_mysofa_library_error(void);

#endif
