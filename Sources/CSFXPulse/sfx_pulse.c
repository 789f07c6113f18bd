#include "sfx_pulse.h"

#include <pulse/pulseaudio.h>
#include <pulse/ext-stream-restore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sfx_on_demand.h"

/* libpulse on demand: linked, it and what it loads (X11, D-Bus, systemd) cost every `sfx` command
 * about 2 ms at start-up, and only `sfx status` and the mute check ask a server. The functions
 * below are called through pointers that the first query fills (dlopen, dlsym). */
#define SFX_PULSE_FUNCTIONS(X) \
    X(pa_context_connect) X(pa_context_disconnect) X(pa_context_errno) X(pa_context_get_server_info) \
    X(pa_context_get_sink_info_by_index) X(pa_context_get_sink_info_by_name) X(pa_context_get_sink_input_info_list) \
    X(pa_context_get_state) X(pa_context_new_with_proplist) X(pa_context_unref) X(pa_cvolume_max) \
    X(pa_ext_stream_restore_read) X(pa_mainloop_dispatch) X(pa_mainloop_free) X(pa_mainloop_get_api) \
    X(pa_mainloop_new) X(pa_mainloop_poll) X(pa_mainloop_prepare) X(pa_operation_unref) X(pa_proplist_free) \
    X(pa_proplist_gets) X(pa_proplist_new) X(pa_proplist_sets) X(pa_strerror)

static struct { SFX_PULSE_FUNCTIONS(SFX_ON_DEMAND_FIELD) } pulse;
static sfx_on_demand pulse_loader = {
    .sonames = {"libpulse.so.0"}, .functions = {SFX_PULSE_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(pulse),
    .install = "install libpulse0", .upgrade = "install libpulse0 from Debian 12 or later",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* From here on, each call of a libpulse function goes through its pointer. */
#define SFX_THROUGH_POINTER(name) (pulse.name)
#define pa_context_connect SFX_THROUGH_POINTER(pa_context_connect)
#define pa_context_disconnect SFX_THROUGH_POINTER(pa_context_disconnect)
#define pa_context_errno SFX_THROUGH_POINTER(pa_context_errno)
#define pa_context_get_server_info SFX_THROUGH_POINTER(pa_context_get_server_info)
#define pa_context_get_sink_info_by_index SFX_THROUGH_POINTER(pa_context_get_sink_info_by_index)
#define pa_context_get_sink_info_by_name SFX_THROUGH_POINTER(pa_context_get_sink_info_by_name)
#define pa_context_get_sink_input_info_list SFX_THROUGH_POINTER(pa_context_get_sink_input_info_list)
#define pa_context_get_state SFX_THROUGH_POINTER(pa_context_get_state)
#define pa_context_new_with_proplist SFX_THROUGH_POINTER(pa_context_new_with_proplist)
#define pa_context_unref SFX_THROUGH_POINTER(pa_context_unref)
#define pa_cvolume_max SFX_THROUGH_POINTER(pa_cvolume_max)
#define pa_ext_stream_restore_read SFX_THROUGH_POINTER(pa_ext_stream_restore_read)
#define pa_mainloop_dispatch SFX_THROUGH_POINTER(pa_mainloop_dispatch)
#define pa_mainloop_free SFX_THROUGH_POINTER(pa_mainloop_free)
#define pa_mainloop_get_api SFX_THROUGH_POINTER(pa_mainloop_get_api)
#define pa_mainloop_new SFX_THROUGH_POINTER(pa_mainloop_new)
#define pa_mainloop_poll SFX_THROUGH_POINTER(pa_mainloop_poll)
#define pa_mainloop_prepare SFX_THROUGH_POINTER(pa_mainloop_prepare)
#define pa_operation_unref SFX_THROUGH_POINTER(pa_operation_unref)
#define pa_proplist_free SFX_THROUGH_POINTER(pa_proplist_free)
#define pa_proplist_gets SFX_THROUGH_POINTER(pa_proplist_gets)
#define pa_proplist_new SFX_THROUGH_POINTER(pa_proplist_new)
#define pa_proplist_sets SFX_THROUGH_POINTER(pa_proplist_sets)
#define pa_strerror SFX_THROUGH_POINTER(pa_strerror)

/* One reading of sfx's streams: the one that decides (of several, a muted one). */
typedef struct {
    int found;
    int mute;
    double volume;
    uint32_t sink;
    char name[128];
} stream_reading;

typedef struct {
    sfx_pulse_state *out;
    const char *program;
    int pid;
    int pending;
    /* Of this pass over the sink-inputs: the streams set up, and those routed but still at the
     * zero volume a stream shows before its volume is known (counted only if that lasts). */
    stream_reading settled, routed_silent;
    int unsettled;
    char default_sink[128];
} query;

static void copy(char *to, size_t size, const char *from) {
    snprintf(to, size, "%s", from ? from : "");
}

static double loudness(const pa_cvolume *volume) {
    return (double)pa_cvolume_max(volume) / (double)PA_VOLUME_NORM;
}

/* The application names of the pulse and the pipewire ALSA plugins end in "[program]". */
static int ends_with_program(const char *name, const char *program) {
    if (!name) return 0;
    char suffix[160];
    snprintf(suffix, sizeof suffix, "[%s]", program);
    size_t ln = strlen(name), ls = strlen(suffix);
    return ln >= ls && strcmp(name + ln - ls, suffix) == 0;
}

static void on_server(pa_context *c, const pa_server_info *info, void *userdata) {
    (void)c;
    query *q = userdata;
    if (info) {
        copy(q->out->server_name, sizeof q->out->server_name, info->server_name);
        copy(q->default_sink, sizeof q->default_sink, info->default_sink_name);
    }
    q->pending--;
}

static void keep(stream_reading *r, const pa_sink_input_info *info, double volume, const char *name) {
    /* Of several streams of ours, a muted one is what the user set. */
    if (r->found && !(info->mute && !r->mute)) return;
    r->found = 1;
    r->mute = info->mute ? 1 : 0;
    r->volume = volume;
    r->sink = info->sink;
    copy(r->name, sizeof r->name, name);
}

static void on_sink_input(pa_context *c, const pa_sink_input_info *info, int eol, void *userdata) {
    (void)c;
    query *q = userdata;
    if (eol) { q->pending--; return; }
    /* Ours: our process id, or (the pipewire plugin's streams carry none) our application name. */
    const char *pid = pa_proplist_gets(info->proplist, PA_PROP_APPLICATION_PROCESS_ID);
    const char *name = pa_proplist_gets(info->proplist, PA_PROP_APPLICATION_NAME);
    if (pid) {
        if (atoi(pid) != q->pid) return;
    } else if (!ends_with_program(name, q->program)) {
        return;
    }
    /* A new stream is listed before the session manager has set it up: pipewire-pulse shows a
     * stream of the pipewire plugin unmuted at volume 0 until it has read the stream's volume
     * (the session manager's stream-restore sets it, or the stream's own), and with no sink
     * until it is routed; a few milliseconds, far longer on a busy or freshly started machine.
     * A stream counts once muted, or routed with a volume above 0. */
    double volume = loudness(&info->volume);
    if (info->mute || (info->sink != PA_INVALID_INDEX && volume > 0)) {
        keep(&q->settled, info, volume, name);
    } else {
        q->unsettled++;
        if (info->sink != PA_INVALID_INDEX) keep(&q->routed_silent, info, volume, name);
    }
}

static void on_restore(pa_context *c, const pa_ext_stream_restore_info *info, int eol, void *userdata) {
    (void)c;
    query *q = userdata;
    if (eol) { q->pending--; return; }
    static const char prefix[] = "sink-input-by-application-name:";
    if (!info->name || strncmp(info->name, prefix, sizeof prefix - 1) != 0) return;
    const char *app = info->name + sizeof prefix - 1;
    if (!ends_with_program(app, q->program)) return;
    double volume = info->volume.channels > 0 ? loudness(&info->volume) : -1;
    if (q->out->restore_found && !(info->mute && !q->out->restore_mute)) return;
    q->out->restore_found = 1;
    q->out->restore_mute = info->mute ? 1 : 0;
    q->out->restore_volume = volume;
    copy(q->out->restore_name, sizeof q->out->restore_name, app);
}

static void on_sink(pa_context *c, const pa_sink_info *info, int eol, void *userdata) {
    (void)c;
    query *q = userdata;
    if (eol) { q->pending--; return; }
    q->out->sink_mute = info->mute ? 1 : 0;
    q->out->sink_volume = loudness(&info->volume);
    copy(q->out->sink_name, sizeof q->out->sink_name, info->name);
    copy(q->out->sink_description, sizeof q->out->sink_description, info->description);
}

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Runs the loop until `done` says so or the deadline passes; 0 when done. */
static int run_until(pa_mainloop *loop, pa_context *ctx, query *q, long long deadline, int want_ready) {
    for (;;) {
        if (want_ready) {
            pa_context_state_t s = pa_context_get_state(ctx);
            if (s == PA_CONTEXT_READY) return 0;
            if (!PA_CONTEXT_IS_GOOD(s)) return -1;
        } else if (q->pending <= 0) {
            return 0;
        } else if (!PA_CONTEXT_IS_GOOD(pa_context_get_state(ctx))) {
            return -1;
        }
        long long left = deadline - now_us();
        if (left <= 0) return -1;
        if (pa_mainloop_prepare(loop, (int)left) < 0) return -1;
        if (pa_mainloop_poll(loop) < 0) return -1;
        if (pa_mainloop_dispatch(loop) < 0) return -1;
    }
}

int sfx_pulse_query(const char *program, int pid, int timeout_ms, sfx_pulse_state *out) {
    memset(out, 0, sizeof *out);
    out->sink_mute = out->stream_mute = out->restore_mute = -1;
    out->sink_volume = out->stream_volume = out->restore_volume = -1;
    if (!sfx_on_demand_ready(&pulse_loader)) { copy(out->error, sizeof out->error, sfx_on_demand_error(&pulse_loader)); return -1; }
    query q = { .out = out, .program = program, .pid = pid, .pending = 0 };
    long long deadline = now_us() + (long long)timeout_ms * 1000;

    pa_mainloop *loop = pa_mainloop_new();
    if (!loop) { copy(out->error, sizeof out->error, "cannot make a libpulse main loop"); return -1; }
    pa_proplist *props = pa_proplist_new();
    pa_proplist_sets(props, PA_PROP_APPLICATION_NAME, "sfx (mute check)");
    pa_context *ctx = pa_context_new_with_proplist(pa_mainloop_get_api(loop), "sfx (mute check)", props);
    pa_proplist_free(props);
    int result = -1;
    if (!ctx) { copy(out->error, sizeof out->error, "cannot make a libpulse context"); goto done_loop; }
    if (pa_context_connect(ctx, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0
        || run_until(loop, ctx, &q, deadline, 1) < 0) {
        int code = pa_context_errno(ctx);
        snprintf(out->error, sizeof out->error, "%s", code ? pa_strerror(code) : "no answer in time");
        goto done_ctx;
    }
    out->connected = 1;
    pa_operation *ops[3];
    int n = 0;
    q.pending = 3;
    ops[n++] = pa_context_get_server_info(ctx, on_server, &q);
    ops[n++] = pa_context_get_sink_input_info_list(ctx, on_sink_input, &q);
    ops[n++] = pa_ext_stream_restore_read(ctx, on_restore, &q);
    for (int i = 0; i < n; i++) {
        if (ops[i]) pa_operation_unref(ops[i]); else q.pending--;   /* e.g. no stream-restore */
    }
    run_until(loop, ctx, &q, deadline, 0);
    /* A stream of ours not set up yet is read again until it is, for at most three quarters of
     * the time given (the sink is asked for after). An unrouted stream plays nowhere yet, so
     * the wait does not delay its sound; a routed one still at volume 0 then counts as that. */
    long long settle_deadline = deadline - (long long)timeout_ms * 1000 / 4;
    while (q.unsettled > 0 && now_us() + 5000 < settle_deadline) {
        usleep(5000);
        memset(&q.settled, 0, sizeof q.settled);
        memset(&q.routed_silent, 0, sizeof q.routed_silent);
        q.unsettled = 0;
        q.pending = 1;
        pa_operation *again = pa_context_get_sink_input_info_list(ctx, on_sink_input, &q);
        if (!again) break;
        pa_operation_unref(again);
        if (run_until(loop, ctx, &q, settle_deadline, 0) < 0) break;
        out->stream_rereads++;
    }
    out->streams_unsettled = q.unsettled;
    stream_reading *own = q.settled.found ? &q.settled : (q.routed_silent.found ? &q.routed_silent : NULL);
    if (own && q.settled.found && q.routed_silent.found && q.routed_silent.mute == 0 && q.settled.mute == 0)
        own = q.routed_silent.volume < q.settled.volume ? &q.routed_silent : &q.settled;
    uint32_t stream_sink = PA_INVALID_INDEX;
    if (own) {
        out->stream_found = 1;
        out->stream_mute = own->mute;
        out->stream_volume = own->volume;
        copy(out->stream_name, sizeof out->stream_name, own->name);
        stream_sink = own->sink;
    }
    q.pending = 1;
    pa_operation *op = stream_sink != PA_INVALID_INDEX
        ? pa_context_get_sink_info_by_index(ctx, stream_sink, on_sink, &q)
        : (q.default_sink[0] ? pa_context_get_sink_info_by_name(ctx, q.default_sink, on_sink, &q) : NULL);
    if (op) { pa_operation_unref(op); run_until(loop, ctx, &q, deadline, 0); }
    result = 0;
    pa_context_disconnect(ctx);
done_ctx:
    pa_context_unref(ctx);
done_loop:
    pa_mainloop_free(loop);
    return result;
}
