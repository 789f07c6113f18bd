// Mixing kernels for instruction sets beyond the build's baseline (x86-64's SSE2), chosen at
// run time: the mixer calls one only when sfx_kernels_avx2 says the processor has it. Each
// computes the same samples as the mixer's portable Swift code, bit for bit: the same IEEE
// single-precision operations in the same order, without fused multiply-adds.
#ifndef SFX_KERNELS_H
#define SFX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Internal to sfx: never exported from libsfx.so beside the C API.
#pragma GCC visibility push(hidden)

/// Nonzero when the AVX2 kernels may be used: set before main (or the library's first call)
/// from the processor's features, and 0 when SFX_CPU_EXTENSIONS=none is in the environment.
/// Tests set it to compare the kernels with the portable code; nothing may render meanwhile.
extern int sfx_kernels_avx2;

/// sfx_kernels_avx2, read (for Swift, which takes a C global as shared mutable state).
static inline int sfx_kernels_have_avx2(void) { return sfx_kernels_avx2; }

/// Sets sfx_kernels_avx2 (tests: 0 for the portable code, 1 where the processor has AVX2).
void sfx_kernels_set_avx2(int enabled);

/// A gain gliding in a straight line (the mixer's Ramp): for the k-th frame from now (k ≥ 1)
/// e = elapsed + k, and the gain is start + step · e while e < length, target from there on.
typedef struct {
    float start;
    float step;
    float target;
    int32_t elapsed;
    int32_t length;
} sfx_ramp_state;

/// A mono cue added into interleaved stereo at a rate other than 1, read by linear
/// interpolation (a + (b − a)·f, f the read position's top 24 bits of fraction × 2⁻²⁴): frame k
/// (0-based) reads at position + k · increment (32.32 fixed point) and adds the sample × the
/// left and right ramps' gains for frame k + 1. Does the largest multiple of 8 frames ≤ frames
/// and returns it; the caller does the rest. Every read is at most frame frame_count − 1, given
/// that position + (frames − 1) · increment reads a frame before frame_count − 1.
size_t sfx_positional_mono_stereo_avx2(const float *samples, int64_t frame_count, float *out, size_t frames,
                                       uint64_t position, uint64_t increment,
                                       sfx_ramp_state left, sfx_ramp_state right);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
