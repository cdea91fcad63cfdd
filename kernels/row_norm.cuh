// The residual-then-norm tail one block runs over one row (issue 27's step
// kernels: add_rmsnorm_zc, moe_combine_norm), or a thread block cluster runs
// over one row (their _cluster_fast instances, norm34): each column's new
// residual value x[c] = value(c) (keep stores it), then normed[c] =
// RMSNormZeroCentred(x)[c] (cpu.RMSNormZeroCentred) in P's arithmetic, with
// 0 written up to npitch (padding that FP8 GEMVs read).
#pragma once

#include "cluster.cuh"

// Which of the row's columns a thread holds and how the row's sum of squares
// is made: a Span. BlockSpan (today's kernels, both policies): the block
// holds the whole row, column c = threadIdx.x + i·blockDim.x, the sum by
// block_sum (exact: the CPU's bits, P::Sum float64). Its stores of x are
// issued as each value is made (late = false).
struct BlockSpan {
    static constexpr bool late = false;
    __device__ __forceinline__ int first() const { return threadIdx.x; }
    __device__ __forceinline__ int step() const { return blockDim.x; }
    __device__ __forceinline__ int end(int H) const { return H; }
    __device__ __forceinline__ int pad_first() const { return threadIdx.x; }
    __device__ __forceinline__ int pad_step() const { return blockDim.x; }
    template <class T>
    __device__ __forceinline__ T sum(T v, T* red) const {
        return block_sum(v, red);
    }
};

// ClusterSpan (Fast only, sm_90; norm34): the row's columns over the
// NORM_CLUSTER blocks of a thread block cluster, block rank r holding the
// contiguous columns [r·cb, min(H, (r+1)·cb)), cb = ⌈H/NORM_CLUSTER⌉ (Drama
// 3: 8 blocks of 256 threads, one column a thread), so a row's loads run on
// NORM_CLUSTER multiprocessors at once. The sum: each warp's sum (warp_sum)
// pushed into every block of the cluster (distributed shared memory, slot
// [rank][warp]), one cluster barrier, then every thread adds the
// NORM_CLUSTER × warps slots in one fixed order (ranks, then warps, pairwise:
// cluster_tree_sum), so every block of the row has the same total. The
// kernel calls begin() before its PDL wait: the cluster barrier's first
// phase, waited on before the push, makes sure every block of the cluster
// runs (its shared memory may be written), free by then. barrier.cluster's
// arrive waits for the thread's earlier stores (ptxas: MEMBAR before it), so
// the x stores of the register-held columns are issued after the barrier
// (late = true; further columns than COLS are stored at once: not Drama 3's
// geometry).
#define NORM_CLUSTER 8
#define NORM_CLUSTER_THREADS 256
#define NORM_CLUSTER_WARPS (NORM_CLUSTER_THREADS / 32)
// The cluster kernels' attributes: grid (NORM_CLUSTER, rows), one cluster a row.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NORM_CLUSTER_ATTRS __cluster_dims__(NORM_CLUSTER, 1, 1) __launch_bounds__(NORM_CLUSTER_THREADS)
#else
#define NORM_CLUSTER_ATTRS __launch_bounds__(NORM_CLUSTER_THREADS)
#endif
struct ClusterSpan {
    static constexpr bool late = true;
    int c0, ce;  // the block's columns [c0, ce) of the row
    __device__ __forceinline__ ClusterSpan(int H) {
        const int cb = (H + NORM_CLUSTER - 1) / NORM_CLUSTER, r = (int)cluster_rank();
        c0 = min(H, r * cb);
        ce = min(H, c0 + cb);
    }
    __device__ __forceinline__ void begin() const { cluster_arrive(); }
    __device__ __forceinline__ int first() const { return c0 + threadIdx.x; }
    __device__ __forceinline__ int step() const { return NORM_CLUSTER_THREADS; }
    __device__ __forceinline__ int end(int) const { return ce; }
    __device__ __forceinline__ int pad_first() const {
        return (int)cluster_rank() * NORM_CLUSTER_THREADS + threadIdx.x;
    }
    __device__ __forceinline__ int pad_step() const { return NORM_CLUSTER * NORM_CLUSTER_THREADS; }
    __device__ __forceinline__ float sum(float v, float*) const {
        __shared__ float4 part4[NORM_CLUSTER * NORM_CLUSTER_WARPS / 4];  // [rank][warp], pushed
        float* part = reinterpret_cast<float*>(part4);
        const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        v = warp_sum(v);
        cluster_wait();  // the first phase (begin): every block of the cluster runs
        if (lane < NORM_CLUSTER) cluster_push(&part[cluster_rank() * NORM_CLUSTER_WARPS + warp], lane, v);
        cluster_arrive();
        cluster_wait();  // every block's warp sums are here
        return cluster_tree_sum<NORM_CLUSTER * NORM_CLUSTER_WARPS / 4>(part4);
    }
};

// row_value_rmsnorm_zc: the thread's first COLS columns (c = sp.first() +
// i·sp.step(): all of a one-row step's 2048 on 1024 threads, or a cluster
// block's 256 on 256) are held in registers, their values computed together
// and their gains loaded before the sum; any further columns in a loop,
// re-read from xr for the norm. value(c) makes column c's value, keep(c, v)
// stores it in xr (or nothing); under a late Span the register-held columns
// are kept after the sum. The sum of squares runs over the thread's columns
// in increasing order either way (exact, BlockSpan: the CPU's bits).
// MAYBE_NO_NORM: w may be null, and then only the values are made, no norm
// (not with a late Span). red: 32 P::Sum of shared memory. xr is the row
// keep writes (not __restrict__: the norm re-reads what keep stored).
template <class P, int COLS, bool MAYBE_NO_NORM, class Span, class Value, class Keep>
__device__ __forceinline__ void row_value_rmsnorm_zc(const Span& sp, Value value, Keep keep, const float* xr,
                                                     float* __restrict__ o, const float* __restrict__ w, int H,
                                                     int npitch, float eps, typename P::Sum* red) {
    static_assert(!(MAYBE_NO_NORM && Span::late), "a late span always norms");
    const int c0 = sp.first(), bd = sp.step(), ce = sp.end(H);
    float v[COLS], g[COLS];
    typename P::Sum ss = 0;
    // A late Span's gains first: issued with the values' loads (after them,
    // they were a round trip of their own).
#pragma unroll
    for (int i = 0; i < COLS; i++) {
        const int c = c0 + i * bd;
        if (Span::late) g[i] = c < ce ? w[c] : 0.f;
    }
#pragma unroll
    for (int i = 0; i < COLS; i++) {
        const int c = c0 + i * bd;
        v[i] = 0.f;
        if (c < ce) {
            v[i] = value(c);
            if (!Span::late) keep(c, v[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < COLS; i++) {
        const int c = c0 + i * bd;
        if (c < ce) ss += P::sq(v[i]);
        if (!Span::late) g[i] = (!MAYBE_NO_NORM || w) && c < ce ? w[c] : 0.f;
    }
    for (int c = c0 + COLS * bd; c < ce; c += bd) {
        const float u = value(c);
        keep(c, u);
        ss += P::sq(u);
    }
    if (MAYBE_NO_NORM && !w) return;
    ss = sp.sum(ss, red);
    const float inv = P::inv_rms(ss, H, eps);
#pragma unroll
    for (int i = 0; i < COLS; i++) {
        const int c = c0 + i * bd;
        if (Span::late && c < ce) keep(c, v[i]);
        if (c < ce) o[c] = P::zc_norm(v[i], inv, g[i]);
    }
    for (int c = c0 + COLS * bd; c < ce; c += bd) o[c] = P::zc_norm(xr[c], inv, w[c]);
    for (int c = H + sp.pad_first(); c < npitch; c += sp.pad_step()) o[c] = 0.f;
}
