/*
 * libgpiod on demand: linked, it loads at every start of `sfx`, while only a GPIO vibrator uses
 * it. The functions SFXHaptics calls are defined here, hidden in sfx's own image, and go through
 * pointers that the first call fills (dlopen, dlsym). Without the library, opening a chip fails
 * with ELIBACC ("Can not access a needed shared library"), which the GPIO backend reports in its
 * one line. Package.swift declares CGPIOD without pkg-config and its module map links nothing.
 */
#include <errno.h>

/* Before the libraries' headers, whose declarations are made hidden: the C library's must not be. */
#include "sfx_on_demand.h"

#pragma GCC visibility push(hidden)
#include <gpiod.h>
#pragma GCC visibility pop

#include "csfxhaptics.h"

#define GPIOD_FUNCTIONS(X) \
    X(gpiod_chip_close) X(gpiod_chip_get_line) X(gpiod_chip_open_lookup) X(gpiod_line_release) \
    X(gpiod_line_request_output_flags) X(gpiod_line_set_value)

static struct { GPIOD_FUNCTIONS(SFX_ON_DEMAND_FIELD) } gpiod;
/* Its error line is not used: ELIBACC is what the GPIO backend reports. */
static sfx_on_demand gpiod_loader = {
    .sonames = {"libgpiod.so.2"}, .functions = {GPIOD_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(gpiod),
    .install = "install Debian's libgpiod2", .upgrade = "install Debian's libgpiod2",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

struct gpiod_chip *gpiod_chip_open_lookup(const char *description)
{
    if (!sfx_on_demand_ready(&gpiod_loader)) {
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
