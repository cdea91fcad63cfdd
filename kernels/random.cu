// Synthetic tensors for benchmarks: weights of the model's shapes filled on
// the device (no upload of gigabytes), from a counter hash so a run is
// reproducible.
#include "common.cuh"

__device__ __forceinline__ float hash_unit(uint64_t i, uint32_t seed) {
    uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 33;
    return (float)(x >> 40) * 0x1p-24f;  // [0, 1)
}

// fill_random_bf16: dst[i] = BF16 of lo + (hi − lo)·U(i). Grid-stride.
extern "C" __global__ void fill_random_bf16(uint16_t* dst, long long n, uint32_t seed, float lo, float hi) {
    pdl_entry();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        dst[i] = (uint16_t)(__float_as_uint(lo + (hi - lo) * hash_unit(i, seed)) >> 16);
}

// fill_random_f32: dst[i] = lo + (hi − lo)·U(i). Grid-stride.
extern "C" __global__ void fill_random_f32(float* dst, long long n, uint32_t seed, float lo, float hi) {
    pdl_entry();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        dst[i] = lo + (hi - lo) * hash_unit(i, seed);
}
