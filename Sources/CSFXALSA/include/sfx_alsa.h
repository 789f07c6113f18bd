// What Swift cannot do with alsa-lib directly: its error handler is a C variadic function, and
// its configuration is a tree of opaque nodes.
#pragma once
#include <stddef.h>

/// Stops alsa-lib from printing its own diagnostics ("ALSA lib conf.c:…") on stderr: sfx reports
/// every failure itself, as one line that names the device and the fix.
void sfx_alsa_silence_errors(void);

/// The `type` of ALSA PCM `name` in alsa-lib's configuration ("pipewire", "pulse", "hw",
/// "plug"…) into `out`; 0, or -1 when the name is not defined (a card name like hw:0 is).
int sfx_pcm_config_type(const char *name, char *out, size_t size);

/// The plugins ALSA PCM `name` leads to, through alsa-lib's configuration: its `type`, then the
/// type of its slave (`slave.pcm`, `asym`'s `playback.pcm`, a named slave `pcm_slave.X`), and
/// so on for at most `depth` levels, written into `out` separated by spaces ("plug pipewire",
/// "asym plug hw"). Returns the number of types written (0 or more), or -1 when `name` is not
/// a defined PCM.
int sfx_pcm_config_chain(const char *name, int depth, char *out, size_t size);
