// Gated full attention after its projections (engine/cpu attentionForward
// between q/k/v_proj and o_proj): zero-centred q/k norms, partial rotate-half
// RoPE, the float32 KV cache, grouped-query causal attention split over the
// cached rows, and the sigmoid output gate.
#include "common.cuh"
#include "frame_control.cuh"
#include "fused.cuh"

// The position of the first new row (the rows already cached) is an int32
// in device memory, so a captured decode step replays at the right place.
// A row whose position is at or past the cache's capacity is not cached and
// its output is NaN: the host is told by the result, never by a fault.
//
// Numerics (docs/MODEL.md "Numerics contract"): every value is the float32
// engine/cpu attentionCore computes. Norms: float64 sum of squares, the
// inverse rms in double rounded once, then (x·inv)·(1+w). RoPE: products
// rounded before the add (__fmul_rn). Scores: Dot (float64 products and sum,
// rounded once) times the scale. The softmax subtracts the maximum over all
// of a row's keys (attn_scores writes every score and each split's maximum;
// attn_partial takes the maximum of the splits'), e_p = (float)exp(s_p − m),
// and the sums Σ e_p and Σ e_p·v_pj are float64 (exact products) in any
// order; attn_combine divides them in double and rounds once. So any number
// of splits gives the CPU's bits. That is the Exact policy (numerics.cuh);
// under Fast the sums are float32, exp is __expf, the division float32.
#define ATT_THREADS 128
#define ATT_WARPS (ATT_THREADS / 32)
#define ATT_MAXD 8  // head dims per lane: head_dim ≤ 256
#define ATT_MAX_SPLITS 32  // engine/cuda attnMaxSplits

// The projected row: per query head [query (hd) | gate (hd)], then k and v
// (nkv·hd each): pw = (2·nh + 2·nkv)·hd floats.

// attn_prep: grid (ceil(n / ATT_PREP_ROWS), nh + nkv). Block (x, hh) norms
// and rotates query head hh of rows ATT_PREP_ROWS·x … (a warp a row in turn)
// into qn [n, nh, hd], or (hh ≥ nh) key head hh − nh into the cache at row
// pos+t, copying the value beside it. invFreq and the angle follow the
// reference: inv_freq[i] = 1/theta^(2i/rot) rounded to float32, the angle
// float32(pos)·inv_freq in float32; cos and sin in double rounded to
// float32 (Exact) or sincosf (Fast, as the decode step's attn_decode_fast).
// A block computes inv_freq once (before the PDL wait: it needs no input)
// and each of its rows' angles once, in shared memory; a block a (row,
// head), computing them for every element, took 19.4 µs a layer in a
// 300-row prefill, this 10.5 (docs/PERF.md "host18").
#define ATT_PREP_ROWS 8
template <class P>
__device__ __forceinline__ void attn_prep_body(float* __restrict__ qn, float* __restrict__ kc, float* __restrict__ vc,
                                               const float* __restrict__ proj, const float* __restrict__ qnorm,
                                               const float* __restrict__ knorm, const int32_t* __restrict__ posp, int n,
                                               int capacity, int nh, int nkv, int hd, int rot, double theta,
                                               float eps) {
    __shared__ float buf[ATT_WARPS][32 * ATT_MAXD];     // a warp's row, normed
    __shared__ float invf[16 * ATT_MAXD];               // inv_freq of pair i < rot/2
    __shared__ float2 cs[ATT_PREP_ROWS][16 * ATT_MAXD];  // cos, sin of row r's pair i
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int half = rot / 2;
    for (int i = tid; i < half; i += ATT_THREADS)
        invf[i] = (float)(1.0 / (double)(float)pow(theta, (double)__fdiv_rn((float)(2 * i), (float)rot)));
    pdl_entry();
    const int t0 = blockIdx.x * ATT_PREP_ROWS, hh = blockIdx.y;
    const int pw = (2 * nh + 2 * nkv) * hd;
    const int p0 = ld_dep(posp) + t0;
    const bool isq = hh < nh;
    const int kvh = hh - nh;
    __syncthreads();
    for (int e = tid; e < ATT_PREP_ROWS * half; e += ATT_THREADS) {
        const int r = e / half, i = e % half;
        const float a = __fmul_rn((float)(p0 + r), invf[i]);
        float c, s;
        if (P::exact) {
            c = (float)cos((double)a);
            s = (float)sin((double)a);
        } else {
            sincosf(a, &s, &c);
        }
        cs[r][i] = make_float2(c, s);
    }
    __syncthreads();
    const float* w = isq ? qnorm : knorm;
    float* const b = buf[warp];
    for (int r = warp; r < ATT_PREP_ROWS; r += ATT_WARPS) {
        const int t = t0 + r, p = p0 + r;
        if (t >= n) break;
        if (p >= capacity) {
            if (isq)
                for (int d = lane; d < hd; d += 32) qn[((size_t)t * nh + hh) * hd + d] = __int_as_float(0x7fc00000);
            continue;
        }
        const float* prow = proj + (size_t)t * pw;
        const float* src = isq ? prow + (size_t)hh * 2 * hd : prow + (size_t)(2 * nh + kvh) * hd;
        typename P::Sum ss = 0;
        for (int d = lane; d < hd; d += 32) {
            const float x = src[d];
            b[d] = x;
            ss += P::sq(x);  // Exact: an exact product, so a fused add rounds the same
        }
        const float inv = P::inv_rms(warp_sum(ss), hd, eps);
        for (int d = lane; d < hd; d += 32) b[d] = P::zc_norm(b[d], inv, w[d]);
        __syncwarp();
        float* dst = isq ? qn + ((size_t)t * nh + hh) * hd : kc + ((size_t)p * nkv + kvh) * hd;
        for (int d = lane; d < hd; d += 32) {
            float y = b[d];
            if (d < rot) {
                const float2 c = cs[r][d < half ? d : d - half];
                y = d < half ? __fsub_rn(__fmul_rn(b[d], c.x), __fmul_rn(b[d + half], c.y))
                             : __fadd_rn(__fmul_rn(b[d], c.x), __fmul_rn(b[d - half], c.y));
            }
            dst[d] = y;
        }
        __syncwarp();  // the row's reads of b before the next row's writes
        if (!isq) {
            const float* vsrc = prow + (size_t)(2 * nh + nkv + kvh) * hd;
            float* vdst = vc + ((size_t)p * nkv + kvh) * hd;
            for (int d = lane; d < hd; d += 32) vdst[d] = vsrc[d];
        }
    }
}

#define ATT_BOUNDS __launch_bounds__(ATT_THREADS)
NUMERICS_KERNEL(attn_prep, ATT_BOUNDS,
                (float* __restrict__ qn, float* __restrict__ kc, float* __restrict__ vc, const float* __restrict__ proj,
                 const float* __restrict__ qnorm, const float* __restrict__ knorm, const int32_t* __restrict__ posp,
                 int n, int capacity, int nh, int nkv, int hd, int rot, double theta, float eps),
                (qn, kc, vc, proj, qnorm, knorm, posp, n, capacity, nh, nkv, hd, rot, theta, eps))

// The rows of split sp of a row that sees the cached rows 0 … last (causal):
// `splits` ranges of ceil((last+1)/splits) rows, cut on the device so a
// captured step splits a short cache as finely as a long one.
__device__ __forceinline__ void attn_range(int last, int splits, int sp, int* r0, int* r1) {
    const int per = (last + splits) / splits;  // ceil((last + 1) / splits)
    *r0 = sp * per;
    *r1 = min(*r0 + per, last + 1);
}

// attn_scores: grid (n·nh, splits). Block (t·nh + h, s) computes the scores
// s_r = Dot(q, k_r)·scale of row t's query head h against the rows r of range
// s of KV head h/(nh/nkv) (each warp every fourth row), writes them to
// sc [n·nh, capacity] and their maximum to smax [n·nh, splits] (−inf for an
// empty range).
template <class P>
__device__ __forceinline__ void attn_scores_body(float* __restrict__ sc, float* __restrict__ smax,
                                                 const float* __restrict__ qn, const float* __restrict__ kc,
                                                 const int32_t* __restrict__ posp, int capacity, int nh, int nkv,
                                                 int hd, int splits, float scale) {
    __shared__ float wm[ATT_WARPS];
    pdl_entry();
    const int item = blockIdx.x, sp = blockIdx.y;
    const int t = item / nh, h = item % nh, kvh = h / (nh / nkv);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int last = ld_dep(posp) + t;
    int r0, r1;
    attn_range(last, splits, sp, &r0, &r1);
    if (last >= capacity || r0 >= r1) {
        if (threadIdx.x == 0) smax[(size_t)item * splits + sp] = -INFINITY;
        return;
    }
    float q[ATT_MAXD];
    const float* qh = qn + (size_t)item * hd;
#pragma unroll
    for (int i = 0; i < ATT_MAXD; i++) {
        const int d = lane + 32 * i;
        q[i] = d < hd ? qh[d] : 0.f;
    }
    float* srow = sc + (size_t)item * capacity;
    float m = -INFINITY;
    for (int r = r0 + warp; r < r1; r += ATT_WARPS) {
        const float* kr = kc + ((size_t)r * nkv + kvh) * hd;
        typename P::Sum dot = 0;
#pragma unroll
        for (int i = 0; i < ATT_MAXD; i++) {
            const int d = lane + 32 * i;
            if (d < hd) dot += P::prod(q[i], kr[d]);  // Exact: exact products
        }
        const float s = P::mul((float)warp_sum(dot), scale);
        if (lane == 0) srow[r] = s;
        m = fmaxf(m, s);
    }
    if (lane == 0) wm[warp] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        float M = wm[0];
        for (int w = 1; w < ATT_WARPS; w++) M = fmaxf(M, wm[w]);
        smax[(size_t)item * splits + sp] = M;
    }
}

NUMERICS_KERNEL(attn_scores, ATT_BOUNDS,
                (float* __restrict__ sc, float* __restrict__ smax, const float* __restrict__ qn,
                 const float* __restrict__ kc, const int32_t* __restrict__ posp, int capacity, int nh, int nkv, int hd,
                 int splits, float scale),
                (sc, smax, qn, kc, posp, capacity, nh, nkv, hd, splits, scale))

// attn_partial: grid (n·nh, splits). Block (item, s) takes the maximum m of
// every split's (the row's global maximum) and, over the rows of range s,
// the float64 sums L = Σ e_r and O_j = Σ e_r·v_rj with e_r = (float)exp(s_r − m),
// written to part [n·nh, splits, 1 + hd] doubles (zeros for an empty range).
// Each warp takes 32 rows at a time: lane l forms e of row l, then the warp
// walks the 32 rows, lane l adding dims l, l+32, … of each value.
template <class P>
__device__ __forceinline__ void attn_partial_body(double* __restrict__ partd, const float* __restrict__ sc,
                                                  const float* __restrict__ smax, const float* __restrict__ vc,
                                                  const int32_t* __restrict__ posp, int capacity, int nh, int nkv,
                                                  int hd, int splits) {
    typedef typename P::Sum Sum;
    Sum* __restrict__ part = reinterpret_cast<Sum*>(partd);
    __shared__ Sum wl[ATT_WARPS];
    __shared__ Sum wo[ATT_WARPS][32 * ATT_MAXD];
    pdl_entry();
    const int item = blockIdx.x, sp = blockIdx.y;
    const int t = item / nh, h = item % nh, kvh = h / (nh / nkv);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int last = ld_dep(posp) + t;
    int r0, r1;
    attn_range(last, splits, sp, &r0, &r1);
    Sum* out = part + ((size_t)item * splits + sp) * (hd + 1);
    if (last >= capacity || r0 >= r1) {
        for (int d = threadIdx.x; d <= hd; d += ATT_THREADS) out[d] = 0;
        return;
    }
    float m = -INFINITY;
    for (int s = 0; s < splits; s++) m = fmaxf(m, smax[(size_t)item * splits + s]);
    const float* srow = sc + (size_t)item * capacity;
    Sum o[ATT_MAXD];
#pragma unroll
    for (int i = 0; i < ATT_MAXD; i++) o[i] = 0;
    Sum l = 0;
    for (int base = r0 + 32 * warp; base < r1; base += 32 * ATT_WARPS) {
        const int cnt = min(32, r1 - base);
        const float e = lane < cnt ? P::exp(P::sub(srow[base + lane], m)) : 0.f;
        l += (Sum)e;
        for (int j = 0; j < cnt; j++) {
            const float ej = __shfl_sync(FULL_MASK, e, j);
            const float* vr = vc + ((size_t)(base + j) * nkv + kvh) * hd;
#pragma unroll
            for (int i = 0; i < ATT_MAXD; i++) {
                const int d = lane + 32 * i;
                if (d < hd) o[i] += P::prod(ej, vr[d]);  // Exact: exact products
            }
        }
    }
    l = warp_sum(l);
    if (lane == 0) wl[warp] = l;
#pragma unroll
    for (int i = 0; i < ATT_MAXD; i++) wo[warp][lane + 32 * i] = o[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        Sum L = 0;
        for (int w = 0; w < ATT_WARPS; w++) L += wl[w];
        out[0] = L;
    }
    for (int d = threadIdx.x; d < hd; d += ATT_THREADS) {
        Sum s = 0;
        for (int w = 0; w < ATT_WARPS; w++) s += wo[w][d];
        out[1 + d] = s;
    }
}
// part is [n·nh, splits, 1 + hd] of the policy's sums (Exact: doubles; Fast:
// floats in the first half of the same buffer).
NUMERICS_KERNEL(attn_partial, ATT_BOUNDS,
                (double* __restrict__ part, const float* __restrict__ sc, const float* __restrict__ smax,
                 const float* __restrict__ vc, const int32_t* __restrict__ posp, int capacity, int nh, int nkv, int hd,
                 int splits),
                (part, sc, smax, vc, posp, capacity, nh, nkv, hd, splits))

// attn_combine: grid (n·nh). Sums the splits of row t, head h (float64),
// divides in double and rounds once, multiplies by sigmoid(gate) and writes
// attn [n, nh·hd] (the input of o_proj).
// attn_combine_item is item's part (LD reads part, fused.cuh).
template <class P, class LD>
__device__ __forceinline__ void attn_combine_item(int item, float* __restrict__ attn, const double* __restrict__ partd,
                                                  const float* __restrict__ proj, const int32_t* __restrict__ posp,
                                                  int capacity, int nh, int hd, int pw, int splits) {
    typedef typename P::Sum Sum;
    const Sum* __restrict__ part = reinterpret_cast<const Sum*>(partd);
    const int t = item / nh, h = item % nh;
    float* o = attn + (size_t)item * hd;
    if (ld_dep(posp) + t >= capacity) {
        for (int d = threadIdx.x; d < hd; d += ATT_THREADS) o[d] = __int_as_float(0x7fc00000);
        return;
    }
    const Sum* pp = part + (size_t)item * splits * (hd + 1);
    // Every thread sums the splits' L itself, and each dimension's splits,
    // with all ATT_MAX_SPLITS loads issued before the first add (one wait for
    // memory, not one per split); the adds run in split order as before.
    Sum ls[ATT_MAX_SPLITS];
#pragma unroll
    for (int s = 0; s < ATT_MAX_SPLITS; s++) ls[s] = s < splits ? LD::ld(pp + (size_t)s * (hd + 1)) : Sum(0);
    Sum L = 0;
#pragma unroll
    for (int s = 0; s < ATT_MAX_SPLITS; s++)
        if (s < splits) L += ls[s];
    const float* gate = proj + (size_t)t * pw + (size_t)h * 2 * hd + hd;
    for (int d = threadIdx.x; d < hd; d += ATT_THREADS) {
        const float g = gate[d];
        Sum os[ATT_MAX_SPLITS];
#pragma unroll
        for (int s = 0; s < ATT_MAX_SPLITS; s++) os[s] = s < splits ? LD::ld(pp + (size_t)s * (hd + 1) + 1 + d) : Sum(0);
        Sum acc = 0;
#pragma unroll
        for (int s = 0; s < ATT_MAX_SPLITS; s++)
            if (s < splits) acc += os[s];
        o[d] = P::mul(P::div(acc, L), P::sigmoid(g));
    }
}
template <class P>
__device__ __forceinline__ void attn_combine_body(float* __restrict__ attn, const double* __restrict__ partd,
                                                  const float* __restrict__ proj, const int32_t* __restrict__ posp,
                                                  int capacity, int nh, int hd, int pw, int splits) {
    pdl_entry();
    attn_combine_item<P, LoadPlain>(blockIdx.x, attn, partd, proj, posp, capacity, nh, hd, pw, splits);
}
NUMERICS_KERNEL(attn_combine, ATT_BOUNDS,
                (float* __restrict__ attn, const double* __restrict__ part, const float* __restrict__ proj,
                 const int32_t* __restrict__ posp, int capacity, int nh, int hd, int pw, int splits),
                (attn, part, proj, posp, capacity, nh, hd, pw, splits))

// The fused step's attention (Fast only: engine/cuda Backbone.Fused):
// attn_partial_fast, then in the last of each item's splits blocks
// (fused.cuh, counters[item]) attn_combine_fast's part for that item, on
// the same ATT_THREADS threads (its sums in the unfused kernel's order).
// Grid (n·nh, splits).
extern "C" __global__ void ATT_BOUNDS attn_partial_combine_fast(
    float* __restrict__ attn, double* __restrict__ part, const float* __restrict__ sc, const float* __restrict__ smax,
    const float* __restrict__ vc, const float* __restrict__ proj, const int32_t* __restrict__ posp, int capacity,
    int nh, int nkv, int hd, int pw, int splits, unsigned int* counters) {
    attn_partial_body<Fast>(part, sc, smax, vc, posp, capacity, nh, nkv, hd, splits);
    if (!last_of(counters + blockIdx.x, gridDim.y)) return;
    attn_combine_item<Fast, LoadL2>(blockIdx.x, attn, part, proj, posp, capacity, nh, hd, pw, splits);
}

// ---------------------------------------------------------------------------
// The decode attention of B rows of B takes (engine/cuda Backbone.StepRows):
// the one-row kernels above with the rows in blockIdx.z. Row b belongs to the
// take in slot slots[b]: its KV cache lies slots[b]·slot_stride floats after
// kc and vc (each slot a copy of the one-take state layout) and its position
// is posp[slots[b]]. proj, qn, the scores, maxima, partials and outputs hold
// the B rows one after another as they hold a prefill's rows. Each row runs
// the one-row body on its own row, cache and position (grids: prep (1, nh +
// nkv, B), scores and partial (nh, splits, B), combine (nh, 1, B)), so a
// take's values are those it has stepped alone, under either policy. slots
// was copied by the host before the step: it is read before the PDL wait.
struct AttnSlot {
    size_t row;      // b
    long long kv;    // the slot's cache offset, floats
    const int32_t* pos;
    __device__ __forceinline__ AttnSlot(const int32_t* __restrict__ slots, long long slot_stride,
                                        const int32_t* __restrict__ posp) {
        row = blockIdx.z;
        const int s = slots[row];
        kv = (long long)s * slot_stride;
        pos = posp + s;
    }
};

template <class P>
__device__ __forceinline__ void attn_prep_slots_body(float* __restrict__ qn, float* __restrict__ kc,
                                                     float* __restrict__ vc, const float* __restrict__ proj,
                                                     const float* __restrict__ qnorm, const float* __restrict__ knorm,
                                                     const int32_t* __restrict__ posp, int capacity, int nh, int nkv,
                                                     int hd, int rot, double theta, float eps,
                                                     const int32_t* __restrict__ slots, long long slot_stride) {
    const AttnSlot a(slots, slot_stride, posp);
    const size_t pw = (size_t)(2 * nh + 2 * nkv) * hd;
    attn_prep_body<P>(qn + a.row * nh * hd, kc + a.kv, vc + a.kv, proj + a.row * pw, qnorm, knorm, a.pos, 1,
                      capacity, nh, nkv, hd, rot, theta, eps);
}
NUMERICS_KERNEL(attn_prep_slots, ATT_BOUNDS,
                (float* __restrict__ qn, float* __restrict__ kc, float* __restrict__ vc, const float* __restrict__ proj,
                 const float* __restrict__ qnorm, const float* __restrict__ knorm, const int32_t* __restrict__ posp,
                 int capacity, int nh, int nkv, int hd, int rot, double theta, float eps,
                 const int32_t* __restrict__ slots, long long slot_stride),
                (qn, kc, vc, proj, qnorm, knorm, posp, capacity, nh, nkv, hd, rot, theta, eps, slots, slot_stride))

template <class P>
__device__ __forceinline__ void attn_scores_slots_body(float* __restrict__ sc, float* __restrict__ smax,
                                                       const float* __restrict__ qn, const float* __restrict__ kc,
                                                       const int32_t* __restrict__ posp, int capacity, int nh, int nkv,
                                                       int hd, int splits, float scale,
                                                       const int32_t* __restrict__ slots, long long slot_stride) {
    const AttnSlot a(slots, slot_stride, posp);
    attn_scores_body<P>(sc + a.row * nh * capacity, smax + a.row * nh * splits, qn + a.row * nh * hd, kc + a.kv, a.pos,
                        capacity, nh, nkv, hd, splits, scale);
}
NUMERICS_KERNEL(attn_scores_slots, ATT_BOUNDS,
                (float* __restrict__ sc, float* __restrict__ smax, const float* __restrict__ qn,
                 const float* __restrict__ kc, const int32_t* __restrict__ posp, int capacity, int nh, int nkv, int hd,
                 int splits, float scale, const int32_t* __restrict__ slots, long long slot_stride),
                (sc, smax, qn, kc, posp, capacity, nh, nkv, hd, splits, scale, slots, slot_stride))

// part: the policy's sums (Exact doubles, Fast floats), row b's at b·nh·splits·(1 + hd).
template <class P>
__device__ __forceinline__ double* attn_part_row(double* partd, size_t row, int nh, int splits, int hd) {
    return reinterpret_cast<double*>(reinterpret_cast<typename P::Sum*>(partd) + row * nh * splits * (hd + 1));
}

template <class P>
__device__ __forceinline__ void attn_partial_slots_body(double* __restrict__ part, const float* __restrict__ sc,
                                                        const float* __restrict__ smax, const float* __restrict__ vc,
                                                        const int32_t* __restrict__ posp, int capacity, int nh,
                                                        int nkv, int hd, int splits,
                                                        const int32_t* __restrict__ slots, long long slot_stride) {
    const AttnSlot a(slots, slot_stride, posp);
    attn_partial_body<P>(attn_part_row<P>(part, a.row, nh, splits, hd), sc + a.row * nh * capacity,
                         smax + a.row * nh * splits, vc + a.kv, a.pos, capacity, nh, nkv, hd, splits);
}
NUMERICS_KERNEL(attn_partial_slots, ATT_BOUNDS,
                (double* __restrict__ part, const float* __restrict__ sc, const float* __restrict__ smax,
                 const float* __restrict__ vc, const int32_t* __restrict__ posp, int capacity, int nh, int nkv, int hd,
                 int splits, const int32_t* __restrict__ slots, long long slot_stride),
                (part, sc, smax, vc, posp, capacity, nh, nkv, hd, splits, slots, slot_stride))

template <class P>
__device__ __forceinline__ void attn_combine_slots_body(float* __restrict__ attn, const double* __restrict__ part,
                                                        const float* __restrict__ proj,
                                                        const int32_t* __restrict__ posp, int capacity, int nh,
                                                        int hd, int pw, int splits,
                                                        const int32_t* __restrict__ slots) {
    const AttnSlot a(slots, 0, posp);
    attn_combine_body<P>(attn + a.row * nh * hd,
                         attn_part_row<P>(const_cast<double*>(part), a.row, nh, splits, hd), proj + a.row * pw,
                         a.pos, capacity, nh, hd, pw, splits);
}
NUMERICS_KERNEL(attn_combine_slots, ATT_BOUNDS,
                (float* __restrict__ attn, const double* __restrict__ part, const float* __restrict__ proj,
                 const int32_t* __restrict__ posp, int capacity, int nh, int hd, int pw, int splits,
                 const int32_t* __restrict__ slots),
                (attn, part, proj, posp, capacity, nh, hd, pw, splits, slots))

// add_i32_slots: p[slots[b]] += v for the n rows' slots (each take's
// position, advanced inside a captured B-row step; the slots are distinct).
extern "C" __global__ void add_i32_slots(int32_t* p, const int32_t* __restrict__ slots, int n, int v) {
    pdl_entry();
    if (threadIdx.x < n) p[slots[threadIdx.x]] += v;
}

// add_i32: *p += v (the position counter, advanced inside a captured step).
extern "C" __global__ void add_i32(int32_t* p, int v) {
    pdl_entry();
    if (threadIdx.x == 0) *p += v;
}

// ===========================================================================
// The tower's attention (engine/cpu/tower.go Tower.attention): interleaved
// RoPE, the KV append and grouped-query causal attention of its rows, float32
// (not under the numerics contract).
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
// key (lanes read the row as float4s), an online softmax per warp, merged per
// block into part ([n, nh, ATTN_SPLITS, hd+2]: max, sum, then the
// unnormalised output); the last block of a (row, head) to finish, counted
// in counters ([n, nh], zero between launches), merges the splits and
// writes the output. hd is a multiple of 4, at most 128·HDR (ATTN_MAX_HD).
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
//
// attend_body<true, true> (tower_attend_rope_takes) is that over rows of
// different takes: row t is the frame row of the take in slot s =
// slots[t] (slots null: s = t), at position ctrl[s].pos of its own caches
// (kc, vc + s·kv_stride floats), its errors in ctrl[s].
//
// attend_body<…, FEW = true> (the _h128 instances: hd ≤ 128, a lane's head
// row in HDR = 1 float4) uses as few splits as its cache needs: ⌈rows /
// split_keys⌉ (at most ATTN_SPLITS; the grid's other blocks leave at once;
// split_keys ≤ 0: KEYS), each warp loading PREF = 8 keys and values at once
// (every load before the first use, then the keys in order), KEYS =
// ATTN_WARPS·PREF = 64 rows a pass of the block. One split — a cache of up
// to split_keys rows, a take's first frames — writes the output itself: no
// partial, counter or merge (the merge's value for one split). The caller
// picks split_keys by the launch's rows (engine/cuda towerAttnKeys): fewer
// keys a split, more blocks. Otherwise (FEW false: PREF 1, every split) the
// same as before: a key a warp at a time.
template <bool ROPE, bool TAKES = false, int HDR = ATTN_MAX_HD / 128, int PREF = 1, bool FEW = false>
__device__ __forceinline__ void attend_body(float* __restrict__ attn, const float* __restrict__ qkv,
                                            float* __restrict__ kc, float* __restrict__ vc, FrameControl* ctrl,
                                            float* __restrict__ part, int* __restrict__ counters,
                                            const float* __restrict__ cos_t, const float* __restrict__ sin_t,
                                            int nh, int nkv, int hd, int half, float scale, int max_rows,
                                            long long kv_stride = 0, const int32_t* __restrict__ slots = nullptr,
                                            int split_keys = 0) {
    constexpr int KEYS = ATTN_WARPS * PREF;
    pdl_entry();
    __shared__ float wm[ATTN_WARPS], wl[ATTN_WARPS];
    __shared__ float4 wo[ATTN_WARPS][ATTN_MAX_HD / 4];
    __shared__ bool last_block;
    const int h = blockIdx.x, split = blockIdx.y, t = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (TAKES) {
        const int s = slots ? slots[t] : t;
        ctrl += s;
        kc += (size_t)s * kv_stride;
        vc += (size_t)s * kv_stride;
    }
    const int last = ctrl->pos + (TAKES ? 0 : t);
    float* o = attn + ((size_t)t * nh + h) * hd;
    if (last >= max_rows) {  // rope_append flagged it (or this launch does)
        if (split == 0)
            for (int d = threadIdx.x; d < hd; d += blockDim.x) o[d] = __int_as_float(0x7fc00000);
        if (ROPE && split == 0 && h == 0 && threadIdx.x == 0) atomicOr(&ctrl->error, FRAME_ERR_KV_FULL);
        return;
    }
    const int sk = split_keys > 0 ? split_keys : KEYS;
    const int rows = last + 1, splits = FEW ? min(ATTN_SPLITS, (rows + sk - 1) / sk) : ATTN_SPLITS;
    if (FEW && split >= splits) return;  // a short cache: fewer splits
    const int kvh = h / (nh / nkv), kvw = nkv * hd, hd4 = hd / 4;
    const float4* q4 = reinterpret_cast<const float4*>(qkv + (size_t)t * (nh + 2 * nkv) * hd + h * hd);
    const float* own = qkv + (size_t)t * (nh + 2 * nkv) * hd + (nh + kvh) * hd;  // the row's key, then value at nkv·hd
    const bool store = ROPE && h % (nh / nkv) == 0;
    float4 q[HDR], acc[HDR];
#pragma unroll
    for (int r = 0; r < HDR; r++) {
        const int d4 = lane + 32 * r;
        q[r] = d4 < hd4 ? q4[d4] : make_float4(0.f, 0.f, 0.f, 0.f);
        if (ROPE && d4 < hd4) q[r] = rope_float4(q[r], d4, cos_t, sin_t, last, half);
        acc[r] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    const int chunk = (rows + splits - 1) / splits;
    const int p0 = split * chunk, p1 = min(p0 + chunk, rows);
    float m = -INFINITY, l = 0.f;
    for (int base = p0 + warp; base < p1; base += KEYS) {
        // The pass's keys and values of this warp (p = base + i·ATTN_WARPS),
        // every load issued before any use.
        float4 kr[PREF][HDR], vr[PREF][HDR];
#pragma unroll
        for (int i = 0; i < PREF; i++) {
            const int p = base + i * ATTN_WARPS;
            const bool self = ROPE && p == last;  // the row itself: from qkv, not yet cached
            const float4* k4 = self ? reinterpret_cast<const float4*>(own)
                                    : reinterpret_cast<const float4*>(kc + (size_t)p * kvw + kvh * hd);
            const float4* v4 = self ? reinterpret_cast<const float4*>(own + nkv * hd)
                                    : reinterpret_cast<const float4*>(vc + (size_t)p * kvw + kvh * hd);
#pragma unroll
            for (int r = 0; r < HDR; r++) {
                const int d4 = lane + 32 * r;
                if (p < p1 && d4 < hd4) {
                    kr[i][r] = k4[d4];
                    vr[i][r] = v4[d4];
                }
            }
        }
#pragma unroll
        for (int i = 0; i < PREF; i++) {
            const int p = base + i * ATTN_WARPS;
            if (p >= p1) break;
            const bool self = ROPE && p == last;
            float dot = 0.f;
#pragma unroll
            for (int r = 0; r < HDR; r++) {
                const int d4 = lane + 32 * r;
                if (d4 < hd4) {
                    float4 k = kr[i][r];
                    if (self) {
                        k = rope_float4(k, d4, cos_t, sin_t, last, half);
                        if (store) {
                            reinterpret_cast<float4*>(kc + (size_t)p * kvw + kvh * hd)[d4] = k;
                            reinterpret_cast<float4*>(vc + (size_t)p * kvw + kvh * hd)[d4] = vr[i][r];
                        }
                    }
                    dot += q[r].x * k.x + q[r].y * k.y + q[r].z * k.z + q[r].w * k.w;
                }
            }
            const float sc = warp_sum(dot) * scale;
            const float mn = fmaxf(m, sc), corr = expf(m - mn), e = expf(sc - mn);
            l = l * corr + e;
#pragma unroll
            for (int r = 0; r < HDR; r++) {
                const int d4 = lane + 32 * r;
                if (d4 < hd4) {
                    const float4 v = vr[i][r];
                    acc[r].x = acc[r].x * corr + e * v.x;
                    acc[r].y = acc[r].y * corr + e * v.y;
                    acc[r].z = acc[r].z * corr + e * v.z;
                    acc[r].w = acc[r].w * corr + e * v.w;
                }
            }
            m = mn;
        }
    }
    if (lane == 0) {
        wm[warp] = m;
        wl[warp] = l;
    }
#pragma unroll
    for (int r = 0; r < HDR; r++) {
        const int d4 = lane + 32 * r;
        if (d4 < hd4) wo[warp][d4] = acc[r];
    }
    __syncthreads();
    // This block's partial: max, sum and output over its warps (a warp that
    // saw no key has sum 0 and counts for nothing).
    float bm = -INFINITY;
    for (int w = 0; w < ATTN_WARPS; w++)
        if (wl[w] > 0.f) bm = fmaxf(bm, wm[w]);
    float bl = 0.f;
    for (int w = 0; w < ATTN_WARPS; w++)
        if (wl[w] > 0.f) bl += wl[w] * expf(wm[w] - bm);
    if (FEW && splits == 1) {  // the whole row's keys: the output (the merge's value for one split)
        for (int d = threadIdx.x; d < hd; d += blockDim.x) {
            float s = 0.f;
            for (int w = 0; w < ATTN_WARPS; w++)
                if (wl[w] > 0.f) s += reinterpret_cast<const float*>(wo[w])[d] * expf(wm[w] - bm);
            o[d] = s / bl;
        }
        return;
    }
    float* mine = part + (((size_t)t * nh + h) * ATTN_SPLITS + split) * (hd + 2);
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
        last_block = atomicAdd(c, 1) == splits - 1;
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
        if (lane < splits) {
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
        for (int sp = 0; sp < splits; sp++) s += __ldcg(all + sp * (hd + 2) + 2 + d) * sw[sp];
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

// tower_attend_rope_takes is tower_attend_rope over n rows of n takes (row
// t: the take in slot s = slots[t], slots null: s = t; its control block
// ctrl[s], its caches at kc, vc + s·kv_stride floats). Grid: (nh,
// ATTN_SPLITS, n).
extern "C" __global__ void __launch_bounds__(ATTN_WARPS * 32) tower_attend_rope_takes(
    float* __restrict__ attn, const float* __restrict__ qkv, float* __restrict__ kc, float* __restrict__ vc,
    FrameControl* ctrl, float* __restrict__ part, int* __restrict__ counters, const float* __restrict__ cos_t,
    const float* __restrict__ sin_t, int nh, int nkv, int hd, int half, float scale, int max_rows,
    long long kv_stride, const int32_t* __restrict__ slots) {
    attend_body<true, true>(attn, qkv, kc, vc, ctrl, part, counters, cos_t, sin_t, nh, nkv, hd, half, scale,
                            max_rows, kv_stride, slots);
}

// tower_attend_rope_h128 and tower_attend_rope_takes_h128: the same for hd ≤
// 128 (Drama 3's tower) with as few splits as the cache needs, split_keys
// rows a split, a warp loading 8 keys at once (attend_body's FEW;
// engine/cuda Tower.attnFew).
extern "C" __global__ void __launch_bounds__(ATTN_WARPS * 32) tower_attend_rope_h128(
    float* __restrict__ attn, const float* __restrict__ qkv, float* __restrict__ kc, float* __restrict__ vc,
    FrameControl* ctrl, float* __restrict__ part, int* __restrict__ counters, const float* __restrict__ cos_t,
    const float* __restrict__ sin_t, int nh, int nkv, int hd, int half, float scale, int max_rows, int split_keys) {
    attend_body<true, false, 1, 8, true>(attn, qkv, kc, vc, ctrl, part, counters, cos_t, sin_t, nh, nkv, hd, half,
                                         scale, max_rows, 0, nullptr, split_keys);
}

extern "C" __global__ void __launch_bounds__(ATTN_WARPS * 32) tower_attend_rope_takes_h128(
    float* __restrict__ attn, const float* __restrict__ qkv, float* __restrict__ kc, float* __restrict__ vc,
    FrameControl* ctrl, float* __restrict__ part, int* __restrict__ counters, const float* __restrict__ cos_t,
    const float* __restrict__ sin_t, int nh, int nkv, int hd, int half, float scale, int max_rows,
    long long kv_stride, const int32_t* __restrict__ slots, int split_keys) {
    attend_body<true, true, 1, 8, true>(attn, qkv, kc, vc, ctrl, part, counters, cos_t, sin_t, nh, nkv, hd, half,
                                        scale, max_rows, kv_stride, slots, split_keys);
}
