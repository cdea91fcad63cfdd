// The device sampler (engine/drama3/sampler.go, philox.go): one block draws
// one code from one logits vector with the CPU sampler's order of operations
// and the same Philox4x32-10 uniform, its settings and counters read from the
// frame control block (frame_control.cuh).
#include "common.cuh"
#include "frame_control.cuh"
#include "tower_embed.cuh"

#define SAMPLE_THREADS 1024
#define SAMPLE_MAX 8192                           // logits per draw (a power of two)
#define SAMPLE_PER (SAMPLE_MAX / SAMPLE_THREADS)  // sorted positions per thread, at most

// Philox4x32-10 word 0 of counter (c0, c1, 0, 0) under key (k0, k1)
// (Philox4x32x10).
__device__ __forceinline__ uint32_t philox_word0(uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1) {
    uint32_t c2 = 0, c3 = 0;
#pragma unroll
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const uint32_t lo0 = 0xD2511F53u * c0, hi0 = __umulhi(0xD2511F53u, c0);
        const uint32_t lo1 = 0xCD9E8D57u * c2, hi1 = __umulhi(0xCD9E8D57u, c2);
        const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    return c0;
}

// The sampler's strict order as one integer, smaller first: larger logit
// first (float bits made monotone and inverted; ±0 as one value), then lower
// index.
__device__ __forceinline__ uint64_t order_key(float l, int i) {
    uint32_t b = __float_as_uint(l == 0.f ? 0.f : l);
    b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return ((uint64_t)~b << 16) | (uint32_t)i;
}

// key_logit is the logit of an order key's float part ((uint32_t)(key >> 16)
// of order_key): exact, but −0 comes back as +0, which no weight can tell
// apart (x/T − (±0) and (±0)/T − s round alike, and exp(±0) = 1).
__device__ __forceinline__ float key_logit(uint32_t k) {
    const uint32_t b = ~k;
    return __uint_as_float((b & 0x80000000u) ? (b & 0x7fffffffu) : ~b);
}

__device__ __forceinline__ uint64_t warp_min_u64(uint64_t v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const uint64_t w = __shfl_xor_sync(FULL_MASK, v, o);
        v = w < v ? w : v;
    }
    return v;
}

// Shared memory: the sort's keys and indices, reused for the reductions
// outside the sort (48 KiB, the static limit). Phases that switch between
// the two views are separated by barriers.
union SampleShared {
    struct {
        uint32_t key[SAMPLE_MAX];
        uint16_t idx[SAMPLE_MAX];
    } sort;
    struct {
        double red[32];
        double scan[32];
        uint64_t min64[32];
        int cnt[2][32];
        int pick[2];
        double zkept;
    } r;
    // The warp selection's sorted lists of thread-first keys (two buffers
    // of 32 lists, merged pairwise from one into the other; the last merge
    // lands in list[1], past the candidates' slots [0, 64)) and its
    // candidate count.
    // The lean draw's lists: the keys' float parts (8 KiB; the last merge
    // lands in list[1], past the candidates' slots and below sel's fields).
    struct {
        uint32_t list[2][32][32];
    } sel32;
    struct {
        uint64_t list[2][32][32];
        int count;
        int code;  // warp_draw's pick
        // The lean draw's (MODE 3) warp minima and warp sums of Z, written
        // before its first barrier and the first merge's: past list, so
        // neither the candidates' slots nor sh.r's reductions touch them.
        uint64_t min64[32];
        double red[32];
        uint64_t first;  // the first key's float part (index 0), for the merging warps
    } sel;
};

#define SELECT_K 32       // the warp selection's largest top-k
#define SELECT_CAND 64    // the most candidates it sorts (else bisection)

// warp_min_key is warp_min_u64 for order keys (48 bits) with two 32-bit
// reductions: the float part, then the index among the lanes that hold it.
__device__ __forceinline__ uint64_t warp_min_key(uint64_t v) {
    const uint32_t hi = __reduce_min_sync(FULL_MASK, (uint32_t)(v >> 16));
    const uint32_t lo = __reduce_min_sync(FULL_MASK, (uint32_t)(v >> 16) == hi ? (uint32_t)(v & 0xffff) : 0xffffu);
    return ((uint64_t)hi << 16) | lo;
}

// warp_sort_u64 returns the lane-th smallest of the warp's 32 values (a
// bitonic network across lanes, ascending); warp_sort_t for any unsigned T
// (the lean draw sorts the keys' 32-bit float parts: one shuffle a step).
template <class T>
__device__ __forceinline__ T warp_sort_t(T v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int k = 2; k <= 32; k <<= 1)
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1) {
            const T o = __shfl_xor_sync(FULL_MASK, v, j);
            const bool keep_min = ((lane & k) == 0) == ((lane & j) == 0);
            v = keep_min ? (o < v ? o : v) : (o > v ? o : v);
        }
    return v;
}
__device__ __forceinline__ uint64_t warp_sort_u64(uint64_t v) { return warp_sort_t(v); }

// merge_lists runs the warp selection's five rounds of pairwise merges over
// list[2][32][32] (32 ascending lists of 32 in list[0]), each keeping the 32
// smallest of two ascending lists A and B: min(A[l], B[31−l]) holds them as
// a bitonic sequence, which a bitonic merge sorts; a block barrier a round.
// The 32 smallest of all end in list[1][0].
// BAR 0: the rounds sync the block; else BAR threads (warps 32 − BAR/32 …
// 31 of the block, warp their index among them) sync on named barrier 1,
// so the block's other warps work on meanwhile (the lean draw's Z).
template <class T, int BAR>
__device__ __forceinline__ void merge_lists(T (*list)[32][32], int warp, int lane) {
    int src = 0;
#pragma unroll
    for (int lists = 16; lists >= 1; lists >>= 1) {
        if (warp < lists) {
            const T a = list[src][2 * warp][lane];
            const T b = list[src][2 * warp + 1][31 - lane];
            T c = a < b ? a : b;
#pragma unroll
            for (int j = 16; j > 0; j >>= 1) {
                const T o = __shfl_xor_sync(FULL_MASK, c, j);
                c = (lane & j) == 0 ? (o < c ? o : c) : (o > c ? o : c);
            }
            list[src ^ 1][warp][lane] = c;
        }
        src ^= 1;
        if (BAR == 0)
            __syncthreads();
        else
            asm volatile("bar.sync 1, %0;" ::"n"(BAR) : "memory");
    }
}

// block_count returns the sum of c over the block (SAMPLE_THREADS threads)
// to every thread, with one barrier: buf alternates between two halves, so
// the next call's writes cannot race this call's reads.
__device__ __forceinline__ int block_count(int c, int (*cnt)[32], int& parity) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    c = __reduce_add_sync(FULL_MASK, c);
    int* buf = cnt[parity];
    parity ^= 1;
    if (lane == 0) buf[warp] = c;
    __syncthreads();
    return __reduce_add_sync(FULL_MASK, buf[lane]);
}

// sort_step is one step (k, j) of a bitonic network over sh.sort's first P
// entries: one compare-exchange per pair and thread.
__device__ __forceinline__ void sort_step(SampleShared& sh, int P, int k, int j, int tid) {
    for (int m = tid; m < P / 2; m += SAMPLE_THREADS) {
        const int i = ((m & ~(j - 1)) << 1) | (m & (j - 1)), l = i | j;
        const uint64_t a = ((uint64_t)sh.sort.key[i] << 16) | sh.sort.idx[i];
        const uint64_t b = ((uint64_t)sh.sort.key[l] << 16) | sh.sort.idx[l];
        if ((a > b) == ((i & k) == 0)) {
            sh.sort.key[i] = (uint32_t)(b >> 16);
            sh.sort.idx[i] = (uint16_t)b;
            sh.sort.key[l] = (uint32_t)(a >> 16);
            sh.sort.idx[l] = (uint16_t)a;
        }
    }
}

// sort_pairs sorts sh.sort's first P entries (a power of two ≥ 32) by
// (key, idx), ascending; a network of one warp's pairs syncs the warp only.
__device__ void sort_pairs(SampleShared& sh, int P) {
    const int tid = threadIdx.x;
    if (P <= 64) {  // one warp's pairs
        if (tid < 32) {
            for (int k = 2; k <= P; k <<= 1)
                for (int j = k >> 1; j > 0; j >>= 1) {
                    sort_step(sh, P, k, j, tid);
                    __syncwarp();
                }
        }
        __syncthreads();
        return;
    }
    for (int k = 2; k <= P; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            sort_step(sh, P, k, j, tid);
            __syncthreads();
        }
}

// ---------------------------------------------------------------------------
// warp_draw ends a draw in one warp once the selection left m ≤ SELECT_CAND
// candidates (limit ≤ m of them kept by top-k) unsorted in sh.sort's first
// m slots: the sort, the kept weights and their running sums, top-p and the
// pick, the steps of sample_body's block path, with lane l holding sorted
// positions 2l and 2l+1 and shuffles in place of block barriers. Its running
// sums add the lane pairs first, so they may differ from the block path's in
// the last bits (TestSamplerMatchesCPU holds both to the CPU's choice).
// Writes the code to sh.sel.code. KEYS (the lean draw): the candidates
// ranked instead of sorted by the network (the same order), their logits
// from their keys (key_logit), not a gather from memory.
template <bool KEYS>
__device__ void warp_draw(SampleShared& sh, int m, int limit, const float* __restrict__ logits, double temp,
                          double smax, double z, float top_p, double u) {
    const int lane = threadIdx.x & 31;
    const int j0 = 2 * lane, j1 = j0 + 1;
    int i0, i1;
    uint32_t key0 = 0, key1 = 0;  // KEYS: the order keys' float parts at j0, j1
    // KEYS: sorted positions of sh.sel.list[1][2…3] (the merges' last list
    // [1][0] is read before the barrier ahead of this).
    uint64_t* const sorted = &sh.sel.list[1][2][0];
    if (KEYS) {
        // The candidates ranked, not sorted by a network (21 steps of
        // shared-memory exchanges and warp syncs for 64): lane l stages
        // candidates l and l + 32 as order keys, counts the keys below each
        // (the order is strict: an index is in every key), and writes each
        // to its rank: the network's order, in two warp syncs.
        uint64_t* const stage = &sh.sel.list[1][0][0];  // 64 slots, ~0 past m
        const uint64_t a = lane < m ? ((uint64_t)sh.sort.key[lane] << 16) | sh.sort.idx[lane] : ~0ull;
        const uint64_t b = lane + 32 < m ? ((uint64_t)sh.sort.key[lane + 32] << 16) | sh.sort.idx[lane + 32] : ~0ull;
        stage[lane] = a;
        stage[lane + 32] = b;
        __syncwarp();
        int ra = 0, rb = 0;
        for (int i = 0; i < m; i += 2) {
            const ulonglong2 o = *reinterpret_cast<const ulonglong2*>(&stage[i]);
            ra += (o.x < a) + (o.y < a);
            rb += (o.x < b) + (o.y < b);
        }
        if (lane < m) sorted[ra] = a;
        if (lane + 32 < m) sorted[rb] = b;
        __syncwarp();
        const uint64_t s0 = sorted[j0], s1 = sorted[j1];
        i0 = j0 < m ? (int)(s0 & 0xffff) : -1;
        i1 = j1 < m ? (int)(s1 & 0xffff) : -1;
        key0 = (uint32_t)(s0 >> 16);
        key1 = (uint32_t)(s1 >> 16);
    } else {
        int P = 32;
        while (P < m) P <<= 1;
        for (int i = m + lane; i < P; i += 32) {
            sh.sort.key[i] = 0xffffffffu;
            sh.sort.idx[i] = 0xffffu;
        }
        __syncwarp();
        for (int k = 2; k <= P; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) {
                sort_step(sh, P, k, j, lane);
                __syncwarp();
            }
        i0 = j0 < m ? sh.sort.idx[j0] : -1;
        i1 = j1 < m ? sh.sort.idx[j1] : -1;
    }
    const double w0 = (i0 >= 0 && j0 < limit) ? exp((double)(KEYS ? key_logit(key0) : logits[i0]) / temp - smax) : 0.0;
    const double w1 = (i1 >= 0 && j1 < limit) ? exp((double)(KEYS ? key_logit(key1) : logits[i1]) / temp - smax) : 0.0;
    // Running sums: a scan of the lanes' pairs, then within the pair.
    double incl = w0 + w1;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const double v = __shfl_up_sync(FULL_MASK, incl, o);
        if (lane >= o) incl += v;
    }
    double excl = __shfl_up_sync(FULL_MASK, incl, 1);
    if (lane == 0) excl = 0.0;
    const double run0 = excl + w0, run1 = run0 + w1;
    // Top-p: the first position whose running sum reaches top_p·Z.
    int kept = limit;
    if (top_p < 1.f) {
        const double need = (double)top_p * z;
        int c = 0x7fffffff;
        if (j0 < limit && run0 >= need)
            c = j0 + 1;
        else if (j1 < limit && run1 >= need)
            c = j1 + 1;
        kept = min(limit, __reduce_min_sync(FULL_MASK, c));
    }
    const int owner = (kept - 1) >> 1;
    const double z0 = __shfl_sync(FULL_MASK, run0, owner), z1 = __shfl_sync(FULL_MASK, run1, owner);
    const double target = u * (((kept - 1) & 1) ? z1 : z0);
    int p = 0x7fffffff;
    if (j0 < kept && target < run0)
        p = j0;
    else if (j1 < kept && target < run1)
        p = j1;
    int pick = __reduce_min_sync(FULL_MASK, p);
    if (pick == 0x7fffffff) pick = kept - 1;
    if (lane == 0) sh.sel.code = KEYS ? (int)(sorted[pick] & 0xffff) : sh.sort.idx[pick];
}

// ---------------------------------------------------------------------------
// sample_body draws codebook cb's code of frame ctrl->frame from the n
// logits (n ≤ SAMPLE_MAX), as Sampler.SampleWith with u = Uniform(seed,
// frame, cb): non-finite logits set error bit cb (code 0); temperature 0 is
// the first index of the strict order (the argmax, lowest index on ties);
// else w_i = exp(l_i/T − l_max/T) in float64 and Z = Σ w; the kept
// candidates sorted by the strict order (with top-k ≤ SAMPLE_THREADS, the k
// first are selected by bisecting the order's keys, then only they are
// sorted; else the whole vocabulary is); top-p over the order, top-k, target
// = u·Σ kept w, the first kept index whose running sum exceeds it. Sums are
// parallel (the CPU's are sequential: they may differ in the last bits, so a
// draw within rounding of a boundary may pick the neighbour).
// With ctrl->forced the code is ctrl->forced_codes[cb] instead. Writes
// ctrl->codes[cb] and, when end_index ≥ 0, ctrl->end = (code == end_index).
// With out not null (a batch of tests): block b draws from logits[b·n…]
// with frame ctrl->frame + b into out[b], nothing forced, ctrl's codes
// untouched. With out null and a grid of n (Tower.FrameRows), block b
// draws the code of row b's take: logits[b·n…], control block
// ctrl[slots[b]] (slots null: ctrl[b]), its embedding to edst + b·2·width
// (the row's eh_proj input). Grid: (batch), SAMPLE_THREADS threads.
//
// Selecting the top-k: with WARP_SELECT and top-k ≤ SELECT_K, each warp
// sorts its threads' first keys, five rounds of pairwise merges (a barrier
// each) leave the 32 smallest of them, the k-th is the threshold t (k
// distinct keys are ≤ t, so the k first of the order are), and the keys
// ≤ t (about k) are the candidates; more than
// SELECT_CAND of them, or a larger top-k, or WARP_SELECT off: bisection
// over the keys (one block count per bit, 48 barriers).
//
// With etable not null (and out null) the draw then writes the next tower
// layer's embedding half of its eh_proj input, edst = enorm(E[code]) of the
// [eentries, width] BF16 table (tower_embed_row; tower_out_eh left it), so
// that layer needs no launch of its own for it.
//
// TABLE (out null; sample_logits_lean_table): the draw then does the next
// layer's table norm instead (tower_table_add_rmsnorm's row,
// table_add_rmsnorm_row): tx += ttab[code] (the layer's eh_proj table,
// float32 [eentries, width]; tx holds W_h·hnorm(h)), edst =
// attention_norm(tx) with gain enorm; row b's tx and edst at b·width.
template <int MODE, bool TABLE = false>
__device__ __forceinline__ void sample_body(const float* __restrict__ logits, int n, int cb, int end_index,
                                            FrameControl* ctrl, int32_t* __restrict__ out,
                                            const uint16_t* __restrict__ etable, int eentries,
                                            const float* __restrict__ enorm, float* __restrict__ edst, int width,
                                            float eps, const int32_t* __restrict__ slots,
                                            const float* __restrict__ ttab = nullptr, float* __restrict__ tx = nullptr) {
    pdl_entry();
    logits += (size_t)blockIdx.x * n;
    if (!out) {  // row b: a take's frame row
        ctrl += slots ? slots[blockIdx.x] : (int)blockIdx.x;
        if (edst) edst += (size_t)blockIdx.x * (TABLE ? 1 : 2) * width;
        if (TABLE) tx += (size_t)blockIdx.x * width;
    }
    const uint32_t frame = (uint32_t)(ctrl->frame + (out ? (int)blockIdx.x : 0));
    __shared__ SampleShared sh;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    // Element i = tid + e·SAMPLE_THREADS of the vector sits in slot e.
    uint64_t kv[SAMPLE_PER];  // order keys; ~0 past n
    bool bad = false;
    uint64_t first = ~0ull;
#pragma unroll
    for (int e = 0; e < SAMPLE_PER; e++) {
        const int i = tid + e * SAMPLE_THREADS;
        const float l = i < n ? logits[i] : 0.f;
        bad |= !isfinite(l);
        kv[e] = i < n ? order_key(l, i) : ~0ull;
        first = kv[e] < first ? kv[e] : first;
    }
    const uint64_t mine = first;  // this thread's first key
    // The lean draw (MODE 3) reads the control block's settings with the
    // logits, one round of loads where the other kernels read each where it
    // is used, a dependent round trip each; and, knowing whether the warp
    // selection runs, sorts each warp's first keys before its first barrier.
    bool lean_forced = false, lean_ended = false, sel = false;
    float lean_temp = 0.f, lean_top_p = 1.f;
    int lean_top_k = 0;
    uint32_t lean_seed_lo = 0, lean_seed_hi = 0;
    if (MODE == 3) {
        lean_forced = !out && ctrl->forced;
        lean_ended = !out && (etable || TABLE) && ctrl->end;
        lean_temp = ctrl->temperature;
        lean_top_p = ctrl->top_p;
        lean_top_k = ctrl->top_k;
        lean_seed_lo = ctrl->seed_lo;
        lean_seed_hi = ctrl->seed_hi;
        const int limit = (lean_top_k > 0 && lean_top_k < n) ? lean_top_k : n;
        sel = !lean_forced && lean_temp != 0.f && limit < n && limit <= SELECT_K;
        if (sel) {
            // The selection's threshold from the keys' float parts alone
            // (one 32-bit shuffle a step where the keys take two): the
            // limit-th smallest float part t of the thread-first keys is
            // that of a key at or after the limit-th of the order, so every
            // key of the limit first has a float part ≤ t; ties at t only
            // add candidates (more than SELECT_CAND: the bisection).
            const uint32_t v = warp_sort_t((uint32_t)(mine >> 16));
            sh.sel32.list[0][warp][lane] = v;
            // Lane 0: the warp's least float part, with index 0: the
            // selection needs only the maximum's value of the first key
            // (and the bisection, should it follow, a lower bound).
            if (lane == 0) sh.sel.min64[warp] = (uint64_t)v << 16;
        } else {
            const uint64_t v = warp_min_u64(mine);
            if (lane == 0) sh.sel.min64[warp] = v;
        }
        if (tid == 0) sh.sel.count = 0;
    }
    bad = __syncthreads_or(bad);
    int code = 0;
    if ((MODE == 3 ? lean_forced : ctrl->forced) && !out) {
        code = ctrl->forced_codes[cb];
    } else if (!bad) {
        // The first index of the order.
        if (MODE == 3) {
            if (!sel || warp < 16) first = warp_min_u64(sh.sel.min64[lane]);  // else after the merges
        } else {
            first = warp_min_u64(first);
            if (lane == 0) sh.r.min64[warp] = first;
            __syncthreads();
            first = warp_min_u64(sh.r.min64[lane]);
        }
        const int top = (int)(first & 0xffff);
        const float temperature = MODE == 3 ? lean_temp : ctrl->temperature;
        if (temperature == 0.f) {
            code = top;
        } else {
            const double temp = (double)temperature;
            double smax = (double)(MODE == 3 ? key_logit((uint32_t)(first >> 16)) : logits[top]) / temp;
            double zpart = 0.0;
            if (!(MODE == 3 && sel)) {
#pragma unroll
                for (int e = 0; e < SAMPLE_PER; e++)
                    if (tid + e * SAMPLE_THREADS < n)
                        zpart += exp(
                            (double)(MODE == 3 ? key_logit((uint32_t)(kv[e] >> 16)) : logits[tid + e * SAMPLE_THREADS]) /
                                temp -
                            smax);
            }
            // Z as block_sum adds it (warp sums, then the warps' in one
            // warp); the lean draw's with the selection below.
            double z = 0.0;
            if (MODE == 3) {
                if (!sel) {
                    zpart = warp_sum(zpart);
                    if (lane == 0) sh.sel.red[warp] = zpart;
                    __syncthreads();
                    z = warp_sum(sh.sel.red[lane]);
                }
            } else {
                z = block_sum(zpart, sh.r.red);
            }
            const int top_k = MODE == 3 ? lean_top_k : ctrl->top_k;
            const int limit = (top_k > 0 && top_k < n) ? top_k : n;

            // The candidates to sort: with a small top-k, the limit first of
            // the order or a few more (by warps, else the smallest keys ≤
            // the limit-th key, found by bisection); else every index.
            int m = n;
            bool selected = false;
            if (MODE == 3 ? sel : (MODE >= 1 && limit < n && limit <= SELECT_K)) {
                if (MODE != 3) {
                    const uint64_t v = warp_sort_u64(mine);
                    __syncthreads();  // block_sum's reads are done
                    sh.sel.list[0][warp][lane] = v;
                    if (tid == 0) sh.sel.count = 0;
                    __syncthreads();
                }
                // The 32 smallest thread-first keys (the lean draw: float
                // parts), the limit-th of them the threshold t.
                uint64_t t;
                uint32_t t32;
                if (MODE == 3) {
                    // Warps 16–31 merge (their own barrier), while warps
                    // 0–15 sum Z's terms: their threads' and those of
                    // thread + 512 (its logits re-read: L1), each warp's
                    // sum the one its threads' own warp would make, in
                    // block_sum's order. Z's float64 work (≈ 35
                    // instructions a logit) and the merges' shuffles
                    // overlap instead of following each other.
                    if (warp < 16) {
#pragma unroll
                        for (int e = 0; e < SAMPLE_PER; e++)
                            if (tid + e * SAMPLE_THREADS < n)
                                zpart += exp((double)key_logit((uint32_t)(kv[e] >> 16)) / temp - smax);
                        double zo = 0.0;
#pragma unroll
                        for (int e = 0; e < SAMPLE_PER; e++) {
                            const int i = tid + SAMPLE_THREADS / 2 + e * SAMPLE_THREADS;
                            if (i < n) zo += exp((double)logits[i] / temp - smax);
                        }
                        zpart = warp_sum(zpart);
                        zo = warp_sum(zo);
                        if (lane == 0) {
                            sh.sel.red[warp] = zpart;
                            sh.sel.red[warp + 16] = zo;
                        }
                        if (tid == 0) sh.sel.first = first;
                    } else {
                        merge_lists<uint32_t, SAMPLE_THREADS / 2>(sh.sel32.list, warp - 16, lane);
                    }
                    __syncthreads();
                    if (warp >= 16) {
                        first = sh.sel.first;
                        smax = (double)key_logit((uint32_t)(first >> 16)) / temp;
                    }
                    z = warp_sum(sh.sel.red[lane]);
                    t32 = sh.sel32.list[1][0][limit - 1];
                } else {
                    merge_lists<uint64_t, 0>(sh.sel.list, warp, lane);
                    t = sh.sel.list[1][0][limit - 1];
                }
#pragma unroll
                for (int e = 0; e < SAMPLE_PER; e++) {
                    if (MODE == 3 ? (tid + e * SAMPLE_THREADS < n && (uint32_t)(kv[e] >> 16) <= t32) : kv[e] <= t) {
                        const int slot = atomicAdd(&sh.sel.count, 1);
                        if (slot < SELECT_CAND) {
                            sh.sort.key[slot] = (uint32_t)(kv[e] >> 16);
                            sh.sort.idx[slot] = (uint16_t)kv[e];
                        }
                    }
                }
                __syncthreads();
                const int c = sh.sel.count;
                if (c <= SELECT_CAND) {
                    m = c;
                    selected = true;
                }
            }
            if (!selected && limit < n && limit <= SAMPLE_THREADS) {
                uint64_t lo = first, hi = (1ull << 48) - 1;
                int parity = 0;
                while (lo < hi) {
                    const uint64_t mid = lo + ((hi - lo) >> 1);
                    int c = 0;
#pragma unroll
                    for (int e = 0; e < SAMPLE_PER; e++) c += kv[e] <= mid;
                    if (block_count(c, sh.r.cnt, parity) >= limit)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                // Slots by an exclusive scan of the threads' counts.
                int c = 0;
#pragma unroll
                for (int e = 0; e < SAMPLE_PER; e++) c += kv[e] <= lo;
                int incl = c;
#pragma unroll
                for (int o = 1; o < 32; o <<= 1) {
                    const int v = __shfl_up_sync(FULL_MASK, incl, o);
                    if (lane >= o) incl += v;
                }
                __syncthreads();  // the last bisection step's reads are done
                if (lane == 31) sh.r.cnt[0][warp] = incl;
                __syncthreads();
                int slot = incl - c;
                for (int w = 0; w < warp; w++) slot += sh.r.cnt[0][w];
                __syncthreads();  // the sort arrays overwrite cnt
#pragma unroll
                for (int e = 0; e < SAMPLE_PER; e++) {
                    if (kv[e] <= lo) {
                        sh.sort.key[slot] = (uint32_t)(kv[e] >> 16);
                        sh.sort.idx[slot] = (uint16_t)kv[e];
                        slot++;
                    }
                }
                m = limit;
            } else if (!selected) {
                __syncthreads();  // the sort arrays overwrite the reductions'
#pragma unroll
                for (int e = 0; e < SAMPLE_PER; e++) {
                    const int i = tid + e * SAMPLE_THREADS;
                    if (i < n) {
                        sh.sort.key[i] = (uint32_t)(kv[e] >> 16);
                        sh.sort.idx[i] = (uint16_t)kv[e];
                    }
                }
            }
            if (MODE == 3 && selected) {
                if (warp == 0)
                    warp_draw<true>(sh, m, limit, logits, temp, smax, z, lean_top_p,
                                    (double)philox_word0(frame, (uint32_t)cb, lean_seed_lo, lean_seed_hi) * 0x1p-32);
                __syncthreads();
                code = sh.sel.code;
            } else if (MODE == 2 && selected) {
                if (warp == 0)
                    warp_draw<false>(sh, m, limit, logits, temp, smax, z, ctrl->top_p,
                                     (double)philox_word0(frame, (uint32_t)cb, ctrl->seed_lo, ctrl->seed_hi) * 0x1p-32);
                __syncthreads();
                code = sh.sel.code;
            } else {
                int P = 32;
                while (P < m) P <<= 1;
                for (int i = m + tid; i < P; i += SAMPLE_THREADS) {
                    sh.sort.key[i] = 0xffffffffu;
                    sh.sort.idx[i] = 0xffffu;
                }
                __syncthreads();
                sort_pairs(sh, P);

                // Thread tid holds sorted positions [tid·per, tid·per + per).
                const int per = max(1, P / SAMPLE_THREADS);
                const int j0 = tid * per;
                int ids[SAMPLE_PER];
                double run[SAMPLE_PER];  // inclusive running sums of kept weights, local first
                double local = 0.0;
#pragma unroll
                for (int c = 0; c < SAMPLE_PER; c++) {
                    const int j = j0 + c;
                    ids[c] = (c < per && j < m) ? sh.sort.idx[j] : -1;
                    if (ids[c] >= 0 && j < limit) local += exp((double)logits[ids[c]] / temp - smax);
                    run[c] = local;
                }
                // Exclusive scan of the threads' sums (warp scan, then across warps).
                double incl = local;
#pragma unroll
                for (int o = 1; o < 32; o <<= 1) {
                    const double v = __shfl_up_sync(FULL_MASK, incl, o);
                    if (lane >= o) incl += v;
                }
                __syncthreads();  // the sort arrays become the reduction space
                if (lane == 31) sh.r.scan[warp] = incl;
                __syncthreads();
                if (warp == 0) {
                    double v = sh.r.scan[lane], s = v;
#pragma unroll
                    for (int o = 1; o < 32; o <<= 1) {
                        const double u = __shfl_up_sync(FULL_MASK, s, o);
                        if (lane >= o) s += u;
                    }
                    sh.r.scan[lane] = s - v;  // exclusive
                }
                if (tid == 0) {
                    sh.r.pick[0] = limit;
                    sh.r.pick[1] = 0x7fffffff;
                }
                __syncthreads();
                const double base = sh.r.scan[warp] + (incl - local);
#pragma unroll
                for (int c = 0; c < SAMPLE_PER; c++) run[c] += base;
                // Top-p: the first position whose running sum reaches top_p·Z.
                const float top_p = ctrl->top_p;
                if (top_p < 1.f) {
                    const double need = (double)top_p * z;
#pragma unroll
                    for (int c = 0; c < SAMPLE_PER; c++) {
                        const int j = j0 + c;
                        if (c < per && j < limit && run[c] >= need) {
                            atomicMin(&sh.r.pick[0], j + 1);
                            break;
                        }
                    }
                }
                __syncthreads();
                const int kept = sh.r.pick[0];
#pragma unroll
                for (int c = 0; c < SAMPLE_PER; c++)
                    if (c < per && j0 + c == kept - 1) sh.r.zkept = run[c];
                __syncthreads();
                const double u = (double)philox_word0(frame, (uint32_t)cb, ctrl->seed_lo, ctrl->seed_hi) * 0x1p-32;
                const double target = u * sh.r.zkept;
#pragma unroll
                for (int c = 0; c < SAMPLE_PER; c++) {
                    const int j = j0 + c;
                    if (c < per && j < kept && target < run[c]) {
                        atomicMin(&sh.r.pick[1], j);
                        break;
                    }
                }
                __syncthreads();
                int pick = sh.r.pick[1];
                if (pick == 0x7fffffff) pick = kept - 1;
                // Position pick's index: its owner publishes it.
                __syncthreads();
#pragma unroll
                for (int c = 0; c < SAMPLE_PER; c++)
                    if (c < per && j0 + c == pick) sh.r.pick[0] = ids[c];
                __syncthreads();
                code = sh.r.pick[0];
            }
        }
    }
    if (tid == 0) {
        if (bad) atomicOr(&ctrl->error, 1 << cb);
        if (out) {
            out[blockIdx.x] = code;
            return;
        }
        ctrl->codes[cb] = code;
        if (end_index >= 0) ctrl->end = code == end_index;
    }
    if (TABLE && !out) {  // this draw's end when it decides it (the semantic draw), else ctrl->end as read above
        const bool ended = end_index >= 0 ? code == end_index : MODE == 3 ? lean_ended : ctrl->end != 0;
        table_add_rmsnorm_row(edst, tx, ttab, code, ended, ctrl, eentries, enorm, width, eps, sh.r.red);
        return;
    }
    if (out || !etable) return;
    if (MODE == 3 && end_index < 0) {  // this draw writes no end: ctrl->end as read above
        tower_embed_row_lean<SAMPLE_PER>(edst, etable, code, lean_ended, ctrl, eentries, enorm, width, eps, sh.r.red);
        return;
    }
    __syncthreads();  // ctrl->end as this draw left it
    tower_embed_row(edst, etable, code, ctrl, eentries, enorm, width, eps, sh.r.red);
}

// sample_logits selects every top-k by bisection (PROSCENIUM_GPU_SAMPLER=bisect;
// the warp selection below is the default since it was measured: docs/PERF.md).
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS) sample_logits(const float* __restrict__ logits, int n,
                                                                           int cb, int end_index,
                                                                           FrameControl* ctrl,
                                                                           int32_t* __restrict__ out,
                                                                           const uint16_t* __restrict__ etable,
                                                                           int eentries,
                                                                           const float* __restrict__ enorm,
                                                                           float* __restrict__ edst, int width,
                                                                           float eps,
                                                                           const int32_t* __restrict__ slots) {
    sample_body<0>(logits, n, cb, end_index, ctrl, out, etable, eentries, enorm, edst, width, eps, slots);
}

// sample_logits_warp is sample_logits with the warp selection of a top-k ≤
// SELECT_K.
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS) sample_logits_warp(const float* __restrict__ logits,
                                                                                int n, int cb, int end_index,
                                                                                FrameControl* ctrl,
                                                                                int32_t* __restrict__ out,
                                                                                const uint16_t* __restrict__ etable,
                                                                                int eentries,
                                                                                const float* __restrict__ enorm,
                                                                                float* __restrict__ edst, int width,
                                                                                float eps,
                                                                                const int32_t* __restrict__ slots) {
    sample_body<1>(logits, n, cb, end_index, ctrl, out, etable, eentries, enorm, edst, width, eps, slots);
}

// sample_logits_warp_pick is sample_logits_warp with the draw's end in one
// warp (warp_draw) after a warp selection (the default draw).
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS) sample_logits_warp_pick(
    const float* __restrict__ logits, int n, int cb, int end_index, FrameControl* ctrl, int32_t* __restrict__ out,
    const uint16_t* __restrict__ etable, int eentries, const float* __restrict__ enorm, float* __restrict__ edst,
    int width, float eps, const int32_t* __restrict__ slots) {
    sample_body<2>(logits, n, cb, end_index, ctrl, out, etable, eentries, enorm, edst, width, eps, slots);
}

// sample_logits_lean is sample_logits_warp_pick with fewer round trips on
// its critical path (PROSCENIUM_GPU_SAMPLER=lean; docs/PERF.md "tower33"):
// the settings and the end flag read with the logits; the logits for Z and
// the kept weights decoded from the order keys (key_logit: no second read,
// no gathers); the maximum from the first key; the warp sort of the first
// keys' float parts before the first barrier, the warp minima published at
// it; the merges on 16 warps with their own barrier while the other 16 sum
// Z (3 block barriers to the candidates where sample_logits_warp_pick has
// 12, and Z off the merges' path); the ≤ 64 candidates ranked; the next
// layer's embedding row and gains loaded in one round. The same arithmetic in the same order: the same
// codes and embedding bits as sample_logits_warp_pick
// (TestSamplerLeanMatchesWarpPick).
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS) sample_logits_lean(
    const float* __restrict__ logits, int n, int cb, int end_index, FrameControl* ctrl, int32_t* __restrict__ out,
    const uint16_t* __restrict__ etable, int eentries, const float* __restrict__ enorm, float* __restrict__ edst,
    int width, float eps, const int32_t* __restrict__ slots) {
    sample_body<3>(logits, n, cb, end_index, ctrl, out, etable, eentries, enorm, edst, width, eps, slots);
}

// sample_logits_lean_table is sample_logits_lean with the next tower layer's
// table norm in its tail (sample_body's TABLE; engine/cuda drawTable,
// $PROSCENIUM_GPU_DRAW_NORM; docs/PERF.md "drawnorm28"): after the code, tx
// += ttab[code] and tnormed = attention_norm(tx) with gain tw, the bits
// tower_table_add_rmsnorm gives (the same row code, the same 1024 threads),
// a launch less on the frame's path. Frame rows only (out null).
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS) sample_logits_lean_table(
    const float* __restrict__ logits, int n, int cb, int end_index, FrameControl* ctrl, const float* __restrict__ ttab,
    int tentries, const float* __restrict__ tw, float* __restrict__ tx, float* __restrict__ tnormed, int width,
    float eps, const int32_t* __restrict__ slots) {
    sample_body<3, true>(logits, n, cb, end_index, ctrl, nullptr, nullptr, tentries, tw, tnormed, width, eps, slots,
                         ttab, tx);
}
