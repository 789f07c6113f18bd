/*
 * The engine's clock and plays at a time through the C API, against an installed libsfx on the
 * virtual card: the errors first, then a 10 ms blip at a frame 100 ms ahead (not on a period).
 * Prints "target <frame> <ns>" (the frame, and when the clock says it reaches the DAC), a
 * line "late <frame>" for a play at a time already past and "late completion <outcome> <detail>"
 * for its completion, and "ok" at the end; on the first
 * failed check "FAIL <line>: <what>" and exit 1.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdatomic.h>

#include <sfx.h>

#include "check.h"

static char late_detail[256];
static atomic_int late_done;

static void completed(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data) {
    (void)voice; (void)user_data;
    snprintf(late_detail, sizeof late_detail, "%d %s", (int)outcome, detail ? detail : "(null)");
    atomic_store(&late_done, 1);
}


int main(void) {
    sfx_engine *engine = open_on_card();

    float blip[480];
    for (int i = 0; i < 480; i++) blip[i] = 0.5f;
    sfx_sound sound = 0;
    CHECK_STATUS(sfx_load_pcm(engine, blip, 480, 1, 48000, &sound), SFX_OK);

    int64_t now = -1, next = -1, ns = 0;
    CHECK_STATUS(sfx_clock_now(engine, NULL, NULL), SFX_ERROR_NULL);
    CHECK(strstr(sfx_last_error(), "frame") != NULL, "the message names the frame");
    CHECK_STATUS(sfx_clock_monotonic(engine, 0, NULL), SFX_ERROR_NULL);
    CHECK_STATUS(sfx_play_at_time(engine, 999, 0, NULL, NULL), SFX_ERROR_SOUND);

    /* Until the device has said where its DAC is. */
    int tries = 0;
    while (sfx_clock_monotonic(engine, 0, &ns) != SFX_OK && tries++ < 500) usleep(10000);
    CHECK(tries < 500, "the clock was anchored within 5 s");
    usleep(100000);
    CHECK_STATUS(sfx_clock_now(engine, &now, &next), SFX_OK);
    CHECK(now >= 0 && next >= now, "now and next schedulable");

    int64_t target = next + 4801;
    sfx_voice voice = 0;
    CHECK_STATUS(sfx_play_at_time(engine, sound, target, NULL, &voice), SFX_OK);
    CHECK(voice != 0, "a voice");
    CHECK_STATUS(sfx_clock_monotonic(engine, target, &ns), SFX_OK);
    printf("target %lld %lld\n", (long long)target, (long long)ns);
    CHECK_STATUS(sfx_wait_idle(engine, 5000), SFX_OK);
    usleep(100000);

    /* 50 ms ago: it plays at once. */
    CHECK_STATUS(sfx_clock_now(engine, &now, NULL), SFX_OK);
    sfx_play_options options;
    sfx_play_options_init(&options);
    options.completion = completed;
    CHECK_STATUS(sfx_play_at_time(engine, sound, now - 2400, &options, NULL), SFX_OK);
    printf("late %lld\n", (long long)(now - 2400));
    CHECK_STATUS(sfx_wait_idle(engine, 5000), SFX_OK);
    for (int i = 0; i < 500 && !atomic_load(&late_done); i++) usleep(10000);
    printf("late completion %s\n", late_detail);
    CHECK_STATUS(sfx_close(engine), SFX_OK);
    printf("ok\n");
    return 0;
}
