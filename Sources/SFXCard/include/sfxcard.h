/*
 * sfxcard — a virtual sound card for machines without one.
 *
 * libsfxcard.so is an ALSA external plugin: an ioplug PCM (playback and capture) and a ctl_ext
 * mixer in one library. Playback is consumed in real time on CLOCK_MONOTONIC (frame n of a
 * stream reaches the "DAC" at start + n / rate), recorded to a float WAV and timed in an event
 * log; capture plays a sound file into the stream in real time; a small shared state file lets
 * another process inject faults and move the Master control.
 *
 * Loading: alsa-lib finds the plugin through a configuration file (SFXCardSupport's VirtualCard
 * writes one; point ALSA_CONFIG_PATH at it):
 *
 *     </usr/share/alsa/alsa.conf>
 *     pcm_type.sfxcard { lib "/abs/path/libsfxcard.so" }
 *     ctl_type.sfxcard { lib "/abs/path/libsfxcard.so" }
 *     pcm.sfxcard { type sfxcard dir "/run/user/1000/mycard" }
 *     ctl.sfxcard { type sfxcard dir "/run/user/1000/mycard" }
 *
 * PCM parameters: `dir` (required: the card's state directory, created 0700 if missing; it must
 * be private — a directory, not a symbolic link, owned by the user, writable by no one else —
 * or the open fails), `capture`
 * (a sound file libsndfile reads, played into capture streams; silence without it), `loop`
 * (yes/no: repeat the capture file), `record` (yes/no, default yes: write playback.wav; no
 * spares the disk writes, for CPU measurements), `pointer` (period/frame, default period: how the
 * playback hardware pointer moves; the DAC plays frame by frame either way), `rewind`
 * (honest/ignore, default honest: ignore accepts a playback rewind and plays on as if it had not
 * happened, as a sound server's plugin may), `onset_threshold` (absolute sample value that counts as
 * sound, default 0.001), `onset_silence_ms` (silence that must precede an onset, default 10).
 * The ctl plugin takes `dir` only.
 *
 * Files in the state directory (each created 0600, none ever opened through a symbolic link;
 * the state file must be a regular file of the user's that no one else can write, at least 64
 * bytes long, before it is mapped):
 *   state           the layout below, mmap'd MAP_SHARED by every PCM and ctl instance
 *   events.log      one event per line: CLOCK_MONOTONIC nanoseconds, a name, key=value pairs
 *   playback.wav    float32 recording of what reached the DAC (after Master) in the first
 *                   playback configuration; each later hw_params setup with a recording gets
 *                   the next free name: playback-2.wav, playback-3.wav …
 */
#pragma once

#include <stdint.h>

/** "SFXCARD1": the first 8 bytes of a state file. */
#define SFXCARD_STATE_MAGIC "SFXCARD1"
/** Layout version stored in `version`. */
#define SFXCARD_STATE_VERSION 1u
/** Highest Master volume; 0 mutes, 100 is 0 dB, each step is 0.5 dB. */
#define SFXCARD_VOLUME_MAX 100u
/** dB of volume step 1 in hundredths (volume v gives (v - 100) * 0.5 dB). */
#define SFXCARD_VOLUME_MIN_CENTIBEL (-5000)
#define SFXCARD_VOLUME_STEP_CENTIBEL 50
/** The card's id when the state file names none. */
#define SFXCARD_DEFAULT_ID "sfxcard"

/**
 * The card's shared state: a 64-byte file, little-endian, naturally aligned 32-bit fields,
 * read and written with atomic 32-bit loads and stores. Byte offsets are fixed:
 *
 *   0  magic[8]        "SFXCARD1"
 *   8  version         1
 *  12  size            64
 *  16  xrun_requests   each increment forces one xrun on every running stream
 *  20  disconnected    nonzero: the card is unplugged (calls fail with -ENODEV, opens too)
 *  24  master_switch   0 = Master off (silence reaches the DAC), 1 = on
 *  28  master_volume   0 ... SFXCARD_VOLUME_MAX
 *  32  underrun_requests  each increment makes every running playback stream underrun as a
 *                      held-up client does: its DAC plays all that was written, then the stream
 *                      is in XRUN (an injected xrun drops what is queued, as a suspend does)
 *  36  refuse_open     nonzero: a positive errno (EBUSY, EACCES, …) that every PCM open fails
 *                      with while the card is plugged in, as a card held by another program or
 *                      one the user may not open does; 0 = opens work
 *  40  card_index      the card's index now (as /proc/asound/cardN numbers a card); it may
 *                      change when the card is plugged in again
 *  44  card_id[16]     the card's stable name (as /proc/asound/cardN/id), NUL-padded; empty
 *                      means "sfxcard"
 *  60  reserved[1]     zero
 *
 * A PCM definition may name the card it wants (`card "Speaker"` or `card 1`, from @args
 * [CARD]): its open fails with -ENODEV unless that is the card's id or its index now, as
 * hw:CARD=… does for a card that is not there.
 */
typedef struct sfxcard_state {
    char magic[8];
    uint32_t version;
    uint32_t size;
    uint32_t xrun_requests;
    uint32_t disconnected;
    uint32_t master_switch;
    uint32_t master_volume;
    uint32_t underrun_requests;
    uint32_t refuse_open;
    uint32_t card_index;
    char card_id[16];
    uint32_t reserved[1];
} sfxcard_state;

_Static_assert(sizeof(sfxcard_state) == 64, "the state file is 64 bytes");
