#include "sfx_alsa.h"
#include <alsa/asoundlib.h>
#include <stdio.h>

static void quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

void sfx_alsa_silence_errors(void) { snd_lib_error_set_handler(quiet); }

int sfx_pcm_config_type(const char *name, char *out, size_t size) {
    if (snd_config_update() < 0 || !snd_config) return -1;
    snd_config_t *conf = NULL;
    if (snd_config_search_definition(snd_config, "pcm", name, &conf) < 0) return -1;
    snd_config_t *node = NULL;
    const char *type = NULL;
    int result = -1;
    if (snd_config_search(conf, "type", &node) >= 0 && snd_config_get_string(node, &type) >= 0) {
        snprintf(out, size, "%s", type);
        result = 0;
    }
    snd_config_delete(conf);
    return result;
}
