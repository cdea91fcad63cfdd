// Normalisation kernels.
#include "common.cuh"

// ---------------------------------------------------------------------------
// Zero-centred RMSNorm (RMSNormZeroCentred): y = x / sqrt(mean(x²) + eps) · (1 + w)
// for each of n rows of width elements. Grid: (n); the sum of squares is
// float64 (per thread, then across the block), the inverse rms rounded once,
// as the CPU does.
extern "C" __global__ void rmsnorm_zc_f32(float* __restrict__ out, const float* __restrict__ x,
                                          const float* __restrict__ w, int width, float eps) {
    pdl_entry();
    __shared__ double red[32];
    const float* xr = x + (size_t)blockIdx.x * width;
    float* o = out + (size_t)blockIdx.x * width;
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) ss += (double)xr[c] * (double)xr[c];
    ss = block_sum_double(ss, red);
    const float inv = inv_rms_ref(ss, width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = zc_norm_ref(xr[c], inv, w[c]);
}
