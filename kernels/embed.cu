// Embedding kernels.
#include "common.cuh"

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
