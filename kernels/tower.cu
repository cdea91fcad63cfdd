// The codebook tower (engine/cpu/tower.go), the feedback row
// (engine/cpu/heads.go) and the frame counters. Projections run on the GEMV
// kernels (gemv.cu); these kernels are what sits between them. Every
// activation and the KV caches are float32; counters come from the frame
// control block so the kernels can be captured once and replayed per frame.
#include "common.cuh"
#include "frame_control.cuh"
#include "tower_embed.cuh"

// ---------------------------------------------------------------------------
// A one-row norm's values stay in registers: thread t holds elements
// t + i·blockDim.x, i < ROW_REGS, so width ≤ ROW_REGS·blockDim.x (the
// tower launches 1024 threads a row: engine/cuda TowerMaxDim). Each
// thread's partial sum of squares runs over its elements in that order, as
// a strided loop would.
#define ROW_REGS 8

__device__ __forceinline__ void load_row(float (&v)[ROW_REGS], const float* __restrict__ x, int width) {
#pragma unroll
    for (int i = 0; i < ROW_REGS; i++) {
        const int c = threadIdx.x + i * blockDim.x;
        v[i] = c < width ? x[c] : 0.f;
    }
}

// regs_inv_rms is row_inv_rms of the row held in v (every thread of the
// block calls it; red: 32 doubles of shared memory).
__device__ __forceinline__ float regs_inv_rms(const float (&v)[ROW_REGS], int width, float eps, double* red) {
    double ss = 0.0;
#pragma unroll
    for (int i = 0; i < ROW_REGS; i++)
        if (threadIdx.x + i * blockDim.x < width) ss += (double)v[i] * (double)v[i];
    return row_inv_rms(block_sum_f64(ss, red), width, eps);
}

// norm_row writes o = v·inv·w and leaves it in v.
__device__ __forceinline__ void norm_row(float* __restrict__ o, float (&v)[ROW_REGS], float inv,
                                         const float* __restrict__ w, int width) {
#pragma unroll
    for (int i = 0; i < ROW_REGS; i++) {
        const int c = threadIdx.x + i * blockDim.x;
        if (c < width) {
            v[i] = v[i] * inv * w[c];
            o[c] = v[i];
        }
    }
}

// ---------------------------------------------------------------------------
// The eh_proj input of n rows: cat[r] = [enorm(mask·E[code]); hnorm(h[r])]
// (Tower.layer). table null: text rows, mask 0 (enorm of the zero vector).
// Otherwise one audio row embedding code ctrl->codes[code_slot] of the
// [entries, width] BF16 table; after end of speech (ctrl->end) code 0 stands
// in (the frame is discarded); a code out of range writes NaN and sets
// FRAME_ERR_BAD_CODE. Grid: (n), 1024 threads (ROW_REGS).
extern "C" __global__ void __launch_bounds__(1024) tower_eh_input(float* __restrict__ cat, const float* __restrict__ h,
                                          const uint16_t* __restrict__ table, FrameControl* ctrl, int code_slot,
                                          int entries, const float* __restrict__ enorm,
                                          const float* __restrict__ hnorm, int width, float eps) {
    pdl_entry();
    __shared__ double red[32];
    const int row = blockIdx.x;
    float* ce = cat + (size_t)row * 2 * width;
    float* ch = ce + width;
    const float* hr = h + (size_t)row * width;
    if (table == nullptr) {
        const float inv = row_inv_rms(0.0, width, eps);
        for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = 0.f * inv * enorm[c];
    } else {
        tower_embed_row(ce, table, ctrl->codes[code_slot], ctrl, entries, enorm, width, eps, red);
    }
    float v[ROW_REGS];
    load_row(v, hr, width);
    norm_row(ch, v, regs_inv_rms(v, width, eps, red), hnorm, width);
}

// ---------------------------------------------------------------------------
// The one-row norms between a layer's projections are strided loops that
// reread the row: holding it in registers instead (as tower_eh_input does)
// measured 1 µs slower a launch and 0.044 ms a frame (docs/PERF.md; code in
// 22c6bf8, tower_add_rmsnorm_regs and tower_out_eh_regs).

// Residual add and plain-gain RMSNorm of one row: xr += ar (when ar is not
// null), o = xr·inv·w (Add, then plainNormRows). red: 32 doubles of shared
// memory. Each thread rereads only the xr values it wrote.
__device__ __forceinline__ void add_rmsnorm_loops(float* o, float* xr, const float* ar, const float* __restrict__ w,
                                                  int width, float eps, double* red) {
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        float v = xr[c];
        if (ar) {
            v += ar[c];
            xr[c] = v;
        }
        ss += (double)v * (double)v;
    }
    const float inv = row_inv_rms(block_sum_f64(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = xr[c] * inv * w[c];
}

// The embedding half of an eh_proj input by emode (tower_out_eh).
__device__ __forceinline__ void eh_embed_half(float* __restrict__ ce, int emode, const uint16_t* __restrict__ table,
                                              FrameControl* ctrl, int code_slot, int entries,
                                              const float* __restrict__ enorm, int width, float eps, double* red) {
    if (emode == 0) {
        const float inv0 = row_inv_rms(0.0, width, eps);
        for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = 0.f * inv0 * enorm[c];
    } else if (emode == 1) {
        tower_embed_row(ce, table, ctrl->codes[code_slot], ctrl, entries, enorm, width, eps, red);
    }
}

// tower_out_eh's row with strided loops (hr, xr, ar: the row's h, x, add).
__device__ __forceinline__ void out_eh_loops(float* hr, float* xr, const float* ar, const float* __restrict__ out_w,
                                             float* ce, int emode, const uint16_t* __restrict__ table,
                                             FrameControl* ctrl, int code_slot, int entries,
                                             const float* __restrict__ enorm, const float* __restrict__ hnorm,
                                             int width, float eps, double* red) {
    add_rmsnorm_loops(hr, xr, ar, out_w, width, eps, red);
    float* ch = ce + width;
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        const float v = hr[c];
        ss += (double)v * (double)v;
    }
    const float inv = row_inv_rms(block_sum_f64(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) ch[c] = hr[c] * inv * hnorm[c];
    eh_embed_half(ce, emode, table, ctrl, code_slot, entries, enorm, width, eps, red);
}

// Residual add and plain-gain RMSNorm of n rows: x[r] += add[r] (when add is
// not null), out[r] = x[r]·inv·w. Grid: (n), any multiple of 32 threads up
// to 1024.
extern "C" __global__ void __launch_bounds__(1024) tower_add_rmsnorm(float* __restrict__ out, float* __restrict__ x,
                                             const float* __restrict__ add, const float* __restrict__ w, int width,
                                             float eps) {
    pdl_entry();
    __shared__ double red[32];
    const size_t r = (size_t)blockIdx.x * width;
    add_rmsnorm_loops(out + r, x + r, add ? add + r : nullptr, w, width, eps, red);
}

// A layer's end and the next layer's eh_proj input in one launch, n rows:
// x[r] += add[r], h[r] = out_norm(x[r]) (h_out, as tower_add_rmsnorm), then
// cat[r]'s hnorm half = hnorm(h[r]) of the next layer and its embedding
// half by emode: 0 text rows (enorm of the zero vector, as tower_eh_input
// with no table), 1 enorm(E[ctrl->codes[code_slot]]) of table (a code drawn
// before this layer), 2 left alone (the draw after this layer's head picks
// that code and writes it: sample_logits' embedding). Grid: (n), any
// multiple of 32 threads up to 1024.
extern "C" __global__ void __launch_bounds__(1024) tower_out_eh(
    float* __restrict__ h, float* __restrict__ x, const float* __restrict__ add, const float* __restrict__ out_w,
    float* __restrict__ cat, int emode, const uint16_t* __restrict__ table, FrameControl* ctrl, int code_slot,
    int entries, const float* __restrict__ enorm, const float* __restrict__ hnorm, int width, float eps) {
    pdl_entry();
    __shared__ double red[32];
    const size_t r = (size_t)blockIdx.x * width;
    out_eh_loops(h + r, x + r, add ? add + r : nullptr, out_w, cat + 2 * r, emode, table, ctrl, code_slot,
                 entries, enorm, hnorm, width, eps, red);
}

// ---------------------------------------------------------------------------
// Gate and up with their SwiGLU in one GEMV launch (engine/cuda
// towerFusion.gateUp). Its dot products run exactly as gemv.cu's t128r2u2
// instance's (the tower's GEMV: groups of 128 threads, two rows a group,
// 16-byte chunks j, j+128, … of a row per thread, two chunks' loads in
// flight per row, warp then group sums), so gate and up are the same bit for
// bit. (GEMVs whose last block also did the norm after them,
// tower_gemv_add_rmsnorm and tower_gemv_out_eh, measured 0.07 ms a frame
// slower each, docs/PERF.md; code in 22c6bf8.)
#define TG_THREADS 256  // engine/cuda towerGemvThreads
#define TG_TPR 128      // a group: one row of each matrix
#define TG_UNROLL 2

__device__ __forceinline__ float bf16_dot8(uint4 w, const float4* __restrict__ xv, int c) {
    const float4 x0 = __ldg(xv + 2 * c), x1 = __ldg(xv + 2 * c + 1);
    float s = bf16_lo(w.x) * x0.x;
    s = fmaf(bf16_hi(w.x), x0.y, s);
    s = fmaf(bf16_lo(w.y), x0.z, s);
    s = fmaf(bf16_hi(w.y), x0.w, s);
    s = fmaf(bf16_lo(w.z), x1.x, s);
    s = fmaf(bf16_hi(w.z), x1.y, s);
    s = fmaf(bf16_lo(w.w), x1.z, s);
    return fmaf(bf16_hi(w.w), x1.w, s);
}

// tower_dot2 leaves wr[0]·x and wr[1]·x (rows of cols BF16 values) in acc
// of thread 0 of each group of TG_TPR threads. Every thread of the block
// calls it (a block barrier).
__device__ __forceinline__ void tower_dot2(float (&acc)[2], const uint4* (&wr)[2], const float* __restrict__ x,
                                           int cols) {
    constexpr int WPG = TG_TPR / 32;
    const int group = threadIdx.x / TG_TPR, j = threadIdx.x % TG_TPR;
    const int chunks = cols / 8;
    const float4* xv = reinterpret_cast<const float4*>(x);
    acc[0] = acc[1] = 0.f;
    for (int base = j; base < chunks; base += TG_TPR * TG_UNROLL) {
        uint4 w[TG_UNROLL][2];
#pragma unroll
        for (int u = 0; u < TG_UNROLL; u++) {
            const int cc = min(base + u * TG_TPR, chunks - 1);  // past the end: reread, counted as zero
#pragma unroll
            for (int r = 0; r < 2; r++) w[u][r] = load_stream(wr[r] + cc);
        }
#pragma unroll
        for (int u = 0; u < TG_UNROLL; u++) {
            const int c = base + u * TG_TPR, cc = min(c, chunks - 1);
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const float s = bf16_dot8(w[u][r], xv, cc);
                acc[r] += c < chunks ? s : 0.f;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < 2; r++) acc[r] = warp_sum(acc[r]);
    __shared__ float part[TG_THREADS / 32][2];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        part[warp][0] = acc[0];
        part[warp][1] = acc[1];
    }
    __syncthreads();
    if (j == 0) {
#pragma unroll
        for (int r = 0; r < 2; r++) {
            float s = 0.f;
#pragma unroll
            for (int k = 0; k < WPG; k++) s += part[group * WPG + k][r];
            acc[r] = s;
        }
    }
}

// Gate and up with SwiGLU (FeedForward): out[r] = silu(W1[r]·x)·(W3[r]·x),
// each group of 128 threads one row of both matrices; the same values as
// the two-matrix GEMV followed by swiglu_f32, a launch less. Grid:
// (ceil(rows/2)), TG_THREADS.
extern "C" __global__ void __launch_bounds__(TG_THREADS, 2) tower_gate_up_swiglu(
    float* __restrict__ out, const uint16_t* __restrict__ W1, const uint16_t* __restrict__ W3,
    const float* __restrict__ x, int rows, int cols) {
    const int group = threadIdx.x / TG_TPR;
    const int row = blockIdx.x * (TG_THREADS / TG_TPR) + group, rr = min(row, rows - 1);
    const uint4* wr[2] = {reinterpret_cast<const uint4*>(W1 + (size_t)rr * cols),
                          reinterpret_cast<const uint4*>(W3 + (size_t)rr * cols)};
    pdl_entry();
    float acc[2];
    tower_dot2(acc, wr, x, cols);
    if (threadIdx.x % TG_TPR == 0 && row < rows) {
        const float g = acc[0];
        out[row] = g / (1.f + expf(-g)) * acc[1];
    }
}

// ---------------------------------------------------------------------------
// rope_pair turns the pair (a, b) by (c, s), each product rounded on its
// own as the reference does (interleavedRope.apply).
__device__ __forceinline__ void rope_pair(float& a, float& b, float c, float s) {
    const float a0 = a, b0 = b;
    a = __fsub_rn(__fmul_rn(a0, c), __fmul_rn(b0, s));
    b = __fadd_rn(__fmul_rn(a0, s), __fmul_rn(b0, c));
}

// rope_float4 turns v, dims 4·d4 … 4·d4+3 of a head (pairs 2·d4 and
// 2·d4+1), at position pos; pairs from half on stay as they are.
__device__ __forceinline__ float4 rope_float4(float4 v, int d4, const float* __restrict__ cos_t,
                                              const float* __restrict__ sin_t, int pos, int half) {
    const int i = 2 * d4;
    const size_t at = (size_t)pos * half + i;
    if (i < half) rope_pair(v.x, v.y, cos_t[at], sin_t[at]);
    if (i + 1 < half) rope_pair(v.z, v.w, cos_t[at + 1], sin_t[at + 1]);
    return v;
}

// ---------------------------------------------------------------------------
// Interleaved-pair RoPE and the KV append of n rows at positions ctrl->pos+r
// (Tower.attention, interleavedRope.apply): the pair (x[2i], x[2i+1]), i <
// half, of every query and key head turns by the uploaded table's cos and
// sin at the row's position ([max_rows, half] each, TowerRopeTable); queries
// are rotated in place in qkv, keys written rotated to the key cache, values
// copied to the value cache ([max_rows, nkv·hd] each). A row past max_rows
// sets FRAME_ERR_KV_FULL and writes nothing. Grid: (n).
extern "C" __global__ void tower_rope_append(float* __restrict__ qkv, float* __restrict__ kc, float* __restrict__ vc,
                                             const float* __restrict__ cos_t, const float* __restrict__ sin_t,
                                             FrameControl* ctrl, int nh, int nkv, int hd, int half, int max_rows) {
    pdl_entry();
    const int t = blockIdx.x, pos = ctrl->pos + t;
    if (pos >= max_rows) {
        if (threadIdx.x == 0) atomicOr(&ctrl->error, FRAME_ERR_KV_FULL);
        return;
    }
    float* row = qkv + (size_t)t * (nh + 2 * nkv) * hd;
    for (int e = threadIdx.x; e < (nh + nkv) * half; e += blockDim.x) {
        const int head = e / half, i = e % half;
        float* x = row + head * hd + 2 * i;
        rope_pair(x[0], x[1], cos_t[(size_t)pos * half + i], sin_t[(size_t)pos * half + i]);
    }
    __syncthreads();
    const int kvw = nkv * hd;
    for (int e = threadIdx.x; e < kvw; e += blockDim.x) {
        kc[(size_t)pos * kvw + e] = row[nh * hd + e];
        vc[(size_t)pos * kvw + e] = row[(nh + nkv) * hd + e];
    }
}

// ---------------------------------------------------------------------------
// Grouped-query causal attention of n rows (causalAttention, ungated): query
// head h of row r (position ctrl->pos+r) against the cached keys of rows
// 0…pos+r of KV head h/(nh/nkv), softmax in float32 with scale, applied to
// the values. The keys are split into ATTN_SPLITS ranges, one block each, so
// a long cache is read by many multiprocessors (flash-decoding): a warp per
// key (lanes read the row as float4s), an online softmax per warp, merged
// per block into part ([n, nh, ATTN_SPLITS, hd+2]: max, sum, then the
// unnormalised output); the last block of a (row, head) to finish, counted
// in counters ([n, nh], zero between launches), merges the splits and
// writes the output. hd is a multiple of 4, at most ATTN_MAX_HD.
// Grid: (nh, ATTN_SPLITS, n).
#define ATTN_SPLITS 16
#define ATTN_WARPS 8  // engine/cuda towerAttnThreads = ATTN_WARPS·32
#define ATTN_MAX_HD 256
//
// attend_body<true> (tower_attend_rope, one row) also does tower_rope_append's
// work: each block turns its query head in registers, the row's own key is
// read from qkv and turned where the cache would be read, and the block of
// the first query head of each KV group that meets the row stores its key
// and value in the caches (no block of this launch reads that cache row).
// A row past max_rows sets FRAME_ERR_KV_FULL.
template <bool ROPE>
__device__ __forceinline__ void attend_body(float* __restrict__ attn, const float* __restrict__ qkv,
                                            float* __restrict__ kc, float* __restrict__ vc, FrameControl* ctrl,
                                            float* __restrict__ part, int* __restrict__ counters,
                                            const float* __restrict__ cos_t, const float* __restrict__ sin_t,
                                            int nh, int nkv, int hd, int half, float scale, int max_rows) {
    pdl_entry();
    __shared__ float wm[ATTN_WARPS], wl[ATTN_WARPS];
    __shared__ float4 wo[ATTN_WARPS][ATTN_MAX_HD / 4];
    __shared__ bool last_block;
    const int h = blockIdx.x, split = blockIdx.y, t = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int last = ctrl->pos + t;
    float* o = attn + ((size_t)t * nh + h) * hd;
    if (last >= max_rows) {  // rope_append flagged it (or this launch does)
        if (split == 0)
            for (int d = threadIdx.x; d < hd; d += blockDim.x) o[d] = __int_as_float(0x7fc00000);
        if (ROPE && split == 0 && h == 0 && threadIdx.x == 0) atomicOr(&ctrl->error, FRAME_ERR_KV_FULL);
        return;
    }
    const int kvh = h / (nh / nkv), kvw = nkv * hd, hd4 = hd / 4;
    const float4* q4 = reinterpret_cast<const float4*>(qkv + (size_t)t * (nh + 2 * nkv) * hd + h * hd);
    const float* own = qkv + (size_t)t * (nh + 2 * nkv) * hd + (nh + kvh) * hd;  // the row's key, then value at nkv·hd
    const bool store = ROPE && h % (nh / nkv) == 0;
    float4 q[ATTN_MAX_HD / 128], acc[ATTN_MAX_HD / 128];
#pragma unroll
    for (int r = 0; r < ATTN_MAX_HD / 128; r++) {
        const int d4 = lane + 32 * r;
        q[r] = d4 < hd4 ? q4[d4] : make_float4(0.f, 0.f, 0.f, 0.f);
        if (ROPE && d4 < hd4) q[r] = rope_float4(q[r], d4, cos_t, sin_t, last, half);
        acc[r] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    const int rows = last + 1, chunk = (rows + ATTN_SPLITS - 1) / ATTN_SPLITS;
    const int p0 = split * chunk, p1 = min(p0 + chunk, rows);
    float m = -INFINITY, l = 0.f;
    for (int p = p0 + warp; p < p1; p += ATTN_WARPS) {
        const bool self = ROPE && p == last;  // the row itself: from qkv, not yet cached
        float4* kd = reinterpret_cast<float4*>(kc + (size_t)p * kvw + kvh * hd);
        float4* vd = reinterpret_cast<float4*>(vc + (size_t)p * kvw + kvh * hd);
        const float4* k4 = self ? reinterpret_cast<const float4*>(own) : kd;
        const float4* v4 = self ? reinterpret_cast<const float4*>(own + nkv * hd) : vd;
        // The key's and value's loads issued together, before any use.
        float4 kr[ATTN_MAX_HD / 128], vr[ATTN_MAX_HD / 128];
#pragma unroll
        for (int r = 0; r < ATTN_MAX_HD / 128; r++) {
            const int d4 = lane + 32 * r;
            if (d4 < hd4) {
                kr[r] = k4[d4];
                vr[r] = v4[d4];
            }
        }
        float dot = 0.f;
#pragma unroll
        for (int r = 0; r < ATTN_MAX_HD / 128; r++) {
            const int d4 = lane + 32 * r;
            if (d4 < hd4) {
                float4 k = kr[r];
                if (self) {
                    k = rope_float4(k, d4, cos_t, sin_t, last, half);
                    if (store) {
                        kd[d4] = k;
                        vd[d4] = vr[r];
                    }
                }
                dot += q[r].x * k.x + q[r].y * k.y + q[r].z * k.z + q[r].w * k.w;
            }
        }
        const float sc = warp_sum(dot) * scale;
        const float mn = fmaxf(m, sc), corr = expf(m - mn), e = expf(sc - mn);
        l = l * corr + e;
#pragma unroll
        for (int r = 0; r < ATTN_MAX_HD / 128; r++) {
            const int d4 = lane + 32 * r;
            if (d4 < hd4) {
                const float4 v = vr[r];
                acc[r].x = acc[r].x * corr + e * v.x;
                acc[r].y = acc[r].y * corr + e * v.y;
                acc[r].z = acc[r].z * corr + e * v.z;
                acc[r].w = acc[r].w * corr + e * v.w;
            }
        }
        m = mn;
    }
    if (lane == 0) {
        wm[warp] = m;
        wl[warp] = l;
    }
#pragma unroll
    for (int r = 0; r < ATTN_MAX_HD / 128; r++) {
        const int d4 = lane + 32 * r;
        if (d4 < hd4) wo[warp][d4] = acc[r];
    }
    __syncthreads();
    // This block's partial: max, sum and output over its warps (a warp that
    // saw no key has sum 0 and counts for nothing).
    float bm = -INFINITY;
    for (int w = 0; w < ATTN_WARPS; w++)
        if (wl[w] > 0.f) bm = fmaxf(bm, wm[w]);
    float* mine = part + (((size_t)t * nh + h) * ATTN_SPLITS + split) * (hd + 2);
    float bl = 0.f;
    for (int w = 0; w < ATTN_WARPS; w++)
        if (wl[w] > 0.f) bl += wl[w] * expf(wm[w] - bm);
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float s = 0.f;
        for (int w = 0; w < ATTN_WARPS; w++)
            if (wl[w] > 0.f) s += reinterpret_cast<const float*>(wo[w])[d] * expf(wm[w] - bm);
        mine[2 + d] = s;
    }
    if (threadIdx.x == 0) {
        mine[0] = bm;
        mine[1] = bl;
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        int* c = counters + (size_t)t * nh + h;
        last_block = atomicAdd(c, 1) == ATTN_SPLITS - 1;
        if (last_block) *c = 0;  // ready for the next launch
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    const float* all = part + ((size_t)t * nh + h) * ATTN_SPLITS * (hd + 2);
    // The merge: warp 0 reads every split's max and sum at once (lane sp)
    // and leaves each split's weight exp(max − global max) (0 for a split
    // that saw no key) and the total sum; then each output is one sum of
    // independent loads.
    __shared__ float sw[ATTN_SPLITS], sgl;
    if (warp == 0) {
        float ms = -INFINITY, ls = 0.f;
        if (lane < ATTN_SPLITS) {
            ls = __ldcg(all + lane * (hd + 2) + 1);
            if (ls > 0.f) ms = __ldcg(all + lane * (hd + 2));
        }
        float gm = ms;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) gm = fmaxf(gm, __shfl_xor_sync(FULL_MASK, gm, off));
        const float w = ls > 0.f ? expf(ms - gm) : 0.f;
        if (lane < ATTN_SPLITS) sw[lane] = w;
        const float gl = warp_sum(ls * w);
        if (lane == 0) sgl = gl;
    }
    __syncthreads();
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float s = 0.f;
#pragma unroll
        for (int sp = 0; sp < ATTN_SPLITS; sp++) s += __ldcg(all + sp * (hd + 2) + 2 + d) * sw[sp];
        o[d] = s / sgl;
    }
}

extern "C" __global__ void __launch_bounds__(ATTN_WARPS * 32) tower_attend(
    float* __restrict__ attn, const float* __restrict__ qkv, float* __restrict__ kc, float* __restrict__ vc,
    FrameControl* ctrl, float* __restrict__ part, int* __restrict__ counters, int nh, int nkv, int hd, float scale,
    int max_rows) {
    attend_body<false>(attn, qkv, kc, vc, ctrl, part, counters, nullptr, nullptr, nh, nkv, hd, 0, scale, max_rows);
}

// tower_attend_rope is tower_rope_append and tower_attend of one row (n = 1)
// in one launch. Grid: (nh, ATTN_SPLITS, 1).
extern "C" __global__ void __launch_bounds__(ATTN_WARPS * 32) tower_attend_rope(
    float* __restrict__ attn, const float* __restrict__ qkv, float* __restrict__ kc, float* __restrict__ vc,
    FrameControl* ctrl, float* __restrict__ part, int* __restrict__ counters, const float* __restrict__ cos_t,
    const float* __restrict__ sin_t, int nh, int nkv, int hd, int half, float scale, int max_rows) {
    attend_body<true>(attn, qkv, kc, vc, ctrl, part, counters, cos_t, sin_t, nh, nkv, hd, half, scale, max_rows);
}

// ---------------------------------------------------------------------------
// The feedback row (AudioHeads.FeedbackRow) of the frame's codes
// ctrl->codes[0..ncb): (E_text[sem_tokens[c0]] + Σ_i E_cb_i[c_i]) / div,
// summed in float32 in that order; tables holds the ncb BF16 codebook tables'
// addresses, entries their sizes. A code out of range (end of speech) writes
// NaN: no backbone step follows it. The frame's counters step as
// tower_advance's (1 row, 1 frame): this is the frame's last launch, and it
// reads neither counter. Grid: (1), 1024 threads.
extern "C" __global__ void __launch_bounds__(1024) tower_feedback(float* __restrict__ out, const uint16_t* __restrict__ text_embed,
                                          const int32_t* __restrict__ sem_tokens,
                                          const unsigned long long* __restrict__ tables,
                                          const int32_t* __restrict__ entries, FrameControl* ctrl, int ncb,
                                          int width, float div) {
    pdl_entry();
    if (threadIdx.x == 0) {
        ctrl->pos += 1;
        ctrl->frame += 1;
    }
    // The rows' addresses found once (thread i: codebook i) and shared; then
    // per column every row's value is loaded at once and summed in order.
    __shared__ const uint16_t* rows[FRAME_MAX_CODEBOOKS + 1];  // the text row, then codebook i's
    __shared__ int bad;
    if (threadIdx.x == 0) bad = 0;
    __syncthreads();
    if (threadIdx.x < ncb) {
        const int i = threadIdx.x, code = ctrl->codes[i];
        if (code < 0 || code >= entries[i]) {
            bad = 1;
        } else {
            rows[i + 1] = reinterpret_cast<const uint16_t*>(tables[i]) + (size_t)code * width;
            if (i == 0) rows[0] = text_embed + (size_t)sem_tokens[code] * width;
        }
    }
    __syncthreads();
    if (bad) {
        for (int c = threadIdx.x; c < width; c += blockDim.x) out[c] = __int_as_float(0x7fc00000);
        return;
    }
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        uint32_t v[FRAME_MAX_CODEBOOKS + 1];
#pragma unroll
        for (int i = 0; i <= FRAME_MAX_CODEBOOKS; i++) v[i] = i <= ncb ? rows[i][c] : 0u;
        float s = __int_as_float(v[0] << 16);
#pragma unroll
        for (int i = 1; i <= FRAME_MAX_CODEBOOKS; i++)
            if (i <= ncb) s += __int_as_float(v[i] << 16);
        out[c] = s / div;
    }
}

// ---------------------------------------------------------------------------
// Counters: rows more tower rows done, frames more frames drawn. Grid: (1).
extern "C" __global__ void tower_advance(FrameControl* ctrl, int rows, int frames) {
    pdl_entry();
    if (threadIdx.x == 0) {
        ctrl->pos += rows;
        ctrl->frame += frames;
    }
}

// ---------------------------------------------------------------------------
// BF16 row gather (for the semantic head taken from LM head rows):
// dst[i, :] = src[ids[i], :]. Grid: (n).
extern "C" __global__ void bf16_gather_rows(uint16_t* __restrict__ dst, const uint16_t* __restrict__ src,
                                            const int32_t* __restrict__ ids, int width) {
    pdl_entry();
    const uint16_t* s = src + (size_t)ids[blockIdx.x] * width;
    uint16_t* d = dst + (size_t)blockIdx.x * width;
    for (int c = threadIdx.x; c < width; c += blockDim.x) d[c] = s[c];
}
