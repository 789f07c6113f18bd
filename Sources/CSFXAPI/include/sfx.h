/*
 * sfx.h — the C API of sfx, a low-latency sound-effects and alert engine for Linux (libsfx.so).
 *
 *     #include <sfx.h>                      cc game.c $(pkg-config --cflags --libs sfx)
 *
 *     sfx_engine *engine;
 *     if (sfx_open(NULL, &engine) != SFX_OK) { fprintf(stderr, "%s\n", sfx_last_error()); return 1; }
 *     sfx_sound tock;
 *     sfx_system_sound(engine, "tock", &tock);     // a system sound: never disposed
 *     sfx_play(engine, tock, NULL, NULL);          // fire and forget, from any thread
 *     sfx_wait_idle(engine, 5000);                 // let it ring out
 *     sfx_close(engine);
 *
 * An engine opens an ALSA device and mixes on a real-time thread; a sound played now is mixed
 * into the very next period the device takes. Sounds are decoded once, at load, into memory at
 * the device's rate. This is the Swift library's SoundEngine, behind plain C types.
 *
 * Errors. Every function that can fail returns an int: SFX_OK (0) or a negative sfx_status.
 * Then sfx_last_error() gives one line naming the thing and the fix, for the calling thread.
 * A NULL pointer where one is required, a closed engine and an unknown sound are errors, never
 * crashes: an engine handle stays safe to pass after sfx_close (every call then fails with
 * SFX_ERROR_CLOSED), and voice handles stay safe after their voice has ended.
 *
 * Threads. Every function may be called from any thread, at the same time as any other, and
 * from inside a completion callback, unless its comment says otherwise. Completion callbacks
 * run on the engine's completion thread (a serial queue of the engine's, never the real-time
 * thread), one at a time, in the order the plays ended.
 *
 * Numbers. Volumes and gains are linear, 1 as recorded, 0…16; pan −1 (left)…1 (right); fades
 * 0…60000 ms. Out of range is SFX_ERROR_RANGE, never clamped and never a crash.
 *
 * Run time. libsfx.so is written in Swift: it needs the Swift runtime libraries of the toolchain
 * it was built with (found through its RUNPATH), and Debian's libasound2, libsndfile1, libsoxr0,
 * libebur128-1, libgpiod2 and libpulse0. See docs/c-api.md.
 */
#ifndef SFX_H
#define SFX_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; sfx_version() gives the library's. The major version is the
 * library's SONAME (libsfx.so.0): a new major version may break this API. */
#define SFX_VERSION_MAJOR 0
#define SFX_VERSION_MINOR 1
#define SFX_VERSION_PATCH 0

/* What the functions return: SFX_OK, or one of these (negative), with sfx_last_error(). */
typedef enum sfx_status {
    SFX_OK = 0,
    SFX_ERROR_NULL = -1,      /* a required pointer argument is NULL */
    SFX_ERROR_CLOSED = -2,    /* the engine was closed (or the handle never was an engine) */
    SFX_ERROR_RANGE = -3,     /* a number is out of its range; the message gives the range */
    SFX_ERROR_DEVICE = -4,    /* the sound device cannot be opened */
    SFX_ERROR_SOUND = -5,     /* unknown sound, name or id; a file that cannot be decoded */
    SFX_ERROR_REJECTED = -6,  /* the play did not start (outranked, queue full, muted alert) */
    SFX_ERROR_HAPTICS = -7,   /* nothing to vibrate with, or the vibrator failed */
    SFX_ERROR_FAILED = -8     /* anything else; the message says what */
} sfx_status;

/* An open engine. Opaque: only sfx_open makes one. */
typedef struct sfx_engine sfx_engine;

/* A loaded sound: 1000–1999 sfx's bundled system sounds, 2000–65535 other system sounds,
 * 65536 and up sounds loaded from a file or memory (never reused within a process). */
typedef uint32_t sfx_sound;

/* One play of a sound. Never 0; never reused within a process. */
typedef uint64_t sfx_voice;

/* Groups of voices, for group gain, mute and stop. Any number 0…7 is a group. */
typedef enum sfx_group {
    SFX_GROUP_EFFECTS = 0,    /* the default */
    SFX_GROUP_UI = 1,
    SFX_GROUP_ALERTS = 2,
    SFX_GROUP_MUSIC = 3
} sfx_group;
#define SFX_GROUP_COUNT 8

/* Priorities, 0…255: when every voice is busy, the lowest priority (then the oldest) gives way
 * to a new play of the same or higher priority; a play outranked by every voice is rejected. */
#define SFX_PRIORITY_LOW 64
#define SFX_PRIORITY_NORMAL 128
#define SFX_PRIORITY_HIGH 192
#define SFX_PRIORITY_CRITICAL 255

/* How a play ended. */
typedef enum sfx_outcome {
    SFX_FINISHED = 0,         /* played to its end, every loop */
    SFX_STOPPED = 1,          /* sfx_voice_stop, sfx_stop_all, a group stop, sfx_dispose or sfx_close */
    SFX_STOLEN = 2,           /* a newer or more important play took its voice */
    SFX_REJECTED = 3          /* never started; `detail` says why */
} sfx_outcome;

/* Called once per play that sfx_play accepted, on the engine's completion thread (see Threads
 * above). `detail` is NULL except for SFX_REJECTED, where it is one line saying why, and for a
 * play of sfx_play_at_time whose frame had passed, where it says "started N frames late: …";
 * it is valid only during the call. Calling any sfx function from here is safe; a slow callback delays only
 * the completions after it, never the sound. */
typedef void (*sfx_completion_fn)(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data);

/* How to open an engine. Zero means "the default" for every field, so
 * `sfx_config config = {0};` or sfx_config_init() then setting what you need both work. */
typedef struct sfx_config {
    const char *device;       /* ALSA PCM name ("hw:0,0", "plughw:1", "pipewire", …); NULL: "default" */
    uint32_t sample_rate;     /* Hz, 8000…384000; 0: 48000 */
    uint32_t period_frames;   /* frames a period, 16…16384; 0: 128 */
    uint32_t periods;         /* periods in the buffer, 2…64; 0: 3 */
    uint32_t max_voices;      /* voices sounding at once, 1…4096; 0: 64 */
    const char *hrtf;         /* positional voices for headphones: NULL or "off": panned (equal power);
                                 "default": binaural, through the HRTF set Debian's libmysofa1 installs
                                 (MIT KEMAR); anything else: the path of a SOFA file. Stereo output only:
                                 sfx_hrtf_status says what the engine does */
    int32_t while_no_device;  /* when the device cannot be opened (absent, busy, a sound server not up yet)
                                 or is lost later: SFX_NO_DEVICE_MIX (0, the default), _QUEUE or _FAIL */
    uint32_t queue_limit;     /* SFX_NO_DEVICE_QUEUE: plays held at most (beyond, SFX_ERROR_REJECTED);
                                 1…4096; 0: 64 */
} sfx_config;

/* What sfx_open does when the device cannot be opened, and the engine while it is lost:
 * MIX opens all the same and mixes by the clock (plays run and complete, unheard) while it
 * tries the device again every second at most, attaching when it opens (sfx_device_status says
 * which and why); QUEUE does the same but holds plays until the device opens; FAIL makes
 * sfx_open fail with SFX_ERROR_DEVICE. */
typedef enum sfx_no_device {
    SFX_NO_DEVICE_MIX = 0,
    SFX_NO_DEVICE_QUEUE = 1,
    SFX_NO_DEVICE_FAIL = 2
} sfx_no_device;

/* How to play. sfx_play with NULL options plays at volume 1, centred, once, in
 * SFX_GROUP_EFFECTS, at SFX_PRIORITY_NORMAL, with no callback. Start from
 * sfx_play_options_init() (or SFX_PLAY_OPTIONS_DEFAULT): zero is not the default here. */
typedef struct sfx_play_options {
    float volume;             /* 0…16, 1 as recorded */
    float pan;                /* -1 left … 1 right */
    int32_t loops;            /* extra repeats: 0 plays once, -1 loops until stopped */
    uint32_t group;           /* 0…7, an sfx_group */
    uint32_t priority;        /* 0…255, SFX_PRIORITY_* */
    uint32_t max_instances;   /* at most this many voices of this sound at once, the oldest gives way; 0: no cap */
    sfx_completion_fn completion; /* NULL: none */
    void *user_data;          /* passed to completion */
} sfx_play_options;

#define SFX_PLAY_OPTIONS_DEFAULT { 1.0f, 0.0f, 0, SFX_GROUP_EFFECTS, SFX_PRIORITY_NORMAL, 0, NULL, NULL }

/* Where positional voices are heard from: the game's camera or player (OpenAL's listener). The
 * axes are OpenAL's: x right, y up, -z ahead of a listener that has not turned; positions in the
 * game's units (metres unless sfx_world_set says otherwise). The engine starts with the listener
 * at the origin, still, facing -z with +y up, at gain 1 (what sfx_listener_get then gives). */
typedef struct sfx_listener {
    float position[3];
    float velocity[3];        /* units per second, for doppler */
    float forward[3];         /* the way it faces (OpenAL's "at"); any length but 0 */
    float up[3];              /* any length but 0, not parallel to forward; made perpendicular to it */
    float gain;               /* 0…16, multiplies every positional voice */
} sfx_listener;

/* How a source's level falls with its distance d from the listener (OpenAL 1.1, §3.4), with
 * d0 its reference distance, d1 its maximum distance and r its rolloff factor:
 * none 1; inverse d0 / (d0 + r·(d − d0)); linear 1 − r·(min(d, d1) − d0) / (d1 − d0);
 * exponent (d / d0)^−r. The clamped models first clamp d to d0…d1. The gain stays within 0…1. */
typedef enum sfx_distance_model {
    SFX_DISTANCE_NONE = 0,
    SFX_DISTANCE_INVERSE = 1,
    SFX_DISTANCE_INVERSE_CLAMPED = 2,     /* the default */
    SFX_DISTANCE_LINEAR = 3,
    SFX_DISTANCE_LINEAR_CLAMPED = 4,      /* silent beyond the maximum distance (at rolloff 1) */
    SFX_DISTANCE_EXPONENT = 5,
    SFX_DISTANCE_EXPONENT_CLAMPED = 6
} sfx_distance_model;

/* A positional voice's place in the world and how it carries: OpenAL's source properties. Start
 * from sfx_source_default() (or SFX_SOURCE_DEFAULT): zero is not the default here. Coordinates
 * must be finite. */
typedef struct sfx_source {
    float position[3];
    float velocity[3];        /* units per second, for doppler */
    float direction[3];       /* the way it faces, for its cone; 0, 0, 0 (the default): every way */
    int32_t relative;         /* nonzero: position, velocity and direction are in the listener's own
                                 frame (x right, y up, -z ahead) and follow it (the player's own sounds) */
    uint32_t distance_model;  /* an sfx_distance_model; SFX_DISTANCE_INVERSE_CLAMPED */
    float reference_distance; /* 0 and up, units: the distance of full level; 1 */
    float maximum_distance;   /* reference_distance and up, finite: where attenuation stops; FLT_MAX */
    float rolloff_factor;     /* 0…1000: 0 turns distance attenuation off; 1 */
    float cone_inner;         /* degrees 0…360: full level within half of it around `direction`; 360 */
    float cone_outer;         /* degrees cone_inner…360: cone_outer_gain beyond half of it; 360 */
    float cone_outer_gain;    /* 0…1, a straight line in angle between the two; 0 */
    float air_absorption;     /* 0…10 (OpenAL's AL_AIR_ABSORPTION_FACTOR): 1 is air, −0.05 dB a metre at 5 kHz; 0 */
} sfx_source;

#define SFX_SOURCE_DEFAULT { { 0.0f, 0.0f, 0.0f }, { 0.0f, 0.0f, 0.0f }, { 0.0f, 0.0f, 0.0f }, 0, \
    SFX_DISTANCE_INVERSE_CLAMPED, 1.0f, FLT_MAX, 1.0f, 360.0f, 360.0f, 0.0f, 0.0f }

/* What a filter does (RBJ's Audio EQ Cookbook biquads). */
typedef enum sfx_filter_kind {
    SFX_FILTER_LOWPASS = 0,   /* passes below the cutoff, −12 dB an octave above it */
    SFX_FILTER_HIGHPASS = 1,  /* passes above the cutoff, −12 dB an octave below it */
    SFX_FILTER_BANDPASS = 2,  /* passes around the cutoff (its centre); bandwidth cutoff / q */
    SFX_FILTER_HIGHSHELF = 3  /* 1 below the cutoff, `gain` above it, √gain at it */
} sfx_filter_kind;

/* A filter on a voice or a group: a low-pass for a sound behind a wall or "underwater". */
typedef struct sfx_filter {
    uint32_t kind;            /* an sfx_filter_kind */
    float cutoff;             /* Hz, 10…96000 (above 0.45 × the output's rate it acts at 0.45 × the rate) */
    float q;                  /* resonance 0.1…30, 0.7071 Butterworth; for SFX_FILTER_HIGHSHELF its slope 0.1…1 (1 steepest) */
    float gain;               /* 0…1, linear: the passed band's level (the high shelf's above the cutoff) */
} sfx_filter;

/* What sfx_alert did (bits of its `heard` output), and how an alert reached the person (bits of
 * an sfx_alert_fn's `reached`). */
#define SFX_ALERT_PLAYED 1u
#define SFX_ALERT_VIBRATED 2u
#define SFX_ALERT_FLASHED 4u      /* sfx_alert_fn only: a flash backend was asked to flash */
#define SFX_ALERT_QUIET_HOURS 8u  /* sfx_alert_fn only: held back by the do-not-disturb window (captioned only) */

/* An alert's caption for those who cannot hear it (sfx_set_alert_callback): `caption` its words
 * (the sound's name made readable, "Bell", or the caption the settings give), `sound` the sound's
 * name ("bell"), `reached` SFX_ALERT_* bits (0: it reached no one: show the caption). Both
 * strings are valid only during the call. */
typedef void (*sfx_alert_fn)(const char *caption, const char *sound, unsigned reached, void *user_data);

/* ---- The library ---------------------------------------------------------------------- */

/* The library's version, "0.1.0". Never fails; the string is static. Any thread. */
const char *sfx_version(void);

/* The last error of the calling thread: one line naming the thing and the fix, or "" when no
 * sfx call on this thread has failed yet. Valid until the next sfx call on this thread fails.
 * Never NULL. Each thread has its own. */
const char *sfx_last_error(void);

/* Fills `config` with the defaults (all zero: "default", 48000 Hz, 128 × 3, 64 voices, no HRTF).
 * Does nothing when `config` is NULL. Any thread. */
void sfx_config_init(sfx_config *config);

/* Fills `options` with the defaults (volume 1, pan 0, once, effects, normal priority, no cap,
 * no callback). Does nothing when `options` is NULL. Any thread. */
void sfx_play_options_init(sfx_play_options *options);

/* ---- Engines -------------------------------------------------------------------------- */

/* Opens the configured device (NULL `config`: every default) and starts the real-time thread
 * (without the device, as `config->while_no_device` says: by default the engine opens all the
 * same and attaches to the device once it can be opened; see sfx_device_status);
 * the user's settings file (~/.config/sfx/sfx.conf: [output] device when `config->device` is
 * NULL, [alert] vibrate-with-alert, [haptics]) applies as it does to the `sfx` command;
 * `*engine` is set on success, to NULL on failure. SFX_ERROR_NULL without `engine`,
 * SFX_ERROR_RANGE for a number out of range, SFX_ERROR_DEVICE when the device cannot be opened
 * and `config->while_no_device` is SFX_NO_DEVICE_FAIL,
 * SFX_ERROR_SOUND when the bundled sounds are unusable, SFX_ERROR_FAILED for a settings file
 * it cannot read or an HRTF set (`config->hrtf`) it cannot load (the message names it). Any thread. */
int sfx_open(const sfx_config *config, sfx_engine **engine);

/* Whether the engine's device plays: 1 when it is open, 0 when there is none (it never opened,
 * or it was lost: the engine tries it again every second at most), with why in `buffer` (`size`
 * bytes, NUL included: one line naming the device and the fix; "" when it plays). Negative:
 * SFX_ERROR_NULL without `buffer`, SFX_ERROR_RANGE when `size` is too small (as
 * sfx_hrtf_status). Any thread. */
int sfx_device_status(sfx_engine *engine, char *buffer, size_t size);

/* Stops every sound (their completions say SFX_STOPPED), lets the device play what it holds
 * (a few ms), stops the engine's threads and closes the device. The handle stays safe to pass:
 * later calls with it fail with SFX_ERROR_CLOSED, and a second sfx_close too. Any thread,
 * including a completion callback (it then does not wait for that callback). */
int sfx_close(sfx_engine *engine);

/* Waits until no voice sounds and every completion has been delivered, or `timeout_ms` has
 * passed: SFX_OK when idle, SFX_ERROR_FAILED on timeout. Call it before closing to let sounds
 * ring out; an effect bus's tail (an echo, a reverb) is not waited for: it rings on after the
 * voices that fed it have ended. Any thread but a completion callback's (it would wait for itself). */
int sfx_wait_idle(sfx_engine *engine, uint32_t timeout_ms);

/* ---- Sounds --------------------------------------------------------------------------- */

/* The system sound `name` ("tock", "bell", "message-new-instant", …: sfx's theme, then the
 * themes it inherits), decoded on first use. System sounds are never disposed.
 * SFX_ERROR_SOUND for a name no theme has. Any thread. */
int sfx_system_sound(sfx_engine *engine, const char *name, sfx_sound *sound);

/* Decodes a file (WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3, anything libsndfile reads; M4A/AAC,
 * ALAC, WMA through FFmpeg, loaded when first needed) at `path` (bytes, as the file system has
 * them) into a new sound. Sounds are held whole in memory: files longer than 30 s are refused. Decoding happens here, never when the sound plays.
 * Any thread. */
int sfx_load_file(sfx_engine *engine, const char *path, sfx_sound *sound);

/* Decodes an encoded sound file held in memory (`size` bytes of WAV, Ogg, FLAC, … as
 * sfx_load_file reads them) into a new sound. The bytes are copied; free them when it returns.
 * Any thread. */
int sfx_load_memory(sfx_engine *engine, const void *data, size_t size, sfx_sound *sound);

/* Converts `frames` frames of interleaved float PCM (-1…1, `channels` 1 or 2, `sample_rate`
 * 1000…768000 Hz) into a new sound. The samples are copied. Any thread. */
int sfx_load_pcm(sfx_engine *engine, const float *samples, size_t frames, uint32_t channels,
                 uint32_t sample_rate, sfx_sound *sound);

/* Forgets a sound loaded by sfx_load_*. Its voices fade out (SFX_STOPPED); its memory is freed
 * once the real-time thread no longer reads it. SFX_ERROR_SOUND for a system sound or an id
 * that names no loaded sound. Any thread. */
int sfx_dispose(sfx_engine *engine, sfx_sound sound);

/* ---- Playing -------------------------------------------------------------------------- */

/* Starts `sound` and never blocks: the real-time thread starts it in the next period it
 * renders. `options` NULL: the defaults. `*voice` (when `voice` is not NULL) is set on
 * success, to 0 on failure. On SFX_OK the completion (if any) is called exactly once, and may
 * be called before sfx_play returns; on an error it is never called: SFX_ERROR_RANGE for a
 * number out of range, SFX_ERROR_SOUND for an unknown sound, SFX_ERROR_REJECTED when the
 * command queue is full. Any thread, including a completion callback. */
int sfx_play(sfx_engine *engine, sfx_sound sound, const sfx_play_options *options, sfx_voice *voice);

/* ---- The engine's clock and plays at a time ------------------------------------------ */

/* The engine's clock counts frames of its output at the device's rate from the first frame it
 * mixed (0, when the engine opened), through device losses and reopenings. */

/* Sets `*frame` to the frame heard at the DAC now: the device's delay (snd_pcm_delay, what the
 * device or the sound server behind it holds) read every 50 ms, run on by CLOCK_MONOTONIC.
 * `*next_schedulable` (when not NULL) to the earliest frame sfx_play_at_time can still start a
 * sound on exactly. SFX_ERROR_NULL without `frame`. Any thread. */
int sfx_clock_now(sfx_engine *engine, int64_t *frame, int64_t *next_schedulable);

/* Sets `*nanoseconds` to the CLOCK_MONOTONIC instant at which `frame` is (or was) heard at the
 * DAC. SFX_ERROR_NULL without `nanoseconds`; SFX_ERROR_DEVICE before the device first said where
 * its DAC is. Any thread. */
int sfx_clock_monotonic(sfx_engine *engine, int64_t frame, int64_t *nanoseconds);

/* sfx_play so that the sound's first frame is frame `frame` of the output, to the sample.
 * `options` as sfx_play's, but `max_instances` is not used. A frame already past plays at once,
 * and its completion's `detail` says how many frames late it started; a frame ahead waits inside the mixer, never holding up
 * other commands: at most 64 plays wait at once, and one more completes SFX_REJECTED with the
 * reason ("64 plays at future times wait already"). Stopping the voice, its group or everything
 * cancels a play that waits (SFX_STOPPED). Errors as sfx_play's. Any thread, including a
 * completion callback. */
int sfx_play_at_time(sfx_engine *engine, sfx_sound sound, int64_t frame, const sfx_play_options *options,
                     sfx_voice *voice);

/* Fades a voice out over `fade_ms` (0…60000; 0 is the 0.3 ms declick); its completion says
 * SFX_STOPPED. A voice that has already ended: SFX_OK, nothing done. Any thread. */
int sfx_voice_stop(sfx_engine *engine, sfx_voice voice, uint32_t fade_ms);

/* Changes a sounding voice's volume (0…16), smoothly. A voice that has ended: SFX_OK, nothing
 * done. Any thread. */
int sfx_voice_set_volume(sfx_engine *engine, sfx_voice voice, float volume);

/* Changes a sounding voice's pan (-1…1), smoothly. A voice that has ended: SFX_OK, nothing
 * done. Any thread. */
int sfx_voice_set_pan(sfx_engine *engine, sfx_voice voice, float pan);

/* Fades out every voice over `fade_ms` (0…60000). Any thread. */
int sfx_stop_all(sfx_engine *engine, uint32_t fade_ms);

/* Fades out every voice of `group` (0…7) over `fade_ms` (0…60000). Any thread. */
int sfx_group_stop(sfx_engine *engine, uint32_t group, uint32_t fade_ms);

/* Sets the gain of `group` (0…7) to `gain` (0…16), smoothly; every group starts at 1. Any thread. */
int sfx_group_set_gain(sfx_engine *engine, uint32_t group, float gain);

/* Mutes (`muted` nonzero) or unmutes `group` (0…7), smoothly; its voices go on silently.
 * Any thread. */
int sfx_group_set_muted(sfx_engine *engine, uint32_t group, int muted);

/* ---- Sound in a game's world ---------------------------------------------------------- */

/* A positional voice (sfx_play_at, sfx_play_source) takes its level, pan and pitch from where it
 * is relative to the listener: distance (the source's distance model), cone, doppler (the
 * listener's and its velocity), air absorption; and, with sfx_config's `hrtf`, is rendered
 * binaurally. Each change reaches the real-time thread as one command; voices follow at the next
 * spatial update (every 128 frames, gliding, so they never click). A positional voice too quiet
 * to hear is virtual: it costs almost nothing, keeps its place in time and is heard again once
 * it is audible. */

/* Sets where positional voices are heard from; call it as often as the camera moves.
 * SFX_ERROR_NULL without `listener`, SFX_ERROR_RANGE for a coordinate that is not finite, a
 * zero `forward` or `up`, the two parallel, or a gain outside 0…16. Any thread. */
int sfx_listener_set(sfx_engine *engine, const sfx_listener *listener);

/* Fills `*listener` with the listener last set (at first: the origin, facing -z, +y up, gain 1).
 * SFX_ERROR_NULL without `listener`. Any thread. */
int sfx_listener_get(sfx_engine *engine, sfx_listener *listener);

/* Sets what every positional voice shares (OpenAL's AL_DOPPLER_FACTOR and AL_SPEED_OF_SOUND):
 * `doppler_factor` 0…100 (0 turns doppler off, 1 is physical; the engine starts at 1),
 * `speed_of_sound` in units per second, 0.001 and up, finite (343.3, air when a unit is a
 * metre), `meters_per_unit` 0.000001…1000000 (1; for air absorption, given per metre).
 * SFX_ERROR_RANGE otherwise, and nothing changes. Any thread. */
int sfx_world_set(sfx_engine *engine, float doppler_factor, float speed_of_sound, float meters_per_unit);

/* Fills `source` with OpenAL's defaults (SFX_SOURCE_DEFAULT): at the origin, still, no
 * direction, not relative, inverse clamped distance from 1 unit, no maximum distance, rolloff
 * 1, no cone (360, 360, outer gain 0), no air absorption. Does nothing when `source` is NULL.
 * Any thread. */
void sfx_source_default(sfx_source *source);

/* sfx_play of a positional voice at `x`, `y`, `z` (finite), still, with the default source
 * (sfx_source_default). `options` as sfx_play's (NULL: the defaults), but `pan` is not used (it
 * must still be in range): where the voice is decides it. Errors and completion as sfx_play's;
 * SFX_ERROR_RANGE for a coordinate that is not finite. Any thread, including a completion callback. */
int sfx_play_at(sfx_engine *engine, sfx_sound sound, float x, float y, float z, const sfx_play_options *options,
                sfx_voice *voice);

/* sfx_play of a positional voice with every property of `*source`, as sfx_play_at.
 * SFX_ERROR_NULL without `source`, SFX_ERROR_RANGE for a property out of its range (see
 * sfx_source). Any thread, including a completion callback. */
int sfx_play_source(sfx_engine *engine, sfx_sound sound, const sfx_source *source, const sfx_play_options *options,
                    sfx_voice *voice);

/* Moves a positional voice to `x`, `y`, `z` (finite: SFX_ERROR_RANGE otherwise). A voice that
 * is not positional, or has ended: SFX_OK, nothing done. Any thread. */
int sfx_voice_set_position(sfx_engine *engine, sfx_voice voice, float x, float y, float z);

/* Sets a positional voice's velocity (units per second, finite), for doppler. A voice that is
 * not positional, or has ended: SFX_OK, nothing done. Any thread. */
int sfx_voice_set_velocity(sfx_engine *engine, sfx_voice voice, float x, float y, float z);

/* Makes a positional voice directional (OpenAL's cone): full level within `inner` degrees
 * around the direction `dx`, `dy`, `dz`, `outer_gain` beyond `outer` degrees, a straight line
 * between. `inner` 0…360, `outer` `inner`…360, `outer_gain` 0…1, the direction finite (0, 0, 0:
 * every way); SFX_ERROR_RANGE otherwise. A voice that is not positional, or has ended: SFX_OK,
 * nothing done. Any thread. */
int sfx_voice_set_cone(sfx_engine *engine, sfx_voice voice, float inner, float outer, float outer_gain,
                       float dx, float dy, float dz);

/* Makes a positional voice's position, velocity and direction relative to the listener
 * (`relative` nonzero: x right, y up, -z ahead, following it) or to the world (0). A voice that
 * is not positional, or has ended: SFX_OK, nothing done. Any thread. */
int sfx_voice_set_relative(sfx_engine *engine, sfx_voice voice, int relative);

/* Replaces every source property of a voice; a voice played by sfx_play becomes positional (its
 * pan no longer counts). SFX_ERROR_NULL without `source`, SFX_ERROR_RANGE for a property out of
 * its range (see sfx_source). A voice that has ended: SFX_OK, nothing done. Any thread. */
int sfx_voice_set_source(sfx_engine *engine, sfx_voice voice, const sfx_source *source);

/* Puts a filter on a voice (any voice, positional or not), glides it to new settings, or takes
 * it off (`filter` NULL); changes glide over 5 ms, so they never click. SFX_ERROR_RANGE for a
 * kind that is no sfx_filter_kind or a number out of its range (see sfx_filter). A voice that
 * has ended: SFX_OK, nothing done. Any thread. */
int sfx_voice_set_filter(sfx_engine *engine, sfx_voice voice, const sfx_filter *filter);

/* Puts a filter on everything `group` (0…7) plays, glides it, or takes it off (`filter` NULL),
 * as sfx_voice_set_filter. SFX_ERROR_RANGE for a group or a filter out of range. Any thread. */
int sfx_group_set_filter(sfx_engine *engine, uint32_t group, const sfx_filter *filter);

/* What renders positional voices, as one line into `buffer` (`size` bytes, NUL included): "off";
 * "off: HRTF needs stereo output, …"; or the SOFA file's name, its taps and rate
 * ("default.sofa, 48 taps at 48000 Hz"). SFX_ERROR_NULL without `buffer`, SFX_ERROR_RANGE when
 * `size` is too small (the message says how many bytes it needs; `buffer` then holds as much as
 * fits, NUL-terminated, if `size` is not 0). Any thread. */
int sfx_hrtf_status(sfx_engine *engine, char *buffer, size_t size);

/* ---- Effect buses --------------------------------------------------------------------- */

/* SFX_EFFECT_BUS_COUNT buses, 0…3, each running a reverb or an echo (wet only) on what voices
 * send it (sfx_voice_set_send), its output returning into a group, whose gain, mute, filter and
 * stop then apply to it. A bus starts empty; every voice starts sending 0 to each bus. */
#define SFX_EFFECT_BUS_COUNT 4

/* Puts a reverb on `bus` (0…3), one of the presets by name: "room", "hall", "cave",
 * "livingRoom", "bathroom", "stoneRoom", "arena", "hangar", "underwater" (EFX's presets of those
 * names); its output returns into `return_group` (0…7; SFX_GROUP_EFFECTS for most). The reverb
 * is made here (its delay lines allocated), off the real-time thread, and replaces the bus's
 * effect whole. SFX_ERROR_NULL without `preset`, SFX_ERROR_SOUND for a name no preset has (the
 * message lists them), SFX_ERROR_RANGE for a bus or group out of range, SFX_ERROR_REJECTED
 * when the command queue is full (nothing changes). Any thread. */
int sfx_effect_set_reverb(sfx_engine *engine, uint32_t bus, const char *preset, uint32_t return_group);

/* Puts a ping-pong echo on `bus` (0…3): taps every `delay` seconds (0.001…2, to the frame),
 * alternating left and right, each `feedback` (0…0.95) times the one before, the first `wet`
 * (0…1) times the input, low-passed in the loop by `damping` (0…0.99; 0: none); its output
 * returns into `return_group` (0…7). SFX_ERROR_RANGE for a number out of range,
 * SFX_ERROR_REJECTED when the command queue is full. Any thread. */
int sfx_effect_set_echo(sfx_engine *engine, uint32_t bus, float delay, float feedback, float wet, float damping,
                        uint32_t return_group);

/* Takes the effect off `bus` (0…3; SFX_ERROR_RANGE otherwise); what the voices send it is then
 * dropped. A bus without an effect: SFX_OK. SFX_ERROR_REJECTED when the command queue is full.
 * Any thread. */
int sfx_effect_clear(sfx_engine *engine, uint32_t bus);

/* Sets how much of a voice goes to `bus` (0…3): `level` 0…1, linear, gliding over 5 ms, beside
 * what it plays directly (a send does not take from it). SFX_ERROR_RANGE for a bus or level out
 * of range. A voice that has ended: SFX_OK, nothing done. Any thread. */
int sfx_voice_set_send(sfx_engine *engine, sfx_voice voice, uint32_t bus, float level);

/* ---- Sound events and banks ----------------------------------------------------------- */

/* A sound bank (docs/banks.md): a JSON file of named events, each a set of sounds chosen at
 * random, round robin or shuffled, with pitch and volume drawn per play, a cooldown, a cap on
 * its voices, a priority, a group and a default position. */
typedef struct sfx_bank sfx_bank;

/* Loads the bank at `path` and its sounds (decoded now). With `watch` nonzero it follows edits
 * to the file and its sounds while the engine runs: changed sounds are decoded off the
 * real-time thread and the next trigger plays them; a broken edit keeps the last good bank.
 * `*bank` is set on success, to NULL on failure. SFX_ERROR_SOUND for a bank with problems: the
 * message names the file, line and key of the first (and how many more). Any thread. */
int sfx_bank_load(sfx_engine *engine, const char *path, int watch, sfx_bank **bank);

/* Triggers the event `name` of `bank`, as sfx_play does a sound: `volume` (0…16) multiplies the
 * event's drawn volume; `completion` and `user_data` as in sfx_play_options; `*voice` (when not
 * NULL) its voice. SFX_ERROR_SOUND for a name the bank has not, SFX_ERROR_REJECTED for a play
 * the event refuses (inside its cooldown; the message says so), never completed then. Any thread. */
int sfx_event_play(sfx_engine *engine, sfx_bank *bank, const char *name, float volume,
                   sfx_completion_fn completion, void *user_data, sfx_voice *voice);

/* How the bank's reloads went: `*reloads` (when not NULL) the edits reloaded since it was
 * loaded; `problem` (when not NULL, `problem_size` bytes) why the last edit was refused, one line
 * naming the file, line and key ("footsteps.json:12: event \"step\": …"; the bank plays the
 * version before it), or "" when the last reload (or the load) went well. SFX_ERROR_RANGE when
 * the line does not fit (as much as fits is copied, NUL-terminated). Any thread. */
int sfx_bank_status(sfx_bank *bank, unsigned *reloads, char *problem, size_t problem_size);

/* Stops following the bank's files and forgets the handle; its voices play on, its events can
 * no longer be triggered through it. SFX_ERROR_CLOSED for a bank already closed. Any thread. */
int sfx_bank_close(sfx_bank *bank);

/* ---- Alerts and vibration ------------------------------------------------------------- */

/* Plays an alert sound (group SFX_GROUP_ALERTS, SFX_PRIORITY_CRITICAL) unless the output is
 * muted — sfx's mute flag (`sfx mute`), the device's Master switch off or volume at zero, or
 * no usable device — and vibrates then (the `vibrate-with-alert` setting may say always or
 * never). `*heard` (when not NULL) gets SFX_ALERT_PLAYED and/or SFX_ALERT_VIBRATED; `*voice`
 * (when not NULL) the voice when it played, else 0. `completion` and `user_data` as in
 * sfx_play_options; called once when it played, never otherwise. SFX_ERROR_REJECTED when it
 * could neither play nor vibrate (the message says why). Reads the mixer or the sound server
 * (up to 500 ms when a server does not answer): call it from an ordinary thread, not a
 * completion callback if you mind the wait. */
int sfx_alert(sfx_engine *engine, sfx_sound sound, float volume, sfx_completion_fn completion,
              void *user_data, unsigned *heard, sfx_voice *voice);

/* Calls `callback` with every alert's caption (each sfx_alert, whether it played, vibrated, or
 * neither), on the engine's completion thread after the completions before it, as sfx's alert
 * policy says (`[alert] caption` in sfx.conf; always by default). NULL stops the calls. Calling
 * any sfx function from the callback is safe. Any thread. */
int sfx_set_alert_callback(sfx_engine *engine, sfx_alert_fn callback, void *user_data);

/* Vibrates on the first haptic backend found (game-pad rumble, GPIO, sysfs vibrator, the
 * configured command): `count` durations in ms alternating on and off, starting with on
 * (Android's waveform; each 1…10000 ms, at most 256), or the default 400 ms buzz when
 * `pattern_ms` is NULL or `count` is 0. Replaces a running vibration. SFX_ERROR_HAPTICS when
 * there is nothing to vibrate with (the message says why and what to do), SFX_ERROR_RANGE for
 * a bad pattern. Any thread. */
int sfx_vibrate(sfx_engine *engine, const uint32_t *pattern_ms, size_t count);

/* Stops a running vibration; the actuator is left off. Any thread. */
int sfx_vibrate_cancel(sfx_engine *engine);

/* ---- Recording ------------------------------------------------------------------------- */

/* A voice message or any recording: the capture device into a file, with a level meter, a
 * count-up, an optional prompt played first, and limits. Zero means the default in every field. */
typedef struct sfx_record_options {
    const char *path;         /* the file to write (it must not exist); NULL: a new file in
                                 $XDG_DATA_HOME/sfx/recordings, private to the user */
    const char *format;       /* "m4a" (AAC-LC, what every phone plays; the default), "opus", "vorbis",
                                 "mp3", "flac" or "wav"; NULL: from the path's extension, else m4a */
    const char *device;       /* the ALSA capture PCM; NULL: "default" */
    uint32_t sample_rate;     /* Hz; 0: 48000 */
    uint32_t channels;        /* 1 or 2; 0: 1 */
    float max_seconds;        /* stops by itself after this long; 0: no limit */
    float min_seconds;        /* shorter recordings are removed when stopped (SFX_ERROR_REJECTED); 0: none */
    sfx_sound prompt;         /* a sound played (on the engine given to sfx_record_start) and waited
                                 for before capture starts, as a voice message's tone; 0: none */
    uint32_t fragmented;      /* m4a: 1 keeps the fragmented MPEG-4 written while recording (for
                                 streaming its fragments); 0: a standard M4A, rewritten at stop */
    uint32_t voice_processing; /* 1: a voice as phones process it: noise suppression, automatic
                                 gain to -23 dBFS, an 80 Hz high-pass (speexdsp, loaded then from
                                 libspeexdsp1: SFX_ERROR_FAILED without it); 0: the frames as captured */
    uint32_t trim_silence;    /* 1: leading and trailing silence left out (voice activity), 0.2 s
                                 kept each side; the duration and min_seconds are the trimmed length */
} sfx_record_options;

typedef struct sfx_recorder sfx_recorder;

/* Starts recording: plays the prompt (if any, on `engine`, which may be NULL without one), opens
 * the capture device, creates the file and captures on a real-time thread of its own.
 * `*recorder` is set on success, to NULL on failure: SFX_ERROR_NULL without `recorder`,
 * SFX_ERROR_RANGE for an option out of range or an unknown format, SFX_ERROR_DEVICE when the
 * device cannot be opened, SFX_ERROR_FAILED when the file cannot be created (the message names it).
 * Any thread. */
int sfx_record_start(sfx_engine *engine, const sfx_record_options *options, sfx_recorder **recorder);

/* The level of channel 0 now, in dBFS (average over the last 100 ms, and peak, held); -160 for
 * silence. Either pointer may be NULL. For a meter drawn while recording. Any thread. */
int sfx_record_level(sfx_recorder *recorder, float *average_db, float *peak_db);

/* Seconds recorded so far (the count-up); `*finished` (when not NULL) 1 once the recording
 * ended by itself (max_seconds, a full disk, a lost device: sfx_record_stop then says how). */
int sfx_record_elapsed(sfx_recorder *recorder, double *seconds, int *finished);

/* Stops (if still recording), completes the file and frees the recorder (the handle is then
 * invalid). SFX_OK with the file's path in `path` (`size` bytes, NUL included; may be NULL) and
 * its duration in `*seconds` (may be NULL); SFX_ERROR_REJECTED when it was shorter than
 * min_seconds (the file is removed; the message says so); SFX_ERROR_FAILED or SFX_ERROR_DEVICE
 * when it ended on an error (a full disk or a lost device keeps what was written: the message
 * says where); SFX_ERROR_RANGE when `size` is too small for the path (the recording is complete
 * all the same; the message names it). Any thread. */
int sfx_record_stop(sfx_recorder *recorder, char *path, size_t size, double *seconds);

/* Stops, removes the file and frees the recorder. Any thread. */
int sfx_record_cancel(sfx_recorder *recorder);

#ifdef __cplusplus
}
#endif

#endif /* SFX_H */
