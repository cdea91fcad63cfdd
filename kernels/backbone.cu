// The backbone's layer glue (engine/cpu backbone.go): the input rows (token
// embeddings or given vectors) and the residual add fused with the next
// zero-centred RMSNorm. The mixers are in deltanet.cu and attention.cu, the
// feed-forward in moe.cu.
#include "gemv.cuh"
#include "fused.cuh"
#include "row_norm.cuh"
#include "bf16_parts.cuh"

// ---------------------------------------------------------------------------
// Input rows (cpu.Backbone.Run's first loop): row i is table[toks[i]] (BF16)
// when toks[i] ≥ 0, else the float32 vector emb[i·H …]. A token outside
// [0, vocab) writes NaN (the host checks what it uploads). Grid (n), block 256.
extern "C" __global__ void backbone_rows(float* __restrict__ x, const uint16_t* __restrict__ table,
                                         const int32_t* __restrict__ toks, const float* __restrict__ emb,
                                         int vocab, int H) {
    pdl_entry();
    const int i = blockIdx.x;
    const int id = toks[i];
    float* o = x + (size_t)i * H;
    if (id < 0) {
        const float* e = emb + (size_t)i * H;
        for (int c = threadIdx.x; c < H; c += blockDim.x) o[c] = e[c];
        return;
    }
    if (id >= vocab) {
        for (int c = threadIdx.x; c < H; c += blockDim.x) o[c] = __int_as_float(0x7fc00000);
        return;
    }
    const uint16_t* row = table + (size_t)id * H;
    for (int c = threadIdx.x; c < H; c += blockDim.x) o[c] = __int_as_float((uint32_t)row[c] << 16);
}

// ---------------------------------------------------------------------------
// Residual then norm (cpu.Add, cpu.RMSNormZeroCentred): x[t] += y[t] (when y
// is not null), then normed[t·npitch + c] = x[t, c] / rms(x[t]) · (1 + w[c])
// for c < H and 0 up to npitch (padding that FP8 GEMVs read). The sum of
// squares is float64, the inverse rms rounded once (the CPU's bits) under
// Exact; float32 under Fast. Grid (n), block 256.
// add_rmsnorm_zc_row is row t over Span's columns (row_norm.cuh); LD reads y
// (fused.cuh).
#define ADDNORM_COLS 2
template <class P, class LD, class Span = BlockSpan>
__device__ __forceinline__ void add_rmsnorm_zc_row(unsigned int t, float* __restrict__ x, const float* __restrict__ y,
                                                   float* __restrict__ normed, const float* __restrict__ w, int H,
                                                   int npitch, float eps, const Span& sp = Span()) {
    __shared__ typename P::Sum red[32];
    float* xr = x + (size_t)t * H;
    auto add = [&](int c) {
        float v = xr[c];
        if (y) v = P::add(v, LD::ld(y + (size_t)t * H + c));
        return v;
    };
    auto keep = [&](int c, float v) {
        if (y) xr[c] = v;
    };
    // A cluster block's one column a thread (Drama 3's 2048 over 8 × 256).
    row_value_rmsnorm_zc<P, Span::late ? 1 : ADDNORM_COLS, false>(sp, add, keep, xr, normed + (size_t)t * npitch, w,
                                                                  H, npitch, eps, red);
}
template <class P>
__device__ __forceinline__ void add_rmsnorm_zc_body(float* __restrict__ x, const float* __restrict__ y,
                                                    float* __restrict__ normed, const float* __restrict__ w, int H,
                                                    int npitch, float eps) {
    pdl_entry();
    add_rmsnorm_zc_row<P, LoadPlain>(blockIdx.x, x, y, normed, w, H, npitch, eps);
}
NUMERICS_KERNEL(add_rmsnorm_zc, __launch_bounds__(1024),
                (float* __restrict__ x, const float* __restrict__ y, float* __restrict__ normed,
                 const float* __restrict__ w, int H, int npitch, float eps),
                (x, y, normed, w, H, npitch, eps))

// add_rmsnorm_zc_xp_fast (xp15; engine/cuda AddRMSNormZC): add_rmsnorm_zc_fast,
// then the row's normed values as the three BF16 parts of a dense GEMM's X
// (bf16_parts.cuh xparts_row: part p of row t at xp + p·pstride + t·kpad),
// which the prefill's GEMMs on them take instead of a gemm_xp_prep launch.
// Grid (n), block as add_rmsnorm_zc's.
extern "C" __global__ void __launch_bounds__(1024)
    add_rmsnorm_zc_xp_fast(float* __restrict__ x, const float* __restrict__ y, float* __restrict__ normed,
                           const float* __restrict__ w, int H, int npitch, float eps, uint16_t* __restrict__ xp,
                           long long pstride, int kpad) {
    pdl_entry();
    add_rmsnorm_zc_row<Fast, LoadPlain>(blockIdx.x, x, y, normed, w, H, npitch, eps);
    __syncthreads();  // the row's normed values are the block's to read
    xparts_row(xp, normed + (size_t)blockIdx.x * npitch, blockIdx.x, H, kpad, pstride);
}

// add_rmsnorm_zc_cluster_fast (norm34, issue 27; engine/cuda normCluster):
// add_rmsnorm_zc_fast with row t = blockIdx.y spread over a thread block
// cluster of NORM_CLUSTER blocks (row_norm.cuh ClusterSpan): the row's loads
// on NORM_CLUSTER multiprocessors, its sum of squares one distributed-
// shared-memory round; y read through L2 (LoadL2: not the read-only path,
// which ptxas may move above the PDL wait). Grid (NORM_CLUSTER, n), block
// NORM_CLUSTER_THREADS.
// sm_90 only (the other architectures' instance traps, never launched).
extern "C" __global__ void NORM_CLUSTER_ATTRS add_rmsnorm_zc_cluster_fast(float* __restrict__ x,
                                                                         const float* __restrict__ y,
                                                                         float* __restrict__ normed,
                                                                         const float* __restrict__ w, int H,
                                                                         int npitch, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const ClusterSpan sp(H);
    sp.begin();
    pdl_entry();
    add_rmsnorm_zc_row<Fast, LoadL2>(blockIdx.y, x, y, normed, w, H, npitch, eps, sp);
#else
    __trap();
#endif
}

// ---------------------------------------------------------------------------
// The fused step's layer glue (Fast only: engine/cuda Backbone.Fused): a
// mixer's output projection (y [rows] = W [rows, cols] BF16 · in, as
// gemv_bf16_t128r2u2) and, in its last block (fused.cuh), add_rmsnorm_zc_fast
// of the one row: x += y, normed = the post-attention norm of x with gain nw
// (pitch npitch). Grid (⌈rows/4⌉), block 256.
extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2)
    gemv_bf16_add_norm_fast(float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ in,
                            int rows, int cols, unsigned int* counter, float* __restrict__ x,
                            float* __restrict__ normed, const float* __restrict__ nw, int npitch, float eps) {
    gemv_body<BF16Weights, Fast, FUSED_GEMV_TPR, FUSED_GEMV_ROWS, FUSED_GEMV_UNROLL>(
        y, reinterpret_cast<const uint8_t*>(W), nullptr, in, rows, cols);
    if (!last_block(counter)) return;
    add_rmsnorm_zc_row<Fast, LoadL2>(0, x, y, normed, nw, rows, npitch, eps);
}
