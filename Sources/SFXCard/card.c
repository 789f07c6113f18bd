#include "card.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Events older than this are written out at the next log call even if the buffer has room. */
#define LOG_FLUSH_INTERVAL_NS 200000000ull

uint64_t card_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t card_get(const uint32_t *field)
{
    return __atomic_load_n(field, __ATOMIC_ACQUIRE);
}

void card_set(uint32_t *field, uint32_t value)
{
    __atomic_store_n(field, value, __ATOMIC_RELEASE);
}

int card_timer_clear(int timer_fd)
{
    uint64_t expirations;
    if (read(timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        return -errno;
    return 0;
}

/* Why an opened file or directory is not the user's own, or NULL when it is: it must be of the
 * given type, owned by this process's user, and writable by no one else. */
static const char *not_private(const struct stat *st, mode_t type)
{
    if ((st->st_mode & S_IFMT) != type)
        return type == S_IFDIR ? "is not a directory" : "is not a regular file";
    if (st->st_uid != geteuid())
        return "belongs to another user";
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return "is writable by other users";
    return NULL;
}

/* Creates <dir>/state with the defaults (connected, Master on at full volume) unless it exists.
 * The file is written under a temporary name and linked into place, so no reader ever maps a
 * half-written state. */
static int create_state_file(card *c)
{
    static unsigned counter;
    char tmp[64];
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(tmp, sizeof tmp, "state.%ld.%u", (long)getpid(),
                 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
        fd = openat(c->dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return -errno;
    }
    if (fd < 0)
        return -EEXIST;
    sfxcard_state initial;
    memset(&initial, 0, sizeof initial);
    memcpy(initial.magic, SFXCARD_STATE_MAGIC, 8);
    initial.version = SFXCARD_STATE_VERSION;
    initial.size = sizeof initial;
    initial.master_switch = 1;
    initial.master_volume = SFXCARD_VOLUME_MAX;
    int err = write(fd, &initial, sizeof initial) == (ssize_t)sizeof initial ? 0 : -EIO;
    close(fd);
    if (!err && linkat(c->dir_fd, tmp, c->dir_fd, "state", 0) < 0 && errno != EEXIST)
        err = -errno;
    unlinkat(c->dir_fd, tmp, 0);
    return err;
}

static int map_state(card *c)
{
    int fd = openat(c->dir_fd, "state", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        int err = create_state_file(c);
        if (err < 0) {
            SNDERR("sfxcard: cannot create %s/state (%s); make the directory writable", c->dir, strerror(-err));
            return err;
        }
        fd = openat(c->dir_fd, "state", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        int err = -errno;
        if (errno == ELOOP)
            SNDERR("sfxcard: %s/state is a symbolic link; delete it and the card writes a new one", c->dir);
        else
            SNDERR("sfxcard: cannot open %s/state (%s); make it readable and writable", c->dir, strerror(errno));
        return err;
    }
    /* Only a file no one else can shorten is mapped: a mapping past a file's end is SIGBUS. */
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    const char *problem = not_private(&st, S_IFREG);
    if (problem) {
        SNDERR("sfxcard: %s/state %s; delete it and the card writes a new one", c->dir, problem);
        close(fd);
        return -EPERM;
    }
    void *map = MAP_FAILED;
    if (st.st_size >= (off_t)sizeof(sfxcard_state))
        map = mmap(NULL, sizeof(sfxcard_state), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED || memcmp(((sfxcard_state *)map)->magic, SFXCARD_STATE_MAGIC, 8) != 0) {
        SNDERR("sfxcard: %s/state is not a card state file; delete it and the card writes a new one", c->dir);
        if (map != MAP_FAILED)
            munmap(map, sizeof(sfxcard_state));
        return -EINVAL;
    }
    c->state = map;
    return 0;
}

/* Opens the state directory, creating it (0700) if missing, and checks that it is private. */
static int open_directory(card *c, const char *dir)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        int err = -errno;
        SNDERR("sfxcard: cannot create the state directory %s (%s); choose a writable place", dir, strerror(errno));
        return err;
    }
    c->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (c->dir_fd < 0) {
        int err = -errno;
        if (errno == ELOOP || errno == ENOTDIR)
            SNDERR("sfxcard: the state directory %s is a symbolic link or not a directory; "
                   "give a directory of your own", dir);
        else
            SNDERR("sfxcard: cannot open the state directory %s (%s)", dir, strerror(errno));
        return err;
    }
    struct stat st;
    if (fstat(c->dir_fd, &st) < 0)
        return -errno;
    const char *problem = not_private(&st, S_IFDIR);
    if (problem) {
        SNDERR("sfxcard: the state directory %s %s; give a directory of your own that only you can "
               "write (mode 700)", dir, problem);
        return -EPERM;
    }
    return 0;
}

int card_open(card *c, const char *dir)
{
    memset(c, 0, sizeof *c);
    c->log_fd = -1;
    c->dir_fd = -1;
    c->dir = strdup(dir);
    if (!c->dir)
        return -ENOMEM;
    int err = open_directory(c, dir);
    if (err >= 0)
        err = map_state(c);
    if (err < 0) {
        card_close(c);
        return err;
    }
    if (card_get(&c->state->disconnected)) {
        card_close(c);
        return -ENODEV;
    }
    /* O_NONBLOCK: opening a FIFO left in the directory must not hang the client. */
    c->log_fd = openat(c->dir_fd, "events.log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (c->log_fd < 0) {
        err = -errno;
        if (errno == ELOOP)
            SNDERR("sfxcard: %s/events.log is a symbolic link; delete it", dir);
        else
            SNDERR("sfxcard: cannot open %s/events.log (%s); make the directory writable", dir, strerror(errno));
        card_close(c);
        return err;
    }
    struct stat st;
    const char *problem = fstat(c->log_fd, &st) < 0 ? "cannot be examined" : not_private(&st, S_IFREG);
    if (problem) {
        SNDERR("sfxcard: %s/events.log %s; delete it", dir, problem);
        card_close(c);
        return -EPERM;
    }
    fcntl(c->log_fd, F_SETFL, O_APPEND);
    c->log_flushed_ns = card_now_ns();
    return 0;
}

int card_create_file(card *c, const char *name)
{
    int fd = openat(c->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    return fd < 0 ? -errno : fd;
}

int card_open_file(card *c, const char *name)
{
    int fd = openat(c->dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

void card_close(card *c)
{
    card_log_flush(c);
    if (c->log_fd >= 0)
        close(c->log_fd);
    if (c->dir_fd >= 0)
        close(c->dir_fd);
    if (c->state)
        munmap(c->state, sizeof(sfxcard_state));
    free(c->dir);
    memset(c, 0, sizeof *c);
    c->log_fd = -1;
    c->dir_fd = -1;
}

void card_log_flush(card *c)
{
    if (c->log_fd >= 0 && c->log_used > 0) {
        /* One write of whole lines: O_APPEND keeps lines from several processes intact. */
        if (write(c->log_fd, c->log, c->log_used) < 0)
            SNDERR("sfxcard: cannot write events.log (%s)", strerror(errno));
    }
    c->log_used = 0;
    c->log_flushed_ns = card_now_ns();
}

static void card_vlog(card *c, uint64_t ns, const char *fmt, va_list args)
{
    /* Room for the longest event line; flush first if the buffer cannot take it. */
    if (CARD_LOG_CAPACITY - c->log_used < 256)
        card_log_flush(c);
    char *out = c->log + c->log_used;
    size_t room = CARD_LOG_CAPACITY - c->log_used;
    int n = snprintf(out, room, "%llu ", (unsigned long long)ns);
    n += vsnprintf(out + n, room - (size_t)n, fmt, args);
    if ((size_t)n >= room - 1)
        n = (int)room - 2;          /* an over-long line is cut, never lost */
    out[n] = '\n';
    c->log_used += (size_t)n + 1;
    card_log_tick(c);
}

void card_log_tick(card *c)
{
    if (c->log_used > 0 && card_now_ns() - c->log_flushed_ns >= LOG_FLUSH_INTERVAL_NS)
        card_log_flush(c);
}

void card_log(card *c, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    card_vlog(c, card_now_ns(), fmt, args);
    va_end(args);
}

void card_log_at(card *c, uint64_t ns, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    card_vlog(c, ns, fmt, args);
    va_end(args);
}

int card_parse_config(snd_config_t *conf, const char **dir,
                      int (*other)(void *ctx, const char *key, snd_config_t *value), void *ctx)
{
    snd_config_iterator_t i, next;
    *dir = NULL;
    snd_config_for_each(i, next, conf) {
        snd_config_t *entry = snd_config_iterator_entry(i);
        const char *key;
        if (snd_config_get_id(entry, &key) < 0)
            continue;
        if (!strcmp(key, "comment") || !strcmp(key, "type") || !strcmp(key, "hint"))
            continue;
        if (!strcmp(key, "dir")) {
            if (snd_config_get_string(entry, dir) < 0) {
                SNDERR("sfxcard: dir must be a string: dir \"/path/to/card\"");
                return -EINVAL;
            }
            continue;
        }
        int err = other ? other(ctx, key, entry) : -EINVAL;
        if (err < 0) {
            if (err == -EINVAL && !other)
                SNDERR("sfxcard: unknown parameter %s; the mixer takes only dir", key);
            return err;
        }
    }
    if (!*dir) {
        SNDERR("sfxcard: no state directory; add dir \"/path/to/card\" to the sfxcard definition");
        return -EINVAL;
    }
    return 0;
}
