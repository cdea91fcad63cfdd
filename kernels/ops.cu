// Primitive kernels of the Drama 3 CUDA backend. Each has a Go reference in
// engine/cpu (named beside it) and a device test in engine/cuda that compares
// the two on random inputs.
//
// Conventions: activations are float32, weights BF16 or block-FP8 (E4M3 with
// one float32 scale per 128×128 block), every kernel is extern "C" so the Go
// side finds it by name, and all pointers are device pointers.

#include <stdint.h>

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

// Programmatic dependent launch (sm_90): a kernel lets the next one in the
// stream start as soon as all its blocks run (launch_dependents), and waits
// for the previous one to finish, its writes visible, before reading anything
// that one may have written (wait). Every kernel here calls pdl_entry before
// touching anything a kernel may have written (a GEMV reads expert ids the
// host copied before it, see ids_ready), so the host may launch any of them
// with the PDL launch attribute. On earlier architectures both are no-ops.
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
    pdl_launch_dependents();
    pdl_wait();
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
    pdl_entry();
    const float4* xv = reinterpret_cast<const float4*>(x);
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = 0.f;
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

// ids_ready: the ids were written by the host (a copy, not a kernel), so the
// kernel may read them before the PDL wait; otherwise it waits first. (The
// weights' loads still follow the wait: loading or prefetching them before it
// measured slower, docs/PERF.md.)
#define GEMV_BF16_X(NAME, TPR, ROWS, UNROLL)                                                      \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x,              \
        const int32_t* __restrict__ ids, long long mstride, int xstride, int rows, int cols,             \
        int ids_ready) {                                                                               \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_entry();                                                            \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<BF16Weights, TPR, ROWS, UNROLL>(y + (size_t)e * rows,                            \
                                                        reinterpret_cast<const uint8_t*>(W + m * mstride), \
                                                        nullptr, x + (size_t)e * xstride, rows, cols);  \
    }
#define GEMV_FP8_X(NAME, TPR, ROWS, UNROLL)                                                       \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2) NAME(                                 \
        float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,               \
        const float* __restrict__ x, const int32_t* __restrict__ ids, long long mstride,                 \
        long long sstride, int xstride, int rows, int cols, int ids_ready) {                            \
        const int e = blockIdx.y;                                                                      \
        if (ids && !ids_ready) pdl_entry();                                                            \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_body<FP8Weights, TPR, ROWS, UNROLL>(y + (size_t)e * rows, W + m * mstride,            \
                                                       S + m * sstride, x + (size_t)e * xstride, rows,  \
                                                       cols);                                          \
    }
#define GEMV_BF16(TPR, ROWS, UNROLL) GEMV_BF16_X(gemv_bf16_t##TPR##r##ROWS##u##UNROLL, TPR, ROWS, UNROLL)
#define GEMV_FP8(TPR, ROWS, UNROLL) GEMV_FP8_X(gemv_fp8_t##TPR##r##ROWS##u##UNROLL, TPR, ROWS, UNROLL)

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

// An empty kernel: the bandwidth test times it to measure the launch floor.
extern "C" __global__ void launch_floor() {}
