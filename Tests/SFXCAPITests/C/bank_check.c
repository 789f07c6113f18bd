/*
 * Sound banks through the C API, against an installed libsfx on the virtual card: argv[1] a good
 * bank with an event "hit" (a cooldown of 1 s), argv[2] a bank with a mistake, which is then
 * saved over argv[1] (as an editor saves: a new file renamed over the old) while the good bank is
 * watched. Prints "bad <message>", "completion <outcome>", "refused <reload's problem>" and "ok";
 * on the first failed check
 * "FAIL <line>: <what>" and exit 1.
 */
#define _DEFAULT_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfx.h>

#include "check.h"

static atomic_int completions, last_outcome = -1;

static void completed(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data) {
    (void)voice; (void)detail; (void)user_data;
    atomic_store(&last_outcome, (int)outcome);
    atomic_fetch_add(&completions, 1);
}


int main(int argc, char **argv) {
    CHECK(argc == 3, "usage: bank_check GOOD.json BAD.json");
    sfx_engine *engine = open_on_card();

    sfx_bank *bank = (sfx_bank *)1;
    CHECK_STATUS(sfx_bank_load(engine, argv[2], 0, &bank), SFX_ERROR_SOUND);
    CHECK(bank == NULL, "no bank on failure");
    printf("bad %s\n", sfx_last_error());
    CHECK_STATUS(sfx_bank_load(engine, NULL, 0, &bank), SFX_ERROR_NULL);

    CHECK_STATUS(sfx_bank_load(engine, argv[1], 1, &bank), SFX_OK);
    CHECK_STATUS(sfx_event_play(engine, bank, "nothing", 1.0f, NULL, NULL, NULL), SFX_ERROR_SOUND);
    CHECK(strstr(sfx_last_error(), "nothing") != NULL, "the message names the event");
    sfx_voice voice = 0;
    CHECK_STATUS(sfx_event_play(engine, bank, "hit", 1.0f, completed, NULL, &voice), SFX_OK);
    CHECK(voice != 0, "a voice");
    CHECK_STATUS(sfx_event_play(engine, bank, "hit", 1.0f, completed, NULL, NULL), SFX_ERROR_REJECTED);
    CHECK(strstr(sfx_last_error(), "cooldown") != NULL, "inside the cooldown, said so");
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);
    for (int i = 0; i < 200 && atomic_load(&completions) == 0; i++) usleep(10000);
    CHECK(atomic_load(&completions) == 1, "one completion: the refused play is never completed");
    printf("completion %d\n", atomic_load(&last_outcome));

    unsigned reloads = 99;
    char problem[256] = "unset";
    CHECK_STATUS(sfx_bank_status(bank, &reloads, problem, sizeof problem), SFX_OK);
    CHECK(reloads == 0 && problem[0] == 0, "loaded: no reload, no problem");
    /* The broken bank saved over the watched one: refused, the old bank kept, the reason told. */
    char saved[4096];
    snprintf(saved, sizeof saved, "%s.saving", argv[1]);
    FILE *from = fopen(argv[2], "rb"), *to = fopen(saved, "wb");
    CHECK(from != NULL && to != NULL, "copy the broken bank");
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, from)) > 0) fwrite(chunk, 1, got, to);
    fclose(from);
    CHECK(fclose(to) == 0 && rename(saved, argv[1]) == 0, "save it over the watched bank");
    for (int i = 0; i < 1000 && problem[0] == 0; i++) {
        usleep(10000);
        CHECK_STATUS(sfx_bank_status(bank, &reloads, problem, sizeof problem), SFX_OK);
    }
    CHECK(problem[0] != 0, "the refused reload is told");
    CHECK(reloads == 0, "nothing reloaded");
    printf("refused %s\n", problem);
    char small[8];
    CHECK_STATUS(sfx_bank_status(bank, NULL, small, sizeof small), SFX_ERROR_RANGE);
    CHECK(strlen(small) == sizeof small - 1, "as much as fits, NUL-terminated");
    usleep(1100000);   /* past the cooldown: the old event still plays */
    CHECK_STATUS(sfx_event_play(engine, bank, "hit", 1.0f, NULL, NULL, NULL), SFX_OK);
    CHECK_STATUS(sfx_wait_idle(engine, 10000), SFX_OK);

    CHECK_STATUS(sfx_bank_close(bank), SFX_OK);
    CHECK_STATUS(sfx_bank_close(bank), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_event_play(engine, bank, "hit", 1.0f, NULL, NULL, NULL), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_close(engine), SFX_OK);
    printf("ok\n");
    return 0;
}
