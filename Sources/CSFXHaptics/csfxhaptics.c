#include "csfxhaptics.h"

#include <linux/input.h>
#include <sys/ioctl.h>

unsigned int sfxh_ev_ff(void) { return EV_FF; }
unsigned int sfxh_ev_max(void) { return EV_MAX; }
unsigned int sfxh_ff_rumble(void) { return FF_RUMBLE; }
unsigned int sfxh_ff_gain(void) { return FF_GAIN; }
unsigned int sfxh_ff_max(void) { return FF_MAX; }

unsigned long sfxh_eviocgbit(unsigned int type, unsigned int length) { return EVIOCGBIT(type, length); }
unsigned long sfxh_eviocsff(void) { return EVIOCSFF; }
unsigned long sfxh_eviocrmff(void) { return EVIOCRMFF; }

size_t sfxh_ff_effect_size(void) { return sizeof(struct ff_effect); }
size_t sfxh_ff_effect_type_offset(void) { return offsetof(struct ff_effect, type); }
size_t sfxh_ff_effect_id_offset(void) { return offsetof(struct ff_effect, id); }
size_t sfxh_ff_effect_replay_length_offset(void) { return offsetof(struct ff_effect, replay.length); }
size_t sfxh_ff_effect_replay_delay_offset(void) { return offsetof(struct ff_effect, replay.delay); }
size_t sfxh_ff_effect_rumble_strong_offset(void) { return offsetof(struct ff_effect, u.rumble.strong_magnitude); }
size_t sfxh_ff_effect_rumble_weak_offset(void) { return offsetof(struct ff_effect, u.rumble.weak_magnitude); }

size_t sfxh_input_event_size(void) { return sizeof(struct input_event); }
size_t sfxh_input_event_type_offset(void) { return offsetof(struct input_event, type); }
size_t sfxh_input_event_code_offset(void) { return offsetof(struct input_event, code); }
size_t sfxh_input_event_value_offset(void) { return offsetof(struct input_event, value); }

int sfxh_ioctl_pointer(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
int sfxh_ioctl_integer(int fd, unsigned long request, long argument) { return ioctl(fd, request, argument); }
