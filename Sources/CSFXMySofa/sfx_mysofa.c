/*
 * libmysofa on demand: only a program that renders binaural sound reads a SOFA file, so
 * libmysofa.so.1 (and the HDF5 reader inside it, with zlib) is loaded at the first open through
 * sfx_on_demand.h instead of being linked into every program that holds SFXMedia.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Before the library's header, whose declarations are made hidden: the C library's must not be. */
#include "sfx_on_demand.h"

#pragma GCC visibility push(hidden)
#include <mysofa.h>
#pragma GCC visibility pop

#include "sfx_mysofa.h"

#define SFX_MYSOFA_FUNCTIONS(X) X(mysofa_open) X(mysofa_getfilter_float) X(mysofa_close)

static struct { SFX_MYSOFA_FUNCTIONS(SFX_ON_DEMAND_FIELD) } real;
static sfx_on_demand mysofa_loader = {
    .sonames = {"libmysofa.so.1"}, .functions = {SFX_MYSOFA_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(real),
    .purpose = " for HRTF (SOFA files)", .install = "install libmysofa1 (apt-get install libmysofa1)",
    .upgrade = "install libmysofa1 0.6 or newer",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

struct sfx_mysofa {
    struct MYSOFA_EASY *easy;
    int filter_length;
    float sample_rate;
};

const char *sfx_mysofa_library_error(void) { return sfx_on_demand_error(&mysofa_loader); }

static const char *describe(int err)
{
    switch (err) {
    case MYSOFA_INVALID_FORMAT: return "not a SOFA (HDF5) file";
    case MYSOFA_UNSUPPORTED_FORMAT: return "a SOFA layout libmysofa does not read";
    case MYSOFA_NO_MEMORY: return "out of memory";
    case MYSOFA_READ_ERROR: return "read error";
    case MYSOFA_INVALID_ATTRIBUTES: return "its attributes are not those of SimpleFreeFieldHRIR";
    case MYSOFA_INVALID_DIMENSIONS: return "its dimensions are not those of HRIRs";
    case MYSOFA_INVALID_DIMENSION_LIST: return "its dimension list is invalid";
    case MYSOFA_INVALID_COORDINATE_TYPE: return "its coordinates are neither cartesian nor spherical";
    case MYSOFA_ONLY_EMITTER_WITH_ECI_SUPPORTED: return "it has more than one emitter per measurement";
    case MYSOFA_ONLY_DELAYS_WITH_IR_OR_MR_SUPPORTED: return "its delays are not per measurement or receiver";
    case MYSOFA_ONLY_THE_SAME_SAMPLING_RATE_SUPPORTED: return "it has more than one sample rate";
    case MYSOFA_RECEIVERS_WITH_RCI_SUPPORTED: return "its receivers are not one per ear";
    case MYSOFA_RECEIVERS_WITH_CARTESIAN_SUPPORTED: return "its receiver positions are not cartesian";
    case MYSOFA_INVALID_RECEIVER_POSITIONS: return "its receivers are not two ears on the y axis";
    case MYSOFA_ONLY_SOURCES_WITH_MC_SUPPORTED: return "its source positions are not one per measurement";
    default: return "libmysofa cannot read it";
    }
}

static int status_of(int err)
{
    switch (err) {
    case MYSOFA_INVALID_FORMAT: return SFX_MYSOFA_NOT_SOFA;
    case MYSOFA_NO_MEMORY: return SFX_MYSOFA_NO_MEMORY;
    case MYSOFA_READ_ERROR: return SFX_MYSOFA_READ_ERROR;
    default: return SFX_MYSOFA_WRONG_SHAPE;
    }
}

sfx_mysofa *sfx_mysofa_open(const char *path, int sample_rate, int *status, char *error, size_t error_size)
{
    if (error_size > 0)
        error[0] = '\0';
    const char *missing = sfx_on_demand_error(&mysofa_loader);
    if (missing) {
        snprintf(error, error_size, "%s", missing);
        *status = SFX_MYSOFA_LIBRARY_MISSING;
        return NULL;
    }
    sfx_mysofa *sofa = calloc(1, sizeof *sofa);
    if (!sofa) {
        snprintf(error, error_size, "out of memory");
        *status = SFX_MYSOFA_NO_MEMORY;
        return NULL;
    }
    int err = 0;
    errno = 0;
    sofa->easy = real.mysofa_open(path, (float)sample_rate, &sofa->filter_length, &err);
    if (!sofa->easy) {
        int saved = errno;
        free(sofa);
        if (err > 0 && err < MYSOFA_INVALID_FORMAT) {   /* libmysofa passes fopen's errno on */
            snprintf(error, error_size, "%s", strerror(err));
            *status = SFX_MYSOFA_READ_ERROR;
        } else {
            snprintf(error, error_size, "%s (libmysofa error %d%s%s)", describe(err), err,
                     saved && err == MYSOFA_READ_ERROR ? ": " : "", saved && err == MYSOFA_READ_ERROR ? strerror(saved) : "");
            *status = status_of(err);
        }
        return NULL;
    }
    const struct MYSOFA_HRTF *hrtf = sofa->easy->hrtf;
    if (hrtf->R != 2 || hrtf->M < 1 || sofa->filter_length < 1) {
        snprintf(error, error_size, "holds %u receivers, %u measurements of %d taps: HRTFs need two ears and at least one measurement",
                 hrtf->R, hrtf->M, sofa->filter_length);
        real.mysofa_close(sofa->easy);
        free(sofa);
        *status = SFX_MYSOFA_WRONG_SHAPE;
        return NULL;
    }
    sofa->sample_rate = (float)sample_rate;
    *status = SFX_MYSOFA_OK;
    return sofa;
}

int sfx_mysofa_filter_length(const sfx_mysofa *sofa) { return sofa->filter_length; }

int sfx_mysofa_measurements(const sfx_mysofa *sofa) { return (int)sofa->easy->hrtf->M; }

void sfx_mysofa_elevation_range(const sfx_mysofa *sofa, float *lowest, float *highest)
{
    /* mysofa_open leaves SourcePosition cartesian (x, y, z per measurement). */
    const struct MYSOFA_HRTF *hrtf = sofa->easy->hrtf;
    float low = 90, high = -90;
    for (unsigned m = 0; m < hrtf->M && 3 * m + 2 < hrtf->SourcePosition.elements; m++) {
        const float *p = hrtf->SourcePosition.values + 3 * m;
        float horizontal = sqrtf(p[0] * p[0] + p[1] * p[1]);
        if (horizontal == 0 && p[2] == 0)
            continue;
        float elevation = atan2f(p[2], horizontal) * 180.0f / (float)M_PI;
        low = fminf(low, elevation);
        high = fmaxf(high, elevation);
    }
    if (low > high)
        low = high = 0;
    *lowest = low;
    *highest = high;
}

void sfx_mysofa_filter(sfx_mysofa *sofa, float x, float y, float z, float *left, float *right,
                       float *left_delay_frames, float *right_delay_frames)
{
    float left_seconds = 0, right_seconds = 0;
    /* mysofa_getfilter_float gives delays in seconds (its _short sibling multiplies by the rate). */
    real.mysofa_getfilter_float(sofa->easy, x, y, z, left, right, &left_seconds, &right_seconds);
    *left_delay_frames = left_seconds * sofa->sample_rate;
    *right_delay_frames = right_seconds * sofa->sample_rate;
}

void sfx_mysofa_close(sfx_mysofa *sofa)
{
    if (!sofa)
        return;
    real.mysofa_close(sofa->easy);
    free(sofa);
}
