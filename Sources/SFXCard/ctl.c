/*
 * The card's mixer: a ctl_ext device with two elements, "Master Playback Switch" (boolean) and
 * "Master Playback Volume" (0 … 100, -50 dB … 0 dB in 0.5 dB steps, 0 mutes). Their values live
 * in the shared state file, so amixer, snd_mixer clients, the PCM (which applies them to what
 * reaches the DAC) and VirtualCard all see the same Master.
 *
 * Change events: while a client is subscribed, a 20 ms timer makes the descriptor readable and
 * read_event reports each element whose value differs from what the client last saw, so
 * snd_mixer_handle_events() follows changes made by other processes.
 */
#include "card.h"

#include <alsa/control_external.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define EVENT_INTERVAL_NS 20000000

enum { MASTER_SWITCH, MASTER_VOLUME, ELEMENT_COUNT };

static const char *const element_names[ELEMENT_COUNT] = {
    "Master Playback Switch", "Master Playback Volume",
};

typedef struct sfx_ctl {
    snd_ctl_ext_t ext;
    card card;
    int timer_fd;
    uint32_t seen[ELEMENT_COUNT];   /* values last reported to a subscribed client */
} sfx_ctl;

/* TLV for the volume: a dB scale from -50 dB in 0.5 dB steps whose lowest step mutes. */
static const unsigned int volume_db_scale[] = {
    SND_CTL_TLVT_DB_SCALE, 2 * sizeof(unsigned int),
    (unsigned int)SFXCARD_VOLUME_MIN_CENTIBEL, SFXCARD_VOLUME_STEP_CENTIBEL | 0x10000,
};

static uint32_t *element_field(sfx_ctl *c, snd_ctl_ext_key_t key)
{
    return key == MASTER_SWITCH ? &c->card.state->master_switch : &c->card.state->master_volume;
}

static int ctl_elem_count(snd_ctl_ext_t *ext UNUSED)
{
    return ELEMENT_COUNT;
}

static int ctl_elem_list(snd_ctl_ext_t *ext UNUSED, unsigned int offset, snd_ctl_elem_id_t *id)
{
    if (offset >= ELEMENT_COUNT)
        return -EINVAL;
    snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_id_set_name(id, element_names[offset]);
    return 0;
}

static snd_ctl_ext_key_t ctl_find_elem(snd_ctl_ext_t *ext UNUSED, const snd_ctl_elem_id_t *id)
{
    const char *name = snd_ctl_elem_id_get_name(id);
    for (unsigned i = 0; i < ELEMENT_COUNT; i++)
        if (!strcmp(name, element_names[i]))
            return i;
    return SND_CTL_EXT_KEY_NOT_FOUND;
}

static int ctl_get_attribute(snd_ctl_ext_t *ext UNUSED, snd_ctl_ext_key_t key, int *type,
                             unsigned int *access, unsigned int *count)
{
    *count = 1;
    if (key == MASTER_SWITCH) {
        *type = SND_CTL_ELEM_TYPE_BOOLEAN;
        *access = SND_CTL_EXT_ACCESS_READWRITE;
    } else {
        *type = SND_CTL_ELEM_TYPE_INTEGER;
        *access = SND_CTL_EXT_ACCESS_READWRITE | SND_CTL_EXT_ACCESS_TLV_READ;
    }
    return 0;
}

static int ctl_get_integer_info(snd_ctl_ext_t *ext UNUSED, snd_ctl_ext_key_t key, long *min, long *max, long *step)
{
    *min = 0;
    *max = key == MASTER_SWITCH ? 1 : SFXCARD_VOLUME_MAX;
    *step = 1;
    return 0;
}

static int ctl_read_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value)
{
    sfx_ctl *c = ext->private_data;
    if (card_get(&c->card.state->disconnected))
        return -ENODEV;
    *value = card_get(element_field(c, key));
    return 0;
}

static int ctl_write_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value)
{
    sfx_ctl *c = ext->private_data;
    if (card_get(&c->card.state->disconnected))
        return -ENODEV;
    long max = key == MASTER_SWITCH ? 1 : SFXCARD_VOLUME_MAX;
    uint32_t wanted = (uint32_t)(*value < 0 ? 0 : *value > max ? max : *value);
    uint32_t *field = element_field(c, key);
    if (card_get(field) == wanted)
        return 0;
    card_set(field, wanted);
    card_log(&c->card, "master switch=%u volume=%u", card_get(&c->card.state->master_switch),
             card_get(&c->card.state->master_volume));
    card_log_flush(&c->card);
    return 1;
}

static void ctl_subscribe_events(snd_ctl_ext_t *ext, int subscribe)
{
    sfx_ctl *c = ext->private_data;
    struct itimerspec every;
    memset(&every, 0, sizeof every);
    if (subscribe) {
        every.it_value.tv_nsec = EVENT_INTERVAL_NS;
        every.it_interval.tv_nsec = EVENT_INTERVAL_NS;
        for (unsigned i = 0; i < ELEMENT_COUNT; i++)
            c->seen[i] = card_get(element_field(c, i));
    }
    timerfd_settime(c->timer_fd, 0, &every, NULL);
}

/* The first element whose value changed since the client last heard, or -1. */
static int changed_element(sfx_ctl *c)
{
    for (unsigned i = 0; i < ELEMENT_COUNT; i++)
        if (card_get(element_field(c, i)) != c->seen[i])
            return (int)i;
    return -1;
}

static int ctl_read_event(snd_ctl_ext_t *ext, snd_ctl_elem_id_t *id, unsigned int *event_mask)
{
    sfx_ctl *c = ext->private_data;
    int element = changed_element(c);
    if (element < 0)
        return -EAGAIN;
    c->seen[element] = card_get(element_field(c, (snd_ctl_ext_key_t)element));
    ctl_elem_list(ext, (unsigned)element, id);
    *event_mask = SND_CTL_EVENT_MASK_VALUE;
    return 1;
}

static int ctl_poll_revents(snd_ctl_ext_t *ext, struct pollfd *pfd UNUSED, unsigned int nfds UNUSED,
                            unsigned short *revents)
{
    sfx_ctl *c = ext->private_data;
    int err = card_timer_clear(c->timer_fd);
    if (err >= 0)
        *revents = changed_element(c) >= 0 ? POLLIN : 0;
    return err;
}

static void ctl_close(snd_ctl_ext_t *ext)
{
    sfx_ctl *c = ext->private_data;
    card_close(&c->card);
    close(c->timer_fd);
    free(c);
}

static const snd_ctl_ext_callback_t ctl_callbacks = {
    .close = ctl_close,
    .elem_count = ctl_elem_count,
    .elem_list = ctl_elem_list,
    .find_elem = ctl_find_elem,
    .get_attribute = ctl_get_attribute,
    .get_integer_info = ctl_get_integer_info,
    .read_integer = ctl_read_integer,
    .write_integer = ctl_write_integer,
    .subscribe_events = ctl_subscribe_events,
    .read_event = ctl_read_event,
    .poll_revents = ctl_poll_revents,
};

SND_CTL_PLUGIN_DEFINE_FUNC(sfxcard)
{
    sfx_ctl *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    const char *dir;
    int err = card_parse_config(conf, &dir, NULL, NULL);
    if (err >= 0)
        err = card_open(&c->card, dir);
    if (err >= 0) {
        c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (c->timer_fd < 0) {
            err = -errno;
            card_close(&c->card);
        }
    }
    if (err < 0) {
        free(c);
        return err;
    }
    c->ext.version = SND_CTL_EXT_VERSION;
    c->ext.card_idx = 0;
    strncpy(c->ext.id, "sfxcard", sizeof c->ext.id - 1);
    strncpy(c->ext.driver, "sfxcard", sizeof c->ext.driver - 1);
    strncpy(c->ext.name, "sfx virtual card", sizeof c->ext.name - 1);
    strncpy(c->ext.longname, "sfx virtual sound card (ALSA plugin)", sizeof c->ext.longname - 1);
    strncpy(c->ext.mixername, "sfxcard Master", sizeof c->ext.mixername - 1);
    c->ext.poll_fd = c->timer_fd;
    c->ext.callback = &ctl_callbacks;
    c->ext.private_data = c;
    c->ext.tlv.p = volume_db_scale;
    err = snd_ctl_ext_create(&c->ext, name, mode);
    if (err < 0) {
        ctl_close(&c->ext);
        return err;
    }
    *handlep = c->ext.handle;
    return 0;
}

SND_CTL_PLUGIN_SYMBOL(sfxcard);
