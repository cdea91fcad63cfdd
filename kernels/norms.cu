// Normalisation kernels.
#include "common.cuh"

// ---------------------------------------------------------------------------
// Zero-centred RMSNorm (RMSNormZeroCentred): y = x / sqrt(mean(x²) + eps) · (1 + w)
// for each of n rows of width elements. Grid: (n); the sum of squares is
// accumulated in float32 per thread, then across the block.
extern "C" __global__ void rmsnorm_zc_f32(float* __restrict__ out, const float* __restrict__ x,
                                          const float* __restrict__ w, int width, float eps) {
    pdl_entry();
    __shared__ float red[32];
    const float* xr = x + (size_t)blockIdx.x * width;
    float* o = out + (size_t)blockIdx.x * width;
    float ss = 0.f;
    for (int c = threadIdx.x; c < width; c += blockDim.x) ss += xr[c] * xr[c];
    ss = block_sum(ss, red);
    const float inv = rsqrtf(ss / (float)width + eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = xr[c] * inv * (1.f + w[c]);
}
