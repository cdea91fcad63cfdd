// Shared device helpers of the kernel families (kernels/*.cu): BF16 and FP8
// decoding, warp and block sums, programmatic dependent launch, streaming
// loads. Conventions of every family: activations are float32, weights BF16
// or block-FP8 (E4M3 with one float32 scale per 128×128 block), every kernel
// is extern "C" so the Go side finds it by name, and all pointers are device
// pointers. Each kernel has a Go reference in engine/cpu (named beside it) and
// a device test in engine/cuda that compares the two on random inputs.
#pragma once

#include <stdint.h>

#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float bf16_lo(uint32_t v) { return __int_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t v) { return __int_as_float(v & 0xffff0000u); }

// warp_sum and block_sum add v over a warp / the block in T's arithmetic
// (float, or double for the numerics contract's sums: norms' sums of
// squares, softmax denominators), returning the sum to every thread.
// block_sum: blockDim.x is a multiple of 32 and at most 1024; red holds 32
// T of shared memory.
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

template <class T>
__device__ T block_sum(T v, T* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();  // red may still be read by a previous call
    if (lane == 0) red[warp] = v;
    __syncthreads();
    const int nwarps = blockDim.x >> 5;
    v = lane < nwarps ? red[lane] : T(0);
    return warp_sum(v);
}

// The backbone's elementwise functions as engine/cpu computes them (ops.go;
// docs/MODEL.md "Numerics contract"): the exponential in double on the
// float32 argument, rounded once; the add and the division in float32.
// sigmoid_ref is cpu.Sigmoid, silu_ref cpu.SiLU, inv_rms_ref cpu's invRMS
// from the float64 sum of squares of n values.
__device__ __forceinline__ float sigmoid_ref(float x) {
    return __fdiv_rn(1.f, __fadd_rn(1.f, (float)exp(-(double)x)));
}
__device__ __forceinline__ float silu_ref(float x) { return __fdiv_rn(x, __fadd_rn(1.f, (float)exp(-(double)x))); }
__device__ __forceinline__ float inv_rms_ref(double ss, int n, float eps) {
    return (float)(1.0 / sqrt(ss / (double)n + (double)eps));
}
// zc_norm_ref is one output of cpu.RMSNormZeroCentred: (x·inv)·(1 + w).
__device__ __forceinline__ float zc_norm_ref(float x, float inv, float w) {
    return __fmul_rn(__fmul_rn(x, inv), __fadd_rn(1.f, w));
}

#include "numerics.cuh"

// Programmatic dependent launch (sm_90): a kernel lets the next one in the
// stream start as soon as all its blocks run (launch_dependents), and waits
// for the previous one to finish, its writes visible, before reading anything
// that one may have written (wait). Every kernel here calls pdl_entry before
// touching anything a kernel may have written (a GEMV reads expert ids the
// host copied before it, see gemv.cu's ready), so the host may launch any of them
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
// pdl_entry_waited is pdl_entry with the next kernel let start only once
// this block has passed its wait: when the next kernel runs at all, every
// block of this one has, so every kernel before this one has finished and
// its writes are visible. The next kernel may then read, before its own
// wait, what the kernel before this one wrote (moe_down2_mma_ahead_fast
// reads moe_route's ids behind the gate·up by ids). In a grid of several
// waves it delays nothing: the next kernel's blocks find no room before the
// last wave starts.
__device__ __forceinline__ void pdl_entry_waited() {
    pdl_wait();
    pdl_launch_dependents();
}

// ld_dep reads, after the wait, a value an earlier kernel wrote where the
// pointer is const __restrict__ (or would be read with __ldg): those compile
// to ld.global.nc, which ptxas takes to read memory nothing writes while the
// kernel runs and may schedule above griddepcontrol.wait. Under PDL that
// read sees the value from before the earlier kernels ran (step27c: the
// one-row step's combine read the previous layer's routing weight). This
// load (ld.global.cg, L2) stays after the wait. kernels/pdl_sass_test.go
// checks the compiled kernels for reads above their wait.
template <class T>
__device__ __forceinline__ T ld_dep(const T* p) {
    return __ldcg(p);
}


// Weight loads: read once, so they skip L1, and ask L2 to fetch 256-byte
// blocks (the rows are streamed contiguously).
__device__ __forceinline__ uint4 load_stream(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// load_ahead is load_stream for a load issued before griddepcontrol.wait that
// must stay there (gemv_body's ahead): ptxas (11.8) sinks an ld.global.nc
// below the wait (it may: nothing keeps a read-only load above an acquire),
// and the loads would then start only when the wait ends. This plain load it
// leaves where it is (kernels/pdl_sass_test.go counts them).
__device__ __forceinline__ uint4 load_ahead(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
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


// ---------------------------------------------------------------------------
// Rule 1 of the backbone's numerics contract (docs/MODEL.md "Numerics
// contract", engine/cpu.Dot): Σ float64(w[k])·float64(x[k]) over float32
// weights and inputs, each product exact (24 by 24 bits), every sum float64.
//
// Widening a float32 to float64 (F2F) issues at 16 per clock and SM on sm_90,
// fewer than an FP8 GEMV streams weights, so half of the weights are widened
// by integer operations instead: f64_scaled_bits(w) is the float64 whose bits
// are w's moved into place (sign; exponent field e; mantissa), which equals
// w·2⁻⁸⁹⁶ exactly for every finite w (a float32 subnormal becomes a float64
// normal with e = 0 read as a subnormal: m·2⁻²³·2⁻¹⁰²² = w·2⁻⁸⁹⁶ too). Its
// partner input is widened as x·2⁸⁹⁶ (exact: |x| < 2¹²⁸, so < 2¹⁰²⁴), and
// the product is w·x, the same real number as float64(w)·float64(x), so the
// fused multiply-add rounds it identically.
__device__ __forceinline__ double f64_scaled_bits(float w) {
    const int b = __float_as_int(w);
    return __hiloint2double((b >> 3) & (int)0x8fffffff, b << 29);
}

// widen_x writes x[0…N) as dot_f64 reads it: even k float64(x), odd k
// float64(x)·2⁸⁹⁶.
template <int N>
__device__ __forceinline__ void widen_x(const float* x, double* xd) {
#pragma unroll
    for (int k = 0; k < N; k++) xd[k] = k & 1 ? (double)x[k] * 0x1p896 : (double)x[k];
}

// dot_f64 is Σ w[k]·x[k] over N weights (float32) and N inputs widened by
// widen_x, in float64: a fused multiply-add of an exact product rounds as the
// float64 add of the product would.
template <int N>
__device__ __forceinline__ double dot_f64(const float* w, const double* xd) {
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < N; k++) s = fma(k & 1 ? f64_scaled_bits(w[k]) : (double)w[k], xd[k], s);
    return s;
}

// Sixteen E4M3 bytes (a 16-byte chunk, byte order) → the float32 weights the
// CPU dequantises them to at load (checkpoint.DequantFP8Blocks): the exact
// E4M3 value (the integer path, leaving the conversion unit to the widening
// above) times the block scale, one float32 multiply each.
//
// fp8x16_scaled_fold: the integer path's bits alone are v·2⁻¹²⁰ (exact);
// while |scale| < 2⁸ the factor 2¹²⁰ is folded into the scale (s·2¹²⁰ is
// exact then), so one multiply gives v·scale rounded once, the same float32
// as __fmul_rn(v, scale): one instruction less per weight. Larger (or
// non-finite) scales take the two multiplies.
__device__ __forceinline__ float fp8_top_byte_bits(uint32_t t) { return __int_as_float(((int32_t)t >> 4) & 0x87f00000); }
__device__ __forceinline__ void fp8x16_scaled(uint4 w, float scale, float* f) {
    const uint32_t v[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[4 * i] = __fmul_rn(fp8_top_byte_to_float(v[i] << 24), scale);
        f[4 * i + 1] = __fmul_rn(fp8_top_byte_to_float(v[i] << 16), scale);
        f[4 * i + 2] = __fmul_rn(fp8_top_byte_to_float(v[i] << 8), scale);
        f[4 * i + 3] = __fmul_rn(fp8_top_byte_to_float(v[i]), scale);
    }
}
// fp8x16_scaled_fold is fp8x16_scaled (the same float32 values) with the
// factor 2¹²⁰ folded into the scale where that is exact.
__device__ __forceinline__ void fp8x16_scaled_fold(uint4 w, float scale, float* f) {
    const uint32_t v[4] = {w.x, w.y, w.z, w.w};
    if (fabsf(scale) < 0x1p8f) {
        const float s = scale * 0x1p120f;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            f[4 * i] = __fmul_rn(fp8_top_byte_bits(v[i] << 24), s);
            f[4 * i + 1] = __fmul_rn(fp8_top_byte_bits(v[i] << 16), s);
            f[4 * i + 2] = __fmul_rn(fp8_top_byte_bits(v[i] << 8), s);
            f[4 * i + 3] = __fmul_rn(fp8_top_byte_bits(v[i]), s);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[4 * i] = __fmul_rn(fp8_top_byte_to_float(v[i] << 24), scale);
        f[4 * i + 1] = __fmul_rn(fp8_top_byte_to_float(v[i] << 16), scale);
        f[4 * i + 2] = __fmul_rn(fp8_top_byte_to_float(v[i] << 8), scale);
        f[4 * i + 3] = __fmul_rn(fp8_top_byte_to_float(v[i]), scale);
    }
}

// fp8_dot4_bits is the dot product of the four E4M3 weights of w (byte i
// with x component i) as fp8_top_byte_bits gives them (v·2⁻¹²⁰):
// s + 2⁻¹²⁰·Σ w_i·x_i in a float32 FMA chain. Each product
// is exact inside its FMA, so only the sum's roundings see the scaling (the
// sum of O(1) weights times O(1) inputs lies far above float32's subnormals).
__device__ __forceinline__ float fp8_dot4_bits(uint32_t w, float4 xv, float s) {
    s = fmaf(fp8_top_byte_bits(w << 24), xv.x, s);
    s = fmaf(fp8_top_byte_bits(w << 16), xv.y, s);
    s = fmaf(fp8_top_byte_bits(w << 8), xv.z, s);
    return fmaf(fp8_top_byte_bits(w), xv.w, s);
}

// The fast FP8 dot's decode (docs/PERF.md "cvt22"): on sm_90 (FP8_DOT_CVT), each
// pair of bytes by the conversion unit (fp8x2_to_float2: one
// cvt.rn.f16x2.e4m3x2, then each half widened to float32 — exact, the E4M3
// value itself); before sm_90, or built with -DPROSCENIUM_FP8_INTEGER, every byte by
// the integer path (fp8_dot4_bits: three integer operations a weight on the
// half-rate integer pipe). Measured on the H200 (session 22 run 2): the conversion takes
// the one-row step 2.017 → 1.984 ms and the four-row one 3.51 → 3.39 ms, the
// takes' codes unchanged.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(PROSCENIUM_FP8_INTEGER)
#define FP8_DOT_CVT
#endif

// Fp8Sum is a fast FP8 dot's running sum in the decode's form: add(w, xv)
// adds the four weights of word w (byte i with xv's component i), in
// order, each product exact inside its FMA; value() times UNIT is the sum
// so far (the integer path's weights are v·2⁻¹²⁰).
struct Fp8Sum {
#ifdef FP8_DOT_CVT
    static constexpr float UNIT = 1.f;
#else
    static constexpr float UNIT = 0x1p120f;
#endif
    float s = 0.f;
    __device__ __forceinline__ void add(uint32_t w, float4 xv) {
#ifdef FP8_DOT_CVT
        const float2 a = fp8x2_to_float2((uint16_t)w), b = fp8x2_to_float2((uint16_t)(w >> 16));
        s = fmaf(a.x, xv.x, s);
        s = fmaf(a.y, xv.y, s);
        s = fmaf(b.x, xv.z, s);
        s = fmaf(b.y, xv.w, s);
#else
        s = fp8_dot4_bits(w, xv, s);
#endif
    }
    __device__ __forceinline__ float value() const { return s; }
};

// x staged in shared memory as float64 for dot_f64 (widen_x's values), by
// chunks of PER (8 or 16) elements, each chunk's PER/2 pairs rotated by the
// chunk: lanes reading consecutive chunks (16-byte loads, 8 lanes per
// shared-memory phase) then hit 8 different 16-byte bank groups instead of
// one. xs_slot is the double index of element k of chunk c; xs_chunk loads
// chunk c into xd in element order.
template <int PER>
__device__ __forceinline__ int xs_slot(int c, int k) {
    constexpr int P2 = PER / 2, ROT = 8 / P2;  // pairs per chunk; chunks per rotation step
    return c * PER + ((((k >> 1) + c / ROT) & (P2 - 1)) << 1) + (k & 1);
}
template <int PER>
__device__ __forceinline__ void xs_chunk(const double* xs, int c, double* xd) {
    constexpr int P2 = PER / 2, ROT = 8 / P2;
    const double2* xc = reinterpret_cast<const double2*>(xs + c * PER);
    const int rot = c / ROT;
#pragma unroll
    for (int i = 0; i < P2; i++) {
        const double2 v = xc[(i + rot) & (P2 - 1)];
        xd[2 * i] = v.x, xd[2 * i + 1] = v.y;
    }
}

// Eight BF16 weights (a 16-byte chunk) → float32, exact.
__device__ __forceinline__ void bf16x8_to_float(uint4 w, float* f) {
    f[0] = bf16_lo(w.x), f[1] = bf16_hi(w.x), f[2] = bf16_lo(w.y), f[3] = bf16_hi(w.y);
    f[4] = bf16_lo(w.z), f[5] = bf16_hi(w.z), f[6] = bf16_lo(w.w), f[7] = bf16_hi(w.w);
}
