// The codebook tower (engine/cpu/tower.go), the feedback row
// (engine/cpu/heads.go) and the frame counters. Projections run on the GEMV
// kernels (gemv.cu); these kernels are what sits between them. Every
// activation and the KV caches are float32; counters come from the frame
// control block so the kernels can be captured once and replayed per frame.
#include "common.cuh"
#include "frame_control.cuh"

// Plain-gain RMSNorm of one row (RMSNorm, invRMS): the sum of squares in
// float64, inv = float32(1/sqrt(ss/width + eps)), y = x·inv·w in float32.
__device__ __forceinline__ float row_inv_rms(double ss, int width, float eps) {
    return (float)(1.0 / sqrt(ss / (double)width + (double)eps));
}

// ---------------------------------------------------------------------------
// The eh_proj input of n rows: cat[r] = [enorm(mask·E[code]); hnorm(h[r])]
// (Tower.layer). table null: text rows, mask 0 (enorm of the zero vector).
// Otherwise one audio row embedding code ctrl->codes[code_slot] of the
// [entries, width] BF16 table; after end of speech (ctrl->end) code 0 stands
// in (the frame is discarded); a code out of range writes NaN and sets
// FRAME_ERR_BAD_CODE. Grid: (n).
extern "C" __global__ void tower_eh_input(float* __restrict__ cat, const float* __restrict__ h,
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
        int code = ctrl->codes[code_slot];
        if (ctrl->end) code = 0;
        if (code < 0 || code >= entries) {
            for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = __int_as_float(0x7fc00000);
            if (threadIdx.x == 0) atomicOr(&ctrl->error, FRAME_ERR_BAD_CODE);
        } else {
            const uint16_t* er = table + (size_t)code * width;
            double ss = 0.0;
            for (int c = threadIdx.x; c < width; c += blockDim.x) {
                const double v = (double)__int_as_float((uint32_t)er[c] << 16);
                ss += v * v;
            }
            const float inv = row_inv_rms(block_sum_f64(ss, red), width, eps);
            for (int c = threadIdx.x; c < width; c += blockDim.x)
                ce[c] = __int_as_float((uint32_t)er[c] << 16) * inv * enorm[c];
        }
    }
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) ss += (double)hr[c] * (double)hr[c];
    const float inv = row_inv_rms(block_sum_f64(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) ch[c] = hr[c] * inv * hnorm[c];
}

// ---------------------------------------------------------------------------
// Residual add and plain-gain RMSNorm of n rows: x[r] += add[r] (when add is
// not null), out[r] = x[r]·inv·w (Add, then plainNormRows). Grid: (n).
extern "C" __global__ void tower_add_rmsnorm(float* __restrict__ out, float* __restrict__ x,
                                             const float* __restrict__ add, const float* __restrict__ w, int width,
                                             float eps) {
    pdl_entry();
    __shared__ double red[32];
    float* xr = x + (size_t)blockIdx.x * width;
    const float* ar = add ? add + (size_t)blockIdx.x * width : nullptr;
    float* o = out + (size_t)blockIdx.x * width;
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
        const float c = cos_t[(size_t)pos * half + i], s = sin_t[(size_t)pos * half + i];
        const float x0 = x[0], x1 = x[1];
        // Unfused, as the reference rounds each product.
        x[0] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
        x[1] = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
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
// the values. One block per (head, row): a thread per key for the scores
// (kept in shared memory), then each warp sums a stride of the rows for every
// dimension and the warps' partial sums are added. Grid: (nh, n).
#define ATTN_THREADS 256
#define ATTN_MAX_ROWS 8192
#define ATTN_MAX_HD 256
extern "C" __global__ void __launch_bounds__(ATTN_THREADS, 1) tower_attend(float* __restrict__ attn,
                                                                       const float* __restrict__ qkv,
                                                                       const float* __restrict__ kc,
                                                                       const float* __restrict__ vc,
                                                                       const FrameControl* ctrl, int nh, int nkv,
                                                                       int hd, float scale, int max_rows) {
    pdl_entry();
    __shared__ float scores[ATTN_MAX_ROWS];
    __shared__ float qs[ATTN_MAX_HD];
    __shared__ float part[ATTN_THREADS / 32][ATTN_MAX_HD];
    __shared__ float red[32];
    const int h = blockIdx.x, t = blockIdx.y;
    const int last = ctrl->pos + t;
    float* o = attn + ((size_t)t * nh + h) * hd;
    if (last >= max_rows) {  // rope_append flagged it
        for (int d = threadIdx.x; d < hd; d += blockDim.x) o[d] = __int_as_float(0x7fc00000);
        return;
    }
    const int kvh = h / (nh / nkv), kvw = nkv * hd;
    const float* q = qkv + (size_t)t * (nh + 2 * nkv) * hd + h * hd;
    for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = q[d];
    __syncthreads();

    float m = -INFINITY;
    for (int p = threadIdx.x; p <= last; p += blockDim.x) {
        const float* k = kc + (size_t)p * kvw + kvh * hd;
        float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;  // Dot's four partial sums
        int d = 0;
        for (; d + 4 <= hd; d += 4) {
            s0 += qs[d] * k[d];
            s1 += qs[d + 1] * k[d + 1];
            s2 += qs[d + 2] * k[d + 2];
            s3 += qs[d + 3] * k[d + 3];
        }
        for (; d < hd; d++) s0 += qs[d] * k[d];
        const float s = ((s0 + s1) + (s2 + s3)) * scale;
        scores[p] = s;
        m = fmaxf(m, s);
    }
    // Block max (warp max, then across warps).
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, off));
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); w++) m = fmaxf(m, red[w]);
    float sum = 0.f;
    for (int p = threadIdx.x; p <= last; p += blockDim.x) {
        const float e = expf(scores[p] - m);
        scores[p] = e;
        sum += e;
    }
    sum = block_sum(sum, red);  // its barriers also publish scores
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float acc[ATTN_MAX_HD / 32];
#pragma unroll
    for (int k = 0; k < ATTN_MAX_HD / 32; k++) acc[k] = 0.f;
    for (int p = warp; p <= last; p += ATTN_THREADS / 32) {
        const float wgt = scores[p] / sum;
        const float* v = vc + (size_t)p * kvw + kvh * hd;
#pragma unroll
        for (int k = 0; k < ATTN_MAX_HD / 32; k++) {
            const int d = lane + 32 * k;
            if (d < hd) acc[k] += wgt * v[d];
        }
    }
#pragma unroll
    for (int k = 0; k < ATTN_MAX_HD / 32; k++) {
        const int d = lane + 32 * k;
        if (d < hd) part[warp][d] = acc[k];
    }
    __syncthreads();
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float s = 0.f;
#pragma unroll
        for (int w = 0; w < ATTN_THREADS / 32; w++) s += part[w][d];
        o[d] = s;
    }
}

// ---------------------------------------------------------------------------
// The feedback row (AudioHeads.FeedbackRow) of the frame's codes
// ctrl->codes[0..ncb): (E_text[sem_tokens[c0]] + Σ_i E_cb_i[c_i]) / div,
// summed in float32 in that order; tables holds the ncb BF16 codebook tables'
// addresses, entries their sizes. A code out of range (end of speech) writes
// NaN: no backbone step follows it. Grid: (1).
extern "C" __global__ void tower_feedback(float* __restrict__ out, const uint16_t* __restrict__ text_embed,
                                          const int32_t* __restrict__ sem_tokens,
                                          const unsigned long long* __restrict__ tables,
                                          const int32_t* __restrict__ entries, const FrameControl* ctrl, int ncb,
                                          int width, float div) {
    pdl_entry();
    bool ok = true;
    for (int i = 0; i < ncb; i++) ok = ok && ctrl->codes[i] >= 0 && ctrl->codes[i] < entries[i];
    if (!ok) {
        for (int c = threadIdx.x; c < width; c += blockDim.x) out[c] = __int_as_float(0x7fc00000);
        return;
    }
    const uint16_t* tr = text_embed + (size_t)sem_tokens[ctrl->codes[0]] * width;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        float s = __int_as_float((uint32_t)tr[c] << 16);
        for (int i = 0; i < ncb; i++) {
            const uint16_t* t = reinterpret_cast<const uint16_t*>(tables[i]);
            s += __int_as_float((uint32_t)t[(size_t)ctrl->codes[i] * width + c] << 16);
        }
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
