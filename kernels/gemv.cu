// One-row projections (GEMV) over BF16 and block-FP8 weights.
#include "common.cuh"

// ---------------------------------------------------------------------------
// One-row projections (MatVec): y[e, r] = Σ_c W_{ids[e]}[r, c] · x[e·xstride + c].
//
// blockIdx.y selects the e-th matrix of a gathered set (experts by id; ids may
// be null for a single matrix, then e = 0 and W is the matrix itself); matrices
// are [rows, cols] row-major, mstride elements apart. A block of 256 threads
// is split into groups of TPR threads; each group computes ROWS consecutive
// rows, thread j of a group reading the 16-byte chunks j, j+TPR, … of each row,
// so a group's loads are contiguous and coalesced. Every load of an UNROLL
// step is issued before the first multiply (the step is one basic block, no
// branches), x is read once per chunk for all ROWS rows, and the partial sums
// are reduced with shuffles and, when TPR > 32, through shared memory. Spreading
// a row over more threads (TPR) puts more of the matrix in flight at once: the
// kernels are bound by memory latency as much as by bandwidth. cols must be a
// multiple of the elements per chunk (8 BF16, 16 FP8), rows 16-byte aligned.
#define GEMV_THREADS 256

// Weight formats: elements per 16-byte chunk, and the dot product of one chunk
// with x (xv points at float4s of x; chunk c covers x[c·PER, (c+1)·PER)).
struct BF16Weights {
    static constexpr int PER = 8;
    __device__ static float dot(uint4 w, const float4* __restrict__ xv, int c) {
        const float4 x0 = __ldg(xv + 2 * c), x1 = __ldg(xv + 2 * c + 1);
        float s = bf16_lo(w.x) * x0.x;
        s = fmaf(bf16_hi(w.x), x0.y, s);
        s = fmaf(bf16_lo(w.y), x0.z, s);
        s = fmaf(bf16_hi(w.y), x0.w, s);
        s = fmaf(bf16_lo(w.z), x1.x, s);
        s = fmaf(bf16_hi(w.z), x1.y, s);
        s = fmaf(bf16_lo(w.w), x1.z, s);
        return fmaf(bf16_hi(w.w), x1.w, s);
    }
    // The chunk's weights as float32 (the CPU's: BF16 widened exactly; the
    // scale is unused).
    __device__ static void weights(uint4 w, float, float* f) { bf16x8_to_float(w, f); }
};
struct FP8Weights {
    static constexpr int PER = 16;
    __device__ static float dot(uint4 w, const float4* __restrict__ xv, int c) {
        float s = fp8_dot4(w.x, __ldg(xv + 4 * c), 0.f);
        s = fp8_dot4(w.y, __ldg(xv + 4 * c + 1), s);
        s = fp8_dot4(w.z, __ldg(xv + 4 * c + 2), s);
        return fp8_dot4(w.w, __ldg(xv + 4 * c + 3), s);
    }
    // The chunk's weights as the CPU dequantises them at load
    // (checkpoint.DequantFP8Blocks): E4M3 value × block scale, one float32
    // multiply each.
    __device__ static void weights(uint4 w, float scale, float* f) { fp8x16_scaled(w, scale, f); }
};

// S is null for BF16; for FP8 it holds the float32 block scales
// [ceil(rows/128), ceil(cols/128)]: w[r][c] = fp8 · S[r/128][c/128]. A chunk
// (16 columns) lies in one scale block.
//
// ACC is the accumulator. float: the tower's instances (not under the
// numerics contract): each chunk's products in a float32 FMA chain, FP8
// chunks scaled once, float32 partial sums. double: the backbone's (rule 1 of
// docs/MODEL.md "Numerics contract", engine/cpu.Dot): each weight as the CPU
// holds it in float32 (FP8: __fmul_rn(E4M3 value, scale)), every product
// float64(w)·float64(x) (exact), all sums in float64, rounded to float32
// once at the store. x is widened once per chunk for all ROWS rows.
__device__ __forceinline__ float acc_warp_sum(float v) { return warp_sum(v); }
__device__ __forceinline__ double acc_warp_sum(double v) { return warp_sum_double(v); }

template <class WT, class ACC, int TPR, int ROWS, int UNROLL>
__device__ __forceinline__ void gemv_body(float* __restrict__ y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const float* __restrict__ x, int rows,
                                          int cols) {
    constexpr bool F64 = sizeof(ACC) == 8;
    constexpr int GROUPS = GEMV_THREADS / TPR, WARPS_PER_GROUP = TPR / 32;
    const int group = threadIdx.x / TPR, j = threadIdx.x % TPR;
    const int row0 = (blockIdx.x * GROUPS + group) * ROWS;
    const int chunks = cols / WT::PER;
    const int scols = (cols + 127) >> 7;
    const uint4* wr[ROWS];
    const float* sr[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const int row = min(row0 + r, rows - 1);
        wr[r] = reinterpret_cast<const uint4*>(W + (size_t)row * cols * (16 / WT::PER));
        sr[r] = S ? S + (size_t)(row >> 7) * scols : nullptr;
    }
    pdl_entry();
    const float4* xv = reinterpret_cast<const float4*>(x);
    ACC acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = 0;
    for (int base = j; base < chunks; base += TPR * UNROLL) {
        uint4 w[UNROLL][ROWS];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int cc = min(base + u * TPR, chunks - 1);  // past the end: reread, counted as zero
#pragma unroll
            for (int r = 0; r < ROWS; r++) w[u][r] = load_stream(wr[r] + cc);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + u * TPR, cc = min(c, chunks - 1);
            if (F64) {
                float xf[WT::PER];
#pragma unroll
                for (int i = 0; i < WT::PER / 4; i++) {
                    const float4 v = __ldg(xv + (WT::PER / 4) * cc + i);
                    xf[4 * i] = v.x, xf[4 * i + 1] = v.y, xf[4 * i + 2] = v.z, xf[4 * i + 3] = v.w;
                }
                double xd[WT::PER];
                widen_x<WT::PER>(xf, xd);
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    float f[WT::PER];
                    WT::weights(w[u][r], S ? __ldg(sr[r] + ((cc * WT::PER) >> 7)) : 1.f, f);
                    const double s = dot_f64<WT::PER>(f, xd);
                    acc[r] += c < chunks ? s : 0.0;
                }
            } else {
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    float s = WT::dot(w[u][r], xv, cc);
                    if (S) s *= __ldg(sr[r] + ((cc * WT::PER) >> 7));
                    acc[r] += c < chunks ? s : 0.f;
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = acc_warp_sum(acc[r]);
    if (WARPS_PER_GROUP > 1) {
        __shared__ ACC part[GEMV_THREADS / 32][ROWS];
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
        if (lane == 0) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) part[warp][r] = acc[r];
        }
        __syncthreads();
        if (j == 0) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                ACC s = 0;
#pragma unroll
                for (int k = 0; k < WARPS_PER_GROUP; k++) s += part[group * WARPS_PER_GROUP + k][r];
                acc[r] = s;
            }
        }
    }
    if (j == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            if (row0 + r < rows) y[row0 + r] = (float)acc[r];
    }
}

// ids_ready: the ids were written by the host (a copy, not a kernel), so the
// kernel may read them before the PDL wait; otherwise it waits first. (The
// weights' loads still follow the wait: loading or prefetching them before it
// measured slower, docs/PERF.md.)
#define GEMV_BF16_X(NAME, ACC, TPR, ROWS, UNROLL)                                                      \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x,              \
        const int32_t* __restrict__ ids, long long mstride, int xstride, int rows, int cols,             \
        int ids_ready) {                                                                               \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_entry();                                                            \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<BF16Weights, ACC, TPR, ROWS, UNROLL>(y + (size_t)e * rows,                       \
                                                        reinterpret_cast<const uint8_t*>(W + m * mstride), \
                                                        nullptr, x + (size_t)e * xstride, rows, cols);  \
    }
#define GEMV_FP8_X(NAME, ACC, TPR, ROWS, UNROLL)                                                       \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,               \
        const float* __restrict__ x, const int32_t* __restrict__ ids, long long mstride,                 \
        long long sstride, int xstride, int rows, int cols, int ids_ready) {                            \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_entry();                                                            \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<FP8Weights, ACC, TPR, ROWS, UNROLL>(y + (size_t)e * rows, W + m * mstride,       \
                                                       S + m * sstride, x + (size_t)e * xstride, rows,  \
                                                       cols);                                          \
    }
#define GEMV_BF16(TPR, ROWS, UNROLL)                                                   \
    GEMV_BF16_X(gemv_bf16_t##TPR##r##ROWS##u##UNROLL, float, TPR, ROWS, UNROLL)       \
    GEMV_BF16_X(gemv_bf16d_t##TPR##r##ROWS##u##UNROLL, double, TPR, ROWS, UNROLL)
#define GEMV_FP8(TPR, ROWS, UNROLL)                                                    \
    GEMV_FP8_X(gemv_fp8_t##TPR##r##ROWS##u##UNROLL, float, TPR, ROWS, UNROLL)         \
    GEMV_FP8_X(gemv_fp8d_t##TPR##r##ROWS##u##UNROLL, double, TPR, ROWS, UNROLL)

// Instances gemv_{bf16,fp8}_t{TPR}r{ROWS}u{UNROLL} (float accumulators, the
// tower's) and gemv_{bf16d,fp8d}_… (double, the backbone's); the bandwidth test
// measures each at Drama 3's shapes (docs/PERF.md) and engine/cuda picks.
GEMV_BF16(32, 1, 8)
GEMV_BF16(32, 2, 4)
GEMV_BF16(64, 2, 4)
GEMV_BF16(128, 2, 2)
GEMV_BF16(128, 4, 2)
GEMV_BF16(256, 2, 2)
GEMV_BF16(256, 4, 1)
GEMV_BF16(32, 4, 2)
GEMV_BF16(32, 8, 2)
GEMV_BF16(128, 2, 4)
GEMV_FP8(32, 2, 2)
GEMV_FP8(32, 4, 2)
GEMV_FP8(64, 4, 2)
GEMV_FP8(128, 2, 2)
GEMV_FP8(128, 4, 1)
GEMV_FP8(256, 4, 1)
GEMV_FP8(32, 4, 1)
GEMV_FP8(32, 8, 1)
GEMV_FP8(32, 4, 4)
GEMV_FP8(128, 4, 2)
