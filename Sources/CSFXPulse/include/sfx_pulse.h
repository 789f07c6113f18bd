#ifndef SFX_PULSE_H
#define SFX_PULSE_H

/// What a sound server (PulseAudio, or PipeWire through pipewire-pulse) says about where sfx's
/// sound goes: the sink, sfx's own stream (a sink-input of this process, once the session
/// manager has set it up: see sfx_pulse_query), and the stream-restore entry the server applies
/// to sfx's new streams. -1 means unknown.
typedef struct {
    int connected;                 /* 1 when the server answered */
    char server_name[96];          /* "PulseAudio (on PipeWire 0.3.65)", "pulseaudio" */
    char sink_name[128];
    char sink_description[128];
    int sink_mute;
    double sink_volume;            /* loudest channel, 1 = 100 % */
    int stream_found;              /* a stream of ours the session manager has set up */
    char stream_name[128];         /* the stream's application.name */
    int stream_mute;
    double stream_volume;
    int restore_found;
    char restore_name[128];        /* the application name of the entry */
    int restore_mute;
    double restore_volume;         /* -1 when the entry keeps no volume */
    int streams_unsettled;         /* streams of ours still not set up when the wait ended */
    int stream_rereads;            /* how often the streams were read again, waiting for that */
    char error[128];               /* why not connected */
} sfx_pulse_state;

/// Connects (no autospawn), reads, disconnects, within timeout_ms. `program` is the process's
/// short name, as the ALSA plugins put it in their application names ("ALSA plug-in [sfx]",
/// "PipeWire ALSA [sfx]"); `pid` is the process whose sink-inputs count as sfx's.
/// A stream of ours the server lists before the session manager has set it up (unmuted at
/// volume 0, or not routed to a sink yet) is read again every 5 ms, for at most three quarters
/// of timeout_ms; one that never gets there is not read, except a routed one at volume 0.
/// Returns 0 when the server answered, -1 otherwise (out->error says why).
int sfx_pulse_query(const char *program, int pid, int timeout_ms, sfx_pulse_state *out);

#endif
