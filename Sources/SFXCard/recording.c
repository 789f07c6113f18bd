/* The card's WAV recordings: see recording.h. */
#include "recording.h"

#include <endian.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLOAT_HEADER_BYTES (12 + 8 + 18 + 8 + 4 + 8)   /* RIFF, fmt (18), fact, data */
#define PCM_HEADER_BYTES (12 + 8 + 16 + 8)             /* RIFF, fmt (16), data */
#define CHUNK_SAMPLES 2048

static uint8_t *put16(uint8_t *at, uint16_t value)
{
    uint16_t little = htole16(value);
    memcpy(at, &little, 2);
    return at + 2;
}

static uint8_t *put32(uint8_t *at, uint32_t value)
{
    uint32_t little = htole32(value);
    memcpy(at, &little, 4);
    return at + 4;
}

static uint8_t *put_id(uint8_t *at, const char id[4])
{
    memcpy(at, id, 4);
    return at + 4;
}

static int write_all(int fd, const void *bytes, size_t size, off_t at)
{
    const uint8_t *from = bytes;
    while (size > 0) {
        ssize_t done = at >= 0 ? pwrite(fd, from, size, at) : write(fd, from, size);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        from += done;
        size -= (size_t)done;
        if (at >= 0)
            at += done;
    }
    return 0;
}

/* The sizes in the header for `frames` frames (a file past 4 GB keeps the largest sizes). */
static int write_sizes(recording *r)
{
    uint64_t data = r->frames * r->channels * 4;
    uint64_t riff = r->data_at - 8 + data;
    uint8_t field[4];
    int err = 0;
    put32(field, riff > UINT32_MAX ? UINT32_MAX : (uint32_t)riff);
    err = err ? err : write_all(r->fd, field, 4, 4);
    if (!r->s32) {
        put32(field, r->frames > UINT32_MAX ? UINT32_MAX : (uint32_t)r->frames);
        err = err ? err : write_all(r->fd, field, 4, r->data_at - 12);   /* the fact chunk's count */
    }
    put32(field, data > UINT32_MAX ? UINT32_MAX : (uint32_t)data);
    return err ? err : write_all(r->fd, field, 4, r->data_at - 4);
}

/* The header of an empty recording (sizes 0) into `header`; returns its length. */
static size_t empty_header(uint8_t header[FLOAT_HEADER_BYTES], unsigned rate, unsigned channels, int s32)
{
    uint8_t *at = header;
    at = put_id(at, "RIFF");
    at = put32(at, (s32 ? PCM_HEADER_BYTES : FLOAT_HEADER_BYTES) - 8);
    at = put_id(at, "WAVE");
    at = put_id(at, "fmt ");
    at = put32(at, s32 ? 16 : 18);
    at = put16(at, s32 ? 1 : 3);                 /* WAVE_FORMAT_PCM, WAVE_FORMAT_IEEE_FLOAT */
    at = put16(at, (uint16_t)channels);
    at = put32(at, rate);
    at = put32(at, rate * channels * 4);
    at = put16(at, (uint16_t)(channels * 4));
    at = put16(at, 32);
    if (!s32) {
        at = put16(at, 0);                       /* no fmt extension */
        at = put_id(at, "fact");
        at = put32(at, 4);
        at = put32(at, 0);
    }
    at = put_id(at, "data");
    at = put32(at, 0);
    return (size_t)(at - header);
}

int recording_open(recording *r, int fd, unsigned rate, unsigned channels, int s32)
{
    uint8_t header[FLOAT_HEADER_BYTES];
    r->fd = fd;
    r->s32 = s32;
    r->channels = channels;
    r->frames = 0;
    r->data_at = s32 ? PCM_HEADER_BYTES : FLOAT_HEADER_BYTES;
    int err = write_all(fd, header, empty_header(header, rate, channels, s32), -1);
    if (err < 0)
        recording_close(r);
    return err;
}

int recording_continue(recording *r, int fd, unsigned rate, unsigned channels, int s32)
{
    uint8_t expected[FLOAT_HEADER_BYTES], found[FLOAT_HEADER_BYTES];
    size_t header = empty_header(expected, rate, channels, s32);
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < header || pread(fd, found, header, 0) != (ssize_t)header) {
        close(fd);
        return -EINVAL;
    }
    /* The sizes (RIFF's at 4, fact's count, data's) change as it grows; all else must match. */
    memset(found + 4, 0, 4);
    memset(expected + 4, 0, 4);
    memset(found + header - 4, 0, 4);
    if (!s32)
        memset(found + header - 12, 0, 4);
    if (memcmp(found, expected, header)) {
        close(fd);
        return -EINVAL;
    }
    r->fd = fd;
    r->s32 = s32;
    r->channels = channels;
    r->data_at = (uint32_t)header;
    r->frames = ((uint64_t)st.st_size - header) / (channels * 4);
    off_t end = (off_t)(header + r->frames * channels * 4);
    int err = 0;
    if (ftruncate(fd, end) < 0 || lseek(fd, end, SEEK_SET) < 0)
        err = -errno;
    if (!err)
        err = write_sizes(r);
    if (err < 0)
        recording_close(r);
    return err;
}

static int32_t to_s32(float value)
{
    float scaled = value * 2147483648.0f;
    if (scaled >= 2147483647.0f)
        return INT32_MAX;
    if (scaled <= -2147483648.0f)
        return INT32_MIN;
    return (int32_t)lrintf(scaled);
}

int recording_write(recording *r, const float *frames, size_t count)
{
    if (r->fd < 0 || count == 0)
        return 0;
    size_t samples = count * r->channels;
    uint32_t chunk[CHUNK_SAMPLES];
    for (size_t done = 0; done < samples;) {
        size_t n = samples - done < CHUNK_SAMPLES ? samples - done : CHUNK_SAMPLES;
        for (size_t i = 0; i < n; i++) {
            uint32_t bits;
            if (r->s32) {
                int32_t value = to_s32(frames[done + i]);
                memcpy(&bits, &value, 4);
            } else {
                memcpy(&bits, &frames[done + i], 4);
            }
            chunk[i] = htole32(bits);
        }
        int err = write_all(r->fd, chunk, n * 4, -1);
        if (err < 0)
            return err;
        done += n;
    }
    r->frames += count;
    return write_sizes(r);
}

void recording_close(recording *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}
