// What Swift cannot do with alsa-lib directly: its error handler is a C variadic function.
#pragma once

/// Stops alsa-lib from printing its own diagnostics ("ALSA lib conf.c:…") on stderr: sfx reports
/// every failure itself, as one line that names the device and the fix.
void sfx_alsa_silence_errors(void);
