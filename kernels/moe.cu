// The backbone's mixture of experts around the GEMVs (engine/cpu moe.go):
// routing (softmax, top-k, renormalisation) on the device, SwiGLU of the
// routed and shared experts, and the weighted combine with the gated shared
// expert, the residual and the next RMSNorm. The projections themselves are
// the GEMVs of gemv.cu (router + shared gate/up + shared_expert_gate stacked
// in one BF16 matrix; experts gathered by id).
#include "gemv.cuh"
#include "fused.cuh"
#include "row_norm.cuh"
#include "expert_addr.cuh"
#include "bf16_parts.cuh"
#include "mma_f16.cuh"

#define MOE_MAX_EXPERTS 1024

// ---------------------------------------------------------------------------
// The top k of a routing as one warp's sorted lists: each lane sorts the
// candidates it holds, then five butterfly steps merge lane l's list with
// lane l^o's (o = 16, 8, 4, 2, 1), after which every lane holds the best
// ROUTE_LIST of all. A step is shuffles of the partner's list and a bitonic
// merge in registers (no shared memory, no barrier): about a third of the
// latency of k rounds of a warp-wide arg-max. A candidate beats another
// when its value is larger, or equal at a lower index (cpu.Route's ties);
// lists are padded with (−inf, INT_MAX).
#define ROUTE_LIST 8  // the list's length: routings of k ≤ ROUTE_LIST take this path

__device__ __forceinline__ bool route_beats(float av, int ai, float bv, int bi) {
    return av > bv || (av == bv && ai < bi);
}

// route_cx puts the better of slots i and j (i < j) in slot i.
__device__ __forceinline__ void route_cx(float& vi, int& ii, float& vj, int& ij) {
    if (route_beats(vj, ij, vi, ii)) {
        const float tv = vi;
        const int ti = ii;
        vi = vj, ii = ij, vj = tv, ij = ti;
    }
}

// route_bitonic_clean sorts a bitonic list into descending order.
__device__ __forceinline__ void route_bitonic_clean(float (&v)[ROUTE_LIST], int (&ix)[ROUTE_LIST]) {
#pragma unroll
    for (int stride = ROUTE_LIST / 2; stride > 0; stride >>= 1)
#pragma unroll
        for (int i = 0; i < ROUTE_LIST; i++)
            if ((i & stride) == 0) route_cx(v[i], ix[i], v[i + stride], ix[i + stride]);
}

// route_sort sorts a lane's list into descending order (a bitonic sort).
__device__ __forceinline__ void route_sort(float (&v)[ROUTE_LIST], int (&ix)[ROUTE_LIST]) {
#pragma unroll
    for (int size = 2; size <= ROUTE_LIST; size <<= 1)
#pragma unroll
        for (int stride = size / 2; stride > 0; stride >>= 1)
#pragma unroll
            for (int i = 0; i < ROUTE_LIST; i++) {
                const int j = i ^ stride;
                if (j > i) {
                    if ((i & size) == 0)
                        route_cx(v[i], ix[i], v[j], ix[j]);
                    else
                        route_cx(v[j], ix[j], v[i], ix[i]);
                }
            }
}

// route_insert puts (nv, ni) into a lane's sorted list when it beats the last.
__device__ __forceinline__ void route_insert(float (&v)[ROUTE_LIST], int (&ix)[ROUTE_LIST], float nv, int ni) {
#pragma unroll
    for (int i = 0; i < ROUTE_LIST; i++) {
        if (route_beats(nv, ni, v[i], ix[i])) {
            const float tv = v[i];
            const int ti = ix[i];
            v[i] = nv, ix[i] = ni, nv = tv, ni = ti;
        }
    }
}

// warp_top_list leaves in every lane of the calling warp the best
// ROUTE_LIST of the E candidates value(e), e < E, in descending order.
template <class F>
__device__ __forceinline__ void warp_top_list(int E, F value, float (&v)[ROUTE_LIST], int (&ix)[ROUTE_LIST]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < ROUTE_LIST; i++) {
        const int e = lane + 32 * i;
        v[i] = e < E ? value(e) : -INFINITY;
        ix[i] = e < E ? e : 0x7fffffff;
    }
    route_sort(v, ix);
    for (int e = lane + 32 * ROUTE_LIST; e < E; e += 32) route_insert(v, ix, value(e), e);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        float pv[ROUTE_LIST];
        int pi[ROUTE_LIST];
#pragma unroll
        for (int i = 0; i < ROUTE_LIST; i++) {
            pv[i] = __shfl_xor_sync(FULL_MASK, v[i], o);
            pi[i] = __shfl_xor_sync(FULL_MASK, ix[i], o);
        }
        // The best ROUTE_LIST of two descending lists, as a bitonic list.
#pragma unroll
        for (int i = 0; i < ROUTE_LIST; i++) {
            const int r = ROUTE_LIST - 1 - i;
            if (route_beats(pv[r], pi[r], v[i], ix[i])) v[i] = pv[r], ix[i] = pi[r];
        }
        route_bitonic_clean(v, ix);
    }
}

// ---------------------------------------------------------------------------
// Routing (cpu.Route): for row t, logits at dense + t·dstride (the first E
// values of the stacked projection). Exact: the softmax over all E experts
// as the CPU computes it (each exponential rounded from double, their
// float64 sum rounded once, one float32 division), the k largest
// probabilities (ties to the lower index), divided by their float64 sum
// rounded once: the CPU's bits. Fast: the k largest logits (ties to the
// lower index), weighted by the softmax of those k alone: the renormalised
// top-k probabilities are that softmax (the full softmax's denominator
// cancels), so the E exponentials and their sum are skipped.
// moe_route_select leaves row t's choice j < k in sid[j] (the expert) and
// sw[j] (its weight), shared memory of the calling block (every thread
// calls it; it ends with a barrier); LD reads the logits (fused.cuh:
// LoadL2 where other blocks of the same grid wrote them). Logits that are
// not numbers choose no expert: the lists' padding (index INT_MAX) or an
// arg-max that never beat its start could win, so a choice outside [0, E)
// becomes expert 0 (route_id), its weight NaN like the row: the kernels
// that read the experts stay in bounds and the NaN reaches the draw, which
// reports it. Finite logits never choose outside [0, E), so their bits are
// unchanged.
__device__ __forceinline__ int32_t route_id(int i, int E) { return i >= 0 && i < E ? i : 0; }
#define ROUTE_MAXK 64  // engine/cuda maxRouteTopK

template <class P, class LD>
__device__ __forceinline__ void moe_route_select(int t, const float* __restrict__ dense, int dstride, int E, int k,
                                                 int32_t* sid, float* sw) {
    __shared__ float p[MOE_MAX_EXPERTS];
    __shared__ double red[32];
    const float* lg = dense + (size_t)t * dstride;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (!P::exact && k <= ROUTE_LIST) {
        // Fast: warp 0 alone; the barrier at the end publishes its choice.
        if (warp == 0) {
            float v[ROUTE_LIST];
            int ix[ROUTE_LIST];
            warp_top_list(E, [&](int e) { return LD::ld(lg + e); }, v, ix);
            if (lane == 0) {
                float ev[ROUTE_LIST], S = 0.f;
#pragma unroll
                for (int j = 0; j < ROUTE_LIST; j++) {
                    ev[j] = j < k ? __expf(v[j] - v[0]) : 0.f;
                    S += ev[j];
                }
                const float inv = 1.f / S;
#pragma unroll
                for (int j = 0; j < ROUTE_LIST; j++) {
                    if (j < k) {
                        sid[j] = route_id(ix[j], E);
                        sw[j] = ev[j] * inv;
                    }
                }
            }
        }
        __syncthreads();
        return;
    }
    float m = -INFINITY;
    for (int e = threadIdx.x; e < E; e += blockDim.x) m = fmaxf(m, LD::ld(lg + e));
    // block max
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, o));
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = lane < nwarps ? (float)red[lane] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, o));
    double s = 0.0;
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        const float v = (float)exp((double)__fsub_rn(LD::ld(lg + e), m));
        p[e] = v;
        s += (double)v;
    }
    const float S = (float)block_sum(s, red);
    for (int e = threadIdx.x; e < E; e += blockDim.x) p[e] = __fdiv_rn(p[e], S);
    __syncthreads();
    if (warp == 0 && k <= ROUTE_LIST) {
        float v[ROUTE_LIST];
        int ix[ROUTE_LIST];
        warp_top_list(E, [&](int e) { return p[e]; }, v, ix);
        if (lane == 0) {
            // The chosen probabilities' float64 sum in the order chosen.
            double sum = 0.0;
#pragma unroll
            for (int j = 0; j < ROUTE_LIST; j++)
                if (j < k) sum += (double)v[j];
            const float Sk = (float)sum;
#pragma unroll
            for (int j = 0; j < ROUTE_LIST; j++) {
                if (j < k) {
                    sid[j] = route_id(ix[j], E);
                    sw[j] = __fdiv_rn(v[j], Sk);
                }
            }
        }
    } else if (warp == 0) {
        // k > ROUTE_LIST: k rounds of a warp-wide arg-max. Lane l scans
        // experts l, l+32, …; a round's winner is marked by the lane that
        // owns it, the only lane that reads it again.
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
                sid[j] = route_id(bi, E);
                sw[j] = bv;
            }
            if (bi < E && lane == (bi & 31)) p[bi] = -2.f;  // below every probability: not chosen again
        }
        __syncwarp();
        if (lane == 0) {
            double sum = 0.0;
            for (int j = 0; j < k; j++) sum += (double)sw[j];
            const float Sk = (float)sum;
            for (int j = 0; j < k; j++) sw[j] = __fdiv_rn(sw[j], Sk);
        }
    }
    __syncthreads();
}

// moe_route_row writes row t's routing to ids[t·k + j] and wts[t·k + j];
// when xrep is not null, it also copies row t of x (pitch xpitch) to xrep
// rows t·k … t·k+k−1, the inputs of the (row, expert) GEMVs of a prefill.
// Every thread of the block calls it.
template <class P, class LD>
__device__ __forceinline__ void moe_route_row(int t, int32_t* __restrict__ ids, float* __restrict__ wts,
                                              const float* __restrict__ dense, int dstride, int E, int k,
                                              float* __restrict__ xrep, const float* __restrict__ x, int xpitch) {
    __shared__ int32_t sid[ROUTE_MAXK];
    __shared__ float sw[ROUTE_MAXK];
    moe_route_select<P, LD>(t, dense, dstride, E, k, sid, sw);
    for (int j = threadIdx.x; j < k; j += blockDim.x) {
        ids[t * k + j] = sid[j];
        wts[t * k + j] = sw[j];
    }
    if (xrep) {
        const float* xr = x + (size_t)t * xpitch;
        for (int j = 0; j < k; j++) {
            float* d = xrep + ((size_t)t * k + j) * xpitch;
            for (int c = threadIdx.x; c < xpitch; c += blockDim.x) d[c] = xr[c];
        }
    }
}
// moe_route: grid (n), block 256: row blockIdx.x.
template <class P>
__device__ __forceinline__ void moe_route_body(int32_t* __restrict__ ids, float* __restrict__ wts,
                                               const float* __restrict__ dense, int dstride, int E, int k,
                                               float* __restrict__ xrep, const float* __restrict__ x, int xpitch) {
    pdl_entry();
    moe_route_row<P, LoadPlain>(blockIdx.x, ids, wts, dense, dstride, E, k, xrep, x, xpitch);
}
NUMERICS_KERNEL(moe_route, ,
                (int32_t* __restrict__ ids, float* __restrict__ wts, const float* __restrict__ dense, int dstride,
                 int E, int k, float* __restrict__ xrep, const float* __restrict__ x, int xpitch),
                (ids, wts, dense, dstride, E, k, xrep, x, xpitch))

// ---------------------------------------------------------------------------
// A step's routing and the gate·up GEMVs of its (row, expert) pairs in one
// launch, instead of moe_route and the gathered GEMV: block (bx, q) of grid
// (blocks per matrix, n·k) routes row t = q / k (moe_route_select: every
// block of a row makes the same choice from the same logits) and computes
// block bx's rows of pair q's expert sid[q % k] on x row t (pitch xpitch):
// gu [n·k, rows] gets gemv_body's values, the bits of the two launches it
// replaces. Blocks bx = 0 write ids[q] and wts[q] for the down projections
// and the combine. Each block reads the E logits (from L2); what this saves
// is a launch, its wait and the ids' round trip through memory between
// routing and experts (docs/PERF.md, step27b). mstride and sstride are a
// matrix's elements and scales (S null for BF16). The experts are read as
// the gathered GEMV reads them (expert_addr.cuh): at W + m·mstride, or where
// the expert table xt says (a host tier's cache; null: the packed layout);
// the pairs are tallied once, by moe_down.
//
// ROUTE false (moe_gate_up_ids_*, moe32): the routing is moe_route's, a
// launch before (a B-row step under PROSCENIUM_GPU_SPLIT_ROUTE=rows); a
// block reads its pair's expert from ids instead of routing the row again:
// at B = 4 the grid runs in ≈ 4 waves of 2 blocks an SM and each block's
// routing prologue (one warp's top-k, the others at the barrier) precedes
// its first weight load. The same GEMV body: the same bits.
template <class WT, class P, int TPR, int ROWS, int UNROLL, bool ROUTE = true>
__device__ __forceinline__ void moe_gate_up_body(float* __restrict__ gu, int32_t* __restrict__ ids,
                                                 float* __restrict__ wts, const uint8_t* __restrict__ W,
                                                 const float* __restrict__ S, long long mstride, long long sstride,
                                                 const float* __restrict__ dense, int dstride, int E, int k,
                                                 const float* __restrict__ x, int xpitch, int rows, int cols,
                                                 const unsigned long long* __restrict__ xt) {
    __shared__ int32_t sid[ROUTE_MAXK];
    __shared__ float sw[ROUTE_MAXK];
    const int q = blockIdx.y, t = q / k, j = q % k;
    // By ids, the next kernel (a B-row step's down projections) may read
    // moe_route's ids before its wait: it starts after this block's.
    if (ROUTE)
        pdl_entry();
    else
        pdl_entry_waited();
    long long m;
    if (ROUTE) {
        moe_route_select<P, LoadPlain>(t, dense, dstride, E, k, sid, sw);
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            ids[q] = sid[j];
            wts[q] = sw[j];
        }
        m = sid[j];
    } else {
        m = ld_dep(ids + q);
    }
    const ExpertAddr a = expert_addr(xt, m, W, S, mstride * (16 / WT::PER), sstride);
    gemv_body<WT, P, TPR, ROWS, UNROLL>(gu + (size_t)q * rows, a.w, WT::SCALED ? a.s : nullptr,
                                        x + (size_t)t * xpitch, rows, cols);
}
#define MOE_GATE_UP_X(NAME, WT, P, TPR, ROWS, UNROLL) MOE_GATE_UP_XR(NAME, WT, P, TPR, ROWS, UNROLL, true)
#define MOE_GATE_UP_XR(NAME, WT, P, TPR, ROWS, UNROLL, ROUTE)                                                     \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2)                                                  \
        NAME(float* __restrict__ gu, int32_t* __restrict__ ids, float* __restrict__ wts,                          \
             const uint8_t* __restrict__ W, const float* __restrict__ S, long long mstride, long long sstride,     \
             const float* __restrict__ dense, int dstride, int E, int k, const float* __restrict__ x, int xpitch, \
             int rows, int cols, const unsigned long long* __restrict__ xt) {                                      \
        moe_gate_up_body<WT, P, TPR, ROWS, UNROLL, ROUTE>(gu, ids, wts, W, S, mstride, sstride, dense, dstride, E, \
                                                          k, x, xpitch, rows, cols, xt);                          \
    }
// Instances moe_gate_up_{fp8,bf16}_t{TPR}r{ROWS}u{UNROLL} (Fast) and
// moe_gate_up_{fp8d,bf16d}_… (Exact): the gate·up GEMV instances
// engine/cuda's choosers (ChooseGemv, ChooseGemvF64) give a step's experts.
#define MOE_GATE_UP_FP8(TPR, ROWS, UNROLL)                                                              \
    MOE_GATE_UP_X(moe_gate_up_fp8_t##TPR##r##ROWS##u##UNROLL, FP8Weights, Fast, TPR, ROWS, UNROLL)    \
    MOE_GATE_UP_X(moe_gate_up_fp8d_t##TPR##r##ROWS##u##UNROLL, FP8Weights, Exact, TPR, ROWS, UNROLL)
#define MOE_GATE_UP_BF16(TPR, ROWS, UNROLL)                                                             \
    MOE_GATE_UP_X(moe_gate_up_bf16_t##TPR##r##ROWS##u##UNROLL, BF16Weights, Fast, TPR, ROWS, UNROLL)  \
    MOE_GATE_UP_X(moe_gate_up_bf16d_t##TPR##r##ROWS##u##UNROLL, BF16Weights, Exact, TPR, ROWS, UNROLL)
MOE_GATE_UP_FP8(32, 4, 4)
MOE_GATE_UP_FP8(64, 4, 2)
MOE_GATE_UP_FP8(32, 8, 1)
MOE_GATE_UP_FP8(256, 4, 1)
MOE_GATE_UP_BF16(128, 2, 2)
MOE_GATE_UP_BF16(32, 4, 2)
// moe_gate_up_ids_{fp8,fp8d,bf16,bf16d}_…: the same instances without the
// routing (ROUTE false: the expert read from ids).
#define MOE_GATE_UP_IDS_FP8(TPR, ROWS, UNROLL)                                                                      \
    MOE_GATE_UP_XR(moe_gate_up_ids_fp8_t##TPR##r##ROWS##u##UNROLL, FP8Weights, Fast, TPR, ROWS, UNROLL, false)    \
    MOE_GATE_UP_XR(moe_gate_up_ids_fp8d_t##TPR##r##ROWS##u##UNROLL, FP8Weights, Exact, TPR, ROWS, UNROLL, false)
#define MOE_GATE_UP_IDS_BF16(TPR, ROWS, UNROLL)                                                                     \
    MOE_GATE_UP_XR(moe_gate_up_ids_bf16_t##TPR##r##ROWS##u##UNROLL, BF16Weights, Fast, TPR, ROWS, UNROLL, false)  \
    MOE_GATE_UP_XR(moe_gate_up_ids_bf16d_t##TPR##r##ROWS##u##UNROLL, BF16Weights, Exact, TPR, ROWS, UNROLL, false)
MOE_GATE_UP_IDS_FP8(32, 4, 4)
MOE_GATE_UP_IDS_FP8(64, 4, 2)
MOE_GATE_UP_IDS_FP8(32, 8, 1)
MOE_GATE_UP_IDS_FP8(256, 4, 1)
MOE_GATE_UP_IDS_BF16(128, 2, 2)
MOE_GATE_UP_IDS_BF16(32, 4, 2)

// ---------------------------------------------------------------------------
// Grouping by expert for a prefill's grouped GEMMs: the n·k (row, expert)
// pairs of ids sorted by expert, pairs of one expert in pair order (so the
// result does not depend on scheduling). Writes offsets [E+1] (pairs of
// expert e are sorted positions offsets[e] … offsets[e+1]−1), rowids [n·k]
// (the row of x a sorted pair reads: pair / k) and slot [n·k] (the sorted
// position of pair p). One block; n·k ≤ MOE_GROUP_MAX_PAIRS and E ≤
// MOE_MAX_EXPERTS. The ids are staged in dynamic shared memory (4·pairs
// bytes at least: moe_group_dyn); the counts' prefix
// and the ranks are one warp's: 32 pairs at a time in pair order, the pairs
// of one expert among them ranked by __match_any_sync (a pair-by-pair count
// of the earlier pairs cost ~0.1 ms a layer at 4096 pairs).
// MOE_GROUP_MAX_PAIRS is 2048 rows of top 8 (pass13: a prefill pass of up to
// LongPrefillRows; 4096, 512 rows, before): the ids (64 KB) no longer fit
// beside static arrays in 48 KB, so both groupings stage them in dynamic
// shared memory, which the launch sizes (engine/cuda moe_cuda.go).
#define MOE_GROUP_MAX_PAIRS 16384
extern __shared__ int moe_group_dyn[];
extern "C" __global__ void moe_group(int32_t* __restrict__ offsets, int32_t* __restrict__ rowids,
                                     int32_t* __restrict__ slot, const int32_t* __restrict__ ids, int pairs, int k,
                                     int E) {
    pdl_entry();
    __shared__ int count[MOE_MAX_EXPERTS + 1];
    int* const sid = moe_group_dyn;  // [pairs]
    for (int e = threadIdx.x; e <= E; e += blockDim.x) count[e] = 0;
    __syncthreads();
    for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
        const int e = ids[p];
        sid[p] = e;
        atomicAdd(&count[e], 1);
    }
    __syncthreads();
    if (threadIdx.x >= 32) return;
    const int lane = threadIdx.x;
    // Exclusive prefix of the counts: lane l sums experts l·per … , then a
    // warp scan of the lanes' sums.
    const int per = (E + 31) / 32, e0 = min(lane * per, E), e1 = min(e0 + per, E);
    int sum = 0;
    for (int e = e0; e < e1; e++) sum += count[e];
    int incl = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
    }
    int run = incl - sum;
    for (int e = e0; e < e1; e++) {
        const int c = count[e];
        count[e] = run;
        offsets[e] = run;
        run += c;
    }
    if (lane == 31) offsets[E] = incl;
    __syncwarp();
    for (int p0 = 0; p0 < pairs; p0 += 32) {
        const int p = p0 + lane;
        const bool ok = p < pairs;
        const int e = ok ? sid[p] : -1 - lane;  // past the end: a group of one
        const unsigned peers = __match_any_sync(0xffffffffu, e);
        const int rank = __popc(peers & ((1u << lane) - 1u)), group = __popc(peers);
        const int base = ok ? count[e] : 0;
        __syncwarp();  // every lane has read its expert's count before any is advanced
        if (ok) {
            const int s = base + rank;
            slot[p] = s;
            rowids[s] = p / k;
            if (rank == group - 1) count[e] = base + group;
        }
        __syncwarp();
    }
}

// ---------------------------------------------------------------------------
// moe_group_warps: moe_group's outputs, bit for bit, a stable counting sort
// whose ranking is spread over the block's warps instead of one (moe_group
// ranks 2 400 pairs in 75 dependent steps of one warp, 24 µs a layer of a
// 300-row prefill; here 25 warps take 3 steps each). W = min(32,
// MOE_GROUP_COUNTS / E) warps each rank a contiguous range of C pairs (C:
// ⌈pairs / W⌉ rounded up to 32) in pair order as moe_group does, 32 at a
// time by __match_any_sync, against the warp's own counts cnt[w·E + e]; a
// pair keeps its rank within its warp's range. Thread e then turns column e
// (expert e's counts over the warps) into each warp's base: offsets[e] (a
// block scan of the columns' sums) plus the counts of expert e in the
// earlier warps' ranges. A pair's sorted position is its warp's base for its
// expert plus its rank: the pairs of expert e ordered by (warp, rank), that
// is by pair, the same stable sort as moe_group's. Counts and bases are at
// most MOE_GROUP_MAX_PAIRS (< 2¹⁶), so 16 bits each; a pair's expert
// (< 2¹⁰, below bit 16) and rank (< 2¹⁵, so rank << 16 stays a positive
// int) share one word. Block MOE_GROUP_THREADS, grid 1, 4·pairs bytes of
// dynamic shared memory for the words (moe_group_dyn) beside the static
// counts; the limits of moe_group. docs/PERF.md "group34", "pass13";
// moe_group_emu_test.go emulates it.
#define MOE_GROUP_THREADS 1024
#define MOE_GROUP_COUNTS 12288  // W·E 16-bit counts: 32 warps up to 384 experts, 12 at 1024
static_assert(MOE_MAX_EXPERTS <= MOE_GROUP_THREADS, "moe_group_warps: one thread an expert");
static_assert(MOE_GROUP_MAX_PAIRS < (1 << 15) && MOE_GROUP_COUNTS >= MOE_MAX_EXPERTS && MOE_MAX_EXPERTS <= (1 << 16),
              "16-bit counts and ranks, rank << 16 a positive int; a warp at least");
extern "C" __global__ void __launch_bounds__(MOE_GROUP_THREADS)
    moe_group_warps(int32_t* __restrict__ offsets, int32_t* __restrict__ rowids, int32_t* __restrict__ slot,
                    const int32_t* __restrict__ ids, int pairs, int k, int E) {
    __shared__ unsigned short cnt[MOE_GROUP_COUNTS];
    int* const pk = moe_group_dyn;  // [pairs]: the pair's expert; after ranking, rank << 16 | expert
    __shared__ int wsum[MOE_GROUP_THREADS / 32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int W = min(MOE_GROUP_THREADS / 32, MOE_GROUP_COUNTS / max(E, 1));
    const int C = ((pairs + W - 1) / W + 31) & ~31;
    for (int i = tid; i < W * E; i += MOE_GROUP_THREADS) cnt[i] = 0;  // before the wait: no global memory
    pdl_entry();
    for (int p = tid; p < pairs; p += MOE_GROUP_THREADS) pk[p] = ld_dep(ids + p);
    __syncthreads();
    if (warp < W) {
        unsigned short* c = cnt + warp * E;
        const int p1 = min(warp * C + C, pairs);
        for (int p0 = warp * C; p0 < p1; p0 += 32) {  // p1 is the warp's: every lane runs each step
            const int p = p0 + lane;
            const bool ok = p < p1;
            const int e = ok ? pk[p] : -1 - lane;  // past the end: a group of one
            const unsigned peers = __match_any_sync(0xffffffffu, e);
            const int rank = __popc(peers & ((1u << lane) - 1u)), group = __popc(peers);
            const int base = ok ? c[e] : 0;
            __syncwarp();  // every lane has read its expert's count before any is advanced
            if (ok) {
                pk[p] = (base + rank) << 16 | e;
                if (rank == group - 1) c[e] = (unsigned short)(base + group);
            }
            __syncwarp();
        }
    }
    __syncthreads();
    // Expert e = tid: its column's sum, the block's exclusive scan of the sums.
    const int e = tid;
    int tot = 0;
    if (e < E) {
#pragma unroll
        for (int w = 0; w < MOE_GROUP_THREADS / 32; w++)
            if (w < W) tot += cnt[w * E + e];
    }
    int incl = tot;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
    }
    if (lane == 31) wsum[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const int v = wsum[lane];
        int s = v;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const int u = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= d) s += u;
        }
        wsum[lane] = s - v;
    }
    __syncthreads();
    if (e < E) {
        int run = wsum[warp] + incl - tot;
        offsets[e] = run;
        if (e == E - 1) offsets[E] = run + tot;
#pragma unroll
        for (int w = 0; w < MOE_GROUP_THREADS / 32; w++)
            if (w < W) {
                const int c = cnt[w * E + e];
                cnt[w * E + e] = (unsigned short)run;
                run += c;
            }
    }
    __syncthreads();
    for (int p = tid; p < pairs; p += MOE_GROUP_THREADS) {
        const int v = pk[p], s = cnt[(p / C) * E + (v & 0xffff)] + (v >> 16);
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
template <class P>
__device__ __forceinline__ void moe_swiglu_body(float* __restrict__ h, const float* __restrict__ gu, int p, int i,
                                                int ip, int items, float* __restrict__ hs,
                                                const float* __restrict__ dense, int dstride, int E, int is, int isp) {
    pdl_entry();
    const int y = blockIdx.y;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (y < items) {
        if (c >= ip) return;
        float v = 0.f;
        if (c < i) {
            v = P::mul(P::silu(gu[(size_t)y * 2 * p + c]), gu[(size_t)y * 2 * p + p + c]);
        }
        h[(size_t)y * ip + c] = v;
        return;
    }
    const int r = y - items;
    if (c >= isp) return;
    float v = 0.f;
    if (c < is) {
        const float* d = dense + (size_t)r * dstride + E;
        v = P::mul(P::silu(d[c]), d[is + c]);
    }
    hs[(size_t)r * isp + c] = v;
}
NUMERICS_KERNEL(moe_swiglu, ,
                (float* __restrict__ h, const float* __restrict__ gu, int p, int i, int ip, int items,
                 float* __restrict__ hs, const float* __restrict__ dense, int dstride, int E, int is, int isp),
                (h, gu, p, i, ip, items, hs, dense, dstride, E, is, isp))
// moe_swiglu_xp_fast (xp15; engine/cuda MoESwiGLU): moe_swiglu_fast, and
// each shared row's block then writes its columns of hs as the three BF16
// parts of the shared down projection's X (bf16_parts.cuh xparts_piece: part
// p of row r at xp + p·pstride + r·kpad, zeros from is to kpad), which the
// GEMM takes instead of a gemm_xp_prep launch. is a multiple of 8.
extern "C" __global__ void moe_swiglu_xp_fast(float* __restrict__ h, const float* __restrict__ gu, int p, int i,
                                              int ip, int items, float* __restrict__ hs,
                                              const float* __restrict__ dense, int dstride, int E, int is, int isp,
                                              uint16_t* __restrict__ xp, long long pstride, int kpad) {
    if ((int)blockIdx.y < items) {  // a routed item's block: moe_swiglu_fast's
        moe_swiglu_body<Fast>(h, gu, p, i, ip, items, hs, dense, dstride, E, is, isp);
        return;
    }
    pdl_entry();
    const int r = blockIdx.y - items, c0 = blockIdx.x * blockDim.x, c = c0 + threadIdx.x;
    if (c < isp) {
        float v = 0.f;
        if (c < is) {
            const float* d = dense + (size_t)r * dstride + E;
            v = Fast::mul(Fast::silu(d[c]), d[is + c]);
        }
        hs[(size_t)r * isp + c] = v;
    }
    __syncthreads();  // the block's columns of the row are its to read
    for (int q = c0 + 8 * (int)threadIdx.x; q < min(c0 + (int)blockDim.x, kpad); q += 8 * blockDim.x)
        xparts_piece(xp, hs + (size_t)r * isp, r, q, is, kpad, pstride);
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
// up to npitch. Fast: the same operations in float32 with a float32 sum of
// squares. Grid (n), block 256.
// moe_combine_norm_row is row t over Span's columns (row_norm.cuh); LD reads
// yr and ys (fused.cuh).
#define COMBINE_REGS 8
#define COMBINE_COLS 2
template <class P, class LD, class Span = BlockSpan>
__device__ __forceinline__ void moe_combine_norm_row(int t, float* __restrict__ x, const float* __restrict__ yr,
                                                     const float* __restrict__ wts, const float* __restrict__ ys,
                                                     const float* __restrict__ dense, int dstride, int sgcol, int H,
                                                     int k, const int32_t* __restrict__ slot,
                                                     float* __restrict__ normed, const float* __restrict__ nw,
                                                     int npitch, float eps, const Span& sp = Span()) {
    __shared__ typename P::Sum red[32];
    __shared__ float cw[ROUTE_MAXK], csg;
    __shared__ int crow[ROUTE_MAXK];
    int yoff[COMBINE_REGS];  // the routed rows' offsets in yr (int: registers)
    float wr[COMBINE_REGS];  // a late Span's weights (registers)
    float sg;
    if (!Span::late) {
        // The row's k weights, routed rows and shared-expert gate, read once
        // after the PDL wait into shared memory: ld_dep, not the read-only
        // path, which ptxas may move above the wait (the routing is the
        // previous launch's but one). The weights are read from there at
        // each use (a 1024-thread block has 64 registers a thread).
        for (int j = threadIdx.x; j < k; j += blockDim.x) {
            cw[j] = ld_dep(wts + t * k + j);
            crow[j] = slot ? ld_dep(slot + t * k + j) : t * k + j;
        }
        if (threadIdx.x == 0) csg = P::sigmoid(ld_dep(dense + (size_t)t * dstride + sgcol));
        __syncthreads();
        sg = csg;
#pragma unroll
        for (int j = 0; j < COMBINE_REGS; j++) yoff[j] = crow[min(j, k - 1)] * H;
    } else {
        // A cluster block's 256 threads have registers to spare: each thread
        // reads the first COMBINE_REGS weights and the gate itself (uniform
        // addresses), with no barrier, and without a slot (the step's case;
        // the cluster kernel passes none) its routed rows' loads need no
        // earlier load: one round trip for the whole column. The gate is
        // read in combine, among the column's loads (read here, ptxas began
        // its sigmoid before the column's branch: the column's loads a round
        // trip later).
#pragma unroll
        for (int j = 0; j < COMBINE_REGS; j++) {
            const int jj = t * k + min(j, k - 1);
            wr[j] = ld_dep(wts + jj);
            yoff[j] = (slot ? ld_dep(slot + jj) : jj) * H;
        }
        sg = 0.f;  // read with the column's loads (combine)
    }
    auto wt = [&](int j) { return Span::late ? wr[j] : cw[j]; };
    auto wfar = [&](int j) { return Span::late ? ld_dep(wts + t * k + j) : cw[j]; };
    auto rowfar = [&](int j) { return Span::late ? (slot ? ld_dep(slot + t * k + j) : t * k + j) : crow[j]; };
    float* xr = x + (size_t)t * H;
    // column c's sum: acc = Σ_j w_j·y_j + ys·sg in the CPU's order, added to
    // x (keep stores it); the first COMBINE_REGS routed values loaded
    // together before the sum (a loop over k waits for one load at a time).
    auto combine = [&](int c) {
        float y[COMBINE_REGS];
#pragma unroll
        for (int j = 0; j < COMBINE_REGS; j++) y[j] = LD::ld(yr + yoff[j] + c);
        const float ysv = LD::ld(ys + (size_t)t * H + c), xv = xr[c];
        const float g = Span::late ? P::sigmoid(ld_dep(dense + (size_t)t * dstride + sgcol)) : sg;
        float acc = 0.f;
#pragma unroll
        for (int j = 0; j < COMBINE_REGS; j++)
            if (j < k) acc = P::add(acc, P::mul(wt(j), y[j]));
        for (int j = COMBINE_REGS; j < k; j++)
            acc = P::add(acc, P::mul(wfar(j), LD::ld(yr + (size_t)rowfar(j) * H + c)));
        acc = P::add(acc, P::mul(ysv, g));
        return P::add(xv, acc);
    };
    auto keep = [&](int c, float v) { xr[c] = v; };
    // A cluster block's one column a thread (Drama 3's 2048 over 8 × 256).
    row_value_rmsnorm_zc<P, Span::late ? 1 : COMBINE_COLS, !Span::late>(sp, combine, keep, xr,
                                                                         normed + (size_t)t * npitch, nw, H, npitch,
                                                                         eps, red);
}
template <class P>
__device__ __forceinline__ void moe_combine_norm_body(float* __restrict__ x, const float* __restrict__ yr,
                                                      const float* __restrict__ wts, const float* __restrict__ ys,
                                                      const float* __restrict__ dense, int dstride, int sgcol, int H,
                                                      int k, const int32_t* __restrict__ slot,
                                                      float* __restrict__ normed, const float* __restrict__ nw,
                                                      int npitch, float eps) {
    pdl_entry();
    moe_combine_norm_row<P, LoadPlain>(blockIdx.x, x, yr, wts, ys, dense, dstride, sgcol, H, k, slot, normed, nw,
                                       npitch, eps);
}
NUMERICS_KERNEL(moe_combine_norm, __launch_bounds__(1024),
                (float* __restrict__ x, const float* __restrict__ yr, const float* __restrict__ wts,
                 const float* __restrict__ ys, const float* __restrict__ dense, int dstride, int sgcol, int H, int k,
                 const int32_t* __restrict__ slot, float* __restrict__ normed, const float* __restrict__ nw,
                 int npitch, float eps),
                (x, yr, wts, ys, dense, dstride, sgcol, H, k, slot, normed, nw, npitch, eps))

// moe_combine_norm_xp_fast (xp15; engine/cuda MoECombineNorm):
// moe_combine_norm_fast with a norm (nw not null), then the row's normed
// values as the three BF16 parts of a dense GEMM's X (bf16_parts.cuh
// xparts_row: part p of row t at xp + p·pstride + t·kpad), which the
// prefill's GEMMs on them take instead of a gemm_xp_prep launch. Grid (n),
// block as moe_combine_norm's.
extern "C" __global__ void __launch_bounds__(1024) moe_combine_norm_xp_fast(
    float* __restrict__ x, const float* __restrict__ yr, const float* __restrict__ wts, const float* __restrict__ ys,
    const float* __restrict__ dense, int dstride, int sgcol, int H, int k, const int32_t* __restrict__ slot,
    float* __restrict__ normed, const float* __restrict__ nw, int npitch, float eps, uint16_t* __restrict__ xp,
    long long pstride, int kpad) {
    pdl_entry();
    moe_combine_norm_row<Fast, LoadPlain>(blockIdx.x, x, yr, wts, ys, dense, dstride, sgcol, H, k, slot, normed, nw,
                                          npitch, eps);
    __syncthreads();  // the row's normed values are the block's to read
    xparts_row(xp, normed + (size_t)blockIdx.x * npitch, blockIdx.x, H, kpad, pstride);
}

// moe_combine_norm_cluster_fast (norm34, issue 27; engine/cuda normCluster):
// moe_combine_norm_fast with row t = blockIdx.y spread over a thread block
// cluster of NORM_CLUSTER blocks (row_norm.cuh ClusterSpan): the row's loads
// on NORM_CLUSTER multiprocessors, no block barrier before them, its sum of
// squares one distributed-shared-memory round. No slot (routed pair p is
// row p of yr: the step's layout) and nw not null (the host runs
// moe_combine_norm_fast otherwise). Values earlier launches
// wrote are read through L2 (LoadL2: not the read-only path, which ptxas
// may move above the PDL wait). Grid (NORM_CLUSTER, n), block
// NORM_CLUSTER_THREADS; sm_90 only (elsewhere the instance traps).
extern "C" __global__ void NORM_CLUSTER_ATTRS moe_combine_norm_cluster_fast(
    float* __restrict__ x, const float* __restrict__ yr, const float* __restrict__ wts, const float* __restrict__ ys,
    const float* __restrict__ dense, int dstride, int sgcol, int H, int k, float* __restrict__ normed,
    const float* __restrict__ nw, int npitch, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const ClusterSpan sp(H);
    sp.begin();
    pdl_entry();
    moe_combine_norm_row<Fast, LoadL2>(blockIdx.y, x, yr, wts, ys, dense, dstride, sgcol, H, k, nullptr, normed, nw,
                                       npitch, eps, sp);
#else
    __trap();
#endif
}

// ---------------------------------------------------------------------------
// A step's down projections in one launch (SwiGLU, then cpu.MatVec): block
// row y < k is routed pair y: x = silu(gate)·up from gu (pitch 2p; width i,
// zero to ip) and the matrix ids[y] of W (FP8 with block scales S, or BF16;
// [h, ip] each, mstride elements apart, or where the expert table xt says:
// expert_addr.cuh, which also tallies each pair in xst); y = k is the shared expert: x from
// the stacked projection's shared gate and up (dense + e, width is) and the
// BF16 matrix Ws [h, is]. Writes yr[y·h + r]. x is staged in shared memory
// once in the form the policy's chunk dot reads (XChunk, gemv.cuh: Exact
// widened to float64 and rotated, FP8 scales folded; Fast float32); each warp
// computes DOWN_ROWS rows, lane j reading 16-byte chunks j, j+32, … Under
// Exact the sums follow rule 1 of the numerics contract (docs/MODEL.md;
// cpu.Dot): each weight the CPU's float32 (FP8: E4M3 value × scale in
// float32), exact float64 products, float64 sums, one rounding.
// Grid (⌈h / (8·DOWN_ROWS)⌉, k + 1), block 256.
#define DOWN_ROWS 8
#define DOWN_MAXX 2048

template <class P, class WT>
__device__ __forceinline__ void down_rows(float* __restrict__ y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const void* xs, int rows, int cols) {
    constexpr int PER = WT::PER;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int row0 = (blockIdx.x * (blockDim.x >> 5) + warp) * DOWN_ROWS;
    const int chunks = cols / PER, scols = (cols + 127) >> 7;
    const uint4* wr[DOWN_ROWS];
    int rr[DOWN_ROWS];
#pragma unroll
    for (int r = 0; r < DOWN_ROWS; r++) {
        rr[r] = min(row0 + r, rows - 1);
        wr[r] = reinterpret_cast<const uint4*>(W + (size_t)rr[r] * cols * (16 / PER));
    }
    typename P::Sum acc[DOWN_ROWS];
#pragma unroll
    for (int r = 0; r < DOWN_ROWS; r++) acc[r] = 0;
    for (int c = lane; c < chunks; c += 32) {
        uint4 w[DOWN_ROWS];
#pragma unroll
        for (int r = 0; r < DOWN_ROWS; r++) w[r] = load_stream(wr[r] + c);
        XChunk<P, WT> xc;
        xc.load_shared(xs, c);
#pragma unroll
        for (int r = 0; r < DOWN_ROWS; r++)
            acc[r] += xc.dot_folded(w[r], WT::SCALED ? S + (size_t)(rr[r] >> 7) * scols + ((c * PER) >> 7) : nullptr);
    }
#pragma unroll
    for (int r = 0; r < DOWN_ROWS; r++) acc[r] = warp_sum(acc[r]);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < DOWN_ROWS; r++)
            if (row0 + r < rows) y[row0 + r] = (float)acc[r];
    }
}

// down_item stages x = silu(g[c])·u[c] for c < n (0 up to cols) and runs the
// rows: cpu.SwiGLU's order under Exact (SiLU, then × u rounded).
template <class P, class WT>
__device__ __forceinline__ void down_item(float* __restrict__ y, const uint8_t* __restrict__ W,
                                          const float* __restrict__ S, const float* __restrict__ g,
                                          const float* __restrict__ u, int n, int cols, int rows, void* xs) {
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        XChunk<P, WT>::stage(xs, c, c < n ? P::mul(P::silu(g[c]), u[c]) : 0.f);
    __syncthreads();
    down_rows<P, WT>(y, W, S, xs, rows, cols);
}

// moe_down_pair is block row y's item into out: routed pair y (y < k) or
// the shared expert (y = k). xs: the block's shared staging.
template <class P>
__device__ __forceinline__ void moe_down_pair(int y, float* __restrict__ out, const uint8_t* __restrict__ W,
                                              const float* __restrict__ S, long long mstride, long long sstride,
                                              int fp8, const int32_t* __restrict__ ids, const float* __restrict__ gu,
                                              int p, int i, int ip, int k, const uint16_t* __restrict__ Ws,
                                              const float* __restrict__ dense, int e, int is, int h, void* xs,
                                              const unsigned long long* __restrict__ xt, unsigned int* xst) {
    if (y < k) {
        const float* g = gu + (size_t)y * 2 * p;
        const long long m = ids[y];
        if (blockIdx.x == 0 && threadIdx.x == 0) expert_count(xst, xt, m);
        const ExpertAddr a = expert_addr(xt, m, W, S, fp8 ? mstride : mstride * 2, sstride);
        if (fp8)
            down_item<P, FP8Weights>(out, a.w, a.s, g, g + p, i, ip, h, xs);
        else
            down_item<P, BF16Weights>(out, a.w, nullptr, g, g + p, i, ip, h, xs);
        return;
    }
    const float* d = dense + e;
    down_item<P, BF16Weights>(out, reinterpret_cast<const uint8_t*>(Ws), nullptr, d, d + is, is, is, h, xs);
}

template <class P>
__device__ __forceinline__ void moe_down_body(float* __restrict__ yr, const uint8_t* __restrict__ W,
                                              const float* __restrict__ S, long long mstride, long long sstride,
                                              int fp8, const int32_t* __restrict__ ids, const float* __restrict__ gu,
                                              int p, int i, int ip, int k, const uint16_t* __restrict__ Ws,
                                              const float* __restrict__ dense, int e, int is, int h,
                                              const unsigned long long* __restrict__ xt, unsigned int* xst) {
    __shared__ __align__(16) double xs[DOWN_MAXX];
    pdl_entry();
    const int y = blockIdx.y;
    moe_down_pair<P>(y, yr + (size_t)y * h, W, S, mstride, sstride, fp8, ids, gu, p, i, ip, k, Ws, dense, e, is, h,
                     xs, xt, xst);
}

#define MOE_DOWN_BOUNDS __launch_bounds__(256)
NUMERICS_KERNEL(moe_down, MOE_DOWN_BOUNDS,
                (float* __restrict__ yr, const uint8_t* __restrict__ W, const float* __restrict__ S, long long mstride,
                 long long sstride, int fp8, const int32_t* __restrict__ ids, const float* __restrict__ gu, int p,
                 int i, int ip, int k, const uint16_t* __restrict__ Ws, const float* __restrict__ dense, int e, int is,
                 int h, const unsigned long long* __restrict__ xt, unsigned int* xst),
                (yr, W, S, mstride, sstride, fp8, ids, gu, p, i, ip, k, Ws, dense, e, is, h, xt, xst))

// moe_down_rows: moe_down for the n rows of a B-row step (several takes'
// rows, engine/cuda Backbone.StepRows), row t in blockIdx.z: its k routed
// pairs (ids, gu rows t·k …) into yr rows t·k … t·k+k−1 and its shared
// expert (the stacked projection's row t, pitch dstride) into ys row t, the
// layout moe_combine_norm reads. Each item has the one-row kernel's bits.
// Grid (⌈h / (8·DOWN_ROWS)⌉, k + 1, n), block 256.
template <class P>
__device__ __forceinline__ void moe_down_rows_body(float* __restrict__ yr, float* __restrict__ ys,
                                                   const uint8_t* __restrict__ W, const float* __restrict__ S,
                                                   long long mstride, long long sstride, int fp8,
                                                   const int32_t* __restrict__ ids, const float* __restrict__ gu, int p,
                                                   int i, int ip, int k, const uint16_t* __restrict__ Ws,
                                                   const float* __restrict__ dense, int dstride, int e, int is,
                                                   int h, const unsigned long long* __restrict__ xt,
                                                   unsigned int* xst) {
    __shared__ __align__(16) double xs[DOWN_MAXX];
    pdl_entry();
    const int y = blockIdx.y;
    const size_t t = blockIdx.z;
    float* out = y < k ? yr + (t * k + y) * h : ys + t * h;
    moe_down_pair<P>(y, out, W, S, mstride, sstride, fp8, ids + t * k, gu + t * k * 2 * p, p, i, ip, k, Ws,
                     dense + t * dstride, e, is, h, xs, xt, xst);
}
NUMERICS_KERNEL(moe_down_rows, MOE_DOWN_BOUNDS,
                (float* __restrict__ yr, float* __restrict__ ys, const uint8_t* __restrict__ W,
                 const float* __restrict__ S, long long mstride, long long sstride, int fp8,
                 const int32_t* __restrict__ ids, const float* __restrict__ gu, int p, int i, int ip, int k,
                 const uint16_t* __restrict__ Ws, const float* __restrict__ dense, int dstride, int e, int is, int h,
                 const unsigned long long* __restrict__ xt, unsigned int* xst),
                (yr, ys, W, S, mstride, sstride, fp8, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, xt, xst))

// ---------------------------------------------------------------------------
// moe_down2: moe_down_rows (and moe_down, as its n = 1) with the weight
// loads in front (docs/PERF.md "moe32"). moe_down's block reads its expert
// id, then stages silu(g)·u from gu (a dependent read through L2 and a
// barrier), and only then issues its weight loads: three memory latencies
// in a row per block, one round of 32 KB; at 3 blocks an SM (78 registers)
// the B = 4 launch of 1152 blocks is ≈ 3 such chains deep and streamed 1.35
// TB/s. Here a block issues its weight loads as soon as it has the expert
// id (they depend on nothing else), stages x while they fly, and reads each
// FP8 block scale once per chunk for all its rows (a warp's rows lie in one
// 128-row scale block). The shared expert (BF16, 2 MB, one per row before)
// is read once for up to DOWN2_NB rows (Fast; Exact: one row, its float64
// staging fills the shared memory) and split over two block rows of 4 rows
// a warp, both of a lane's chunks loaded at once (before: 8 rows, two
// dependent rounds). Every output is the same sum in the same order as
// moe_down's (lane j's chunks j, j+32, … accumulated in turn, then the warp
// sum): the same bits under either policy.
// Grid (⌈h / 64⌉, k + 2, n), block 256: block row y < k is row z's routed
// pair y into yr row z·k + y; y = k, k + 1 are the two halves of the shared
// expert's rows for rows z·G … (G rows a block; blocks past n return) into
// ys. moe_down's one-row layout is ys = yr + k·h.
#ifndef DOWN2_NB
#define DOWN2_NB 4  // rows of a B-row step per shared-expert block (Fast)
#endif

// Down2Chunk::add adds chunk c's products to acc[r][b] for the ROWS rows'
// weights w and the nb ≤ NB staged inputs (row b at xs + b·cols floats),
// each as XChunk's dot_scale gives it. Fast FP8 (the model's routed
// experts) runs the same FMA chains word by word, one float4 of x live at a
// time instead of the chunk's four: fewer registers, the same bits.
template <class P, class WT>
struct Down2Chunk {
    template <int ROWS, int NB>
    __device__ static __forceinline__ void add(typename P::Sum (&acc)[ROWS][NB], const uint4 (&w)[ROWS], float sc,
                                               const void* xs, int c, int nb, int cols) {
#pragma unroll
        for (int b = 0; b < NB; b++) {
            if (b < nb) {
                XChunk<P, WT> xc;
                xc.load_shared(static_cast<const float*>(xs) + (size_t)b * cols, c);
#pragma unroll
                for (int r = 0; r < ROWS; r++) acc[r][b] += xc.dot_scale(w[r], sc);
            }
        }
    }
};
template <>
struct Down2Chunk<Fast, FP8Weights> {
    template <int ROWS, int NB>
    __device__ static __forceinline__ void add(float (&acc)[ROWS][NB], const uint4 (&w)[ROWS], float sc,
                                               const void* xs, int c, int nb, int cols) {
#pragma unroll
        for (int b = 0; b < NB; b++) {
            if (b < nb) {
                const float4* xv = static_cast<const float4*>(xs) + (size_t)b * (cols / 4) + 4 * c;
                Fp8Sum s[ROWS];
                // FP8Weights::dot's chain: words x, y, z, w against x's float4s 0…3.
                float4 x4 = xv[0];
#pragma unroll
                for (int r = 0; r < ROWS; r++) s[r].add(w[r].x, x4);
                x4 = xv[1];
#pragma unroll
                for (int r = 0; r < ROWS; r++) s[r].add(w[r].y, x4);
                x4 = xv[2];
#pragma unroll
                for (int r = 0; r < ROWS; r++) s[r].add(w[r].z, x4);
                x4 = xv[3];
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    s[r].add(w[r].w, x4);
                    acc[r][b] += s[r].value() * FP8Weights::DOT_UNIT * sc;  // XChunk<Fast>::dot_scale
                }
            }
        }
    }
};

// down2_rows: y_b[row0 + r] = Σ_c W[row0 + r, c]·x_b[c] for r < ROWS, b < nb
// (y_b = y + b·ystride; x_b staged by stage() at xs + b·cols floats; NB > 1
// only under Fast) by one warp, lane j reading chunks j, j+32, …, CPL of
// them and ROWS rows issued together; the first loads before stage() and
// the block barrier (every thread of the block calls it, each warp its own
// row0). Rows past rows read the last row and are not written.
template <class P, class WT, int ROWS, int CPL, int NB, class Stage>
__device__ __forceinline__ void down2_rows(float* __restrict__ y, int ystride, int nb, const uint8_t* __restrict__ W,
                                           const float* __restrict__ S, void* xs, int row0, int rows, int cols,
                                           Stage stage) {
    typedef typename P::Sum Sum;
    constexpr int PER = WT::PER;
    const int lane = threadIdx.x & 31;
    const int chunks = cols / PER, scols = (cols + 127) >> 7;
    // Row r's chunk cc: W + (min(row0 + r, rows − 1)·chunks + cc) 16-byte
    // chunks, computed where loaded (int offsets, no pointers held: fewer
    // registers; a matrix is < 2³¹ bytes, moeDown2Args checks).
    const uint4* W4 = reinterpret_cast<const uint4*>(W);
    // The warp's rows share one scale row: row0 is a multiple of ROWS, which divides 128.
    const float* srow = WT::SCALED ? S + (size_t)(min(row0, rows - 1) >> 7) * scols : nullptr;
    uint4 w[CPL][ROWS];
    float sc[CPL];
    auto issue = [&](int c0) {
#pragma unroll
        for (int u = 0; u < CPL; u++) {
            const int cc = min(c0 + 32 * u, chunks - 1);  // past the end: reread, not summed
#pragma unroll
            for (int r = 0; r < ROWS; r++) w[u][r] = load_stream(W4 + (min(row0 + r, rows - 1) * chunks + cc));
            sc[u] = WT::SCALED ? __ldg(srow + ((cc * PER) >> 7)) : 1.f;
        }
    };
    if (lane < chunks) issue(lane);
    stage();
    __syncthreads();
    Sum acc[ROWS][NB];
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int b = 0; b < NB; b++) acc[r][b] = 0;
    auto sum = [&](int c0) {
#pragma unroll
        for (int u = 0; u < CPL; u++) {
            const int c = c0 + 32 * u;
            if (c < chunks) Down2Chunk<P, WT>::template add<ROWS, NB>(acc, w[u], sc[u], xs, c, nb, cols);
        }
    };
    sum(lane);
    // Wider rows (not the model's: its experts' rows are one round): the rest, a round at a time.
    for (int c0 = lane + 32 * CPL; c0 < chunks; c0 += 32 * CPL) {
        issue(c0);
        sum(c0);
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int b = 0; b < NB; b++) acc[r][b] = warp_sum(acc[r][b]);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; r++)
#pragma unroll
            for (int b = 0; b < NB; b++)
                if (b < nb && row0 + r < rows) y[(size_t)b * ystride + row0 + r] = (float)acc[r][b];
    }
}

template <class P>
__device__ __forceinline__ void moe_down2_body(float* __restrict__ yr, float* __restrict__ ys,
                                               const uint8_t* __restrict__ W, const float* __restrict__ S,
                                               long long mstride, long long sstride, int fp8,
                                               const int32_t* __restrict__ ids, const float* __restrict__ gu, int p,
                                               int i, int ip, int k, const uint16_t* __restrict__ Ws,
                                               const float* __restrict__ dense, int dstride, int e, int is, int h,
                                               const unsigned long long* __restrict__ xt, unsigned int* xst) {
    __shared__ __align__(16) double xs[DOWN_MAXX];
    pdl_entry();
    const int y = blockIdx.y, t = blockIdx.z, warp = threadIdx.x >> 5;
    const int wrow = (blockIdx.x * (GEMV_THREADS / 32) + warp) * DOWN_ROWS;  // the warp's 8 rows
    if (y < k) {
        const int q = t * k + y;
        const long long m = ld_dep(ids + q);
        if (blockIdx.x == 0 && threadIdx.x == 0) expert_count(xst, xt, m);
        const ExpertAddr a = expert_addr(xt, m, W, S, fp8 ? mstride : mstride * 2, sstride);
        const float* g = gu + (size_t)q * 2 * p;
        float* out = yr + (size_t)q * h;
        if (fp8) {
            down2_rows<P, FP8Weights, DOWN_ROWS, 1, 1>(out, h, 1, a.w, a.s, xs, wrow, h, ip, [&] {
                for (int c = threadIdx.x; c < ip; c += blockDim.x)
                    XChunk<P, FP8Weights>::stage(xs, c, c < i ? P::mul(P::silu(g[c]), g[p + c]) : 0.f);
            });
        } else {
            down2_rows<P, BF16Weights, DOWN_ROWS, 1, 1>(out, h, 1, a.w, nullptr, xs, wrow, h, ip, [&] {
                for (int c = threadIdx.x; c < ip; c += blockDim.x)
                    XChunk<P, BF16Weights>::stage(xs, c, c < i ? P::mul(P::silu(g[c]), g[p + c]) : 0.f);
            });
        }
        return;
    }
    // The shared expert: half y − k of each warp's 8 rows, G rows of the step.
    constexpr int NB = P::exact ? 1 : DOWN2_NB;
    const int G = P::exact ? 1 : max(1, min(DOWN2_NB, 2 * DOWN_MAXX / max(is, 1)));  // xs holds 2·DOWN_MAXX floats
    const int n = gridDim.z, t0 = t * G;
    if (t0 >= n) return;
    const int nb = min(G, n - t0);
    constexpr int HR = DOWN_ROWS / 2;
    down2_rows<P, BF16Weights, HR, 2, NB>(
        ys + (size_t)t0 * h, h, nb, reinterpret_cast<const uint8_t*>(Ws), nullptr, xs, wrow + (y - k) * HR, h, is,
        [&] {
            for (int b = 0; b < nb; b++) {
                const float* d = dense + (size_t)(t0 + b) * dstride + e;
                float* xb = reinterpret_cast<float*>(xs) + (size_t)b * is;
                for (int c = threadIdx.x; c < is; c += blockDim.x)
                    XChunk<P, BF16Weights>::stage(xb, c, P::mul(P::silu(d[c]), d[is + c]));
            }
        });
}
#ifndef MOE_DOWN2_MINB
#define MOE_DOWN2_MINB 3
#endif
// Fast: MOE_DOWN2_MINB blocks an SM; Exact (float64 sums) as moe_down.
#define MOE_DOWN2_X(NAME, P, BOUNDS)                                                                              \
    extern "C" __global__ void BOUNDS NAME(                                                                      \
        float* __restrict__ yr, float* __restrict__ ys, const uint8_t* __restrict__ W, const float* __restrict__ S, \
        long long mstride, long long sstride, int fp8, const int32_t* __restrict__ ids,                           \
        const float* __restrict__ gu, int p, int i, int ip, int k, const uint16_t* __restrict__ Ws,                \
        const float* __restrict__ dense, int dstride, int e, int is, int h,                                       \
        const unsigned long long* __restrict__ xt, unsigned int* xst) {                                           \
        moe_down2_body<P>(yr, ys, W, S, mstride, sstride, fp8, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, \
                          xt, xst);                                                                               \
    }
MOE_DOWN2_X(moe_down2, Exact, __launch_bounds__(256))
MOE_DOWN2_X(moe_down2_fast, Fast, __launch_bounds__(256, MOE_DOWN2_MINB))

// ---------------------------------------------------------------------------
// moe_down2_mma_fast: moe_down2_fast with the routed pairs' FP8 down
// projections on the tensor cores (docs/PERF.md "mma22"); the shared expert
// (BF16) as moe_down2_fast. The SIMT path spends ≈ 11 instructions a word of
// four weights (decode and FMAs, one row's x each) plus a warp sum a row;
// here a warp's m16n8k16 MMA takes 256 weights for four conversions and one
// MMA. A routed block's 64 rows are four groups of 16, each split over two
// warps by halves of the 512 columns; lane (g, q) loads 16 bytes of rows g
// and g + 8 at column 64s + 16q of each of its half's four 64-column steps
// s, and MMA j of a step takes their word j: A's k pairs (2q, 2q+1) and
// (2q+8, 2q+9) are the word's bytes (0, 1) and (2, 3), so B's are x's
// columns 64s + 16q + 4j + (0, 1) and (2, 3) — the same for every row, and
// the sum over k is the same sum in another order. x = silu(gate)·up is
// staged as two FP16 parts of x·2^f (split_f16; f per 64-column step from
// its largest |x|, f16_row_scale), part 0 in B's column 0, part 1 in
// column 1: C's columns 0 + 1 are Σ w·x·2^f with x to ≈ 22 bits, float32
// accumulation. Each step's sum is scaled by the FP8 block scale and 2^-f
// as it is added; the second half's sums meet the first's through shared
// memory. Under fast only (its order is not the CPU's), for B-row steps
// (engine/cuda: at one row the SIMT sums measured faster); FP8 experts of
// 512 columns (Drama 3's); other routed shapes run moe_down2_fast's blocks.
#define DOWN_MMA_K 512
template <bool AHEAD>
__device__ __forceinline__ void moe_down2_mma_routed(float* __restrict__ yr, const uint8_t* __restrict__ W,
                                                     const float* __restrict__ S, long long mstride,
                                                     long long sstride, const int32_t* __restrict__ ids,
                                                     const float* __restrict__ gu, int p, int i, int k, int h,
                                                     const unsigned long long* __restrict__ xt, unsigned int* xst) {
    __shared__ __align__(16) uint32_t xh[DOWN_MMA_K / 2], xl[DOWN_MMA_K / 2];  // FP16 pairs: x·2^f's parts 0, 1
    __shared__ float xinv[DOWN_MMA_K / 64];                                    // 2^-f of each 64-column step
    __shared__ float part[4][16];                                              // the second half's row sums
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    const int grp = warp & 3, half = warp >> 2, row0 = blockIdx.x * 64 + grp * 16;
    const int pair = blockIdx.z * k + blockIdx.y;
    if (!AHEAD) pdl_entry();
    const int m = ld_dep(ids + pair);
    if (!AHEAD && blockIdx.x == 0 && threadIdx.x == 0) expert_count(xst, xt, m);
    const ExpertAddr a = expert_addr(xt, m, W, S, mstride, sstride);
    // The weights first (they depend on nothing else): rows g and g + 8 of
    // the group, this half's four steps.
    constexpr int CH = DOWN_MMA_K / 16;  // 16-byte chunks a row
    const uint4* W4 = reinterpret_cast<const uint4*>(a.w);
    const int ra = min(row0 + g, h - 1), rb = min(row0 + g + 8, h - 1);
    uint4 wa[4], wb[4];
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const uint4 *pa = W4 + (ra * CH + (4 * half + s) * 4 + q), *pb = W4 + (rb * CH + (4 * half + s) * 4 + q);
        wa[s] = AHEAD ? load_ahead(pa) : load_stream(pa);
        wb[s] = AHEAD ? load_ahead(pb) : load_stream(pb);
    }
    // The group's rows lie in one 128-row scale block; this half's columns in two.
    const float* srow = a.s + (size_t)(min(row0, h - 1) >> 7) * (DOWN_MMA_K / 128) + 2 * half;
    const float sc0 = AHEAD ? __ldcg(srow) : __ldg(srow), sc1 = AHEAD ? __ldcg(srow + 1) : __ldg(srow + 1);
    // AHEAD: the ids, the weights and their scales were read before the
    // wait (what the caller promises: see moe_down2_mma_ahead_fast); the
    // tally and the gate·up's outputs after it.
    if (AHEAD) {
        pdl_entry();
        if (blockIdx.x == 0 && threadIdx.x == 0) expert_count(xst, xt, m);
    }
    // Warp w stages step w's 64 columns: two a lane, scaled by its step's 2^f.
    {
        const float* gg = gu + (size_t)pair * 2 * p;
        const int c = 64 * warp + 2 * lane;
        const float x0 = c < i ? Fast::mul(Fast::silu(gg[c]), gg[p + c]) : 0.f;
        const float x1 = c + 1 < i ? Fast::mul(Fast::silu(gg[c + 1]), gg[p + c + 1]) : 0.f;
        float mx = fmaxf(fabsf(x0), fabsf(x1));
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float fwd, inv;
        f16_row_scale(mx, fwd, inv);
        uint32_t pr[2];
        split_f16(x0 * fwd, x1 * fwd, pr);
        xh[32 * warp + lane] = pr[0], xl[32 * warp + lane] = pr[1];
        if (lane == 0) xinv[warp] = inv;
    }
    __syncthreads();
    const uint32_t* xp = g == 0 ? xh : xl;  // B's column g: part g (columns 2…7 zero)
    float acc0 = 0.f, acc1 = 0.f;           // rows g, g + 8 (lanes q = 0 hold the sums)
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const int step = 4 * half + s;
        const uint32_t va[4] = {wa[s].x, wa[s].y, wa[s].z, wa[s].w}, vb[4] = {wb[s].x, wb[s].y, wb[s].z, wb[s].w};
        float c[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t A[4];
            e4m3x2_f16x2(va[j], A[0], A[2]);
            e4m3x2_f16x2(vb[j], A[1], A[3]);
            uint2 b = make_uint2(0u, 0u);
            if (g < 2) b = *reinterpret_cast<const uint2*>(xp + 32 * step + 8 * q + 2 * j);
            mma_f16(c, A, b.x, b.y);
        }
        const float f = (s < 2 ? sc0 : sc1) * xinv[step];
        acc0 = fmaf(c[0] + c[1], f, acc0);
        acc1 = fmaf(c[2] + c[3], f, acc1);
    }
    if (half == 1 && q == 0) part[grp][g] = acc0, part[grp][g + 8] = acc1;
    __syncthreads();
    if (half == 0 && q == 0) {
        float* out = yr + (size_t)pair * h;
        if (row0 + g < h) out[row0 + g] = acc0 + part[grp][g];
        if (row0 + g + 8 < h) out[row0 + g + 8] = acc1 + part[grp][g + 8];
    }
}
extern "C" __global__ void __launch_bounds__(256, MOE_DOWN2_MINB)
    moe_down2_mma_fast(float* __restrict__ yr, float* __restrict__ ys, const uint8_t* __restrict__ W,
                       const float* __restrict__ S, long long mstride, long long sstride, int fp8,
                       const int32_t* __restrict__ ids, const float* __restrict__ gu, int p, int i, int ip, int k,
                       const uint16_t* __restrict__ Ws, const float* __restrict__ dense, int dstride, int e, int is,
                       int h, const unsigned long long* __restrict__ xt, unsigned int* xst) {
    if ((int)blockIdx.y < k && fp8 && ip == DOWN_MMA_K && i <= ip) {
        moe_down2_mma_routed<false>(yr, W, S, mstride, sstride, ids, gu, p, i, k, h, xt, xst);
        return;
    }
    moe_down2_body<Fast>(yr, ys, W, S, mstride, sstride, fp8, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, xt,
                         xst);
}

// moe_down2_mma_ahead_fast: moe_down2_mma_fast whose routed blocks read
// their pair's expert id, its table words, weights and scales before the
// PDL wait, so that the first wave's weights stream while the gate·up's
// last blocks finish instead of after them (docs/PERF.md "ahead25"). The
// same sums: moe_down2_mma_fast's bits. The caller promises that nothing
// the kernel before it runs writes those: the ids are moe_route's, two
// launches back, behind a gate·up by ids (moe_gate_up_ids_*), which lets
// this kernel start only after every one of its blocks passed its own wait
// (pdl_entry_waited), so moe_route has finished by then; the weights and
// the expert table change only between frames. The shared expert's blocks
// are moe_down2_fast's (they wait first).
extern "C" __global__ void __launch_bounds__(256, MOE_DOWN2_MINB)
    moe_down2_mma_ahead_fast(float* __restrict__ yr, float* __restrict__ ys, const uint8_t* __restrict__ W,
                             const float* __restrict__ S, long long mstride, long long sstride, int fp8,
                             const int32_t* __restrict__ ids, const float* __restrict__ gu, int p, int i, int ip,
                             int k, const uint16_t* __restrict__ Ws, const float* __restrict__ dense, int dstride,
                             int e, int is, int h, const unsigned long long* __restrict__ xt, unsigned int* xst) {
    if ((int)blockIdx.y < k && fp8 && ip == DOWN_MMA_K && i <= ip) {
        moe_down2_mma_routed<true>(yr, W, S, mstride, sstride, ids, gu, p, i, k, h, xt, xst);
        return;
    }
    moe_down2_body<Fast>(yr, ys, W, S, mstride, sstride, fp8, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, xt,
                         xst);
}

// ---------------------------------------------------------------------------
// The fused step's MoE kernels (Fast only: engine/cuda Backbone.Fused; the
// exact step keeps the launches above). Each runs a kernel above and, in its
// last block (fused.cuh), the launch that followed it, reading the grid's
// own outputs through L2.
//
// gemv_bf16_route_fast: the stacked dense projection (router logits, shared
// gate and up, shared_expert_gate: rows outputs of cols inputs, BF16, one
// matrix) as gemv_bf16_t128r2u2, then moe_route of its first E outputs into
// ids and wts [k]. Grid (⌈rows/4⌉), block 256.
extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2)
    gemv_bf16_route_fast(float* __restrict__ dense, const uint16_t* __restrict__ W, const float* __restrict__ x,
                         int rows, int cols, unsigned int* counter, int32_t* __restrict__ ids,
                         float* __restrict__ wts, int E, int k) {
    gemv_body<BF16Weights, Fast, FUSED_GEMV_TPR, FUSED_GEMV_ROWS, FUSED_GEMV_UNROLL>(
        dense, reinterpret_cast<const uint8_t*>(W), nullptr, x, rows, cols);
    if (!last_block(counter)) return;
    moe_route_row<Fast, LoadL2>(0, ids, wts, dense, rows, E, k, nullptr, nullptr, 0);
}

// moe_down_combine_fast: moe_down_fast (the k routed and the shared down
// projections into yr [k+1, h]), then moe_combine_norm_fast of the one row:
// x += Σ wts[j]·yr[j] + sigmoid(dense[sgcol])·yr[k], normed = the next
// zero-centred RMSNorm of x with gain nw (pitch npitch). Grid (⌈h/64⌉, k+1),
// block 256.
extern "C" __global__ void MOE_DOWN_BOUNDS moe_down_combine_fast(
    float* __restrict__ yr, const uint8_t* __restrict__ W, const float* __restrict__ S, long long mstride,
    long long sstride, int fp8, const int32_t* __restrict__ ids, const float* __restrict__ gu, int p, int i, int ip,
    int k, const uint16_t* __restrict__ Ws, const float* __restrict__ dense, int e, int is, int h,
    float* __restrict__ x, const float* __restrict__ wts, int sgcol, float* __restrict__ normed,
    const float* __restrict__ nw, int npitch, float eps, unsigned int* counter, const unsigned long long* __restrict__ xt,
    unsigned int* xst) {
    moe_down_body<Fast>(yr, W, S, mstride, sstride, fp8, ids, gu, p, i, ip, k, Ws, dense, e, is, h, xt, xst);
    if (!last_block(counter)) return;
    moe_combine_norm_row<Fast, LoadL2>(0, x, yr, wts, yr + (size_t)k * h, dense, 0, sgcol, h, k, nullptr, normed,
                                       nw, npitch, eps);
}
