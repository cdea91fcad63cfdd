// cp.async copies from global to shared memory (sm_80+), shared by the
// tensor-core GEMMs (kernels/gemm.cu, kernels/gemm_stream.cu).
#pragma once
#include <stdint.h>

// cp_async copies BYTES (8 or 16) from global to shared memory, or zeros
// when !valid (src-size 0; src must still be a mapped address). (gemm31's
// .L2::256B prefetch hint on these copies moved nothing: docs/PERF.md.)
// cp_async_sa: the same to a shared-space address s.
template <int BYTES>
__device__ __forceinline__ void cp_async_sa(uint32_t s, const void* src, bool valid) {
    const int n = valid ? BYTES : 0;
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(src), "r"(n));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(s), "l"(src), "n"(BYTES), "r"(n));
}
template <int BYTES>
__device__ __forceinline__ void cp_async(void* smem, const void* src, bool valid) {
    cp_async_sa<BYTES>((uint32_t)__cvta_generic_to_shared(smem), src, valid);
}
// cp_async16: 16 bytes always in bounds (no source size).
__device__ __forceinline__ void cp_async16(uint32_t s, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
