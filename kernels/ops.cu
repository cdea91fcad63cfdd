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

// ---------------------------------------------------------------------------
// Embedding gather (GatherRows over a BF16 table): out[i, :] = table[ids[i], :].
// Grid: (n). An id outside [0, vocab) writes NaN so the fault cannot pass
// silently (the host checks ids it uploads).
extern "C" __global__ void embed_gather_bf16(float* __restrict__ out, const uint16_t* __restrict__ table,
                                             const int32_t* __restrict__ ids, int vocab, int width) {
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
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float g = gate[i];
        out[i] = g / (1.f + expf(-g)) * up[i];
    }
}

// Residual add (Add): dst[i] += x[i].
extern "C" __global__ void add_f32(float* dst, const float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[i] += x[i];
}

// ---------------------------------------------------------------------------
// One-row projections (MatVec): y[e, r] = Σ_c W_{ids[e]}[r, c] · x[e·xstride + c].
//
// blockIdx.y selects the e-th matrix of a gathered set (experts by id; ids may
// be null for a single matrix, then e = 0 and W is the matrix itself); matrices
// are [rows, cols] row-major, mstride elements apart. Each warp computes ROWS
// consecutive rows: lane l reads 16-byte chunks l, l+32, … of each row, so a
// warp's loads are 512 contiguous bytes, UNROLL chunks per row are in flight
// before the first multiply, x is read once per chunk for all ROWS rows, and
// the sums are reduced with shuffles. cols must be a multiple of the elements
// per chunk (8 BF16, 16 FP8) and the rows 16-byte aligned.
#define GEMV_WARPS 4

template <int ROWS, int UNROLL>
__device__ __forceinline__ void gemv_bf16_body(float* __restrict__ y, const uint16_t* __restrict__ W,
                                               const float* __restrict__ x, int rows, int cols) {
    const int lane = threadIdx.x & 31;
    const int row0 = (blockIdx.x * GEMV_WARPS + (threadIdx.x >> 5)) * ROWS;
    if (row0 >= rows) return;
    const int chunks = cols >> 3;  // 8 bf16 per 16-byte chunk
    const uint4* wr[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) wr[r] = reinterpret_cast<const uint4*>(W + (size_t)min(row0 + r, rows - 1) * cols);
    const float4* xv = reinterpret_cast<const float4*>(x);
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = 0.f;
    for (int base = lane; base < chunks; base += 32 * UNROLL) {
        uint4 w[UNROLL][ROWS];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + u * 32;
#pragma unroll
            for (int r = 0; r < ROWS; r++) w[u][r] = c < chunks ? __ldg(wr[r] + c) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + u * 32;
            if (c < chunks) {
                const float4 x0 = __ldg(xv + 2 * c), x1 = __ldg(xv + 2 * c + 1);
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    float s = acc[r];
                    s = fmaf(bf16_lo(w[u][r].x), x0.x, s);
                    s = fmaf(bf16_hi(w[u][r].x), x0.y, s);
                    s = fmaf(bf16_lo(w[u][r].y), x0.z, s);
                    s = fmaf(bf16_hi(w[u][r].y), x0.w, s);
                    s = fmaf(bf16_lo(w[u][r].z), x1.x, s);
                    s = fmaf(bf16_hi(w[u][r].z), x1.y, s);
                    s = fmaf(bf16_lo(w[u][r].w), x1.z, s);
                    s = fmaf(bf16_hi(w[u][r].w), x1.w, s);
                    acc[r] = s;
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const float s = warp_sum(acc[r]);
        if (lane == 0 && row0 + r < rows) y[row0 + r] = s;
    }
}

#define GEMV_BF16(NAME, ROWS, UNROLL)                                                                  \
    extern "C" __global__ void __launch_bounds__(32 * GEMV_WARPS)                                      \
        NAME(float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x,         \
             const int32_t* __restrict__ ids, long long mstride, int xstride, int rows, int cols) {     \
        const int e = blockIdx.y;                                                                     \
        const long long m = ids ? (long long)ids[e] : 0;                                              \
        gemv_bf16_body<ROWS, UNROLL>(y + (size_t)e * rows, W + m * mstride, x + (size_t)e * xstride,   \
                                     rows, cols);                                                     \
    }
GEMV_BF16(gemv_bf16_r1, 1, 4)
GEMV_BF16(gemv_bf16_r2, 2, 4)
GEMV_BF16(gemv_bf16_r4, 4, 2)

// FP8 E4M3 → float, in registers. On sm_90 and later one cvt turns two bytes
// into two halves; before that the sign, exponent and mantissa bits are moved
// into a float (exponent bias 127 instead of 7) and scaled by 2^120. Both are
// exact for every finite E4M3 value, subnormals included (no -ftz).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ float2 fp8x2_to_float2(uint16_t v) {
    uint32_t h;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(v));
    float2 f;
    asm("{ .reg .f16 lo, hi;\n\t mov.b32 {lo, hi}, %2;\n\t cvt.f32.f16 %0, lo;\n\t cvt.f32.f16 %1, hi; }"
        : "=f"(f.x), "=f"(f.y) : "r"(h));
    return f;
}
#else
__device__ __forceinline__ float fp8_to_float(uint32_t b) {
    return __int_as_float(((b & 0x7fu) << 20) | ((b & 0x80u) << 24)) * 0x1p120f;
}
__device__ __forceinline__ float2 fp8x2_to_float2(uint16_t v) {
    return make_float2(fp8_to_float(v & 0xffu), fp8_to_float(v >> 8));
}
#endif

__device__ __forceinline__ float fp8_dot4(uint32_t w, float4 xv, float s) {
    const float2 a = fp8x2_to_float2((uint16_t)(w & 0xffffu));
    const float2 b = fp8x2_to_float2((uint16_t)(w >> 16));
    s = fmaf(a.x, xv.x, s);
    s = fmaf(a.y, xv.y, s);
    s = fmaf(b.x, xv.z, s);
    return fmaf(b.y, xv.w, s);
}

// Block-FP8 projection: W is E4M3 [rows, cols], S its float32 scales
// [ceil(rows/128), ceil(cols/128)] (sstride floats apart between matrices);
// w[r][c] = fp8 · S[r/128][c/128]. A 16-byte chunk (16 columns) lies in one
// scale block, so each chunk's 16 products are summed first and scaled once.
template <int ROWS, int UNROLL>
__device__ __forceinline__ void gemv_fp8_body(float* __restrict__ y, const uint8_t* __restrict__ W,
                                              const float* __restrict__ S, const float* __restrict__ x,
                                              int rows, int cols) {
    const int lane = threadIdx.x & 31;
    const int row0 = (blockIdx.x * GEMV_WARPS + (threadIdx.x >> 5)) * ROWS;
    if (row0 >= rows) return;
    const int chunks = cols >> 4;  // 16 fp8 per 16-byte chunk
    const int scols = (cols + 127) >> 7;
    const uint4* wr[ROWS];
    const float* sr[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const int row = min(row0 + r, rows - 1);
        wr[r] = reinterpret_cast<const uint4*>(W + (size_t)row * cols);
        sr[r] = S + (size_t)(row >> 7) * scols;
    }
    const float4* xv = reinterpret_cast<const float4*>(x);
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = 0.f;
    for (int base = lane; base < chunks; base += 32 * UNROLL) {
        uint4 w[UNROLL][ROWS];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + u * 32;
#pragma unroll
            for (int r = 0; r < ROWS; r++) w[u][r] = c < chunks ? __ldg(wr[r] + c) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + u * 32;
            if (c < chunks) {
                const float4 x0 = __ldg(xv + 4 * c), x1 = __ldg(xv + 4 * c + 1);
                const float4 x2 = __ldg(xv + 4 * c + 2), x3 = __ldg(xv + 4 * c + 3);
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    float s = fp8_dot4(w[u][r].x, x0, 0.f);
                    s = fp8_dot4(w[u][r].y, x1, s);
                    s = fp8_dot4(w[u][r].z, x2, s);
                    s = fp8_dot4(w[u][r].w, x3, s);
                    acc[r] = fmaf(s, __ldg(sr[r] + (c >> 3)), acc[r]);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const float s = warp_sum(acc[r]);
        if (lane == 0 && row0 + r < rows) y[row0 + r] = s;
    }
}

#define GEMV_FP8(NAME, ROWS, UNROLL)                                                                    \
    extern "C" __global__ void __launch_bounds__(32 * GEMV_WARPS)                                       \
        NAME(float* __restrict__ y, const uint8_t* __restrict__ W, const float* __restrict__ S,           \
             const float* __restrict__ x, const int32_t* __restrict__ ids, long long mstride,              \
             long long sstride, int xstride, int rows, int cols) {                                     \
        const int e = blockIdx.y;                                                                      \
        const long long m = ids ? (long long)ids[e] : 0;                                               \
        gemv_fp8_body<ROWS, UNROLL>(y + (size_t)e * rows, W + m * mstride, S + m * sstride,              \
                                    x + (size_t)e * xstride, rows, cols);                               \
    }
GEMV_FP8(gemv_fp8_r1, 1, 4)
GEMV_FP8(gemv_fp8_r2, 2, 2)
GEMV_FP8(gemv_fp8_r4, 4, 2)
