// Tensor-core pieces shared by the fast kernels (kernels/gemm.cu,
// gemm_stream.cu, attention_prompt.cu): the m16n8k16 BF16 and FP16 MMAs,
// ldmatrix, two E4M3 weights to an FP16 pair, and the split of a float32
// activation into two FP16 parts with a power-of-two row scale that keeps
// them inside FP16's range (docs/MODEL.md "Numerics policy").
#pragma once
#include <stdint.h>

// mma_bf16: c += a·b, m16n8k16 BF16 with float32 accumulation. (Not
// volatile: the compiler may interleave independent MMAs.)
__device__ __forceinline__ void mma_bf16(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// ldmatrix_x4 loads four 8 × 8 16-bit matrices (lane l gives the address of
// row l & 7 of matrix l >> 3) as one A fragment, or two n8 B fragments.
__device__ __forceinline__ void ldmatrix_x4(const void* smem, uint32_t* a) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                 : "r"(s));
}
// ldmatrix_x4_trans is ldmatrix_x4 with each matrix transposed: B
// fragments of a matrix stored k-major (rows k, columns n contiguous).
__device__ __forceinline__ void ldmatrix_x4_trans(const void* smem, uint32_t* a) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                 : "r"(s));
}

// The same MMA on FP16 operands (the part format GEMM_PARTS_F16 below):
// m16n8k16 f16 with float32 accumulation, the BF16 MMA's rate.
__device__ __forceinline__ void mma_f16(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// f16_pair_float: the two FP16 halves of h as float32 (a the low half).
__device__ __forceinline__ void f16_pair_float(uint32_t h, float& a, float& b) {
    asm("{.reg .b16 l, u; mov.b32 {l, u}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, u;}" : "=f"(a), "=f"(b) : "r"(h));
}
// split_f16: the two FP16 parts of a and b (already scaled into FP16's
// range, |a|, |b| < 2^15·(1 + 2^-11)) packed in pairs (a in the low half).
// hi = f16(a) rounds to nearest even; the rest a − hi is exact in float32
// (a float32 whose bits below FP16's ulp of a are a's own).
__device__ __forceinline__ void split_f16(float a, float b, uint32_t* p) {
    uint32_t h, l;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(b), "f"(a));  // b to the high half
    float ha, hb;
    f16_pair_float(h, ha, hb);
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(l) : "f"(b - hb), "f"(a - ha));
    p[0] = h, p[1] = l;
}
// f16_row_scale: for the largest |y| m of an X row's stage (m ≥ 0, Inf, or
// NaN where every y is), 2^f (fwd) and 2^-f (inv), f = 141 − E(m) with E
// the biased float32 exponent, so m·2^f ∈ [2^14, 2^15) for normal m: no
// finite y·2^f exceeds FP16's 65504. f at most 126 (zero and subnormal m:
// 2^-126 is still a normal float32, and y·2^126 puts FP16's subnormal step
// 2^-24 at 2^-150 of y, below float32's own 2^-149), at least −114 (Inf or
// NaN: E 255; a NaN y among finite ones is passed over by fmaxf and reaches
// its outputs as NaN through its parts, as it does with BF16 parts).
__device__ __forceinline__ void f16_row_scale(float m, float& fwd, float& inv) {
    const int f = min(141 - (int)(__float_as_uint(m) >> 23), 126);
    fwd = __uint_as_float((uint32_t)(127 + f) << 23);
    inv = __uint_as_float((uint32_t)(127 - f) << 23);
}

// e4m3x2_f16x2: E4M3 bytes 0, 1 of v as an FP16 pair (lo) and bytes 2, 3
// (hi), exact: every E4M3 value, subnormals included, is an FP16 value.
// sm_90: cvt.rn.f16x2.e4m3x2 (nvcc 11.8's PTX has it for sm_90 only).
// Before sm_90 by bits: s.eeee.mmm moved to FP16 bits s.0eeee.mmm0000000
// is the value × 2^-8 (normal or subnormal: both formats' subnormals scale
// alike), one f16x2 FMA by 2^8 makes it the value (3 mantissa bits: exact).
__device__ __forceinline__ void e4m3x2_f16x2(uint32_t v, uint32_t& lo, uint32_t& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("{.reg .b16 l, u; mov.b32 {l, u}, %2; cvt.rn.f16x2.e4m3x2 %0, l; cvt.rn.f16x2.e4m3x2 %1, u;}"
        : "=r"(lo), "=r"(hi)
        : "r"(v));
#else
    const uint32_t a = __byte_perm(v, 0, 0x4140), b = __byte_perm(v, 0, 0x4342);  // bytes 0, 1 | 2, 3 to halves
    const uint32_t la = ((a & 0x007f007fu) << 7) | ((a & 0x00800080u) << 8);        // × 2^-8
    const uint32_t lb = ((b & 0x007f007fu) << 7) | ((b & 0x00800080u) << 8);
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(lo) : "r"(la), "r"(0x5c005c00u), "r"(0x80008000u));  // × 2^8 − 0
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(hi) : "r"(lb), "r"(0x5c005c00u), "r"(0x80008000u));
#endif
}
