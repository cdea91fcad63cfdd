// The residual-then-norm tail one block runs over one row (issue 27's step
// kernels: add_rmsnorm_zc, moe_combine_norm): each column's new residual
// value x[c] = value(c) (value stores it), then normed[c] =
// RMSNormZeroCentred(x)[c] (cpu.RMSNormZeroCentred) in P's arithmetic, with
// 0 written up to npitch (padding that FP8 GEMVs read).
#pragma once

// row_value_rmsnorm_zc: the thread's first COLS columns (c = threadIdx.x +
// i·blockDim.x: all of a one-row step's 2048 on 1024 threads) are held in
// registers, their values computed together and their gains loaded before
// the block's sum; any further columns in a loop, re-read from xr for the
// norm. The sum of squares runs over the thread's columns in increasing
// order either way (exact: the CPU's bits). MAYBE_NO_NORM: w may be null,
// and then only the values are made, no norm. red: 32 P::Sum of shared
// memory. xr is the row value writes (not __restrict__: the norm re-reads
// what value stored).
template <class P, int COLS, bool MAYBE_NO_NORM, class Value>
__device__ __forceinline__ void row_value_rmsnorm_zc(Value value, const float* xr, float* __restrict__ o,
                                                     const float* __restrict__ w, int H, int npitch, float eps,
                                                     typename P::Sum* red) {
    const int bd = blockDim.x;
    float v[COLS], g[COLS];
    typename P::Sum ss = 0;
#pragma unroll
    for (int i = 0; i < COLS; i++) {
        const int c = threadIdx.x + i * bd;
        v[i] = c < H ? value(c) : 0.f;
    }
#pragma unroll
    for (int i = 0; i < COLS; i++) {
        const int c = threadIdx.x + i * bd;
        if (c < H) ss += P::sq(v[i]);
        g[i] = (!MAYBE_NO_NORM || w) && c < H ? w[c] : 0.f;
    }
    for (int c = threadIdx.x + COLS * bd; c < H; c += bd) ss += P::sq(value(c));
    if (MAYBE_NO_NORM && !w) return;
    ss = block_sum(ss, red);
    const float inv = P::inv_rms(ss, H, eps);
#pragma unroll
    for (int i = 0; i < COLS; i++) {
        const int c = threadIdx.x + i * bd;
        if (c < H) o[c] = P::zc_norm(v[i], inv, g[i]);
    }
    for (int c = threadIdx.x + COLS * bd; c < H; c += bd) o[c] = P::zc_norm(xr[c], inv, w[c]);
    for (int c = H + threadIdx.x; c < npitch; c += bd) o[c] = 0.f;
}
