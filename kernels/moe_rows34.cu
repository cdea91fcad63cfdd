// rows34 (issues 27, 30): the B-row decode step's routed experts streamed
// through a ring of cp.async stages per warp (docs/PERF.md "rows34").
//
// Why. moe_gate_up_ids_fp8_t32r4u4 and moe_down2 (the B-row step's MoE
// launches) are one "load all, then compute" round per block: a block
// issues its 32–64 KB of weights, waits, then decodes and sums them while
// nothing of its own is in flight. With 2–3 blocks an SM in step, an SM's
// memory pipe idles through each compute phase (≈ 900 instructions a warp
// at B = 4's gate·up), so the launches stream 1.1–2.2 TB/s of the 4.26 TB/s
// copy. Here a block is persistent (one an SM, 16 warps) and each warp
// walks its own list of work items — (row tile, pair) of the gathered
// matrices — as one stream of steps of 4 rows × 16 bytes a lane (2 KB a
// warp): step s + 3 is copied global → shared (cp.async, no registers held
// while in flight) before step s is summed, across item boundaries, so
// every warp keeps 6 KB in flight while it computes and an SM 96 KB.
// No block barrier after the start, no per-block routing or staging
// prologue: the routing is moe_route's, a launch before (as moe32's split).
//
// A warp's index gw = warp·gridDim + block: consecutive items go to
// different SMs, so a launch of fewer items than warps (B = 2's gate·up:
// 1024 items, 2112 warps) or a last partial round spreads over every SM
// instead of filling the first ones.
//
// Items are ordered tile-major (item = tile·pairs + pair): the pairs of one
// tile run on neighbouring warps at the same time, so pairs of several rows
// that chose one expert read the same bytes together and L2 serves all but
// the first (each distinct expert crosses DRAM about once a step; its FP8
// decode is paid per pair).
//
// Fast only (float32 sums); FP8 routed experts of Drama 3's widths (gate·up
// over 2048 columns, down over 512; the shared expert BF16 over 512): the
// host checks them and otherwise runs the old kernels. Each output is the
// same chain of operations as the old kernels' (a lane's chunks j, j+32, …
// in turn, FP8Weights::dot scaled per chunk, the warp's butterfly sum);
// the scaled chunk sum is rounded before its add as theirs is (SASS: the
// old gate·up's FMUL, FSEL, FADD), so the same bits are expected.
#include "gemv.cuh"
#include "expert_addr.cuh"

#define R34_THREADS 512
#define R34_WARPS (R34_THREADS / 32)
#define R34_STAGES 4  // a warp's ring: steps s+1 … s+3 in flight while s is summed
// One stage of one warp: 4 rows × 32 lanes × 16 bytes of weights, then the
// 32 lanes' FP8 block scales.
#define R34_STAGE_W 2048
#define R34_STAGE_BYTES (R34_STAGE_W + 32 * 4)
#define R34_RING_BYTES (R34_WARPS * R34_STAGES * R34_STAGE_BYTES)
#define R34_MAX_PAIRS 64    // n·k: the ids two per lane
#define R34_GU_COLS 2048    // gate·up input width (4 chunks of 16 FP8 weights a lane)
#define R34_DOWN_COLS 512   // down input width (routed FP8: 1 chunk a lane; shared BF16: 2)
#define R34_GU_TILE 16      // gate·up rows an item (4 row groups × 4 chunks: 16 steps), or 8 (tile8)
#define R34_DOWN_TILE 16    // routed down rows an item (4 row groups × 1 chunk: 4 steps)
#define R34_SHARED_TILE 8   // shared down rows an item (2 row groups × 2 chunks: 4 steps)

extern __shared__ __align__(16) uint8_t r34_dyn[];

__device__ __forceinline__ uint32_t r34_smem(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// r34_cp16 copies 16 bytes global → shared, around L1, with a 256-byte L2
// fetch (the rows are streamed); r34_cp4 one scale (through L1: a scale
// row's 16 values serve many steps).
__device__ __forceinline__ void r34_cp16(uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void r34_cp4(uint32_t dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void r34_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// r34_wait leaves at most N of this thread's groups in flight: its copies
// before those are in shared memory and visible to it (a lane reads back
// only what it copied itself, so no barrier).
template <int N>
__device__ __forceinline__ void r34_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// r34_pair_id is pair q's expert (q < 64, warp-uniform) from the ids two
// per lane (lane l: pairs l and l + 32).
__device__ __forceinline__ int r34_pair_id(int idA, int idB, int q) {
    return __shfl_sync(FULL_MASK, q < 32 ? idA : idB, q & 31);
}

// r34_fp8_rows adds to acc[r] the FP8 chunk w[r]'s products with the 16
// inputs x0…x3, scaled: XChunk<Fast, FP8Weights>::dot_scale's operations
// (FP8Weights::dot's chain, ×2¹²⁰, × the block scale).
__device__ __forceinline__ void r34_fp8_rows(float (&acc)[4], const uint4 (&w)[4], float sc, float4 x0, float4 x1,
                                             float4 x2, float4 x3) {
#pragma unroll
    for (int r = 0; r < 4; r++) {
        float d = fp8_dot4_bits(w[r].x, x0, 0.f);
        d = fp8_dot4_bits(w[r].y, x1, d);
        d = fp8_dot4_bits(w[r].z, x2, d);
        d = fp8_dot4_bits(w[r].w, x3, d);
        // The scaled chunk sum rounded before its add (not contracted into
        // an FMA): the old kernels' bits (their add sits behind a select).
        acc[r] += __fmul_rn(d * FP8Weights::DOT_UNIT, sc);
    }
}

// r34_xswz is where float4 f of 16-float chunk c lies in the staged x
// (gate·up): lanes reading consecutive chunks (64 bytes apart) then hit 8
// different 16-byte bank groups a quarter warp instead of 4.
__device__ __forceinline__ int r34_xswz(int c, int f) { return 4 * c + (f ^ ((c >> 1) & 3)); }

// r34_ring_read reads back stage slot of this warp's ring: the lane's 4
// rows' chunks and its scale.
__device__ __forceinline__ float r34_ring_read(const uint8_t* stage, int lane, uint4 (&w)[4]) {
    const uint4* sw = reinterpret_cast<const uint4*>(stage);
#pragma unroll
    for (int r = 0; r < 4; r++) w[r] = sw[r * 32 + lane];
    return reinterpret_cast<const float*>(stage + R34_STAGE_W)[lane];
}

// ---------------------------------------------------------------------------
// moe_rows34_gate_up: gu[q·rows + r] = Σ_c W_m[r, c]·x[t, c] for the n·k
// pairs q = t·k + j of ids (expert m = ids[q], row t = q / k), W the FP8
// gate·up matrices [rows, 2048] (mstride bytes apart, scales S sstride
// apart; or where the expert table xt says), x the n rows at pitch xpitch.
// Items are tiles of R34_GU_TILE rows, or of 8 when tile8 is set (the host's
// choice where 16-row items would leave many warps without one: B = 2's
// 1024 items for 2112 warps, ≈ 46 KB in flight an SM; 8-row ones double
// the items and the bytes in flight).
// Grid: any (one block an SM), block R34_THREADS, dynamic shared memory
// R34_RING_BYTES + n·2048·4 (x, staged once a block by cp.async).
// rows a multiple of R34_GU_TILE, n·k ≤ R34_MAX_PAIRS (the host checks).
extern "C" __global__ void __launch_bounds__(R34_THREADS, 1)
    moe_rows34_gate_up(float* __restrict__ gu, const int32_t* __restrict__ ids, const uint8_t* __restrict__ W,
                       const float* __restrict__ S, long long mstride, long long sstride,
                       const float* __restrict__ x, int xpitch, int n, int k, int rows, int tile8,
                       const unsigned long long* __restrict__ xt) {
    constexpr int C = R34_GU_COLS / 512, cols = R34_GU_COLS, scols = cols / 128;
    // An item's rows and steps (4 rows × one chunk a lane a step): 16 and 16, or 8 and 8.
    const int TR = tile8 ? 8 : R34_GU_TILE, lgSPI = tile8 ? 3 : 4, SPI = 1 << lgSPI;
    uint8_t* const ring = r34_dyn;
    float* const xs = reinterpret_cast<float*>(r34_dyn + R34_RING_BYTES);
    pdl_entry();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nk = n * k;
    // The ids first (the first weights wait for them), then x: the n rows by
    // cp.async (group 0 of every thread), swizzled by chunk.
    const int idA = lane < nk ? ld_dep(ids + lane) : 0, idB = lane + 32 < nk ? ld_dep(ids + lane + 32) : 0;
    for (int v = threadIdx.x; v < n * (cols / 4); v += R34_THREADS) {
        const int t = v / (cols / 4), f4 = v % (cols / 4);
        r34_cp16(r34_smem(xs + (size_t)t * cols + 4 * r34_xswz(f4 >> 2, f4 & 3)), x + (size_t)t * xpitch + 4 * f4);
    }
    r34_commit();
    const int items = (rows / TR) * nk;
    const int gw = warp * gridDim.x + blockIdx.x, TW = gridDim.x * R34_WARPS;  // r34 warp order
    const int steps = gw < items ? ((items - 1 - gw) / TW + 1) * SPI : 0;
    uint8_t* const wring = ring + (size_t)warp * R34_STAGES * R34_STAGE_BYTES;
    const uint32_t lring = r34_smem(wring) + lane * 16;  // the lane's first slot (held: no rematerialising)
    // The issue cursor: the item whose steps are being copied.
    const uint8_t* iw = nullptr;  // its matrix at its tile's first row
    const float* isc = nullptr;   // its tile's scale row
    auto issue = [&](int s) {
        if (s < steps) {
            const int st = s & (SPI - 1);
            if (st == 0) {
                const int it = gw + (s >> lgSPI) * TW, tile = it / nk, q = it - tile * nk;
                const ExpertAddr a = expert_addr(xt, r34_pair_id(idA, idB, q), W, S, mstride, sstride);
                iw = a.w + (size_t)tile * TR * cols + lane * 16;
                isc = a.s + (size_t)(tile * TR >> 7) * scols;
            }
            const int rg = st / C, u = st % C, chunk = lane + 32 * u;
            const uint32_t d = lring + (s % R34_STAGES) * R34_STAGE_BYTES;
            const uint8_t* src = iw + (rg * 4 * cols + u * 512);  // iw includes the lane's 16 bytes
#pragma unroll
            for (int r = 0; r < 4; r++) r34_cp16(d + r * 32 * 16, src + r * cols);
            r34_cp4(d - lane * 12 + R34_STAGE_W, isc + (chunk >> 3));  // the scale at STAGE_W + lane·4
        }
        r34_commit();  // a group every step, empty past the end: the wait counts stay uniform
    };
#pragma unroll
    for (int s = 0; s < R34_STAGES - 1; s++) issue(s);
    r34_wait<R34_STAGES - 1>();  // x's group
    __syncthreads();
    // The compute cursor.
    int q = 0, t = 0, row0 = 0;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < steps; s++) {
        const int st = s & (SPI - 1);
        if (st == 0) {
            const int it = gw + (s >> lgSPI) * TW, tile = it / nk;
            q = it - tile * nk;
            t = q / k;
            row0 = tile * TR;
        }
        issue(s + R34_STAGES - 1);
        r34_wait<R34_STAGES - 1>();
        uint4 w[4];
        const float sc = r34_ring_read(wring + (s % R34_STAGES) * R34_STAGE_BYTES, lane, w);
        const int u = st % C, chunk = lane + 32 * u;
        const float4* xv = reinterpret_cast<const float4*>(xs + (size_t)t * cols);
        r34_fp8_rows(acc, w, sc, xv[r34_xswz(chunk, 0)], xv[r34_xswz(chunk, 1)], xv[r34_xswz(chunk, 2)],
                     xv[r34_xswz(chunk, 3)]);
        if (u == C - 1) {
            const int r0 = row0 + (st / C) * 4;
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const float v = warp_sum(acc[r]);
                if (lane == 0) gu[(size_t)q * rows + r0 + r] = v;
                acc[r] = 0.f;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// moe_rows34_down: the B-row step's down projections, moe_down2's outputs:
// yr[q·h + r] = Σ_c W_m[r, c]·silu(g_q[c])·u_q[c] for the n·k pairs (m =
// ids[q]; g_q = gu + q·2p, u_q = g_q + p, zero for c ≥ i; W the FP8 down
// matrices [h, 512]) and ys[t·h + r] = Σ_c Ws[r, c]·silu(d_t[c])·d_t[512 + c]
// for the n rows (d_t = dense + t·dstride + e; Ws BF16 [h, 512]). Items:
// routed (tile of 16 rows, pair) tile-major, then shared (tile of 8 rows,
// row) tile-major; 4 steps each. A lane's 16 inputs of an item are loaded
// (L2) when its first step is copied and become silu·u when it is summed,
// so the item boundary waits for nothing. Each routed pair is tallied in
// xst (expert_addr.cuh), as moe_down2 does. Grid: any (one block an SM),
// block R34_THREADS, dynamic shared memory R34_RING_BYTES. h a multiple of
// R34_DOWN_TILE, n·k ≤ R34_MAX_PAIRS (the host checks).
extern "C" __global__ void __launch_bounds__(R34_THREADS, 1)
    moe_rows34_down(float* __restrict__ yr, float* __restrict__ ys, const uint8_t* __restrict__ W,
                    const float* __restrict__ S, long long mstride, long long sstride,
                    const int32_t* __restrict__ ids, const float* __restrict__ gu, int p, int i, int n, int k,
                    const uint16_t* __restrict__ Ws, const float* __restrict__ dense, int dstride, int e, int h,
                    const unsigned long long* __restrict__ xt, unsigned int* xst) {
    constexpr int cols = R34_DOWN_COLS, SPI = 4, scols = cols / 128;
    pdl_entry();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nk = n * k;
    const int idA = lane < nk ? ld_dep(ids + lane) : 0, idB = lane + 32 < nk ? ld_dep(ids + lane + 32) : 0;
    if (blockIdx.x == 0 && warp < 2 && lane + 32 * warp < nk) expert_count(xst, xt, warp ? idB : idA);
    const int NR = (h / R34_DOWN_TILE) * nk, items = NR + (h / R34_SHARED_TILE) * n;
    const int gw = warp * gridDim.x + blockIdx.x, TW = gridDim.x * R34_WARPS;  // r34 warp order
    const int steps = gw < items ? ((items - 1 - gw) / TW + 1) * SPI : 0;
    uint8_t* const wring = r34_dyn + (size_t)warp * R34_STAGES * R34_STAGE_BYTES;
    // The issue cursor: the item being copied, and its inputs in flight
    // (gate and up, 16 values each: routed columns 16·lane…, shared
    // 8·lane… and 256 + 8·lane…).
    const uint8_t* iw = nullptr;
    const float* isc = nullptr;
    bool ibf = false;
    float pg[16], pu[16];
    auto issue = [&](int s) {
        if (s < steps) {
            const int st = s % SPI;
            if (st == 0) {
                const int it = gw + (s / SPI) * TW;
                if (it < NR) {
                    const int tile = it / nk, q = it - tile * nk;
                    const ExpertAddr a = expert_addr(xt, r34_pair_id(idA, idB, q), W, S, mstride, sstride);
                    iw = a.w + (size_t)tile * R34_DOWN_TILE * cols;
                    isc = a.s + (size_t)(tile * R34_DOWN_TILE >> 7) * scols;
                    ibf = false;
                    // gu rows are 16-byte aligned (p a multiple of 4: the host checks).
                    const float4* g = reinterpret_cast<const float4*>(gu + (size_t)q * 2 * p) + 4 * lane;
                    const float4* u = reinterpret_cast<const float4*>(gu + (size_t)q * 2 * p + p) + 4 * lane;
#pragma unroll
                    for (int f = 0; f < 4; f++) {
                        const float4 gv = __ldcg(g + f), uv = __ldcg(u + f);
                        pg[4 * f] = gv.x, pg[4 * f + 1] = gv.y, pg[4 * f + 2] = gv.z, pg[4 * f + 3] = gv.w;
                        pu[4 * f] = uv.x, pu[4 * f + 1] = uv.y, pu[4 * f + 2] = uv.z, pu[4 * f + 3] = uv.w;
                    }
                } else {
                    const int j = it - NR, tile = j / n, t = j - tile * n;
                    iw = reinterpret_cast<const uint8_t*>(Ws) + (size_t)tile * R34_SHARED_TILE * cols * 2;
                    ibf = true;
                    // The stacked projection's rows are D = E + 2·is + 1 floats
                    // apart (odd): scalar loads. Values 0…7 are chunk lane's
                    // columns, 8…15 chunk lane + 32's.
                    const float* d = dense + (size_t)t * dstride + e;
#pragma unroll
                    for (int c = 0; c < 16; c++) {
                        const int col = (c >> 3) * 256 + 8 * lane + (c & 7);
                        pg[c] = __ldcg(d + col);
                        pu[c] = __ldcg(d + cols + col);
                    }
                }
            }
            const uint32_t dst = r34_smem(wring + (s % R34_STAGES) * R34_STAGE_BYTES);
            if (ibf) {
                // Rows 4·(st/2)…, chunk lane + 32·(st%2) of 64 (8 BF16 each).
                const uint8_t* src = iw + (size_t)(st >> 1) * 4 * cols * 2 + (lane + 32 * (st & 1)) * 16;
#pragma unroll
                for (int r = 0; r < 4; r++) r34_cp16(dst + (r * 32 + lane) * 16, src + r * cols * 2);
            } else {
                // Rows 4·st…, chunk lane of 32 (16 FP8 each).
                const uint8_t* src = iw + (size_t)st * 4 * cols + lane * 16;
#pragma unroll
                for (int r = 0; r < 4; r++) r34_cp16(dst + (r * 32 + lane) * 16, src + r * cols);
                r34_cp4(dst + R34_STAGE_W + lane * 4, isc + (lane >> 3));  // the tile lies in one 128-row block
            }
        }
        r34_commit();
    };
#pragma unroll
    for (int s = 0; s < R34_STAGES - 1; s++) issue(s);
    // The compute cursor: the item's output row and its 16 inputs.
    float* out = nullptr;
    bool bf = false;
    float4 xv[4];
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < steps; s++) {
        const int st = s % SPI;
        if (st == 0) {
            // The item's inputs, loaded by its first step's issue (SPI ≥
            // R34_STAGES: the next item's are loaded after this).
            const int it = gw + (s / SPI) * TW;
            bf = it >= NR;
            float xf[16];
            if (!bf) {
                const int tile = it / nk, q = it - tile * nk;
                out = yr + (size_t)q * h + tile * R34_DOWN_TILE;
#pragma unroll
                for (int c = 0; c < 16; c++) xf[c] = 16 * lane + c < i ? Fast::mul(Fast::silu(pg[c]), pu[c]) : 0.f;
            } else {
                const int j = it - NR, tile = j / n, t = j - tile * n;
                out = ys + (size_t)t * h + tile * R34_SHARED_TILE;
#pragma unroll
                for (int c = 0; c < 16; c++) xf[c] = Fast::mul(Fast::silu(pg[c]), pu[c]);
            }
#pragma unroll
            for (int f = 0; f < 4; f++) xv[f] = make_float4(xf[4 * f], xf[4 * f + 1], xf[4 * f + 2], xf[4 * f + 3]);
        }
        issue(s + R34_STAGES - 1);
        r34_wait<R34_STAGES - 1>();
        uint4 w[4];
        const float sc = r34_ring_read(wring + (s % R34_STAGES) * R34_STAGE_BYTES, lane, w);
        bool done;
        int r0;
        if (bf) {
            // Chunk lane + 32·(st % 2)'s inputs (selects, not an index: xv stays in registers).
            const bool hi = st & 1;
            const float4 xb[2] = {hi ? xv[2] : xv[0], hi ? xv[3] : xv[1]};
#pragma unroll
            for (int r = 0; r < 4; r++) acc[r] += BF16Weights::dot(w[r], xb);
            done = st & 1;
            r0 = (st >> 1) * 4;
        } else {
            r34_fp8_rows(acc, w, sc, xv[0], xv[1], xv[2], xv[3]);
            done = true;
            r0 = st * 4;
        }
        if (done) {
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const float v = warp_sum(acc[r]);
                if (lane == 0) out[r0 + r] = v;
                acc[r] = 0.f;
            }
        }
    }
}
