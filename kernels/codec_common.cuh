// Device code the codec's decoder (codec.cu) and encoder (codec_encoder.cu)
// modules share: the post-module's windowed attention of one row and
// ConvNeXt's depthwise conv with its LayerNorm statistics, both as the
// reference computes them in FP32 (engine/cpu codecBlock.run,
// codecConvNeXt). Each module stores the results in its own form.
#pragma once
#include "common.cuh"

// block_max returns the maximum of v over the block to every thread;
// blockDim.x is a multiple of 32. red holds 32 floats of shared memory.
__device__ __forceinline__ float block_max(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? red[lane] : -INFINITY;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

// codec_attention_row is row t of 64-dim head h attending its nk keys, rows
// t − nk + 1 … t of qkv (rows of [q | k | v], 3·dim floats, RoPE applied):
// it returns output dimension threadIdx.x of the head to threads below 64
// (0 to the others). Every thread of the block calls it. q (64 floats), sc
// (nk floats) and red (32 floats) are shared memory.
__device__ __forceinline__ float codec_attention_row(const float* __restrict__ qkv, int dim, int t, int h, int nk,
                                                     float* q, float* sc, float* red) {
    const int tid = threadIdx.x, ld = 3 * dim;
    const long first = (long)t - nk + 1;
    if (tid < 64) q[tid] = qkv[(long)t * ld + h * 64 + tid];
    __syncthreads();
    for (int j = tid; j < nk; j += blockDim.x) {
        const float* k = qkv + (first + j) * ld + dim + h * 64;
        float s = 0.f;
#pragma unroll 16
        for (int d = 0; d < 64; d++) s = fmaf(q[d], k[d], s);
        sc[j] = s * 0.125f;  // 1/sqrt(64)
    }
    __syncthreads();
    float m = -INFINITY;
    for (int j = tid; j < nk; j += blockDim.x) m = fmaxf(m, sc[j]);
    m = block_max(m, red);
    float part = 0.f;
    for (int j = tid; j < nk; j += blockDim.x) {
        const float e = expf(sc[j] - m);
        sc[j] = e;
        part += e;
    }
    const float inv = 1.f / block_sum(part, red);  // block_sum's barriers publish sc
    float y = 0.f;
    if (tid < 64)
        for (int j = 0; j < nk; j++) y = fmaf(sc[j] * inv, qkv[(first + j) * ld + 2 * dim + h * 64 + tid], y);
    return y;
}

// codec_dwconv_norm_row is ConvNeXt's causal depthwise conv of row t,
// y[c] = Σ_k w[c][k]·x[t − (K−1−k)][c] + b[c] over x [rows][ch] (rows before
// `from` skipped), into y (ch floats of shared memory), and the mean and
// reciprocal standard deviation (biased variance, eps) of the LayerNorm that
// follows. Every thread of the block calls it; red is 32 shared floats.
__device__ __forceinline__ void codec_dwconv_norm_row(const float* __restrict__ x, const float* __restrict__ w,
                                                      const float* __restrict__ b, int ch, int kernel, long t,
                                                      long from, float eps, float* y, float* red, float& mean,
                                                      float& rstd) {
    float part = 0.f;
    for (int c = threadIdx.x; c < ch; c += blockDim.x) {
        float acc = 0.f;
        for (int k = 0; k < kernel; k++) {
            const long ti = t - (kernel - 1 - k);
            if (ti >= from) acc = fmaf(w[c * kernel + k], x[ti * ch + c], acc);
        }
        acc += b[c];
        y[c] = acc;
        part += acc;
    }
    mean = block_sum(part, red) / (float)ch;
    part = 0.f;
    for (int c = threadIdx.x; c < ch; c += blockDim.x) {
        const float d = y[c] - mean;
        part = fmaf(d, d, part);
    }
    rstd = 1.f / sqrtf(block_sum(part, red) / (float)ch + eps);
}
