/*
 * The card's PCM: an ioplug device that consumes playback and produces capture in real time.
 *
 * Time: a stream starts at start_ns (CLOCK_MONOTONIC, taken in the start callback); by time t
 * the device has played (or captured) floor((t - start_ns) * rate / 1e9) frames, and the
 * hardware pointer moves in whole periods of that count, as a DMA engine's period interrupts
 * would move it (or frame by frame with `pointer frame`, as an HDA card's DMA position does).
 * Nothing runs in the background: the position is computed whenever alsa-lib asks for it, and
 * the frames the DAC passed are handled then (pseudo-mmap: alsa-lib keeps the ring buffer,
 * snd_pcm_ioplug_mmap_areas() shows it to us).
 *
 * Playback: the frames the DAC passes (by the clock, whatever the pointer's granularity) are
 * scaled by Master, recorded and scanned for onsets: what is recorded is what reached the DAC,
 * so a frame rewritten after a rewind is heard as rewritten when the DAC had not reached it
 * yet, and as first written when it had. When the pointer reaches the application pointer (the
 * buffer ran dry; precisely, when avail reaches stop_threshold) the stream goes to XRUN, as the
 * kernel does. An underrun is noticed on the next position query, which every write makes
 * before it copies frames.
 *
 * Rewind: alsa-lib's ioplug moves the application pointer back without telling the plugin
 * (and does not clamp it to the hardware pointer), so the card notices a rewind at its next
 * callback (every write, delay and avail query makes one) and logs it. Frames written again
 * that the DAC had already passed are lost, as on hardware: logged once per rewind ("lost").
 * With `rewind ignore` the card accepts a rewind and plays on as if it had not happened, as a
 * sound server's plugin that already took the frames does (the PulseAudio plugin answers
 * rewindable and rewind, then plays everything written): the application pointer is put back
 * where it was, so snd_pcm_delay does not drop and the rewritten frames follow the old ones.
 *
 * Capture: the frames the pointer passes are filled from the capture file, converted at
 * hw_params to the negotiated rate and channels; frame n of every started stream is frame n of
 * the file (modulo its length when looping, silence past its end). When the reader falls more
 * than stop_threshold (the buffer, by default) behind, the stream overruns.
 *
 * Poll: one timerfd, armed for the instant avail will reach avail_min (or at once when it has
 * already, or when the stream needs attention), so blocking I/O, snd_pcm_wait and poll work.
 */
#include "card.h"
#include "recording.h"
#include "sfx_on_demand.h"

#include <alsa/pcm_external.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sys/stat.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MIN_PERIOD_FRAMES 16
/* Recorded frames buffered before they are handed to libsndfile. */
#define RECORD_CHUNK_FRAMES 8192

typedef struct sfx_pcm {
    snd_pcm_ioplug_t io;
    card card;
    int timer_fd;

    /* Configuration. */
    char *capture_path;
    int loop;
    int record;                 /* write playback.wav (default yes) */
    int record_s32;             /* record 32-bit integer PCM instead of float (record_format s32) */
    int record_continue;        /* a new stream continues the last recording when its format matches */
    double onset_threshold;
    unsigned onset_silence_ms;
    int pointer_per_frame;      /* report the pointer frame by frame (pointer frame), not per period */
    int ignore_rewind;          /* accept rewinds and play on as if none happened (rewind ignore) */
    char wanted_card[32];       /* `card`: the id or index the definition asks for; empty: any */

    /* Software parameters. */
    snd_pcm_uframes_t avail_min, stop_threshold, boundary;

    /* The stream's clock and position. */
    uint64_t start_ns;
    uint64_t consumed;          /* frames the device took (or gave) since prepare */
    uint32_t xruns_seen;        /* state->xrun_requests already answered */
    uint32_t underruns_seen;    /* state->underrun_requests already answered */
    int disconnect_seen;

    /* Playback: the recording and onset detection. */
    recording recording;        /* recording.fd is -1 when none is open */
    float *record_chunk;        /* RECORD_CHUNK_FRAMES frames */
    size_t record_used;         /* frames in record_chunk */
    uint64_t recorded_frames;   /* frames already in the file */
    uint64_t silent_frames;     /* silent frames just before the current one */
    uint64_t onset_silence_frames;
    uint64_t appl_seen;         /* the application pointer at the last callback */
    uint64_t written_end;       /* the end of what was written (appl_seen before any rewind) */
    int rewound;                /* a rewind was noticed and not yet checked for lost frames */

    /* Capture: the file as read, and converted to the stream's rate and channels. */
    float *file_samples;
    uint64_t file_frames;
    int file_channels, file_rate;
    float *source;
    uint64_t source_frames;
} sfx_pcm;

static const char *stream_name(const sfx_pcm *p)
{
    return p->io.stream == SND_PCM_STREAM_PLAYBACK ? "playback" : "capture";
}

static int is_playback(const sfx_pcm *p)
{
    return p->io.stream == SND_PCM_STREAM_PLAYBACK;
}

static int is_running(const sfx_pcm *p)
{
    return p->io.state == SND_PCM_STATE_RUNNING || p->io.state == SND_PCM_STATE_DRAINING;
}

/* Frames the device has handled by `ns`, counted from the start of the stream. */
static uint64_t frames_at(const sfx_pcm *p, uint64_t ns)
{
    if (ns <= p->start_ns)
        return 0;
    return (uint64_t)((unsigned __int128)(ns - p->start_ns) * p->io.rate / 1000000000u);
}

/* The first instant at which frames_at() reaches `frame`. */
static uint64_t instant_of(const sfx_pcm *p, uint64_t frame)
{
    unsigned __int128 scaled = (unsigned __int128)frame * 1000000000u;
    return p->start_ns + (uint64_t)((scaled + p->io.rate - 1) / p->io.rate);
}

static uint64_t round_up(uint64_t frames, uint64_t period)
{
    return (frames + period - 1) / period * period;
}

/* Sets the poll timer: 0 disarms it, an instant in the past makes the descriptor readable. */
static void arm_timer_at(sfx_pcm *p, uint64_t ns)
{
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    when.it_value.tv_sec = (time_t)(ns / 1000000000u);
    when.it_value.tv_nsec = (long)(ns % 1000000000u);
    timerfd_settime(p->timer_fd, TFD_TIMER_ABSTIME, &when, NULL);
}

#define WAKE_NOW 1u

/* Arms the poll timer for the instant the application next has something to do in `state`. */
static void arm_timer(sfx_pcm *p, snd_pcm_state_t state)
{
    const snd_pcm_ioplug_t *io = &p->io;
    int64_t appl = (int64_t)io->appl_ptr;
    int64_t target;     /* the hardware position that wakes the application */
    if (card_get(&p->card.state->disconnected)) {
        arm_timer_at(p, WAKE_NOW);
        return;
    }
    switch (state) {
    case SND_PCM_STATE_PREPARED:
        if (is_playback(p) && io->buffer_size - (uint64_t)(appl - (int64_t)p->consumed) >= p->avail_min)
            arm_timer_at(p, WAKE_NOW);
        else
            arm_timer_at(p, 0);
        return;
    case SND_PCM_STATE_RUNNING:
        target = is_playback(p) ? appl + (int64_t)p->avail_min - (int64_t)io->buffer_size
                                : appl + (int64_t)p->avail_min;
        break;
    case SND_PCM_STATE_DRAINING:
        target = appl;
        break;
    default:
        arm_timer_at(p, WAKE_NOW);
        return;
    }
    if (target <= 0)
        arm_timer_at(p, WAKE_NOW);
    else
        arm_timer_at(p, instant_of(p, round_up((uint64_t)target, io->period_size)));
}

/* Marks the stream disconnected once the state file says the card is unplugged. */
static int notice_disconnect(sfx_pcm *p)
{
    if (!card_get(&p->card.state->disconnected))
        return 0;
    if (!p->disconnect_seen) {
        p->disconnect_seen = 1;
        card_log(&p->card, "disconnect stream=%s", stream_name(p));
        card_log_flush(&p->card);
    }
    snd_pcm_ioplug_set_state(&p->io, SND_PCM_STATE_DISCONNECTED);
    return 1;
}

/* ---- samples ---- */

static void *sample_address(const snd_pcm_channel_area_t *area, uint64_t offset)
{
    return (char *)area->addr + (area->first + offset * area->step) / 8;
}

static float read_sample(const sfx_pcm *p, const snd_pcm_channel_area_t *area, uint64_t offset)
{
    const void *at = sample_address(area, offset);
    switch (p->io.format) {
    case SND_PCM_FORMAT_S16_LE: return (float)*(const int16_t *)at / 32768.0f;
    case SND_PCM_FORMAT_S32_LE: return (float)((double)*(const int32_t *)at / 2147483648.0);
    default: return *(const float *)at;
    }
}

static void write_sample(const sfx_pcm *p, const snd_pcm_channel_area_t *area, uint64_t offset, float value)
{
    void *at = sample_address(area, offset);
    switch (p->io.format) {
    case SND_PCM_FORMAT_S16_LE:
        *(int16_t *)at = (int16_t)fmax(-32768.0, fmin(32767.0, rint((double)value * 32768.0)));
        break;
    case SND_PCM_FORMAT_S32_LE:
        *(int32_t *)at = (int32_t)fmax(-2147483648.0, fmin(2147483647.0, rint((double)value * 2147483648.0)));
        break;
    default:
        *(float *)at = value;
    }
}

/* ---- playback: recording, onsets ---- */

static void flush_recording(sfx_pcm *p)
{
    if (p->recording.fd >= 0 && p->record_used > 0) {
        int err = recording_write(&p->recording, p->record_chunk, p->record_used);
        if (err < 0) {
            SNDERR("sfxcard: cannot write the recording (%s); the rest of this stream is not recorded", strerror(-err));
            recording_close(&p->recording);
        }
        p->recorded_frames += p->record_used;
    }
    p->record_used = 0;
}

static void close_recording(sfx_pcm *p)
{
    flush_recording(p);
    recording_close(&p->recording);
}

/* The name of recording n: playback.wav, playback-2.wav, … */
static void recording_name(char name[32], int n)
{
    if (n == 1)
        snprintf(name, 32, "playback.wav");
    else
        snprintf(name, 32, "playback-%d.wav", n);
}

/* With `record_continue`, the last recording goes on when it has this stream's format (a device
 * opened again and again, as a daemon's after each idle close, makes one file, not one a sound).
 * Returns whether it did. */
static int continue_recording(sfx_pcm *p)
{
    char name[32];
    int last = 0;
    for (int n = 1; n < 10000; n++) {
        recording_name(name, n);
        struct stat st;
        if (fstatat(p->card.dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            break;
        last = n;
    }
    if (last == 0)
        return 0;
    recording_name(name, last);
    int fd = card_open_file(&p->card, name);
    if (fd < 0 || recording_continue(&p->recording, fd, p->io.rate, p->io.channels, p->record_s32) < 0)
        return 0;
    p->recorded_frames = p->recording.frames;
    card_log(&p->card, "recording stream=playback file=%s continued=1", name);
    return 1;
}

/* Starts the next free playback.wav, playback-2.wav, … in the state directory (or, with
 * `record_continue`, goes on with the last one). */
static void open_recording(sfx_pcm *p)
{
    char name[32], path[PATH_MAX];
    if (!p->record)
        return;
    if (p->record_continue && continue_recording(p))
        return;
    for (int n = 1; n < 10000 && p->recording.fd < 0; n++) {
        recording_name(name, n);
        snprintf(path, sizeof path, "%s/%s", p->card.dir, name);
        int fd = card_create_file(&p->card, name);   /* 0600, never through a symbolic link */
        if (fd == -EEXIST)
            continue;
        if (fd < 0) {
            SNDERR("sfxcard: cannot create %s (%s); nothing will be recorded", path, strerror(-fd));
            return;
        }
        /* The header stays valid after every write, so a killed client still leaves a valid
         * file; s32 clips, so full scale stays full scale. */
        int err = recording_open(&p->recording, fd, p->io.rate, p->io.channels, p->record_s32);
        if (err < 0) {
            SNDERR("sfxcard: cannot write %s (%s); nothing will be recorded", path, strerror(-err));
            return;
        }
        p->recorded_frames = 0;
        card_log(&p->card, "recording stream=playback file=%s", name);
    }
}

/* Master as a linear gain: off or volume 0 is silence, 100 is unity, a step is 0.5 dB. */
static float master_gain(const sfx_pcm *p)
{
    uint32_t on = card_get(&p->card.state->master_switch);
    uint32_t volume = card_get(&p->card.state->master_volume);
    if (!on || volume == 0)
        return 0.0f;
    if (volume >= SFXCARD_VOLUME_MAX)
        return 1.0f;
    double db = (SFXCARD_VOLUME_MIN_CENTIBEL + (double)volume * SFXCARD_VOLUME_STEP_CENTIBEL) / 100.0;
    return (float)pow(10.0, db / 20.0);
}

/* The device plays frames [consumed, to): frames the application wrote reach the DAC, frames
 * beyond what it wrote (only when stop_threshold lets the stream run dry) are silence. */
static void play_until(sfx_pcm *p, uint64_t to)
{
    const snd_pcm_channel_area_t *areas = snd_pcm_ioplug_mmap_areas(&p->io);
    uint64_t appl = p->written_end > p->io.appl_ptr ? p->written_end : p->io.appl_ptr;
    unsigned channels = p->io.channels;
    float gain = master_gain(p);
    for (uint64_t frame = p->consumed; frame < to; frame++) {
        float *out = p->record_chunk + p->record_used * channels;
        float peak = 0.0f;
        for (unsigned c = 0; c < channels; c++) {
            float v = frame < appl ? read_sample(p, &areas[c], frame % p->io.buffer_size) * gain : 0.0f;
            out[c] = v;
            peak = fmaxf(peak, fabsf(v));
        }
        if (peak > p->onset_threshold) {
            if (p->silent_frames >= p->onset_silence_frames) {
                uint64_t dac_ns = p->start_ns +
                    (uint64_t)((unsigned __int128)frame * 1000000000u / p->io.rate);
                card_log(&p->card, "onset stream=playback frame=%llu dac_ns=%llu file_frame=%llu",
                         (unsigned long long)frame, (unsigned long long)dac_ns,
                         (unsigned long long)(p->recorded_frames + p->record_used));
            }
            p->silent_frames = 0;
        } else {
            p->silent_frames++;
        }
        if (++p->record_used == RECORD_CHUNK_FRAMES)
            flush_recording(p);
    }
    p->consumed = to;
}

/* ---- playback: rewinds ---- */

/* Notices a rewind since the last callback (the application pointer went back) and logs it; with
 * `rewind ignore`, puts the pointer back where it was instead. */
static void notice_rewind(sfx_pcm *p)
{
    uint64_t appl = p->io.appl_ptr;
    if (appl >= p->appl_seen) {
        p->appl_seen = appl;
        if (appl > p->written_end)
            p->written_end = appl;
        return;
    }
    uint64_t frames = p->appl_seen - appl;
    if (p->ignore_rewind) {
        p->io.appl_ptr = p->appl_seen;
        card_log(&p->card, "rewind stream=playback frames=%llu to=%llu ignored=1",
                 (unsigned long long)frames, (unsigned long long)appl);
        return;
    }
    card_log(&p->card, "rewind stream=playback frames=%llu to=%llu ignored=0",
             (unsigned long long)frames, (unsigned long long)appl);
    p->appl_seen = appl;
    p->rewound = 1;
}

/* After a rewind, once the DAC is up to date: frames from the application pointer up to what the
 * DAC already played will be written again and never heard. */
static void notice_lost_frames(sfx_pcm *p)
{
    if (!p->rewound)
        return;
    p->rewound = 0;
    uint64_t appl = p->io.appl_ptr;
    if (appl < p->consumed)
        card_log(&p->card, "lost stream=playback frames=%llu from=%llu",
                 (unsigned long long)(p->consumed - appl), (unsigned long long)appl);
}

/* ---- capture ---- */

static float source_sample(const sfx_pcm *p, uint64_t frame, unsigned channel)
{
    if (p->source_frames == 0)
        return 0.0f;
    if (p->loop)
        frame %= p->source_frames;
    return frame < p->source_frames ? p->source[frame * p->io.channels + channel] : 0.0f;
}

/* The device captures frames [consumed, to) into the ring (only the newest buffer's worth can
 * still be there when the reader is more than a buffer behind). */
static void capture_until(sfx_pcm *p, uint64_t to)
{
    const snd_pcm_channel_area_t *areas = snd_pcm_ioplug_mmap_areas(&p->io);
    uint64_t from = p->consumed;
    if (to - from > p->io.buffer_size)
        from = to - p->io.buffer_size;
    for (uint64_t frame = from; frame < to; frame++)
        for (unsigned c = 0; c < p->io.channels; c++)
            write_sample(p, &areas[c], frame % p->io.buffer_size, source_sample(p, frame, c));
    p->consumed = to;
}

/* libsndfile and libsoxr, for a capture file only: loaded when a capture stream with one opens,
 * so that a playback client (aplay) does not load them, and their codecs, before its first frame. */
#define SNDFILE_FUNCTIONS(X) X(sf_close) X(sf_open) X(sf_readf_float) X(sf_strerror)
#define SOXR_FUNCTIONS(X) X(soxr_oneshot)

static struct { SNDFILE_FUNCTIONS(SFX_ON_DEMAND_FIELD) SOXR_FUNCTIONS(SFX_ON_DEMAND_FIELD) } capture_library;
static sfx_on_demand capture_loader = {
    .sonames = {"libsndfile.so.1", "libsoxr.so.0"},
    .functions = {SNDFILE_FUNCTIONS(SFX_ON_DEMAND_NAME), SOXR_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(capture_library),
    .install = "install libsndfile1 and libsoxr0", .upgrade = "reinstall libsndfile1 and libsoxr0",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

#define sf_close (capture_library.sf_close)
#define sf_open (capture_library.sf_open)
#define sf_readf_float (capture_library.sf_readf_float)
#define sf_strerror (capture_library.sf_strerror)
#define soxr_oneshot (capture_library.soxr_oneshot)

/* Reads the capture file into memory at open, so a missing or unreadable file fails the open. */
static int load_capture_file(sfx_pcm *p)
{
    if (!sfx_on_demand_ready(&capture_loader)) {
        SNDERR("sfxcard: cannot read the capture file %s: %s", p->capture_path, sfx_on_demand_error(&capture_loader));
        return -ENOENT;
    }
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *file = sf_open(p->capture_path, SFM_READ, &info);
    if (!file) {
        SNDERR("sfxcard: cannot read the capture file %s (%s); give a sound file libsndfile reads",
               p->capture_path, sf_strerror(NULL));
        return -ENOENT;
    }
    p->file_samples = malloc(sizeof(float) * (size_t)(info.frames > 0 ? info.frames : 1) * (size_t)info.channels);
    if (!p->file_samples) {
        sf_close(file);
        return -ENOMEM;
    }
    p->file_frames = (uint64_t)sf_readf_float(file, p->file_samples, info.frames);
    p->file_channels = info.channels;
    p->file_rate = info.samplerate;
    sf_close(file);
    return 0;
}

/* Converts the capture file to the negotiated channels (mono is copied to both sides; more
 * channels are averaged into mono) and rate (libsoxr). */
static int convert_capture_file(sfx_pcm *p)
{
    unsigned channels = p->io.channels;
    float *mapped = malloc(sizeof(float) * (size_t)(p->file_frames ? p->file_frames : 1) * channels);
    if (!mapped)
        return -ENOMEM;
    for (uint64_t f = 0; f < p->file_frames; f++) {
        const float *in = p->file_samples + f * (uint64_t)p->file_channels;
        float mono = 0.0f;
        for (int c = 0; c < p->file_channels; c++)
            mono += in[c];
        mono /= (float)p->file_channels;
        for (unsigned c = 0; c < channels; c++)
            mapped[f * channels + c] = (int)channels == p->file_channels ? in[c]
                                     : p->file_channels == 1 ? in[0] : mono;
    }
    free(p->source);
    p->source = mapped;
    p->source_frames = p->file_frames;
    if ((unsigned)p->file_rate == p->io.rate || p->file_frames == 0)
        return 0;
    size_t out_frames = (size_t)((double)p->file_frames * p->io.rate / p->file_rate) + 1;
    float *resampled = malloc(sizeof(float) * out_frames * channels);
    if (!resampled)
        return -ENOMEM;
    size_t done = 0;
    soxr_error_t error = soxr_oneshot(p->file_rate, p->io.rate, channels, mapped, p->file_frames, NULL,
                                      resampled, out_frames, &done, NULL, NULL, NULL);
    if (error) {
        SNDERR("sfxcard: cannot resample the capture file to %u Hz (%s)", p->io.rate, error);
        free(resampled);
        return -EINVAL;
    }
    free(p->source);
    p->source = resampled;
    p->source_frames = done;
    return 0;
}

/* ---- ioplug callbacks ---- */

static snd_pcm_sframes_t position(const sfx_pcm *p)
{
    return (snd_pcm_sframes_t)(p->consumed % p->boundary);
}

static snd_pcm_sframes_t xrun(sfx_pcm *p, const char *reason)
{
    card_log(&p->card, "xrun stream=%s reason=%s frame=%llu", stream_name(p), reason,
             (unsigned long long)p->consumed);
    flush_recording(p);
    card_log_flush(&p->card);
    return -EPIPE;
}

/* The playback pointer reported to alsa-lib: per period, or per frame with `pointer frame`; the DAC
 * itself (p->consumed) may be ahead of a per-period pointer. */
static snd_pcm_sframes_t playback_position(const sfx_pcm *p, uint64_t hw)
{
    return (snd_pcm_sframes_t)(hw % p->boundary);
}

/* Playback's part of the pointer callback. The DAC plays up to the clock but never past what was
 * written (a write that comes late within a period still makes it, as the pointer has not passed
 * it yet); draining and underruns go by the reported pointer `hw`, as alsa-lib sees it. */
static snd_pcm_sframes_t playback_pointer(sfx_pcm *p, uint64_t clock, uint64_t hw, uint64_t appl)
{
    snd_pcm_ioplug_t *io = &p->io;
    uint64_t dac = clock < p->written_end ? clock : p->written_end;
    if (io->state == SND_PCM_STATE_DRAINING) {
        if (dac > p->consumed)
            play_until(p, dac);
        return playback_position(p, hw < appl ? hw : appl);
    }
    if ((int64_t)hw + (int64_t)io->buffer_size - (int64_t)appl >= (int64_t)p->stop_threshold) {
        if (appl > p->consumed)
            play_until(p, appl);
        return xrun(p, "underrun");
    }
    if (dac > p->consumed)
        play_until(p, dac);
    notice_lost_frames(p);
    return playback_position(p, hw);
}

static snd_pcm_sframes_t sfx_pointer(snd_pcm_ioplug_t *io)
{
    sfx_pcm *p = io->private_data;
    if (notice_disconnect(p) || !is_running(p))
        return position(p);
    uint64_t clock = frames_at(p, card_now_ns());
    uint64_t hw = clock - clock % io->period_size;
    if (is_playback(p)) {
        if (p->pointer_per_frame)
            hw = clock;
        notice_rewind(p);
    }
    uint64_t appl = io->appl_ptr;
    uint32_t requests = card_get(&p->card.state->xrun_requests);
    card_log_tick(&p->card);
    if (requests != p->xruns_seen) {
        uint64_t played = hw < appl ? hw : appl;
        p->xruns_seen++;
        if (is_playback(p) && played > p->consumed)
            play_until(p, played);
        return xrun(p, "injected");
    }
    uint32_t underruns = card_get(&p->card.state->underrun_requests);
    if (underruns != p->underruns_seen) {
        p->underruns_seen = underruns;
        if (is_playback(p)) {
            /* The client was held up until the DAC played everything it had written. */
            if (appl > p->consumed)
                play_until(p, appl);
            return xrun(p, "underrun");
        }
    }
    if (is_playback(p))
        return playback_pointer(p, clock, hw, appl);
    if (hw <= p->consumed)
        return position(p);
    if (!is_playback(p)) {
        if (hw - appl >= p->stop_threshold)
            return xrun(p, "overrun");
        capture_until(p, hw);
        return position(p);
    }
    return position(p);
}

static int sfx_delay(snd_pcm_ioplug_t *io, snd_pcm_sframes_t *delay)
{
    sfx_pcm *p = io->private_data;
    if (notice_disconnect(p))
        return -ENODEV;
    if (is_playback(p))
        notice_rewind(p);
    int64_t device = is_running(p) ? (int64_t)frames_at(p, card_now_ns()) : (int64_t)p->consumed;
    int64_t appl = (int64_t)io->appl_ptr;
    *delay = (snd_pcm_sframes_t)(is_playback(p) ? appl - device : device - appl);
    return 0;
}

static int sfx_start(snd_pcm_ioplug_t *io)
{
    sfx_pcm *p = io->private_data;
    if (notice_disconnect(p))
        return -ENODEV;
    p->start_ns = card_now_ns();
    /* Stamped with the start instant itself: DAC times count from it. */
    card_log_at(&p->card, p->start_ns, "start stream=%s", stream_name(p));
    arm_timer(p, SND_PCM_STATE_RUNNING);   /* ioplug enters RUNNING when this returns */
    return 0;
}

static int sfx_stop(snd_pcm_ioplug_t *io)
{
    sfx_pcm *p = io->private_data;
    if (is_playback(p) && is_running(p) && !card_get(&p->card.state->disconnected)) {
        /* What the DAC played up to this instant, up to the frames the application wrote. */
        uint64_t played = frames_at(p, card_now_ns());
        uint64_t appl = io->appl_ptr > p->written_end ? io->appl_ptr : p->written_end;
        uint64_t end = played < appl ? played : appl;
        if (end > p->consumed)
            play_until(p, end);
    }
    if (io->state == SND_PCM_STATE_SETUP)
        return 0;   /* already stopped: snd_pcm_close drops a drained stream again */
    card_log(&p->card, "stop stream=%s frame=%llu", stream_name(p), (unsigned long long)p->consumed);
    flush_recording(p);
    card_log_flush(&p->card);
    arm_timer_at(p, WAKE_NOW);
    return 0;
}

static int sfx_prepare(snd_pcm_ioplug_t *io)
{
    sfx_pcm *p = io->private_data;
    if (notice_disconnect(p))
        return -ENODEV;
    p->consumed = 0;
    p->appl_seen = p->written_end = 0;
    p->rewound = 0;
    p->silent_frames = p->onset_silence_frames;   /* the DAC was silent before the stream */
    if (is_playback(p) && p->recording.fd < 0)
        open_recording(p);
    card_log(&p->card, "prepare stream=%s", stream_name(p));
    card_log_flush(&p->card);
    arm_timer(p, SND_PCM_STATE_PREPARED);  /* ioplug enters PREPARED when this returns */
    return 0;
}

static int sfx_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params UNUSED)
{
    sfx_pcm *p = io->private_data;
    if (notice_disconnect(p))
        return -ENODEV;
    if (io->period_size < MIN_PERIOD_FRAMES) {
        SNDERR("sfxcard: a period of %lu frames is too short; ask for %d frames or more",
               (unsigned long)io->period_size, MIN_PERIOD_FRAMES);
        return -EINVAL;
    }
    card_log(&p->card, "hw_params stream=%s access=%s format=%s rate=%u channels=%u period=%lu buffer=%lu",
             stream_name(p), snd_pcm_access_name(io->access), snd_pcm_format_name(io->format),
             io->rate, io->channels, (unsigned long)io->period_size, (unsigned long)io->buffer_size);
    /* Until sw_params says otherwise: alsa-lib's default boundary and thresholds. */
    p->boundary = io->buffer_size;
    while (p->boundary * 2 <= LONG_MAX - io->buffer_size)
        p->boundary *= 2;
    p->avail_min = io->period_size;
    p->stop_threshold = io->buffer_size;
    p->onset_silence_frames = (uint64_t)io->rate * p->onset_silence_ms / 1000u;
    close_recording(p);   /* a new configuration starts a new file */
    if (is_playback(p)) {
        free(p->record_chunk);
        p->record_chunk = malloc(sizeof(float) * RECORD_CHUNK_FRAMES * io->channels);
        return p->record_chunk ? 0 : -ENOMEM;
    }
    return p->file_samples ? convert_capture_file(p) : 0;
}

static int sfx_hw_free(snd_pcm_ioplug_t *io)
{
    close_recording(io->private_data);
    return 0;
}

static int sfx_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params)
{
    sfx_pcm *p = io->private_data;
    snd_pcm_uframes_t start_threshold = 0;
    snd_pcm_sw_params_get_avail_min(params, &p->avail_min);
    snd_pcm_sw_params_get_stop_threshold(params, &p->stop_threshold);
    snd_pcm_sw_params_get_start_threshold(params, &start_threshold);
    snd_pcm_sw_params_get_boundary(params, &p->boundary);
    if (p->avail_min == 0)
        p->avail_min = 1;
    card_log(&p->card, "sw_params stream=%s start_threshold=%lu avail_min=%lu stop_threshold=%lu",
             stream_name(p), (unsigned long)start_threshold, (unsigned long)p->avail_min,
             (unsigned long)p->stop_threshold);
    return 0;
}

static int sfx_poll_descriptors(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int space)
{
    sfx_pcm *p = io->private_data;
    if (space < 1)
        return 0;
    arm_timer(p, io->state);
    pfd->fd = p->timer_fd;
    pfd->events = POLLIN;
    pfd->revents = 0;
    return 1;
}

static int sfx_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd UNUSED, unsigned int nfds UNUSED,
                            unsigned short *revents)
{
    sfx_pcm *p = io->private_data;
    int err = card_timer_clear(p->timer_fd);
    if (err < 0)
        return err;
    *revents = 0;
    if (notice_disconnect(p)) {
        *revents = POLLERR;
        return 0;
    }
    int draining = io->state == SND_PCM_STATE_DRAINING;
    snd_pcm_sframes_t avail = snd_pcm_avail_update(io->pcm);
    snd_pcm_state_t state = io->state;
    if (draining)
        *revents = state == SND_PCM_STATE_DRAINING ? 0 : POLLOUT;   /* drained */
    else if (avail < 0 || (state != SND_PCM_STATE_RUNNING && state != SND_PCM_STATE_PREPARED))
        *revents = POLLERR;
    else if ((snd_pcm_uframes_t)avail >= p->avail_min)
        *revents = is_playback(p) ? POLLOUT : POLLIN;
    arm_timer(p, io->state);
    return 0;
}

static int sfx_close(snd_pcm_ioplug_t *io)
{
    sfx_pcm *p = io->private_data;
    close_recording(p);
    card_log(&p->card, "close stream=%s", stream_name(p));
    card_close(&p->card);
    close(p->timer_fd);
    free(p->record_chunk);
    free(p->file_samples);
    free(p->source);
    free(p->capture_path);
    free(p);
    return 0;
}

static const snd_pcm_ioplug_callback_t callbacks = {
    .start = sfx_start,
    .stop = sfx_stop,
    .pointer = sfx_pointer,
    .close = sfx_close,
    .hw_params = sfx_hw_params,
    .hw_free = sfx_hw_free,
    .sw_params = sfx_sw_params,
    .prepare = sfx_prepare,
    .poll_descriptors = sfx_poll_descriptors,
    .poll_revents = sfx_poll_revents,
    .delay = sfx_delay,
};

/* ---- opening ---- */

static int pcm_option(void *ctx, const char *key, snd_config_t *value)
{
    sfx_pcm *p = ctx;
    const char *text;
    long number;
    if (!strcmp(key, "card")) {
        /* card "Speaker" or card 1 (from @args [CARD]): open only while the card has that id or index. */
        if (snd_config_get_type(value) == SND_CONFIG_TYPE_INTEGER && snd_config_get_integer(value, &number) >= 0) {
            snprintf(p->wanted_card, sizeof p->wanted_card, "%ld", number);
            return 0;
        }
        if (snd_config_get_string(value, &text) < 0) {
            SNDERR("sfxcard: card must be the card's id or index: card \"sfxcard\" or card 0");
            return -EINVAL;
        }
        snprintf(p->wanted_card, sizeof p->wanted_card, "%s", text);
        return 0;
    }
    if (!strcmp(key, "capture")) {
        if (snd_config_get_string(value, &text) < 0) {
            SNDERR("sfxcard: capture must be a file name: capture \"/path/to/sound.wav\"");
            return -EINVAL;
        }
        free(p->capture_path);
        p->capture_path = strdup(text);
        return p->capture_path ? 0 : -ENOMEM;
    }
    if (!strcmp(key, "loop")) {
        int on = snd_config_get_bool(value);
        if (on < 0) {
            SNDERR("sfxcard: loop must be yes or no");
            return -EINVAL;
        }
        p->loop = on;
        return 0;
    }
    if (!strcmp(key, "record")) {
        int on = snd_config_get_bool(value);
        if (on < 0) {
            SNDERR("sfxcard: record must be yes or no");
            return -EINVAL;
        }
        p->record = on;
        return 0;
    }
    if (!strcmp(key, "record_continue")) {
        int on = snd_config_get_bool(value);
        if (on < 0) {
            SNDERR("sfxcard: record_continue must be yes or no");
            return -EINVAL;
        }
        p->record_continue = on;
        return 0;
    }
    if (!strcmp(key, "record_format")) {
        /* float: 32-bit float, sample-exact (the default, for tests); s32: 32-bit integer PCM,
         * which sox reads without a warning (libsndfile's float WAV has no fmt extension size). */
        const char *format = NULL;
        if (snd_config_get_string(value, &format) < 0 || (strcmp(format, "float") && strcmp(format, "s32"))) {
            SNDERR("sfxcard: record_format must be float or s32");
            return -EINVAL;
        }
        p->record_s32 = !strcmp(format, "s32");
        return 0;
    }
    if (!strcmp(key, "pointer")) {
        /* period: the pointer moves a period at a time (period interrupts); frame: frame by frame. */
        const char *granularity = NULL;
        if (snd_config_get_string(value, &granularity) < 0 || (strcmp(granularity, "period") && strcmp(granularity, "frame"))) {
            SNDERR("sfxcard: pointer must be period or frame");
            return -EINVAL;
        }
        p->pointer_per_frame = !strcmp(granularity, "frame");
        return 0;
    }
    if (!strcmp(key, "rewind")) {
        /* honest: a rewind takes effect; ignore: accepted and ignored, as a sound server's plugin may. */
        const char *behaviour = NULL;
        if (snd_config_get_string(value, &behaviour) < 0 || (strcmp(behaviour, "honest") && strcmp(behaviour, "ignore"))) {
            SNDERR("sfxcard: rewind must be honest or ignore");
            return -EINVAL;
        }
        p->ignore_rewind = !strcmp(behaviour, "ignore");
        return 0;
    }
    if (!strcmp(key, "onset_threshold")) {
        if (snd_config_get_ireal(value, &p->onset_threshold) < 0 || p->onset_threshold < 0) {
            SNDERR("sfxcard: onset_threshold must be a number from 0 to 1, e.g. 0.001");
            return -EINVAL;
        }
        return 0;
    }
    if (!strcmp(key, "onset_silence_ms")) {
        if (snd_config_get_integer(value, &number) < 0 || number < 0) {
            SNDERR("sfxcard: onset_silence_ms must be a whole number of milliseconds, e.g. 10");
            return -EINVAL;
        }
        p->onset_silence_ms = (unsigned)number;
        return 0;
    }
    SNDERR("sfxcard: unknown parameter %s; the PCM takes dir, card, capture, loop, record, record_format, pointer, rewind, onset_threshold, onset_silence_ms", key);
    return -EINVAL;
}

static int set_constraints(snd_pcm_ioplug_t *io)
{
    static const unsigned int access[] = { SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_MMAP_INTERLEAVED };
    static const unsigned int formats[] = { SND_PCM_FORMAT_FLOAT_LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_S16_LE };
    static const unsigned int rates[] = { 44100, 48000 };
    int err;
    if ((err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_ACCESS, 2, access)) < 0 ||
        (err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_FORMAT, 3, formats)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 2)) < 0 ||
        (err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_RATE, 2, rates)) < 0 ||
        /* 16 frames of the smallest frame (S16 mono) up to 1 s of the largest (float stereo). */
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIOD_BYTES,
                                               MIN_PERIOD_FRAMES * 2, 48000 * 8)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_BUFFER_BYTES,
                                               MIN_PERIOD_FRAMES * 2 * 2, 4 * 48000 * 8)) < 0)
        return err;
    return 0;
}

static void free_unopened(sfx_pcm *p)
{
    card_close(&p->card);
    if (p->timer_fd >= 0)
        close(p->timer_fd);
    free(p->file_samples);
    free(p->capture_path);
    free(p);
}

/* 0 when the card may be opened now: not refusing opens (refuse_open), and with the id or index
 * the definition's `card` names, if it names one; else the negative errno the open fails with. */
static int check_identity(const sfx_pcm *p)
{
    const sfxcard_state *state = p->card.state;
    uint32_t refusal = card_get(&state->refuse_open);
    if (refusal)
        return -(int)refusal;
    if (!p->wanted_card[0])
        return 0;
    char id[sizeof state->card_id + 1];
    for (size_t i = 0; i < sizeof state->card_id; i++)
        id[i] = __atomic_load_n(&state->card_id[i], __ATOMIC_ACQUIRE);
    id[sizeof state->card_id] = 0;
    if (!id[0])
        snprintf(id, sizeof id, "%s", SFXCARD_DEFAULT_ID);
    char index[16];
    snprintf(index, sizeof index, "%u", card_get(&state->card_index));
    return !strcmp(p->wanted_card, id) || !strcmp(p->wanted_card, index) ? 0 : -ENODEV;
}

SND_PCM_PLUGIN_DEFINE_FUNC(sfxcard)
{
    sfx_pcm *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->timer_fd = -1;
    p->recording.fd = -1;
    p->card.log_fd = -1;
    p->card.dir_fd = -1;
    p->boundary = 1;   /* the position is 0 until hw_params sets the real boundary */
    p->record = 1;
    p->onset_threshold = 0.001;
    p->onset_silence_ms = 10;
    const char *dir;
    int err = card_parse_config(conf, &dir, pcm_option, p);
    if (err >= 0)
        err = card_open(&p->card, dir);
    if (err >= 0)
        err = check_identity(p);
    if (err >= 0 && stream == SND_PCM_STREAM_CAPTURE && p->capture_path)
        err = load_capture_file(p);
    if (err >= 0) {
        p->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (p->timer_fd < 0)
            err = -errno;
    }
    if (err < 0) {
        free_unopened(p);
        return err;
    }
    p->io.version = SND_PCM_IOPLUG_VERSION;
    p->io.name = "sfx virtual sound card";
    p->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA | SND_PCM_IOPLUG_FLAG_MONOTONIC;
    p->io.poll_fd = p->timer_fd;
    p->io.poll_events = POLLIN;
    p->io.mmap_rw = 1;
    p->io.callback = &callbacks;
    p->io.private_data = p;
    p->xruns_seen = card_get(&p->card.state->xrun_requests);
    p->underruns_seen = card_get(&p->card.state->underrun_requests);
    err = snd_pcm_ioplug_create(&p->io, name, stream, mode);
    if (err < 0) {
        free_unopened(p);
        return err;
    }
    err = set_constraints(&p->io);
    if (err < 0) {
        snd_pcm_ioplug_delete(&p->io);
        return err;
    }
    card_log(&p->card, "open stream=%s", stream_name(p));
    card_log_flush(&p->card);
    *pcmp = p->io.pcm;
    return 0;
}

SND_PCM_PLUGIN_SYMBOL(sfxcard);
