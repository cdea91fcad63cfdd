// The embedding half of a tower layer's eh_proj input (Tower.layer):
// enorm(E[code]) of an audio row. Shared by tower.cu (the eh input, the out
// norm that makes the next layer's input) and sampling.cu (the draw that
// picks a code writes the next layer's embedding half itself, a launch less).
#pragma once

#include "common.cuh"
#include "frame_control.cuh"

// Plain-gain RMSNorm of one row (RMSNorm, invRMS): the sum of squares in
// float64, inv = float32(1/sqrt(ss/width + eps)), y = x·inv·w in float32.
__device__ __forceinline__ float row_inv_rms(double ss, int width, float eps) {
    return (float)(1.0 / sqrt(ss / (double)width + (double)eps));
}

// tower_embed_row writes ce = enorm(E[code]) for code of the [entries, width]
// BF16 table; after end of speech (ctrl->end) code 0 stands in (the frame is
// discarded); a code out of range writes NaN and sets FRAME_ERR_BAD_CODE.
// Every thread of the block calls it with the same code (block barriers;
// red: 32 doubles of shared memory).
//
// tower_embed_row_ended is the same with end of speech passed in (ended:
// ctrl->end as the caller read it), so a caller that read the control block
// with its other inputs (the lean draw, sampling.cu) saves the dependent load.
__device__ __forceinline__ void tower_embed_row_ended(float* __restrict__ ce, const uint16_t* __restrict__ table,
                                                      int code, bool ended, FrameControl* ctrl, int entries,
                                                      const float* __restrict__ enorm, int width, float eps,
                                                      double* red) {
    if (ended) code = 0;
    if (code < 0 || code >= entries) {
        for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = __int_as_float(0x7fc00000);
        if (threadIdx.x == 0) atomicOr(&ctrl->error, FRAME_ERR_BAD_CODE);
        return;
    }
    const uint16_t* er = table + (size_t)code * width;
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        const double v = (double)__int_as_float((uint32_t)er[c] << 16);
        ss += v * v;
    }
    const float inv = row_inv_rms(block_sum(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = __int_as_float((uint32_t)er[c] << 16) * inv * enorm[c];
}

__device__ __forceinline__ void tower_embed_row(float* __restrict__ ce, const uint16_t* __restrict__ table, int code,
                                                FrameControl* ctrl, int entries, const float* __restrict__ enorm,
                                                int width, float eps, double* red) {
    tower_embed_row_ended(ce, table, code, ctrl->end != 0, ctrl, entries, enorm, width, eps, red);
}

// tower_embed_row_lean is tower_embed_row_ended with the row's values and
// gains loaded in one round into registers (PER per thread, width ≤
// PER·blockDim.x, else the loop above): the loop above issues the row's
// loads one iteration at a time and loads it again, with the gains, for the
// output. The same sums in the same order, so the same bits.
template <int PER>
__device__ __forceinline__ void tower_embed_row_lean(float* __restrict__ ce, const uint16_t* __restrict__ table,
                                                     int code, bool ended, FrameControl* ctrl, int entries,
                                                     const float* __restrict__ enorm, int width, float eps,
                                                     double* red) {
    if (width > PER * (int)blockDim.x) {
        tower_embed_row_ended(ce, table, code, ended, ctrl, entries, enorm, width, eps, red);
        return;
    }
    if (ended) code = 0;
    if (code < 0 || code >= entries) {
        for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = __int_as_float(0x7fc00000);
        if (threadIdx.x == 0) atomicOr(&ctrl->error, FRAME_ERR_BAD_CODE);
        return;
    }
    const uint16_t* er = table + (size_t)code * width;
    float x[PER], g[PER];
#pragma unroll
    for (int e = 0; e < PER; e++) {
        const int c = threadIdx.x + e * blockDim.x;
        x[e] = c < width ? __int_as_float((uint32_t)er[c] << 16) : 0.f;
        g[e] = c < width ? enorm[c] : 0.f;
    }
    double ss = 0.0;
#pragma unroll
    for (int e = 0; e < PER; e++)
        if (threadIdx.x + e * blockDim.x < width) ss += (double)x[e] * (double)x[e];
    const float inv = row_inv_rms(block_sum(ss, red), width, eps);
#pragma unroll
    for (int e = 0; e < PER; e++) {
        const int c = threadIdx.x + e * blockDim.x;
        if (c < width) ce[c] = x[e] * inv * g[e];
    }
}

// Residual add and plain-gain RMSNorm of one row: xr += ar (when ar is not
// null), o = xr·inv·w (Add, then plainNormRows). red: 32 doubles of shared
// memory. Each thread rereads only the xr values it wrote.
__device__ __forceinline__ void add_rmsnorm_loops(float* o, float* xr, const float* ar, const float* __restrict__ w,
                                                  int width, float eps, double* red) {
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        float v = xr[c];
        if (ar) {
            v += ar[c];
            xr[c] = v;
        }
        ss += (double)v * (double)v;
    }
    const float inv = row_inv_rms(block_sum(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = xr[c] * inv * w[c];
}

// table_add_rmsnorm_row is a row of tower_table_add_rmsnorm (norms.cu): xr
// += table[code] (a table layer's T, float32 [entries, width]; xr holds
// W_h·hnorm(h)), o = attention_norm(xr) with gain w; after end of speech
// (ended) code 0 stands in (the frame is discarded); a code out of range
// writes NaN to both and sets FRAME_ERR_BAD_CODE. Every thread of the block
// calls it with the same code. Shared with the draw that picks the code
// (sampling.cu sample_logits_lean_table).
__device__ __forceinline__ void table_add_rmsnorm_row(float* o, float* xr, const float* __restrict__ table, int code,
                                                      bool ended, FrameControl* ctrl, int entries,
                                                      const float* __restrict__ w, int width, float eps,
                                                      double* red) {
    if (ended) code = 0;
    if (code < 0 || code >= entries) {
        for (int i = threadIdx.x; i < width; i += blockDim.x) xr[i] = o[i] = __int_as_float(0x7fc00000);
        if (threadIdx.x == 0) atomicOr(&ctrl->error, FRAME_ERR_BAD_CODE);
        return;
    }
    add_rmsnorm_loops(o, xr, table + (size_t)code * width, w, width, eps, red);
}
