// Shared pieces of the DeltaNet kernel families (kernels/deltanet.cu: the row
// recurrence and the one-row steps; kernels/deltanet_chunk.cu: the chunked
// prefill): the scalar functions as engine/cpu computes them and where a
// value head's conv channels lie.
#pragma once

#include "common.cuh"

#define DN_MAXK 8  // conv kernel width (engine/cuda DeltaNetGeometry.Validate)

// The arithmetic follows engine/cpu's bit for bit (docs/MODEL.md, "Numerics
// contract"): sums are double sums of exact products rounded to float once
// (any order gives the same float but for rare boundary ties), elementwise
// float operations use __fmul_rn/__fadd_rn where a product meets an add (no
// FMA contraction), and transcendentals take double of the float argument
// and are rounded once, as Go's math functions are. SiLU, sigmoid and the
// gated norm's 1/rms are common.cuh's silu_ref, sigmoid_ref, inv_rms_ref;
// softplus is engine/cpu softplus.
__device__ __forceinline__ float softplus_f(float x) { return x > 20.f ? x : (float)log1p(exp((double)x)); }

// dn_channel is the column of the projected row (qkv | …) of channel c of
// value head h's conv window (its key head kh's q, then k, then its own v).
__device__ __forceinline__ int dn_channel(int c, int h, int kh, int nk, int dk, int dv) {
    return c < dk ? kh * dk + c : c < 2 * dk ? nk * dk + kh * dk + (c - dk) : 2 * nk * dk + h * dv + (c - 2 * dk);
}

// dn_conv_advance leaves value head h's conv window cs (row r at cs + r·nv·cw,
// cw = 2·dk + dv) holding the last K−1 inputs after n rows of proj (rows
// n−K+1 … n−1), shifting the old window up when n < K−1 (row q reads row
// q+n: ascending is safe). Threads tid, tid+stride, … share the channels;
// every read of the old window must be done before.
__device__ __forceinline__ void dn_conv_advance(float* cs, const float* proj, int n, int h, int kh, int nk, int nv,
                                                int dk, int dv, int K, int pw, int tid, int stride) {
    const int cw = 2 * dk + dv;
    for (int c = tid; c < cw; c += stride) {
        const int gc = dn_channel(c, h, kh, nk, dk, dv);
        for (int q = 0; q < K - 1; q++) {
            const int rr = n - (K - 1) + q;
            cs[(size_t)q * nv * cw + c] = rr >= 0 ? proj[(size_t)rr * pw + gc] : cs[(size_t)(q + n) * nv * cw + c];
        }
    }
}

// dn_l2_inv is engine/cpu l2Normalize's factor for Σx² = ss (a double sum of
// exact squares): 1/sqrt(ss + eps) in double, eps = 1e-6f, rounded once.
__device__ __forceinline__ float dn_l2_inv(double ss) { return (float)(1.0 / sqrt(ss + (double)1e-6f)); }

