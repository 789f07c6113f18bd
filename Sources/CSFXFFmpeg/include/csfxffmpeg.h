#ifndef CSFXFFMPEG_H
#define CSFXFFMPEG_H

/// Loads FFmpeg's libraries on first use (see ffmpeg.c): 1 when they are there, 0 when not.
/// Thread-safe; the loading happens once.
int sfx_ffmpeg_available(void);

/// Why FFmpeg is not available, in one line naming what to install, or NULL when it is.
const char *sfx_ffmpeg_error(void);

#endif
