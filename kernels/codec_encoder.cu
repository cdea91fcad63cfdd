// Codec encoder kernels (engine/cuda/codec_encoder_cuda.go; reference
// engine/cpu/codec_encode.go, codec_quantize.go): the kernels the decoder's
// (codec.cu) lack for an encode in FP32 throughout — the encode is checked
// against the reference to 1e-4 on z_pre and its codes are nearest-code picks
// whose near-ties FP16 would flip, so its convolutions do not use the
// decoder's FP16 tensor-core GEMM. The post-module norm is codec.cu's
// codec_rmsnorm (FP32 output).
//
// Layouts: signals are time-major [rows][channels], FP32, whole (row 0 is the
// start of the reference; earlier rows read as zero). A strided conv runs as
// a stride-1 conv over the input viewed as blocks of stride rows (the CPU's
// packing, cpu.CodecEncoderConv), so no kernel here has a stride.
//
// Determinism: every output element is one thread's fixed-order sum.
#include "codec_common.cuh"

// ---------------------------------------------------------------------------
// FP32 implicit-GEMM causal conv (engine/cpu codecConv.apply):
//   v[t][o] = Σ_tap Σ_c W[o][tap][c] · x[t − (taps−1−tap)·dil][c] + bias[o]
// (rows before 0 read zero), then by mode: v; res + v; res + v·γ; gelu(v).
// Tiles of 64 rows × 64 outputs × 16 k, 256 threads of 4 × 4 outputs.
#define EC_BM 64
#define EC_BN 64
#define EC_BK 16
#define EC_PLAIN 0
#define EC_RES 1
#define EC_GAMMA 2
#define EC_GELU 3

extern "C" __global__ void __launch_bounds__(256) codec_enc_conv(float* out, const float* __restrict__ x,
                                                                 const float* __restrict__ w,
                                                                 const float* __restrict__ bias, int M, int in,
                                                                 int N, int taps, int dil, int mode, const float* res,
                                                                 const float* __restrict__ gamma) {
    __shared__ float sA[EC_BK][EC_BM + 4];
    __shared__ float sB[EC_BK][EC_BN + 4];
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int m0 = blockIdx.x * EC_BM, n0 = blockIdx.y * EC_BN;
    const int K = taps * in;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
    for (int k0 = 0; k0 < K; k0 += EC_BK) {
#pragma unroll
        for (int i = tid; i < EC_BM * EC_BK; i += 256) {
            const int r = i / EC_BK, kk = i % EC_BK, k = k0 + kk, m = m0 + r;
            float v = 0.f;
            if (m < M && k < K) {
                const int tap = k / in, c = k - tap * in;
                const long src = (long)m - (long)(taps - 1 - tap) * dil;
                if (src >= 0) v = x[src * in + c];
            }
            sA[kk][r] = v;
        }
#pragma unroll
        for (int i = tid; i < EC_BN * EC_BK; i += 256) {
            const int nn = i / EC_BK, kk = i % EC_BK, k = k0 + kk, n = n0 + nn;
            sB[kk][nn] = (n < N && k < K) ? w[(size_t)n * K + k] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < EC_BK; kk++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) a[i] = sA[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; j++) b[j] = sB[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int m = m0 + ty + 16 * i;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int n = n0 + tx + 16 * j;
            if (n >= N) continue;
            float v = acc[i][j] + bias[n];
            const size_t o = (size_t)m * N + n;
            switch (mode) {
            case EC_RES:
                v = res[o] + v;
                break;
            case EC_GAMMA:
                v = res[o] + v * gamma[n];
                break;
            case EC_GELU:
                v = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
                break;
            }
            out[o] = v;
        }
    }
}

// ---------------------------------------------------------------------------
// Snake (engine/cpu codecSnake): out = x + inv·sin²(α·x) over rows × ch
// values; out may be x.
extern "C" __global__ void codec_enc_snake(float* out, const float* x, const float* __restrict__ alpha,
                                           const float* __restrict__ inv, long n, int ch) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        const int c = (int)(i % ch);
        const float v = x[i], s = sinf(alpha[c] * v);
        out[i] = v + inv[c] * (s * s);
    }
}

// SwiGLU (engine/cpu SwiGLU): out = silu(gate)·up over n values; out may be gate.
extern "C" __global__ void codec_enc_swiglu(float* out, const float* gate, const float* __restrict__ up, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        const float g = gate[i];
        out[i] = g / (1.f + expf(-g)) * up[i];
    }
}

// RoPE of the q and k heads of qkv rows ([q | k | v], 3·dim wide, heads of 64)
// in place: pair i of each head rotated by the table's cos and sin [rows][32]
// (bfloat16-rounded on the host, cpu.CodecRopeTable). Grid (rows).
extern "C" __global__ void codec_enc_rope(float* qkv, const float* __restrict__ cos, const float* __restrict__ sin,
                                          int dim) {
    const int t = blockIdx.x;
    float* row = qkv + (size_t)t * 3 * dim;
    for (int p = threadIdx.x; p < dim; p += blockDim.x) {  // dim pairs: dim/2 in q, dim/2 in k
        const int h = p >> 5, i = p & 31;
        float* x = row + h * 64 + 2 * i;
        const float c = cos[(size_t)t * 32 + i], s = sin[(size_t)t * 32 + i];
        const float x0 = x[0], x1 = x[1];
        x[0] = x0 * c - x1 * s;
        x[1] = x1 * c + x0 * s;
    }
}

// ---------------------------------------------------------------------------
// Windowed causal attention (engine/cpu codecBlock.run), FP32 in and out:
// row t of head h attends rows max(0, t − window + 1) … t of qkv (RoPE
// applied); out is [rows][dim]. Grid (rows, heads), block 128; window ≤ 1024.
#define ENC_ATT_MAXW 1024
extern "C" __global__ void codec_enc_attention(float* __restrict__ out, const float* __restrict__ qkv, int dim,
                                               int window) {
    __shared__ float q[64];
    __shared__ float sc[ENC_ATT_MAXW];
    __shared__ float red[32];
    const int t = blockIdx.x, h = blockIdx.y;
    const int nk = t - max(0, t - window + 1) + 1;  // keys: rows t − nk + 1 … t
    const float y = codec_attention_row(qkv, dim, t, h, nk, q, sc, red);
    if (threadIdx.x < 64) out[(size_t)t * dim + h * 64 + threadIdx.x] = y;
}

// ---------------------------------------------------------------------------
// ConvNeXt's causal depthwise conv and LayerNorm (engine/cpu codecConvNeXt),
// FP32 out: y[c] = Σ_k w[c][k]·x[t − (K−1−k)][c] + b[c] (rows before 0 skip),
// then (y − mean)·rstd·nw + nb with the biased variance. Grid (rows), block
// 256; ch ≤ 4096.
extern "C" __global__ void codec_enc_dwconv_layernorm(float* __restrict__ out, const float* __restrict__ x,
                                                      const float* __restrict__ w, const float* __restrict__ b,
                                                      const float* __restrict__ nw, const float* __restrict__ nb,
                                                      int ch, int kernel, float eps) {
    __shared__ float y[4096];
    __shared__ float red[32];
    const long t = blockIdx.x;
    float mean, rstd;
    codec_dwconv_norm_row(x, w, b, ch, kernel, t, 0, eps, y, red, mean, rstd);
    for (int c = threadIdx.x; c < ch; c += blockDim.x) out[t * ch + c] = (y[c] - mean) * rstd * nw[c] + nb[c];
}

// ---------------------------------------------------------------------------
// The quantizers of one frame (engine/cpu CodecEncoder.quantize), in order
// (semantic, then the residual ones on what is left): z_e = in_proj(residual),
// pick = argmax_j cos(z_e, codebook[j]) (lowest index on ties) with its margin
// (best − second best), z_q = out_proj(z_e + (codebook[pick] − z_e)),
// residual −= z_q. z is [frames][latent]; per book i: inW [dim][latent], inB
// [dim], unit and cb [entries][dim] from floats cbOff[i], outW [latent][dim],
// outB [latent] (each book's at i × that size). codes and margins are
// [frames][books]. Grid (frames), block 256; latent ≤ 4096, dim ≤ 16.
#define ENC_Q_THREADS 256
extern "C" __global__ void __launch_bounds__(ENC_Q_THREADS) codec_enc_quantize(
    int* __restrict__ codes, float* __restrict__ margins, const float* __restrict__ z, int books, int latent, int dim,
    const float* __restrict__ inW, const float* __restrict__ inB, const float* __restrict__ unit,
    const float* __restrict__ cb, const int* __restrict__ cbOff, const int* __restrict__ sizes,
    const float* __restrict__ outW, const float* __restrict__ outB) {
    __shared__ float res[4096];
    __shared__ float ze[16], u[16], pick[16];
    __shared__ float bestV[ENC_Q_THREADS], secondV[ENC_Q_THREADS];
    __shared__ int bestI[ENC_Q_THREADS];
    const int f = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    for (int c = tid; c < latent; c += blockDim.x) res[c] = z[(size_t)f * latent + c];
    __syncthreads();
    for (int i = 0; i < books; i++) {
        const float* W = inW + (size_t)i * dim * latent;
        for (int o = warp; o < dim; o += warps) {
            float s = 0.f;
            for (int c = lane; c < latent; c += 32) s = fmaf(W[(size_t)o * latent + c], res[c], s);
            s = warp_sum(s);
            if (lane == 0) ze[o] = s + inB[i * dim + o];
        }
        __syncthreads();
        if (tid == 0) {
            double ss = 0;
            for (int d = 0; d < dim; d++) ss += (double)ze[d] * (double)ze[d];
            const float n = (float)fmax(sqrt(ss), 1e-12);
            for (int d = 0; d < dim; d++) u[d] = ze[d] / n;
        }
        __syncthreads();
        const float* U = unit + cbOff[i];
        float b = -INFINITY, s2 = -INFINITY;
        int bi = 0x7fffffff;
        for (int j = tid; j < sizes[i]; j += blockDim.x) {
            float c = 0.f;
            for (int d = 0; d < dim; d++) c = fmaf(u[d], U[(size_t)j * dim + d], c);
            if (c > b) {
                s2 = b;
                b = c;
                bi = j;
            } else if (c > s2) {
                s2 = c;
            }
        }
        bestV[tid] = b, secondV[tid] = s2, bestI[tid] = bi;
        __syncthreads();
        for (int stride = blockDim.x >> 1; stride > 0; stride >>= 1) {
            if (tid < stride) {
                const float ob = bestV[tid + stride], os = secondV[tid + stride];
                const int oi = bestI[tid + stride];
                const float mb = bestV[tid], ms = secondV[tid];
                const int mi = bestI[tid];
                if (ob > mb || (ob == mb && oi < mi)) {
                    bestV[tid] = ob, bestI[tid] = oi, secondV[tid] = fmaxf(os, mb);
                } else {
                    secondV[tid] = fmaxf(ms, ob);
                }
            }
            __syncthreads();
        }
        const int idx = bestI[0];
        if (tid == 0) {
            codes[(size_t)f * books + i] = idx;
            margins[(size_t)f * books + i] = bestV[0] - secondV[0];
        }
        if (tid < dim) {
            const float e = ze[tid], r = cb[cbOff[i] + (size_t)idx * dim + tid];
            pick[tid] = e + (r - e);
        }
        __syncthreads();
        const float* P = outW + (size_t)i * latent * dim;
        for (int o = tid; o < latent; o += blockDim.x) {
            float q = 0.f;
            for (int d = 0; d < dim; d++) q = fmaf(P[(size_t)o * dim + d], pick[d], q);
            res[o] -= q + outB[(size_t)i * latent + o];
        }
        __syncthreads();
    }
}
