/*
 * The card's recordings (playback.wav, …): RIFF WAVE files written here, 32-bit float or 32-bit
 * integer PCM, with the header kept valid after every write so a killed client still leaves a
 * file every reader opens. Written without libsndfile, which (with FLAC, Vorbis, Opus, MPEG and
 * their libraries) would cost every client that opens the card about a millisecond to load
 * before its first frame.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef struct recording {
    int fd;                     /* -1 when closed */
    int s32;                    /* integer PCM rather than float */
    unsigned channels;
    uint64_t frames;            /* frames written */
    uint32_t data_at;           /* where the sample data starts */
} recording;

/**
 * Starts a recording on `fd` (a new, empty file, which it owns from now on): writes the header
 * of an empty WAV file, IEEE float (with the fmt extension size and a fact chunk, as the WAV
 * specification asks of a format other than PCM) or, with `s32`, 32-bit PCM. Returns 0 or
 * -errno (then `fd` is closed).
 */
int recording_open(recording *r, int fd, unsigned rate, unsigned channels, int s32);
/**
 * Continues the recording on `fd` (an existing file opened for reading and writing, which it
 * owns from now on) when its header is the one `recording_open` writes for this rate, channel
 * count and format: a torn last frame is cut off and later frames are appended after the rest.
 * Returns 0, -EINVAL for a file of another format or not one of the card's (then `fd` is
 * closed, and the caller starts a new file), or -errno.
 */
int recording_continue(recording *r, int fd, unsigned rate, unsigned channels, int s32);
/**
 * Appends `count` interleaved frames of float samples (s32: scaled by 2^31, rounded to the
 * nearest and clipped, as libsndfile converts with clipping on) and rewrites the header's sizes.
 * Returns 0 or -errno.
 */
int recording_write(recording *r, const float *frames, size_t count);
/** Closes the file. */
void recording_close(recording *r);

#pragma GCC visibility pop
