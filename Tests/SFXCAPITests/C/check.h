/*
 * What the C test programs share: CHECK and CHECK_STATUS print "FAIL <line>: …" with sfx's last
 * error and exit 1, so the Swift test that runs a program shows the first check that failed.
 */
#ifndef SFX_TEST_CHECK_H
#define SFX_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <sfx.h>

#define CHECK(condition, what) do { if (!(condition)) { \
    printf("FAIL %d: %s (last error: %s)\n", __LINE__, what, sfx_last_error()); exit(1); } } while (0)
#define CHECK_STATUS(call, expected) do { int status_ = (call); if (status_ != (expected)) { \
    printf("FAIL %d: %s gave %d, not %d (last error: %s)\n", __LINE__, #call, status_, (expected), sfx_last_error()); \
    exit(1); } } while (0)

/* An engine on the card the test gives (ALSA "default"), at 960 × 4 frames: a 20 ms period, so a
 * late timer on a shared machine never makes it underrun. */
static inline sfx_engine *open_on_card(void) {
    sfx_config config;
    sfx_config_init(&config);
    config.period_frames = 960;
    config.periods = 4;
    sfx_engine *engine = NULL;
    CHECK_STATUS(sfx_open(&config, &engine), SFX_OK);
    return engine;
}

#endif
