// FFmpeg's libavformat, libavcodec, libswresample and libavutil, for the formats libsndfile
// cannot read or write (M4A/AAC, ALAC, WMA, ...). Function-like macros do not reach Swift, so
// the few that callers need are given here as inline functions.
#ifndef SFX_CFFMPEG_SHIM_H
#define SFX_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>

/// AVERROR(EAGAIN): the codec wants more input (or has no output yet).
static inline int sfx_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the end of the stream.
static inline int sfx_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(errno value), e.g. for an AVIO callback's failure.
static inline int sfx_averror(int posix_errno) { return AVERROR(posix_errno); }
/// AV_NOPTS_VALUE: no timestamp.
static inline int64_t sfx_av_nopts_value(void) { return AV_NOPTS_VALUE; }
/// AV_TIME_BASE_Q, the time base of AVFormatContext.duration.
static inline AVRational sfx_av_time_base_q(void) { AVRational q = {1, AV_TIME_BASE}; return q; }

#endif
