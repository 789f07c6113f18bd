/*
 * FFmpeg on demand. libavcodec alone pulls in about 150 shared libraries (X11, pango, codecs),
 * which cost every `sfx` command some 35 ms at start-up when linked. So sfx does not link
 * FFmpeg: the FFmpeg functions it calls are defined here, hidden in sfx's own image, and each
 * goes through a pointer that the first call fills by dlopen()ing libavformat, libavcodec,
 * libswresample and libavutil (the major versions sfx was built against) and dlsym()ing them.
 * Without the libraries every call fails as FFmpeg would (AVERROR(ENOSYS), NULL, 0), and
 * sfx_ffmpeg_error() says what is missing; callers ask sfx_ffmpeg_available() first.
 *
 * Generated from the FFmpeg 5.1 headers' prototypes of the functions sfx uses; add a function
 * here (in its library's list, and its definition) before calling a new one from Swift.
 */
#include <errno.h>

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>

#include "csfxffmpeg.h"
#include "sfx_on_demand.h"

#define SFX_HIDDEN __attribute__((visibility("hidden")))
#define SFX_TEXT(x) #x
#define SFX_SONAME(lib, major) "lib" lib ".so." SFX_TEXT(major)

/* Opened in this order: libavutil first, as the others need it, so a missing one is named precisely. */
enum { SFX_UTIL, SFX_SWRESAMPLE, SFX_CODEC, SFX_FORMAT };

/* The functions sfx calls, by the library that has them. */
#define SFX_UTIL_FUNCTIONS(X) \
    X(av_channel_layout_copy) X(av_channel_layout_default) X(av_dict_free) X(av_dict_get) X(av_dict_set) X(av_frame_alloc) \
    X(av_frame_free) X(av_frame_get_buffer) X(av_frame_make_writable) X(av_frame_unref) X(av_free) X(av_freep) \
    X(av_log_set_level) X(av_malloc) X(av_rescale_q) X(av_sample_fmt_is_planar) X(av_strerror) \
    X(avutil_version)
#define SFX_SWRESAMPLE_FUNCTIONS(X) \
    X(swresample_version) X(swr_alloc_set_opts2) X(swr_convert) X(swr_free) X(swr_init)
#define SFX_CODEC_FUNCTIONS(X) \
    X(av_packet_alloc) X(av_packet_free) X(av_packet_rescale_ts) X(av_packet_unref) X(avcodec_alloc_context3) \
    X(avcodec_find_decoder) X(avcodec_find_encoder) X(avcodec_flush_buffers) X(avcodec_free_context) \
    X(avcodec_open2) X(avcodec_parameters_copy) X(avcodec_parameters_from_context) X(avcodec_parameters_to_context) \
    X(avcodec_receive_frame) X(avcodec_receive_packet) X(avcodec_send_frame) X(avcodec_send_packet) \
    X(avcodec_version)
#define SFX_FORMAT_FUNCTIONS(X) \
    X(av_find_best_stream) X(av_interleaved_write_frame) X(av_read_frame) X(av_seek_frame) X(av_write_frame) \
    X(av_write_trailer) X(avformat_alloc_context) X(avformat_alloc_output_context2) X(avformat_close_input) \
    X(avformat_find_stream_info) X(avformat_free_context) X(avformat_new_stream) X(avformat_open_input) \
    X(avformat_version) X(avformat_write_header) X(avio_alloc_context) X(avio_closep) X(avio_context_free) \
    X(avio_flush) X(avio_open)

static struct {
    SFX_UTIL_FUNCTIONS(SFX_ON_DEMAND_FIELD) SFX_SWRESAMPLE_FUNCTIONS(SFX_ON_DEMAND_FIELD)
    SFX_CODEC_FUNCTIONS(SFX_ON_DEMAND_FIELD) SFX_FORMAT_FUNCTIONS(SFX_ON_DEMAND_FIELD)
} ff;

static sfx_on_demand ffmpeg_loader = {
    .sonames = {
        [SFX_UTIL] = SFX_SONAME("avutil", LIBAVUTIL_VERSION_MAJOR),
        [SFX_SWRESAMPLE] = SFX_SONAME("swresample", LIBSWRESAMPLE_VERSION_MAJOR),
        [SFX_CODEC] = SFX_SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR),
        [SFX_FORMAT] = SFX_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR),
    },
    .functions = {
        [SFX_UTIL] = SFX_UTIL_FUNCTIONS(SFX_ON_DEMAND_NAME),
        [SFX_SWRESAMPLE] = SFX_SWRESAMPLE_FUNCTIONS(SFX_ON_DEMAND_NAME),
        [SFX_CODEC] = SFX_CODEC_FUNCTIONS(SFX_ON_DEMAND_NAME),
        [SFX_FORMAT] = SFX_FORMAT_FUNCTIONS(SFX_ON_DEMAND_NAME),
    },
    SFX_ON_DEMAND_TABLE(ff),
    .label = "FFmpeg's ",
    .install = "install Debian's libavformat59, libavcodec59, libswresample4 and libavutil57",
    .upgrade = "install the FFmpeg 5.1 libraries sfx was built with",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static int sfx_ffmpeg_ready(void)
{
    return sfx_on_demand_ready(&ffmpeg_loader);
}

int sfx_ffmpeg_available(void)
{
    return sfx_ffmpeg_ready();
}

const char *sfx_ffmpeg_error(void)
{
    return sfx_on_demand_error(&ffmpeg_loader);
}

/* ---- the functions sfx calls ---- */

SFX_HIDDEN int av_channel_layout_copy(AVChannelLayout *dst, const AVChannelLayout *src)
{
    return sfx_ffmpeg_ready() ? ff.av_channel_layout_copy(dst, src) : AVERROR(ENOSYS);
}

SFX_HIDDEN void av_channel_layout_default(AVChannelLayout *ch_layout, int nb_channels)
{
    if (sfx_ffmpeg_ready()) ff.av_channel_layout_default(ch_layout, nb_channels);
}

SFX_HIDDEN void av_dict_free(AVDictionary **m)
{
    if (sfx_ffmpeg_ready()) ff.av_dict_free(m);
}

SFX_HIDDEN AVDictionaryEntry *av_dict_get(const AVDictionary *m, const char *key, const AVDictionaryEntry *prev, int flags)
{
    return sfx_ffmpeg_ready() ? ff.av_dict_get(m, key, prev, flags) : NULL;
}

SFX_HIDDEN int av_dict_set(AVDictionary **pm, const char *key, const char *value, int flags)
{
    return sfx_ffmpeg_ready() ? ff.av_dict_set(pm, key, value, flags) : AVERROR(ENOSYS);
}

SFX_HIDDEN int av_find_best_stream(AVFormatContext *ic, enum AVMediaType type, int wanted_stream_nb, int related_stream, const AVCodec **decoder_ret, int flags)
{
    return sfx_ffmpeg_ready() ? ff.av_find_best_stream(ic, type, wanted_stream_nb, related_stream, decoder_ret, flags) : AVERROR(ENOSYS);
}

SFX_HIDDEN AVFrame * av_frame_alloc(void)
{
    return sfx_ffmpeg_ready() ? ff.av_frame_alloc() : NULL;
}

SFX_HIDDEN void av_frame_free(AVFrame **frame)
{
    if (sfx_ffmpeg_ready()) ff.av_frame_free(frame);
}

SFX_HIDDEN int av_frame_get_buffer(AVFrame *frame, int align)
{
    return sfx_ffmpeg_ready() ? ff.av_frame_get_buffer(frame, align) : AVERROR(ENOSYS);
}

SFX_HIDDEN int av_frame_make_writable(AVFrame *frame)
{
    return sfx_ffmpeg_ready() ? ff.av_frame_make_writable(frame) : AVERROR(ENOSYS);
}

SFX_HIDDEN void av_frame_unref(AVFrame *frame)
{
    if (sfx_ffmpeg_ready()) ff.av_frame_unref(frame);
}

SFX_HIDDEN void av_free(void *ptr)
{
    if (sfx_ffmpeg_ready()) ff.av_free(ptr);
}

SFX_HIDDEN void av_freep(void *ptr)
{
    if (sfx_ffmpeg_ready()) ff.av_freep(ptr);
}

SFX_HIDDEN int av_interleaved_write_frame(AVFormatContext *s, AVPacket *pkt)
{
    return sfx_ffmpeg_ready() ? ff.av_interleaved_write_frame(s, pkt) : AVERROR(ENOSYS);
}

SFX_HIDDEN void av_log_set_level(int level)
{
    if (sfx_ffmpeg_ready()) ff.av_log_set_level(level);
}

SFX_HIDDEN void * av_malloc(size_t size)
{
    return sfx_ffmpeg_ready() ? ff.av_malloc(size) : NULL;
}

SFX_HIDDEN AVPacket * av_packet_alloc(void)
{
    return sfx_ffmpeg_ready() ? ff.av_packet_alloc() : NULL;
}

SFX_HIDDEN void av_packet_free(AVPacket **pkt)
{
    if (sfx_ffmpeg_ready()) ff.av_packet_free(pkt);
}

SFX_HIDDEN void av_packet_rescale_ts(AVPacket *pkt, AVRational tb_src, AVRational tb_dst)
{
    if (sfx_ffmpeg_ready()) ff.av_packet_rescale_ts(pkt, tb_src, tb_dst);
}

SFX_HIDDEN void av_packet_unref(AVPacket *pkt)
{
    if (sfx_ffmpeg_ready()) ff.av_packet_unref(pkt);
}

SFX_HIDDEN int av_read_frame(AVFormatContext *s, AVPacket *pkt)
{
    return sfx_ffmpeg_ready() ? ff.av_read_frame(s, pkt) : AVERROR(ENOSYS);
}

SFX_HIDDEN int64_t av_rescale_q(int64_t a, AVRational bq, AVRational cq)
{
    return sfx_ffmpeg_ready() ? ff.av_rescale_q(a, bq, cq) : 0;
}

SFX_HIDDEN int av_sample_fmt_is_planar(enum AVSampleFormat sample_fmt)
{
    return sfx_ffmpeg_ready() ? ff.av_sample_fmt_is_planar(sample_fmt) : AVERROR(ENOSYS);
}

SFX_HIDDEN int av_seek_frame(AVFormatContext *s, int stream_index, int64_t timestamp, int flags)
{
    return sfx_ffmpeg_ready() ? ff.av_seek_frame(s, stream_index, timestamp, flags) : AVERROR(ENOSYS);
}

SFX_HIDDEN int av_strerror(int errnum, char *errbuf, size_t errbuf_size)
{
    return sfx_ffmpeg_ready() ? ff.av_strerror(errnum, errbuf, errbuf_size) : AVERROR(ENOSYS);
}

SFX_HIDDEN int av_write_frame(AVFormatContext *s, AVPacket *pkt)
{
    return sfx_ffmpeg_ready() ? ff.av_write_frame(s, pkt) : AVERROR(ENOSYS);
}

SFX_HIDDEN int av_write_trailer(AVFormatContext *s)
{
    return sfx_ffmpeg_ready() ? ff.av_write_trailer(s) : AVERROR(ENOSYS);
}

SFX_HIDDEN AVCodecContext * avcodec_alloc_context3(const AVCodec *codec)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_alloc_context3(codec) : NULL;
}

SFX_HIDDEN const AVCodec * avcodec_find_decoder(enum AVCodecID id)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_find_decoder(id) : NULL;
}

SFX_HIDDEN const AVCodec * avcodec_find_encoder(enum AVCodecID id)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_find_encoder(id) : NULL;
}

SFX_HIDDEN void avcodec_flush_buffers(AVCodecContext *avctx)
{
    if (sfx_ffmpeg_ready()) ff.avcodec_flush_buffers(avctx);
}

SFX_HIDDEN void avcodec_free_context(AVCodecContext **avctx)
{
    if (sfx_ffmpeg_ready()) ff.avcodec_free_context(avctx);
}

SFX_HIDDEN int avcodec_open2(AVCodecContext *avctx, const AVCodec *codec, AVDictionary **options)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_open2(avctx, codec, options) : AVERROR(ENOSYS);
}

SFX_HIDDEN int avcodec_parameters_copy(AVCodecParameters *dst, const AVCodecParameters *src)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_parameters_copy(dst, src) : AVERROR(ENOSYS);
}

SFX_HIDDEN int avcodec_parameters_from_context(AVCodecParameters *par, const AVCodecContext *codec)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_parameters_from_context(par, codec) : AVERROR(ENOSYS);
}

SFX_HIDDEN int avcodec_parameters_to_context(AVCodecContext *codec, const AVCodecParameters *par)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_parameters_to_context(codec, par) : AVERROR(ENOSYS);
}

SFX_HIDDEN int avcodec_receive_frame(AVCodecContext *avctx, AVFrame *frame)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_receive_frame(avctx, frame) : AVERROR(ENOSYS);
}

SFX_HIDDEN int avcodec_receive_packet(AVCodecContext *avctx, AVPacket *avpkt)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_receive_packet(avctx, avpkt) : AVERROR(ENOSYS);
}

SFX_HIDDEN int avcodec_send_frame(AVCodecContext *avctx, const AVFrame *frame)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_send_frame(avctx, frame) : AVERROR(ENOSYS);
}

SFX_HIDDEN int avcodec_send_packet(AVCodecContext *avctx, const AVPacket *avpkt)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_send_packet(avctx, avpkt) : AVERROR(ENOSYS);
}

SFX_HIDDEN unsigned avcodec_version(void)
{
    return sfx_ffmpeg_ready() ? ff.avcodec_version() : 0;
}

SFX_HIDDEN AVFormatContext * avformat_alloc_context(void)
{
    return sfx_ffmpeg_ready() ? ff.avformat_alloc_context() : NULL;
}

SFX_HIDDEN int avformat_alloc_output_context2(AVFormatContext **ctx, const AVOutputFormat *oformat, const char *format_name, const char *filename)
{
    return sfx_ffmpeg_ready() ? ff.avformat_alloc_output_context2(ctx, oformat, format_name, filename) : AVERROR(ENOSYS);
}

SFX_HIDDEN void avformat_close_input(AVFormatContext **s)
{
    if (sfx_ffmpeg_ready()) ff.avformat_close_input(s);
}

SFX_HIDDEN int avformat_find_stream_info(AVFormatContext *ic, AVDictionary **options)
{
    return sfx_ffmpeg_ready() ? ff.avformat_find_stream_info(ic, options) : AVERROR(ENOSYS);
}

SFX_HIDDEN void avformat_free_context(AVFormatContext *s)
{
    if (sfx_ffmpeg_ready()) ff.avformat_free_context(s);
}

SFX_HIDDEN AVStream * avformat_new_stream(AVFormatContext *s, const AVCodec *c)
{
    return sfx_ffmpeg_ready() ? ff.avformat_new_stream(s, c) : NULL;
}

SFX_HIDDEN int avformat_open_input(AVFormatContext **ps, const char *url, const AVInputFormat *fmt, AVDictionary **options)
{
    return sfx_ffmpeg_ready() ? ff.avformat_open_input(ps, url, fmt, options) : AVERROR(ENOSYS);
}

SFX_HIDDEN unsigned avformat_version(void)
{
    return sfx_ffmpeg_ready() ? ff.avformat_version() : 0;
}

SFX_HIDDEN int avformat_write_header(AVFormatContext *s, AVDictionary **options)
{
    return sfx_ffmpeg_ready() ? ff.avformat_write_header(s, options) : AVERROR(ENOSYS);
}

SFX_HIDDEN AVIOContext * avio_alloc_context(unsigned char *buffer, int buffer_size, int write_flag, void *opaque, int (*read_packet)(void *opaque, uint8_t *buf, int buf_size), int (*write_packet)(void *opaque, uint8_t *buf, int buf_size), int64_t (*seek)(void *opaque, int64_t offset, int whence))
{
    return sfx_ffmpeg_ready() ? ff.avio_alloc_context(buffer, buffer_size, write_flag, opaque, read_packet, write_packet, seek) : NULL;
}

SFX_HIDDEN int avio_closep(AVIOContext **s)
{
    return sfx_ffmpeg_ready() ? ff.avio_closep(s) : AVERROR(ENOSYS);
}

SFX_HIDDEN void avio_context_free(AVIOContext **s)
{
    if (sfx_ffmpeg_ready()) ff.avio_context_free(s);
}

SFX_HIDDEN void avio_flush(AVIOContext *s)
{
    if (sfx_ffmpeg_ready()) ff.avio_flush(s);
}

SFX_HIDDEN int avio_open(AVIOContext **s, const char *url, int flags)
{
    return sfx_ffmpeg_ready() ? ff.avio_open(s, url, flags) : AVERROR(ENOSYS);
}

SFX_HIDDEN unsigned avutil_version(void)
{
    return sfx_ffmpeg_ready() ? ff.avutil_version() : 0;
}

SFX_HIDDEN int swr_alloc_set_opts2(struct SwrContext **ps, AVChannelLayout *out_ch_layout, enum AVSampleFormat out_sample_fmt, int out_sample_rate, AVChannelLayout *in_ch_layout, enum AVSampleFormat in_sample_fmt, int in_sample_rate, int log_offset, void *log_ctx)
{
    return sfx_ffmpeg_ready() ? ff.swr_alloc_set_opts2(ps, out_ch_layout, out_sample_fmt, out_sample_rate, in_ch_layout, in_sample_fmt, in_sample_rate, log_offset, log_ctx) : AVERROR(ENOSYS);
}

SFX_HIDDEN int swr_convert(struct SwrContext *s, uint8_t **out, int out_count, const uint8_t **in , int in_count)
{
    return sfx_ffmpeg_ready() ? ff.swr_convert(s, out, out_count, in, in_count) : AVERROR(ENOSYS);
}

SFX_HIDDEN void swr_free(struct SwrContext **s)
{
    if (sfx_ffmpeg_ready()) ff.swr_free(s);
}

SFX_HIDDEN int swr_init(struct SwrContext *s)
{
    return sfx_ffmpeg_ready() ? ff.swr_init(s) : AVERROR(ENOSYS);
}

SFX_HIDDEN unsigned swresample_version(void)
{
    return sfx_ffmpeg_ready() ? ff.swresample_version() : 0;
}
