// Flash-style attention over a prefill pass's rows (fast numerics only;
// engine/cuda Queue.attentionFlash): the core of the gated full attention
// between attn_prep (queries normed and rotated into qn, the pass's keys and
// values appended to the cache, kernels/attention.cu) and o_proj, for all n
// rows of the pass in one launch: each row t (position pos+t) attends
// causally to the cached rows 0 … pos+t of its KV head (grouped-query), the
// softmax online over key tiles staged in shared memory (no score matrix),
// the output gated by sigmoid(gate). float32 throughout with fused
// multiply-adds and __expf: the Fast policy's arithmetic (numerics.cuh),
// within fast's tolerance of engine/cpu attentionCore, never its bits (exact
// keeps attention.cu's scores/partial/combine kernels).
//
// Work: a query vector is one (row, head) pair; the vectors of KV head g
// are numbered v = t·G + j (G = nh/nkv heads share it, head g·G + j), so a
// block's FLASH_BQ consecutive vectors share every key and value it stages.
// Block (x, g, s): vectors (X−1−x)·FLASH_BQ … of KV head g (X tiles: the
// longest first), over split s of the keys they see; warp w takes FLASH_NQ of the vectors, lane l holds head
// dims 4(l + 32i) … 4(l + 32i) + 3 of each (the query scaled by 1/√hd, the
// unnormalised output), so head_dim ≤ 128·FLASH_MAXD4 and a multiple of 4.
// Per tile of FLASH_BK keys: each score is a warp sum of the lanes' partial
// dot products, kept by the lane of its key; the tile's maximum per vector,
// e = exp(s − m) in the key's lane, the running sums rescaled once a tile;
// then each lane adds e_k·v_k over its dims, e_k shuffled from lane k.
//
// Splits: with splits = 1 the block writes the gated output attn
// [n, nh·hd]. With more (a short pass: too few blocks for the device) split
// s of a tile takes the s-th of `splits` ranges of the tile's keys and
// writes its partial (m, l, o) to part, which attn_flash_combine_fast merges.
// A row at or past the capacity is not cached (attn_prep) and its output is
// NaN, as attention.cu's.
#include "common.cuh"

#define FLASH_THREADS 128
#define FLASH_WARPS (FLASH_THREADS / 32)
#define FLASH_NQ 4                        // query vectors per warp
#define FLASH_BQ (FLASH_WARPS * FLASH_NQ)  // query vectors per block
#define FLASH_BK 16                       // keys per shared-memory tile (≤ 32: a lane per key)
#define FLASH_MAXD4 2                     // float4s of head dims per lane: head_dim ≤ 256
#define FLASH_MAX_SPLITS 16               // engine/cuda flashMaxSplits
#define FLASH_PART_HEAD 4                 // a partial's floats before its output: m, l, 2 unused (alignment)

// The split's key range [r0, r1) of a tile whose rows see keys 0 … last:
// `splits` ranges of ceil((last+1)/splits) keys (attention.cu's attn_range).
__device__ __forceinline__ void flash_range(int last, int splits, int sp, int* r0, int* r1) {
    const int per = (last + splits) / splits;
    *r0 = sp * per;
    *r1 = min(*r0 + per, last + 1);
}

__device__ __forceinline__ float4 f4_scale(float4 a, float s) { return make_float4(a.x * s, a.y * s, a.z * s, a.w * s); }
__device__ __forceinline__ float f4_dot(float4 a, float4 b, float acc) {
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    return fmaf(a.w, b.w, acc);
}
__device__ __forceinline__ float4 f4_fma(float e, float4 v, float4 acc) {
    return make_float4(fmaf(e, v.x, acc.x), fmaf(e, v.y, acc.y), fmaf(e, v.z, acc.z), fmaf(e, v.w, acc.w));
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}
__device__ __forceinline__ float flash_gated(float o, float inv_l, float gate) {
    return o * inv_l * Fast::sigmoid(gate);
}

// attn_flash_fast: grid (ceil(n·nh/nkv / FLASH_BQ), nkv, splits), block
// FLASH_THREADS. qn [n, nh, hd] (attn_prep's), kc and vc the cache
// [capacity, nkv, hd] with rows 0 … pos+n−1 written, proj the pass's
// projected rows (the gate beside each head's query, row stride pw), part
// [n·nh, splits, FLASH_PART_HEAD + hd] (splits > 1 only), scale 1/√hd.
extern "C" __global__ void __launch_bounds__(FLASH_THREADS) attn_flash_fast(
    float* __restrict__ attn, float* __restrict__ part, const float* __restrict__ qn, const float* __restrict__ kc,
    const float* __restrict__ vc, const float* __restrict__ proj, const int32_t* __restrict__ posp, int n,
    int capacity, int nh, int nkv, int hd, int pw, int splits, float scale) {
    __shared__ float4 ks[FLASH_BK * 32 * FLASH_MAXD4];
    __shared__ float4 vs[FLASH_BK * 32 * FLASH_MAXD4];
    pdl_entry();
    const int G = nh / nkv, kvh = blockIdx.y, sp = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int hd4 = hd >> 2;
    // The position through L2 (ld.global.cg), not the read-only path: ptxas
    // may schedule a read-only load above the PDL wait (kernels/pdl_sass_test.go).
    const int pos = __ldcg(posp);
    const int nvec = n * G;
    // The last tiles (the rows that see the most keys) first, so the short
    // ones fill the device while they run.
    const int v0 = (gridDim.x - 1 - blockIdx.x) * FLASH_BQ;
    // The last key any vector of the block sees, and this split's keys.
    const int tlast = (min(v0 + FLASH_BQ, nvec) - 1) / G;
    const int last = min(pos + tlast, capacity - 1);
    int r0, r1;
    flash_range(last, splits, sp, &r0, &r1);

    // This warp's vectors: row, head, the last key each sees (−1: none, a
    // vector past the pass), the scaled query in registers.
    int row[FLASH_NQ], head[FLASH_NQ], lim[FLASH_NQ];
    float4 q[FLASH_NQ][FLASH_MAXD4], o[FLASH_NQ][FLASH_MAXD4];
    float m[FLASH_NQ], l[FLASH_NQ];
#pragma unroll
    for (int j = 0; j < FLASH_NQ; j++) {
        const int v = v0 + warp * FLASH_NQ + j;
        const bool ok = v < nvec;
        row[j] = ok ? v / G : 0;
        head[j] = kvh * G + (ok ? v % G : 0);
        lim[j] = ok ? pos + row[j] : -1;
        const float4* qv = reinterpret_cast<const float4*>(qn + ((size_t)row[j] * nh + head[j]) * hd);
#pragma unroll
        for (int i = 0; i < FLASH_MAXD4; i++) {
            const int d4 = lane + 32 * i;
            q[j][i] = ok && d4 < hd4 ? f4_scale(qv[d4], scale) : make_float4(0.f, 0.f, 0.f, 0.f);
            o[j][i] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
        m[j] = -INFINITY;
        l[j] = 0.f;  // this lane's keys' share of the sum (the warp's total at the end)
    }

    for (int k0 = r0; k0 < r1; k0 += FLASH_BK) {
        const int cnt = min(FLASH_BK, r1 - k0);
        __syncthreads();  // the previous tile is read
        for (int e = threadIdx.x; e < FLASH_BK * hd4; e += FLASH_THREADS) {
            const int kk = e / hd4, d4 = e - kk * hd4;
            float4 kv = make_float4(0.f, 0.f, 0.f, 0.f), vv = kv;  // zeros past the range: 0·v stays 0
            if (kk < cnt) {
                const size_t at = ((size_t)(k0 + kk) * nkv + kvh) * hd;
                kv = reinterpret_cast<const float4*>(kc + at)[d4];
                vv = reinterpret_cast<const float4*>(vc + at)[d4];
            }
            ks[kk * hd4 + d4] = kv;
            vs[kk * hd4 + d4] = vv;
        }
        __syncthreads();
        // Scores: lane kk keeps key k0+kk's, −inf where the vector does not
        // see the key (causal) or the key is past the range.
        float s[FLASH_NQ];
#pragma unroll
        for (int j = 0; j < FLASH_NQ; j++) s[j] = -INFINITY;
        for (int kk = 0; kk < cnt; kk++) {
            float4 kr[FLASH_MAXD4];
#pragma unroll
            for (int i = 0; i < FLASH_MAXD4; i++) {
                const int d4 = lane + 32 * i;
                kr[i] = d4 < hd4 ? ks[kk * hd4 + d4] : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int j = 0; j < FLASH_NQ; j++) {
                float dot = 0.f;
#pragma unroll
                for (int i = 0; i < FLASH_MAXD4; i++) dot = f4_dot(q[j][i], kr[i], dot);
                dot = warp_sum(dot);
                if (lane == kk && k0 + kk <= lim[j]) s[j] = dot;
            }
        }
        // The online softmax: the tile's maximum, the sums rescaled to it.
        float e[FLASH_NQ];
#pragma unroll
        for (int j = 0; j < FLASH_NQ; j++) {
            const float mn = fmaxf(m[j], warp_max(s[j]));
            const float corr = mn == m[j] ? 1.f : __expf(m[j] - mn);  // m −inf, mn finite: 0
            e[j] = s[j] == -INFINITY ? 0.f : __expf(s[j] - mn);
            l[j] = l[j] * corr + e[j];
#pragma unroll
            for (int i = 0; i < FLASH_MAXD4; i++) o[j][i] = f4_scale(o[j][i], corr);
            m[j] = mn;
        }
        for (int kk = 0; kk < cnt; kk++) {
            float4 vr[FLASH_MAXD4];
#pragma unroll
            for (int i = 0; i < FLASH_MAXD4; i++) {
                const int d4 = lane + 32 * i;
                vr[i] = d4 < hd4 ? vs[kk * hd4 + d4] : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int j = 0; j < FLASH_NQ; j++) {
                const float ek = __shfl_sync(FULL_MASK, e[j], kk);
#pragma unroll
                for (int i = 0; i < FLASH_MAXD4; i++) o[j][i] = f4_fma(ek, vr[i], o[j][i]);
            }
        }
    }

#pragma unroll
    for (int j = 0; j < FLASH_NQ; j++) {
        const float L = warp_sum(l[j]);
        if (lim[j] < 0) continue;  // past the pass
        const size_t item = (size_t)row[j] * nh + head[j];
        if (splits > 1) {
            float* pp = part + (item * splits + sp) * (FLASH_PART_HEAD + hd);
            if (lane == 0) {
                pp[0] = m[j];
                pp[1] = L;
            }
            float4* po = reinterpret_cast<float4*>(pp + FLASH_PART_HEAD);
#pragma unroll
            for (int i = 0; i < FLASH_MAXD4; i++)
                if (lane + 32 * i < hd4) po[lane + 32 * i] = o[j][i];
            continue;
        }
        float4* out = reinterpret_cast<float4*>(attn + item * hd);
        const float* gate = proj + (size_t)row[j] * pw + (size_t)head[j] * 2 * hd + hd;
        const bool past = pos + row[j] >= capacity;
        const float inv = 1.f / L;
#pragma unroll
        for (int i = 0; i < FLASH_MAXD4; i++) {
            const int d4 = lane + 32 * i;
            if (d4 >= hd4) continue;
            const float* g = gate + 4 * d4;
            float4 r = o[j][i];
            r = make_float4(flash_gated(r.x, inv, g[0]), flash_gated(r.y, inv, g[1]), flash_gated(r.z, inv, g[2]),
                            flash_gated(r.w, inv, g[3]));
            if (past) r = make_float4(__int_as_float(0x7fc00000), __int_as_float(0x7fc00000),
                                      __int_as_float(0x7fc00000), __int_as_float(0x7fc00000));
            out[d4] = r;
        }
    }
}

// attn_flash_combine_fast: grid (n·nh), block FLASH_THREADS. Merges the
// splits' partials of item t·nh + h (those of splits that saw no key have
// l = 0 and count for nothing): M = max m_s, o = Σ o_s·e^(m_s−M) / Σ
// l_s·e^(m_s−M), gated, into attn; NaN for a row at or past the capacity.
extern "C" __global__ void __launch_bounds__(FLASH_THREADS) attn_flash_combine_fast(
    float* __restrict__ attn, const float* __restrict__ part, const float* __restrict__ proj,
    const int32_t* __restrict__ posp, int capacity, int nh, int hd, int pw, int splits) {
    __shared__ float w[FLASH_MAX_SPLITS];
    __shared__ float inv_l;
    pdl_entry();
    const int item = blockIdx.x, t = item / nh, h = item % nh;
    float* o = attn + (size_t)item * hd;
    if (__ldcg(posp) + t >= capacity) {  // after the PDL wait (see attn_flash_fast)
        for (int d = threadIdx.x; d < hd; d += FLASH_THREADS) o[d] = __int_as_float(0x7fc00000);
        return;
    }
    const int stride = FLASH_PART_HEAD + hd;
    const float* pp = part + (size_t)item * splits * stride;
    if (threadIdx.x < 32) {
        const int s = threadIdx.x;
        const float ls = s < splits ? pp[(size_t)s * stride + 1] : 0.f;
        const float ms = ls > 0.f ? pp[(size_t)s * stride] : -INFINITY;
        const float M = warp_max(ms);
        const float ws = ls > 0.f ? __expf(ms - M) : 0.f;
        const float L = warp_sum(ls * ws);
        if (s < splits) w[s] = ws;
        if (s == 0) inv_l = 1.f / L;
    }
    __syncthreads();
    const float* gate = proj + (size_t)t * pw + (size_t)h * 2 * hd + hd;
    for (int d = threadIdx.x; d < hd; d += FLASH_THREADS) {
        float acc = 0.f;
        for (int s = 0; s < splits; s++) acc = fmaf(pp[(size_t)s * stride + FLASH_PART_HEAD + d], w[s], acc);
        o[d] = flash_gated(acc, inv_l, gate[d]);
    }
}

// ---------------------------------------------------------------------------
// attn_flash2_fast (attn13, docs/PERF.md "## attn13"): the same attention as
// attn_flash_fast, register-tiled. attn_flash_fast gives each score a warp
// sum (5 shuffles for a lane's 8 FMAs) and each e_k a shuffle; here a block
// takes FLASH2_BQ = 64 query vectors (v = t·G + j, as above) and stages
// them once in shared memory, then per tile of FLASH2_BK = 32 keys:
//   S   = Q·Kᵀ: thread (qg = tid/8, kg = tid%8) computes the 4 × 4 scores of
//         vectors qg + 16i and keys kg + 8j, reading float4s along the head
//         dims (8 shared loads for 64 FMAs; a warp's loads hit 4 and 8
//         distinct rows, conflict-free with rows padded by 4 floats), and
//         writes them to P (key-major);
//   the online softmax: two threads a vector, 16 keys each (one shuffle for
//         the tile's maximum), e_k written over the scores, the rescale
//         factor to C;
//   O  += P·V (V staged over K): thread (qg2 = tid/16, dg = tid%16) holds
//         the 8 × 16 outputs of vectors 8qg2 … 8qg2+7 and head dims
//         4(dg + 16i) … +3, per key 2 float4 loads of P, 4 of V, 128 FMAs.
// float32 with fused multiply-adds and __expf, as attn_flash_fast (the Fast
// policy); the sums run in another order, so the bits differ from it.
// Shared memory is dynamic (FLASH2_SMEM_FLOATS(hd) floats: ≈ 107 KiB at
// head dim 256, two blocks an SM). Splits as attn_flash_fast's but each a
// whole number of tiles (a split may see no key: its partial has l = 0);
// the combine (attn_flash_combine_fast), the partials' layout, rows past
// the capacity: as attn_flash_fast.
#define FLASH2_THREADS 128
#define FLASH2_BQ 64                     // query vectors per block
#define FLASH2_BK 32                     // keys per shared-memory tile
#define FLASH2_MAXD4 4                   // float4s of head dims per PV thread: head_dim ≤ 256
#define FLASH2_PS (FLASH2_BQ + 4)        // P's row stride (a key's 64 vectors, padded)
// The dynamic shared memory of a block for head dim hd, in floats: Q
// [BQ, hd+4], K or V [BK, hd+4], P [BK, PS], C [BQ]. Keep in step with
// engine/cuda flash2Smem.
#define FLASH2_SMEM_FLOATS(hd) ((FLASH2_BQ + FLASH2_BK) * ((hd) + 4) + FLASH2_BK * FLASH2_PS + FLASH2_BQ)

// The block's dynamic shared memory (a host emulation defines its own:
// docs/perf/flash28-emu).
#ifndef FLASH2_SMEM_DECL
#define FLASH2_SMEM_DECL extern __shared__ __align__(16) float flash2_smem[]
#endif

// flash2_cp16 copies 16 bytes global → shared, zeros where !ok (cp.async
// on sm_80 and later: a thread's loads of a tile all in flight at once,
// no registers; elsewhere, and in the host emulation, a copy).
__device__ __forceinline__ void flash2_cp16(float* dst, const float* src, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(ok ? 16 : 0) : "memory");
#else
    *reinterpret_cast<float4*>(dst) = ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}
__device__ __forceinline__ void flash2_cp_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
#endif
}

// flash2_step moves a staging index (row *kk, float4 *d4 of hd4 a row)
// on by the block's threads, q rows and r float4s.
__device__ __forceinline__ void flash2_step(int* kk, int* d4, int q, int r, int hd4) {
    *kk += q;
    *d4 += r;
    if (*d4 >= hd4) {
        *d4 -= hd4;
        *kk += 1;
    }
}

__device__ __forceinline__ float4 flash2_ld4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// attn_flash2_fast: grid (ceil(n·nh/nkv / FLASH2_BQ), nkv, splits), block
// FLASH2_THREADS, FLASH2_SMEM_FLOATS(hd)·4 bytes of dynamic shared memory;
// the arguments as attn_flash_fast's.
extern "C" __global__ void __launch_bounds__(FLASH2_THREADS, 2) attn_flash2_fast(
    float* __restrict__ attn, float* __restrict__ part, const float* __restrict__ qn, const float* __restrict__ kc,
    const float* __restrict__ vc, const float* __restrict__ proj, const int32_t* __restrict__ posp, int n,
    int capacity, int nh, int nkv, int hd, int pw, int splits, float scale) {
    FLASH2_SMEM_DECL;
    pdl_entry();
    const int G = nh / nkv, kvh = blockIdx.y, sp = blockIdx.z;
    const int tid = threadIdx.x;
    const int hd4 = hd >> 2, RS = hd + 4;  // float4s of a head; Q's and K's row stride
    const int gs = nkv * hd;                // a cache row's floats
    float* Qs = flash2_smem;                // [BQ, RS]
    float* KVs = Qs + FLASH2_BQ * RS;       // [BK, RS]: the tile's keys, then its values
    float* Ps = KVs + FLASH2_BK * RS;       // [BK, PS]: scores, then e
    float* Cs = Ps + FLASH2_BK * FLASH2_PS; // [BQ]: each vector's rescale factor, at the end m
    const int pos = __ldcg(posp);           // through L2: see attn_flash_fast
    const int nvec = n * G;
    const int v0 = (gridDim.x - 1 - blockIdx.x) * FLASH2_BQ;  // the longest first
    const int tlast = (min(v0 + FLASH2_BQ, nvec) - 1) / G;
    const int last = min(pos + tlast, capacity - 1);
    // This split's keys: flash_range's with the share rounded up to whole
    // tiles, so a split costs no tile more than the keys need (a block of
    // early rows takes its few tiles in the first splits, the rest none).
    const int per = ((last + splits) / splits + FLASH2_BK - 1) / FLASH2_BK * FLASH2_BK;
    const int r0 = min(sp * per, last + 1), r1 = min(r0 + per, last + 1);

    // The block's queries, scaled by 1/√hd (zeros past the pass).
    for (int e = tid; e < FLASH2_BQ * hd4; e += FLASH2_THREADS) {
        const int r = e / hd4, d4 = e - r * hd4, v = v0 + r;
        float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
        if (v < nvec) {
            const int t = v / G, h = kvh * G + v % G;
            x = f4_scale(reinterpret_cast<const float4*>(qn + ((size_t)t * nh + h) * hd)[d4], scale);
        }
        *reinterpret_cast<float4*>(Qs + r * RS + 4 * d4) = x;
    }

    // The staging loops' (row, float4) of this thread and their step, the
    // block's threads over a row's hd4 float4s: no division a float4.
    const int st_k = tid / hd4, st_d = tid - st_k * hd4;
    const int st_q = FLASH2_THREADS / hd4, st_r = FLASH2_THREADS - st_q * hd4;

    // The softmax thread's vector (two a vector, half sm_h of the keys) and
    // the last key it sees (−1: past the pass).
    const int sm_r = tid >> 1, sm_h = tid & 1;
    const int sm_lim = v0 + sm_r < nvec ? pos + (v0 + sm_r) / G : -1;
    float m = -INFINITY, lsum = 0.f;  // the running maximum; this half's share of the sum
    // The score thread's 4 vectors and 4 keys; the output thread's 8
    // vectors and 4 float4s of head dims.
    const int qg = tid >> 3, kg = tid & 7;
    const int qg2 = tid >> 4, dg = tid & 15;
    float4 o[8][FLASH2_MAXD4];
#pragma unroll
    for (int r = 0; r < 8; r++)
#pragma unroll
        for (int i = 0; i < FLASH2_MAXD4; i++) o[r][i] = make_float4(0.f, 0.f, 0.f, 0.f);

    for (int k0 = r0; k0 < r1; k0 += FLASH2_BK) {
        const int cnt = min(FLASH2_BK, r1 - k0);
        // The tile's first key and value of KV head kvh; gs floats a cache row.
        const float* kc_t = kc + ((size_t)k0 * nkv + kvh) * hd;
        const float* vc_t = vc + ((size_t)k0 * nkv + kvh) * hd;
        __syncthreads();  // the previous tile's values are read (the first time: Q written)
        for (int kk = st_k, d4 = st_d; kk < FLASH2_BK;) {
            const bool in = kk < cnt;  // zeros past the range (the cache may hold NaN there)
            flash2_cp16(KVs + kk * RS + 4 * d4, kc_t + (in ? kk * gs + 4 * d4 : 0), in);
            flash2_step(&kk, &d4, st_q, st_r, hd4);
        }
        flash2_cp_wait();
        __syncthreads();
        {  // S = Q·Kᵀ, 4 × 4 a thread.
            float s[4][4];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) s[i][j] = 0.f;
            const float* qp = Qs + qg * RS;
            const float* kp = KVs + kg * RS;
#pragma unroll 2
            for (int d = 0; d < hd; d += 4) {
                float4 a[4], b[4];
#pragma unroll
                for (int i = 0; i < 4; i++) a[i] = flash2_ld4(qp + 16 * i * RS + d);
#pragma unroll
                for (int j = 0; j < 4; j++) b[j] = flash2_ld4(kp + 8 * j * RS + d);
#pragma unroll
                for (int i = 0; i < 4; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++) s[i][j] = f4_dot(a[i], b[j], s[i][j]);
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) Ps[(kg + 8 * j) * FLASH2_PS + qg + 16 * i] = s[i][j];
        }
        __syncthreads();  // the scores are written, the keys read
        {  // The online softmax of vector sm_r over keys 16·sm_h …: −inf where
           // it does not see the key (causal) or the key is past the range.
            float* pp = Ps + 16 * sm_h * FLASH2_PS + sm_r;
            float s[16], tm = -INFINITY;
#pragma unroll
            for (int i = 0; i < 16; i++) {
                const int kk = 16 * sm_h + i;
                s[i] = kk < cnt && k0 + kk <= sm_lim ? pp[i * FLASH2_PS] : -INFINITY;
                tm = fmaxf(tm, s[i]);
            }
            tm = fmaxf(tm, __shfl_xor_sync(FULL_MASK, tm, 1));
            const float mn = fmaxf(m, tm);
            const float corr = mn == m ? 1.f : __expf(m - mn);  // m −inf, mn finite: 0
            float sum = 0.f;
#pragma unroll
            for (int i = 0; i < 16; i++) {
                const float e = s[i] == -INFINITY ? 0.f : __expf(s[i] - mn);
                pp[i * FLASH2_PS] = e;
                sum += e;
            }
            lsum = lsum * corr + sum;
            m = mn;
            if (sm_h == 0) Cs[sm_r] = corr;
        }
        // The tile's values over its keys (zeros past the range: 0·v stays 0).
        for (int kk = st_k, d4 = st_d; kk < FLASH2_BK;) {
            const bool in = kk < cnt;
            flash2_cp16(KVs + kk * RS + 4 * d4, vc_t + (in ? kk * gs + 4 * d4 : 0), in);
            flash2_step(&kk, &d4, st_q, st_r, hd4);
        }
        flash2_cp_wait();
        __syncthreads();
        {  // O = O·corr + P·V, 8 vectors × 16 head dims a thread.
#pragma unroll
            for (int r = 0; r < 8; r++) {
                const float c = Cs[8 * qg2 + r];
#pragma unroll
                for (int i = 0; i < FLASH2_MAXD4; i++) o[r][i] = f4_scale(o[r][i], c);
            }
            for (int kk = 0; kk < cnt; kk++) {
                const float4 p0 = flash2_ld4(Ps + kk * FLASH2_PS + 8 * qg2);
                const float4 p1 = flash2_ld4(Ps + kk * FLASH2_PS + 8 * qg2 + 4);
                const float p[8] = {p0.x, p0.y, p0.z, p0.w, p1.x, p1.y, p1.z, p1.w};
#pragma unroll
                for (int i = 0; i < FLASH2_MAXD4; i++) {
                    if (dg + 16 * i >= hd4) continue;
                    const float4 vv = flash2_ld4(KVs + kk * RS + 4 * (dg + 16 * i));
#pragma unroll
                    for (int r = 0; r < 8; r++) o[r][i] = f4_fma(p[r], vv, o[r][i]);
                }
            }
        }
    }

    // Each vector's maximum and sum to shared memory (C, and P's first row).
    const float L = lsum + __shfl_xor_sync(FULL_MASK, lsum, 1);
    __syncthreads();  // C and P are read
    if (sm_h == 0) {
        Cs[sm_r] = m;
        Ps[sm_r] = L;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 8; r++) {
        const int v = v0 + 8 * qg2 + r;
        if (v >= nvec) continue;  // past the pass
        const int t = v / G, h = kvh * G + v % G;
        const size_t item = (size_t)t * nh + h;
        const float Lr = Ps[8 * qg2 + r];
        if (splits > 1) {
            float* pp = part + (item * splits + sp) * (FLASH_PART_HEAD + hd);
            if (dg == 0) {
                pp[0] = Cs[8 * qg2 + r];
                pp[1] = Lr;
            }
            float4* po = reinterpret_cast<float4*>(pp + FLASH_PART_HEAD);
#pragma unroll
            for (int i = 0; i < FLASH2_MAXD4; i++)
                if (dg + 16 * i < hd4) po[dg + 16 * i] = o[r][i];
            continue;
        }
        float4* out = reinterpret_cast<float4*>(attn + item * hd);
        const float* gate = proj + (size_t)t * pw + (size_t)h * 2 * hd + hd;
        const bool past = pos + t >= capacity;
        const float inv = 1.f / Lr;
#pragma unroll
        for (int i = 0; i < FLASH2_MAXD4; i++) {
            const int d4 = dg + 16 * i;
            if (d4 >= hd4) continue;
            const float* g = gate + 4 * d4;
            float4 x = o[r][i];
            x = make_float4(flash_gated(x.x, inv, g[0]), flash_gated(x.y, inv, g[1]), flash_gated(x.z, inv, g[2]),
                            flash_gated(x.w, inv, g[3]));
            if (past) x = make_float4(__int_as_float(0x7fc00000), __int_as_float(0x7fc00000),
                                      __int_as_float(0x7fc00000), __int_as_float(0x7fc00000));
            out[d4] = x;
        }
    }
}
