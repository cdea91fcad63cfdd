// Prompt-row projections on tensor cores (GEMM): Y[n, rows] = X[n, cols] · W[rows, cols]ᵀ
// with W BF16 or block-FP8 and X, Y float32. Reference: engine/cpu.MatMulRows.
#include "common.cuh"

// Precision. The backbone must match the float32 reference within 1e-4, and
// one BF16 rounding of the activations costs ~4e-3. So every activation x
// enters as three BF16 values, hi = bf16(x), mid = bf16(x − hi) and
// lo = bf16(x − hi − mid), all through the same MMA into one float32
// accumulator (smallest first): x keeps ~24 significant bits, as float32
// does (two parts, ~16 bits, missed 1e-4 on the odd-geometry backbone:
// docs/PERF.md, "GPU backbone"), the weights are
// exact (BF16 as stored; E4M3 is exact in BF16), the products and sums are
// float32 on the tensor cores. Three times the MMAs, still below the time the
// weights take to stream.
//
// Tiling: a block of GEMM_THREADS (4 warps, 2×2) computes GEMM_BM rows of X
// by GEMM_BN rows of W, GEMM_BK columns at a time; each warp a 32×32 tile as
// 2×4 mma.sync m16n8k16 (BF16 in, float32 accumulate). W tiles are copied
// with cp.async into a ring of STAGES (WT::STAGES − 1 copies in flight: with
// few rows of X the kernel streams W and must keep enough bytes in flight to
// cover the memory latency); the X tile is loaded into registers one step
// ahead, split into hi, mid and lo, and stored as BF16. Rows of shared memory are
// padded by 16 bytes so the fragment loads of a warp hit 32 banks.
//
// Grid: blockIdx.x is the GEMM_BM-row tile of X, blockIdx.y the GEMM_BN-row
// tile of W (so blocks that read the same W tile run together and share it in
// L2), blockIdx.z the group. Grouped form (experts): group e's rows are
// offsets[e] ≤ i < offsets[e+1] of Y (sorted by group) and its matrix is
// ids[e] (or e); tiles past the group's end exit at once. Row i reads X row
// rowids[i] (or i).
//
// FP8: the scale of a 128×128 block is uniform over a block's tile (GEMM_BN
// and GEMM_BK divide 128 and tiles are aligned), so it multiplies the X tile
// before the split: Σ_c (q·s)·x = Σ_c q·(s·x).
#define GEMM_THREADS 128
#define GEMM_BM 64
#define GEMM_BN 64
#define GEMM_BK 32
#define GEMM_APAD (GEMM_BK + 8)  // BF16 elements per shared row of X and of BF16 W

__device__ __forceinline__ uint32_t bf16_round_bits(float x) {
    const uint32_t u = __float_as_uint(x);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // round to nearest even (finite x)
}

// Three BF16 parts per activation (hi, mid, lo: 24 bits, as float32 holds).
__device__ __forceinline__ void split3(float a, float b, uint32_t& hi, uint32_t& mid, uint32_t& lo) {
    const uint32_t ha = bf16_round_bits(a), hb = bf16_round_bits(b);
    const float ra = a - __uint_as_float(ha << 16), rb = b - __uint_as_float(hb << 16);
    const uint32_t ma = bf16_round_bits(ra), mb = bf16_round_bits(rb);
    const float sa = ra - __uint_as_float(ma << 16), sb = rb - __uint_as_float(mb << 16);
    hi = ha | (hb << 16);
    mid = ma | (mb << 16);
    lo = bf16_round_bits(sa) | (bf16_round_bits(sb) << 16);
}

__device__ __forceinline__ void mma_bf16(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// cp_async copies BYTES (4, 8 or 16) from global to shared memory, or zeros
// when !valid (src-size 0; src must still be a mapped address).
template <int BYTES>
__device__ __forceinline__ void cp_async(void* smem, const void* src, bool valid) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    const int n = valid ? BYTES : 0;
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(src), "r"(n));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(s), "l"(src), "n"(BYTES), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// Weight formats: how a W tile is staged and how a B fragment is read.
struct GemmBF16W {
    // bytes per element, per copy, per shared row; ring stages
    static constexpr int ELEM = 2, CHUNK = 16, ROWB = GEMM_APAD * 2, STAGES = 6;
    __device__ static uint32_t frag(const uint8_t* row, int k) {
        return *reinterpret_cast<const uint32_t*>(row + 2 * k);
    }
};
struct GemmFP8W {
    static constexpr int ELEM = 1, CHUNK = 8, ROWB = GEMM_BK + 16, STAGES = 8;
    __device__ static uint32_t frag(const uint8_t* row, int k) {
        const float2 f = fp8x2_to_float2(*reinterpret_cast<const uint16_t*>(row + k));
        return (__float_as_uint(f.x) >> 16) | (__float_as_uint(f.y) & 0xffff0000u);  // exact in BF16
    }
};

template <class WT>
__device__ __forceinline__ void gemm_body(float* __restrict__ Y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const float* __restrict__ X, int rows,
                                          int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,
                                          const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids,
                                          long long mstride, long long sstride, int n) {
    __shared__ __align__(16) uint16_t a_hi[GEMM_BM * GEMM_APAD];
    __shared__ __align__(16) uint16_t a_lo[GEMM_BM * GEMM_APAD];
    __shared__ __align__(16) uint16_t a_mid[GEMM_BM * GEMM_APAD];
    __shared__ __align__(16) uint8_t b_s[WT::STAGES][GEMM_BN * WT::ROWB];

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
    const float* srow = S ? S + mat * sstride + (size_t)(n0 >> 7) * ((cols + 127) >> 7) : nullptr;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 1, wn = warp & 1, g = lane >> 2, tq = lane & 3;

    // X tile loads: 64 rows × 8 float4; thread tid loads float4 f = tid + 128·u.
    const float* xrow[4];
    bool xok[4];
    int xc4[4], xr[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
        const int f = tid + GEMM_THREADS * u;
        xr[u] = f >> 3;
        xc4[u] = f & 7;
        const int m = m0 + xr[u];
        xok[u] = m < end;
        const int src = xok[u] ? (rowids ? rowids[m] : m) : 0;
        xrow[u] = X + (size_t)src * xstride;
    }
    // W tile copies: GEMM_BN rows × GEMM_BK·ELEM bytes in CHUNK-byte pieces.
    constexpr int CPR = GEMM_BK * WT::ELEM / WT::CHUNK;  // chunks per row
    constexpr int WCOPIES = GEMM_BN * CPR / GEMM_THREADS;
    const uint8_t* wrow[WCOPIES];
    bool wok[WCOPIES];
    int wdst[WCOPIES], wcol[WCOPIES];
#pragma unroll
    for (int u = 0; u < WCOPIES; u++) {
        const int f = tid + GEMM_THREADS * u, r = f / CPR, c = f % CPR;
        wok[u] = n0 + r < rows;
        wrow[u] = W + (size_t)min(n0 + r, rows - 1) * cols * WT::ELEM;
        wcol[u] = c * WT::CHUNK / WT::ELEM;  // element column within the tile
        wdst[u] = r * WT::ROWB + c * WT::CHUNK;
    }

    auto load_w = [&](int stage, int k0) {
#pragma unroll
        for (int u = 0; u < WCOPIES; u++) {
            const int k = k0 + wcol[u];
            const bool ok = wok[u] && k < cols;
            cp_async<WT::CHUNK>(&b_s[stage][wdst[u]], ok ? wrow[u] + (size_t)k * WT::ELEM : W, ok);
        }
        cp_async_commit();
    };
    float4 xv[4];
    auto load_x = [&](int k0) {
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int k = k0 + xc4[u] * 4;
            xv[u] = (xok[u] && k < cols) ? *reinterpret_cast<const float4*>(xrow[u] + k) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
    };
    auto store_x = [&](int k0) {
        const float s = srow ? __ldg(srow + (k0 >> 7)) : 1.f;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            uint2 hi, mid, lo;
            split3(xv[u].x * s, xv[u].y * s, hi.x, mid.x, lo.x);
            split3(xv[u].z * s, xv[u].w * s, hi.y, mid.y, lo.y);
            const int o = xr[u] * GEMM_APAD + xc4[u] * 4;
            *reinterpret_cast<uint2*>(&a_hi[o]) = hi;
            *reinterpret_cast<uint2*>(&a_mid[o]) = mid;
            *reinterpret_cast<uint2*>(&a_lo[o]) = lo;
        }
    };

    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[i][j][c] = 0.f;

    // Tile kt's copy is commit group kt (groups past the last tile are
    // empty), so waiting until STAGES − 2 groups are pending leaves tile
    // kt + 1 in shared memory.
    constexpr int ST = WT::STAGES;
    const int ktiles = (cols + GEMM_BK - 1) / GEMM_BK;
#pragma unroll
    for (int s = 0; s < ST - 1; s++) {
        if (s < ktiles) load_w(s, s * GEMM_BK);
        else cp_async_commit();
    }
    load_x(0);
    store_x(0);
    cp_async_wait<ST - 2>();
    __syncthreads();
    for (int kt = 0; kt < ktiles; kt++) {
        const bool more = kt + 1 < ktiles;
        // The stage refilled here was read at step kt − 1, before its closing barrier.
        if (kt + ST - 1 < ktiles) load_w((kt + ST - 1) % ST, (kt + ST - 1) * GEMM_BK);
        else cp_async_commit();
        if (more) load_x((kt + 1) * GEMM_BK);
        const uint8_t* bs = b_s[kt % ST];
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; kk += 16) {
            uint32_t ah[2][4], al[2][4], am[2][4];
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int r = wm * 32 + i * 16 + g;
                const int o0 = r * GEMM_APAD + kk + tq * 2, o1 = o0 + 8 * GEMM_APAD;
                ah[i][0] = *reinterpret_cast<const uint32_t*>(&a_hi[o0]);
                ah[i][1] = *reinterpret_cast<const uint32_t*>(&a_hi[o1]);
                ah[i][2] = *reinterpret_cast<const uint32_t*>(&a_hi[o0 + 8]);
                ah[i][3] = *reinterpret_cast<const uint32_t*>(&a_hi[o1 + 8]);
                al[i][0] = *reinterpret_cast<const uint32_t*>(&a_lo[o0]);
                al[i][1] = *reinterpret_cast<const uint32_t*>(&a_lo[o1]);
                al[i][2] = *reinterpret_cast<const uint32_t*>(&a_lo[o0 + 8]);
                al[i][3] = *reinterpret_cast<const uint32_t*>(&a_lo[o1 + 8]);
                am[i][0] = *reinterpret_cast<const uint32_t*>(&a_mid[o0]);
                am[i][1] = *reinterpret_cast<const uint32_t*>(&a_mid[o1]);
                am[i][2] = *reinterpret_cast<const uint32_t*>(&a_mid[o0 + 8]);
                am[i][3] = *reinterpret_cast<const uint32_t*>(&a_mid[o1 + 8]);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const uint8_t* brow = bs + (wn * 32 + j * 8 + g) * WT::ROWB;
                const uint32_t b0 = WT::frag(brow, kk + tq * 2), b1 = WT::frag(brow, kk + 8 + tq * 2);
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    mma_bf16(acc[i][j], al[i], b0, b1);
                    mma_bf16(acc[i][j], am[i], b0, b1);
                    mma_bf16(acc[i][j], ah[i], b0, b1);
                }
            }
        }
        __syncthreads();  // every warp is done with this step's tiles
        if (more) {
            store_x((kt + 1) * GEMM_BK);
            cp_async_wait<ST - 2>();
            __syncthreads();
        }
    }

#pragma unroll
    for (int i = 0; i < 2; i++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = m0 + wm * 32 + i * 16 + g + 8 * h;
            if (m >= end) continue;
            float* yrow = Y + (size_t)m * ystride;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int c = n0 + wn * 32 + j * 8 + tq * 2;
                if (c < rows) yrow[c] = acc[i][j][2 * h];
                if (c + 1 < rows) yrow[c + 1] = acc[i][j][2 * h + 1];
            }
        }
    }
}

// mstride is the elements of one matrix (rows·cols), sstride the scales of
// one matrix. offsets, ids and rowids may be null (see above).
extern "C" __global__ void __launch_bounds__(GEMM_THREADS) gemm_bf16(
    float* __restrict__ Y, const uint16_t* __restrict__ W, const float* __restrict__ X, long long mstride, int n,
    int rows, int cols, int xstride, int ystride, const int32_t* __restrict__ offsets,
    const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids) {
    gemm_body<GemmBF16W>(Y, reinterpret_cast<const uint8_t*>(W), nullptr, X, rows, cols, xstride, ystride, offsets, ids,
                         rowids, mstride, 0, n);
}

extern "C" __global__ void __launch_bounds__(GEMM_THREADS) gemm_fp8(
    float* __restrict__ Y, const uint8_t* __restrict__ W, const float* __restrict__ S, const float* __restrict__ X,
    long long mstride, long long sstride, int n, int rows, int cols, int xstride, int ystride,
    const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids, const int32_t* __restrict__ rowids) {
    gemm_body<GemmFP8W>(Y, W, S, X, rows, cols, xstride, ystride, offsets, ids, rowids, mstride, sstride, n);
}
