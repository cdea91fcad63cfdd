// The backbone's mixture of experts around the GEMVs (engine/cpu moe.go):
// routing (softmax, top-k, renormalisation) on the device, SwiGLU of the
// routed and shared experts, and the weighted combine with the gated shared
// expert, the residual and the next RMSNorm. The projections themselves are
// the GEMVs of gemv.cu (router + shared gate/up + shared_expert_gate stacked
// in one BF16 matrix; experts gathered by id).
#include "common.cuh"

#define MOE_MAX_EXPERTS 1024

// ---------------------------------------------------------------------------
// Routing (cpu.Route): for row t, logits at dense + t·dstride (the first E
// values of the stacked projection), the softmax over all E experts as the
// CPU computes it (each exponential rounded from double, their float64 sum
// rounded once, one float32 division), the k largest probabilities (ties to
// the lower index), divided by their float64 sum rounded once: the CPU's bits. Writes ids[t·k + j] and wts[t·k + j]. When
// xrep is not null, also copies row t of x (pitch xpitch) to xrep rows t·k … t·k+k−1,
// the inputs of the (row, expert) GEMVs of a prefill. Grid (n), block 256.
extern "C" __global__ void moe_route(int32_t* __restrict__ ids, float* __restrict__ wts,
                                     const float* __restrict__ dense, int dstride, int E, int k,
                                     float* __restrict__ xrep, const float* __restrict__ x, int xpitch) {
    pdl_entry();
    __shared__ float p[MOE_MAX_EXPERTS];
    __shared__ double red[32];
    __shared__ float chosen[64];
    const int t = blockIdx.x;
    const float* lg = dense + (size_t)t * dstride;
    float m = -INFINITY;
    for (int e = threadIdx.x; e < E; e += blockDim.x) m = fmaxf(m, lg[e]);
    // block max
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = lane < nwarps ? (float)red[lane] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, o));
    double s = 0.0;
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        const float v = (float)exp((double)__fsub_rn(lg[e], m));
        p[e] = v;
        s += (double)v;
    }
    const float S = (float)block_sum_double(s, red);
    for (int e = threadIdx.x; e < E; e += blockDim.x) p[e] = __fdiv_rn(p[e], S);
    __syncthreads();
    // The top k in warp 0 alone (no block barriers): lane l scans experts
    // l, l+32, …; a round's winner is marked by the lane that owns it, the
    // only lane that reads it again.
    if (warp == 0) {
        for (int j = 0; j < k; j++) {
            float bv = -1.f;
            int bi = 0x7fffffff;
            for (int e = lane; e < E; e += 32) {
                const float v = p[e];
                if (v > bv || (v == bv && e < bi)) bv = v, bi = e;
            }
            for (int o = 16; o > 0; o >>= 1) {
                const float ov = __shfl_xor_sync(FULL_MASK, bv, o);
                const int oi = __shfl_xor_sync(FULL_MASK, bi, o);
                if (ov > bv || (ov == bv && oi < bi)) bv = ov, bi = oi;
            }
            if (lane == 0) {
                ids[t * k + j] = bi;
                chosen[j] = bv;
            }
            if (bi < E && lane == (bi & 31)) p[bi] = -2.f;  // below every probability: not chosen again
        }
        __syncwarp();
        if (lane == 0) {
            double sum = 0.0;
            for (int j = 0; j < k; j++) sum += (double)chosen[j];
            const float S = (float)sum;
            for (int j = 0; j < k; j++) wts[t * k + j] = __fdiv_rn(chosen[j], S);
        }
    }
    if (xrep) {
        const float* xr = x + (size_t)t * xpitch;
        for (int j = 0; j < k; j++) {
            float* d = xrep + ((size_t)t * k + j) * xpitch;
            for (int c = threadIdx.x; c < xpitch; c += blockDim.x) d[c] = xr[c];
        }
    }
}

// ---------------------------------------------------------------------------
// Grouping by expert for a prefill's grouped GEMMs: the n·k (row, expert)
// pairs of ids sorted by expert, pairs of one expert in pair order (so the
// result does not depend on scheduling). Writes offsets [E+1] (pairs of
// expert e are sorted positions offsets[e] … offsets[e+1]−1), rowids [n·k]
// (the row of x a sorted pair reads: pair / k) and slot [n·k] (the sorted
// position of pair p). One block; n·k ≤ blockDim.x · 4 and E ≤ MOE_MAX_EXPERTS.
extern "C" __global__ void moe_group(int32_t* __restrict__ offsets, int32_t* __restrict__ rowids,
                                     int32_t* __restrict__ slot, const int32_t* __restrict__ ids, int pairs, int k,
                                     int E) {
    pdl_entry();
    __shared__ int count[MOE_MAX_EXPERTS + 1];
    for (int e = threadIdx.x; e <= E; e += blockDim.x) count[e] = 0;
    __syncthreads();
    for (int p = threadIdx.x; p < pairs; p += blockDim.x) atomicAdd(&count[ids[p]], 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        int run = 0;
        for (int e = 0; e < E; e++) {
            const int c = count[e];
            count[e] = run;
            offsets[e] = run;
            run += c;
        }
        offsets[E] = run;
    }
    __syncthreads();
    for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
        const int e = ids[p];
        int rank = 0;
        for (int q = 0; q < p; q++) rank += ids[q] == e;
        const int s = count[e] + rank;
        slot[p] = s;
        rowids[s] = p / k;
    }
}

// ---------------------------------------------------------------------------
// SwiGLU of the experts (cpu.SwiGLU): blocks y < items are routed items:
// h[y·ip + c] = silu(gu[y·2p + c]) · gu[y·2p + p + c] for c < i, 0 for
// i ≤ c < ip (the padding the down GEMV reads). Blocks y ≥ items are the
// shared expert of row r = y − items: hs[r·isp + c] = silu(g)·u with g, u at
// dense + r·dstride + E + c and + E + is + c (the stacked projection), zero
// up to isp. Grid (⌈max(ip, isp)/256⌉, items + rows), block 256.
extern "C" __global__ void moe_swiglu(float* __restrict__ h, const float* __restrict__ gu, int p, int i, int ip,
                                      int items, float* __restrict__ hs, const float* __restrict__ dense, int dstride,
                                      int E, int is, int isp) {
    pdl_entry();
    const int y = blockIdx.y;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (y < items) {
        if (c >= ip) return;
        float v = 0.f;
        if (c < i) {
            v = __fmul_rn(silu_ref(gu[(size_t)y * 2 * p + c]), gu[(size_t)y * 2 * p + p + c]);
        }
        h[(size_t)y * ip + c] = v;
        return;
    }
    const int r = y - items;
    if (c >= isp) return;
    float v = 0.f;
    if (c < is) {
        const float* d = dense + (size_t)r * dstride + E;
        v = __fmul_rn(silu_ref(d[c]), d[is + c]);
    }
    hs[(size_t)r * isp + c] = v;
}

// ---------------------------------------------------------------------------
// Combine (the end of cpu.moeForward) with the residual and the next norm:
// for row t, x[t, c] += Σ_j wts[t·k+j]·yr[(t·k+j)·H + c] + sigmoid(sg)·ys[t·H + c]
// in the CPU's order of float32 operations (acc = 0, acc += w_j·y_j for
// j = 0…k−1, acc += ys·sigmoid(sg), x += acc; every product rounded before
// its add) and the norm's float64 sum of squares: the CPU's bits
// with sg = dense[t·dstride + sgcol] (shared_expert_gate·x) and, when slot is
// not null, routed row slot[t·k+j] instead of t·k+j (a prefill's outputs in
// expert order, moe_group); then, when nw is
// not null, normed[t·npitch + c] = RMSNormZeroCentred(x[t])[c] for c < H and 0
// up to npitch. Grid (n), block 256.
extern "C" __global__ void moe_combine_norm(float* __restrict__ x, const float* __restrict__ yr,
                                            const float* __restrict__ wts, const float* __restrict__ ys,
                                            const float* __restrict__ dense, int dstride, int sgcol, int H, int k,
                                            const int32_t* __restrict__ slot, float* __restrict__ normed, const float* __restrict__ nw, int npitch,
                                            float eps) {
    pdl_entry();
    __shared__ double red[32];
    const int t = blockIdx.x;
    const float sg = sigmoid_ref(dense[(size_t)t * dstride + sgcol]);
    float* xr = x + (size_t)t * H;
    double ss = 0.0;
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        float acc = 0.f;
        for (int j = 0; j < k; j++) {
            const size_t row = slot ? (size_t)slot[t * k + j] : (size_t)t * k + j;
            acc = __fadd_rn(acc, __fmul_rn(wts[t * k + j], yr[row * H + c]));
        }
        acc = __fadd_rn(acc, __fmul_rn(ys[(size_t)t * H + c], sg));
        const float v = __fadd_rn(xr[c], acc);
        xr[c] = v;
        ss += (double)v * (double)v;
    }
    if (!nw) return;
    ss = block_sum_double(ss, red);
    const float inv = inv_rms_ref(ss, H, eps);
    float* o = normed + (size_t)t * npitch;
    for (int c = threadIdx.x; c < npitch; c += blockDim.x) o[c] = c < H ? zc_norm_ref(xr[c], inv, nw[c]) : 0.f;
}

// ---------------------------------------------------------------------------
// A step's down projections in one launch (SwiGLU, then cpu.MatVec): block
// row y < k is routed pair y: x = silu(gate)·up from gu (pitch 2p; width i,
// zero to ip) and the matrix ids[y] of W (FP8 with block scales S, or BF16;
// [h, ip] each, mstride elements apart); y = k is the shared expert: x from
// the stacked projection's shared gate and up (dense + e, width is) and the
// BF16 matrix Ws [h, is]. Writes yr[y·h + r]. x is built in shared memory,
// widened to float64 once (as dot_f64 reads it, rotated as xs_chunk reads it,
// common.cuh; FP8 scales folded, fp8x16_scaled_fold); each warp computes DOWN_ROWS rows, lane j reading
// 16-byte chunks j, j+32, … The sums follow rule 1 of the numerics contract
// (docs/MODEL.md; cpu.Dot): each weight the CPU's float32 (FP8: E4M3 value ×
// scale in float32), exact float64 products, float64 sums, one rounding.
// Grid (⌈h / (8·DOWN_ROWS)⌉, k + 1), block 256.
#define DOWN_ROWS 8
#define DOWN_MAXX 2048

// silu(g)·u as cpu.SwiGLU computes it: cpu.SiLU (silu_ref), then × u rounded
// to float32.
__device__ __forceinline__ float down_swiglu(float g, float u) { return __fmul_rn(silu_ref(g), u); }

// x[c] widened as widen_x does (a chunk starts at an even column).
__device__ __forceinline__ double widen_one(float x, int c) { return c & 1 ? (double)x * 0x1p896 : (double)x; }
// stage_one stores x[c], widened, where down_rows<FP8> reads it (xs_chunk's
// rotated layout, chunks of 16 FP8 or 8 BF16 columns).
__device__ __forceinline__ void stage_one(double* xs, bool fp8, float x, int c) {
    xs[fp8 ? xs_slot<16>(c >> 4, c & 15) : xs_slot<8>(c >> 3, c & 7)] = widen_one(x, c);
}

template <bool FP8>
__device__ __forceinline__ void down_rows(float* __restrict__ y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const double* xs, int rows, int cols) {
    constexpr int PER = FP8 ? 16 : 8;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int row0 = (blockIdx.x * (blockDim.x >> 5) + warp) * DOWN_ROWS;
    const int chunks = cols / PER, scols = (cols + 127) >> 7;
    const uint4* wr[DOWN_ROWS];
    int rr[DOWN_ROWS];
#pragma unroll
    for (int r = 0; r < DOWN_ROWS; r++) {
        rr[r] = min(row0 + r, rows - 1);
        wr[r] = reinterpret_cast<const uint4*>(W + (size_t)rr[r] * cols * (FP8 ? 1 : 2));
    }
    double acc[DOWN_ROWS];
#pragma unroll
    for (int r = 0; r < DOWN_ROWS; r++) acc[r] = 0.0;
    for (int c = lane; c < chunks; c += 32) {
        uint4 w[DOWN_ROWS];
#pragma unroll
        for (int r = 0; r < DOWN_ROWS; r++) w[r] = load_stream(wr[r] + c);
        double xc[PER];
        xs_chunk<PER>(xs, c, xc);
#pragma unroll
        for (int r = 0; r < DOWN_ROWS; r++) {
            float f[PER];
            if (FP8)
                fp8x16_scaled_fold(w[r], __ldg(S + (size_t)(rr[r] >> 7) * scols + ((c * PER) >> 7)), f);
            else
                bf16x8_to_float(w[r], f);
            acc[r] += dot_f64<PER>(f, xc);
        }
    }
#pragma unroll
    for (int r = 0; r < DOWN_ROWS; r++) acc[r] = warp_sum_double(acc[r]);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < DOWN_ROWS; r++)
            if (row0 + r < rows) y[row0 + r] = (float)acc[r];
    }
}

extern "C" __global__ void __launch_bounds__(256) moe_down(
    float* __restrict__ yr, const uint8_t* __restrict__ W, const float* __restrict__ S, long long mstride,
    long long sstride, int fp8, const int32_t* __restrict__ ids, const float* __restrict__ gu, int p, int i, int ip,
    int k, const uint16_t* __restrict__ Ws, const float* __restrict__ dense, int e, int is, int h) {
    __shared__ __align__(16) double xs[DOWN_MAXX];
    pdl_entry();
    const int y = blockIdx.y;
    if (y < k) {
        const float* g = gu + (size_t)y * 2 * p;
        for (int c = threadIdx.x; c < ip; c += blockDim.x) stage_one(xs, fp8, c < i ? down_swiglu(g[c], g[p + c]) : 0.f, c);
        __syncthreads();
        const long long m = ids[y];
        if (fp8)
            down_rows<true>(yr + (size_t)y * h, W + m * mstride, S + m * sstride, xs, h, ip);
        else
            down_rows<false>(yr + (size_t)y * h, W + m * mstride * 2, nullptr, xs, h, ip);
        return;
    }
    const float* d = dense + e;
    for (int c = threadIdx.x; c < is; c += blockDim.x) stage_one(xs, false, down_swiglu(d[c], d[is + c]), c);
    __syncthreads();
    down_rows<false>(yr + (size_t)y * h, reinterpret_cast<const uint8_t*>(Ws), nullptr, xs, h, is);
}
