// The GEMV body (one-row projections over BF16 and block-FP8 weights) under a
// numerics policy: gemv.cu instantiates it for every projection, tower.cu's
// fused gate·up reuses it, moe.cu's step down projection its chunk dots.
#pragma once

#include "common.cuh"

#define GEMV_THREADS 256

// The bits of gemv.cu's ready argument: the expert ids were written by the
// host (a copy, not a kernel), so the kernel may read them before the PDL
// wait; no kernel writes the weights while the step runs, so each thread
// loads its first weights before the wait (gemv_body's ahead; one matrix).
#define GEMV_IDS_READY 1
#define GEMV_WEIGHTS_AHEAD 2
#define GEMV_WAITED 4  // the next launch let start only after the wait (common.cuh pdl_entry_waited)

// Weight formats: elements per 16-byte chunk, the chunk's float32 dot
// product with x (xv: the chunk's PER inputs as float4s; the scale is
// applied by the caller), and the chunk's weights as the CPU holds them.
struct BF16Weights {
    static constexpr int PER = 8;
    static constexpr bool SCALED = false;  // no block scales
    static constexpr float DOT_UNIT = 1.f;  // dot's sum is the products' sum
    __device__ static __forceinline__ float dot(uint4 w, const float4* xv) {
        const float4 x0 = xv[0], x1 = xv[1];
        float s = bf16_lo(w.x) * x0.x;
        s = fmaf(bf16_hi(w.x), x0.y, s);
        s = fmaf(bf16_lo(w.y), x0.z, s);
        s = fmaf(bf16_hi(w.y), x0.w, s);
        s = fmaf(bf16_lo(w.z), x1.x, s);
        s = fmaf(bf16_hi(w.z), x1.y, s);
        s = fmaf(bf16_lo(w.w), x1.z, s);
        return fmaf(bf16_hi(w.w), x1.w, s);
    }
    // BF16 widened exactly (the scale is unused).
    __device__ static __forceinline__ void weights(uint4 w, float, float* f) { bf16x8_to_float(w, f); }
};
struct FP8Weights {
    static constexpr int PER = 16;
    static constexpr bool SCALED = true;  // one float32 scale per 128×128 block
    // dot is the chunk's products with each weight decoded as Fp8Sum does
    // (common.cuh: sm_90's conversion, or the integer path's v·2⁻¹²⁰), so
    // the sum is the products' sum over DOT_UNIT; the caller's scale
    // multiply undoes that.
    static constexpr float DOT_UNIT = Fp8Sum::UNIT;
    __device__ static __forceinline__ float dot(uint4 w, const float4* xv) {
        Fp8Sum s;
        s.add(w.x, xv[0]);
        s.add(w.y, xv[1]);
        s.add(w.z, xv[2]);
        s.add(w.w, xv[3]);
        return s.value();
    }
    // E4M3 value × block scale, one float32 multiply each
    // (checkpoint.DequantFP8Blocks).
    __device__ static __forceinline__ void weights(uint4 w, float scale, float* f) { fp8x16_scaled(w, scale, f); }
};

// One chunk of x, held in registers in the form the policy's dot reads, for
// all the rows that use it. Fast: float32, the chunk's products in a float32
// FMA chain, an FP8 chunk scaled once. Exact (rule 1 of the contract,
// cpu.Dot): x widened once (widen_x), each weight the CPU's float32, exact
// float64 products summed in float64.
template <class P, class WT>
struct XChunk;

template <class WT>
struct XChunk<Fast, WT> {
    float4 x[WT::PER / 4];
    __device__ __forceinline__ void load(const float4* __restrict__ xv, int c) {
#pragma unroll
        for (int i = 0; i < WT::PER / 4; i++) x[i] = __ldg(xv + (WT::PER / 4) * c + i);
    }
    // scale: the chunk's block scale (FP8; unread for BF16).
    __device__ __forceinline__ float dot(uint4 w, const float* scale) const {
        const float s = WT::dot(w, x);
        return WT::SCALED ? s * WT::DOT_UNIT * __ldg(scale) : s;
    }
    // x staged in shared memory (moe.cu's down projection): stage stores
    // element c, load_shared reads chunk c back; xs holds 4·cols bytes.
    __device__ static __forceinline__ void stage(void* xs, int c, float v) { static_cast<float*>(xs)[c] = v; }
    __device__ __forceinline__ void load_shared(const void* xs, int c) {
        const float4* xv = static_cast<const float4*>(xs) + (WT::PER / 4) * c;
#pragma unroll
        for (int i = 0; i < WT::PER / 4; i++) x[i] = xv[i];
    }
    __device__ __forceinline__ float dot_folded(uint4 w, const float* scale) const { return dot(w, scale); }
    // dot_scale is dot_folded with the block scale's value (read once for
    // several rows by moe.cu's moe_down2: the same bits).
    __device__ __forceinline__ float dot_scale(uint4 w, float scale) const {
        const float s = WT::dot(w, x);
        return WT::SCALED ? s * WT::DOT_UNIT * scale : s;
    }
};

template <class WT>
struct XChunk<Exact, WT> {
    double x[WT::PER];
    __device__ __forceinline__ void load(const float4* __restrict__ xv, int c) {
        float xf[WT::PER];
#pragma unroll
        for (int i = 0; i < WT::PER / 4; i++) {
            const float4 v = __ldg(xv + (WT::PER / 4) * c + i);
            xf[4 * i] = v.x, xf[4 * i + 1] = v.y, xf[4 * i + 2] = v.z, xf[4 * i + 3] = v.w;
        }
        widen_x<WT::PER>(xf, x);
    }
    __device__ __forceinline__ double dot(uint4 w, const float* scale) const {
        float f[WT::PER];
        WT::weights(w, WT::SCALED ? __ldg(scale) : 1.f, f);
        return dot_f64<WT::PER>(f, x);
    }
    // x staged in shared memory as float64, widened (widen_x's values) and
    // rotated as xs_chunk reads it (conflict-free 16-byte loads); xs holds
    // 8·cols bytes.
    __device__ static __forceinline__ void stage(void* xs, int c, float v) {
        static_cast<double*>(xs)[xs_slot<WT::PER>(c / WT::PER, c % WT::PER)] =
            c & 1 ? (double)v * 0x1p896 : (double)v;
    }
    __device__ __forceinline__ void load_shared(const void* xs, int c) {
        xs_chunk<WT::PER>(static_cast<const double*>(xs), c, x);
    }
    // dot with the FP8 scale folded into one multiply (fp8x16_scaled_fold:
    // the same float32 weights, an instruction less each).
    __device__ __forceinline__ double dot_folded(uint4 w, const float* scale) const {
        float f[WT::PER];
        if (WT::SCALED)
            fp8x16_scaled_fold(w, __ldg(scale), f);
        else
            WT::weights(w, 1.f, f);
        return dot_f64<WT::PER>(f, x);
    }
    // dot_scale is dot_folded with the block scale's value (the same bits).
    __device__ __forceinline__ double dot_scale(uint4 w, float scale) const {
        float f[WT::PER];
        if (WT::SCALED)
            fp8x16_scaled_fold(w, scale, f);
        else
            WT::weights(w, 1.f, f);
        return dot_f64<WT::PER>(f, x);
    }
};

// group_sum sums each of acc's N values over the TPR threads of its group
// (gemv_rows_x' groups) and leaves the sums in the group's thread 0: shuffles
// within a warp, then, when TPR > 32, the warps' sums in order through shared
// memory (a block barrier: every thread of the block calls it).
template <class Sum, int TPR, int N>
__device__ __forceinline__ void group_sum(Sum* acc) {
    constexpr int WARPS_PER_GROUP = TPR / 32;
#pragma unroll
    for (int i = 0; i < N; i++) acc[i] = warp_sum(acc[i]);
    if (WARPS_PER_GROUP > 1) {
        __shared__ Sum part[GEMV_THREADS / 32][N];
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
        const int group = threadIdx.x / TPR, j = threadIdx.x % TPR;
        if (lane == 0) {
#pragma unroll
            for (int i = 0; i < N; i++) part[warp][i] = acc[i];
        }
        __syncthreads();
        if (j == 0) {
#pragma unroll
            for (int i = 0; i < N; i++) {
                Sum s = 0;
#pragma unroll
                for (int k = 0; k < WARPS_PER_GROUP; k++) s += part[group * WARPS_PER_GROUP + k][i];
                acc[i] = s;
            }
        }
    }
}

// gemv_group_rows points wr and sr at the ROWS consecutive rows of W
// (row-major [rows, cols]) and of its block scales S (FP8; null for BF16)
// that this thread's group of TPR threads computes, and returns the first
// (row0); rows past the end point at the last row.
template <class WT, int TPR, int ROWS>
__device__ __forceinline__ int gemv_group_rows(const uint4* (&wr)[ROWS], const float* (&sr)[ROWS],
                                               const uint8_t* __restrict__ W, const float* __restrict__ S,
                                               int rows, int cols) {
    constexpr int GROUPS = GEMV_THREADS / TPR;
    const int group = threadIdx.x / TPR;
    const int row0 = (blockIdx.x * GROUPS + group) * ROWS;
    const int scols = (cols + 127) >> 7;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const int row = min(row0 + r, rows - 1);
        wr[r] = reinterpret_cast<const uint4*>(W + (size_t)row * cols * (16 / WT::PER));
        sr[r] = S ? S + (size_t)(row >> 7) * scols : nullptr;
    }
    return row0;
}

// gemv_load_step issues the loads of one UNROLL step of a group's rows (the
// chunks base, base + TPR, … of each; past the end the last chunk again,
// counted as zero by the sums), all before any is used.
template <int TPR, int ROWS, int UNROLL, bool AHEAD = false>
__device__ __forceinline__ void gemv_load_step(uint4 (&w)[UNROLL][ROWS], const uint4* (&wr)[ROWS], int base,
                                               int chunks) {
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        const int cc = min(base + u * TPR, chunks - 1);
#pragma unroll
        for (int r = 0; r < ROWS; r++) w[u][r] = AHEAD ? load_ahead(wr[r] + cc) : load_stream(wr[r] + cc);
    }
}

// gemv_rows_x leaves Σ_c wr[r][c]·x_b[c] (ROWS rows of cols weights each,
// any rows: consecutive rows of one matrix, or one row of each of several)
// in acc[r][b] of thread 0 of each group of TPR threads, for NB activation
// rows x_b = x + b·xstride (the B-row decode step: B takes' rows, nb ≤ NB of
// them live; rows b ≥ nb read row nb−1 and are left unused). The block of
// GEMV_THREADS is split into groups of TPR threads; thread j of a group reads
// the 16-byte chunks j, j+TPR, … of each row, so a group's loads are
// contiguous and coalesced. Every load of an UNROLL step is issued before
// the first multiply (the step is one basic block, no branches); each weight
// chunk is loaded once and applied to each live row's x chunk in turn, x is
// read once per chunk for all ROWS rows, and the partial sums are reduced by
// group_sum. A row's sums run in the same order whatever NB is (the same
// bits as NB = 1 on x_b, under either policy). Spreading a row
// over more threads (TPR) puts more of the matrix in flight at once: the
// kernels are bound by memory latency as much as by bandwidth. sr[r] is row
// r's first block scale (FP8; [ceil(cols/128)] of them, a chunk lies in one
// block; unread for BF16).
template <class WT, class P, int TPR, int ROWS, int UNROLL, int NB, bool AHEAD = false>
__device__ __forceinline__ void gemv_rows_x(typename P::Sum (&acc)[ROWS][NB], const uint4* (&wr)[ROWS],
                                            const float* (&sr)[ROWS], const float* __restrict__ x, int xstride,
                                            int nb, int cols) {
    typedef typename P::Sum Sum;
    const int j = threadIdx.x % TPR;
    const int chunks = cols / WT::PER;
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int b = 0; b < NB; b++) acc[r][b] = 0;
    uint4 w[UNROLL][ROWS];
    // AHEAD: the first step's weights are loaded before the PDL wait, which
    // this function then runs (gemv_body's ahead).
    if (AHEAD) {
        gemv_load_step<TPR, ROWS, UNROLL, true>(w, wr, j, chunks);
        pdl_wait();
    }
    for (int base = j; base < chunks; base += TPR * UNROLL) {
        if (!AHEAD || base != j) gemv_load_step<TPR, ROWS, UNROLL>(w, wr, base, chunks);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + u * TPR, cc = min(c, chunks - 1);
#pragma unroll
            for (int b = 0; b < NB; b++) {
                const float4* xv = reinterpret_cast<const float4*>(x + (size_t)min(b, nb - 1) * xstride);
                XChunk<P, WT> xc;
                xc.load(xv, cc);
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    const Sum s = xc.dot(w[u][r], WT::SCALED ? sr[r] + ((cc * WT::PER) >> 7) : nullptr);
                    acc[r][b] += c < chunks ? s : Sum(0);
                }
            }
        }
    }
    group_sum<Sum, TPR, ROWS * NB>(&acc[0][0]);  // acc[r][b] is value r·NB + b
}

// gemv_rows_x_entry is gemv_rows_x with the kernel's PDL entry (pdl_entry's
// launch and wait; waited: the wait first, pdl_entry_waited, so that the
// next launch may read before its own wait what the kernels before this one
// wrote: the step's input projections, deltanet.cu's AHEAD). AHEAD: no
// kernel the wait waits for writes W (weights loaded before the launch), so
// each thread loads its first step of weights before the wait: they stream
// while the kernel before finishes (its last wave, a norm's or a mixer
// step's latency) instead of after it.
template <class WT, class P, int TPR, int ROWS, int UNROLL, int NB, bool AHEAD>
__device__ __forceinline__ void gemv_rows_x_entry(typename P::Sum (&acc)[ROWS][NB], const uint4* (&wr)[ROWS],
                                                  const float* (&sr)[ROWS], const float* __restrict__ x, int xstride,
                                                  int nb, int cols, bool waited = false) {
    if (AHEAD)
        pdl_launch_dependents();
    else if (waited)
        pdl_entry_waited();
    else
        pdl_entry();
    gemv_rows_x<WT, P, TPR, ROWS, UNROLL, NB, AHEAD>(acc, wr, sr, x, xstride, nb, cols);
}

// gemv_rows_entry is gemv_rows_x_entry for one activation row, ahead chosen
// when the kernel runs (gemv.cu's one-matrix GEMVs, the tower's gate·up).
template <class WT, class P, int TPR, int ROWS, int UNROLL>
__device__ __forceinline__ void gemv_rows_entry(bool ahead, typename P::Sum (&acc)[ROWS], const uint4* (&wr)[ROWS],
                                                const float* (&sr)[ROWS], const float* __restrict__ x, int cols,
                                                bool waited = false) {
    typedef typename P::Sum(&Acc)[ROWS][1];
    if (ahead)
        gemv_rows_x_entry<WT, P, TPR, ROWS, UNROLL, 1, true>(reinterpret_cast<Acc>(acc), wr, sr, x, 0, 1, cols);
    else
        gemv_rows_x_entry<WT, P, TPR, ROWS, UNROLL, 1, false>(reinterpret_cast<Acc>(acc), wr, sr, x, 0, 1, cols,
                                                               waited);
}

// gemv_body: y[r] = Σ_c W[r, c]·x[c] for the rows of this block's groups
// (each group of TPR threads ROWS consecutive rows, gemv_rows_x), after the PDL
// wait (ahead: gemv_rows_entry); W row-major [rows, cols], S FP8's block
// scales (null for BF16). The kernels of gemv.cu, and the fused step's GEMVs
// with a tail (fused.cuh).
template <class WT, class P, int TPR, int ROWS, int UNROLL>
__device__ __forceinline__ void gemv_body(float* __restrict__ y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const float* __restrict__ x, int rows,
                                          int cols, bool ahead = false, bool waited = false) {
    const int j = threadIdx.x % TPR;
    const uint4* wr[ROWS];
    const float* sr[ROWS];
    const int row0 = gemv_group_rows<WT, TPR, ROWS>(wr, sr, W, S, rows, cols);
    typename P::Sum acc[ROWS];
    gemv_rows_entry<WT, P, TPR, ROWS, UNROLL>(ahead, acc, wr, sr, x, cols, waited);
    if (j == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            if (row0 + r < rows) y[row0 + r] = (float)acc[r];
    }
}

// gemv_body_x: y_b[r] = Σ_c W[r, c]·x_b[c] for nb ≤ NB rows x_b (xstride
// floats apart) into y_b (ystride floats apart), W read once; otherwise as
// gemv_body. AHEAD (gemv_rows_x_entry): a compile-time choice, an instance
// of its own, so that the others keep their registers.
template <class WT, class P, int TPR, int ROWS, int UNROLL, int NB, bool AHEAD = false>
__device__ __forceinline__ void gemv_body_x(float* __restrict__ y, const uint8_t* __restrict__ W,
                                            const float* __restrict__ S, const float* __restrict__ x, int xstride,
                                            int ystride, int nb, int rows, int cols, bool waited = false) {
    const int j = threadIdx.x % TPR;
    const uint4* wr[ROWS];
    const float* sr[ROWS];
    const int row0 = gemv_group_rows<WT, TPR, ROWS>(wr, sr, W, S, rows, cols);
    typename P::Sum acc[ROWS][NB];
    gemv_rows_x_entry<WT, P, TPR, ROWS, UNROLL, NB, AHEAD>(acc, wr, sr, x, xstride, nb, cols, waited);
    if (j == 0) {
#pragma unroll
        for (int b = 0; b < NB; b++)
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                if (b < nb && row0 + r < rows) y[(size_t)b * ystride + row0 + r] = (float)acc[r][b];
    }
}
