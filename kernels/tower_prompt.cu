// The tower's prompt rows in one batched pass (engine/cuda
// tower_prompt_cuda.go): a reference frame of the prompt is teacher-forced,
// so every code its tower pass embeds is known before it starts, and its row
// is a prefill row like a text row, with the frame's code embedded at each
// layer instead of the zero vector (engine/cpu/tower.go; docs/MODEL.md
// "Tower rows", "Reference voices").
#include "common.cuh"

// Plain-gain RMSNorm's inverse (tower_embed.cuh row_inv_rms).
__device__ __forceinline__ float prompt_inv_rms(double ss, int width, float eps) {
    return (float)(1.0 / sqrt(ss / (double)width + (double)eps));
}

// The eh_proj input of n prompt rows at one tower layer: cat[r] =
// [enorm(mask·E[code]); hnorm(h[r])]: a text row (codes[r·cstride] < 0,
// column 0 marks it) has mask 0 (enorm of the zero vector); a forced row
// embeds code = codes[r·cstride + slot] of the [entries, width] BF16 table
// that layer embeds (the host checked every code against entries). The arithmetic is tower_eh_input's (norms.cu): sums of
// squares in float64, each thread over elements t, t + blockDim.x, …, the
// inverse rounded once, then x·inv·w in float32. Grid: (n), 1024 threads.
extern "C" __global__ void __launch_bounds__(1024) tower_prompt_eh(float* __restrict__ cat, const float* __restrict__ h,
                                                                   const uint16_t* __restrict__ table,
                                                                   const int32_t* __restrict__ codes, int cstride,
                                                                   int slot, const float* __restrict__ enorm,
                                                                   const float* __restrict__ hnorm, int width,
                                                                   float eps) {
    pdl_entry();
    __shared__ double red[32];
    const int row = blockIdx.x;
    float* ce = cat + (size_t)row * 2 * width;
    float* ch = ce + width;
    const float* hr = h + (size_t)row * width;
    const int code = codes[(size_t)row * cstride] < 0 ? -1 : codes[(size_t)row * cstride + slot];
    if (code < 0) {
        const float inv = prompt_inv_rms(0.0, width, eps);
        for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = 0.f * inv * enorm[c];
    } else {
        const uint16_t* er = table + (size_t)code * width;
        double ss = 0.0;
        for (int c = threadIdx.x; c < width; c += blockDim.x) {
            const double v = (double)__int_as_float((uint32_t)er[c] << 16);
            ss += v * v;
        }
        const float inv = prompt_inv_rms(block_sum(ss, red), width, eps);
        for (int c = threadIdx.x; c < width; c += blockDim.x)
            ce[c] = __int_as_float((uint32_t)er[c] << 16) * inv * enorm[c];
    }
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        const double v = hr[c];
        ss += v * v;
    }
    const float inv = prompt_inv_rms(block_sum(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) ch[c] = hr[c] * inv * hnorm[c];
}
