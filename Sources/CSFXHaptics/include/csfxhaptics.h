// CSFXHaptics — what Swift cannot take from <linux/input.h> by itself.
//
// The kernel's ioctl request numbers are macros built from struct sizes (EVIOCSFF encodes
// sizeof(struct ff_effect)); Swift cannot import them, and ioctl itself is variadic. This shim
// exports the request numbers, the sizes and field offsets of `struct ff_effect` and
// `struct input_event` as the kernel headers define them on this machine, and two fixed-form
// ioctl calls. SFXHaptics lays out its byte images from these numbers, and its tests check the
// bytes against them, so nothing about the layout is written down twice.
#ifndef CSFXHAPTICS_H
#define CSFXHAPTICS_H

#include <stddef.h>
#include <sys/types.h>

// Event types and codes.
unsigned int sfxh_ev_ff(void);
unsigned int sfxh_ev_max(void);
unsigned int sfxh_ff_rumble(void);
unsigned int sfxh_ff_gain(void);
unsigned int sfxh_ff_max(void);

// ioctl request numbers.
unsigned long sfxh_eviocgbit(unsigned int type, unsigned int length);
unsigned long sfxh_eviocsff(void);
unsigned long sfxh_eviocrmff(void);

// struct ff_effect.
size_t sfxh_ff_effect_size(void);
size_t sfxh_ff_effect_type_offset(void);
size_t sfxh_ff_effect_id_offset(void);
size_t sfxh_ff_effect_replay_length_offset(void);
size_t sfxh_ff_effect_replay_delay_offset(void);
size_t sfxh_ff_effect_rumble_strong_offset(void);
size_t sfxh_ff_effect_rumble_weak_offset(void);

// struct input_event.
size_t sfxh_input_event_size(void);
size_t sfxh_input_event_type_offset(void);
size_t sfxh_input_event_code_offset(void);
size_t sfxh_input_event_value_offset(void);

// ioctl with a pointer argument, and with an integer argument (EVIOCRMFF takes the effect id by
// value). Both return ioctl's result; errno is set on failure.
int sfxh_ioctl_pointer(int fd, unsigned long request, void *argument);
int sfxh_ioctl_integer(int fd, unsigned long request, long argument);

// The command backend's watchdog: a forked copy of this process, running only the C below, that
// ends the process group `group` (SIGTERM, then SIGKILL after `grace_ms`) if this process dies
// before the group's leader is reaped. It watches a pipe whose write end only this process holds
// (close-on-exec, so no program started later inherits it): when this process dies, however it
// dies, the kernel closes that end and the watchdog reads end-of-file. This ties the program's
// life to the process rather than to the thread that started it (PR_SET_PDEATHSIG fires when the
// forking *thread* exits). Between fork and _exit the watchdog makes only async-signal-safe calls.
//
// On success returns the watchdog's pid and stores the write end in *guard_fd; on failure
// returns -errno. When the group's leader has ended normally, the caller kills the watchdog
// (SIGKILL), reaps it, and only then closes *guard_fd and reaps the leader.
pid_t sfxh_start_watchdog(pid_t group, int grace_ms, int *guard_fd);

// Whether `pid` (a child) has ended, without reaping it: 1 ended, 0 running, -errno on failure.
int sfxh_child_has_ended(pid_t pid);

#endif
