/*
 * What the PCM and the ctl plugin share: the card's state directory, its mapped state file,
 * the event log and the clock.
 */
#pragma once

#include <alsa/asoundlib.h>
#include <stdint.h>
#include "sfxcard.h"

/* The card's internals stay out of the plugin's exported symbols. */
#pragma GCC visibility push(hidden)

/** Marks a callback parameter the card does not need. */
#define UNUSED __attribute__((unused))

/** Bytes of events buffered before a write to events.log. */
#define CARD_LOG_CAPACITY 8192

/** One plugin instance's view of the card. */
typedef struct card {
    char *dir;                  /* the state directory */
    int dir_fd;                 /* the directory, opened once checked: every file is opened at it */
    sfxcard_state *state;       /* MAP_SHARED mapping of <dir>/state */
    int log_fd;                 /* <dir>/events.log, O_APPEND */
    size_t log_used;
    uint64_t log_flushed_ns;    /* when the buffer was last written out */
    char log[CARD_LOG_CAPACITY];
} card;

/** CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t card_now_ns(void);

/**
 * Opens the card in `dir`: creates the directory (0700) and a default state file if missing,
 * maps the state and opens the log. The directory must be private (a directory, not a symbolic
 * link, owned by this process's user, writable by no one else) and so must the state file (a
 * regular file of at least the mapped size); no file in it is opened through a symbolic link.
 * Returns 0, -ENODEV while the card is unplugged, or another negative errno after printing one
 * line naming the problem.
 */
int card_open(card *c, const char *dir);
/**
 * Opens `name` in the card's directory for writing, created anew (O_EXCL, 0600, never through a
 * symbolic link). Returns the descriptor or -errno.
 */
int card_create_file(card *c, const char *name);
/* Opens an existing regular file of the card's directory for reading and writing, never through
 * a symbolic link. Returns the descriptor or -errno (-ENOENT when there is none). */
int card_open_file(card *c, const char *name);

/** Flushes the log and releases everything card_open acquired. */
void card_close(card *c);

/** Appends "<now ns> <formatted text>\n" to the log buffer, flushing when it runs full. */
void card_log(card *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Like card_log, stamped with `ns` instead of now. */
void card_log_at(card *c, uint64_t ns, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** Writes the buffered events out when the last write was 200 ms or more ago. */
void card_log_tick(card *c);
/** Writes the buffered events to events.log. */
void card_log_flush(card *c);

/** Consumes a poll timer's expirations (a timerfd opened TFD_NONBLOCK). Returns 0 or -errno. */
int card_timer_clear(int timer_fd);

/** Atomic 32-bit accessors for the shared state. */
uint32_t card_get(const uint32_t *field);
void card_set(uint32_t *field, uint32_t value);

/**
 * Finds the `dir` entry of a plugin's configuration; other recognised keys are left to the
 * caller through `other` (called for every key that is not comment/type/hint/dir), which
 * returns 0 or a negative errno. Returns 0 or a negative errno after printing the problem.
 */
int card_parse_config(snd_config_t *conf, const char **dir,
                      int (*other)(void *ctx, const char *key, snd_config_t *value), void *ctx);

#pragma GCC visibility pop
