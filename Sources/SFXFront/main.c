// `sfx` as installed: a small C program that plays system sounds through the daemon
// (`sfx play NAME…`) without loading Swift, Foundation and the audio libraries, and runs the
// full Swift program for everything else.
//
// Starting the Swift program costs tens of milliseconds before its first line runs (dynamic
// loading and relocation of ~160 libraries, Swift and Foundation start-up): longer than the
// whole of `aplay`. This front handles the common case — `sfx play` with system sound names
// only, optionally --daemon, -q/--quiet — by sending one request per sound to
// $XDG_RUNTIME_DIR/sfx/sfx.sock (or $SFX_SOCKET) and waiting for the replies. Anything else,
// no daemon, or a daemon that vanished before it replied: it execs the Swift program with the
// same arguments, telling it (SFX_DAEMON_TRIED=1) that the daemon did not answer, so it does not
// try again. The daemon gets a bounded time (sfx_client_timeout_ms: 50 ms unless
// $SFX_DAEMON_TIMEOUT says otherwise) to take the connection and answer the first play; a
// daemon that is flooded, stuck or at its limits (a `busy:` reply) costs no more than that. The Swift program is `<prefix>/libexec/sfx` when installed, `sfx` beside this
// program in a build directory.
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfx_protocol.h"

static const char *const audio_extensions[] = {
    "wav", "wave", "w64", "rf64", "oga", "ogg", "opus", "spx", "flac", "mp3", "mp2", "mpga",
    "aif", "aiff", "aifc", "caf", "au", "snd", "voc", NULL,
};

/// A system sound name by `sfx play`'s rule (SoundArgument): no /, no audio extension, not -.
static int is_sound_name(const char *word) {
    if (word[0] == 0 || word[0] == '-' || strchr(word, '/')) return 0;
    const char *dot = strrchr(word, '.');
    if (dot && dot != word) {
        for (const char *const *ext = audio_extensions; *ext; ext++) {
            if (strcasecmp(dot + 1, *ext) == 0) return 0;
        }
    }
    // A name the daemon's line format cannot carry goes the long way.
    for (const char *c = word; *c; c++) {
        if (*c == '\n' || *c == '=') return 0;
    }
    return 1;
}

/// Runs the Swift program with the same arguments; returns only when it cannot.
static int run_full_program(char **argv, int daemon_tried) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "sfx: cannot find where this program is (/proc/self/exe: %s); run it with /proc mounted\n", strerror(errno));
        return 1;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    *slash = 0;
    if (daemon_tried) setenv("SFX_DAEMON_TRIED", "1", 1);
    char candidate[PATH_MAX + 32];
    struct stat own, other;
    snprintf(candidate, sizeof candidate, "%s/../libexec/sfx", self);
    if (access(candidate, X_OK) == 0) execv(candidate, argv);
    snprintf(candidate, sizeof candidate, "%s/sfx", self);
    if (stat("/proc/self/exe", &own) == 0 && stat(candidate, &other) == 0
        && (own.st_ino != other.st_ino || own.st_dev != other.st_dev)) {
        execv(candidate, argv);
    }
    fprintf(stderr, "sfx: the full sfx program is missing (looked for %s/../libexec/sfx and %s/sfx); reinstall sfx (script/install)\n", self, self);
    return 1;
}

/// `sfx play NAME…` through the daemon: 0 when every sound was accepted, 1 when the daemon
/// refused one (its reason printed), -1 when the daemon did not answer in time or is busy
/// (nothing was played, as far as this program knows); `why` says which.
static int play_through_daemon(int count, char **names, char *why, size_t why_size) {
    char path[PATH_MAX];
    int named = sfx_socket_path(path, sizeof path);
    if (named < 0) {
        snprintf(why, why_size, "no daemon socket: XDG_RUNTIME_DIR is not set");
        return -1;
    }
    int fd = sfx_client_connect(path, named);
    if (fd < 0) {
        snprintf(why, why_size, "no daemon answers at %s (%s)", path, strerror(-fd));
        return -1;
    }
    int timeout = sfx_client_timeout_ms();
    char payload[PATH_MAX];
    for (int i = 0; i < count; i++) {
        int length = snprintf(payload, sizeof payload, "name=%s\n", names[i]);
        if (length <= 0 || (size_t)length >= sizeof payload
            || sfx_send_frame(fd, SFX_REQUEST_PLAY, (uint32_t)(i + 1), payload, (size_t)length, -1) != 0) {
            // A daemon that refused this peer closed the connection after saying why.
            sfx_frame_header header;
            char reply[1024];
            if (sfx_receive_reply(fd, 100, &header, reply, sizeof reply) == 0 && header.type == SFX_REPLY_ERROR) {
                close(fd);
                if (sfx_reply_is_busy(&header, reply)) {
                    snprintf(why, why_size, "the daemon at %s is busy (%s)", path, reply);
                    return -1;
                }
                fprintf(stderr, "sfx: %s\n", reply);
                return 1;
            }
            close(fd);
            snprintf(why, why_size, "the daemon at %s did not take the request", path);
            return i == 0 ? -1 : 1;
        }
    }
    int status = 0;
    for (int i = 0; i < count; i++) {
        sfx_frame_header header;
        char reply[1024];
        // The first reply shows the daemon is alive: the later ones may take longer.
        int result = sfx_receive_reply(fd, i == 0 ? timeout : 5000, &header, reply, sizeof reply);
        if (result == 0 && i == 0 && sfx_reply_is_busy(&header, reply)) {
            close(fd);
            snprintf(why, why_size, "the daemon at %s is busy (%s)", path, reply);
            return -1;
        }
        if (result != 0) {
            close(fd);
            if (i == 0) {
                snprintf(why, why_size, "the daemon at %s did not answer within %d ms (%s)", path, timeout, strerror(-result));
                return -1;
            }
            fprintf(stderr, "sfx: the daemon stopped answering (%s); see `sfx status`\n", strerror(-result));
            return 1;
        }
        if (header.type == SFX_REPLY_ERROR) {
            fprintf(stderr, "sfx: %s\n", reply);
            status = 1;
        }
    }
    close(fd);
    return status;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "play") == 0 && !getenv("SFX_DAEMON_TRIED")) {
        char *names[argc];
        int count = 0, forced = 0, plain = 1;
        for (int i = 2; i < argc && plain; i++) {
            if (strcmp(argv[i], "--daemon") == 0) forced = 1;
            else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) continue;
            else if (is_sound_name(argv[i])) names[count++] = argv[i];
            else plain = 0;
        }
        if (plain && count > 0) {
            char why[PATH_MAX + 256] = "";
            int result = play_through_daemon(count, names, why, sizeof why);
            if (result >= 0) return result;
            // No answer: the full program plays in-process (and with -v says why), or with
            // --daemon says why not.
            if (why[0]) setenv("SFX_DAEMON_WHY", why, 1);
            return run_full_program(argv, !forced);
        }
    }
    return run_full_program(argv, 0);
}
