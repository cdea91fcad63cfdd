// A prefill's routed experts as multi-row gathered GEMVs over the (row,
// expert) pairs sorted by expert (moe_group in moe.cu): each expert's weights
// are read once per group of up to T of its pairs instead of once per pair.
#include "common.cuh"

// ---------------------------------------------------------------------------
// y[s, r] = Σ_c W_e[r, c] · x_s[c] for every sorted pair s of expert e
// (offsets[e] ≤ s < offsets[e+1]); x_s is x + rowids[s]·xstride (rowids null:
// x + s·xstride). Grid: (row blocks of the [rows, cols] matrix, E experts);
// a block of experts without pairs exits at once. Each warp owns ROWS
// consecutive rows of W_e, lane j reading the 16-byte chunks j, j+32, … (as
// gemv_body in gemv.cu: all loads of an UNROLL step issued before the first
// multiply), decodes each chunk once and dots it with the x rows of up to T
// pairs; more pairs take further passes over the same (L2-resident) rows.
// The policy P (numerics.cuh) picks the sums: Exact follows rule 1 of the
// numerics contract as gemv_body's double instances do (docs/MODEL.md;
// cpu.Dot: the CPU's float32 weights, exact float64 products, float64 sums,
// one rounding at the store); Fast multiplies and adds in float32 (fused
// multiply-adds), as the float32 GEMVs do.
#define MOE_ROWS_THREADS 256

// Weight formats: elements per 16-byte chunk and a chunk decoded to the
// CPU's float32 weights (FP8: E4M3 value × block scale, one float32 multiply).
struct BF16Rows {
    static constexpr int PER = 8;
    __device__ static void decode(uint4 w, float, float* f) { bf16x8_to_float(w, f); }
};
struct FP8Rows {
    static constexpr int PER = 16;
    __device__ static void decode(uint4 w, float scale, float* f) { fp8x16_scaled(w, scale, f); }
};

// The dot product of PER decoded weights with x[c·PER, (c+1)·PER) (xv:
// float4s of x) in the policy's sum: Exact dot_f64 (common.cuh), Fast
// float32 fused multiply-adds.
template <class P, int PER>
__device__ __forceinline__ typename P::Sum rows_dot(const float* f, const float4* __restrict__ xv, int c) {
    float xf[PER];
#pragma unroll
    for (int i = 0; i < PER / 4; i++) {
        const float4 x = __ldg(xv + (PER / 4) * c + i);
        xf[4 * i] = x.x, xf[4 * i + 1] = x.y, xf[4 * i + 2] = x.z, xf[4 * i + 3] = x.w;
    }
    if (P::exact) {
        double xd[PER];
        widen_x<PER>(xf, xd);
        return dot_f64<PER>(f, xd);
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < PER; i++) s = fmaf(f[i], xf[i], s);
    return s;
}

// S is null for BF16; for FP8 the float32 block scales [ceil(rows/128),
// ceil(cols/128)] of W_e.
template <class P, class WT, int ROWS, int UNROLL, int T>
__device__ __forceinline__ void moe_rows_body(float* __restrict__ y, const uint8_t* __restrict__ W,
                                              const float* __restrict__ S, const float* __restrict__ x,
                                              const int32_t* __restrict__ offsets,
                                              const int32_t* __restrict__ rowids, int xstride, int rows, int cols) {
    const int warp = threadIdx.x >> 5, j = threadIdx.x & 31;
    const int row0 = (blockIdx.x * (MOE_ROWS_THREADS / 32) + warp) * ROWS;
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
    pdl_entry();  // offsets and rowids come from moe_group, x from the kernel before
    const int begin = offsets[blockIdx.y], end = offsets[blockIdx.y + 1];
    for (int s0 = begin; s0 < end; s0 += T) {
        const int nr = min(T, end - s0);
        const float4* xv[T];
#pragma unroll
        for (int t = 0; t < T; t++) {
            const int s = s0 + min(t, nr - 1);
            xv[t] = reinterpret_cast<const float4*>(x + (size_t)(rowids ? rowids[s] : s) * xstride);
        }
        typedef typename P::Sum Sum;
        Sum acc[ROWS][T];
#pragma unroll
        for (int r = 0; r < ROWS; r++)
#pragma unroll
            for (int t = 0; t < T; t++) acc[r][t] = 0;
        for (int base = j; base < chunks; base += 32 * UNROLL) {
            uint4 w[UNROLL][ROWS];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const int cc = min(base + u * 32, chunks - 1);  // past the end: reread, counted as zero
#pragma unroll
                for (int r = 0; r < ROWS; r++) w[u][r] = load_stream(wr[r] + cc);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const int c = base + u * 32, cc = min(c, chunks - 1);
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    float f[WT::PER];
                    WT::decode(w[u][r], S ? __ldg(sr[r] + ((cc * WT::PER) >> 7)) : 1.f, f);
#pragma unroll
                    for (int t = 0; t < T; t++) {
                        if (t < nr) {  // nr is the same for the whole block
                            const Sum s = rows_dot<P, WT::PER>(f, xv[t], cc);
                            acc[r][t] += c < chunks ? s : (Sum)0;
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++)
#pragma unroll
            for (int t = 0; t < T; t++) {
                const Sum v = warp_sum(acc[r][t]);  // every lane holds the sum
                if (j == ((r * T + t) & 31) && t < nr && row0 + r < rows)
                    y[(size_t)(s0 + t) * rows + row0 + r] = (float)v;
            }
    }
}

// moe_rows_{bf16,fp8}_g{T}r{ROWS}u{UNROLL} (Exact) and
// moe_rows_{bf16,fp8}f_g{T}r{ROWS}u{UNROLL} (Fast; named by format, as the
// GEMVs are): W holds the E experts' matrices mstride elements apart (FP8:
// their scales sstride floats apart in S).
#define MOE_ROWS_BF16_P(NAME)                                                                         \
    extern "C" __global__ void __launch_bounds__(MOE_ROWS_THREADS, 2) NAME(                              \
        float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x,                   \
        const int32_t* __restrict__ offsets, const int32_t* __restrict__ rowids, long long mstride,          \
        int xstride, int rows, int cols)
#define MOE_ROWS_BF16(T, ROWS, UNROLL)                                                                   \
    MOE_ROWS_BF16_P(moe_rows_bf16_g##T##r##ROWS##u##UNROLL) {                                      \
        moe_rows_body<Exact, BF16Rows, ROWS, UNROLL, T>(y, reinterpret_cast<const uint8_t*>(W + blockIdx.y * mstride), \
                                                        nullptr, x, offsets, rowids, xstride, rows, cols);  \
    }                                                                                                    \
    MOE_ROWS_BF16_P(moe_rows_bf16f_g##T##r##ROWS##u##UNROLL) {                                      \
        moe_rows_body<Fast, BF16Rows, ROWS, UNROLL, T>(y, reinterpret_cast<const uint8_t*>(W + blockIdx.y * mstride), \
                                                       nullptr, x, offsets, rowids, xstride, rows, cols);   \
    }
#define MOE_ROWS_FP8_P(NAME)                                                                             \
    extern "C" __global__ void __launch_bounds__(MOE_ROWS_THREADS, 2) NAME(                              \
        float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,                    \
        const float* __restrict__ x, const int32_t* __restrict__ offsets, const int32_t* __restrict__ rowids, \
        long long mstride, long long sstride, int xstride, int rows, int cols)
#define MOE_ROWS_FP8(T, ROWS, UNROLL)                                                                    \
    MOE_ROWS_FP8_P(moe_rows_fp8_g##T##r##ROWS##u##UNROLL) {                                               \
        moe_rows_body<Exact, FP8Rows, ROWS, UNROLL, T>(y, W + blockIdx.y * mstride, S + blockIdx.y * sstride, x, \
                                                       offsets, rowids, xstride, rows, cols);               \
    }                                                                                                    \
    MOE_ROWS_FP8_P(moe_rows_fp8f_g##T##r##ROWS##u##UNROLL) {                                              \
        moe_rows_body<Fast, FP8Rows, ROWS, UNROLL, T>(y, W + blockIdx.y * mstride, S + blockIdx.y * sstride, x, \
                                                      offsets, rowids, xstride, rows, cols);                \
    }

// Instances (engine/cuda MoERowsVariant picks): T pairs per pass; narrow FP8
// rows (≤ 512 columns: one chunk per lane) take more rows per warp instead
// of an unroll.
MOE_ROWS_BF16(4, 2, 2)
MOE_ROWS_BF16(8, 2, 1)
MOE_ROWS_FP8(4, 4, 2)
MOE_ROWS_FP8(4, 8, 1)
MOE_ROWS_FP8(8, 4, 2)
MOE_ROWS_FP8(8, 4, 1)
