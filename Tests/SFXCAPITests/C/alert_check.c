/*
 * An alert's caption through the C API (sfx_set_alert_callback), against an installed libsfx on
 * the virtual card: the errors first, then `sfx_alert` of the system sound "bell". Prints
 * "heard <bits>" (sfx_alert's) and "notice <caption>|<sound>|<reached>" (the callback's), and "ok";
 * on the first failed check "FAIL <line>: <what>" and exit 1. Whether it plays or vibrates is the
 * card's (its Master switch) and sfx.conf's business: the test runs it both ways.
 */
#define _DEFAULT_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfx.h>

#include "check.h"

static char notice[512];
static atomic_int notices;

static void alerted(const char *caption, const char *sound, unsigned reached, void *user_data) {
    snprintf(notice, sizeof notice, "%s|%s|%u|%s", caption, sound, reached, (const char *)user_data);
    atomic_fetch_add(&notices, 1);
}


int main(void) {
    CHECK_STATUS(sfx_set_alert_callback(NULL, alerted, NULL), SFX_ERROR_NULL);
    sfx_engine *engine = open_on_card();
    sfx_sound bell = 0;
    CHECK_STATUS(sfx_system_sound(engine, "bell", &bell), SFX_OK);
    CHECK_STATUS(sfx_set_alert_callback(engine, alerted, "the user data"), SFX_OK);

    unsigned heard = 0;
    int status = sfx_alert(engine, bell, 1.0f, NULL, NULL, &heard, NULL);
    CHECK(status == SFX_OK || status == SFX_ERROR_REJECTED, "sfx_alert played, vibrated, or said why not");
    printf("heard %u\n", heard);
    for (int i = 0; i < 500 && atomic_load(&notices) == 0; i++) usleep(10000);
    CHECK(atomic_load(&notices) == 1, "one notice within 5 s");
    printf("notice %s\n", notice);

    /* NULL stops the calls. */
    CHECK_STATUS(sfx_set_alert_callback(engine, NULL, NULL), SFX_OK);
    (void)sfx_alert(engine, bell, 1.0f, NULL, NULL, NULL, NULL);
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
    usleep(200000);
    CHECK(atomic_load(&notices) == 1, "no notice after the callback was removed");
    CHECK_STATUS(sfx_close(engine), SFX_OK);
    printf("ok\n");
    return 0;
}
