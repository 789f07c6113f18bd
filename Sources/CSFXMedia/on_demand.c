/*
 * libsndfile (decoding, encoding), libsoxr (resampling) and libebur128 (loudness) on demand.
 * Linked, they load at every start of `sfx` (libsndfile with FLAC, Vorbis, Opus, MPEG and LAME;
 * libsoxr with OpenMP's libgomp), about 1 ms before the first line runs, while most commands
 * never resample or measure loudness, and one that decodes can load libsndfile on a second
 * thread while it starts (sfx_media_preload). So the functions sfx calls are defined here,
 * hidden in sfx's own image: each goes through a pointer that the first call fills (dlopen,
 * dlsym). Without the library a call fails as the library reports failure (an error text naming
 * what to install; no file, no state). Package.swift declares CSndFile, CSoxr and CEBUR128
 * without pkg-config and their module maps link nothing, so none is a dependency of the program.
 * Add a function here before calling a new one from Swift.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Before the libraries' headers, whose declarations are made hidden: the C library's must not be. */
#include "sfx_on_demand.h"

#pragma GCC visibility push(hidden)
#include <ebur128.h>
#include <sndfile.h>
#include <soxr.h>
#pragma GCC visibility pop
#include <unistd.h>

#include "csfxmedia.h"

/* ---- libsndfile ---- */

#define SNDFILE_FUNCTIONS(X) \
    X(sf_close) X(sf_command) X(sf_error) X(sf_format_check) X(sf_open) X(sf_open_fd) X(sf_open_virtual) X(sf_readf_float) \
    X(sf_seek) X(sf_strerror) X(sf_writef_float)

static struct { SNDFILE_FUNCTIONS(SFX_ON_DEMAND_FIELD) } sndfile_library;

/* Global, because mpg123_quiet.c's mpg123_new finds libmpg123's (under libsndfile) with
 * RTLD_NEXT, which searches the program's libraries alone. Lazy: binding every symbol of
 * libsndfile and its seven codec libraries at load is most of its load time, on the path of
 * `sfx play tock` (which calls a handful of them); Debian's shlibs keep the codecs' versions
 * matched, so a symbol missing at its first call cannot happen on an installed system. */
static sfx_on_demand sndfile_loader = {
    .sonames = {"libsndfile.so.1"}, .global = 1, .lazy = 1, .functions = {SNDFILE_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(sndfile_library),
    .install = "install Debian's libsndfile1", .upgrade = "install Debian's libsndfile1",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static int sndfile_library_ready(void) { return sfx_on_demand_ready(&sndfile_loader); }

static void *preload(void *unused)
{
    (void)unused;
    sndfile_library_ready();
    return NULL;
}

void sfx_media_preload(void)
{
    static atomic_flag started = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&started))
        return;
    pthread_t thread;
    if (pthread_create(&thread, NULL, preload, NULL) == 0)
        pthread_detach(thread);   /* no thread: the first decode loads it */
}

/* Without the library no file opens, and sf_strerror(NULL) says why. */
SNDFILE *sf_open(const char *path, int mode, SF_INFO *info)
{
    return sndfile_library_ready() ? sndfile_library.sf_open(path, mode, info) : NULL;
}

SNDFILE *sf_open_fd(int fd, int mode, SF_INFO *info, int close_descriptor)
{
    if (sndfile_library_ready())
        return sndfile_library.sf_open_fd(fd, mode, info, close_descriptor);
    if (close_descriptor)
        close(fd);
    return NULL;
}

SNDFILE *sf_open_virtual(SF_VIRTUAL_IO *io, int mode, SF_INFO *info, void *user_data)
{
    return sndfile_library_ready() ? sndfile_library.sf_open_virtual(io, mode, info, user_data) : NULL;
}

const char *sf_strerror(SNDFILE *file)
{
    return sndfile_library_ready() ? sndfile_library.sf_strerror(file) : sfx_on_demand_error(&sndfile_loader);
}

int sf_error(SNDFILE *file) { return sndfile_library_ready() ? sndfile_library.sf_error(file) : SF_ERR_SYSTEM; }

int sf_format_check(const SF_INFO *info) { return sndfile_library_ready() ? sndfile_library.sf_format_check(info) : 0; }

/* Commands without a file (format information) need the library too; the others are only ever
 * called with a file, so it is loaded by then. */
int sf_command(SNDFILE *file, int command, void *data, int size)
{
    return sndfile_library_ready() ? sndfile_library.sf_command(file, command, data, size) : SF_ERR_SYSTEM;
}

int sf_close(SNDFILE *file) { return sndfile_library.sf_close(file); }

sf_count_t sf_readf_float(SNDFILE *file, float *frames, sf_count_t count) { return sndfile_library.sf_readf_float(file, frames, count); }

sf_count_t sf_writef_float(SNDFILE *file, const float *frames, sf_count_t count)
{
    return sndfile_library.sf_writef_float(file, frames, count);
}

sf_count_t sf_seek(SNDFILE *file, sf_count_t frames, int whence) { return sndfile_library.sf_seek(file, frames, whence); }

/* ---- libsoxr ---- */

#define SOXR_FUNCTIONS(X) X(soxr_create) X(soxr_delete) X(soxr_io_spec) X(soxr_process) X(soxr_quality_spec)

static struct { SOXR_FUNCTIONS(SFX_ON_DEMAND_FIELD) } soxr_library;
static sfx_on_demand soxr_loader = {
    .sonames = {"libsoxr.so.0"}, .functions = {SOXR_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(soxr_library),
    .install = "install Debian's libsoxr0", .upgrade = "install Debian's libsoxr0",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static int soxr_library_ready(void) { return sfx_on_demand_ready(&soxr_loader); }

soxr_t soxr_create(double input_rate, double output_rate, unsigned channels, soxr_error_t *error,
                   soxr_io_spec_t const *io, soxr_quality_spec_t const *quality, soxr_runtime_spec_t const *runtime)
{
    if (!soxr_library_ready()) {
        if (error) *error = sfx_on_demand_error(&soxr_loader);
        return NULL;
    }
    return soxr_library.soxr_create(input_rate, output_rate, channels, error, io, quality, runtime);
}

void soxr_delete(soxr_t resampler)
{
    if (soxr_library_ready()) soxr_library.soxr_delete(resampler);
}

/* Called before soxr_create, which then reports a missing library; zero specs until then. */
soxr_io_spec_t soxr_io_spec(soxr_datatype_t input, soxr_datatype_t output)
{
    soxr_io_spec_t none;
    memset(&none, 0, sizeof none);
    return soxr_library_ready() ? soxr_library.soxr_io_spec(input, output) : none;
}

soxr_quality_spec_t soxr_quality_spec(unsigned long recipe, unsigned long flags)
{
    soxr_quality_spec_t none;
    memset(&none, 0, sizeof none);
    return soxr_library_ready() ? soxr_library.soxr_quality_spec(recipe, flags) : none;
}

soxr_error_t soxr_process(soxr_t resampler, soxr_in_t in, size_t in_length, size_t *in_done,
                          soxr_out_t out, size_t out_length, size_t *out_done)
{
    if (!soxr_library_ready()) return sfx_on_demand_error(&soxr_loader);
    return soxr_library.soxr_process(resampler, in, in_length, in_done, out, out_length, out_done);
}

/* ---- libebur128 ---- */

#define EBUR128_FUNCTIONS(X) \
    X(ebur128_add_frames_float) X(ebur128_destroy) X(ebur128_init) X(ebur128_loudness_global) \
    X(ebur128_loudness_momentary) X(ebur128_set_channel) X(ebur128_true_peak)

static struct { EBUR128_FUNCTIONS(SFX_ON_DEMAND_FIELD) } ebur128_library;
static sfx_on_demand ebur128_loader = {
    .sonames = {"libebur128.so.1"}, .functions = {EBUR128_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(ebur128_library),
    .install = "install Debian's libebur128-1", .upgrade = "install Debian's libebur128-1",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* No state without the library, as for channels or a rate it refuses: Loudness reports that in
 * its one line. The others are only ever called with a state, so the library is loaded by then. */
ebur128_state *ebur128_init(unsigned int channels, unsigned long rate, int mode)
{
    return sfx_on_demand_ready(&ebur128_loader) ? ebur128_library.ebur128_init(channels, rate, mode) : NULL;
}

void ebur128_destroy(ebur128_state **state) { ebur128_library.ebur128_destroy(state); }

int ebur128_set_channel(ebur128_state *state, unsigned int channel, int value)
{
    return ebur128_library.ebur128_set_channel(state, channel, value);
}

int ebur128_add_frames_float(ebur128_state *state, const float *frames, size_t count)
{
    return ebur128_library.ebur128_add_frames_float(state, frames, count);
}

int ebur128_loudness_global(ebur128_state *state, double *out) { return ebur128_library.ebur128_loudness_global(state, out); }

int ebur128_loudness_momentary(ebur128_state *state, double *out) { return ebur128_library.ebur128_loudness_momentary(state, out); }

int ebur128_true_peak(ebur128_state *state, unsigned int channel, double *out)
{
    return ebur128_library.ebur128_true_peak(state, channel, out);
}
