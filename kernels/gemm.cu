// Prompt-row projections (GEMM): Y[n, rows] = X[n, cols] · W[rows, cols]ᵀ with
// W BF16 or block-FP8 and X, Y float32. Reference: engine/cpu.MatMulRows.
#include "common.cuh"
#include "mma_f16.cuh"
#include "cp_async.cuh"
#include "bf16_parts.cuh"
#include <type_traits>

// Precision: rule 1 of the backbone's numerics contract (docs/MODEL.md
// "Numerics contract", cpu.Dot). Each weight enters as the float32 the CPU
// holds (BF16 widened; E4M3 value × block scale, one float32 multiply), each
// product float64(w)·float64(x) is exact, every sum is float64, and Y is
// rounded to float32 once: any order of the sums gives the CPU's bits but at
// rare rounding-boundary coincidences. So the GEMM is a SIMT float64 GEMM
// (no BF16 tensor cores: they would round x).
//
// Tiling: a block of GEMM_THREADS computes GEMM_BM rows of X by GEMM_BN rows
// of W, GEMM_BK columns at a time. Both tiles sit in shared memory widened to
// double, k-major (X tile [BK][BM], W tile [BK][BN], rows padded by 16 bytes
// against bank conflicts on the transposing stores). The block's threads are
// GEMM_KG groups of 64: group g takes columns g·8 … g·8+7 of each BK step, and
// thread t of a group an 8 (X rows) × 4 (W rows) register tile of double
// accumulators. The next step's tiles are loaded into registers while this
// step's are multiplied. At the end the groups' partial sums are added through
// shared memory in a fixed order (1, 2, 3, then 0's own), so the result does
// not depend on scheduling.
//
// Grid: blockIdx.x is the GEMM_BM-row tile of X, blockIdx.y the GEMM_BN-row
// tile of W, blockIdx.z the group. Grouped form (experts): group e's rows are
// offsets[e] ≤ i < offsets[e+1] of Y (sorted by group) and its matrix is
// ids[e] (or e); tiles past the group's end exit at once. Row i reads X row
// rowids[i] (or i).
#define GEMM_THREADS 256
#define GEMM_BM 64
#define GEMM_BN 32
#define GEMM_BK 32
#define GEMM_KG 4                 // groups of 64 threads splitting each BK step
#define GEMM_XP (GEMM_BM + 2)     // doubles per shared row of the X tile
#define GEMM_WP (GEMM_BN + 2)     // doubles per shared row of the W tile

// Weight formats: bytes per element and how 8 consecutive elements (one
// thread's piece of the W tile: 32 rows × 32 columns = 128 pieces) become the
// CPU's float32 weights.
struct GemmBF16W {
    static constexpr int ELEM = 2;
    __device__ static void load(const uint8_t* p, float, float* f) {
        bf16x8_to_float(*reinterpret_cast<const uint4*>(p), f);
    }
};
struct GemmFP8W {
    static constexpr int ELEM = 1;
    __device__ static void load(const uint8_t* p, float scale, float* f) {
        const uint2 v = *reinterpret_cast<const uint2*>(p);
        const uint32_t u[2] = {v.x, v.y};
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const float2 a = fp8x2_to_float2((uint16_t)(u[i] & 0xffffu));
            const float2 b = fp8x2_to_float2((uint16_t)(u[i] >> 16));
            f[4 * i] = __fmul_rn(a.x, scale), f[4 * i + 1] = __fmul_rn(a.y, scale);
            f[4 * i + 2] = __fmul_rn(b.x, scale), f[4 * i + 3] = __fmul_rn(b.y, scale);
        }
    }
};

// GemmTileLoads is the exact GEMMs' (gemm_body, gemm_tc_body) view of a
// block's tiles: the rows of Y it makes (its group's, the tile's first X
// row m0 and W row n0) and the next GEMM_BK columns loaded into registers:
// two float4 of X for each thread (64 X rows × 8 float4: thread tid's
// float4 f = tid + 256·u, row f / 8), and, for threads 0 … 4·BN−1, eight
// weights of one of BN W rows as the CPU's float32 (WT::load). Each body
// stores them into its own shared layout.
template <class WT, int BN>
struct GemmTileLoads {
    int end, m0, n0, cols;
    const float* srow;  // the W tile's block scales (FP8), else null
    const float* xrow[2];
    bool xok[2];
    int xc4[2], xr[2];
    bool wload, wok;
    int wr, wc;
    const uint8_t* wrow;
    float4 xv[2];
    float wf[8];

    // begin finds the block's tile (grouped form: blockIdx.z's group) and
    // returns false when it lies past its group's end: nothing to do.
    __device__ __forceinline__ bool begin(const uint8_t* __restrict__ W, const float* __restrict__ S,
                                          const float* __restrict__ X, int rows, int cols_, int xstride,
                                          const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,
                                          const int32_t* __restrict__ rowids, long long mstride, long long sstride,
                                          int n) {
        int start = 0;
        end = n, cols = cols_;
        long long mat = 0;
        if (offsets) {
            const int e = blockIdx.z;
            start = offsets[e];
            end = offsets[e + 1];
            mat = ids ? (long long)ids[e] : (long long)e;
        }
        m0 = start + blockIdx.x * GEMM_BM;
        if (m0 >= end) return false;
        n0 = blockIdx.y * BN;
        W += mat * mstride * WT::ELEM;
        const int scols = (cols + 127) >> 7;
        srow = S ? S + mat * sstride + (size_t)(n0 >> 7) * scols : nullptr;

        const int tid = threadIdx.x;
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const int f = tid + GEMM_THREADS * u;
            xr[u] = f >> 3;
            xc4[u] = f & 7;
            const int m = m0 + xr[u];
            xok[u] = m < end;
            const int src = xok[u] ? (rowids ? rowids[m] : m) : 0;
            xrow[u] = X + (size_t)src * xstride;
        }
        wload = tid < BN * 4;
        wr = (tid >> 2) & (BN - 1), wc = (tid & 3) * 8;
        wok = wload && n0 + wr < rows;
        wrow = W + (size_t)min(n0 + wr, rows - 1) * cols * WT::ELEM;
        return true;
    }

    // load reads columns k0 … k0 + GEMM_BK − 1 into xv and wf (zeros past
    // the matrices' ends).
    __device__ __forceinline__ void load(int k0) {
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const int k = k0 + xc4[u] * 4;
            xv[u] = (xok[u] && k < cols) ? *reinterpret_cast<const float4*>(xrow[u] + k) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        const int k = k0 + wc;
        if (wok && k < cols) {
            WT::load(wrow + (size_t)k * WT::ELEM, srow ? __ldg(srow + (k >> 7)) : 1.f, wf);
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) wf[i] = 0.f;
        }
    }
};

template <class WT>
__device__ __forceinline__ void gemm_body(float* __restrict__ Y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const float* __restrict__ X, int rows,
                                          int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,
                                          const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids,
                                          long long mstride, long long sstride, int n) {
    __shared__ __align__(16) double xs[GEMM_BK * GEMM_XP];
    __shared__ __align__(16) double ws[GEMM_BK * GEMM_WP];

    pdl_entry();
    GemmTileLoads<WT, GEMM_BN> tl;
    if (!tl.begin(W, S, X, rows, cols, xstride, offsets, ids, rowids, mstride, sstride, n)) return;
    const int tid = threadIdx.x, m0 = tl.m0, n0 = tl.n0, end = tl.end;
    auto store = [&]() {
#pragma unroll
        for (int u = 0; u < 2; u++) {
            double* d = xs + (tl.xc4[u] * 4) * GEMM_XP + tl.xr[u];
            const float4 v = tl.xv[u];
            d[0] = v.x, d[GEMM_XP] = v.y, d[2 * GEMM_XP] = v.z, d[3 * GEMM_XP] = v.w;
        }
        if (tl.wload) {
#pragma unroll
            for (int i = 0; i < 8; i++) ws[(tl.wc + i) * GEMM_WP + tl.wr] = tl.wf[i];
        }
    };

    const int g = tid >> 6, t = tid & 63, tx = t & 7, ty = t >> 3;
    double acc[8][4];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0;

    const int ktiles = (cols + GEMM_BK - 1) / GEMM_BK;
    tl.load(0);
    for (int kt = 0; kt < ktiles; kt++) {
        store();
        __syncthreads();
        if (kt + 1 < ktiles) tl.load((kt + 1) * GEMM_BK);
#pragma unroll
        for (int kk = 0; kk < GEMM_BK / GEMM_KG; kk++) {
            const int k = g * (GEMM_BK / GEMM_KG) + kk;
            const double2* ap = reinterpret_cast<const double2*>(xs + k * GEMM_XP + ty * 8);
            const double2* bp = reinterpret_cast<const double2*>(ws + k * GEMM_WP + tx * 4);
            double a[8], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const double2 v = ap[i];
                a[2 * i] = v.x, a[2 * i + 1] = v.y;
            }
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const double2 v = bp[j];
                b[2 * j] = v.x, b[2 * j + 1] = v.y;
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        __syncthreads();  // every thread is done with this step's tiles
    }

    // The groups' partial sums, added in a fixed order in the X tile's memory
    // (64 × 32 doubles fit in its 32 × 66).
    double* red = xs;
#pragma unroll
    for (int step = 1; step < GEMM_KG; step++) {
        if (g == step) {
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    double* d = red + (ty * 8 + i) * GEMM_BN + tx * 4 + j;
                    *d = step == 1 ? acc[i][j] : *d + acc[i][j];
                }
        }
        __syncthreads();
    }
    if (g != 0) return;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int m = m0 + ty * 8 + i;
        if (m >= end) continue;
        float* yrow = Y + (size_t)m * ystride;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int c = n0 + tx * 4 + j;
            if (c < rows) yrow[c] = (float)(acc[i][j] + red[(ty * 8 + i) * GEMM_BN + tx * 4 + j]);
        }
    }
}

// mstride is the elements of one matrix (rows·cols), sstride the scales of
// one matrix. offsets, ids and rowids may be null (see above).
extern "C" __global__ void __launch_bounds__(GEMM_THREADS, 2) gemm_bf16(
    float* __restrict__ Y, const uint16_t* __restrict__ W, const float* __restrict__ X, long long mstride, int n,
    int rows, int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,
    const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids) {
    gemm_body<GemmBF16W>(Y, reinterpret_cast<const uint8_t*>(W), nullptr, X, rows, cols, xstride, ystride, offsets, ids,
                         rowids, mstride, 0, n);
}

extern "C" __global__ void __launch_bounds__(GEMM_THREADS, 2) gemm_fp8(
    float* __restrict__ Y, const uint8_t* __restrict__ W, const float* __restrict__ S, const float* __restrict__ X,
    long long mstride, long long sstride, int n, int rows, int cols, int xstride, int ystride,
    const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids) {
    gemm_body<GemmFP8W>(Y, W, S, X, rows, cols, xstride, ystride, offsets, ids, rowids, mstride, sstride, n);
}

// ---------------------------------------------------------------------------
// The same GEMM on the FP64 tensor cores (mma.sync m8n8k4 f64, sm_80+: twice
// the SIMT float64 rate). Precision as above: the operands are the float32
// values widened to double (exact), each product of two such doubles is
// exact, the tensor core accumulates in float64, and Y is rounded once.
//
// Tiling: GEMM_TC_BM (64) rows of X by BN (16 or 32) rows of W per block of
// 256 threads (8 warps), GEMM_BK columns per step. Tiles in shared memory as
// double, row-major ([row][k], rows padded to GEMM_TC_KP doubles so that the
// fragment loads — 8 rows × 4 k per half-warp pair — hit distinct banks).
// Warp w computes X rows w·8 … w·8+7 against all BN W rows: BN/8 output
// fragments of 8×8, one mma per fragment and 4 columns. Each thread holds
// its accumulators to the end (no split of k inside the block), so the
// store is the rounding of one float64 sum. Grid and grouped form as above.
#define GEMM_TC_BM 64
#define GEMM_TC_KP (GEMM_BK + 4)

__device__ __forceinline__ void mma_f64(double a, double b, double& c0, double& c1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(c0), "+d"(c1)
                 : "d"(a), "d"(b));
#endif
}

template <class WT, int BN>
__device__ __forceinline__ void gemm_tc_body(float* __restrict__ Y, const uint8_t* __restrict__ W,
                                             const float* __restrict__ S, const float* __restrict__ X, int rows,
                                             int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,
                                             const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids,
                                             long long mstride, long long sstride, int n) {
    __shared__ __align__(16) double xs[GEMM_TC_BM * GEMM_TC_KP];
    __shared__ __align__(16) double ws[BN * GEMM_TC_KP];

    pdl_entry();
    static_assert(GEMM_TC_BM == GEMM_BM, "GemmTileLoads loads GEMM_BM rows of X");
    GemmTileLoads<WT, BN> tl;
    if (!tl.begin(W, S, X, rows, cols, xstride, offsets, ids, rowids, mstride, sstride, n)) return;
    const int tid = threadIdx.x, m0 = tl.m0, n0 = tl.n0, end = tl.end;
    auto store = [&]() {
#pragma unroll
        for (int u = 0; u < 2; u++) {
            double2* d = reinterpret_cast<double2*>(xs + tl.xr[u] * GEMM_TC_KP + tl.xc4[u] * 4);
            const float4 v = tl.xv[u];
            d[0] = make_double2(v.x, v.y);
            d[1] = make_double2(v.z, v.w);
        }
        if (tl.wload) {
            double2* d = reinterpret_cast<double2*>(ws + tl.wr * GEMM_TC_KP + tl.wc);
#pragma unroll
            for (int i = 0; i < 4; i++) d[i] = make_double2(tl.wf[2 * i], tl.wf[2 * i + 1]);
        }
    };

    const int warp = tid >> 5, lane = tid & 31, fr = lane >> 2, fk = lane & 3;
    constexpr int NF = BN / 8;
    double acc[NF][2];
#pragma unroll
    for (int f = 0; f < NF; f++) acc[f][0] = acc[f][1] = 0.0;

    const int ktiles = (cols + GEMM_BK - 1) / GEMM_BK;
    const double* ap = xs + (warp * 8 + fr) * GEMM_TC_KP + fk;
    const double* bp = ws + fr * GEMM_TC_KP + fk;
    tl.load(0);
    for (int kt = 0; kt < ktiles; kt++) {
        store();
        __syncthreads();
        if (kt + 1 < ktiles) tl.load((kt + 1) * GEMM_BK);
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; kk += 4) {
            const double a = ap[kk];
#pragma unroll
            for (int f = 0; f < NF; f++) mma_f64(a, bp[f * 8 * GEMM_TC_KP + kk], acc[f][0], acc[f][1]);
        }
        __syncthreads();  // every thread is done with this step's tiles
    }

    const int m = m0 + warp * 8 + fr;
    if (m >= end) return;
    float* yrow = Y + (size_t)m * ystride;
#pragma unroll
    for (int f = 0; f < NF; f++)
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int c = n0 + f * 8 + fk * 2 + i;
            if (c < rows) yrow[c] = (float)acc[f][i];
        }
}

#define GEMM_TC(BN)                                                                                                  \
    extern "C" __global__ void __launch_bounds__(GEMM_THREADS, 2) gemm_bf16_tc##BN(                                 \
        float* __restrict__ Y, const uint16_t* __restrict__ W, const float* __restrict__ X, long long mstride, int n, \
        int rows, int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,                           \
        const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids) {                                        \
        gemm_tc_body<GemmBF16W, BN>(Y, reinterpret_cast<const uint8_t*>(W), nullptr, X, rows, cols, xstride, ystride, \
                                    offsets, ids, rowids, mstride, 0, n);                                             \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(GEMM_THREADS, 2) gemm_fp8_tc##BN(                                  \
        float* __restrict__ Y, const uint8_t* __restrict__ W, const float* __restrict__ S,                           \
        const float* __restrict__ X, long long mstride, long long sstride, int n, int rows, int cols, int xstride,   \
        int ystride, const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,                           \
        const int32_t* __restrict__ rowids) {                                                                        \
        gemm_tc_body<GemmFP8W, BN>(Y, W, S, X, rows, cols, xstride, ystride, offsets, ids, rowids, mstride, sstride, \
                                   n);                                                                               \
    }

// Instances gemm_{bf16,fp8}_tc16 and _tc32 (BN); engine/cuda picks by the
// number of blocks the output gives.
GEMM_TC(16)
GEMM_TC(32)

// ---------------------------------------------------------------------------
// Fast numerics (docs/MODEL.md "Numerics policy"): the same products on the
// BF16 tensor cores (mma.sync m16n8k16, float32 accumulation), for the
// prefill's dense projections and its routed experts grouped by expert.
//
// Precision. Fast must stay within 1e-4 of the CPU, and one BF16 rounding of
// an activation costs ~4e-3, so every x enters as PARTS BF16 parts, hi =
// bf16(x), mid = bf16(x − hi) (, lo = bf16(x − hi − mid)), each through the
// same MMA into one float32 accumulator, smallest first: three parts keep
// x's 24 bits, two keep 16. The weights are exact in BF16 (BF16 as stored;
// every E4M3 value is a BF16 value), and an FP8 block's scale multiplies x
// before the split (Σ q·(s·x) for the CPU's Σ (q·s)·x: one float32 rounding
// moved).
//
// Layout. W is the A operand (m16, its rows the output columns) and X the B
// operand (n8, its rows the prompt rows), so an expert's X tile can be as
// narrow as 8 rows. A block of GEMM_MMA_THREADS (8 warps, WM × WN) computes
// BM = WM·MI·16 rows of W by BN = WN·NJ·8 rows of X, GEMM_MMA_BK (32)
// columns a step; each warp MI × NJ fragments. Each step's W tile (as
// stored) and X tile (float32) are copied with cp.async into a ring of ST
// stages filling the 48 KB of static shared memory; a step waits only on the
// ring, behind one barrier.
//
// Fragments without ldmatrix: the sum over a step's 32 columns does not
// depend on their order, so lane quad tq takes physical columns 8·tq …
// 8·tq+7 of every row for both operands, 8·tq+4s … 8·tq+4s+3 in the step's
// k16 half s (the MMA's logical k 2tq, 2tq+1 | 2tq+8, 2tq+9, as two pairs
// P0 | P1 of physical columns, WT::GAP apart within the four): one load per
// W row and step (8 bytes FP8, 16 BF16) gives its four A registers. BF16
// pairs are neighbours (c, c+1: a BF16 word pair as stored); FP8 pairs are
// c, c+2, so that a 32-bit word of four E4M3 bytes widens to its two BF16
// pairs by shifts and masks: an E4M3 byte s.eeee.mmm moved to BF16 bits
// s.0000eeee.mmm0000 is its value × 2^-120 exactly (normal or subnormal:
// both formats' subnormals scale alike), and one bf16x2 FMA by 2^120 makes
// it the value (exact: 3 mantissa bits, a normal BF16; an E4M3 NaN code
// would read as ±480, and checkpoints hold none). Nine integer and BF16
// instructions a word, no conversions. W rows are unpadded (each load's
// lanes read whole 128-byte lines); X rows (128 bytes) swap their 16-byte
// chunks pairwise on odd rows so that a quad's chunks 2tq+s of two rows
// hit distinct banks.
//
// Splitting X. XS false: each warp splits the X values of its own fragments
// (every X fragment is split by the WM warps that use it), fine for the
// dense tiles whose parts would not fit beside the ring. XS true: the X
// tile of each step is split once per block, a step ahead, into a double
// buffer of BF16 parts in shared memory ([part][row][16 words], word
// 2·chunk + pair), from which a warp's B registers of a part are one
// 16-byte load. With WN 1 (the grouped instances: each warp 16 W rows by
// all BN X rows) every E4M3 byte is widened once per block and every x
// split once per block: the work per weight byte no longer grows with the
// warps that share it (the grouped FP8 experts were bound by instructions,
// each W fragment widened by WN warps and each x split by WM, docs/PERF.md
// "Prefill GEMM core").
//
// Grid. Dense: (X tiles, W tiles, 1). Grouped (offsets): (1, W tiles,
// groups); the block runs all of its group's rows, BN at a time, over the
// same W tile (later passes read it from L2), so each used expert's W tile
// is read from memory once a launch and an empty group's blocks exit at
// once. Group e's rows are offsets[e] ≤ i < offsets[e+1] of Y, its matrix
// ids[e] (or e); row i reads X row rowids[i] (or i).
#define GEMM_MMA_THREADS 256
#define GEMM_MMA_BK 32
#define GEMM_MMA_SMEM 49152  // static shared memory of a block (bytes)


// Part formats of the tensor-core GEMM (gemm_mma_body's PF, beside PARTS).
// GEMM_PARTS_BF16: each x as PARTS BF16 parts of s·x (s the FP8 block
// scale), as above. GEMM_PARTS_F16 (f16p34, docs/PERF.md "f16p34"): each x
// as two FP16 parts of y·2^f, y = s·x, hi = f16(y·2^f), lo = f16(y·2^f −
// hi): FP16's 11-bit significand keeps ≈ 22 bits of y in two MMAs where
// BF16 needs three for 24. FP16's range is the catch (largest 65504), so
// f is a power of two per X row and stage (the stage's BK columns), from
// the largest |y| of the row in the stage: it maps that to [2^14, 2^15),
// no finite y can overflow, and a row's small values keep FP16's precision
// relative to the stage's largest. The MMAs of a stage accumulate into
// stage accumulators, which are multiplied by 2^-f (exact but at float32's
// underflow) into the pass's float32 accumulator. Grouped FP8 split-once
// instances only (every E4M3 value is an FP16 value).
#define GEMM_PARTS_BF16 0
#define GEMM_PARTS_F16 1

// Weight formats of the tensor-core GEMM: bytes per element, bytes per
// shared row (one step's GEMM_MMA_BK columns), GAP (the distance of a
// pair's two columns), frag: row r's A registers of the step for lane quad
// tq, a[2s] = pair P0 and a[2s+1] = P1 of half s; pair: the PARTS parts of
// x's P0 and P1 from the four x of columns c … c+3 (scaled by sc first).
struct GemmMmaBF16 {
    static constexpr int ELEM = 2, ROWB = GEMM_MMA_BK * 2, GAP = 1;
    __device__ static void frag(const uint8_t* tile, int r, int tq, uint32_t* a) { frag_at(tile + r * ROWB, tq, a); }
    // frag_at: the same from the step's ROWB bytes of a row at row.
    __device__ static void frag_at(const uint8_t* row, int tq, uint32_t* a) {
        const uint4 v = *reinterpret_cast<const uint4*>(row + 16 * tq);
        a[0] = v.x, a[1] = v.y, a[2] = v.z, a[3] = v.w;
    }
    // first, second: frag's registers a half at a time (PIPE): first loads
    // the row's piece as frag does and gives half 0's P0, P1, keeping half
    // 1's in keep; second gives half 1's from keep.
    __device__ static void first(const uint8_t* tile, int r, int tq, uint32_t& p0, uint32_t& p1, uint2& keep) {
        const uint4 v = *reinterpret_cast<const uint4*>(tile + r * ROWB + 16 * tq);
        p0 = v.x, p1 = v.y, keep = make_uint2(v.z, v.w);
    }
    __device__ static void second(uint2 keep, uint32_t& p0, uint32_t& p1) { p0 = keep.x, p1 = keep.y; }
};
struct GemmMmaFP8 {
    static constexpr int ELEM = 1, ROWB = GEMM_MMA_BK, GAP = 2;
    // E4M3 bytes 0, 2 of v as a BF16 pair (lo) and bytes 1, 3 (hi), exact.
    __device__ static void widen(uint32_t v, uint32_t& lo, uint32_t& hi) {
        const uint32_t l = ((v << 4) & 0x07f007f0u) | ((v << 8) & 0x80008000u);  // × 2^-120
        const uint32_t h = ((v >> 4) & 0x07f007f0u) | (v & 0x80008000u);
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(lo) : "r"(l), "r"(0x7b807b80u), "r"(0x80008000u));  // × 2^120 − 0
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(hi) : "r"(h), "r"(0x7b807b80u), "r"(0x80008000u));
    }
    __device__ static void frag(const uint8_t* tile, int r, int tq, uint32_t* a) { frag_at(tile + r * ROWB, tq, a); }
    __device__ static void frag_at(const uint8_t* row, int tq, uint32_t* a) {
        const uint2 v = *reinterpret_cast<const uint2*>(row + 8 * tq);
        widen(v.x, a[0], a[1]);
        widen(v.y, a[2], a[3]);
    }
    __device__ static void first(const uint8_t* tile, int r, int tq, uint32_t& p0, uint32_t& p1, uint2& keep) {
        const uint2 v = *reinterpret_cast<const uint2*>(tile + r * ROWB + 8 * tq);
        widen(v.x, p0, p1);
        keep.x = v.y;
    }
    __device__ static void second(uint2 keep, uint32_t& p0, uint32_t& p1) { widen(keep.x, p0, p1); }
};

// E4M3 weights as FP16 pairs (GEMM_PARTS_F16): pairs of neighbouring
// columns (GAP 1, as BF16), each E4M3 byte pair of a word one conversion:
// cvt.rn.f16x2.e4m3x2 on sm_90 (one F2FP.F16.E4M3.UNPACK_B, and a PRMT for
// a word's high pair; every E4M3 value, subnormals included, is an FP16
// value: exact; nvcc 11.8's PTX has the conversion for sm_90 only). Before
// sm_90 by bits: s.eeee.mmm moved to FP16 bits s.0eeee.mmm0000000 is the value ×
// 2^-8 (normal or subnormal: both formats' subnormals scale alike), one
// f16x2 FMA by 2^8 makes it the value (exact: 3 mantissa bits).
struct GemmMmaFP8H {
    static constexpr int ELEM = 1, ROWB = GEMM_MMA_BK, GAP = 1;
    // E4M3 bytes 0, 1 of v as an FP16 pair (lo) and bytes 2, 3 (hi), exact.
    __device__ static void widen(uint32_t v, uint32_t& lo, uint32_t& hi) { e4m3x2_f16x2(v, lo, hi); }
    __device__ static void frag_at(const uint8_t* row, int tq, uint32_t* a) {
        const uint2 v = *reinterpret_cast<const uint2*>(row + 8 * tq);
        widen(v.x, a[0], a[1]);
        widen(v.y, a[2], a[3]);
    }
    __device__ static void frag(const uint8_t* tile, int r, int tq, uint32_t* a) { frag_at(tile + r * ROWB, tq, a); }
    __device__ static void first(const uint8_t* tile, int r, int tq, uint32_t& p0, uint32_t& p1, uint2& keep) {
        const uint2 v = *reinterpret_cast<const uint2*>(tile + r * ROWB + 8 * tq);
        widen(v.x, p0, p1);
        keep.x = v.y;
    }
    __device__ static void second(uint2 keep, uint32_t& p0, uint32_t& p1) { widen(keep.x, p0, p1); }
};

template <class WT, int PARTS>
__device__ __forceinline__ void gemm_mma_pair(float4 v, float sc, uint32_t* p0, uint32_t* p1) {
    v.x *= sc, v.y *= sc, v.z *= sc, v.w *= sc;
    if (WT::GAP == 1) {
        split_parts<PARTS>(v.x, v.y, p0);
        split_parts<PARTS>(v.z, v.w, p1);
    } else {
        split_parts<PARTS>(v.x, v.z, p0);
        split_parts<PARTS>(v.y, v.w, p1);
    }
}

// The X tile's rows are KS·GEMM_MMA_BK floats (128·KS bytes, 8·KS chunks
// of 16): byte offset of chunk c of row r.
template <int KS = 1>
__device__ __forceinline__ int gemm_mma_xoff(int r, int c) {
    return r * (KS * GEMM_MMA_BK * 4) + ((c ^ (r & 1)) << 4);
}

// LDSM layouts (BF16 W, PIPE, X split per warp). The MMA's k order: half s
// of a step is columns 16s … 16s+15, k in order (ldmatrix gives lane (g,
// tq) the A elements k 2tq, 2tq+1 and 2tq+8, 2tq+9 of rows g and g + 8).
// W: byte offset of 16-byte chunk c (8 columns) of row r of a 64-byte row,
// the chunk XOR-swizzled by (r >> 1) & 3 so that the eight rows of an
// 8 × 8 matrix hit eight distinct 16-byte bank groups.
__device__ __forceinline__ int gemm_mma_ldsm_woff(int r, int c) { return r * 64 + ((c ^ ((r >> 1) & 3)) << 4); }
// X: 16-byte chunk c (columns 4c … 4c+3) of row r (128 bytes, four
// 32-byte sectors), the sector XOR-swizzled by r & 3: lane quad tq of half s
// reads 8 bytes at column 16s + 2tq (its P0: k 2tq, 2tq+1) and at 16s + 8 +
// 2tq (P1: k 2tq+8, 2tq+9), sectors 2s and 2s + 1, and the four rows of a
// half warp's loads hit four distinct sectors (no bank conflicts).
__device__ __forceinline__ int gemm_mma_ldsm_xoff(int r, int c) {
    return r * 128 + ((((c >> 1) ^ (r & 3)) << 5) | ((c & 1) << 4));
}
__device__ __forceinline__ float4 gemm_mma_ldsm_x(const uint8_t* xs, int r, int s, int tq) {
    const float2 p0 = *reinterpret_cast<const float2*>(xs + r * 128 + (((2 * s) ^ (r & 3)) << 5) + 8 * tq);
    const float2 p1 = *reinterpret_cast<const float2*>(xs + r * 128 + (((2 * s + 1) ^ (r & 3)) << 5) + 8 * tq);
    return make_float4(p0.x, p0.y, p1.x, p1.y);
}


// The variant of an instance (gemm31, docs/PERF.md "gemm31"):
// GEMM_MMA_PIPE pipelines the fragments a half step (k16) ahead: while
// half s's MMAs run, the warp loads (widens, splits) the next half's
// fragments, the next step's first half from tile kt + 1, which the ring
// then holds during step kt (as XS does). Without it a step loads and splits
// all of its fragments, then issues its MMAs, and the barrier that starts
// the next step keeps the two from overlapping. XS with PIPE: the block's
// split of tile kt + 1 comes after the first half's MMAs, and the parts of
// each step's first half are read after its barrier.
#define GEMM_MMA_PIPE 2
// GEMM_MMA_SPLITK (dense33, dsplit34; docs/PERF.md "dense33", "dsplit34"):
// split-K over the grid's z (dense GEMMs only, never with offsets): block z
// of gridDim.z runs tile steps ⌊T·z/Z⌋ … ⌊T·(z+1)/Z⌋ − 1 of the
// T = ⌈cols/32⌉, stores its float32 partial tile in part (slot z of its
// tile), counts itself in tiles[tile] (fused.cuh last_of), and the block of
// the tile that arrives last sums the Z partials in z order (p0 + p1 + …,
// its own from registers) into Y. The order is fixed whichever block
// finishes last, so the bits are the same every run for any Z (dense33's
// red.global.add summed in arrival order); no zeroed Y. For the narrow
// outputs (out 4096 → 2048, router + shared gate·up 2048 → 1280) and short
// prompts, whose 128 × 64 grids leave most of the 132 SMs idle.
#define GEMM_MMA_SPLITK 4
// GEMM_MMA_XP (xp15, docs/PERF.md "xp15"): X arrives as its three BF16
// parts, split once a launch by gemm_xp_prep into [part][row][kpad] BF16
// (kpad = cols rounded up to 32, the padding zero), and the block copies
// them into the ring as it copies W, in W's layout (gemm_mma_ldsm_woff): a
// warp's B fragments are ldmatrix loads, three a half step and pair of n8
// tiles, with no split in the loop (the q tiles split each fragment of x
// per warp: ≈ 80 of the 128 × 64 step's 279 instructions, 211 here). The
// same parts and the same MMA order as the q tile: the same bits. Dense
// BF16 q tiles only.
#define GEMM_MMA_XP 8

// Wide stages (gemm32, docs/PERF.md "gemm32"): KS sub-steps of
// GEMM_MMA_BK columns a ring stage (BK = 32·KS columns: one cp.async wait
// and one barrier per BK columns instead of per 32, and each W row's BK
// bytes a stage in one piece), the ring sized to SMEM bytes of shared
// memory (beyond the 48 KB of static shared memory: dynamic, the launch
// passes SMEM and sets the function's limit) with at most MAXST stages.
// Only the split-once tiles without PIPE take KS > 1 (the grouped experts).
// A stage's W row is KS sub-blocks of SB bytes (one sub-step's columns);
// sub-block s of row r sits at s ^ h(r), so that the eight rows of a
// fragment load (lanes g = 0…7 at the same sub-step) spread over the
// 128-byte bank line's SB-byte places (P of them): h(r) = (r / max(1,
// P / KS)) & (min(KS, P) − 1); KS 1 gives the layout above.
template <int KS, int SB>
__device__ __forceinline__ int gemm_mma_wsub(int r, int s) {
    constexpr int P = 128 / SB, DIV = P / KS > 1 ? P / KS : 1, MASK = (KS < P ? KS : P) - 1;
    return r * (KS * SB) + ((s ^ ((r / DIV) & MASK)) * SB);
}
// The parts buffer's rows hold BK / 2 words (16 a sub-step); with KS > 1
// a row's sub-steps are XOR-swapped by r & 1 so that the two rows of a
// quarter warp's 16-byte B loads hit both halves of the bank line.
template <int KS>
__device__ __forceinline__ int gemm_mma_psub(int r, int s) {
    return KS > 1 ? s ^ (r & 1) : s;
}

// gemm_mma_splitk_sum (GEMM_MMA_SPLITK, dsplit34) folds a split block's
// part accumulators (smallest part first, as the epilogue) into its partial
// tile, stores it in part — [Z][tiles][MI·NJ float4s][GEMM_MMA_THREADS],
// each thread its own fragments' 16-byte slots, so a warp's stores and
// loads are whole 512-byte lines — and counts the block in on the tile's
// counter in tiles (fused.cuh last_of's protocol: fence, count, the last
// sets it back to 0; the flag by __syncthreads_or, as the ring takes all
// 48 KB of static shared memory). Every block but the tile's last returns
// false. The last one sums the Z partials in z order, p0 + p1 + … + p(Z−1)
// (all through L2, __ldcg, its own too: its fragments need not stay live),
// into the part-0 accumulator the epilogue reads alone, and returns true.
// Part and counters are the engine's split-K workspace (engine/cuda
// gemm_splitk_cuda.go).
template <int MI, int NJ, int ACCP>
__device__ __forceinline__ bool gemm_mma_splitk_sum(float (&acc)[ACCP][MI][NJ][4], float* part,
                                                    unsigned int* tiles, int tid) {
    constexpr int F = MI * NJ;
    const unsigned int xy = gridDim.x * gridDim.y, tile = blockIdx.y * gridDim.x + blockIdx.x;
    float4* const own = reinterpret_cast<float4*>(part) + (size_t)(blockIdx.z * xy + tile) * F * GEMM_MMA_THREADS + tid;
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            float s[4];
#pragma unroll
            for (int c = 0; c < 4; c++) {
                s[c] = acc[ACCP - 1][i][j][c];
#pragma unroll
                for (int q = ACCP - 2; q >= 0; q--) s[c] += acc[q][i][j][c];  // smallest part first
            }
            own[(i * NJ + j) * GEMM_MMA_THREADS] = make_float4(s[0], s[1], s[2], s[3]);
        }
    __threadfence();  // this block's partial is visible device-wide before it counts
    __syncthreads();
    bool last = false;
    if (tid == 0) {
        last = atomicAdd(tiles + tile, 1u) == gridDim.z - 1;
        if (last) atomicExch(tiles + tile, 0u);
    }
    if (!__syncthreads_or(last)) return false;
    __threadfence();
    // Half the fragments a pass, four splits' loads in flight at once (256
    // bytes a thread, 64 KB a block: about what one SM draws from L2 in a
    // round trip); the adds in z order whatever the grouping.
    constexpr int H = F / 2 > 0 ? F / 2 : 1, G = 4;
    const unsigned int Z = gridDim.z;
    auto at = [&](unsigned int z, int f) {
        return reinterpret_cast<const float4*>(part) + ((size_t)(z * xy + tile) * F + f) * GEMM_MMA_THREADS + tid;
    };
    auto add = [](float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); };
#pragma unroll
    for (int h = 0; h < F; h += H) {
        float4 sum[H], p[G][H];
        // Splits 0 … G − 1 (Z ≥ 2; a split past Z reads split Z − 1 again
        // and is not added), then G at a time, then one at a time.
#pragma unroll
        for (int u = 0; u < G; u++)
#pragma unroll
            for (int f = 0; f < H; f++) p[u][f] = __ldcg(at(min((unsigned int)u, Z - 1), h + f));
#pragma unroll
        for (int f = 0; f < H; f++) {
            sum[f] = add(p[0][f], p[1][f]);
#pragma unroll
            for (int u = 2; u < G; u++)
                if (u < Z) sum[f] = add(sum[f], p[u][f]);
        }
        unsigned int z = G;
        for (; z + G <= Z; z += G) {
#pragma unroll
            for (int u = 0; u < G; u++)
#pragma unroll
                for (int f = 0; f < H; f++) p[u][f] = __ldcg(at(z + u, h + f));
#pragma unroll
            for (int u = 0; u < G; u++)
#pragma unroll
                for (int f = 0; f < H; f++) sum[f] = add(sum[f], p[u][f]);
        }
        for (; z < Z; z++) {
#pragma unroll
            for (int f = 0; f < H; f++) p[0][f] = __ldcg(at(z, h + f));
#pragma unroll
            for (int f = 0; f < H; f++) sum[f] = add(sum[f], p[0][f]);
        }
#pragma unroll
        for (int f = 0; f < H; f++) {
            const int i = (h + f) / NJ, j = (h + f) % NJ;
            acc[0][i][j][0] = sum[f].x, acc[0][i][j][1] = sum[f].y, acc[0][i][j][2] = sum[f].z, acc[0][i][j][3] = sum[f].w;
#pragma unroll
            for (int q = 1; q < ACCP; q++) acc[q][i][j][0] = acc[q][i][j][1] = acc[q][i][j][2] = acc[q][i][j][3] = 0.f;
        }
    }
    return true;
}

// Shared memory past the static 48 KB (the wide instances' rings).
extern __shared__ __align__(128) uint8_t gemm_mma_dyn[];

template <class WT, int BM, int BN, int WM, int WN, int PARTS, bool XS, int OPT, int KS = 1,
          int SMEM = GEMM_MMA_SMEM, int MAXST = 8, int PF = GEMM_PARTS_BF16>
__device__ __forceinline__ void gemm_mma_body(float* __restrict__ Y, const uint8_t* __restrict__ W,
                                              const float* __restrict__ S, const float* __restrict__ X, int rows,
                                              int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,
                                              const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids,
                                              long long mstride, long long sstride, int n,
                                              float* part = nullptr, unsigned int* tiles = nullptr,
                                              long long pstride = 0) {
    static_assert(WM * WN == GEMM_MMA_THREADS / 32, "a block is 8 warps");
    static_assert(BM % (WM * 16) == 0 && BN % (WN * 8) == 0, "warp tiles of whole fragments");
    static_assert(128 % BM == 0, "a W tile lies in one row of FP8 scale blocks");
    constexpr int MI = BM / (WM * 16), NJ = BN / (WN * 8);
    // A stage: BK columns, W rows of WROWB bytes (KS sub-blocks of SB).
    constexpr int BK = GEMM_MMA_BK * KS, SB = WT::ROWB, WROWB = KS * SB;
    // XP: X as PARTS BF16 parts of BN rows × BK columns, part after part.
    constexpr bool XP = (OPT & GEMM_MMA_XP) != 0;
    constexpr int XPB = BN * BK * 2;  // XP: one part's bytes in a stage
    constexpr int WBYTES = BM * WROWB, XBYTES = XP ? PARTS * XPB : BN * BK * 4, STAGE = WBYTES + XBYTES;
    // XS: the parts double buffer, PARTB bytes a part ([BN rows][BK / 2
    // words]); F16: then each row's 2^-f of the stage (BN floats), PBUF
    // words a buffer.
    constexpr bool F16 = PF == GEMM_PARTS_F16;
    static_assert(!F16 || (PARTS == 2 && XS && WT::ELEM == 1 && WT::GAP == 1 && (OPT & GEMM_MMA_PIPE) == 0),
                  "FP16 parts: two, split once per block, FP8 weights as FP16 pairs, no PIPE");
    constexpr int PARTB = BN * (BK / 2) * 4, PBUF = PARTS * PARTB / 4 + (F16 ? BN : 0);
    constexpr int PBYTES = XS ? 2 * PBUF * 4 : 0;
    constexpr int ST = (SMEM - PBYTES) / STAGE > MAXST ? MAXST : (SMEM - PBYTES) / STAGE;
    constexpr bool PIPE = (OPT & GEMM_MMA_PIPE) != 0;
    constexpr bool SPLITK = (OPT & GEMM_MMA_SPLITK) != 0;
    static_assert(KS == 1 || (XS && !PIPE), "wide stages: split-once tiles without PIPE");
    static_assert(!SPLITK || KS == 1, "split-K: 32-column stages");
    static_assert(KS == 1 || KS == 2 || KS == 4, "a stage lies in one 128-column block of FP8 scales");
    constexpr bool DYN = SMEM > GEMM_MMA_SMEM;
    // Tiles a step needs in the ring: its own, and (XS, PIPE) the next.
    constexpr int AHEAD = XS || PIPE ? 2 : 1;
    static_assert(ST >= AHEAD + 1, "the ring holds the step's tiles and one in flight");
    // LDSM (PIPE, BF16 W, X split per warp): A fragments by ldmatrix, in
    // the MMA's own k order (gemm_mma_ldsm_* above), and X read in it.
    constexpr bool LDSM = PIPE && WT::ELEM == 2 && !XS;
    static_assert(!XP || (LDSM && KS == 1 && NJ % 2 == 0 && PF == GEMM_PARTS_BF16),
                  "X parts: the dense BF16 q tiles, n8 tiles in pairs");
    __shared__ __align__(128) uint8_t ring_static[DYN ? 16 : ST * STAGE + PBYTES];
    uint8_t* const ring = DYN ? gemm_mma_dyn : ring_static;
    uint32_t* const parts = reinterpret_cast<uint32_t*>(ring + ST * STAGE);

    pdl_entry();
    int start, end;
    long long mat = 0;
    if (offsets) {
        const int e = blockIdx.z;
        start = offsets[e];
        end = offsets[e + 1];
        mat = ids ? (long long)ids[e] : (long long)e;
    } else {
        start = blockIdx.x * BN;
        end = min(start + BN, n);
    }
    if (start >= end) return;
    const int m0 = blockIdx.y * BM;  // first W row
    W += mat * mstride * WT::ELEM;
    const float* srow = S ? S + mat * sstride + (size_t)(m0 >> 7) * ((cols + 127) >> 7) : nullptr;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WN, wn = warp % WN, g = lane >> 2, tq = lane & 3;

    // W tile copies: BM rows × 16-byte pieces (an FP8 row whose columns are
    // not a multiple of 16 is not 16-byte aligned: two 8-byte copies).
    constexpr int WPR = WROWB / 16;  // pieces per row
    constexpr int WCOPIES = (BM * WPR + GEMM_MMA_THREADS - 1) / GEMM_MMA_THREADS;
    const bool wide = WT::ELEM == 2 || (cols & 15) == 0;
    const uint8_t* wsrc[WCOPIES];  // the piece's first byte in tile 0
    bool wok[WCOPIES], wuse[WCOPIES];
    int wdst[WCOPIES], wcol[WCOPIES];
#pragma unroll
    for (int u = 0; u < WCOPIES; u++) {
        const int f = tid + GEMM_MMA_THREADS * u, r = min(f / WPR, BM - 1), c = f % WPR;
        wuse[u] = f < BM * WPR;
        wok[u] = m0 + r < rows;
        wcol[u] = c * 16 / WT::ELEM;  // element column within the tile
        wsrc[u] = W + ((size_t)min(m0 + r, rows - 1) * cols + wcol[u]) * WT::ELEM;
        wdst[u] = LDSM      ? gemm_mma_ldsm_woff(r, c)
                  : KS == 1 ? r * WROWB + c * 16
                            : gemm_mma_wsub<KS, SB>(r, c * 16 / SB) + c * 16 % SB;
    }
    // The wide instances (DYN) copy to shared-space addresses from the
    // ring's (under the 128-register cap ptxas rebuilt the dynamic ring's
    // generic address from SR_CgaCtaId for every copy), and a block whose W
    // tile lies wholly in the matrix copies its pieces without bounds.
    const uint32_t ring_sa = (uint32_t)__cvta_generic_to_shared(ring);
    const bool wfull = DYN && wide && m0 + BM <= rows && cols % BK == 0;
    // X tile copies: BN rows × 8·KS pieces of 4 floats (XP: PARTS × BN rows
    // × 4 pieces of 8 BF16; XE bytes a column).
    constexpr int XPR = 8 * KS, XSH = KS == 1 ? 3 : KS == 2 ? 4 : 5;  // XPR = 1 << XSH
    constexpr int XPIECES = XP ? PARTS * BN * 4 : BN * XPR, XE = XP ? 2 : 1;  // XE: xsrc steps a column
    constexpr int XL = (XPIECES + GEMM_MMA_THREADS - 1) / GEMM_MMA_THREADS;
    // SPLITK: this block's steps ktb … ktb + ktiles − 1 of the matrix's
    // (kt below counts from the block's first; the copies and the FP8
    // scale take ktb + kt).
    // (32-bit: the steps times z stay far below 2^31.)
    const int kall = (cols + BK - 1) / BK;
    const int ktb = SPLITK ? kall * (int)blockIdx.z / (int)gridDim.z : 0;
    const int ktiles = SPLITK ? kall * ((int)blockIdx.z + 1) / (int)gridDim.z - ktb : kall;
    auto scale = [&](int kt) { return WT::ELEM == 1 ? __ldg(srow + (((kt + ktb) * BK) >> 7)) : 1.f; };
    for (int x0 = start; x0 < end; x0 += BN) {
        // The piece's first float in tile 0 (XP: its first byte).
        using XSrc = typename std::conditional<XP, const uint8_t*, const float*>::type;
        XSrc xsrc[XL];
        bool xok[XL], xuse[XL];
        int xdst[XL], xc[XL];
#pragma unroll
        for (int u = 0; u < XL; u++) {
            if (XP) {
                const int f = tid + GEMM_MMA_THREADS * u;
                xuse[u] = f < XPIECES;
                // Piece c (columns 8c … 8c+7) of row r of part p.
                const int p = min(f / (BN * 4), PARTS - 1), r = (f >> 2) % BN, c = f & 3;
                const int m = x0 + r;
                xc[u] = 8 * c;
                xok[u] = m < end;
                // (A row past the end copies zeros from row x0's address.)
                xsrc[u] = reinterpret_cast<XSrc>(reinterpret_cast<const uint8_t*>(X) +
                          ((size_t)p * pstride + (size_t)(xok[u] ? m : x0) * xstride + xc[u]) * 2);
                xdst[u] = WBYTES + p * XPB + gemm_mma_ldsm_woff(r, c);
                continue;
            }
            const int f = tid + GEMM_MMA_THREADS * u, r = min(f >> XSH, BN - 1), c = f & (XPR - 1);
            xuse[u] = f < BN * XPR;
            xc[u] = c * 4;
            const int m = x0 + r;
            xok[u] = m < end;
            xsrc[u] = reinterpret_cast<XSrc>(X + (size_t)(xok[u] ? (rowids ? rowids[m] : m) : 0) * xstride + xc[u]);
            xdst[u] = WBYTES + (LDSM ? gemm_mma_ldsm_xoff(r, c) : gemm_mma_xoff<KS>(r, c));
        }
        // Tile kt (W and X) into stage st: one commit group.
        auto load = [&](int st, int kt) {
            const int k0 = (kt + ktb) * BK;
            uint8_t* stage = ring + st * STAGE;
            const uint32_t sa = ring_sa + st * STAGE;
            if (wfull) {
#pragma unroll
                for (int u = 0; u < WCOPIES; u++)
                    if ((XP && (BM * WPR) % GEMM_MMA_THREADS == 0) || wuse[u])
                        cp_async16(sa + wdst[u], wsrc[u] + (size_t)k0 * WT::ELEM);
            }
#pragma unroll
            for (int u = 0; u < WCOPIES && !wfull; u++) {
                if (!wuse[u]) continue;
                const int k = k0 + wcol[u];
                const uint8_t* src = wsrc[u] + (size_t)k0 * WT::ELEM;
                if (wide) {
                    const bool ok = wok[u] && k < cols;
                    cp_async<16>(stage + wdst[u], ok ? src : W, ok);
                } else {
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const bool ok = wok[u] && k + 8 * h < cols;
                        cp_async<8>(stage + wdst[u] + 8 * h, ok ? src + 8 * h : W, ok);
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < XL && XP; u++) {
                // The parts' rows are padded with zeros to whole steps: only
                // rows past the end are zeros. (Every piece is a thread's
                // when the block's threads divide them: no xuse test.)
                if (XPIECES % GEMM_MMA_THREADS != 0 && !xuse[u]) continue;
                if (DYN) cp_async_sa<16>(sa + xdst[u], xsrc[u] + k0 * XE, xok[u]);
                else cp_async<16>(stage + xdst[u], xsrc[u] + k0 * XE, xok[u]);
            }
#pragma unroll
            for (int u = 0; u < XL && !XP; u++) {
                if (!xuse[u]) continue;
                const bool ok = xok[u] && k0 + xc[u] < cols;
                if (DYN) cp_async_sa<16>(sa + xdst[u], ok ? xsrc[u] + k0 : reinterpret_cast<XSrc>(X), ok);
                else cp_async<16>(stage + xdst[u], ok ? xsrc[u] + k0 : reinterpret_cast<XSrc>(X), ok);
            }
            cp_async_commit();
        };
        // XS: split tile kt's X (in the ring) into parts buffer kt & 1, one
        // 16-byte chunk (row r, chunk c: words 2c, 2c+1 of each part; KS > 1:
        // of sub-step c / 8, placed by gemm_mma_psub) a thread.
        auto split = [&](int kt, int st) {
            const uint8_t* xs = ring + st * STAGE + WBYTES;
            uint32_t* pb = parts + (kt & 1) * PBUF;
            const float sc = scale(kt);
#pragma unroll
            for (int u = 0; u < XL; u++) {
                const int f = tid + GEMM_MMA_THREADS * u, r = f >> XSH, c = f & (XPR - 1);
                if (f >= BN * XPR) break;
                uint32_t p0[PARTS], p1[PARTS];
                const float4 v = *reinterpret_cast<const float4*>(xs + gemm_mma_xoff<KS>(r, c));
                if (F16) {
                    // The row's XPR chunks lie in XPR consecutive lanes (a
                    // whole warp's lanes split: BN·XPR is a multiple of 32):
                    // their largest |s·x| by shuffles, then 2^f of the row.
                    const float y0 = v.x * sc, y1 = v.y * sc, y2 = v.z * sc, y3 = v.w * sc;
                    float m = fmaxf(fmaxf(fabsf(y0), fabsf(y1)), fmaxf(fabsf(y2), fabsf(y3)));
#pragma unroll
                    for (int o = XPR / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
                    float fwd, inv;
                    f16_row_scale(m, fwd, inv);
                    split_f16(y0 * fwd, y1 * fwd, p0);
                    split_f16(y2 * fwd, y3 * fwd, p1);
                    if (c == 0) reinterpret_cast<float*>(pb)[PARTS * PARTB / 4 + r] = inv;
                } else {
                    gemm_mma_pair<WT, PARTS>(v, sc, p0, p1);
                }
                const int w = r * (BK / 2) + 16 * gemm_mma_psub<KS>(r, c >> 3) + 2 * (c & 7);
#pragma unroll
                for (int p = 0; p < PARTS; p++)
                    *reinterpret_cast<uint2*>(pb + p * (PARTB / 4) + w) = make_uint2(p0[p], p1[p]);
            }
        };

        // A warp with fewer than three fragments keeps one accumulator per
        // part, so that consecutive MMAs do not wait on each other.
        constexpr int ACCP = MI * NJ <= 2 ? PARTS : 1;
        // F16: those per part are the stage's (sacc, below), and the pass
        // keeps one (ACCL).
        constexpr int ACCL = F16 ? 1 : ACCP;
        float acc[ACCL][MI][NJ][4];
#pragma unroll
        for (int q = 0; q < ACCL; q++)
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NJ; j++)
#pragma unroll
                    for (int c = 0; c < 4; c++) acc[q][i][j][c] = 0.f;

        // PIPE: half s of a step's fragments, A [i][row g P0, g+8 P0, g P1,
        // g+8 P1] (the MMA's a0…a3) and B [j][P0, P1][part]; the MMAs of a
        // half, in the order of the loop below.
        uint2 keep[MI][2];  // half 1's A words of rows g, g + 8, loaded with half 0's
        // XP: the lane's ldmatrix offsets in a stage, A's and B's of each
        // half (gemm_mma_ldsm_woff's; the rows a lane addresses lie a
        // multiple of 8 apart, so its swizzle is (lane >> 1) & 3 for all).
        int aoff[2], boff[2];
#pragma unroll
        for (int s = 0; s < 2; s++) {
            const int sw = (lane >> 1) & 3;
            aoff[s] = (wm * MI * 16 + (lane & 15)) * 64 + (((2 * s + (lane >> 4)) ^ sw) << 4);
            boff[s] = WBYTES + (wn * NJ * 8 + (lane & 7) + ((lane >> 4) << 3)) * 64 +
                      (((2 * s + ((lane >> 3) & 1)) ^ sw) << 4);
        }
        auto half_a = [&](const uint8_t* ws, int s, uint32_t(&a)[MI][4]) {
#pragma unroll
            for (int i = 0; i < MI; i++) {
                if (XP) {
                    ldmatrix_x4(ws + aoff[s] + i * 16 * 64, a[i]);
                    continue;
                }
                if (LDSM) {
                    // Lanes 8m … 8m+7 address matrix m's rows: a0 rows 0–7
                    // of the 16, k 0–7 (chunk 2s of the row); a1 rows 8–15;
                    // a2, a3 the same rows, k 8–15 (chunk 2s + 1).
                    const int r = wm * MI * 16 + i * 16 + (lane & 7) + (lane & 8);
                    ldmatrix_x4(ws + gemm_mma_ldsm_woff(r, 2 * s + (lane >> 4)), a[i]);
                    continue;
                }
                const int r = wm * MI * 16 + i * 16 + g;
                if (s == 0) {
                    WT::first(ws, r, tq, a[i][0], a[i][2], keep[i][0]);
                    WT::first(ws, r + 8, tq, a[i][1], a[i][3], keep[i][1]);
                } else {
                    WT::second(keep[i][0], a[i][0], a[i][2]);
                    WT::second(keep[i][1], a[i][1], a[i][3]);
                }
            }
        };
        auto half_b = [&](const uint8_t* ws, int kt, int s, uint32_t(&b)[NJ][2][PARTS]) {
            if (XP) {
                // Lanes 8m … 8m+7 address matrix m's rows: m = 0, 1 the n8
                // tile j's k 0–7 and 8–15 of half s (its P0, P1), m = 2, 3
                // tile j + 1's; one ldmatrix a part and pair of tiles.
#pragma unroll
                for (int p = 0; p < PARTS; p++)
#pragma unroll
                    for (int j = 0; j < NJ; j += 2) {
                        uint32_t v[4];
                        ldmatrix_x4(ws + boff[s] + p * XPB + j * 8 * 64, v);
                        b[j][0][p] = v[0], b[j][1][p] = v[1], b[j + 1][0][p] = v[2], b[j + 1][1][p] = v[3];
                    }
                return;
            }
            const float sc = XS ? 1.f : scale(kt);
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                const int r = wn * NJ * 8 + j * 8 + g;
                if (XS) {
                    const uint32_t* pb =
                        parts + (kt & 1) * PBUF + r * (BK / 2) + 4 * tq + 2 * s;
#pragma unroll
                    for (int p = 0; p < PARTS; p++) {
                        const uint2 v = *reinterpret_cast<const uint2*>(pb + p * (PARTB / 4));
                        b[j][0][p] = v.x, b[j][1][p] = v.y;
                    }
                } else {
                    // LDSM: x at k 2tq, 2tq+1, 2tq+8, 2tq+9 of half s, the
                    // pairs P0, P1 as for GAP 1.
                    const float4 v = LDSM ? gemm_mma_ldsm_x(ws + WBYTES, r, s, tq)
                                          : *reinterpret_cast<const float4*>(ws + WBYTES + gemm_mma_xoff(r, 2 * tq + s));
                    gemm_mma_pair<WT, PARTS>(v, sc, b[j][0], b[j][1]);
                }
            }
        };
        auto half_mma = [&](const uint32_t(&a)[MI][4], const uint32_t(&b)[NJ][2][PARTS]) {
#pragma unroll
            for (int p = PARTS - 1; p >= 0; p--)
#pragma unroll
                for (int j = 0; j < NJ; j++)
#pragma unroll
                    for (int i = 0; i < MI; i++) mma_bf16(acc[p % ACCL][i][j], a[i], b[j][0][p], b[j][1][p]);
        };
        uint32_t an[MI][4], bn[NJ][2][PARTS];  // PIPE: the next step's first half (bn: not XS)

        // Tile kt is commit group kt (groups past the last tile are empty).
        // A step begins with tile kt in the ring, and (XS, PIPE) tile kt + 1
        // too, whose X it splits (XS) and whose first half's fragments it
        // loads (PIPE) while tile kt's feed the MMAs: with ST − 1 groups
        // issued ahead, waiting until ST − 1 − AHEAD are pending.
        if (!DYN) {
#pragma unroll
            for (int st = 0; st < ST - 1; st++) {
                if (st < ktiles) load(st, st);
                else cp_async_commit();
            }
        } else {
            // (Not unrolled: the deep rings' prologues held registers.)
#pragma unroll 1
            for (int st = 0; st < ST - 1; st++) {
                if (st < ktiles) load(st, st);
                else cp_async_commit();
            }
        }
        if (XS || PIPE) {
            cp_async_wait<ST - 2>();
            __syncthreads();  // tile 0 is in for every thread
            if (XS) split(0, 0);
            if (PIPE) {
                if (XS) half_a(ring, 0, an);
                if (!XS) half_b(ring, 0, 0, bn);
            }
        }
        // Stages of tile kt (st), kt + 1 (st1) and kt + ST − 1 (the one step
        // kt − 1 used, refilled now).
        for (int kt = 0, st = 0, st1 = 1 % ST, stl = ST - 1; kt < ktiles && PIPE; kt++) {
            cp_async_wait<ST - 1 - AHEAD>();
            // Tiles kt and kt + 1 (XS: tile kt's parts) are in for every
            // thread; step kt − 1 is done with its stage and parts buffer.
            __syncthreads();
            if (kt + ST - 1 < ktiles) load(stl, kt + ST - 1);
            else cp_async_commit();
            const int stn = st1;  // tile kt + 1's stage
            const uint8_t *ws = ring + st * STAGE, *ws1 = ring + stn * STAGE;
            stl = st, st = st1, st1 = st1 + 1 == ST ? 0 : st1 + 1;

            // X split per warp (not XS): A as each half begins (LDSM: one
            // ldmatrix a fragment; FP8: half 1 widened from the words kept
            // with half 0's), not a half ahead: the B fragments a half ahead
            // are the work to hide, and A a half ahead too spilt the 128 × 64
            // tiles.
            uint32_t a1[MI][4], b0[NJ][2][PARTS], b1[NJ][2][PARTS];
            if (XS) half_b(ws, kt, 0, b0);
#pragma unroll
            for (int j = 0; j < NJ; j++)
#pragma unroll
                for (int q = 0; q < 2; q++)
#pragma unroll
                    for (int p = 0; p < PARTS; p++)
                        if (!XS) b0[j][q][p] = bn[j][q][p];
            if (!XS) half_a(ws, 0, an);
            if (XS) half_a(ws, 1, a1);
            half_b(ws, kt, 1, b1);
            half_mma(an, b0);
            if (!XS) half_a(ws, 1, a1);
            if (kt + 1 < ktiles) {
                if (XS) split(kt + 1, stn);
                if (XS) half_a(ws1, 0, an);
                if (!XS) half_b(ws1, kt + 1, 0, bn);
            }
            half_mma(a1, b1);
        }
        for (int kt = 0, st = 0, st1 = 1 % ST, stl = ST - 1; kt < ktiles && !PIPE; kt++) {
            cp_async_wait<ST - 1 - AHEAD>();
            // Tile kt (XS: and kt + 1, and tile kt's parts) are in for every
            // thread; step kt − 1 is done with its stage and parts buffer.
            __syncthreads();
            if (kt + ST - 1 < ktiles) load(stl, kt + ST - 1);
            else cp_async_commit();
            if (XS && kt + 1 < ktiles) split(kt + 1, st1);
            const uint8_t* ws = ring + st * STAGE;
            stl = st, st = st1, st1 = st1 + 1 == ST ? 0 : st1 + 1;

            // F16: the stage's MMAs into sacc, from zero.
            float sacc[F16 ? ACCP : 1][MI][NJ][4];
#pragma unroll
            for (int q = 0; q < (F16 ? ACCP : 1); q++)
#pragma unroll
                for (int i = 0; i < MI; i++)
#pragma unroll
                    for (int j = 0; j < NJ; j++)
#pragma unroll
                        for (int c = 0; c < 4; c++) sacc[q][i][j][c] = 0.f;
            // The stage's KS sub-steps of 32 columns, one after another (no
            // barrier between: the loads of one may overlap the last's MMAs).
#pragma unroll
            for (int ks = 0; ks < KS; ks++) {
                uint32_t a[MI][2][4];  // [i][W row g, g + 8][P0, P1 of half 0, of half 1]
#pragma unroll
                for (int i = 0; i < MI; i++) {
                    const int r = wm * MI * 16 + i * 16 + g;
                    WT::frag_at(ws + gemm_mma_wsub<KS, SB>(r, ks), tq, a[i][0]);
                    WT::frag_at(ws + gemm_mma_wsub<KS, SB>(r + 8, ks), tq, a[i][1]);
                }
                uint32_t b[NJ][4][PARTS];  // [j][P0, P1 of half 0, of half 1][part]
#pragma unroll
                for (int j = 0; j < NJ; j++) {
                    const int r = wn * NJ * 8 + j * 8 + g;
                    if (XS) {
                        const uint32_t* pb = parts + (kt & 1) * PBUF + r * (BK / 2) +
                                             16 * gemm_mma_psub<KS>(r, ks) + 4 * tq;
#pragma unroll
                        for (int p = 0; p < PARTS; p++) {
                            const uint4 v = *reinterpret_cast<const uint4*>(pb + p * (PARTB / 4));
                            b[j][0][p] = v.x, b[j][1][p] = v.y, b[j][2][p] = v.z, b[j][3][p] = v.w;
                        }
                    } else {
                        const uint8_t* xs = ws + WBYTES;
                        const float sc = scale(kt);
#pragma unroll
                        for (int s = 0; s < 2; s++)
                            gemm_mma_pair<WT, PARTS>(*reinterpret_cast<const float4*>(xs + gemm_mma_xoff(r, 2 * tq + s)),
                                                     sc, b[j][2 * s], b[j][2 * s + 1]);
                    }
                }
                // Smallest part first; the fragments' MMAs of one part in a row.
#pragma unroll
                for (int s = 0; s < 2; s++)
#pragma unroll
                    for (int p = PARTS - 1; p >= 0; p--)
#pragma unroll
                        for (int j = 0; j < NJ; j++)
#pragma unroll
                            for (int i = 0; i < MI; i++) {
                                const uint32_t ai[4] = {a[i][0][2 * s], a[i][1][2 * s], a[i][0][2 * s + 1],
                                                        a[i][1][2 * s + 1]};
                                if (F16) mma_f16(sacc[p % ACCP][i][j], ai, b[j][2 * s][p], b[j][2 * s + 1][p]);
                                else mma_bf16(acc[p % ACCL][i][j], ai, b[j][2 * s][p], b[j][2 * s + 1][p]);
                            }
            }
            if (F16) {
                // Fragment c of (i, j) is X row 2·tq + (c & 1) of the j-th 8:
                // its 2^-f of the stage (the small part's sums first).
#pragma unroll
                for (int j = 0; j < NJ; j++) {
                    const int r = wn * NJ * 8 + j * 8 + 2 * tq;
                    const float2 inv = *reinterpret_cast<const float2*>(
                        reinterpret_cast<const float*>(parts + (kt & 1) * PBUF + PARTS * PARTB / 4) + r);
#pragma unroll
                    for (int i = 0; i < MI; i++)
#pragma unroll
                        for (int c = 0; c < 4; c++) {
                            float v = sacc[ACCP - 1][i][j][c];
#pragma unroll
                            for (int q = ACCP - 2; q >= 0; q--) v += sacc[q][i][j][c];
                            acc[0][i][j][c] = fmaf(v, c & 1 ? inv.y : inv.x, acc[0][i][j][c]);
                        }
                }
            }
        }
        cp_async_wait<0>();
        __syncthreads();  // the ring and the parts are refilled by the next pass

        // SPLITK: the tile's sums are this split's partial (gemm_mma_splitk_sum).
        if (SPLITK && !gemm_mma_splitk_sum<MI, NJ, ACCL>(acc, part, tiles, tid)) return;

        // Fragment c of (i, j): W row g (+8 for c ≥ 2) of the i-th 16, X row
        // 2·tq (+1 for odd c) of the j-th 8.
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < NJ; j++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    const int col = m0 + wm * MI * 16 + i * 16 + g + 8 * (c >> 1);
                    const int m = x0 + wn * NJ * 8 + j * 8 + tq * 2 + (c & 1);
                    float v = acc[ACCL - 1][i][j][c];
#pragma unroll
                    for (int q = ACCL - 2; q >= 0; q--) v += acc[q][i][j][c];  // smallest part first
                    if (col < rows && m < end) Y[(size_t)m * ystride + col] = v;
                }
    }
}

// gemm_mma_{bf16,fp8}_p{PARTS}m{BM}n{BN}[s][q]: the tensor-core GEMM's
// instances (s: X split once per block, XS; q: GEMM_MMA_PIPE), with the signatures of the FP64 ones (engine/cuda
// ChooseGemmFast picks).
#define GEMM_MMA(P, BM, BN, WM, WN, XS, OPT, SUF)                                                                     \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, 2) gemm_mma_bf16_p##P##m##BM##n##BN##SUF(          \
        float* __restrict__ Y, const uint16_t* __restrict__ W, const float* __restrict__ X, long long mstride, int n, \
        int rows, int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,                           \
        const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids) {                                        \
        gemm_mma_body<GemmMmaBF16, BM, BN, WM, WN, P, XS, OPT>(Y, reinterpret_cast<const uint8_t*>(W), nullptr, X,    \
                                                               rows, cols, xstride, ystride, offsets, ids, rowids,    \
                                                               mstride, 0, n);                                        \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, 2) gemm_mma_fp8_p##P##m##BM##n##BN##SUF(           \
        float* __restrict__ Y, const uint8_t* __restrict__ W, const float* __restrict__ S,                           \
        const float* __restrict__ X, long long mstride, long long sstride, int n, int rows, int cols, int xstride,   \
        int ystride, const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,                           \
        const int32_t* __restrict__ rowids) {                                                                        \
        gemm_mma_body<GemmMmaFP8, BM, BN, WM, WN, P, XS, OPT>(Y, W, S, X, rows, cols, xstride, ystride, offsets, ids, \
                                                              rowids, mstride, sstride, n);                           \
    }
// An instance and its variant q (engine/cuda gemm_fast.go names them).
#define GEMM_MMA_ALL(P, BM, BN, WM, WN, XS, SUF) \
    GEMM_MMA(P, BM, BN, WM, WN, XS, 0, SUF)      \
    GEMM_MMA(P, BM, BN, WM, WN, XS, GEMM_MMA_PIPE, SUF##q)

// Dense prompt rows: 128 × 64 tiles, narrower ones where a short prompt or a
// narrow output would leave the 132 SMs without blocks (each X fragment
// split by the warps that use it). Grouped experts: 128 W rows by 8, 16 or
// 32 X rows per pass, one warp per 16 W rows, X split once per block (s).
// Three parts: two (PARTS 2, 16 bits of x) missed fast's 1e-4 on the odd
// checkpoints' prefill (docs/PERF.md "Prefill GEMM core").
GEMM_MMA_ALL(3, 128, 64, 2, 4, false, )
GEMM_MMA_ALL(3, 128, 32, 4, 2, false, )
GEMM_MMA_ALL(3, 64, 32, 4, 2, false, )
GEMM_MMA_ALL(3, 64, 16, 4, 2, false, )
GEMM_MMA_ALL(3, 128, 32, 8, 1, true, s)
GEMM_MMA_ALL(3, 128, 16, 8, 1, true, s)
GEMM_MMA_ALL(3, 128, 8, 8, 1, true, s)

// gemm32's wide grouped instances (docs/PERF.md "gemm32"; engine/cuda
// gemm_fast.go gemmWide, $PROSCENIUM_GPU_GEMM_GROUPED): the split-once
// tiles of 128 W rows by 8, 16 or 32 X rows with KS sub-steps a stage and
// the ring in dynamic shared memory, named ...s k{32·KS} b{blocks an SM}.
// GEMM_MMA_SMEM_B2 lets two blocks share an sm_90 SM (228 KB, 1 KB a block
// reserved), GEMM_MMA_SMEM_B3 three, GEMM_MMA_SMEM_B1 is one block's (227 KB
// at most); the launch
// passes the bytes and raises the function's limit to them. At most
// GEMM_MMA_WIDE_ST stages (cp.async.wait_group counts up to ST − 3).
#define GEMM_MMA_SMEM_B3 75776
#define GEMM_MMA_SMEM_B2 114688
#define GEMM_MMA_SMEM_B1 229376
#define GEMM_MMA_WIDE_ST 12
#define GEMM_MMA_WIDE(P, BM, BN, KS, KSB, SMEM, MINB, SUF)                                                               \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, MINB) gemm_mma_bf16_p##P##m##BM##n##BN##s##SUF(   \
        float* __restrict__ Y, const uint16_t* __restrict__ W, const float* __restrict__ X, long long mstride, int n, \
        int rows, int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,                           \
        const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids) {                                        \
        gemm_mma_body<GemmMmaBF16, BM, BN, 8, 1, P, true, 0, KSB, SMEM, GEMM_MMA_WIDE_ST>(                           \
            Y, reinterpret_cast<const uint8_t*>(W), nullptr, X, rows, cols, xstride, ystride, offsets, ids, rowids,  \
            mstride, 0, n);                                                                                           \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, MINB) gemm_mma_fp8_p##P##m##BM##n##BN##s##SUF(    \
        float* __restrict__ Y, const uint8_t* __restrict__ W, const float* __restrict__ S,                           \
        const float* __restrict__ X, long long mstride, long long sstride, int n, int rows, int cols, int xstride,   \
        int ystride, const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,                           \
        const int32_t* __restrict__ rowids) {                                                                        \
        gemm_mma_body<GemmMmaFP8, BM, BN, 8, 1, P, true, 0, KS, SMEM, GEMM_MMA_WIDE_ST>(                             \
            Y, W, S, X, rows, cols, xstride, ystride, offsets, ids, rowids, mstride, sstride, n);                     \
    }
// Each grouped tile as five families: k32b2 (32 columns a stage as before,
// a ring of up to 12 stages: depth alone), k64b2 (64 columns, two blocks an
// SM), k128b1 (128 columns: a whole FP8 scale block a stage, one block an
// SM with 224 KB), k32b3 and k64b3 (three blocks an SM in 74 KB each: 24
// warps, ptxas held to 80 registers). The BF16 instances take KSB columns
// / 32 a stage (k64b3's BF16 128 × 32 would leave room for two stages; the
// engine's grouped experts are FP8, the BF16 ones run in tests).
#define GEMM_MMA_WIDE_ALL(P, BN)                                     \
    GEMM_MMA_WIDE(P, 128, BN, 1, 1, GEMM_MMA_SMEM_B2, 2, k32b2)      \
    GEMM_MMA_WIDE(P, 128, BN, 2, 2, GEMM_MMA_SMEM_B2, 2, k64b2)      \
    GEMM_MMA_WIDE(P, 128, BN, 4, 4, GEMM_MMA_SMEM_B1, 1, k128b1)     \
    GEMM_MMA_WIDE(P, 128, BN, 1, 1, GEMM_MMA_SMEM_B3, 3, k32b3)      \
    GEMM_MMA_WIDE(P, 128, BN, 2, 1, GEMM_MMA_SMEM_B3, 3, k64b3)
GEMM_MMA_WIDE_ALL(3, 32)
GEMM_MMA_WIDE_ALL(3, 16)
GEMM_MMA_WIDE_ALL(3, 8)

// f16p34's grouped instances (GEMM_PARTS_F16 above; docs/PERF.md "f16p34";
// engine/cuda gemm_fast.go gemmF16Shapes, $PROSCENIUM_GPU_GEMM_F16): gemm32's
// wide grouped tiles in the families the experts take by default (k64b2,
// k64b3), each x as two FP16 parts under a per-row, per-stage power of two,
// the E4M3 weights as FP16 pairs; FP8 only (BF16 weights are not all FP16
// values), named gemm_mma_fp8_h2m128n{BN}s{family}.
#define GEMM_MMA_F16(BN, KS, SMEM, MINB, SUF)                                                                       \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, MINB) gemm_mma_fp8_h2m128n##BN##s##SUF(         \
        float* __restrict__ Y, const uint8_t* __restrict__ W, const float* __restrict__ S,                           \
        const float* __restrict__ X, long long mstride, long long sstride, int n, int rows, int cols, int xstride,   \
        int ystride, const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,                           \
        const int32_t* __restrict__ rowids) {                                                                        \
        gemm_mma_body<GemmMmaFP8H, 128, BN, 8, 1, 2, true, 0, KS, SMEM, GEMM_MMA_WIDE_ST, GEMM_PARTS_F16>(           \
            Y, W, S, X, rows, cols, xstride, ystride, offsets, ids, rowids, mstride, sstride, n);                     \
    }
#define GEMM_MMA_F16_ALL(BN)                                \
    GEMM_MMA_F16(BN, 2, GEMM_MMA_SMEM_B2, 2, k64b2)         \
    GEMM_MMA_F16(BN, 2, GEMM_MMA_SMEM_B3, 3, k64b3)
GEMM_MMA_F16_ALL(32)
GEMM_MMA_F16_ALL(16)
GEMM_MMA_F16_ALL(8)

// dense33's split-K instance (GEMM_MMA_SPLITK above; engine/cuda
// gemm_fast.go gemmSplitFor, $PROSCENIUM_GPU_GEMM_SPLITK): the 128 × 64
// tile with gemm31's q, its k steps over the grid's z. One instance serves
// every split count (gridDim.z); engine/cuda names a launch of Z splits
// p3m128n64qz{Z}. The signature of the others, then the split-K workspace
// (dsplit34): part, [Z][X tiles · W tiles][128 · 64] floats of partial
// tiles, and tiles, a uint32 counter a tile, 0 between launches.
#define GEMM_MMA_SPLIT(P, BM, BN, WM, WN, SUF)                                                                      \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, 2) gemm_mma_bf16_p##P##m##BM##n##BN##SUF(          \
        float* __restrict__ Y, const uint16_t* __restrict__ W, const float* __restrict__ X, long long mstride, int n, \
        int rows, int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,                           \
        const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids, float* part, unsigned int* tiles) {      \
        gemm_mma_body<GemmMmaBF16, BM, BN, WM, WN, P, false, GEMM_MMA_PIPE | GEMM_MMA_SPLITK>(                        \
            Y, reinterpret_cast<const uint8_t*>(W), nullptr, X, rows, cols, xstride, ystride, offsets, ids, rowids,  \
            mstride, 0, n, part, tiles);                                                                              \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, 2) gemm_mma_fp8_p##P##m##BM##n##BN##SUF(           \
        float* __restrict__ Y, const uint8_t* __restrict__ W, const float* __restrict__ S,                           \
        const float* __restrict__ X, long long mstride, long long sstride, int n, int rows, int cols, int xstride,   \
        int ystride, const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,                           \
        const int32_t* __restrict__ rowids, float* part, unsigned int* tiles) {                                      \
        gemm_mma_body<GemmMmaFP8, BM, BN, WM, WN, P, false, GEMM_MMA_PIPE | GEMM_MMA_SPLITK>(                         \
            Y, W, S, X, rows, cols, xstride, ystride, offsets, ids, rowids, mstride, sstride, n, part, tiles);        \
    }
GEMM_MMA_SPLIT(3, 128, 64, 2, 4, qz)

// xp15's instances (GEMM_MMA_XP above; engine/cuda gemm_xparts.go): the
// dense q tiles and the split-K tile with X as gemm_xp_prep's parts (P,
// part p of row m at P + p·pstride + m·kpad), the ring in dynamic shared
// memory (GEMM_MMA_SMEM_B2: two blocks an SM; a 128 × 64 stage is 20 KB).
// Named gemm_xp_bf16_m{BM}n{BN}q[z].
#define GEMM_XPARTS(BM, BN, WM, WN)                                                                                      \
    extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, 2) gemm_xp_bf16_m##BM##n##BN##q(                 \
        float* __restrict__ Y, const uint16_t* __restrict__ W, const uint16_t* __restrict__ P, long long pstride,    \
        int n, int rows, int cols, int kpad, int ystride) {                                                          \
        gemm_mma_body<GemmMmaBF16, BM, BN, WM, WN, 3, false, GEMM_MMA_PIPE | GEMM_MMA_XP, 1, GEMM_MMA_SMEM_B2>(      \
            Y, reinterpret_cast<const uint8_t*>(W), nullptr, reinterpret_cast<const float*>(P), rows, cols, kpad,    \
            ystride, nullptr, nullptr, nullptr, 0, 0, n, nullptr, nullptr, pstride);                                 \
    }
GEMM_XPARTS(128, 64, 2, 4)
GEMM_XPARTS(128, 32, 4, 2)
GEMM_XPARTS(64, 32, 4, 2)
extern "C" __global__ void __launch_bounds__(GEMM_MMA_THREADS, 2) gemm_xp_bf16_m128n64qz(
    float* __restrict__ Y, const uint16_t* __restrict__ W, const uint16_t* __restrict__ P, long long pstride, int n,
    int rows, int cols, int kpad, int ystride, float* part, unsigned int* tiles) {
    gemm_mma_body<GemmMmaBF16, 128, 64, 2, 4, 3, false, GEMM_MMA_PIPE | GEMM_MMA_SPLITK | GEMM_MMA_XP, 1,
                  GEMM_MMA_SMEM_B2>(Y, reinterpret_cast<const uint8_t*>(W), nullptr,
                                    reinterpret_cast<const float*>(P), rows, cols, kpad, ystride, nullptr, nullptr,
                                    nullptr, 0, 0, n, part, tiles, pstride);
}

#define GEMM_XP_PREP_THREADS 256
// gemm_xp_prep writes the three BF16 parts of n rows of X (pitch xstride
// floats, cols columns, a multiple of 8) for the gemm_xp instances: part p
// of row m at P + p·pstride + m·kpad (kpad ≥ cols, a multiple of 32; the
// columns past cols zero), split as the q tiles split them in their loop
// (split_parts<3>: the same parts, bit for bit). A thread an 8-column piece:
// two 16-byte loads, three 16-byte stores.
extern "C" __global__ void __launch_bounds__(GEMM_XP_PREP_THREADS) gemm_xp_prep(
    uint16_t* __restrict__ P, const float* __restrict__ X, int n, int cols, int xstride, int kpad,
    long long pstride) {
    pdl_entry();
    const int per = kpad >> 3;  // pieces a row
    const long long total = (long long)n * per;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        const long long m = t / per;
        const int c = (int)(t - m * per) * 8;
        xparts_piece(P, X + m * xstride, m, c, cols, kpad, pstride);
    }
}
