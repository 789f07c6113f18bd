#define _GNU_SOURCE
#include "csfxhaptics.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

// The watchdog's life, in the forked child: only async-signal-safe calls, then _exit.
static void watchdog(int watch_fd, pid_t group, int grace_ms) {
    // No signal reaches it (Ctrl-C at a terminal goes to this process's whole group): it ends
    // only by reading, or by the parent's SIGKILL.
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    // Hold no other descriptor: another watchdog's pipe end kept open here would hide that
    // parent's death from it.
    if (watch_fd > 0) close_range(0, (unsigned int)watch_fd - 1, 0);
    close_range((unsigned int)watch_fd + 1, ~0U, 0);

    char byte;
    for (;;) {
        ssize_t got = read(watch_fd, &byte, 1);
        if (got == 0) break;                   // the parent is gone
        if (got < 0 && errno == EINTR) continue;
        _exit(0);                              // unexpected: leave the group alone
    }
    if (kill(-group, SIGTERM) != 0) _exit(0);  // the group has already ended
    for (int waited = 0; waited < grace_ms; waited += 10) {
        poll(NULL, 0, 10);
        if (kill(-group, 0) != 0) _exit(0);
    }
    kill(-group, SIGKILL);
    _exit(0);
}

pid_t sfxh_start_watchdog(pid_t group, int grace_ms, int *guard_fd) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(ends[0]);
        close(ends[1]);
        return -error;
    }
    if (pid == 0) {
        close(ends[1]);
        watchdog(ends[0], group, grace_ms);
    }
    close(ends[0]);
    *guard_fd = ends[1];
    return pid;
}

int sfxh_child_has_ended(pid_t pid) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return -errno;
    return info.si_pid == pid ? 1 : 0;
}
