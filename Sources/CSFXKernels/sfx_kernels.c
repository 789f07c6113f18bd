// Mixing kernels beyond the baseline instruction set, chosen at run time (sfx_kernels.h).
#include "sfx_kernels.h"

#include <stdlib.h>
#include <string.h>

// No contraction of a * b + c into a fused multiply-add: the samples must equal the portable
// code's, which rounds after each operation.
#pragma STDC FP_CONTRACT OFF

int sfx_kernels_avx2 = 0;

static int sfx_kernels_cpu_has_avx2(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}

void sfx_kernels_set_avx2(int enabled) { sfx_kernels_avx2 = enabled && sfx_kernels_cpu_has_avx2(); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((constructor)) static void sfx_kernels_detect(void) {
    const char *setting = getenv("SFX_CPU_EXTENSIONS");
    if (setting && strcmp(setting, "none") == 0) return;
    sfx_kernels_avx2 = sfx_kernels_cpu_has_avx2();
}

__attribute__((target("avx2")))
static inline __m256 ramp_values(sfx_ramp_state r, int32_t k) {
    // e = elapsed + k + lane (k the 1-based frame of lane 0); the select as the Swift Ramp's.
    __m256i e = _mm256_add_epi32(_mm256_set1_epi32(r.elapsed + k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 v = _mm256_add_ps(_mm256_set1_ps(r.start), _mm256_mul_ps(_mm256_set1_ps(r.step), _mm256_cvtepi32_ps(e)));
    __m256i before = _mm256_cmpgt_epi32(_mm256_set1_epi32(r.length), e);
    return _mm256_blendv_ps(_mm256_set1_ps(r.target), v, _mm256_castsi256_ps(before));
}

__attribute__((target("avx2")))
size_t sfx_positional_mono_stereo_avx2(const float *samples, int64_t frame_count, float *out, size_t frames,
                                       uint64_t position, uint64_t increment,
                                       sfx_ramp_state left, sfx_ramp_state right) {
    const size_t groups = frames / 8;
    // Lane j's offset from the group's first position: j · increment (64-bit lanes, 0–3 and 4–7).
    const __m256i offsetsLow = _mm256_setr_epi64x(0, (long long)increment, (long long)(2 * increment), (long long)(3 * increment));
    const __m256i offsetsHigh = _mm256_add_epi64(offsetsLow, _mm256_set1_epi64x((long long)(4 * increment)));
    // The even 32-bit halves (the fractions' and the indices' lanes) back into lane order.
    const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256 scale = _mm256_set1_ps(1.0f / 16777216.0f);
    const uint64_t span = 7 * increment;
    uint64_t at = position;
    for (size_t g = 0; g < groups; g++, at += 8 * increment) {
        const int64_t first = (int64_t)(at >> 32);
        const uint64_t fraction = at & 0xFFFFFFFFu;
        const __m256i base = _mm256_set1_epi64x((long long)fraction);
        const __m256i low = _mm256_add_epi64(base, offsetsLow), high = _mm256_add_epi64(base, offsetsHigh);
        // Each lane's whole frames past `first` (its position's top half) and its fraction.
        __m256i wholes = _mm256_blend_epi32(_mm256_srli_epi64(low, 32), _mm256_slli_epi64(_mm256_srli_epi64(high, 32), 32), 0xAA);
        __m256i fractions = _mm256_blend_epi32(low, _mm256_slli_epi64(high, 32), 0xAA);
        wholes = _mm256_permutevar8x32_epi32(wholes, order);
        fractions = _mm256_permutevar8x32_epi32(fractions, order);
        __m256 a, b;
        if (((fraction + span) >> 32) <= 7 && first + 9 <= frame_count) {
            // The eight frames read within frames first … first + 8: two loads and two permutes.
            const __m256 window = _mm256_loadu_ps(samples + first), next = _mm256_loadu_ps(samples + first + 1);
            a = _mm256_permutevar8x32_ps(window, wholes);
            b = _mm256_permutevar8x32_ps(next, wholes);
        } else {
            a = _mm256_i32gather_ps(samples + first, wholes, 4);
            b = _mm256_i32gather_ps(samples + first + 1, wholes, 4);
        }
        const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(fractions, 8)), scale);
        const __m256 s = _mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(b, a), f));
        const int32_t k = (int32_t)(8 * g + 1);
        const __m256 x = _mm256_mul_ps(s, ramp_values(left, k)), y = _mm256_mul_ps(s, ramp_values(right, k));
        // Interleaved: x0 y0 x1 y1 x2 y2 x3 y3, then x4 y4 … x7 y7.
        const __m256 lo = _mm256_unpacklo_ps(x, y), hi = _mm256_unpackhi_ps(x, y);
        float *o = out + 16 * g;
        _mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o), _mm256_permute2f128_ps(lo, hi, 0x20)));
        _mm256_storeu_ps(o + 8, _mm256_add_ps(_mm256_loadu_ps(o + 8), _mm256_permute2f128_ps(lo, hi, 0x31)));
    }
    return groups * 8;
}

#else

size_t sfx_positional_mono_stereo_avx2(const float *samples, int64_t frame_count, float *out, size_t frames,
                                       uint64_t position, uint64_t increment,
                                       sfx_ramp_state left, sfx_ramp_state right) {
    (void)samples; (void)frame_count; (void)out; (void)frames; (void)position; (void)increment; (void)left; (void)right;
    return 0;
}

#endif
