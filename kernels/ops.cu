// Primitive kernels of the Drama 3 CUDA backend. Each has a Go reference in
// engine/cpu (named beside it) and a device test in engine/cuda that compares
// the two on random inputs.
//
// Conventions: activations are float32, weights BF16 or block-FP8 (E4M3 with
// one float32 scale per 128×128 block), every kernel is extern "C" so the Go
// side finds it by name, and all pointers are device pointers.

#include <stdint.h>
#include <cuda_fp16.h>

#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float bf16_lo(uint32_t v) { return __int_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t v) { return __int_as_float(v & 0xffff0000u); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// block_sum returns the sum of v over the block to every thread; blockDim.x
// is a multiple of 32 and at most 1024. red holds 32 floats of shared memory.
__device__ float block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();  // red may still be read by a previous call
    if (lane == 0) red[warp] = v;
    __syncthreads();
    const int nwarps = blockDim.x >> 5;
    v = lane < nwarps ? red[lane] : 0.f;
    return warp_sum(v);
}

// Programmatic dependent launch (sm_90): a kernel waits for the previous one
// in the stream to finish, its writes visible, before reading anything that
// one may have written (wait), and then lets the next one start as soon as all
// its blocks got there (launch_dependents). Every kernel here calls pdl_entry
// (or wait, then launch_dependents) before touching its inputs, so the host may
// launch any of them with the PDL launch attribute. Because each kernel
// signals only after its own wait, a kernel that starts early runs while its
// predecessor runs, but after the one before that has finished: before its
// own wait it may read data written by the host or by launches two or more
// places earlier (the GEMVs load their first weights, and ids so marked,
// there). On earlier architectures both are no-ops.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_entry() {
    pdl_wait();
    pdl_launch_dependents();
}

// ---------------------------------------------------------------------------
// Embedding gather (GatherRows over a BF16 table): out[i, :] = table[ids[i], :].
// Grid: (n). An id outside [0, vocab) writes NaN so the fault cannot pass
// silently (the host checks ids it uploads).
extern "C" __global__ void embed_gather_bf16(float* __restrict__ out, const uint16_t* __restrict__ table,
                                             const int32_t* __restrict__ ids, int vocab, int width) {
    pdl_entry();
    const int i = blockIdx.x;
    const int id = ids[i];
    float* o = out + (size_t)i * width;
    if (id < 0 || id >= vocab) {
        for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = __int_as_float(0x7fc00000);
        return;
    }
    const uint16_t* row = table + (size_t)id * width;
    for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = __int_as_float((uint32_t)row[c] << 16);
}

// ---------------------------------------------------------------------------
// Zero-centred RMSNorm (RMSNormZeroCentred): y = x / sqrt(mean(x²) + eps) · (1 + w)
// for each of n rows of width elements. Grid: (n); the sum of squares is
// accumulated in float32 per thread, then across the block.
extern "C" __global__ void rmsnorm_zc_f32(float* __restrict__ out, const float* __restrict__ x,
                                          const float* __restrict__ w, int width, float eps) {
    pdl_entry();
    __shared__ float red[32];
    const float* xr = x + (size_t)blockIdx.x * width;
    float* o = out + (size_t)blockIdx.x * width;
    float ss = 0.f;
    for (int c = threadIdx.x; c < width; c += blockDim.x) ss += xr[c] * xr[c];
    ss = block_sum(ss, red);
    const float inv = rsqrtf(ss / (float)width + eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = xr[c] * inv * (1.f + w[c]);
}

// ---------------------------------------------------------------------------
// SwiGLU (SwiGLU): out[i] = silu(gate[i]) · up[i]; out may alias gate or up.
extern "C" __global__ void swiglu_f32(float* out, const float* gate, const float* up, int n) {
    pdl_entry();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float g = gate[i];
        out[i] = g / (1.f + expf(-g)) * up[i];
    }
}

// Residual add (Add): dst[i] += x[i].
extern "C" __global__ void add_f32(float* dst, const float* x, int n) {
    pdl_entry();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[i] += x[i];
}

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

// Weight loads: read once, so they skip L1, and ask L2 to fetch 256-byte
// blocks (the rows are streamed contiguously).
__device__ __forceinline__ uint4 load_stream(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// FP8 E4M3 → float. The integer path, for any architecture: with an E4M3
// byte in bits 24..31 of t (lower bits ignored), an arithmetic shift by 4 and
// a mask leave the sign in bit 31 and the exponent and mantissa in bits
// 20..26: a float equal to the value times 2^-120 (a float subnormal when the
// E4M3 one is), exact; the product restores the scale.
__device__ __forceinline__ float fp8_top_byte_to_float(uint32_t t) {
    return __int_as_float(((int32_t)t >> 4) & 0x87f00000) * 0x1p120f;
}

// Two E4M3 bytes → two floats: on sm_90 one cvt to two halves, then exact
// widening; before that the integer path. Exact for every finite E4M3 value,
// subnormals included (no -ftz).
__device__ __forceinline__ float2 fp8x2_to_float2(uint16_t v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t h;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(v));
    float2 f;
    asm("{ .reg .f16 lo, hi;\n\t mov.b32 {lo, hi}, %2;\n\t cvt.f32.f16 %0, lo;\n\t cvt.f32.f16 %1, hi; }"
        : "=f"(f.x), "=f"(f.y) : "r"(h));
    return f;
#else
    return make_float2(fp8_top_byte_to_float((uint32_t)v << 24), fp8_top_byte_to_float((uint32_t)v << 16));
#endif
}

__device__ __forceinline__ float fp8_dot4(uint32_t w, float4 xv, float s) {
    const float2 a = fp8x2_to_float2((uint16_t)(w & 0xffffu));
    const float2 b = fp8x2_to_float2((uint16_t)(w >> 16));
    s = fmaf(a.x, xv.x, s);
    s = fmaf(a.y, xv.y, s);
    s = fmaf(b.x, xv.z, s);
    return fmaf(b.y, xv.w, s);
}

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
};
struct FP8Weights {
    static constexpr int PER = 16;
    __device__ static float dot(uint4 w, const float4* __restrict__ xv, int c) {
        float s = fp8_dot4(w.x, __ldg(xv + 4 * c), 0.f);
        s = fp8_dot4(w.y, __ldg(xv + 4 * c + 1), s);
        s = fp8_dot4(w.z, __ldg(xv + 4 * c + 2), s);
        return fp8_dot4(w.w, __ldg(xv + 4 * c + 3), s);
    }
};

// S is null for BF16; for FP8 it holds the float32 block scales
// [ceil(rows/128), ceil(cols/128)]: w[r][c] = fp8 · S[r/128][c/128]. A chunk
// (16 columns) lies in one scale block, so its products are scaled once.
template <class WT, int TPR, int ROWS, int UNROLL>
__device__ __forceinline__ void gemv_body(float* __restrict__ y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const float* __restrict__ x, int rows,
                                          int cols) {
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
    const float4* xv = reinterpret_cast<const float4*>(x);
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = 0.f;
    // The first step's weights are loaded BEFORE the wait for the previous
    // kernel (they never depend on it): under PDL a block that starts in the
    // previous kernel's tail streams while that kernel finishes.
    uint4 w[UNROLL][ROWS];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        const int cc = min(j + u * TPR, chunks - 1);  // past the end: reread, counted as zero
#pragma unroll
        for (int r = 0; r < ROWS; r++) w[u][r] = load_stream(wr[r] + cc);
    }
    pdl_wait();  // x (and y) may belong to the previous kernel
    pdl_launch_dependents();
    for (int base = j; base < chunks; base += TPR * UNROLL) {
        if (base != j) {
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const int cc = min(base + u * TPR, chunks - 1);
#pragma unroll
                for (int r = 0; r < ROWS; r++) w[u][r] = load_stream(wr[r] + cc);
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + u * TPR, cc = min(c, chunks - 1);
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                float s = WT::dot(w[u][r], xv, cc);
                if (S) s *= __ldg(sr[r] + ((cc * WT::PER) >> 7));
                acc[r] += c < chunks ? s : 0.f;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = warp_sum(acc[r]);
    if (WARPS_PER_GROUP > 1) {
        __shared__ float part[GEMV_THREADS / 32][ROWS];
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
        if (lane == 0) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) part[warp][r] = acc[r];
        }
        __syncthreads();
        if (j == 0) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                float s = 0.f;
#pragma unroll
                for (int k = 0; k < WARPS_PER_GROUP; k++) s += part[group * WARPS_PER_GROUP + k][r];
                acc[r] = s;
            }
        }
    }
    if (j == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            if (row0 + r < rows) y[row0 + r] = acc[r];
    }
}

// ids_ready: the ids were written by the host or by a launch at least two
// places earlier (see pdl_wait), so the weights they select may be loaded
// before the wait; otherwise the kernel waits before reading them. With
// a single matrix (ids null) the weights are always loaded before the wait.
#define GEMV_BF16(TPR, ROWS, UNROLL)                                                                    \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) gemv_bf16_t##TPR##r##ROWS##u##UNROLL(    \
        float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x,              \
        const int32_t* __restrict__ ids, long long mstride, int xstride, int rows, int cols,             \
        int ids_ready) {                                                                               \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_wait();                                                             \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<BF16Weights, TPR, ROWS, UNROLL>(y + (size_t)e * rows,                                  \
                                                  reinterpret_cast<const uint8_t*>(W + m * mstride),     \
                                                  nullptr, x + (size_t)e * xstride, rows, cols);        \
    }
#define GEMV_FP8(TPR, ROWS, UNROLL)                                                                     \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) gemv_fp8_t##TPR##r##ROWS##u##UNROLL(     \
        float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,               \
        const float* __restrict__ x, const int32_t* __restrict__ ids, long long mstride,                 \
        long long sstride, int xstride, int rows, int cols, int ids_ready) {                            \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_wait();                                                             \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<FP8Weights, TPR, ROWS, UNROLL>(y + (size_t)e * rows, W + m * mstride, S + m * sstride, \
                                                 x + (size_t)e * xstride, rows, cols);                  \
    }

// Instances gemv_{bf16,fp8}_t{TPR}r{ROWS}u{UNROLL}; the bandwidth test
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
// Block-FP8 GEMV on the tensor cores: y = W·x with E4M3 W decoded to f16
// (exact, one cvt per two weights) straight into the B operand of
// mma.m16n8k16 (f16 in, float32 accumulation), and x split into two f16
// halves x = hi + lo (hi = f16(x), lo = f16(x − hi): 22 significant bits) as
// the A operand's rows 0 and 1, so y = D[0] + D[1] to float32 accuracy.
// Against the float32 FMA path above this removes the per-weight widening and
// FMA (about 40 instructions per 16 bytes → 15). x must stay below 65504 in
// magnitude (f16); the host uses this kernel only where cols ≤ GEMV_MMA_MAXC.
//
// A warp computes an 8-row tile (the 8 columns n of the MMA), lane (g, t)
// = (lane/4, lane%4) loading the 16-byte chunk 4·grp + t of row g for its
// chunk groups grp (64 columns each, inside one 128-column scale block, so
// one scale per group and tile); the k order inside an MMA is a permutation
// shared by A and B, which the sum ignores. TPR threads (TPR/32 warps) split
// one tile's chunk groups; their partial sums meet in shared memory. The
// first U loads per lane are issued before the PDL wait; x is converted into
// shared memory after it.
#define GEMV_MMA_MAXC 4096

__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint32_t v16) {
    uint32_t h;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"((uint16_t)v16));
#else
    // Exact integer path (as fp8_top_byte_to_float) for older devices.
    const float lo = fp8_top_byte_to_float(v16 << 24), hi = fp8_top_byte_to_float(v16 << 16);
    const __half2 p = __floats2half2_rn(lo, hi);
    h = *reinterpret_cast<const uint32_t*>(&p);
#endif
    return h;
}

__device__ __forceinline__ void mma_f16_16816(float& d0, float& d1, float& d2, float& d3, uint32_t a0, uint32_t a2,
                                              uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
#endif
}

template <int TPR, int U>
__device__ __forceinline__ void gemv_fp8_mma_body(float* __restrict__ y, const uint8_t* __restrict__ W,
                                                  const float* __restrict__ S, const float* __restrict__ x,
                                                  int rows, int cols) {
    constexpr int WPT = TPR / 32, TILES = GEMV_THREADS / TPR;
    __shared__ __align__(16) __half xh[GEMV_MMA_MAXC];
    __shared__ __align__(16) __half xl[GEMV_MMA_MAXC];
    __shared__ float part[GEMV_THREADS / 32][8];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tile = warp / WPT, wt = warp % WPT;
    const int g = lane >> 2, t = lane & 3;
    const int row0 = (blockIdx.x * TILES + tile) * 8;
    const int K = cols / 16, groups = (K + 3) / 4;
    const int scols = (cols + 127) >> 7;
    const uint4* wr = reinterpret_cast<const uint4*>(W + (size_t)min(row0 + g, rows - 1) * cols);
    const float* sr = S + (size_t)(min(row0, rows - 1) >> 7) * scols;
    const int iters = (groups + WPT * U - 1) / (WPT * U);

    uint4 w[U];
    float sc[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int grp = min(wt + WPT * u, groups - 1);
        w[u] = load_stream(wr + min(4 * grp + t, K - 1));
        sc[u] = __ldg(sr + (grp >> 1));
    }
    pdl_wait();  // x (and y) may belong to the previous kernel
    pdl_launch_dependents();
    for (int i = threadIdx.x; i < groups * 64; i += GEMV_THREADS) {
        const float v = i < cols ? x[i] : 0.f;
        const __half h = __float2half_rn(v);
        xh[i] = h;
        xl[i] = __float2half_rn(v - __half2float(h));
    }
    __syncthreads();
    const __half* xs = g == 0 ? xh : xl;
    float acc0 = 0.f, acc1 = 0.f;
    for (int it = 0; it < iters; it++) {
        if (it > 0) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int grp = min(wt + WPT * (U * it + u), groups - 1);
                w[u] = load_stream(wr + min(4 * grp + t, K - 1));
                sc[u] = __ldg(sr + (grp >> 1));
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int grp = wt + WPT * (U * it + u);
            if (grp >= groups) break;  // warp-uniform
            const int c = 4 * grp + t;
            uint4 xa0 = make_uint4(0, 0, 0, 0), xa1 = xa0;
            if (g < 2) {
                xa0 = *reinterpret_cast<const uint4*>(xs + 16 * c);
                xa1 = *reinterpret_cast<const uint4*>(xs + 16 * c + 8);
            }
            const uint4 wv = c < K ? w[u] : make_uint4(0, 0, 0, 0);
            float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
            mma_f16_16816(d0, d1, d2, d3, xa0.x, xa0.y, e4m3x2_to_f16x2(wv.x), e4m3x2_to_f16x2(wv.x >> 16));
            mma_f16_16816(d0, d1, d2, d3, xa0.z, xa0.w, e4m3x2_to_f16x2(wv.y), e4m3x2_to_f16x2(wv.y >> 16));
            mma_f16_16816(d0, d1, d2, d3, xa1.x, xa1.y, e4m3x2_to_f16x2(wv.z), e4m3x2_to_f16x2(wv.z >> 16));
            mma_f16_16816(d0, d1, d2, d3, xa1.z, xa1.w, e4m3x2_to_f16x2(wv.w), e4m3x2_to_f16x2(wv.w >> 16));
            acc0 = fmaf(sc[u], d0, acc0);
            acc1 = fmaf(sc[u], d1, acc1);
        }
    }
    // Lanes 0-3 hold rows 2t, 2t+1 of x's hi part, lanes 4-7 of its lo part.
    acc0 += __shfl_down_sync(FULL_MASK, acc0, 4);
    acc1 += __shfl_down_sync(FULL_MASK, acc1, 4);
    if (WPT == 1) {
        if (lane < 4) {
            if (row0 + 2 * t < rows) y[row0 + 2 * t] = acc0;
            if (row0 + 2 * t + 1 < rows) y[row0 + 2 * t + 1] = acc1;
        }
        return;
    }
    if (lane < 4) {
        part[warp][2 * t] = acc0;
        part[warp][2 * t + 1] = acc1;
    }
    __syncthreads();
    if (wt == 0 && lane < 8 && row0 + lane < rows) {
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < WPT; k++) s += part[tile * WPT + k][lane];
        y[row0 + lane] = s;
    }
}

#define GEMV_MMA_FP8(TPR, U)                                                                            \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS) gemv_fp8_m##TPR##u##U(                     \
        float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,               \
        const float* __restrict__ x, const int32_t* __restrict__ ids, long long mstride,                 \
        long long sstride, int xstride, int rows, int cols, int ids_ready) {                            \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_wait();                                                             \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_fp8_mma_body<TPR, U>(y + (size_t)e * rows, W + m * mstride, S + m * sstride,                \
                                  x + (size_t)e * xstride, rows, cols);                                \
    }

// Instances gemv_fp8_m{TPR}u{U}: TPR threads per 8-row tile, U chunk groups
// per warp in flight.
GEMV_MMA_FP8(256, 4)
GEMV_MMA_FP8(256, 2)
GEMV_MMA_FP8(256, 1)
GEMV_MMA_FP8(128, 2)
GEMV_MMA_FP8(128, 1)
GEMV_MMA_FP8(64, 1)
GEMV_MMA_FP8(32, 1)

// An empty kernel: the bandwidth test times it to measure the launch floor.
extern "C" __global__ void launch_floor() {}
