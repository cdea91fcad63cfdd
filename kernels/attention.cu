// Gated full attention after its projections (engine/cpu attentionForward
// between q/k/v_proj and o_proj): zero-centred q/k norms, partial rotate-half
// RoPE, the float32 KV cache, grouped-query causal attention split over the
// cached rows, and the sigmoid output gate.
#include "common.cuh"

// The position of the first new row (the rows already cached) is an int32
// in device memory, so a captured decode step replays at the right place.
// A row whose position is at or past the cache's capacity is not cached and
// its output is NaN: the host is told by the result, never by a fault.
#define ATT_THREADS 128
#define ATT_MAXD 8  // head dims per lane: head_dim ≤ 256
#define ATT_MAX_SPLITS 32  // engine/cuda attnMaxSplits
#define ATT_BATCH 8        // splits whose partials attn_combine loads at once

// The projected row: per query head [query (hd) | gate (hd)], then k and v
// (nkv·hd each): pw = (2·nh + 2·nkv)·hd floats.

// attn_prep: grid (n, nh + nkv). Block (t, hh) norms and rotates query head hh
// of row t into qn [n, nh, hd], or (hh ≥ nh) key head hh − nh into the cache
// at row pos+t, copying the value beside it. invFreq and the angle follow the
// reference: inv_freq[i] = 1/theta^(2i/rot) rounded to float32, the angle
// float32(pos)·inv_freq in float32, cos and sin in double rounded to float32.
extern "C" __global__ void __launch_bounds__(ATT_THREADS)
    attn_prep(float* __restrict__ qn, float* __restrict__ kc, float* __restrict__ vc, const float* __restrict__ proj,
              const float* __restrict__ qnorm, const float* __restrict__ knorm, const int32_t* __restrict__ posp,
              int capacity, int nh, int nkv, int hd, int rot, double theta, float eps) {
    __shared__ float buf[32 * ATT_MAXD];
    __shared__ double redd[ATT_THREADS / 32];
    pdl_entry();
    const int t = blockIdx.x, hh = blockIdx.y, tid = threadIdx.x;
    const int pw = (2 * nh + 2 * nkv) * hd;
    const int p = *posp + t;
    const float* prow = proj + (size_t)t * pw;
    const bool isq = hh < nh;
    const int kvh = hh - nh;
    if (p >= capacity) {
        if (isq)
            for (int d = tid; d < hd; d += ATT_THREADS) qn[((size_t)t * nh + hh) * hd + d] = __int_as_float(0x7fc00000);
        return;
    }
    const float* src = isq ? prow + (size_t)hh * 2 * hd : prow + (size_t)(2 * nh + kvh) * hd;
    const float* w = isq ? qnorm : knorm;
    double ss = 0.0;
    for (int d = tid; d < hd; d += ATT_THREADS) {
        const float x = src[d];
        buf[d] = x;
        ss += (double)x * (double)x;
    }
    ss = warp_sum_double(ss);
    if ((tid & 31) == 0) redd[tid >> 5] = ss;
    __syncthreads();
    double tot = 0.0;
    for (int i = 0; i < ATT_THREADS / 32; i++) tot += redd[i];
    const float inv = (float)(1.0 / sqrt(tot / (double)hd + (double)eps));
    for (int d = tid; d < hd; d += ATT_THREADS) buf[d] = buf[d] * inv * (1.f + w[d]);
    __syncthreads();
    float* dst = isq ? qn + ((size_t)t * nh + hh) * hd : kc + ((size_t)p * nkv + kvh) * hd;
    const int half = rot / 2;
    for (int d = tid; d < hd; d += ATT_THREADS) {
        float y = buf[d];
        if (d < rot) {
            const int i = d < half ? d : d - half;
            const float e = (float)(2 * i) / (float)rot;
            const float invf = (float)(1.0 / (double)(float)pow(theta, (double)e));
            const double a = (double)((float)p * invf);
            const float c = (float)cos(a), s = (float)sin(a);
            y = d < half ? buf[d] * c - buf[d + half] * s : buf[d] * c + buf[d - half] * s;
        }
        dst[d] = y;
    }
    if (!isq) {
        const float* vsrc = prow + (size_t)(2 * nh + nkv + kvh) * hd;
        float* vdst = vc + ((size_t)p * nkv + kvh) * hd;
        for (int d = tid; d < hd; d += ATT_THREADS) vdst[d] = vsrc[d];
    }
}

// attn_partial: grid (n·nh, splits). Row t sees the cached rows 0 … pos+t
// (causal), cut on the device into `splits` ranges of ceil((pos+t+1)/splits)
// rows, so a captured step splits a short cache as finely as a long one.
// Block (t·nh + h, s) runs an online softmax of row t's query head h over
// range s of KV head h/(nh/nkv), each warp over every fourth row, and writes
// (max, sum, Σ e^{score−max}·v) to part [n·nh, splits, hd+2] (an empty range:
// max −inf, sum 0).
extern "C" __global__ void __launch_bounds__(ATT_THREADS)
    attn_partial(float* __restrict__ part, const float* __restrict__ qn, const float* __restrict__ kc,
                 const float* __restrict__ vc, const int32_t* __restrict__ posp, int capacity, int nh, int nkv, int hd,
                 int splits, float scale) {
    __shared__ float wm[ATT_THREADS / 32], wl[ATT_THREADS / 32];
    __shared__ float wo[ATT_THREADS / 32][32 * ATT_MAXD];
    pdl_entry();
    const int item = blockIdx.x, sp = blockIdx.y;
    const int t = item / nh, h = item % nh, kvh = h / (nh / nkv);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int last = *posp + t;  // causal: rows 0 … last
    const int per = (last + splits) / splits;  // ceil((last + 1) / splits)
    const int r0 = sp * per, r1 = min(r0 + per, last + 1);
    float* out = part + ((size_t)item * splits + sp) * (hd + 2);
    if (last >= capacity || r0 >= r1) {
        if (threadIdx.x == 0) {
            out[0] = -INFINITY;
            out[1] = 0.f;
        }
        return;
    }
    float q[ATT_MAXD], o[ATT_MAXD];
    const float* qh = qn + (size_t)item * hd;
#pragma unroll
    for (int i = 0; i < ATT_MAXD; i++) {
        const int d = lane + 32 * i;
        q[i] = d < hd ? qh[d] : 0.f;
        o[i] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    for (int r = r0 + warp; r < r1; r += ATT_THREADS / 32) {
        const float* kr = kc + ((size_t)r * nkv + kvh) * hd;
        const float* vr = vc + ((size_t)r * nkv + kvh) * hd;
        float dot = 0.f;
#pragma unroll
        for (int i = 0; i < ATT_MAXD; i++) {
            const int d = lane + 32 * i;
            if (d < hd) dot += q[i] * kr[d];
        }
        const float sc = warp_sum(dot) * scale;
        const float mn = fmaxf(m, sc);
        const float corr = expf(m - mn), e = expf(sc - mn);
        l = l * corr + e;
#pragma unroll
        for (int i = 0; i < ATT_MAXD; i++) {
            const int d = lane + 32 * i;
            o[i] = o[i] * corr + (d < hd ? e * vr[d] : 0.f);
        }
        m = mn;
    }
    if (lane == 0) {
        wm[warp] = m;
        wl[warp] = l;
    }
#pragma unroll
    for (int i = 0; i < ATT_MAXD; i++) wo[warp][lane + 32 * i] = o[i];
    __syncthreads();
    float M = -INFINITY;
    for (int w = 0; w < ATT_THREADS / 32; w++) M = fmaxf(M, wm[w]);
    float f[ATT_THREADS / 32];
    float L = 0.f;
    for (int w = 0; w < ATT_THREADS / 32; w++) {
        f[w] = wl[w] > 0.f ? expf(wm[w] - M) : 0.f;  // a warp without rows has m = −inf
        L += wl[w] * f[w];
    }
    if (threadIdx.x == 0) {
        out[0] = M;
        out[1] = L;
    }
    for (int d = threadIdx.x; d < hd; d += ATT_THREADS) {
        float s = 0.f;
        for (int w = 0; w < ATT_THREADS / 32; w++) s += wo[w][d] * f[w];
        out[2 + d] = s;
    }
}

// attn_combine: grid (n·nh). Merges the splits of row t, head h, multiplies
// by sigmoid(gate) and writes attn [n, nh·hd] (the input of o_proj).
extern "C" __global__ void __launch_bounds__(ATT_THREADS)
    attn_combine(float* __restrict__ attn, const float* __restrict__ part, const float* __restrict__ proj,
                 const int32_t* __restrict__ posp, int capacity, int nh, int hd, int pw, int splits) {
    pdl_entry();
    const int item = blockIdx.x, t = item / nh, h = item % nh;
    float* o = attn + (size_t)item * hd;
    if (*posp + t >= capacity) {
        for (int d = threadIdx.x; d < hd; d += ATT_THREADS) o[d] = __int_as_float(0x7fc00000);
        return;
    }
    // Every split's (m, l) read at once into shared memory (at most
    // ATT_MAX_SPLITS), its factor e^(m − M) computed once; then each output
    // dimension's partials read ATT_BATCH splits at a time. The sums run
    // over the splits in order, as before: loads issued together, not one
    // latency per split.
    __shared__ float sm[ATT_MAX_SPLITS], sl[ATT_MAX_SPLITS], sf[ATT_MAX_SPLITS];
    const float* pp = part + (size_t)item * splits * (hd + 2);
    for (int s = threadIdx.x; s < splits; s += ATT_THREADS) {
        sm[s] = pp[(size_t)s * (hd + 2)];
        sl[s] = pp[(size_t)s * (hd + 2) + 1];
    }
    __syncthreads();
    float M = -INFINITY;
    for (int s = 0; s < splits; s++) M = fmaxf(M, sm[s]);
    for (int s = threadIdx.x; s < splits; s += ATT_THREADS) sf[s] = sl[s] > 0.f ? expf(sm[s] - M) : 0.f;
    __syncthreads();
    float L = 0.f;
    for (int s = 0; s < splits; s++)
        if (sl[s] > 0.f) L += sl[s] * sf[s];
    const float* gate = proj + (size_t)t * pw + (size_t)h * 2 * hd + hd;
    for (int d = threadIdx.x; d < hd; d += ATT_THREADS) {
        const float g = gate[d];
        float acc = 0.f;
        for (int s0 = 0; s0 < splits; s0 += ATT_BATCH) {
            float v[ATT_BATCH];
#pragma unroll
            for (int u = 0; u < ATT_BATCH; u++)  // an empty split wrote no partials
                v[u] = s0 + u < splits && sl[s0 + u] > 0.f ? pp[(size_t)(s0 + u) * (hd + 2) + 2 + d] : 0.f;
#pragma unroll
            for (int u = 0; u < ATT_BATCH; u++)
                if (s0 + u < splits && sl[s0 + u] > 0.f) acc += v[u] * sf[s0 + u];
        }
        o[d] = acc / L * (1.f / (1.f + (float)exp(-(double)g)));
    }
}

// add_i32: *p += v (the position counter, advanced inside a captured step).
extern "C" __global__ void add_i32(int32_t* p, int v) {
    pdl_entry();
    if (threadIdx.x == 0) *p += v;
}
