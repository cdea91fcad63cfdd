// Codec decoder kernels (engine/cuda/codec_cuda.go; reference engine/cpu/codec*.go):
// the RVQ sum, the post-module's norms and windowed attention, ConvNeXt's
// depthwise conv + LayerNorm, Snake, and every convolution and linear as one
// implicit-GEMM kernel on the tensor cores (mma.sync m16n8k16, FP16 inputs,
// FP32 accumulation) with the stage's elementwise tail fused into its store.
//
// Determinism: every output element is computed by the same code in the same
// order whatever chunk of the take it falls in (no split reductions, no
// atomics; a GEMM element's K loop is fixed and a row's result does not depend
// on the other rows of its tile), so a streaming decode equals a whole one bit
// for bit.
//
// Layouts: signals are time-major [rows][channels]. A GEMM input (FP16) has
// cpad channels per row (channels rounded up to 32, the padding zero) and
// history rows before row 0 of the chunk (the previous chunk's last rows, or
// zeros at the start of the take).
#include "codec_common.cuh"
#include <cuda_fp16.h>

// ---------------------------------------------------------------------------
// Implicit-GEMM causal convolution (engine/cpu codecConv.apply):
//   y[t][o] = Σ_tap Σ_c W[o][tap][c] · x[t − (taps−1−tap)·dil][c] + bias[o]
// A = x (FP16, [rows][cpad], rows from −(taps−1)·dil readable), B = W (FP16,
// [npad][taps·cpad], k contiguous: the "col" operand of mma row.col), FP32
// accumulators. Tiles of 128 rows × 64 outputs × 32 k, 4 warps of 64×32,
// a ring of four cp.async stages (three tiles in flight ahead of the MMAs;
// with three stages a 32-frame chunk decoded 3.5 % slower, docs/PERF.md
// "codec24"), swizzled shared memory read with ldmatrix.
#define CG_BM 128
#define CG_BN 64
#define CG_BK 32
#define CG_STAGES 4  // 48 KB of static shared memory: four blocks an SM at ≤ 128 registers
#define CG_THREADS 128

// The fused tails (engine/cuda codecEpilogue).
#define EPI_F32 0      // out32 = v
#define EPI_SNAKE16 1  // out16 = snake(v)          (p0 = α, p1 = 1/(α+1e-9))
#define EPI_RES 2      // out32 = res + v
#define EPI_GAMMA 3    // out32 = res + v·γ         (p0 = γ)
#define EPI_GELU16 4   // out16 = gelu(v)
#define EPI_TANH 5     // out32 = tanh(v)
#define EPI_SWIGLU16 6 // out16[col/2] = silu(v[col])·v[col+1] (w1, w3 rows interleaved)
#define EPI_ROPE 7     // out32 = v, pairs of columns < ropeCols rotated at row position

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t* r, uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void mma16816(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// A tile row is 32 halves = four 16-byte chunks; chunk c of row r sits at
// chunk c ^ ((r >> 1) & 3), so the 8 rows an ldmatrix reads hit 8 distinct
// bank groups.
__device__ __forceinline__ int cg_swz(int r, int c) { return r * CG_BK + ((c ^ ((r >> 1) & 3)) << 3); }

__device__ __forceinline__ float bf16_round(float x) {
    uint32_t u = __float_as_uint(x);
    u += 0x7fffu + ((u >> 16) & 1u);
    return __uint_as_float(u & 0xffff0000u);
}

__device__ __forceinline__ float snakef(float x, float a, float inv) {
    const float s = sinf(a * x);
    return x + inv * (s * s);
}

__device__ __forceinline__ float geluf(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

struct CgOut {
    int mode, M, N, ldo, ldr, pos0, ropeCols;
    void* out;
    const float* res;
    const float* bias;
    const float* p0;
    const float* p1;
    const float* freq;
};

// CgCols is what the tail reads of one pair of columns (col, col+1): the
// bias and the mode's per-column parameters (Snake's α and 1/α, γ, RoPE's
// frequency), read once a block before its stores (cg_cols).
struct CgCols {
    float b0, b1, a0, a1, q0, q1;
};

template <int MODE>
__device__ __forceinline__ CgCols cg_cols(const CgOut& e, int col) {
    CgCols p = {e.bias[col], e.bias[col + 1], 0.f, 0.f, 0.f, 0.f};
    if (MODE == EPI_SNAKE16 && col < e.ldo) p.a0 = e.p0[col], p.a1 = e.p0[col + 1], p.q0 = e.p1[col], p.q1 = e.p1[col + 1];
    if (MODE == EPI_GAMMA && col < e.N) {
        p.a0 = e.p0[col];
        if (col + 1 < e.N) p.a1 = e.p0[col + 1];
    }
    if (MODE == EPI_ROPE && col < e.ropeCols) p.a0 = e.freq[(col & 63) >> 1];
    return p;
}

// cg_store writes the pair of columns (col, col+1) of one row through tail
// MODE, with the columns' parameters p.
template <int MODE>
__device__ __forceinline__ void cg_store(const CgOut& e, const CgCols& p, int row, int col, float v0, float v1) {
    if (row >= e.M) return;
    v0 += p.b0;
    v1 += p.b1;
    const size_t ro = (size_t)row * e.ldo;
    float* o32 = (float*)e.out;
    __half* o16 = (__half*)e.out;
    if (MODE == EPI_SNAKE16) {
        if (col < e.ldo) *(__half2*)(o16 + ro + col) = __floats2half2_rn(snakef(v0, p.a0, p.q0), snakef(v1, p.a1, p.q1));
        return;
    }
    if (MODE == EPI_GELU16) {
        if (col < e.ldo) *(__half2*)(o16 + ro + col) = __floats2half2_rn(geluf(v0), geluf(v1));
        return;
    }
    if (MODE == EPI_SWIGLU16) {
        if ((col >> 1) < e.ldo) o16[ro + (col >> 1)] = __float2half_rn(v0 / (1.f + expf(-v0)) * v1);
        return;
    }
    if (col >= e.N) return;  // FP32 outputs: the padded columns are not stored
    if (MODE == EPI_RES) {
        const float* r = e.res + (size_t)row * e.ldr;
        v0 = r[col] + v0;
        if (col + 1 < e.N) v1 = r[col + 1] + v1;
    }
    if (MODE == EPI_GAMMA) {
        const float* r = e.res + (size_t)row * e.ldr;
        v0 = r[col] + v0 * p.a0;
        if (col + 1 < e.N) v1 = r[col + 1] + v1 * p.a1;
    }
    if (MODE == EPI_TANH) {
        v0 = tanhf(v0);
        v1 = tanhf(v1);
    }
    if (MODE == EPI_ROPE && col < e.ropeCols) {
        const float a = (float)(e.pos0 + row) * p.a0;
        const float c = bf16_round(cosf(a)), s = bf16_round(sinf(a));
        const float x0 = v0, x1 = v1;
        v0 = x0 * c - x1 * s;
        v1 = x1 * c + x0 * s;
    }
    o32[ro + col] = v0;
    if (col + 1 < e.N) o32[ro + col + 1] = v1;
}

// cg_epilogue_mode stores a warp's 64 × 32 tile (warp wm, wn of the block at
// m0, n0) through tail MODE: the columns' parameters first, then every
// store, straight-line code of one tail (docs/PERF.md "codec24": one
// epilogue of every tail, each store's parameters read in its turn, took
// about half of a decoder convolution's time).
template <int MODE>
__device__ __forceinline__ void cg_epilogue_mode(const float (&acc)[4][4][4], const CgOut& e, int m0, int n0, int wm,
                                                 int wn, int lane) {
    const int col0 = n0 + wn * 32 + (lane & 3) * 2;
    CgCols p[4];
#pragma unroll
    for (int nj = 0; nj < 4; nj++) p[nj] = cg_cols<MODE>(e, col0 + nj * 8);
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int nj = 0; nj < 4; nj++) {
            const int row = m0 + wm * 64 + mi * 16 + (lane >> 2), col = col0 + nj * 8;
            cg_store<MODE>(e, p[nj], row, col, acc[mi][nj][0], acc[mi][nj][1]);
            cg_store<MODE>(e, p[nj], row + 8, col, acc[mi][nj][2], acc[mi][nj][3]);
        }
}

__device__ __forceinline__ void cg_epilogue(const float (&acc)[4][4][4], const CgOut& e, int m0, int n0, int wm, int wn,
                                            int lane) {
    switch (e.mode) {
    case EPI_F32: return cg_epilogue_mode<EPI_F32>(acc, e, m0, n0, wm, wn, lane);
    case EPI_SNAKE16: return cg_epilogue_mode<EPI_SNAKE16>(acc, e, m0, n0, wm, wn, lane);
    case EPI_RES: return cg_epilogue_mode<EPI_RES>(acc, e, m0, n0, wm, wn, lane);
    case EPI_GAMMA: return cg_epilogue_mode<EPI_GAMMA>(acc, e, m0, n0, wm, wn, lane);
    case EPI_GELU16: return cg_epilogue_mode<EPI_GELU16>(acc, e, m0, n0, wm, wn, lane);
    case EPI_TANH: return cg_epilogue_mode<EPI_TANH>(acc, e, m0, n0, wm, wn, lane);
    case EPI_SWIGLU16: return cg_epilogue_mode<EPI_SWIGLU16>(acc, e, m0, n0, wm, wn, lane);
    case EPI_ROPE: return cg_epilogue_mode<EPI_ROPE>(acc, e, m0, n0, wm, wn, lane);
    }
}

extern "C" __global__ void __launch_bounds__(CG_THREADS, 4) codec_conv_gemm(
    const __half* __restrict__ A, int M, int cpad, int taps, int dil, const __half* __restrict__ B, const float* bias,
    int N, int mode, void* out, int ldo, const float* res, int ldr, const float* p0, const float* p1, int pos0,
    const float* freq, int ropeCols) {
    __shared__ __align__(128) __half sA[CG_STAGES][CG_BM * CG_BK];
    __shared__ __align__(128) __half sB[CG_STAGES][CG_BN * CG_BK];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 1, wn = warp & 1;
    const int m0 = blockIdx.x * CG_BM, n0 = blockIdx.y * CG_BN;
    const int K = taps * cpad, KT = K / CG_BK;

    auto load = [&](int s, int kt) {
        const int k0 = kt * CG_BK, tap = k0 / cpad, c0 = k0 - tap * cpad;
        const long back = (long)(taps - 1 - tap) * dil;
#pragma unroll
        for (int i = 0; i < (CG_BM * 4) / CG_THREADS; i++) {
            const int idx = tid + i * CG_THREADS, r = idx >> 2, c = idx & 3, m = m0 + r;
            const __half* src = m < M ? A + (m - back) * (long)cpad + c0 + c * 8 : A;
            cp_async16(smem_u32(&sA[s][cg_swz(r, c)]), src, m < M ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < (CG_BN * 4) / CG_THREADS; i++) {
            const int idx = tid + i * CG_THREADS, r = idx >> 2, c = idx & 3;
            cp_async16(smem_u32(&sB[s][cg_swz(r, c)]), B + (size_t)(n0 + r) * K + k0 + c * 8, 16);
        }
    };

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int k = 0; k < 4; k++) acc[i][j][k] = 0.f;

#pragma unroll
    for (int s = 0; s < CG_STAGES - 1; s++) {
        if (s < KT) load(s, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait<CG_STAGES - 2>();
        __syncthreads();
        const int nk = kt + CG_STAGES - 1;
        if (nk < KT) load(nk % CG_STAGES, nk);
        cp_async_commit();
        const int s = kt % CG_STAGES;
#pragma unroll
        for (int kk = 0; kk < 2; kk++) {
            uint32_t a[4][4], b[2][4];
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
                ldmatrix_x4(a[mi], smem_u32(&sA[s][cg_swz(wm * 64 + mi * 16 + (lane & 15), kk * 2 + (lane >> 4))]));
#pragma unroll
            for (int ni = 0; ni < 2; ni++)
                ldmatrix_x4(b[ni], smem_u32(&sB[s][cg_swz(wn * 32 + ni * 16 + (lane & 7) + ((lane >> 4) << 3),
                                                           kk * 2 + ((lane >> 3) & 1))]));
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
#pragma unroll
                for (int nj = 0; nj < 4; nj++)
                    mma16816(acc[mi][nj], a[mi], b[nj >> 1][(nj & 1) * 2], b[nj >> 1][(nj & 1) * 2 + 1]);
        }
    }
    cp_async_wait<0>();

    cg_epilogue(acc, CgOut{mode, M, N, ldo, ldr, pos0, ropeCols, out, res, bias, p0, p1, freq}, m0, n0, wm, wn, lane);
}

// ---------------------------------------------------------------------------
// RVQ sum (engine/cpu Codec.rvq), FP32: for frame f and latent channel o,
//   z = sem + (((r1 + r2) + r3) + …),  r_i = Σ_c W_i[o][c]·cb_i[code][c] + b_i[o]
// codes clamp to each book's last entry. Book 0 is semantic. cb holds every
// codebook back to back (cbOff[i] floats in), projW [books][latent][dim],
// projB [books][latent]. Grid (frames), block 256.
extern "C" __global__ void codec_rvq_f32(float* __restrict__ out, const int* __restrict__ codes, int books, int dim,
                                         int latent, const float* __restrict__ cb, const int* __restrict__ cbOff,
                                         const int* __restrict__ sizes, const float* __restrict__ projW,
                                         const float* __restrict__ projB) {
    const int f = blockIdx.x;
    const int* fc = codes + (size_t)f * books;
    for (int o = threadIdx.x; o < latent; o += blockDim.x) {
        float z = 0.f, sem = 0.f;
        for (int i = 0; i < books; i++) {
            const int code = min(fc[i], sizes[i] - 1);
            const float* en = cb + cbOff[i] + (size_t)code * dim;
            const float* w = projW + ((size_t)i * latent + o) * dim;
            float p = 0.f;
            for (int c = 0; c < dim; c++) p = fmaf(w[c], en[c], p);
            p += projB[(size_t)i * latent + o];
            if (i == 0)
                sem = p;
            else
                z = i == 1 ? p : z + p;
        }
        out[(size_t)f * latent + o] = sem + z;
    }
}

// ---------------------------------------------------------------------------
// GEMM input preparation: out16[r][c] = half(snake(x[r][c])) (or half(x) when
// alpha is null) for c < ch, zero for ch ≤ c < cpad. rows × cpad elements.
extern "C" __global__ void codec_prep16(__half* __restrict__ out, const float* __restrict__ x, int rows, int ch,
                                        int cpad, const float* __restrict__ alpha, const float* __restrict__ inv) {
    const size_t n = (size_t)rows * cpad;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(i / cpad), c = (int)(i - (size_t)r * cpad);
        float v = 0.f;
        if (c < ch) {
            v = x[(size_t)r * ch + c];
            if (alpha) v = snakef(v, alpha[c], inv[c]);
        }
        out[i] = __float2half_rn(v);
    }
}

// ---------------------------------------------------------------------------
// RMSNorm (engine/cpu RMSNorm, plain gain): y = x / sqrt(mean(x²) + eps) · w,
// to out32 ([rows][ch]) and/or out16 ([rows][cpad], padding zero); either may
// be null. Grid (rows), block 256.
extern "C" __global__ void codec_rmsnorm(float* __restrict__ out32, __half* __restrict__ out16,
                                         const float* __restrict__ x, const float* __restrict__ w, int ch, int cpad,
                                         float eps) {
    __shared__ float red[32];
    const float* xr = x + (size_t)blockIdx.x * ch;
    float ss = 0.f;
    for (int c = threadIdx.x; c < ch; c += blockDim.x) ss = fmaf(xr[c], xr[c], ss);
    ss = block_sum(ss, red);
    const float inv = 1.f / sqrtf(ss / (float)ch + eps);
    for (int c = threadIdx.x; c < cpad; c += blockDim.x) {
        const float y = c < ch ? xr[c] * inv * w[c] : 0.f;
        if (out32 && c < ch) out32[(size_t)blockIdx.x * ch + c] = y;
        if (out16) out16[(size_t)blockIdx.x * cpad + c] = __float2half_rn(y);
    }
}

// ---------------------------------------------------------------------------
// Windowed causal attention of the post-module (engine/cpu codecBlock.run),
// FP32: row t (absolute position pos0 + t) of head h attends rows at
// positions max(0, pos − window + 1) … pos. qkv rows are [q | k | v] of
// 3·dim floats (RoPE applied), readable from row −(window−1); out16 is
// [rows][cpad]. Grid (rows, heads), block 128; window ≤ 1024.
#define CODEC_ATT_MAXW 1024
extern "C" __global__ void codec_attention(__half* __restrict__ out, const float* __restrict__ qkv, int dim,
                                           int window, int pos0, int cpad) {
    __shared__ float q[64];
    __shared__ float sc[CODEC_ATT_MAXW];
    __shared__ float red[32];
    const int t = blockIdx.x, h = blockIdx.y, pos = pos0 + t;
    const int nk = pos - max(0, pos - window + 1) + 1;  // keys: rows t − nk + 1 … t
    const float y = codec_attention_row(qkv, dim, t, h, nk, q, sc, red);
    if (threadIdx.x < 64) out[(size_t)t * cpad + h * 64 + threadIdx.x] = __float2half_rn(y);
}

// ---------------------------------------------------------------------------
// ConvNeXt's causal depthwise conv and LayerNorm (engine/cpu codecConvNeXt):
// y[c] = Σ_k w[c][k]·x[t − (K−1−k)][c] + b[c], then (y − mean)·rstd·nw + nb
// with the biased variance, to out16 [rows][cpad]. x ([rows][ch]) is readable
// from row −(K−1). Grid (rows), block 256; ch ≤ 4096.
extern "C" __global__ void codec_dwconv_layernorm(__half* __restrict__ out, const float* __restrict__ x,
                                                  const float* __restrict__ w, const float* __restrict__ b,
                                                  const float* __restrict__ nw, const float* __restrict__ nb, int ch,
                                                  int kernel, int cpad, float eps) {
    __shared__ float y[4096];
    __shared__ float red[32];
    const long t = blockIdx.x;
    float mean, rstd;
    codec_dwconv_norm_row(x, w, b, ch, kernel, t, -(kernel - 1), eps, y, red, mean, rstd);
    for (int c = threadIdx.x; c < cpad; c += blockDim.x)
        out[t * cpad + c] = __float2half_rn(c < ch ? (y[c] - mean) * rstd * nw[c] + nb[c] : 0.f);
}
