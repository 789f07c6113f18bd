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

/* Creates <dir>/state with the defaults (connected, Master on at full volume) unless it exists.
 * The file is written under a temporary name and linked into place, so no reader ever maps a
 * half-written state. */
static int create_state_file(const char *path)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 8);
    if (!tmp)
        return -ENOMEM;
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".XXXXXX", 8);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int err = -errno;
        free(tmp);
        return err;
    }
    sfxcard_state initial;
    memset(&initial, 0, sizeof initial);
    memcpy(initial.magic, SFXCARD_STATE_MAGIC, 8);
    initial.version = SFXCARD_STATE_VERSION;
    initial.size = sizeof initial;
    initial.master_switch = 1;
    initial.master_volume = SFXCARD_VOLUME_MAX;
    int err = write(fd, &initial, sizeof initial) == (ssize_t)sizeof initial ? 0 : -EIO;
    close(fd);
    if (!err && link(tmp, path) < 0 && errno != EEXIST)
        err = -errno;
    unlink(tmp);
    free(tmp);
    return err;
}

static char *join(const char *dir, const char *name)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    if (path)
        sprintf(path, "%s/%s", dir, name);
    return path;
}

static int map_state(card *c)
{
    char *path = join(c->dir, "state");
    if (!path)
        return -ENOMEM;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        int err = create_state_file(path);
        if (err < 0) {
            SNDERR("sfxcard: cannot create %s (%s); make the directory writable", path, strerror(-err));
            free(path);
            return err;
        }
        fd = open(path, O_RDWR | O_CLOEXEC);
    }
    if (fd < 0) {
        int err = -errno;
        SNDERR("sfxcard: cannot open %s (%s); make it readable and writable", path, strerror(errno));
        free(path);
        return err;
    }
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(sfxcard_state))
        map = mmap(NULL, sizeof(sfxcard_state), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED || memcmp(((sfxcard_state *)map)->magic, SFXCARD_STATE_MAGIC, 8) != 0) {
        SNDERR("sfxcard: %s is not a card state file; delete it and the card writes a new one", path);
        if (map != MAP_FAILED)
            munmap(map, sizeof(sfxcard_state));
        free(path);
        return -EINVAL;
    }
    free(path);
    c->state = map;
    return 0;
}

int card_open(card *c, const char *dir)
{
    memset(c, 0, sizeof *c);
    c->log_fd = -1;
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        SNDERR("sfxcard: cannot create the state directory %s (%s)", dir, strerror(errno));
        return -errno;
    }
    c->dir = strdup(dir);
    if (!c->dir)
        return -ENOMEM;
    int err = map_state(c);
    if (err < 0) {
        card_close(c);
        return err;
    }
    if (card_get(&c->state->disconnected)) {
        card_close(c);
        return -ENODEV;
    }
    char *log_path = join(dir, "events.log");
    if (!log_path) {
        card_close(c);
        return -ENOMEM;
    }
    c->log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (c->log_fd < 0) {
        err = -errno;
        SNDERR("sfxcard: cannot open %s (%s); make the directory writable", log_path, strerror(errno));
        free(log_path);
        card_close(c);
        return err;
    }
    free(log_path);
    c->log_flushed_ns = card_now_ns();
    return 0;
}

void card_close(card *c)
{
    card_log_flush(c);
    if (c->log_fd >= 0)
        close(c->log_fd);
    if (c->state)
        munmap(c->state, sizeof(sfxcard_state));
    free(c->dir);
    memset(c, 0, sizeof *c);
    c->log_fd = -1;
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
