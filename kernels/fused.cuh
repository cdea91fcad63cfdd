// Grid-wide tails (issue 27, "fewer, fatter launches"; docs/MODEL.md "Fused
// step"): a kernel whose blocks each write part of an output can hand the
// whole output to one more step in the same launch: every block stores, then
// counts itself in; the block that arrives last runs the step that a
// separate, dependent launch would have run. No block waits for another (no
// spinning, so no deadlock whatever the occupancy), and the launch boundary
// the tail replaces costs nothing.
#pragma once

// last_of is true in the one block of blocks (that share counter) that counts
// itself in last; last_block in the last block of the grid. Every thread of
// every such block calls it, after its stores. counter is a device uint32 that
// is 0 when the launch starts; the last block sets it back to 0, so one
// counter serves every later launch that waits for this one (the next
// kernel's griddepcontrol.wait, or stream order).
__device__ __forceinline__ bool last_of(unsigned int* counter, unsigned int blocks) {
    __shared__ bool last;
    __threadfence();  // this block's stores are visible device-wide before it counts
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(counter, 1u) == blocks - 1;
        if (last) atomicExch(counter, 0u);
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}
__device__ __forceinline__ bool last_block(unsigned int* counter) {
    return last_of(counter, gridDim.x * gridDim.y * gridDim.z);
}

// How a row body reads values another block of the same grid wrote: Plain
// (the launch before wrote them; the body's own kernels) or L2 (a tail's
// reads: __ldcg bypasses L1 and the read-only path, which are not coherent
// within a grid).
struct LoadPlain {
    template <class T>
    __device__ static __forceinline__ T ld(const T* p) { return *p; }
};
struct LoadL2 {
    template <class T>
    __device__ static __forceinline__ T ld(const T* p) { return __ldcg(p); }
};

// The fused GEMVs' instance (gemv.cuh gemv_body): the one engine/cuda
// ChooseGemv picks for the backbone's one-row BF16 projections of 2048 and
// 4096 columns (t128r2u2).
#define FUSED_GEMV_TPR 128
#define FUSED_GEMV_ROWS 2
#define FUSED_GEMV_UNROLL 2
