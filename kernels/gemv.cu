// One-row projections (GEMV) over BF16 and block-FP8 weights.
#include "gemv.cuh"
#include "gemv_mma.cuh"
#include "expert_addr.cuh"

// ---------------------------------------------------------------------------
// One-row projections (MatVec): y[e, r] = Σ_c W_{ids[e]}[r, c] · x[e·xstride + c].
//
// blockIdx.y selects the e-th matrix of a gathered set (experts by id; ids may
// be null for a single matrix, then e = 0 and W is the matrix itself); matrices
// are [rows, cols] row-major, mstride elements apart, or where the expert
// table xt says (expert_addr.cuh; null: the packed layout). Each group of TPR
// threads computes ROWS consecutive rows (gemv_rows_x, gemv.cuh). cols must be
// a multiple of the elements per chunk (8 BF16, 16 FP8), rows 16-byte
// aligned. S is null for BF16; for FP8 it holds the float32 block scales
// [ceil(rows/128), ceil(cols/128)]: w[r][c] = fp8 · S[r/128][c/128].
//
// P is the numerics policy (numerics.cuh): Fast sums float32 (each chunk's
// products in an FMA chain, FP8 chunks scaled once); Exact follows rule 1 of
// docs/MODEL.md "Numerics contract" (engine/cpu.Dot): each weight as the CPU
// holds it in float32, every product exact in float64, all sums float64,
// rounded to float32 once at the store. The body is gemv_body (gemv.cuh).

// ready (gemv.cuh GEMV_IDS_READY, GEMV_WEIGHTS_AHEAD, GEMV_WAITED): with the
// first bit the ids were written by the host (a copy, not a kernel), so the
// kernel may read them before the PDL wait; otherwise it waits first. With
// the second (one matrix only) each thread's first weights are loaded before
// the wait (gemv_body's ahead; docs/PERF.md "chain20"); otherwise after it.
// With the third (and not the second) the next launch starts only once every
// block has passed the wait (pdl_entry_waited: the step's input projections,
// whose DeltaNet update reads its state before its own wait; "ahead25").
#define GEMV_BF16_X(NAME, P, TPR, ROWS, UNROLL)                                                      \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x,              \
        const int32_t* __restrict__ ids, long long mstride, int xstride, int rows, int cols,             \
        int ready, const unsigned long long* __restrict__ xt) {                                        \
        const int e = blockIdx.y;                                                                      \
        if (ids && !(ready & GEMV_IDS_READY)) pdl_entry();                                             \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        const ExpertAddr a = expert_addr(xt, m, reinterpret_cast<const uint8_t*>(W), nullptr, mstride * 2, 0); \
        gemv_body<BF16Weights, P, TPR, ROWS, UNROLL>(y + (size_t)e * rows, a.w, nullptr,          \
                                                        x + (size_t)e * xstride, rows, cols,            \
                                                        !P::exact && !ids && (ready & GEMV_WEIGHTS_AHEAD), \
                                                        ready & GEMV_WAITED);                            \
    }
#define GEMV_FP8_X(NAME, P, TPR, ROWS, UNROLL)                                                       \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,               \
        const float* __restrict__ x, const int32_t* __restrict__ ids, long long mstride,                 \
        long long sstride, int xstride, int rows, int cols, int ready,                                 \
        const unsigned long long* __restrict__ xt) {                                                   \
        const int e = blockIdx.y;                                                                      \
        if (ids && !(ready & GEMV_IDS_READY)) pdl_entry();                                             \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        const ExpertAddr a = expert_addr(xt, m, W, S, mstride, sstride);                               \
        gemv_body<FP8Weights, P, TPR, ROWS, UNROLL>(y + (size_t)e * rows, a.w, a.s,               \
                                                       x + (size_t)e * xstride, rows, cols,             \
                                                       !P::exact && !ids && (ready & GEMV_WEIGHTS_AHEAD), \
                                                       ready & GEMV_WAITED);                             \
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
// waited (not AHEAD): as gemv_bf16's GEMV_WAITED.
#define GEMV_ROWS_BF16_X(NAME, P, TPR, ROWS, UNROLL, NB, AHEAD, BOUNDS)                                 \
    extern "C" __global__ void BOUNDS NAME(float* __restrict__ y, const uint16_t* __restrict__ W,          \
                                           const float* __restrict__ x, int xstride, int ystride, int nb,   \
                                           int rows, int cols, int waited) {                                \
        gemv_body_x<BF16Weights, P, TPR, ROWS, UNROLL, NB, AHEAD>(y, reinterpret_cast<const uint8_t*>(W),  \
                                                                  nullptr, x, xstride, ystride, nb, rows,  \
                                                                  cols, waited);                           \
    }
// gemvx_* and, Fast only, gemvxa_*: the same with the first weights ahead
// of the PDL wait (engine/cuda GemvRows.WeightsAhead), bounded to two blocks
// a multiprocessor below 8 rows, as their plain instances run (without,
// t128r4u2b4 took 136 registers: one block); at 8 rows the plain ones take
// one block already, and the bound spilled.
#define GEMV_ROWS_BF16(TPR, ROWS, UNROLL, NB)                                                             \
    GEMV_ROWS_BF16_X(gemvx_bf16_t##TPR##r##ROWS##u##UNROLL##b##NB, Fast, TPR, ROWS, UNROLL, NB, false,   \
                     __launch_bounds__(GEMV_THREADS))                                                     \
    GEMV_ROWS_BF16_X(gemvxa_bf16_t##TPR##r##ROWS##u##UNROLL##b##NB, Fast, TPR, ROWS, UNROLL, NB, true,   \
                     __launch_bounds__(GEMV_THREADS, NB < 8 ? 2 : 1))                                     \
    GEMV_ROWS_BF16_X(gemvx_bf16d_t##TPR##r##ROWS##u##UNROLL##b##NB, Exact, TPR, ROWS, UNROLL, NB, false, \
                     __launch_bounds__(GEMV_THREADS))

// Instances gemvx_{bf16,bf16d}_t{TPR}r{ROWS}u{UNROLL}b{NB}: the one-row
// choices of ChooseGemv (t128r2u2 for 2048 and 4096 columns, t32r4u2 for
// 512) and others that reuse each x chunk over 4 rows (fewer x loads per
// weight byte), for 2, 4 and 8 rows; TestGemvRowsBandwidth times them
// (t32r8u1, 8 rows a warp, measured no better than t32r4u2 and spilled under
// exact: not compiled).
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
// t128r4u2: t128r4u1's rows with both of a thread's chunks of a 2048-column
// row in flight at once (at 4 rows 127 registers, the same two blocks a
// multiprocessor as t128r4u1's 98: twice the bytes in flight); the tower's
// B-row frame times it against t128r4u1 (PROSCENIUM_GPU_TOWER_GEMVX).
GEMV_ROWS_BF16(128, 4, 2, 2)
GEMV_ROWS_BF16(128, 4, 2, 4)
GEMV_ROWS_BF16(128, 4, 2, 8)

// ---------------------------------------------------------------------------
// Projections of nb ≤ 8 rows on the tensor cores (Fast only; gemv_mma.cuh's
// body): y[b·ystride + r] = Σ_c W[r, c]·x[b·xstride + c], a block's
// GEMVX_MMA_TILES tiles the 16·GEMVX_MMA_TILES consecutive rows from
// 16·GEMVX_MMA_TILES·blockIdx.x. cols must be a multiple of 32. waited: as
// gemv_bf16's GEMV_WAITED.
extern "C" __global__ void __launch_bounds__(GEMV_THREADS) gemvx_mma_bf16_fast(
    float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x, int xstride, int ystride,
    int nb, int rows, int cols, int waited) {
    constexpr int T = GEMVX_MMA_TILES;
    __shared__ GemvxMmaPart<T> part;
    const int row0 = blockIdx.x * 16 * T;
    const uint16_t* __restrict__ Wt[T];
#pragma unroll
    for (int i = 0; i < T; i++) Wt[i] = W;
    gemvx_mma_sums<T, 16>(part, Wt, row0, x, xstride, nb, rows, cols, waited);
    for (int o = threadIdx.x; o < T * 16 * 8; o += GEMV_THREADS) {
        const int i = o / 128, r = (o / 8) % 16, b = o % 8, row = row0 + 16 * i + r;
        if (b >= nb || row >= rows) continue;
        y[(size_t)b * ystride + row] = gemvx_mma_total<T>(part, i, r, b);
    }
}
