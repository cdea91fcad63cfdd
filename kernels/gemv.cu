// One-row projections (GEMV) over BF16 and block-FP8 weights.
#include "gemv.cuh"

// ---------------------------------------------------------------------------
// One-row projections (MatVec): y[e, r] = Σ_c W_{ids[e]}[r, c] · x[e·xstride + c].
//
// blockIdx.y selects the e-th matrix of a gathered set (experts by id; ids may
// be null for a single matrix, then e = 0 and W is the matrix itself); matrices
// are [rows, cols] row-major, mstride elements apart. Each group of TPR
// threads computes ROWS consecutive rows (gemv_rows, gemv.cuh). cols must be
// a multiple of the elements per chunk (8 BF16, 16 FP8), rows 16-byte
// aligned. S is null for BF16; for FP8 it holds the float32 block scales
// [ceil(rows/128), ceil(cols/128)]: w[r][c] = fp8 · S[r/128][c/128].
//
// P is the numerics policy (numerics.cuh): Fast sums float32 (each chunk's
// products in an FMA chain, FP8 chunks scaled once); Exact follows rule 1 of
// docs/MODEL.md "Numerics contract" (engine/cpu.Dot): each weight as the CPU
// holds it in float32, every product exact in float64, all sums float64,
// rounded to float32 once at the store. The body is gemv_body (gemv.cuh).

// ids_ready: the ids were written by the host (a copy, not a kernel), so the
// kernel may read them before the PDL wait; otherwise it waits first. (The
// weights' loads still follow the wait: loading or prefetching them before it
// measured slower, docs/PERF.md.)
#define GEMV_BF16_X(NAME, P, TPR, ROWS, UNROLL)                                                      \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x,              \
        const int32_t* __restrict__ ids, long long mstride, int xstride, int rows, int cols,             \
        int ids_ready) {                                                                               \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_entry();                                                            \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<BF16Weights, P, TPR, ROWS, UNROLL>(y + (size_t)e * rows,                       \
                                                        reinterpret_cast<const uint8_t*>(W + m * mstride), \
                                                        nullptr, x + (size_t)e * xstride, rows, cols);  \
    }
#define GEMV_FP8_X(NAME, P, TPR, ROWS, UNROLL)                                                       \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,               \
        const float* __restrict__ x, const int32_t* __restrict__ ids, long long mstride,                 \
        long long sstride, int xstride, int rows, int cols, int ids_ready) {                            \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_entry();                                                            \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<FP8Weights, P, TPR, ROWS, UNROLL>(y + (size_t)e * rows, W + m * mstride,       \
                                                       S + m * sstride, x + (size_t)e * xstride, rows,  \
                                                       cols);                                          \
    }
#define GEMV_BF16(TPR, ROWS, UNROLL)                                                   \
    GEMV_BF16_X(gemv_bf16_t##TPR##r##ROWS##u##UNROLL, Fast, TPR, ROWS, UNROLL)       \
    GEMV_BF16_X(gemv_bf16d_t##TPR##r##ROWS##u##UNROLL, Exact, TPR, ROWS, UNROLL)
#define GEMV_FP8(TPR, ROWS, UNROLL)                                                    \
    GEMV_FP8_X(gemv_fp8_t##TPR##r##ROWS##u##UNROLL, Fast, TPR, ROWS, UNROLL)         \
    GEMV_FP8_X(gemv_fp8d_t##TPR##r##ROWS##u##UNROLL, Exact, TPR, ROWS, UNROLL)

// Instances gemv_{bf16,fp8}_t{TPR}r{ROWS}u{UNROLL} (Fast: the tower's, and
// the backbone's under fast numerics) and gemv_{bf16d,fp8d}_… (Exact, the
// backbone's under exact numerics); the bandwidth test
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

// ---------------------------------------------------------------------------
// Projections of nb ≤ NB rows with each weight read once (the B-row decode
// step: B takes' rows): y[b·ystride + r] = Σ_c W[r, c]·x[b·xstride + c] for
// b < nb (gemv_body_x, gemv.cuh). Each row's value has the bits the one-row
// instance of the same TPR, ROWS and UNROLL gives it, under either policy.
#define GEMV_ROWS_BF16_X(NAME, P, TPR, ROWS, UNROLL, NB)                                                   \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS) NAME(                                       \
        float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x, int xstride,   \
        int ystride, int nb, int rows, int cols) {                                                         \
        gemv_body_x<BF16Weights, P, TPR, ROWS, UNROLL, NB>(y, reinterpret_cast<const uint8_t*>(W), nullptr, \
                                                           x, xstride, ystride, nb, rows, cols);           \
    }
#define GEMV_ROWS_BF16(TPR, ROWS, UNROLL, NB)                                                            \
    GEMV_ROWS_BF16_X(gemvx_bf16_t##TPR##r##ROWS##u##UNROLL##b##NB, Fast, TPR, ROWS, UNROLL, NB)        \
    GEMV_ROWS_BF16_X(gemvx_bf16d_t##TPR##r##ROWS##u##UNROLL##b##NB, Exact, TPR, ROWS, UNROLL, NB)

// Instances gemvx_{bf16,bf16d}_t{TPR}r{ROWS}u{UNROLL}b{NB}: the one-row
// choices of ChooseGemv (t128r2u2 for 2048 and 4096 columns, t32r4u2 for
// 512) and others that reuse each x chunk over 4 rows (fewer x loads per
// weight byte), for 2, 4 and 8 rows; TestGemvRowsBandwidth times them.
GEMV_ROWS_BF16(128, 2, 2, 2)
GEMV_ROWS_BF16(128, 2, 2, 4)
GEMV_ROWS_BF16(128, 2, 2, 8)
GEMV_ROWS_BF16(128, 4, 1, 2)
GEMV_ROWS_BF16(128, 4, 1, 4)
GEMV_ROWS_BF16(128, 4, 1, 8)
GEMV_ROWS_BF16(32, 4, 2, 2)
GEMV_ROWS_BF16(32, 4, 2, 4)
GEMV_ROWS_BF16(32, 4, 2, 8)
GEMV_ROWS_BF16(64, 4, 1, 2)
GEMV_ROWS_BF16(64, 4, 1, 4)
GEMV_ROWS_BF16(64, 4, 1, 8)
GEMV_ROWS_BF16(256, 4, 1, 2)
GEMV_ROWS_BF16(256, 4, 1, 4)
GEMV_ROWS_BF16(256, 4, 1, 8)
