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

/* The definition a `pcm` field names: a string (a PCM name, searched as a definition with its
 * arguments) or a compound written in place (copied, so that the caller deletes either). */
static snd_config_t *pcm_definition(snd_config_t *top, snd_config_t *field)
{
    snd_config_t *conf = NULL;
    const char *text = NULL;
    if (snd_config_get_type(field) == SND_CONFIG_TYPE_STRING && snd_config_get_string(field, &text) >= 0) {
        if (snd_config_search_definition(top, "pcm", text, &conf) < 0)
            return NULL;
        return conf;
    }
    if (snd_config_get_type(field) == SND_CONFIG_TYPE_COMPOUND && snd_config_copy(&conf, field) >= 0)
        return conf;
    return NULL;
}

/* The PCM a plugin's definition plays into: slave.pcm (or a slave named as pcm_slave.NAME, or
 * given as a plain PCM name), asym's playback.pcm; NULL for a plugin with none (hw, pipewire…). */
static snd_config_t *next_definition(snd_config_t *top, snd_config_t *conf)
{
    snd_config_t *field = NULL;
    if (snd_config_search(conf, "playback.pcm", &field) >= 0)
        return pcm_definition(top, field);
    snd_config_t *slave = NULL;
    if (snd_config_search(conf, "slave", &slave) < 0)
        return NULL;
    if (snd_config_get_type(slave) == SND_CONFIG_TYPE_STRING) {
        const char *text = NULL;
        snd_config_t *named = NULL;
        if (snd_config_get_string(slave, &text) < 0)
            return NULL;
        if (snd_config_search_definition(top, "pcm_slave", text, &named) >= 0) {
            snd_config_t *result = NULL;
            if (snd_config_search(named, "pcm", &field) >= 0)
                result = pcm_definition(top, field);
            snd_config_delete(named);
            return result;
        }
        return pcm_definition(top, slave);
    }
    if (snd_config_search(slave, "pcm", &field) >= 0)
        return pcm_definition(top, field);
    return NULL;
}

int sfx_pcm_config_chain(const char *name, int depth, char *out, size_t size)
{
    if (size > 0)
        out[0] = 0;
    snd_config_t *top = NULL;
    if (snd_config_update_ref(&top) < 0 || !top)
        return -1;
    snd_config_t *conf = NULL;
    if (snd_config_search_definition(top, "pcm", name, &conf) < 0) {
        snd_config_unref(top);
        return -1;
    }
    int count = 0;
    size_t used = 0;
    while (conf && count < depth) {
        snd_config_t *node = NULL;
        const char *type = NULL;
        if (snd_config_search(conf, "type", &node) < 0 || snd_config_get_string(node, &type) < 0) {
            snd_config_delete(conf);
            conf = NULL;
            break;
        }
        int n = snprintf(out + used, used < size ? size - used : 0, "%s%s", count ? " " : "", type);
        if (n > 0 && used + (size_t)n < size)
            used += (size_t)n;
        count++;
        snd_config_t *next = next_definition(top, conf);
        snd_config_delete(conf);
        conf = next;
    }
    if (conf && count >= depth)
        snd_config_delete(conf);
    snd_config_unref(top);
    return count;
}
