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
#include "mma_f16.cuh"
#include "cp_async.cuh"

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

// attn_flash_combine_fast: grid (ceil(items / FLASH_WARPS)), block
// FLASH_THREADS; warp w of block b merges item b·FLASH_WARPS + w = t·nh + h
// (items = n·nh): the splits' partials (those of splits that saw no key
// have l = 0 and count for nothing): M = max m_s, o = Σ o_s·e^(m_s−M) / Σ
// l_s·e^(m_s−M), gated, into attn; NaN for a row at or past the capacity.
// A warp an item, each split's (m, l) in one load and the outputs as
// float4s: a block an item (m, then l, then two dims a thread) took 16.5 µs
// a layer for a 300-row pass's four splits (docs/PERF.md "host18").
extern "C" __global__ void __launch_bounds__(FLASH_THREADS) attn_flash_combine_fast(
    float* __restrict__ attn, const float* __restrict__ part, const float* __restrict__ proj,
    const int32_t* __restrict__ posp, int items, int capacity, int nh, int hd, int pw, int splits) {
    __shared__ float ws_all[FLASH_WARPS][FLASH_MAX_SPLITS];
    pdl_entry();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int item = blockIdx.x * FLASH_WARPS + warp;
    if (item >= items) return;
    const int t = item / nh, h = item % nh;
    float* o = attn + (size_t)item * hd;
    if (__ldcg(posp) + t >= capacity) {  // after the PDL wait (see attn_flash_fast)
        for (int d = lane; d < hd; d += 32) o[d] = __int_as_float(0x7fc00000);
        return;
    }
    const int stride = FLASH_PART_HEAD + hd;
    const float* pp = part + (size_t)item * splits * stride;
    const float2 ml = lane < splits ? *reinterpret_cast<const float2*>(pp + (size_t)lane * stride) : make_float2(0.f, 0.f);
    const float ms = ml.y > 0.f ? ml.x : -INFINITY;
    const float M = warp_max(ms);
    const float ws = ml.y > 0.f ? __expf(ms - M) : 0.f;
    const float inv_l = 1.f / warp_sum(ml.y * ws);
    float* const w = ws_all[warp];
    if (lane < splits) w[lane] = ws;
    __syncwarp();
    const float* gate = proj + (size_t)t * pw + (size_t)h * 2 * hd + hd;
    for (int d = 4 * lane; d < hd; d += 128) {
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
        for (int s = 0; s < splits; s++)
            acc = f4_fma(w[s], *reinterpret_cast<const float4*>(pp + (size_t)s * stride + FLASH_PART_HEAD + d), acc);
        const float4 g = *reinterpret_cast<const float4*>(gate + d);
        *reinterpret_cast<float4*>(o + d) = make_float4(flash_gated(acc.x, inv_l, g.x), flash_gated(acc.y, inv_l, g.y),
                                                        flash_gated(acc.z, inv_l, g.z), flash_gated(acc.w, inv_l, g.w));
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

// ---------------------------------------------------------------------------
// The prompt attention on the tensor cores (mma17): attn_mma_parts_fast
// splits the pass's queries and the layer's cached keys and values once
// into FP16 parts, attn_flash_mma_fast_hd{HD} runs attn_flash2_fast's work
// on them. float32 from FP16 pairs, each product's error ≈ 2^-22 of it, far
// inside fast's tolerance (BF16 alone would be 2^-9): a vector x scaled by
// a power of two 2^f that puts its largest |x| in [2^14, 2^15)
// (f16_row_scale) is hi + lo, two FP16 values (split_f16: 22 bits), and a
// product of two such vectors is three MMAs (hi·hi, hi·lo, lo·hi) times
// both inverse scales (exact).
// - Scores S = Q·Kᵀ: a scale for each query vector (times 1/√hd) and each
//   key row.
// - O += P·V: P (in [0, 1]) as it is (p ≥ 2^-14 is a normal FP16; a smaller
//   p's error is below 2^-25 of the row's sum, which is at least 1); one
//   scale for each FMMA_BK-key tile of values of a KV head (the tiles every
//   block's key range is cut into: ranges start at multiples of FMMA_BK).
//   The output is kept in the units of the tile last added (rescaled by
//   2^(f_j − f_{j−1}) with the softmax's correction, exact) and brought
//   back at the end.
// The parts are rows of HD 16-bit elements (HD the instance's head dims,
// zeros past hd and past the pass's keys): queries qp [n·nh, 2, HD] with
// qinv [n·nh] (the inverse scales), keys kp and values vp [keys, nkv, 2,
// HD], kinv [nkv, keys], vexp [nkv, keys / FMMA_BK] (the exponent f of a
// tile's value scale). engine/cuda flashLayout (flashMMAScratch) sizes them.
#define FMMA_THREADS 128
#define FMMA_BQ 64  // query vectors a block: 4 warps of 16
#define FMMA_BK 32  // keys a tile
#define FMMA_PAD 8  // 16-bit elements past a part row's HD in shared memory: rows 16 bytes apart mod 128, ldmatrix conflict-free
#define FMMA_PARTS_THREADS 256
#define FMMA_PARTS_BQ 32  // query vectors an attn_mma_parts_fast block (8 threads a vector)

// attn_mma_parts_fast: blocks [0, ktiles·nkv) split key tile b / nkv of KV
// head b % nkv (FMMA_BK rows: 8 threads a row, zeros past pos + n), blocks
// from ktiles·nkv on the pass's query vectors (FMMA_PARTS_BQ a block, times
// scale = 1/√hd). Block FMMA_PARTS_THREADS; hdp the instance's head dims HD
// (hd ≤ hdp, a multiple of 8; hdp a multiple of 32).
extern "C" __global__ void __launch_bounds__(FMMA_PARTS_THREADS) attn_mma_parts_fast(
    uint16_t* __restrict__ qp, float* __restrict__ qinv, uint16_t* __restrict__ kp, uint16_t* __restrict__ vp,
    float* __restrict__ kinv, int32_t* __restrict__ vexp, const float* __restrict__ qn, const float* __restrict__ kc,
    const float* __restrict__ vc, const int32_t* __restrict__ posp, int n, int keys, int ktiles, int nh, int nkv,
    int hd, int hdp, float scale) {
    __shared__ float vmax[FMMA_PARTS_THREADS / 32];
    pdl_entry();
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int r = tid >> 3, q8 = tid & 7;  // the thread's row of the block and its float4s q8, q8 + 8, …
    int b = blockIdx.x;
    if (b >= ktiles * nkv) {  // queries: item i = t·nh + h
        b -= ktiles * nkv;
        const int i = b * FMMA_PARTS_BQ + r;
        if (i >= n * nh) return;
        const float* x = qn + (size_t)i * hd;
        float m = 0.f;
        for (int d = 4 * q8; d < hd; d += 32) {
            const float4 v = *reinterpret_cast<const float4*>(x + d);
            m = fmaxf(m, fmaxf(fmaxf(fabsf(v.x * scale), fabsf(v.y * scale)), fmaxf(fabsf(v.z * scale), fabsf(v.w * scale))));
        }
#pragma unroll
        for (int o = 1; o < 8; o <<= 1) m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, o));
        float fwd, inv;
        f16_row_scale(m, fwd, inv);
        if (q8 == 0) qinv[i] = inv;
        uint16_t* hi = qp + (size_t)i * 2 * hdp;
        for (int d = 4 * q8; d < hdp; d += 32) {
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (d < hd) v = *reinterpret_cast<const float4*>(x + d);
            uint32_t p0[2], p1[2];
            split_f16(v.x * scale * fwd, v.y * scale * fwd, p0);
            split_f16(v.z * scale * fwd, v.w * scale * fwd, p1);
            *reinterpret_cast<uint2*>(hi + d) = make_uint2(p0[0], p1[0]);
            *reinterpret_cast<uint2*>(hi + hdp + d) = make_uint2(p0[1], p1[1]);
        }
        return;
    }
    const int tile = b / nkv, h = b % nkv;
    const int pos = __ldcg(posp), k = tile * FMMA_BK + r;
    if (tile * FMMA_BK >= pos + n) return;  // no key of the pass's
    const bool in = k < pos + n;              // else zeros (the cache may hold NaN there)
    const float* kr = kc + ((size_t)k * nkv + h) * hd;
    const float* vr = vc + ((size_t)k * nkv + h) * hd;
    float mk = 0.f, mv = 0.f;
    if (in)
        for (int d = 4 * q8; d < hd; d += 32) {
            const float4 x = *reinterpret_cast<const float4*>(kr + d), y = *reinterpret_cast<const float4*>(vr + d);
            mk = fmaxf(mk, fmaxf(fmaxf(fabsf(x.x), fabsf(x.y)), fmaxf(fabsf(x.z), fabsf(x.w))));
            mv = fmaxf(mv, fmaxf(fmaxf(fabsf(y.x), fabsf(y.y)), fmaxf(fabsf(y.z), fabsf(y.w))));
        }
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) mk = fmaxf(mk, __shfl_xor_sync(FULL_MASK, mk, o));
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) mv = fmaxf(mv, __shfl_xor_sync(FULL_MASK, mv, o));
    if (lane == 0) vmax[warp] = mv;
    __syncthreads();
    mv = vmax[0];
#pragma unroll
    for (int w = 1; w < FMMA_PARTS_THREADS / 32; w++) mv = fmaxf(mv, vmax[w]);
    float kf, ki, vf, vi;
    f16_row_scale(mk, kf, ki);
    f16_row_scale(mv, vf, vi);
    if (q8 == 0) kinv[(size_t)h * keys + k] = ki;
    if (tid == 0) vexp[(size_t)h * (keys / FMMA_BK) + tile] = (int)(__float_as_uint(vf) >> 23) - 127;
    uint16_t* kh = kp + ((size_t)k * nkv + h) * 2 * hdp;
    uint16_t* vh = vp + ((size_t)k * nkv + h) * 2 * hdp;
    for (int d = 4 * q8; d < hdp; d += 32) {
        float4 x = make_float4(0.f, 0.f, 0.f, 0.f), y = x;
        if (in && d < hd) {
            x = *reinterpret_cast<const float4*>(kr + d);
            y = *reinterpret_cast<const float4*>(vr + d);
        }
        uint32_t p0[2], p1[2];
        split_f16(x.x * kf, x.y * kf, p0);
        split_f16(x.z * kf, x.w * kf, p1);
        *reinterpret_cast<uint2*>(kh + d) = make_uint2(p0[0], p1[0]);
        *reinterpret_cast<uint2*>(kh + hdp + d) = make_uint2(p0[1], p1[1]);
        split_f16(y.x * vf, y.y * vf, p0);
        split_f16(y.z * vf, y.w * vf, p1);
        *reinterpret_cast<uint2*>(vh + d) = make_uint2(p0[0], p1[0]);
        *reinterpret_cast<uint2*>(vh + hdp + d) = make_uint2(p0[1], p1[1]);
    }
}

// attn_flash_mma_fast_hd{HD}: a block takes FMMA_BQ query vectors of one KV
// head (warp w the 16 vectors 16w … 16w+15, an m16 tile) over its split's
// keys, BK (FMMA_BK or 16) at a time, the softmax online in the score
// fragments' registers (FlashAttention-2's arrangement); the output of a warp's
// vectors over every head dim stays in its registers (HD/8 n8 tiles). The
// query parts are copied once (cp.async), each tile's key parts while the
// previous tile's P·V runs and its value parts while its scores are made.
// Softmax, masking, splits and the epilogue are attn_flash2_fast's: the
// same partials for attn_flash_combine_fast, the same gated output and NaN
// rows.
#define FMMA_SMEM(HD, BK) ((2 * FMMA_BQ + 4 * (BK)) * ((HD) + FMMA_PAD) * 2 + (BK) * 4)
template <int HD, int BK>
__device__ __forceinline__ void attn_flash_mma_body(float* __restrict__ attn, float* __restrict__ part,
                                                    const uint16_t* __restrict__ qp, const float* __restrict__ qinv,
                                                    const uint16_t* __restrict__ kp, const uint16_t* __restrict__ vp,
                                                    const float* __restrict__ kinv, const int32_t* __restrict__ vexp,
                                                    const float* __restrict__ proj, const int32_t* __restrict__ posp,
                                                    int n, int keys, int capacity, int nh, int nkv, int hd, int pw,
                                                    int splits) {
    static_assert(HD % 16 == 0 && HD <= 256, "HD: a multiple of 16 up to 256");
    static_assert(BK == 16 || BK == FMMA_BK, "tiles of 16 or FMMA_BK keys (within the value scales' tiles)");
    constexpr int RS = HD + FMMA_PAD, NT = HD / 8, CH = HD / 8;  // a part row's 16-byte chunks: CH
    extern __shared__ __align__(16) unsigned char fmma_smem[];
    uint16_t* const Qh = reinterpret_cast<uint16_t*>(fmma_smem);  // [BQ, RS]
    uint16_t* const Ql = Qh + FMMA_BQ * RS;
    uint16_t* const Kh = Ql + FMMA_BQ * RS;  // [BK, RS]
    uint16_t* const Kl = Kh + BK * RS;
    uint16_t* const Vh = Kl + BK * RS;
    uint16_t* const Vl = Vh + BK * RS;
    float* const ks = reinterpret_cast<float*>(Vl + BK * RS);  // [BK] the tile's keys' inverse scales
    pdl_entry();
    const int G = nh / nkv, kvh = blockIdx.y, sp = blockIdx.z;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int pos = __ldcg(posp);
    const int nvec = n * G;
    const int v0 = (gridDim.x - 1 - blockIdx.x) * FMMA_BQ;  // the longest first
    const int tlast = (min(v0 + FMMA_BQ, nvec) - 1) / G;
    const int last = min(pos + tlast, capacity - 1);
    const int per = ((last + splits) / splits + FMMA_BK - 1) / FMMA_BK * FMMA_BK;  // attn_flash2_fast's ranges
    const int r0 = min(sp * per, last + 1), r1 = min(r0 + per, last + 1);
    const int tiles = keys / FMMA_BK;

    // The copies: a part row's chunks, the block's threads in turn (16
    // bytes each; rows past the pass's vectors zeros).
    for (int e = tid; e < FMMA_BQ * 2 * CH; e += FMMA_THREADS) {
        const int row = e / (2 * CH), c = e % (2 * CH), v = v0 + row;
        const bool in = v < nvec;
        const uint16_t* src = in ? qp + ((size_t)(v / G) * nh + kvh * G + v % G) * 2 * HD + 8 * c : qp;
        cp_async<16>((c < CH ? Qh + row * RS + 8 * c : Ql + row * RS + 8 * (c - CH)), src, in);
    }
    auto copy_keys = [&](int k0) {
        for (int e = tid; e < BK * 2 * CH; e += FMMA_THREADS) {
            const int row = e / (2 * CH), c = e % (2 * CH);
            const uint16_t* src = kp + ((size_t)(k0 + row) * nkv + kvh) * 2 * HD + 8 * c;
            cp_async<16>((c < CH ? Kh + row * RS + 8 * c : Kl + row * RS + 8 * (c - CH)), src, true);
        }
        if (tid < BK / 4) cp_async<16>(ks + 4 * tid, kinv + (size_t)kvh * keys + k0 + 4 * tid, true);
        cp_async_commit();
    };
    auto copy_values = [&](int k0) {
        for (int e = tid; e < BK * 2 * CH; e += FMMA_THREADS) {
            const int row = e / (2 * CH), c = e % (2 * CH);
            const uint16_t* src = vp + ((size_t)(k0 + row) * nkv + kvh) * 2 * HD + 8 * c;
            cp_async<16>((c < CH ? Vh + row * RS + 8 * c : Vl + row * RS + 8 * (c - CH)), src, true);
        }
        cp_async_commit();
    };
    if (r0 < r1) {
        copy_keys(r0);  // the queries' copies join the first keys' group
        copy_values(r0);
    } else {
        cp_async_commit();
    }

    // The lane's two vectors of the warp's m16 tile (rows g and g+8 of its
    // fragments), their inverse scales and the last key each sees (−1: past
    // the pass).
    const int g = lane >> 2, tq = lane & 3;
    const int va = v0 + 16 * warp + g, vb = va + 8;
    const int lim0 = va < nvec ? pos + va / G : -1, lim1 = vb < nvec ? pos + vb / G : -1;
    const float qi0 = va < nvec ? __ldcg(qinv + (size_t)(va / G) * nh + kvh * G + va % G) : 0.f;
    const float qi1 = vb < nvec ? __ldcg(qinv + (size_t)(vb / G) * nh + kvh * G + vb % G) : 0.f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;  // running maxima; the lane's share of the sums
    int fprev = 0;  // the exponent of the output's units (the last tile's value scale)
    float o[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    // ldmatrix row offsets of the lane: A (Q) rows, B (K, non-transposed)
    // rows, B (V, transposed) rows, each with its 8-column half.
    const int qrow = 16 * warp + (lane & 15), qcol = (lane >> 4) * 8;
    const int krow = (lane & 7) + ((lane >> 4) << 3), kcol = ((lane >> 3) & 1) * 8;
    const int vrow = (lane & 7) + ((lane >> 3) & 1) * 8, vcol = (lane >> 4) * 8;
    const int ksteps = (hd + 15) / 16;

    for (int k0 = r0; k0 < r1; k0 += BK) {
        const int cnt = min(BK, r1 - k0);
        const bool more = k0 + BK < r1;
        const int fv = __ldcg(vexp + (size_t)kvh * tiles + k0 / FMMA_BK);
        cp_async_wait<1>();  // the keys (and the first time the queries); the values may still come
        __syncthreads();
        // S = Q·Kᵀ: the warp's 16 vectors × the tile's BK keys, BK/8 n8 tiles;
        // hi·hi, hi·lo and lo·hi in accumulators of their own (three times
        // the independent MMA chains: one warp a scheduler waits out each
        // chain's latency), summed after the loop.
        float s[BK / 8][4], sx[BK / 8][4], sy[BK / 8][4];
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[j][e] = sx[j][e] = sy[j][e] = 0.f;
#pragma unroll 4
        for (int kst = 0; kst < HD / 16; kst++) {
            if (kst >= ksteps) break;
            uint32_t qh[4], ql[4];
            ldmatrix_x4(Qh + qrow * RS + 16 * kst + qcol, qh);
            ldmatrix_x4(Ql + qrow * RS + 16 * kst + qcol, ql);
#pragma unroll
            for (int np = 0; np < BK / 16; np++) {
                uint32_t bh[4], bl[4];
                ldmatrix_x4(Kh + (16 * np + krow) * RS + 16 * kst + kcol, bh);
                ldmatrix_x4(Kl + (16 * np + krow) * RS + 16 * kst + kcol, bl);
                mma_f16(s[2 * np], qh, bh[0], bh[1]);
                mma_f16(s[2 * np + 1], qh, bh[2], bh[3]);
                mma_f16(sx[2 * np], qh, bl[0], bl[1]);
                mma_f16(sx[2 * np + 1], qh, bl[2], bl[3]);
                mma_f16(sy[2 * np], ql, bh[0], bh[1]);
                mma_f16(sy[2 * np + 1], ql, bh[2], bh[3]);
            }
        }
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[j][e] += sx[j][e] + sy[j][e];
        // The scores, unscaled and masked (−inf where the vector does not
        // see the key, causal, or the key is past the range).
        float t0 = -INFINITY, t1 = -INFINITY;
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int kk = 8 * j + 2 * tq + e;
                const float ki = ks[kk];
                s[j][e] = kk < cnt && k0 + kk <= lim0 ? s[j][e] * qi0 * ki : -INFINITY;
                s[j][2 + e] = kk < cnt && k0 + kk <= lim1 ? s[j][2 + e] * qi1 * ki : -INFINITY;
                t0 = fmaxf(t0, s[j][e]);
                t1 = fmaxf(t1, s[j][2 + e]);
            }
        __syncthreads();  // every warp is done with the tile's keys
        if (more) copy_keys(k0 + BK);
        // The online softmax of each of the lane's two vectors, reduced over its quad.
        t0 = fmaxf(t0, __shfl_xor_sync(FULL_MASK, t0, 1));
        t0 = fmaxf(t0, __shfl_xor_sync(FULL_MASK, t0, 2));
        t1 = fmaxf(t1, __shfl_xor_sync(FULL_MASK, t1, 1));
        t1 = fmaxf(t1, __shfl_xor_sync(FULL_MASK, t1, 2));
        const float n0 = fmaxf(m0, t0), n1 = fmaxf(m1, t1);
        const float c0 = n0 == m0 ? 1.f : __expf(m0 - n0), c1 = n1 == m1 ? 1.f : __expf(m1 - n1);  // m −inf, n finite: 0
        float sum0 = 0.f, sum1 = 0.f;
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                s[j][e] = s[j][e] == -INFINITY ? 0.f : __expf(s[j][e] - n0);
                s[j][2 + e] = s[j][2 + e] == -INFINITY ? 0.f : __expf(s[j][2 + e] - n1);
                sum0 += s[j][e];
                sum1 += s[j][2 + e];
            }
        l0 = l0 * c0 + sum0;
        l1 = l1 * c1 + sum1;
        m0 = n0;
        m1 = n1;
        // The output into this tile's units: × 2^(f_j − f_{j−1}) with the
        // correction (none before the first tile: the output is 0).
        const int df = k0 == r0 ? 0 : max(-126, min(127, fv - fprev));
        const float u = __uint_as_float((uint32_t)(127 + df) << 23);
        fprev = fv;
        const float oc0 = c0 * u, oc1 = c1 * u;
#pragma unroll
        for (int j = 0; j < NT; j++) {
            o[j][0] *= oc0, o[j][1] *= oc0;
            o[j][2] *= oc1, o[j][3] *= oc1;
        }
        if (more) cp_async_wait<1>();  // the values (the next keys may still come)
        else cp_async_wait<0>();
        __syncthreads();
        // O += P·V: P's A fragments are the score fragments (k16 step kk:
        // n8 tiles 2kk, 2kk+1) as FP16 pairs.
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t pa[2][4], t[2];
            split_f16(s[2 * kk][0], s[2 * kk][1], t);
            pa[0][0] = t[0], pa[1][0] = t[1];
            split_f16(s[2 * kk][2], s[2 * kk][3], t);
            pa[0][1] = t[0], pa[1][1] = t[1];
            split_f16(s[2 * kk + 1][0], s[2 * kk + 1][1], t);
            pa[0][2] = t[0], pa[1][2] = t[1];
            split_f16(s[2 * kk + 1][2], s[2 * kk + 1][3], t);
            pa[0][3] = t[0], pa[1][3] = t[1];
            const int vo = (16 * kk + vrow) * RS + vcol;
#pragma unroll
            for (int np = 0; np < NT / 2; np++) {
                if (16 * np >= hd) break;
                uint32_t b0[4], b1[4];
                ldmatrix_x4_trans(Vh + vo + 16 * np, b0);
                ldmatrix_x4_trans(Vl + vo + 16 * np, b1);
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    float* acc = o[2 * np + h];
                    mma_f16(acc, pa[0], b0[2 * h], b0[2 * h + 1]);
                    mma_f16(acc, pa[0], b1[2 * h], b1[2 * h + 1]);
                    mma_f16(acc, pa[1], b0[2 * h], b0[2 * h + 1]);
                }
            }
        }
        __syncthreads();  // every warp is done with the tile's values
        if (more) copy_values(k0 + BK);
    }

    // Each vector's sum over its quad, then the partial or the gated output
    // (the output back from its units: 2^-f of the last tile's value scale).
    l0 += __shfl_xor_sync(FULL_MASK, l0, 1);
    l0 += __shfl_xor_sync(FULL_MASK, l0, 2);
    l1 += __shfl_xor_sync(FULL_MASK, l1, 1);
    l1 += __shfl_xor_sync(FULL_MASK, l1, 2);
    const float ou = r0 < r1 ? __uint_as_float((uint32_t)(127 - fprev) << 23) : 1.f;
#pragma unroll
    for (int hr = 0; hr < 2; hr++) {
        const int v = hr ? vb : va;
        if (v >= nvec) continue;  // past the pass
        const float M = hr ? m1 : m0, L = hr ? l1 : l0;
        const int t = v / G, h = kvh * G + v % G;
        const size_t item = (size_t)t * nh + h;
        if (splits > 1) {
            float* pp = part + (item * splits + sp) * (FLASH_PART_HEAD + hd);
            if (tq == 0) {
                pp[0] = M;
                pp[1] = L;
            }
#pragma unroll
            for (int j = 0; j < NT; j++) {
                const int c = 8 * j + 2 * tq;
                if (c < hd) *reinterpret_cast<float2*>(pp + FLASH_PART_HEAD + c) = make_float2(o[j][2 * hr] * ou, o[j][2 * hr + 1] * ou);
            }
            continue;
        }
        const float* gate = proj + (size_t)t * pw + (size_t)h * 2 * hd + hd;
        const bool past = pos + t >= capacity;
        const float inv = 1.f / L;
#pragma unroll
        for (int j = 0; j < NT; j++) {
            const int c = 8 * j + 2 * tq;
            if (c >= hd) continue;
            float2 x = make_float2(flash_gated(o[j][2 * hr] * ou, inv, gate[c]), flash_gated(o[j][2 * hr + 1] * ou, inv, gate[c + 1]));
            if (past) x = make_float2(__int_as_float(0x7fc00000), __int_as_float(0x7fc00000));
            *reinterpret_cast<float2*>(attn + item * hd + c) = x;
        }
    }
}

// Instances attn_flash_mma_fast_hd{HD}[k16]: grid (ceil(n·nh/nkv / FMMA_BQ),
// nkv, splits), block FMMA_THREADS, FMMA_SMEM(HD, BK) bytes of dynamic shared
// memory (k16: tiles of 16 keys, two blocks an SM);
// the parts attn_mma_parts_fast wrote for the same HD (keys: the parts'
// rows, a multiple of FMMA_BK); otherwise the arguments as attn_flash_fast's.
#define ATTN_FLASH_MMA(HD, BK, SUF)                                                                                \
    extern "C" __global__ void __launch_bounds__(FMMA_THREADS, FMMA_BK / (BK)) attn_flash_mma_fast_hd##SUF(       \
        float* __restrict__ attn, float* __restrict__ part, const uint16_t* __restrict__ qp,                     \
        const float* __restrict__ qinv, const uint16_t* __restrict__ kp, const uint16_t* __restrict__ vp,        \
        const float* __restrict__ kinv, const int32_t* __restrict__ vexp, const float* __restrict__ proj,        \
        const int32_t* __restrict__ posp, int n, int keys, int capacity, int nh, int nkv, int hd, int pw,        \
        int splits) {                                                                                             \
        attn_flash_mma_body<HD, BK>(attn, part, qp, qinv, kp, vp, kinv, vexp, proj, posp, n, keys, capacity, nh,  \
                                    nkv, hd, pw, splits);                                                         \
    }
ATTN_FLASH_MMA(32, FMMA_BK, 32)
ATTN_FLASH_MMA(64, FMMA_BK, 64)
ATTN_FLASH_MMA(128, FMMA_BK, 128)
ATTN_FLASH_MMA(256, FMMA_BK, 256)
ATTN_FLASH_MMA(256, 16, 256k16)
