// Random tensors made on the device, for benchmarks at the full geometry
// without a checkpoint (no upload of gigabytes): synth_* fill the synthetic
// backbone's weights (engine/cuda SyntheticBackbone), fill_random_* the
// tower benchmark's (engine/cuda BenchTower). Values come from counter-based
// hashes of (seed, index), so a fill is reproducible and needs no state. Not
// model kernels: nothing in a take runs them.
#include "common.cuh"

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// uniform in [-1, 1)
__device__ __forceinline__ float uniform_pm1(uint64_t seed, uint64_t i) {
    return (float)(mix64(seed * 0x9e3779b97f4a7c15ull + i) >> 40) * (2.f / 16777216.f) - 1.f;
}

// p[i] = scale · U(−1, 1) as float32, for n elements.
extern "C" __global__ void synth_f32(float* p, long long n, unsigned long long seed, float scale) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = scale * uniform_pm1(seed, i);
}

// p[i] = bf16(scale · U(−1, 1)) (truncated), for n elements.
extern "C" __global__ void synth_bf16(uint16_t* p, long long n, unsigned long long seed, float scale) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = (uint16_t)(__float_as_uint(scale * uniform_pm1(seed, i)) >> 16);
}

// p[i] = a random finite E4M3 code of magnitude 2^-3 … 3.75 (exponent field
// 4…8), for n bytes.
extern "C" __global__ void synth_fp8(uint8_t* p, long long n, unsigned long long seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
        p[i] = (uint8_t)(((h & 1) << 7) | ((4 + (h >> 1) % 5) << 3) | ((h >> 8) & 7));
    }
}

// ---------------------------------------------------------------------------
// The tower benchmark's fills: uniform in [lo, hi) from the same hash.
__device__ __forceinline__ float hash_unit(uint64_t i, uint32_t seed) {
    return (float)(mix64(i * 0x9e3779b97f4a7c15ull + seed) >> 40) * 0x1p-24f;  // [0, 1)
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
