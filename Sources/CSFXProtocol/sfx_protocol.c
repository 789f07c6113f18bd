// See include/sfx_protocol.h and docs/PROTOCOL.md.
#define _GNU_SOURCE
#include "sfx_protocol.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void put32(uint8_t *at, uint32_t value) {
    at[0] = (uint8_t)value;
    at[1] = (uint8_t)(value >> 8);
    at[2] = (uint8_t)(value >> 16);
    at[3] = (uint8_t)(value >> 24);
}

static uint32_t get32(const uint8_t *at) {
    return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
}

size_t sfx_frame_encode(uint8_t *out, size_t capacity, uint8_t type, uint32_t id, const void *payload, size_t length) {
    if (length > SFX_FRAME_MAX_PAYLOAD || capacity < SFX_FRAME_HEADER + length) return 0;
    out[0] = 'S';
    out[1] = 'X';
    out[2] = SFX_PROTOCOL_VERSION;
    out[3] = type;
    put32(out + 4, id);
    put32(out + 8, (uint32_t)length);
    if (length > 0) memcpy(out + SFX_FRAME_HEADER, payload, length);
    return SFX_FRAME_HEADER + length;
}

int sfx_frame_decode(const uint8_t *message, size_t size, sfx_frame_header *header) {
    memset(header, 0, sizeof *header);
    if (size < SFX_FRAME_HEADER) return SFX_FRAME_SHORT;
    header->version = message[2];
    header->type = message[3];
    header->id = get32(message + 4);
    header->length = get32(message + 8);
    if (message[0] != 'S' || message[1] != 'X') return SFX_FRAME_BAD_MAGIC;
    if (header->version != SFX_PROTOCOL_VERSION) return SFX_FRAME_BAD_VERSION;
    if (header->length > SFX_FRAME_MAX_PAYLOAD) return SFX_FRAME_TOO_LONG;
    if (size - SFX_FRAME_HEADER < header->length) return SFX_FRAME_TRUNCATED;
    if (size - SFX_FRAME_HEADER > header->length) return SFX_FRAME_TRAILING;
    return SFX_FRAME_VALID;
}

const char *sfx_frame_problem_text(int problem) {
    switch (problem) {
    case SFX_FRAME_VALID: return "valid";
    case SFX_FRAME_SHORT: return "the frame is shorter than its 12-byte header";
    case SFX_FRAME_BAD_MAGIC: return "the frame does not start with SX; speak sfx's protocol (docs/PROTOCOL.md)";
    case SFX_FRAME_BAD_VERSION: return "the frame's protocol version is not 1; use a client of the daemon's version";
    case SFX_FRAME_TOO_LONG: return "the frame's length field exceeds 65524 bytes; send shorter requests";
    case SFX_FRAME_TRUNCATED: return "the frame is truncated: fewer bytes than its length field says; send the whole frame in one message";
    case SFX_FRAME_TRAILING: return "the frame has bytes beyond its length field; send one frame per message";
    default: return "the frame is malformed";
    }
}

int sfx_socket_path(char *out, size_t capacity) {
    const char *explicit_path = getenv("SFX_SOCKET");
    int written;
    if (explicit_path && explicit_path[0] == '/') {
        written = snprintf(out, capacity, "%s", explicit_path);
        return written > 0 && (size_t)written < capacity ? 1 : -1;
    } else {
        const char *runtime = getenv("XDG_RUNTIME_DIR");
        if (!runtime || runtime[0] != '/') return -1;
        written = snprintf(out, capacity, "%s/sfx/sfx.sock", runtime);
    }
    return written > 0 && (size_t)written < capacity ? 0 : -1;
}

int sfx_client_timeout_ms(void) {
    const char *text = getenv("SFX_DAEMON_TIMEOUT");
    if (text && *text) {
        char *end;
        long value = strtol(text, &end, 10);
        if (*end == 0 && value >= 1 && value <= 60000) return (int)value;
    }
    return SFX_CLIENT_TIMEOUT_MS;
}

int sfx_client_connect(const char *path, int any_owner) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path) return -ENAMETOOLONG;
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    // A Unix socket's connect and send wait for room (a full listen backlog, a full peer) only
    // as long as SO_SNDTIMEO: a daemon flooded or stuck costs the client this much, no more.
    // Where there is room, connect returns at once: nothing is added to the fast path.
    int timeout = sfx_client_timeout_ms();
    struct timeval bound = {.tv_sec = timeout / 1000, .tv_usec = (timeout % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int code = errno == EINPROGRESS ? ETIMEDOUT : errno;
        close(fd);
        return -code;
    }
    uid_t uid;
    if (!any_owner && (sfx_peer_credentials(fd, NULL, &uid, NULL) != 0 || (uid != geteuid() && uid != 0))) {
        close(fd);
        return -EPERM;
    }
    return fd;
}

int sfx_send_frame(int socket, uint8_t type, uint32_t id, const void *payload, size_t length, int pass_fd) {
    uint8_t frame[SFX_FRAME_MAX];
    size_t size = sfx_frame_encode(frame, sizeof frame, type, id, payload, length);
    if (size == 0) return -EMSGSIZE;
    struct iovec vector = {.iov_base = frame, .iov_len = size};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
    if (pass_fd >= 0) {
        memset(&control, 0, sizeof control);
        message.msg_control = control.space;
        message.msg_controllen = sizeof control.space;
        struct cmsghdr *c = CMSG_FIRSTHDR(&message);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    for (;;) {
        ssize_t sent = sendmsg(socket, &message, MSG_NOSIGNAL);
        if (sent == (ssize_t)size) return 0;
        if (sent < 0 && errno == EINTR) continue;
        return sent < 0 ? -errno : -EMSGSIZE;
    }
}

ssize_t sfx_receive_message(int socket, uint8_t *buffer, size_t capacity, int *fds, int max_fds, int *fd_count, int *truncated) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * 16)];
    } control;
    struct iovec vector = {.iov_base = buffer, .iov_len = capacity};
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space,
                             .msg_controllen = sizeof control.space};
    *fd_count = 0;
    *truncated = 0;
    ssize_t got;
    do {
        got = recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return -errno;
    if (message.msg_flags & MSG_TRUNC) *truncated = 1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (*fd_count < max_fds) fds[(*fd_count)++] = fd;
            else close(fd);
        }
    }
    // Descriptors cut off by a control buffer that was too small are closed by the kernel
    // (MSG_CTRUNC); nothing more to do.
    return got;
}

int sfx_receive_reply(int socket, int timeout_ms, sfx_frame_header *header, char *payload, size_t capacity) {
    struct pollfd p = {.fd = socket, .events = POLLIN};
    int ready;
    do {
        ready = poll(&p, 1, timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) return -errno;
    if (ready == 0) return -ETIMEDOUT;
    uint8_t buffer[SFX_FRAME_MAX];
    int fds[1], fd_count, truncated;
    ssize_t got = sfx_receive_message(socket, buffer, sizeof buffer, fds, 0, &fd_count, &truncated);
    if (got == 0) return -ECONNRESET;
    if (got < 0) return (int)got;
    if (truncated || sfx_frame_decode(buffer, (size_t)got, header) != SFX_FRAME_VALID) return -EPROTO;
    if (capacity > 0) {
        size_t n = header->length < capacity - 1 ? header->length : capacity - 1;
        memcpy(payload, buffer + SFX_FRAME_HEADER, n);
        payload[n] = 0;
    }
    return 0;
}

int sfx_peer_credentials(int socket, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t size = sizeof credentials;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return -errno;
    if (pid) *pid = credentials.pid;
    if (uid) *uid = credentials.uid;
    if (gid) *gid = credentials.gid;
    return 0;
}

int sfx_peer_in_group(int socket, gid_t group) {
    gid_t gid;
    if (sfx_peer_credentials(socket, NULL, NULL, &gid) == 0 && gid == group) return 1;
    gid_t groups[1024];
    socklen_t size = sizeof groups;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERGROUPS, groups, &size) != 0) return 0;
    for (size_t i = 0; i < size / sizeof(gid_t); i++) {
        if (groups[i] == group) return 1;
    }
    return 0;
}

int sfx_accept(int listening) {
    int fd = accept4(listening, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int sfx_wake_descriptor(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int sfx_reply_is_busy(const sfx_frame_header *header, const char *payload) {
    return header->type == SFX_REPLY_ERROR && strncmp(payload, "busy:", 5) == 0;
}
