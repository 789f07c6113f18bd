/* The C API's recorder on the virtual card (CProgramTests.testRecordingFromC): a voice message with
 * a prompt, a meter and a count-up, stopped after a second; one under its minimum, discarded; one
 * cancelled; and the errors. argv[1]: a directory to record into. Prints what it saw; exits 1 at
 * the first surprise. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sfx.h>

#define CHECK_STATUS(call, expected) do { int status_ = (call); if (status_ != (expected)) { \
    printf("FAIL %d: %s gave %d, not %d (last error: %s)\n", __LINE__, #call, status_, (expected), sfx_last_error()); \
    exit(1); } } while (0)
#define CHECK(condition, what) do { if (!(condition)) { printf("FAIL %d: %s\n", __LINE__, what); exit(1); } } while (0)

int main(int argc, char **argv) {
    CHECK(argc == 2, "usage: record_check DIR");
    char message[1024], short_one[1024], cancelled[1024], bad[1024];
    snprintf(message, sizeof message, "%s/message.m4a", argv[1]);
    snprintf(short_one, sizeof short_one, "%s/short.wav", argv[1]);
    snprintf(cancelled, sizeof cancelled, "%s/cancelled.flac", argv[1]);
    snprintf(bad, sizeof bad, "%s/bad.m4a", argv[1]);

    sfx_engine *engine;
    CHECK_STATUS(sfx_open(NULL, &engine), SFX_OK);
    sfx_sound tock;
    CHECK_STATUS(sfx_system_sound(engine, "tock", &tock), SFX_OK);

    /* Errors first: no recorder pointer, a format out of range, a prompt without an engine. */
    sfx_record_options options = {0};
    CHECK_STATUS(sfx_record_start(engine, &options, NULL), SFX_ERROR_NULL);
    sfx_recorder *recorder = (sfx_recorder *)1;
    options.path = bad;
    options.format = "aiff";
    CHECK_STATUS(sfx_record_start(engine, &options, &recorder), SFX_ERROR_RANGE);
    CHECK(recorder == NULL, "a failed sfx_record_start set a recorder");
    CHECK(strstr(sfx_last_error(), "format") != NULL, "the range message does not name the format");
    options.format = NULL;
    options.max_seconds = -1;
    CHECK_STATUS(sfx_record_start(engine, &options, &recorder), SFX_ERROR_RANGE);
    options.max_seconds = 0;
    options.prompt = tock;
    CHECK_STATUS(sfx_record_start(NULL, &options, &recorder), SFX_ERROR_NULL);
    options.prompt = 0;
    options.fragmented = 2;
    CHECK_STATUS(sfx_record_start(NULL, &options, &recorder), SFX_ERROR_RANGE);
    options.fragmented = 0;
    options.voice_processing = 2;
    CHECK_STATUS(sfx_record_start(NULL, &options, &recorder), SFX_ERROR_RANGE);
    CHECK(strstr(sfx_last_error(), "voice_processing") != NULL, "the range message does not name voice_processing");
    options.voice_processing = 0;
    options.trim_silence = 2;
    CHECK_STATUS(sfx_record_start(NULL, &options, &recorder), SFX_ERROR_RANGE);
    options.trim_silence = 0;
    options.prompt = tock;
    CHECK(access(bad, F_OK) != 0, "a refused recording left a file");

    /* A voice message: the prompt, then a second of capture with a meter and a count-up. */
    options.path = message;
    options.max_seconds = 30;
    options.min_seconds = 0.5f;
    CHECK_STATUS(sfx_record_start(engine, &options, &recorder), SFX_OK);
    double elapsed = 0, last = -1;
    int finished = 0, counted_up = 1;
    float loudest = -200;
    while (elapsed < 1.0) {
        float average = 0, peak = 0;
        CHECK_STATUS(sfx_record_level(recorder, &average, &peak), SFX_OK);
        CHECK_STATUS(sfx_record_elapsed(recorder, &elapsed, &finished), SFX_OK);
        if (elapsed < last) counted_up = 0;
        last = elapsed;
        if (peak > loudest) loudest = peak;
        CHECK(!finished, "the recording ended by itself");
        usleep(20000);
    }
    CHECK(counted_up, "the count-up went back");
    char path[1024];
    double seconds = 0;
    CHECK_STATUS(sfx_record_stop(recorder, path, 4, &seconds), SFX_ERROR_RANGE);   /* the path does not fit */
    CHECK_STATUS(sfx_record_stop(recorder, path, sizeof path, &seconds), SFX_ERROR_CLOSED);  /* stopped once */
    printf("message %s %.3f s, loudest peak %.1f dBFS\n", message, seconds, loudest);

    /* Under its minimum: removed, and said so. */
    options.path = short_one;
    options.prompt = 0;
    options.min_seconds = 5;
    CHECK_STATUS(sfx_record_start(NULL, &options, &recorder), SFX_OK);
    usleep(300000);
    CHECK_STATUS(sfx_record_stop(recorder, path, sizeof path, &seconds), SFX_ERROR_REJECTED);
    CHECK(strstr(sfx_last_error(), "short.wav") != NULL, "the discard does not name the file");
    CHECK(access(short_one, F_OK) != 0, "a recording under its minimum was kept");

    /* Cancelled: removed. */
    options.path = cancelled;
    options.min_seconds = 0;
    CHECK_STATUS(sfx_record_start(NULL, &options, &recorder), SFX_OK);
    usleep(200000);
    CHECK_STATUS(sfx_record_cancel(recorder), SFX_OK);
    CHECK(access(cancelled, F_OK) != 0, "a cancelled recording was kept");
    CHECK_STATUS(sfx_record_cancel(recorder), SFX_ERROR_CLOSED);
    CHECK_STATUS(sfx_record_level(NULL, NULL, NULL), SFX_ERROR_NULL);

    CHECK_STATUS(sfx_close(engine), SFX_OK);
    printf("ok\n");
    return 0;
}
