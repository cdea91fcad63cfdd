// Prompt-row projections (GEMM): Y[n, rows] = X[n, cols] · W[rows, cols]ᵀ with
// W BF16 or block-FP8 and X, Y float32. Reference: engine/cpu.MatMulRows.
#include "common.cuh"

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

template <class WT>
__device__ __forceinline__ void gemm_body(float* __restrict__ Y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const float* __restrict__ X, int rows,
                                          int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,
                                          const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids,
                                          long long mstride, long long sstride, int n) {
    __shared__ __align__(16) double xs[GEMM_BK * GEMM_XP];
    __shared__ __align__(16) double ws[GEMM_BK * GEMM_WP];

    pdl_entry();
    int start = 0, end = n;
    long long mat = 0;
    if (offsets) {
        const int e = blockIdx.z;
        start = offsets[e];
        end = offsets[e + 1];
        mat = ids ? (long long)ids[e] : (long long)e;
    }
    const int m0 = start + blockIdx.x * GEMM_BM;
    if (m0 >= end) return;
    const int n0 = blockIdx.y * GEMM_BN;
    W += mat * mstride * WT::ELEM;
    const int scols = (cols + 127) >> 7;
    const float* srow = S ? S + mat * sstride + (size_t)(n0 >> 7) * scols : nullptr;

    const int tid = threadIdx.x;
    // X tile loads: 64 rows × 8 float4; thread tid loads float4 f = tid + 256·u.
    const float* xrow[2];
    bool xok[2];
    int xc4[2], xr[2];
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
    // W tile loads: 32 rows × 4 pieces of 8 elements, threads 0…127.
    const bool wload = tid < GEMM_BN * 4;
    const int wr = (tid >> 2) & (GEMM_BN - 1), wc = (tid & 3) * 8;
    const bool wok = wload && n0 + wr < rows;
    const uint8_t* wrow = W + (size_t)min(n0 + wr, rows - 1) * cols * WT::ELEM;

    float4 xv[2];
    float wf[8];
    auto load = [&](int k0) {
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
    };
    auto store = [&]() {
#pragma unroll
        for (int u = 0; u < 2; u++) {
            double* d = xs + (xc4[u] * 4) * GEMM_XP + xr[u];
            d[0] = xv[u].x, d[GEMM_XP] = xv[u].y, d[2 * GEMM_XP] = xv[u].z, d[3 * GEMM_XP] = xv[u].w;
        }
        if (wload) {
#pragma unroll
            for (int i = 0; i < 8; i++) ws[(wc + i) * GEMM_WP + wr] = wf[i];
        }
    };

    const int g = tid >> 6, t = tid & 63, tx = t & 7, ty = t >> 3;
    double acc[8][4];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0;

    const int ktiles = (cols + GEMM_BK - 1) / GEMM_BK;
    load(0);
    for (int kt = 0; kt < ktiles; kt++) {
        store();
        __syncthreads();
        if (kt + 1 < ktiles) load((kt + 1) * GEMM_BK);
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
    int start = 0, end = n;
    long long mat = 0;
    if (offsets) {
        const int e = blockIdx.z;
        start = offsets[e];
        end = offsets[e + 1];
        mat = ids ? (long long)ids[e] : (long long)e;
    }
    const int m0 = start + blockIdx.x * GEMM_TC_BM;
    if (m0 >= end) return;
    const int n0 = blockIdx.y * BN;
    W += mat * mstride * WT::ELEM;
    const int scols = (cols + 127) >> 7;
    const float* srow = S ? S + mat * sstride + (size_t)(n0 >> 7) * scols : nullptr;

    const int tid = threadIdx.x;
    // X tile loads: 64 rows × 8 float4; thread tid loads float4 f = tid + 256·u.
    const float* xrow[2];
    bool xok[2];
    int xc4[2], xr[2];
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
    // W tile loads: BN rows × 4 pieces of 8 elements, threads 0…4·BN−1.
    const bool wload = tid < BN * 4;
    const int wr = (tid >> 2) & (BN - 1), wc = (tid & 3) * 8;
    const bool wok = wload && n0 + wr < rows;
    const uint8_t* wrow = W + (size_t)min(n0 + wr, rows - 1) * cols * WT::ELEM;

    float4 xv[2];
    float wf[8];
    auto load = [&](int k0) {
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
    };
    auto store = [&]() {
#pragma unroll
        for (int u = 0; u < 2; u++) {
            double2* d = reinterpret_cast<double2*>(xs + xr[u] * GEMM_TC_KP + xc4[u] * 4);
            d[0] = make_double2(xv[u].x, xv[u].y);
            d[1] = make_double2(xv[u].z, xv[u].w);
        }
        if (wload) {
            double2* d = reinterpret_cast<double2*>(ws + wr * GEMM_TC_KP + wc);
#pragma unroll
            for (int i = 0; i < 4; i++) d[i] = make_double2(wf[2 * i], wf[2 * i + 1]);
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
    load(0);
    for (int kt = 0; kt < ktiles; kt++) {
        store();
        __syncthreads();
        if (kt + 1 < ktiles) load((kt + 1) * GEMM_BK);
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
