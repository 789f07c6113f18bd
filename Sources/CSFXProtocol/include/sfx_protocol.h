// The daemon's wire protocol (docs/PROTOCOL.md), in C so that the Swift daemon, the Swift
// command and the small front executable (`sfx` for the common verbs, without Swift's start-up)
// share one implementation of the framing, the descriptor passing and the peer check.
//
// A frame is one SOCK_SEQPACKET message: a 12-byte header, then `length` bytes of payload.
//
//   offset 0  'S' 'X'        magic
//          2  version        SFX_PROTOCOL_VERSION
//          3  type           a request (1–10) or a reply (0x80–0x83)
//          4  id             u32 little-endian, chosen by the client, echoed by the reply
//          8  length         u32 little-endian, ≤ SFX_FRAME_MAX_PAYLOAD, = the bytes that follow
//
// The payload is UTF-8 text, one `key=value` per line. A sound file travels as an open
// descriptor (SCM_RIGHTS) attached to the frame that names it with `file=1`.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SFX_PROTOCOL_VERSION 1
#define SFX_FRAME_HEADER 12
/// The largest frame, header included.
#define SFX_FRAME_MAX 65536
#define SFX_FRAME_MAX_PAYLOAD (SFX_FRAME_MAX - SFX_FRAME_HEADER)

enum sfx_message_type {
    SFX_REQUEST_PLAY = 1,
    SFX_REQUEST_ALERT = 2,
    SFX_REQUEST_VIBRATE = 3,
    SFX_REQUEST_STOP = 4,
    SFX_REQUEST_MUTE = 5,
    SFX_REQUEST_LOAD = 6,
    SFX_REQUEST_STATUS = 7,
    SFX_REQUEST_FILTER = 8,
    SFX_REQUEST_EFFECT = 9,
    SFX_REQUEST_NOTICES = 10,
    SFX_REPLY_OK = 0x80,
    SFX_REPLY_ID = 0x81,
    SFX_REPLY_ERROR = 0x82,
    /// Pushed after the ok to SFX_REQUEST_NOTICES, with its id: one alert the daemon made.
    SFX_REPLY_NOTICE = 0x83,
};

/// Why a frame was refused by `sfx_frame_decode`.
enum sfx_frame_problem {
    SFX_FRAME_VALID = 0,
    SFX_FRAME_SHORT = -1,          // fewer bytes than a header
    SFX_FRAME_BAD_MAGIC = -2,
    SFX_FRAME_BAD_VERSION = -3,
    SFX_FRAME_TOO_LONG = -4,       // the length field exceeds SFX_FRAME_MAX_PAYLOAD
    SFX_FRAME_TRUNCATED = -5,      // fewer payload bytes than the length field says
    SFX_FRAME_TRAILING = -6,       // more bytes than the length field says
};

typedef struct {
    uint8_t version;
    uint8_t type;
    uint32_t id;
    uint32_t length;
} sfx_frame_header;

/// Writes a frame into `out` (capacity `capacity`); returns its size, or 0 when the payload is
/// longer than SFX_FRAME_MAX_PAYLOAD or `out` too small.
size_t sfx_frame_encode(uint8_t *out, size_t capacity, uint8_t type, uint32_t id, const void *payload, size_t length);

/// Checks a received message of `size` bytes and fills `header`; returns SFX_FRAME_VALID or a
/// negative `sfx_frame_problem`. The header is filled whenever `size` ≥ SFX_FRAME_HEADER, so a
/// reply can echo the id of a frame it refuses.
int sfx_frame_decode(const uint8_t *message, size_t size, sfx_frame_header *header);

/// One line naming a frame problem ("the frame's length field says 70000 bytes, more than 65524").
const char *sfx_frame_problem_text(int problem);

/// The user's socket: $SFX_SOCKET when set (absolute), else $XDG_RUNTIME_DIR/sfx/sfx.sock.
/// Returns 1 for $SFX_SOCKET (a socket named on purpose: a system daemon may run as its own
/// user), 0 for the user's own, or -1 when neither is set (then there is no daemon for this user).
int sfx_socket_path(char *out, size_t capacity);

/// How long a client gives the daemon, in milliseconds, to take its connection and to answer its
/// first quick request (a play) before it plays in-process: $SFX_DAEMON_TIMEOUT (1–60000) when
/// set, else this.
#define SFX_CLIENT_TIMEOUT_MS 50
int sfx_client_timeout_ms(void);

/// Connects to the daemon's socket (SOCK_SEQPACKET, close-on-exec); unless `any_owner`, checks
/// that the daemon runs as this user or root (SO_PEERCRED). The connect, and every send on the
/// socket after it, waits at most `sfx_client_timeout_ms()` for room (SO_SNDTIMEO). Returns the
/// descriptor or -errno (-EPERM for a daemon of another user, -EAGAIN when the daemon's listen
/// backlog stayed full).
int sfx_client_connect(const char *path, int any_owner);

/// Whether an error reply says the daemon is at a limit (`busy: …`: id 0 at connect, or the
/// request's id for a file when the daemon reads as many as it may): the client plays
/// in-process, as with no daemon. Returns 1 or 0.
int sfx_reply_is_busy(const sfx_frame_header *header, const char *payload);

/// Sends one frame, with `pass_fd` attached (SCM_RIGHTS) when ≥ 0. Returns 0 or -errno.
int sfx_send_frame(int socket, uint8_t type, uint32_t id, const void *payload, size_t length, int pass_fd);

/// Receives one message (up to `capacity` bytes) and at most `max_fds` passed descriptors
/// (close-on-exec); descriptors beyond `max_fds` are closed. Sets `*truncated` when the message
/// was longer than `capacity` (its rest is discarded). Returns the bytes received, 0 at the end
/// of the connection, or -errno (-EAGAIN when nothing is waiting on a non-blocking socket).
ssize_t sfx_receive_message(int socket, uint8_t *buffer, size_t capacity, int *fds, int max_fds, int *fd_count, int *truncated);

/// Waits up to `timeout_ms` for one reply frame, checks it and copies its payload into
/// `payload` (NUL-terminated, cut to `capacity` - 1). Returns 0, -ETIMEDOUT, -ECONNRESET at the
/// end of the connection, -EPROTO for a malformed frame, or -errno.
int sfx_receive_reply(int socket, int timeout_ms, sfx_frame_header *header, char *payload, size_t capacity);

/// The peer's process, user and group (SO_PEERCRED). Returns 0 or -errno.
int sfx_peer_credentials(int socket, pid_t *pid, uid_t *uid, gid_t *gid);

/// Whether the peer was in `group` when it connected: its primary group (SO_PEERCRED) or one
/// of its supplementary groups (SO_PEERGROUPS). Returns 1 or 0.
int sfx_peer_in_group(int socket, gid_t group);

/// Accepts a connection, non-blocking and close-on-exec (accept4). Returns it or -errno.
int sfx_accept(int listening);

/// poll's POLLRDHUP (the peer shut its side), which Swift's Glibc does not carry.
#define SFX_POLLRDHUP 0x2000

/// A wake-up descriptor (eventfd, non-blocking, close-on-exec), or -errno.
int sfx_wake_descriptor(void);
