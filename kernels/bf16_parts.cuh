// The three BF16 parts of activations that the fast tensor-core GEMMs take
// (kernels/gemm.cu): split in pairs in the q tiles' loop, or once a launch
// into a parts buffer (xp15: gemm_xp_prep, and the norm tails that write a
// prefill's GEMM inputs, backbone.cu and moe.cu *_xp_fast).
#pragma once
#include <stdint.h>

// The BF16 parts of two activations, packed in pairs (a in the low half):
// p[0] = bf16(x), p[1] = bf16 of the rest, p[2] (PARTS 3) of what is left
// after that. cvt.rn.bf16x2 rounds to nearest even; each rest x − bf16(x)
// is exact in float32.
template <int PARTS>
__device__ __forceinline__ void split_parts(float a, float b, uint32_t* p) {
#pragma unroll
    for (int i = 0; i < PARTS; i++) {
        uint32_t h;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(b), "f"(a));  // b to the high half
        p[i] = h;
        if (i + 1 < PARTS) {
            a -= __uint_as_float(h << 16);
            b -= __uint_as_float(h & 0xffff0000u);
        }
    }
}

// xparts_piece writes the parts of columns c … c+7 of activation row m (x:
// the row, cols columns, a multiple of 8; columns past cols are zero) as
// the gemm_xp instances read them: part p at P + p·pstride + m·kpad + c,
// eight BF16 values a 16-byte store. split_parts<3> pair by pair: the q
// tiles' parts, bit for bit.
__device__ __forceinline__ void xparts_piece(uint16_t* __restrict__ P, const float* __restrict__ x, long long m,
                                             int c, int cols, int kpad, long long pstride) {
    float4 a = make_float4(0.f, 0.f, 0.f, 0.f), b = a;
    if (c < cols) {
        a = __ldcg(reinterpret_cast<const float4*>(x + c));
        b = __ldcg(reinterpret_cast<const float4*>(x + c + 4));
    }
    uint32_t p0[3], p1[3], p2[3], p3[3];
    split_parts<3>(a.x, a.y, p0);
    split_parts<3>(a.z, a.w, p1);
    split_parts<3>(b.x, b.y, p2);
    split_parts<3>(b.z, b.w, p3);
#pragma unroll
    for (int p = 0; p < 3; p++)
        *reinterpret_cast<uint4*>(P + p * pstride + m * kpad + c) = make_uint4(p0[p], p1[p], p2[p], p3[p]);
}

// xparts_row is xparts_piece over row m's kpad / 8 pieces, a block's
// threads in turn. The row's values must be visible to the block (a
// __syncthreads after the block wrote them).
__device__ __forceinline__ void xparts_row(uint16_t* __restrict__ P, const float* __restrict__ x, long long m,
                                           int cols, int kpad, long long pstride) {
    for (int c = threadIdx.x * 8; c < kpad; c += blockDim.x * 8) xparts_piece(P, x, m, c, cols, kpad, pstride);
}
