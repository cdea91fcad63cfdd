// Projections of nb ≤ 8 rows on the tensor cores (Fast only): the body that
// gemv.cu's gemvx_mma_bf16_fast (the B-row step's projections) and tower.cu's
// tower_gate_up_swiglu_mma_fast (the tower's B-row gate·up) share.
//
// y[b·ystride + r] = Σ_c W[r, c]·x[b·xstride + c] with mma.m16n8k16 (BF16 in,
// float32 accumulation), the weights as A (16 rows × 16 columns a tile) and
// the rows' x as B (N = 8: row b is column b; columns ≥ nb are zero). x is
// float32: each value is split into three BF16 terms (hi + mid + lo: 24
// significant bits, the float32 exactly up to the exponent's range), each
// term one MMA with the same A, so the products are the float32 products
// (exact in the float32 accumulator) and only the sums' order and rounding
// differ from the SIMT kernels' (the fast policy allows both). The columns a
// lane holds need not be consecutive (a sum takes any order): lane (g =
// lane/4, t = lane%4) reads 16 bytes (8 weights) of rows g and g+8 at column
// k0 + 8t of every 32-column step and the same 8 values of x row g, and the
// first 4 of them fill the fragment slots (2t, 2t+1, 2t+8, 2t+9) of one MMA,
// the last 4 of a second one. Block: 8 warps splitting the columns (warp w
// takes the steps w, w+8, …), GEMVX_MMA_TILES tiles of 16 rows; the warps'
// partial sums meet in shared memory. cols must be a multiple of 32. (One
// tile a block, for the tower's matrices of 1024–4097 rows, measured slower
// than the SIMT instances at every shape but two at 8 rows: docs/PERF.md
// "gate23".)
#pragma once

#include "gemv.cuh"

#define GEMVX_MMA_TILES 2
#define GEMVX_MMA_UNROLL 4

__device__ __forceinline__ uint32_t bf16x2_rn(float lo, float hi) {
    uint32_t d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}

// split3 writes the BF16 pairs of (a, b)'s three terms: hi, mid, lo.
__device__ __forceinline__ void split3(float a, float b, uint32_t (&t)[3]) {
    t[0] = bf16x2_rn(a, b);
    const float ra = a - bf16_lo(t[0]), rb = b - bf16_hi(t[0]);
    t[1] = bf16x2_rn(ra, rb);
    t[2] = bf16x2_rn(ra - bf16_lo(t[1]), rb - bf16_hi(t[1]));
}

__device__ __forceinline__ void mma_bf16_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                               uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

// GemvxMmaPart is a block's partial sums of T tiles: [warp][tile][tile
// row][x row].
template <int T>
using GemvxMmaPart = float[GEMV_THREADS / 32][T][16][8];

// gemvx_mma_sums leaves in part the block's T tiles' sums over
// every column, each warp's columns apart; tile i is the 16 rows
// row0 + TILE_STEP·i… of Wt[i] (rows past rows - 1 read row rows - 1: the
// caller drops them). It enters the PDL wait (pdl_entry; waited:
// pdl_entry_waited, as gemv.cuh's gemv_rows_x_entry) after its address
// arithmetic and ends with the block's barrier.
template <int T, int TILE_STEP>
__device__ __forceinline__ void gemvx_mma_sums(GemvxMmaPart<T>& part, const uint16_t* __restrict__ const (&Wt)[T],
                                               int row0, const float* __restrict__ x, int xstride, int nb,
                                               int rows, int cols, bool waited = false) {
    constexpr int U = GEMVX_MMA_UNROLL, WARPS = GEMV_THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int chunks = cols / 8;  // 16-byte chunks of a row
    const uint4* wr[T][2];
#pragma unroll
    for (int i = 0; i < T; i++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            wr[i][h] = reinterpret_cast<const uint4*>(Wt[i] + (size_t)min(row0 + TILE_STEP * i + g + 8 * h, rows - 1) * cols);
    const float4* xr = reinterpret_cast<const float4*>(x + (size_t)min(g, nb - 1) * xstride);
    const bool live = g < nb;
    float c[T][4];
#pragma unroll
    for (int i = 0; i < T; i++) c[i][0] = c[i][1] = c[i][2] = c[i][3] = 0.f;
    if (waited)
        pdl_entry_waited();
    else
        pdl_entry();
    const int steps = cols / 32;  // 32 columns: a chunk for each t
    for (int s0 = warp; s0 < steps; s0 += WARPS * U) {
        uint4 w[U][T][2];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int cc = min((s0 + u * WARPS) * 4 + t, chunks - 1);  // past the end: reread, x zero
#pragma unroll
            for (int i = 0; i < T; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) w[u][i][h] = load_stream(wr[i][h] + cc);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int s = s0 + u * WARPS, cc = min(s * 4 + t, chunks - 1);
            float4 x0 = make_float4(0.f, 0.f, 0.f, 0.f), x1 = x0;
            if (live && s < steps) {
                x0 = __ldg(xr + 2 * cc);
                x1 = __ldg(xr + 2 * cc + 1);
            }
            uint32_t b01[3], b23[3], b45[3], b67[3];
            split3(x0.x, x0.y, b01);
            split3(x0.z, x0.w, b23);
            split3(x1.x, x1.y, b45);
            split3(x1.z, x1.w, b67);
#pragma unroll
            for (int i = 0; i < T; i++) {
                const uint4 a = w[u][i][0], b = w[u][i][1];
#pragma unroll
                for (int k = 0; k < 3; k++) {
                    mma_bf16_16816(c[i], a.x, b.x, a.y, b.y, b01[k], b23[k]);
                    mma_bf16_16816(c[i], a.z, b.z, a.w, b.w, b45[k], b67[k]);
                }
            }
        }
    }
    // c[i]: (row g, columns 2t, 2t+1) and (row g+8, the same columns) of tile i.
#pragma unroll
    for (int i = 0; i < T; i++) {
        part[warp][i][g][2 * t] = c[i][0];
        part[warp][i][g][2 * t + 1] = c[i][1];
        part[warp][i][g + 8][2 * t] = c[i][2];
        part[warp][i][g + 8][2 * t + 1] = c[i][3];
    }
    __syncthreads();
}

// gemvx_mma_total is tile i's row r for x row b: the warps' parts summed in
// warp order.
template <int T>
__device__ __forceinline__ float gemvx_mma_total(const GemvxMmaPart<T>& part, int i, int r, int b) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < GEMV_THREADS / 32; w++) s += part[w][i][r][b];
    return s;
}
