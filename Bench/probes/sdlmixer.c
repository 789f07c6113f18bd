/*
 * sdlmixer.c — SDL_mixer as a game uses it: Mix_OpenAudio with a chunk size, the click as a
 * Mix_Chunk played on the first free channel, and K channels looping one chunk for the voices
 * mode.
 *
 * SDL reaches the card through its ALSA driver (sfx-bench sets SDL_AUDIODRIVER=alsa and
 * AUDIODEV); --period is the chunk size (0: SDL_mixer's documented default, 2048); SDL's ALSA
 * driver asks for two periods per buffer itself, so --periods is not used. The process takes
 * SCHED_FIFO before the device opens, so SDL's audio thread inherits it; the main thread, which
 * triggers, then returns to SCHED_OTHER.
 */
#include "probe.h"

#include <SDL2/SDL.h>
#include <SDL2/SDL_mixer.h>
#include <stdio.h>
#include <stdlib.h>

enum { DEFAULT_CHUNK = 2048, CLICK_CHANNELS = 4 };

static Mix_Chunk *click, *loop;

static int fail(const char *what) {
    fprintf(stderr, "sdlmixer: cannot %s (%s); check SDL_AUDIODRIVER=alsa, AUDIODEV and the card\n", what, SDL_GetError());
    return -1;
}

/* A chunk in the device's own format (float or 16-bit, any channel count), mono sound copied to
 * every channel, so SDL_mixer converts nothing while it plays. */
static Mix_Chunk *make_chunk(float (*sample)(int), int frames) {
    int rate, channels;
    Uint16 format;
    Mix_QuerySpec(&rate, &format, &channels);
    int bytes = SDL_AUDIO_BITSIZE(format) / 8;
    Uint8 *data = SDL_malloc((size_t)frames * (size_t)channels * (size_t)bytes);
    if (!data) return NULL;
    for (int i = 0; i < frames; i++)
        for (int c = 0; c < channels; c++) {
            void *at = data + ((size_t)i * (size_t)channels + (size_t)c) * (size_t)bytes;
            if (SDL_AUDIO_ISFLOAT(format)) *(float *)at = sample(i);
            else *(Sint16 *)at = (Sint16)(sample(i) * 32767);
        }
    Mix_Chunk *chunk = Mix_QuickLoad_RAW(data, (Uint32)(frames * channels * bytes));
    if (!chunk) SDL_free(data);
    return chunk;
}

static int sdl_open(const struct probe_options *o) {
    probe_set_fifo(o->priority);
    if (SDL_Init(SDL_INIT_AUDIO) != 0) return fail("start SDL audio");
    if (Mix_OpenAudio(PROBE_RATE, AUDIO_F32SYS, PROBE_CHANNELS, o->period > 0 ? o->period : DEFAULT_CHUNK) != 0)
        return fail("open the audio device");
    probe_set_fifo(0);
    Mix_AllocateChannels(o->voices + CLICK_CHANNELS);
    click = make_chunk(probe_click_sample, PROBE_CLICK_FRAMES);
    loop = make_chunk(probe_loop_sample, PROBE_LOOP_FRAMES);
    return click && loop ? 0 : fail("load the sounds");
}

static void sdl_trigger(void) {
    Mix_PlayChannel(-1, click, 0);
}

static int sdl_voices(int count, float gain) {
    int volume = (int)(gain * MIX_MAX_VOLUME + 0.5f);
    for (int i = 0; i < count; i++) {
        Mix_Volume(i, volume > 0 ? volume : 1); /* volume 0 would skip the mixing being measured */
        if (Mix_PlayChannel(i, loop, -1) < 0) return fail("start a looping channel");
    }
    return 0;
}

static void free_chunk(Mix_Chunk *chunk) {
    if (!chunk) return;
    SDL_free(chunk->abuf);
    chunk->abuf = NULL;
    Mix_FreeChunk(chunk);
}

static void sdl_close(void) {
    Mix_HaltChannel(-1);
    free_chunk(click);
    free_chunk(loop);
    Mix_CloseAudio();
    SDL_Quit();
}

int main(int argc, char **argv) {
    static const struct probe_client client = { "sdlmixer", sdl_open, sdl_trigger, sdl_voices, sdl_close };
    return probe_main(argc, argv, &client);
}
