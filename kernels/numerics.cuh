// The numerics policies of the backbone's kernels (docs/MODEL.md "Numerics
// policy"): one kernel body per family takes a policy P as a template
// parameter, and each family instantiates it once per policy under its own
// extern "C" name (NUMERICS_KERNEL below; the GEMVs name theirs by format,
// gemv.cu). engine/cuda picks the instances in one place (Numerics.kernel).
//
// Exact is the contract: bit-identical to engine/cpu (float64 products and
// sums rounded once, transcendentals in double rounded once, every float32
// operation rounded on its own and never contracted into a fused
// multiply-add). Fast is the weights as stored with float32 accumulation:
// fused multiply-adds, any summation order, the fast intrinsics; within the
// tolerances docs/MODEL.md states of engine/cpu.
#pragma once

// Needs common.cuh's sigmoid_ref, silu_ref, inv_rms_ref, zc_norm_ref.

struct Exact {
    static constexpr bool exact = true;
    typedef double Sum;  // dot products' and other sums' accumulator
    __device__ static __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
    __device__ static __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    __device__ static __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    // The exact product of two float32 values in the sum's type.
    __device__ static __forceinline__ Sum prod(float a, float b) { return (double)a * (double)b; }
    __device__ static __forceinline__ Sum sq(float v) { return (double)v * (double)v; }
    // e^x in double on the float32 argument, rounded once (Go's math.Exp).
    __device__ static __forceinline__ float exp(float x) { return (float)::exp((double)x); }
    // a/b of two sums, rounded once.
    __device__ static __forceinline__ float div(Sum a, Sum b) { return (float)(a / b); }
    __device__ static __forceinline__ float sigmoid(float x) { return sigmoid_ref(x); }
    __device__ static __forceinline__ float silu(float x) { return silu_ref(x); }
    __device__ static __forceinline__ float inv_rms(Sum ss, int n, float eps) { return inv_rms_ref(ss, n, eps); }
    // One output of cpu.RMSNormZeroCentred: (x·inv)·(1 + w).
    __device__ static __forceinline__ float zc_norm(float x, float inv, float w) { return zc_norm_ref(x, inv, w); }
};

struct Fast {
    static constexpr bool exact = false;
    typedef float Sum;
    __device__ static __forceinline__ float mul(float a, float b) { return a * b; }
    __device__ static __forceinline__ float add(float a, float b) { return a + b; }
    __device__ static __forceinline__ float sub(float a, float b) { return a - b; }
    __device__ static __forceinline__ Sum prod(float a, float b) { return a * b; }
    __device__ static __forceinline__ Sum sq(float v) { return v * v; }
    __device__ static __forceinline__ float exp(float x) { return __expf(x); }
    __device__ static __forceinline__ float div(Sum a, Sum b) { return a / b; }
    __device__ static __forceinline__ float sigmoid(float x) { return 1.f / (1.f + __expf(-x)); }
    __device__ static __forceinline__ float silu(float x) { return x / (1.f + __expf(-x)); }
    __device__ static __forceinline__ float inv_rms(Sum ss, int n, float eps) { return rsqrtf(ss / (float)n + eps); }
    __device__ static __forceinline__ float zc_norm(float x, float inv, float w) { return x * inv * (1.f + w); }
};

// NUMERICS_KERNEL(NAME, BOUNDS, PARAMS, ARGS) defines the extern "C" kernels
// NAME (Exact: the name the contract's kernel always had) and NAME_fast
// (Fast), each calling NAME_body<P> ARGS: one body, two instances. BOUNDS is
// the __launch_bounds__(…) or nothing; PARAMS the parenthesised parameter
// list, ARGS the parenthesised arguments.
#define NUMERICS_KERNEL(NAME, BOUNDS, PARAMS, ARGS) \
    extern "C" __global__ void BOUNDS NAME PARAMS { NAME##_body<Exact> ARGS; } \
    extern "C" __global__ void BOUNDS NAME##_fast PARAMS { NAME##_body<Fast> ARGS; }
