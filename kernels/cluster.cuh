// Thread block cluster primitives (sm_90, PTX ISA 7.8) for the kernels whose
// row is spread over a cluster's blocks (row_norm.cuh ClusterSpan, the
// DeltaNet cluster step in deltanet.cu). On earlier
// architectures they are no-ops: the cluster kernels' instances there trap
// and are never launched (engine/cuda checks the device).
#pragma once

// cluster_arrive / cluster_wait: barrier.cluster's two halves. arrive
// releases (ptxas puts a MEMBAR before it: the thread's earlier stores are
// waited for, so global stores are best issued after it), wait acquires.
__device__ __forceinline__ void cluster_arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}
// cluster_rank is the block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
    return r;
}
// cluster_push stores v at p (this block's shared memory) in the shared
// memory of the cluster's block rank instead (distributed shared memory).
__device__ __forceinline__ void cluster_push(float* p, unsigned rank, float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned a = (unsigned)__cvta_generic_to_shared(p), r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
    asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(r), "f"(v) : "memory");
#endif
}
// cluster_tree_sum adds the 4·N4 floats at p (shared memory) in one fixed
// order, the same in every thread of every block: each float4 as
// (x + y) + (z + w), then pairwise, s[i] += s[i + half] for half = N4/2 … 1
// (N4 a power of two; docs/perf/norm34-emu repeats it on the host).
template <int N4>
__device__ __forceinline__ float cluster_tree_sum(const float4* p) {
    static_assert(N4 == 16, "cluster_tree_sum: written out for 16 float4");
    float s[N4];
#pragma unroll
    for (int i = 0; i < N4; i++) {
        const float4 q = p[i];
        s[i] = (q.x + q.y) + (q.z + q.w);
    }
    // Written out (a loop over the halves left s in local memory).
#pragma unroll
    for (int i = 0; i < 8; i++) s[i] += s[i + 8];
#pragma unroll
    for (int i = 0; i < 4; i++) s[i] += s[i + 4];
#pragma unroll
    for (int i = 0; i < 2; i++) s[i] += s[i + 2];
    return s[0] + s[1];
}
