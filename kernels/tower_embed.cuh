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
__device__ __forceinline__ void tower_embed_row(float* __restrict__ ce, const uint16_t* __restrict__ table, int code,
                                                FrameControl* ctrl, int entries, const float* __restrict__ enorm,
                                                int width, float eps, double* red) {
    if (ctrl->end) code = 0;
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
