// A prefill pass's routed experts as grouped GEMMs whose FP8 weights stream
// from memory straight into the tensor cores' registers (fast numerics only;
// issue 28, docs/PERF.md "stream14"). Reference: engine/cpu.MatMulRows.
//
// Y[i, r] = Σ_c W_e[r, c] · X[x(i), c] for each pair i of expert e
// (offsets[e] ≤ i < offsets[e+1], Y's rows sorted by expert as moe_group
// leaves them), W_e matrix ids[e] (or e) of block-FP8 weights with their
// float32 scales S ([⌈rows/128⌉, ⌈cols/128⌉] a matrix), x(i) = rowids[i]
// (or i). The same contract as gemm.cu's grouped form.
//
// Why another kernel. gemm.cu's grouped instances copy each W tile through
// a cp.async ring in shared memory, one barrier a stage; with the 8–32 X
// rows an expert has in a 300–700-row pass the MMAs are few and the SMs
// idle between barriers (gemm32's profile: half the cycles of a stage), so
// the experts read their 32 GB at 1.1–2.5 TB/s. Here each warp owns 16 W
// rows and streams them from memory into registers with 16-byte loads,
// GEMM_STREAM_DEPTH steps ahead; W never enters shared memory, so a warp
// waits on its own W loads only. X comes through shared memory a chunk at a
// time (gemm_stream_body; warps reading it through L1 instead, session 14's
// run 1, stalled on its misses).
//
// The order of a step's columns is free (the sum does not depend on it), so
// a lane's 16-byte W loads are its A fragments: lane (g, tq) loads bytes
// 16tq … 16tq+15 and 64+16tq … 64+16tq+15 of a 128-column step of rows g and
// g+8; word j of those 32 bytes (4 E4M3 columns: c = base(j) … base(j)+3)
// gives MMA j's A registers, its bytes 0, 1 the MMA's k 2tq, 2tq+1 and
// bytes 2, 3 its k 2tq+8, 2tq+9. The B operand takes the same columns from
// X, which gemm_stream_prep has laid out for it: each X row and 128-column
// block as two FP16 parts (hi, lo; 256 bytes each) whose 16-byte piece
// 4jj + tq holds, in order, columns base(2jj) … +3 and base(2jj+1) … +3 of
// lane tq: one 16-byte load gives B registers of two MMAs, from the block's
// shared copy of the pass's X; W bypasses L1.
//
// Numerics (fast): every E4M3 weight is exact in FP16; each x enters as two
// FP16 parts of x·2^f, f a power of two per X row and 128-column block
// (f16_row_scale), ≈ 22 bits of x; the MMAs of a 128-column step accumulate
// in float32 into step accumulators, which are multiplied by the block's
// scale s and 2^-f and added to the row's float32 sum. Within fast's 1e-4
// as f16p34's FP16 parts (docs/MODEL.md "Numerics policy").
//
// Grid: (1, ⌈rows/128⌉, groups); block GEMM_STREAM_THREADS (8 warps: 128 W
// rows, one FP8 scale block's rows), GemmStreamShared bytes of dynamic
// shared memory. A group's pairs run NT·8 at a time over the same W rows
// (later passes from L2); a group without pairs exits.
#include "common.cuh"
#include "mma_f16.cuh"
#include "cp_async.cuh"

#define GEMM_STREAM_THREADS 256
#define GEMM_STREAM_ROWS 128        // W rows of a block: 8 warps × 16
#define GEMM_STREAM_BLOCK_BYTES 512 // one X row's 128-column block in parts: 2 × 128 FP16
#define GEMM_STREAM_DEPTH 2         // W steps in flight a warp (each 2 KB a warp)
#define GEMM_STREAM_CHUNK 8         // a chunk's steps × the pass's n-tiles: 32 KB of X parts a chunk
#define GEMM_STREAM_PREP_THREADS 256

// gemm_stream_piece is the 16-byte piece (of 16 in a part's 256 bytes) that
// holds columns 8·k8 … 8·k8+7 of a 128-column block: columns c < 64 belong to
// lane tq = c / 16 in its piece (c % 16) / 8, columns c ≥ 64 to lane
// (c − 64) / 16 in its piece 2 + (c % 16) / 8; piece 4jj + tq is lane tq's
// jj-th.
__device__ __forceinline__ int gemm_stream_piece(int k8) { return (2 * (k8 >> 3) + (k8 & 1)) * 4 + ((k8 & 7) >> 1); }

// gemm_stream_prep writes the parts of rows rows of X (pitch xstride floats,
// cols columns, a multiple of 8) as the stream kernels read them: row r's
// block b at parts + (r·nb + b)·512 (nb = ⌈cols/128⌉; hi at +0, lo at +256,
// columns past cols zero) and 2^-f at inv[r·nb + b]. One thread an 8-column
// chunk; the 16 chunks of a block are 16 neighbouring lanes (their largest
// |x| by shuffles). With SWIGLU, X is the SwiGLU of gate·up rows G (pitch
// xstride, gate at 0, up at gp): x[r][c] = silu(G[r][c])·G[r][gp + c] for
// c < gi, 0 from gi on, moe_swiglu_fast's h to the bit (the routed experts'
// down projection reads its input so, without h: gemm_stream_prep_swiglu);
// gp a multiple of 8 (16-byte loads; a load may read up to 7 values past gi
// within the row's half).
template <bool SWIGLU>
__device__ __forceinline__ void gemm_stream_prep_body(uint8_t* parts, float* inv, const float* X, int rows, int cols,
                                                      int xstride, int gp, int gi) {
    pdl_entry();
    const int nb = (cols + 127) >> 7, lane = threadIdx.x & 31;
    const long long total = (long long)rows * nb * 16;  // a multiple of 16: no block of 16 lanes straddles rows
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < total; base += stride) {
        const long long t = base + lane;
        const bool ok = t < total;  // a warp's last 16 lanes may lie past the end, together
        const long long rb = (ok ? t : total - 1) >> 4;
        const int k8 = (int)(t & 15), b = (int)(rb % nb);
        const long long r = rb / nb;
        const int c = b * 128 + k8 * 8;
        float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        if (SWIGLU) {
            // 16-byte loads: a lane's 8 gate and 8 up values (scalar loads
            // of 8 columns a lane touched every 32-byte sector 8 times).
            if (ok && c < gi) {
                const float* g = X + r * xstride + c;
                const float4 g0 = __ldcg(reinterpret_cast<const float4*>(g)), g1 = __ldcg(reinterpret_cast<const float4*>(g + 4));
                const float4 u0 = __ldcg(reinterpret_cast<const float4*>(g + gp)), u1 = __ldcg(reinterpret_cast<const float4*>(g + gp + 4));
                const float gs[8] = {g0.x, g0.y, g0.z, g0.w, g1.x, g1.y, g1.z, g1.w};
                const float us[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
#pragma unroll
                for (int e = 0; e < 8; e++)
                    if (c + e < gi) v[e] = Fast::mul(Fast::silu(gs[e]), us[e]);
            }
        } else if (ok && c < cols) {
            const float4 p = __ldcg(reinterpret_cast<const float4*>(X + r * xstride + c));
            const float4 q = __ldcg(reinterpret_cast<const float4*>(X + r * xstride + c + 4));
            v[0] = p.x, v[1] = p.y, v[2] = p.z, v[3] = p.w, v[4] = q.x, v[5] = q.y, v[6] = q.z, v[7] = q.w;
        }
        float m = 0.f;
#pragma unroll
        for (int e = 0; e < 8; e++) m = fmaxf(m, fabsf(v[e]));
#pragma unroll
        for (int o = 8; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float fwd, iv;
        f16_row_scale(m, fwd, iv);
        uint32_t hi[4], lo[4];
#pragma unroll
        for (int p = 0; p < 4; p++) {
            uint32_t s[2];
            split_f16(v[2 * p] * fwd, v[2 * p + 1] * fwd, s);
            hi[p] = s[0], lo[p] = s[1];
        }
        if (ok) {
            uint8_t* dst = parts + rb * GEMM_STREAM_BLOCK_BYTES + gemm_stream_piece(k8) * 16;
            *reinterpret_cast<uint4*>(dst) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
            *reinterpret_cast<uint4*>(dst + 256) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
            if (k8 == 0) inv[rb] = iv;
        }
    }
}
extern "C" __global__ void __launch_bounds__(GEMM_STREAM_PREP_THREADS) gemm_stream_prep(
    uint8_t* parts, float* inv, const float* X, int rows, int cols, int xstride) {
    gemm_stream_prep_body<false>(parts, inv, X, rows, cols, xstride, 0, 0);
}
// gemm_stream_prep_swiglu (engine/cuda GemmStreamFP8SwiGLU): the parts of
// the SwiGLU of rows gate·up rows G (pitch gstride = 2·gp; gi columns of
// each half, zero up to cols).
extern "C" __global__ void __launch_bounds__(GEMM_STREAM_PREP_THREADS) gemm_stream_prep_swiglu(
    uint8_t* parts, float* inv, const float* G, int rows, int cols, int gstride, int gp, int gi) {
    gemm_stream_prep_body<true>(parts, inv, G, rows, cols, gstride, gp, gi);
}

// gemm_stream_load loads step s's W pieces of the lane's rows (wa, wb: the
// rows at the lane's 16tq) into w: row g's two pieces, then row g+8's;
// pieces past cols (a multiple of 16) are zero, steps past nb untouched.
// gemm_stream_load_half loads half h of them: the columns 0 … 63 of the
// step (w[0] and w[2], h = 0) or 64 … 127 (w[1] and w[3]).
__device__ __forceinline__ void gemm_stream_load_half(uint4 (&w)[4], const uint8_t* wa, const uint8_t* wb, int s,
                                                      int nb, int cols, int tq, int h) {
    if (s >= nb) return;
    const int c = s * 128 + 64 * h;
    const bool v = c + 16 * tq < cols;
    const uint4 z = make_uint4(0u, 0u, 0u, 0u);
    w[h] = v ? load_stream(reinterpret_cast<const uint4*>(wa + c)) : z;
    w[2 + h] = v ? load_stream(reinterpret_cast<const uint4*>(wb + c)) : z;
}
__device__ __forceinline__ void gemm_stream_load(uint4 (&w)[4], const uint8_t* wa, const uint8_t* wb, int s, int nb,
                                                 int cols, int tq) {
    gemm_stream_load_half(w, wa, wb, s, nb, cols, tq, 0);
    gemm_stream_load_half(w, wa, wb, s, nb, cols, tq, 1);
}

// gemm_stream_step: one 128-column step st of chunk buffers xb (X parts)
// and ib (their scales) for the warp's W pieces w (rows g: 0, 1; g+8: 2, 3)
// of block scale sv, into acc; next(h) is called as soon as half h of the
// pieces is turned into MMA operands (the register ring loads the step D
// on into them): before the half's MMAs, which wait on the accumulator
// chains. (Called after the step's MMAs and their sum, as until session 16,
// the loads waited on the chains: a 300-row pass's experts 1.11× slower, the
// prefill 1.5 ms; docs/PERF.md "early16".)
template <int NT, int CH, int CK, class Next>
__device__ __forceinline__ void gemm_stream_step(float (&acc)[NT][4], const uint4 (&w)[4], const uint8_t* xb,
                                                 const float* ib, int st, float sv, int nts, int g, int tq, int swz,
                                                 Next next) {
    // CH independent accumulator chains an n-tile (the step's MMAs i = 0 … 15
    // of a tile into chain i % CH): one chain of sixteen dependent MMAs a
    // step left the warps waiting on the MMA's latency (run 6: "wait" 28-38 %
    // of their cycles).
    float c[NT][CH][4];
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
        for (int h = 0; h < CH; h++) c[t][h][0] = c[t][h][1] = c[t][h][2] = c[t][h][3] = 0.f;
#pragma unroll
    for (int jj = 0; jj < 4; jj++) {
        // MMAs 2jj and 2jj+1: words of piece jj / 2 of rows g, g+8.
        const uint4 pa = w[jj >> 1], pb = w[2 + (jj >> 1)];
        uint32_t a0[4], a1[4];
        e4m3x2_f16x2((jj & 1) ? pa.z : pa.x, a0[0], a0[2]);
        e4m3x2_f16x2((jj & 1) ? pb.z : pb.x, a0[1], a0[3]);
        e4m3x2_f16x2((jj & 1) ? pa.w : pa.y, a1[0], a1[2]);
        e4m3x2_f16x2((jj & 1) ? pb.w : pb.y, a1[1], a1[3]);
        if (jj & 1) next(jj >> 1);  // pieces jj/2 and 2 + jj/2 are operands now
        const int off = (64 * jj + 16 * tq) ^ swz;
#pragma unroll
        for (int t = 0; t < NT; t++) {
            if (t < nts) {
                const uint8_t* px = xb + ((8 * t + g) * CK + st) * GEMM_STREAM_BLOCK_BYTES + off;
                const uint4 xh = *reinterpret_cast<const uint4*>(px);
                const uint4 xl = *reinterpret_cast<const uint4*>(px + 256);
                mma_f16(c[t][(4 * jj) % CH], a0, xl.x, xl.y);  // the small part first
                mma_f16(c[t][(4 * jj + 1) % CH], a1, xl.z, xl.w);
                mma_f16(c[t][(4 * jj + 2) % CH], a0, xh.x, xh.y);
                mma_f16(c[t][(4 * jj + 3) % CH], a1, xh.z, xh.w);
            }
        }
    }
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
        for (int h = 1; h < CH; h++)
#pragma unroll
            for (int k = 0; k < 4; k++) c[t][0][k] += c[t][h][k];
#pragma unroll
    for (int t = 0; t < NT; t++) {
        // C columns 2tq, 2tq+1 are pass rows 8t + 2tq, +1. s first, 2^-f
        // last: a tiny row's sum rounds into float32's subnormals once, not
        // through s·2^-f.
        const float fa = ib[(8 * t + 2 * tq) * CK + st], fb = ib[(8 * t + 2 * tq + 1) * CK + st];
        acc[t][0] = fmaf(c[t][0][0] * sv, fa, acc[t][0]);
        acc[t][1] = fmaf(c[t][0][1] * sv, fb, acc[t][1]);
        acc[t][2] = fmaf(c[t][0][2] * sv, fa, acc[t][2]);
        acc[t][3] = fmaf(c[t][0][3] * sv, fb, acc[t][3]);
    }
}

// gemm_stream_body: NT n-tiles (R = NT·8 pairs) a pass over the warp's W
// rows. A pass's X parts come through shared memory in chunks of CK steps
// (R·CK·512 bytes, 32 KB; two buffers, cp.async, one barrier a chunk), with
// the chunk's scales; a row's 64-byte halves of each 128 bytes swap on odd
// rows, so the 16-byte B loads of a quarter warp (two rows, four lane
// quads) hit all 32 banks once. W never enters shared memory.
template <int NT, int CH>
__device__ __forceinline__ void gemm_stream_body(float* Y, const uint8_t* __restrict__ W, const float* __restrict__ S,
                                                 const uint8_t* parts, const float* inv, long long mstride,
                                                 long long sstride, int rows, int cols, int ystride,
                                                 const int32_t* offsets, const int32_t* ids, const int32_t* rowids) {
    constexpr int D = GEMM_STREAM_DEPTH, R = NT * 8, CK = GEMM_STREAM_CHUNK / NT;
    constexpr int XB = R * CK * GEMM_STREAM_BLOCK_BYTES;  // one X buffer
    static_assert(CK % D == 0, "a chunk's steps must cycle the W ring whole");
    extern __shared__ __align__(16) uint8_t gemm_stream_dyn[];  // X [2][R][CK][512], then scales [2][R][CK]
    __shared__ uint32_t xoff[R], ioff[R];                         // a pass row's parts bytes and scales
    uint8_t* const xs = gemm_stream_dyn;
    float* const is = reinterpret_cast<float*>(gemm_stream_dyn + 2 * XB);
    pdl_entry();
    const int e = blockIdx.z;
    const int lo = ld_dep(offsets + e), hi = ld_dep(offsets + e + 1);
    if (lo >= hi) return;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
    const int r0 = blockIdx.y * GEMM_STREAM_ROWS + warp * 16;
    const bool active = r0 < rows;  // a warp past the matrix still copies and meets the barriers
    const long long mat = ids != nullptr ? ld_dep(ids + e) : e;
    const int nb = (cols + 127) >> 7, nq = (nb + CK - 1) / CK;
    const int ra = r0 + g, rb = ra + 8;
    // Rows past the matrix read its last row: their outputs (their own C
    // rows of each MMA) are not stored.
    const uint8_t* wa = W + mat * mstride + (long long)min(ra, rows - 1) * cols + 16 * tq;
    const uint8_t* wb = W + mat * mstride + (long long)min(rb, rows - 1) * cols + 16 * tq;
    const float* srow = S + mat * sstride + (long long)blockIdx.y * nb;
    const int swz = (g & 1) << 6;  // this lane's rows' half swap (8t + g: g's parity)
    for (int i0 = lo; i0 < hi; i0 += R) {
        const int nts = min(NT, (hi - i0 + 7) >> 3);
        // The pass's first W steps need no row table: in flight before it
        // (session 16).
        uint4 w[D][4];
        if (active) {
#pragma unroll
            for (int d = 0; d < D; d++) gemm_stream_load(w[d], wa, wb, d, nb, cols, tq);
        }
        __syncthreads();  // the last pass is done with the row table and the buffers
        if (threadIdx.x < R) {
            const int i = min(i0 + (int)threadIdx.x, hi - 1);  // past the group's end its last row
            const int xr = rowids != nullptr ? ld_dep(rowids + i) : i;
            xoff[threadIdx.x] = (uint32_t)xr * nb * GEMM_STREAM_BLOCK_BYTES;
            ioff[threadIdx.x] = (uint32_t)xr * nb;
        }
        __syncthreads();
        // copy: chunk q into buffer q & 1 (a group committed even past the
        // last chunk, so that the waits count alike).
        auto copy = [&](int q) {
            if (q < nq) {
                const uint32_t xb = (uint32_t)__cvta_generic_to_shared(xs + (q & 1) * XB);
                for (int p = threadIdx.x; p < R * CK * 32; p += GEMM_STREAM_THREADS) {
                    const int rr = p / (CK * 32), st = (p >> 5) % CK, pc = p & 31, s = q * CK + st;
                    cp_async_sa<16>(xb + (rr * CK + st) * GEMM_STREAM_BLOCK_BYTES + ((pc * 16) ^ ((rr & 1) << 6)),
                                    parts + xoff[rr] + (uint32_t)min(s, nb - 1) * GEMM_STREAM_BLOCK_BYTES + pc * 16,
                                    s < nb);
                }
                if (threadIdx.x < R * CK) {
                    const int rr = threadIdx.x / CK, s = q * CK + threadIdx.x % CK;
                    cp_async_sa<4>((uint32_t)__cvta_generic_to_shared(is + (q & 1) * R * CK + threadIdx.x),
                                   inv + ioff[rr] + min(s, nb - 1), s < nb);
                }
            }
            cp_async_commit();
        };
        copy(0);
        copy(1);
        float acc[NT][4];
#pragma unroll
        for (int t = 0; t < NT; t++) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.f;
        for (int q = 0; q < nq; q++) {
            cp_async_wait<1>();  // chunk q is in (q + 1 may still be on its way)
            __syncthreads();
            if (active) {
                const uint8_t* xb = xs + (q & 1) * XB;
                const float* ib = is + (q & 1) * R * CK;
#pragma unroll 1
                for (int st0 = 0; st0 < CK; st0 += D) {
#pragma unroll
                  for (int d = 0; d < D; d++) {
                    const int st = st0 + d, s = q * CK + st;
                    if (s >= nb) break;
                    gemm_stream_step<NT, CH, CK>(acc, w[d], xb, ib, st, __ldg(srow + s), nts, g, tq, swz, [&](int h) {
                        gemm_stream_load_half(w[d], wa, wb, s + D, nb, cols, tq, h);
                    });
                  }
                }
            }
            __syncthreads();  // every warp is done with buffer q & 1
            copy(q + 2);
        }
        if (!active) continue;
        // C: c0, c1 row g at pairs 2tq, 2tq+1; c2, c3 row g+8.
#pragma unroll
        for (int t = 0; t < NT; t++) {
#pragma unroll
            for (int q = 0; q < 2; q++) {
                const int i = i0 + 8 * t + 2 * tq + q;
                if (t < nts && i < hi) {
                    if (ra < rows) Y[(long long)i * ystride + ra] = acc[t][q];
                    if (rb < rows) Y[(long long)i * ystride + rb] = acc[t][2 + q];
                }
            }
        }
    }
}

// Instances gemm_stream_fp8_n{8·NT}c{CH}: NT·8 pairs of a group a pass over
// its W rows (engine/cuda gemm_stream.go picks by the pairs a group has), CH
// accumulator chains an n-tile, two blocks an SM: each size's fastest of
// session 14's run 7 (one, two or four chains; 32 pairs with two chains
// spilled and lost). Three blocks an SM (ptxas held to 80 registers; run 2)
// and W in a per-warp cp.async ring in shared memory with a ninth warp
// copying X (run 9) were slower (docs/PERF.md "stream14").
#define GEMM_STREAM(NT, CH, SUF)                                                                                 \
    extern "C" __global__ void __launch_bounds__(GEMM_STREAM_THREADS, 2) gemm_stream_fp8_n##SUF(                 \
        float* Y, const uint8_t* __restrict__ W, const float* __restrict__ S, const uint8_t* parts,             \
        const float* inv, long long mstride, long long sstride, int rows, int cols, int ystride,                 \
        const int32_t* offsets, const int32_t* ids, const int32_t* rowids) {                                     \
        gemm_stream_body<NT, CH>(Y, W, S, parts, inv, mstride, sstride, rows, cols, ystride, offsets, ids,      \
                                 rowids);                                                                        \
    }
GEMM_STREAM(1, 4, 8c4)
GEMM_STREAM(2, 2, 16c2)
GEMM_STREAM(3, 2, 24c2)
GEMM_STREAM(4, 1, 32c1)
