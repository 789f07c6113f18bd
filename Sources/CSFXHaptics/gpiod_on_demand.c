/*
 * libgpiod on demand: linked, it loads at every start of `sfx`, while only a GPIO vibrator uses
 * it. The functions SFXHaptics calls are defined here, hidden in sfx's own image, and go through
 * pointers that the first call fills (dlopen, dlsym). Without the library, opening a chip fails
 * with ELIBACC ("Can not access a needed shared library"), which the GPIO backend reports in its
 * one line. Package.swift declares CGPIOD without pkg-config and its module map links nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#pragma GCC visibility push(hidden)
#include <gpiod.h>
#pragma GCC visibility pop

#include "csfxhaptics.h"

#define GPIOD_FUNCTIONS(X) \
    X(gpiod_chip_close) X(gpiod_chip_get_line) X(gpiod_chip_open_lookup) X(gpiod_line_release) \
    X(gpiod_line_request_output_flags) X(gpiod_line_set_value)

static struct {
#define SFX_FIELD(name) __typeof__(name) *name;
    GPIOD_FUNCTIONS(SFX_FIELD)
#undef SFX_FIELD
} gpiod;

static pthread_once_t gpiod_once = PTHREAD_ONCE_INIT;
static int gpiod_loaded;

static void load_gpiod(void)
{
    void *library = dlopen("libgpiod.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library)
        return;
    int found = 1;
#define SFX_LOOK_UP(name) found = found && (gpiod.name = (__typeof__(name) *)dlsym(library, #name)) != NULL;
    GPIOD_FUNCTIONS(SFX_LOOK_UP)
#undef SFX_LOOK_UP
    gpiod_loaded = found;
}

struct gpiod_chip *gpiod_chip_open_lookup(const char *description)
{
    pthread_once(&gpiod_once, load_gpiod);
    if (!gpiod_loaded) {
        errno = ELIBACC;
        return NULL;
    }
    return gpiod.gpiod_chip_open_lookup(description);
}

/* The others are only ever called with a chip or a line, so the library is loaded by then. */
void gpiod_chip_close(struct gpiod_chip *chip) { gpiod.gpiod_chip_close(chip); }

struct gpiod_line *gpiod_chip_get_line(struct gpiod_chip *chip, unsigned int offset) { return gpiod.gpiod_chip_get_line(chip, offset); }

int gpiod_line_request_output_flags(struct gpiod_line *line, const char *consumer, int flags, int value)
{
    return gpiod.gpiod_line_request_output_flags(line, consumer, flags, value);
}

int gpiod_line_set_value(struct gpiod_line *line, int value) { return gpiod.gpiod_line_set_value(line, value); }

void gpiod_line_release(struct gpiod_line *line) { gpiod.gpiod_line_release(line); }
