// Chunked prefill of the Gated DeltaNet mixer (engine/cpu
// gatedDeltaRuleChunked, as flash-linear-attention's chunked gated delta
// rule computes it): the rows of a call in chunks of 64 (t0 = 0, 64, …, the
// last one ragged), the parts that do not depend on the state run for every
// (head, chunk) at once, then one pass over the chunks carries the state.
//
// Within a chunk of L rows starting from state S0 (c_i the cumulative log
// decay, A[i][j] = β_i (k_i·k_j) e^{c_i−c_j} for j < i):
//   (I + A)·Δ0 = β·v and (I + A)·W = β e^{c} k   (forward substitution),
//   Δ = Δ0 − W·S0,
//   o_i = e^{c_i} S0ᵀq_i + Σ_{j≤i} (q_i·k_j) e^{c_i−c_j} Δ_j,
//   S = e^{c_L} S0 + Σ_j e^{c_L−c_j} k_j ⊗ Δ_j.
//
// Five launches (engine/cuda deltaNetChunked): deltanet_chunk_prep (conv,
// SiLU, q/k norms and gates of every row and value head), deltanet_chunk_intra
// (per head and chunk: c and the products q_i·k_j and k_i·k_j),
// deltanet_chunk_solve (per head, chunk and 128 columns: Δ0 and W),
// deltanet_chunk_state (per head and 32 value columns: the chunks in order,
// every step of which is column-independent), deltanet_chunk_norm (the gated
// RMSNorm and the conv window). The device computes the CPU's bits
// (docs/MODEL.md, "Numerics contract"): the conv taps, the q/k norms' sums
// of squares and the dot products q_i·k_j, k_i·k_j are double sums of exact
// products rounded once (the taps and the dot products in the CPU's order
// too, so not even a rounding tie can tell them apart); the cumulative
// decay, the substitutions and the products with the state are float chains
// in the reference's order with separately rounded products and sums
// (dn_madd). Scratch is head-major: row t of head h at h·n + t.
//
// Each kernel's body takes the numerics policy P (numerics.cuh): Exact is
// the arithmetic above, the CPU's bits (the kernels' names without suffix);
// Fast (the _fast instances, docs/MODEL.md "Numerics policy") sums in
// float32 with fused multiply-adds and takes __expf, rsqrtf and float
// log1pf, so no double is left in them: float64 runs at 1/64 of float32 on
// workstation cards, where it bounded the prefill. Fast keeps Exact's order
// of operations (only the roundings differ), within 1e-5 of the CPU on one
// layer (engine/cuda TestDeltaNetChunkRule).
#include "deltanet.cuh"
#include "bf16_parts.cuh"

#define DNC_C 64        // chunk rows (engine/cpu deltaNetChunk)
#define DNC_MAXDK 192   // key dim bound of deltanet_chunk_state's shared state slice (engine/cuda deltaNetChunkMaxKeyDim)
#define DNC_MAXCH 1536  // 2·dk + dv (engine/cuda DeltaNetGeometry.Validate)

// dn_madd is acc + a·b rounded twice, as the Go reference computes it (no FMA).
__device__ __forceinline__ float dn_madd(float acc, float a, float b) { return __fadd_rn(acc, __fmul_rn(a, b)); }

// dnc_madd is acc + a·b under policy P: dn_madd (Exact), one fused
// multiply-add (Fast).
template <class P>
__device__ __forceinline__ float dnc_madd(float acc, float a, float b) {
    return P::exact ? dn_madd(acc, a, b) : fmaf(a, b, acc);
}

// dnc_softplus is softplus_f (log1p of exp in double, rounded once) under
// Exact; under Fast log1pf(__expf(x)) in float32 (linear above 20 in both).
template <class P>
__device__ __forceinline__ float dnc_softplus(float x) {
    return P::exact ? softplus_f(x) : x > 20.f ? x : log1pf(__expf(x));
}

// dnc_l2_inv is engine/cpu l2Normalize's factor for Σx² = ss: dn_l2_inv
// (Exact, ss a double sum) or rsqrtf(ss + 1e-6) in float32 (Fast).
template <class P>
__device__ __forceinline__ float dnc_l2_inv(typename P::Sum ss) {
    return P::exact ? dn_l2_inv(ss) : rsqrtf((float)ss + 1e-6f);
}

// deltanet_chunk_prep: grid (n, nv), DNC_PREP_THREADS threads. For row t and
// value head h: the causal conv of the head's channels over the conv window
// and earlier rows, SiLU, the L2 norms of q and k (q also ·dk^-½), β =
// sigmoid(b) and g = −exp(A_log)·softplus(a + dt_bias). Writes qn, kn
// [nv][n][dk], v [nv][n][dv], beta and decay [nv][n]. Reads the conv window,
// never writes it (deltanet_chunk_norm advances it).
#define DNC_PREP_THREADS 128
template <class P>
__device__ __forceinline__ void deltanet_chunk_prep_body(float* __restrict__ qn, float* __restrict__ kn,
                                                         float* __restrict__ vv, float* __restrict__ beta,
                                                         float* __restrict__ decay, const float* __restrict__ proj,
                                                         const float* __restrict__ convstate,
                                                         const float* __restrict__ convw,
                                                         const float* __restrict__ dtbias,
                                                         const float* __restrict__ alog, int n, int nk, int nv,
                                                         int dk, int dv, int K) {
    typedef typename P::Sum Sum;
    __shared__ float xs[DNC_MAXCH];
    __shared__ float inv[2];
    const int t = blockIdx.x, h = blockIdx.y, kh = h / (nv / nk), tid = threadIdx.x;
    const int ch = 2 * nk * dk + nv * dv, vd = nv * dv, pw = ch + vd + 2 * nv, cw = 2 * dk + dv;
    const float* cs = convstate + (size_t)h * cw;
    pdl_entry();
    for (int c = tid; c < cw; c += DNC_PREP_THREADS) {
        const int gc = dn_channel(c, h, kh, nk, dk, dv);
        Sum acc = 0;
        for (int q = 0; q < K; q++) {
            const int rr = t - (K - 1) + q;
            const float x = rr >= 0 ? proj[(size_t)rr * pw + gc] : cs[(size_t)(K - 1 + rr) * nv * cw + c];
            acc += P::prod(convw[(size_t)gc * K + q], x);
        }
        xs[c] = P::silu((float)acc);
    }
    __syncthreads();
    const size_t r = (size_t)h * n + t;
    const int warp = tid >> 5, lane = tid & 31;
    if (warp < 2) {  // Σx² of q (warp 0) and k (warp 1), engine/cpu l2Normalize
        const float* v = xs + warp * dk;
        Sum ss = 0;
        for (int i = lane; i < dk; i += 32) ss += P::sq(v[i]);
        ss = warp_sum(ss);
        if (lane == 0) inv[warp] = dnc_l2_inv<P>(ss);
    } else if (tid == 64) {
        const float* prow = proj + (size_t)t * pw;
        const float b = prow[ch + vd + h], a = prow[ch + vd + nv + h];
        beta[r] = P::sigmoid(b);
        decay[r] = -P::exp(alog[h]) * dnc_softplus<P>(a + dtbias[h]);
    }
    __syncthreads();
    const float qscale = P::exact ? (float)(1.0 / sqrt((double)dk)) : rsqrtf((float)dk), iq = inv[0], ik = inv[1];
    for (int c = tid; c < dk; c += DNC_PREP_THREADS) {
        qn[r * dk + c] = P::mul(P::mul(xs[c], iq), qscale);
        kn[r * dk + c] = P::mul(xs[dk + c], ik);
    }
    for (int c = tid; c < dv; c += DNC_PREP_THREADS) vv[r * dv + c] = xs[2 * dk + c];
}
NUMERICS_KERNEL(deltanet_chunk_prep, __launch_bounds__(DNC_PREP_THREADS),
                (float* __restrict__ qn, float* __restrict__ kn, float* __restrict__ vv, float* __restrict__ beta,
                 float* __restrict__ decay, const float* __restrict__ proj, const float* __restrict__ convstate,
                 const float* __restrict__ convw, const float* __restrict__ dtbias, const float* __restrict__ alog,
                 int n, int nk, int nv, int dk, int dv, int K),
                (qn, kn, vv, beta, decay, proj, convstate, convw, dtbias, alog, n, nk, nv, dk, dv, K))

// deltanet_chunk_prep_tiled_fast (dnprep16; engine/cuda deltaNetChunked, fast
// only): deltanet_chunk_prep_fast's outputs, rows blocks of up to
// DNC_PT_ROWS rows of one value head at a time: grid (⌈n/rows⌉, nv),
// DNC_PREP_THREADS threads, rows·cw floats of dynamic shared memory. The old
// kernel's block is one row and head: four conv rows loaded per channel and
// two barriers for 384 outputs, 9 600 blocks at 300 rows (34 µs a layer).
// Here a thread takes a channel for all the block's rows: its conv weights
// and the rows + K − 1 inputs of its window are loaded at once (every load
// of the block in flight together), then each row's conv is the old sum in
// the old order. The q and k norms are the old warp sums (lane i of a warp
// adds elements i, i + 32, …, then warp_sum), one warp a (row, q or k); β
// and g the old expressions. So every output is the old kernel's expression
// on the same values: its bits, unless the compiler contracts a sum
// differently. K ≤ DNC_PT_MAXK. Six blocks an SM at least (ptxas: 56
// registers), so that a 300-row call's 608 blocks are one wave.
#define DNC_PT_ROWS 16
#define DNC_PT_MAXK 4
extern "C" __global__ void __launch_bounds__(DNC_PREP_THREADS, 6) deltanet_chunk_prep_tiled_fast(
    float* __restrict__ qn, float* __restrict__ kn, float* __restrict__ vv, float* __restrict__ beta,
    float* __restrict__ decay, const float* __restrict__ proj, const float* __restrict__ convstate,
    const float* __restrict__ convw, const float* __restrict__ dtbias, const float* __restrict__ alog, int n, int nk,
    int nv, int dk, int dv, int K, int rows) {
    extern __shared__ float dnc_pt_xs[];  // [rows][cw]: the conv outputs after SiLU
    __shared__ float inv[DNC_PT_ROWS][2];
    const int t0 = blockIdx.x * rows, h = blockIdx.y, kh = h / (nv / nk), tid = threadIdx.x;
    const int ch = 2 * nk * dk + nv * dv, vd = nv * dv, pw = ch + vd + 2 * nv, cw = 2 * dk + dv;
    const int m = min(rows, n - t0);  // this block's rows
    const float* cs = convstate + (size_t)h * cw;
    pdl_entry();
    for (int c = tid; c < cw; c += DNC_PREP_THREADS) {
        const int gc = dn_channel(c, h, kh, nk, dk, dv);
        float w[DNC_PT_MAXK], x[DNC_PT_ROWS + DNC_PT_MAXK - 1];
#pragma unroll
        for (int q = 0; q < DNC_PT_MAXK; q++) w[q] = q < K ? convw[(size_t)gc * K + q] : 0.f;
        // x[i] is row t0 − (K − 1) + i: the conv window's rows before row 0.
#pragma unroll
        for (int i = 0; i < DNC_PT_ROWS + DNC_PT_MAXK - 1; i++) {
            const int rr = t0 - (K - 1) + i;
            x[i] = 0.f;
            if (i < m + K - 1) x[i] = rr >= 0 ? proj[(size_t)rr * pw + gc] : cs[(size_t)(K - 1 + rr) * nv * cw + c];
        }
#pragma unroll
        for (int i = 0; i < DNC_PT_ROWS; i++) {
            if (i < m) {
                float acc = 0;
#pragma unroll
                for (int q = 0; q < DNC_PT_MAXK; q++)
                    if (q < K) acc += Fast::prod(w[q], x[i + q]);
                dnc_pt_xs[i * cw + c] = Fast::silu(acc);
            }
        }
    }
    __syncthreads();
    const int warp = tid >> 5, lane = tid & 31;
    for (int u = warp; u < 2 * m; u += DNC_PREP_THREADS / 32) {  // Σx² of row u / 2's q (u even) or k
        const float* v = dnc_pt_xs + (u >> 1) * cw + (u & 1) * dk;
        float ss = 0;
        for (int i = lane; i < dk; i += 32) ss += Fast::sq(v[i]);
        ss = warp_sum(ss);
        if (lane == 0) inv[u >> 1][u & 1] = dnc_l2_inv<Fast>(ss);
    }
    if (tid < m) {
        const float* prow = proj + (size_t)(t0 + tid) * pw;
        const float b = prow[ch + vd + h], a = prow[ch + vd + nv + h];
        const size_t r = (size_t)h * n + t0 + tid;
        beta[r] = Fast::sigmoid(b);
        decay[r] = -Fast::exp(alog[h]) * dnc_softplus<Fast>(a + dtbias[h]);
    }
    __syncthreads();
    const float qscale = rsqrtf((float)dk);
    for (int i = 0; i < m; i++) {
        const size_t r = (size_t)h * n + t0 + i;
        const float* xs = dnc_pt_xs + i * cw;
        const float iq = inv[i][0], ik = inv[i][1];
        for (int c = tid; c < dk; c += DNC_PREP_THREADS) {
            qn[r * dk + c] = Fast::mul(Fast::mul(xs[c], iq), qscale);
            kn[r * dk + c] = Fast::mul(xs[dk + c], ik);
        }
        for (int c = tid; c < dv; c += DNC_PREP_THREADS) vv[r * dv + c] = xs[2 * dk + c];
    }
}

// deltanet_chunk_intra: grid (nv, chunks, 2), DNC_INTRA_THREADS threads. For
// head h and chunk c (rows t0 = 64c …, L of them): the cumulative log decay
// (cum [nv][n]), qm [nv][chunks][64][64] = (q_i·k_j) e^{c_i−c_j} for j ≤ i
// and am (same layout) = A[i][j] for j < i, 0 elsewhere in both. Block z
// takes rows 32z … 32z+31; thread (ti, tj) the dot products of rows
// 32z+ti+16r and columns tj+32s.
#define DNC_INTRA_THREADS 512
template <class P>
__device__ __forceinline__ void deltanet_chunk_intra_body(float* __restrict__ qm, float* __restrict__ am,
                                                          float* __restrict__ cum, const float* __restrict__ qn,
                                                          const float* __restrict__ kn,
                                                          const float* __restrict__ beta,
                                                          const float* __restrict__ decay, int n, int dk) {
    typedef typename P::Sum Sum;
    __shared__ float qt[DNC_C / 2][33], kt[DNC_C][33];
    __shared__ float cs[DNC_C], bs[DNC_C];
    const int h = blockIdx.x, c = blockIdx.y, nch = gridDim.y, t0 = c * DNC_C, L = min(DNC_C, n - t0);
    const int i0 = blockIdx.z * (DNC_C / 2);  // this block's first row of the chunk
    const int tid = threadIdx.x, ti = tid >> 5, tj = tid & 31;
    const size_t hr = (size_t)h * n + t0;  // the chunk's first row in the head-major arrays
    pdl_entry();
    // The chunk's decays into shared memory at once, then one thread's sum
    // in row order (a serial walk over global memory cost a load latency a
    // row: most of this kernel's time).
    if (tid < DNC_C) cs[tid] = tid < L ? decay[hr + tid] : 0.f;
    __syncthreads();
    if (tid == 0) {
        float acc = 0.f;
        for (int i = 0; i < DNC_C; i++) {
            if (i < L) acc = __fadd_rn(acc, cs[i]);
            cs[i] = i < L ? acc : 0.f;
        }
    }
    __syncthreads();
    if (tid < DNC_C) {
        bs[tid] = tid < L ? beta[hr + tid] : 0.f;
        if (tid < L && blockIdx.z == 0) cum[hr + tid] = cs[tid];
    }

    // k_i·k_j and q_i·k_j as engine/cpu Dot computes them: exact products
    // summed in double in four partial sums over the index mod 4 (a tail
    // past a multiple of 4 into the first), then (s0 + s1) + (s2 + s3),
    // rounded once: the CPU's bits, not only its rounding rule. Fast: the
    // same partials in float32, each step one fused multiply-add.
    Sum kk[2][2][4], qk[2][2][4];
#pragma unroll
    for (int r = 0; r < 2; r++)
#pragma unroll
        for (int s = 0; s < 2; s++)
#pragma unroll
            for (int p = 0; p < 4; p++) kk[r][s][p] = qk[r][s][p] = 0;
    const int dk4 = dk & ~3;  // the tiles hold a < dk4; the tail is summed after them
    for (int a0 = 0; a0 < dk4; a0 += 32) {
        __syncthreads();
        for (int idx = tid; idx < DNC_C * 32; idx += DNC_INTRA_THREADS) {
            const int i = idx >> 5, aa = idx & 31, a = a0 + aa;
            const bool in = i < L && a < dk4;
            kt[i][aa] = in ? kn[(hr + i) * dk + a] : 0.f;
            if (i < DNC_C / 2) qt[i][aa] = (i0 + i < L && a < dk4) ? qn[(hr + i0 + i) * dk + a] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int aa = 0; aa < 32; aa++) {
            Sum kj[2];
#pragma unroll
            for (int s = 0; s < 2; s++) kj[s] = kt[tj + 32 * s][aa];
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const Sum ki = kt[i0 + ti + 16 * r][aa], qi = qt[ti + 16 * r][aa];
#pragma unroll
                for (int s = 0; s < 2; s++) {
                    kk[r][s][aa & 3] += ki * kj[s];
                    qk[r][s][aa & 3] += qi * kj[s];
                }
            }
        }
    }
    for (int a = dk4; a < dk; a++) {
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int i = i0 + ti + 16 * r;
#pragma unroll
            for (int s = 0; s < 2; s++) {
                const int j = tj + 32 * s;
                if (i < L && j < L) {
                    const Sum kj = kn[(hr + j) * dk + a];
                    kk[r][s][0] += (Sum)kn[(hr + i) * dk + a] * kj;
                    qk[r][s][0] += (Sum)qn[(hr + i) * dk + a] * kj;
                }
            }
        }
    }
    const size_t mc = ((size_t)h * nch + c) * DNC_C * DNC_C;  // the chunk's [64][64] in qm and am
    __syncthreads();  // bs (no barrier in the loops when dk < 4)
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int i = i0 + ti + 16 * r;
#pragma unroll
        for (int s = 0; s < 2; s++) {
            const int j = tj + 32 * s;
            const float dkk = (float)((kk[r][s][0] + kk[r][s][1]) + (kk[r][s][2] + kk[r][s][3]));
            const float dqk = (float)((qk[r][s][0] + qk[r][s][1]) + (qk[r][s][2] + qk[r][s][3]));
            const float e = (j <= i && i < L) ? P::exp(cs[i] - cs[j]) : 0.f;
            am[mc + (size_t)i * DNC_C + j] = (j < i && i < L) ? P::mul(P::mul(bs[i], dkk), e) : 0.f;
            qm[mc + (size_t)i * DNC_C + j] = (j <= i && i < L) ? P::mul(dqk, e) : 0.f;
        }
    }
}
NUMERICS_KERNEL(deltanet_chunk_intra, __launch_bounds__(DNC_INTRA_THREADS, 1),
                (float* __restrict__ qm, float* __restrict__ am, float* __restrict__ cum,
                 const float* __restrict__ qn, const float* __restrict__ kn, const float* __restrict__ beta,
                 const float* __restrict__ decay, int n, int dk),
                (qm, am, cum, qn, kn, beta, decay, n, dk))

// deltanet_chunk_intra_tiled (dnc13, issue 28; fast only, engine/cuda
// deltaNetChunkMode: calls of 128 rows or more by default): deltanet_chunk_intra_fast's outputs (cum, qm,
// am) from register tiles over the lower triangle only. Grid (nv, chunks,
// 3), DNC_IT_THREADS threads; block z takes one 32 × 32 quadrant of the
// chunk's 64 × 64 products: z = 0 rows 0–31 × columns 0–31 (and writes the
// zeros of rows 0–31 × columns 32–63, above the diagonal), z = 1 rows 32–63
// × columns 0–31, z = 2 rows 32–63 × columns 32–63. Warps 0–1 compute q_i·k_j,
// warps 2–3 k_i·k_j; a thread a 4 × 4 tile, rows ti + 8r and columns tj + 8s
// of the quadrant (ti, tj = 0…7): per 4 values of a, 4 float4 loads of its
// rows and 4 of its columns for 64 fused multiply-adds. In a warp the row
// loads take 4 rows (4 distinct 16-byte slots) and the column loads 8, rows
// DNC_IT_P = 68 floats apart so that they start 4 banks apart: one
// wavefront each, 8 a warp per 64 FMAs (the old kernel: 6 per 8). Key
// columns in phases of DNC_IT_A = 64 through 26 KB of static shared memory
// (zero past dk and past L). The chunk's cumulative decay is _fast's
// chain, the same bits (every block computes it; z = 0 writes cum). The
// products sum in another order than _fast's (one float32 chain over a
// instead of four partials): inside Fast's contract
// (docs/MODEL.md "Numerics policy"). Quadrants whose rows are all past L
// write zeros and return. The old grid was (nv, chunks, 2) blocks of 512
// threads computing all 64 × 64 products.
#define DNC_IT_THREADS 128
#define DNC_IT_A 64               // key columns a phase
#define DNC_IT_P (DNC_IT_A + 4)   // shared row pitch (floats)

extern "C" __global__ void __launch_bounds__(DNC_IT_THREADS, 8) deltanet_chunk_intra_tiled(
    float* __restrict__ qm, float* __restrict__ am, float* __restrict__ cum, const float* __restrict__ qn,
    const float* __restrict__ kn, const float* __restrict__ beta, const float* __restrict__ decay, int n, int dk) {
    __shared__ __align__(16) float xi[32][DNC_IT_P];  // q of the quadrant's rows
    __shared__ __align__(16) float ki[32][DNC_IT_P];  // k of its rows
    __shared__ __align__(16) float kj[32][DNC_IT_P];  // k of its columns (off the diagonal)
    __shared__ __align__(16) float cs[DNC_C];
    __shared__ float bs[32];
    const int h = blockIdx.x, c = blockIdx.y, nch = gridDim.y, t0 = c * DNC_C, L = min(DNC_C, n - t0);
    const int z = blockIdx.z, ib = z ? 32 : 0, jb = z == 2 ? 32 : 0;
    const bool diag = ib == jb;
    const int tid = threadIdx.x, warp = tid >> 5;
    const size_t hr = (size_t)h * n + t0;                     // the chunk's first row, head-major
    const size_t mc = ((size_t)h * nch + c) * DNC_C * DNC_C;  // the chunk's [64][64] in qm and am
    pdl_entry();
    if (z == 0)
        for (int e = tid; e < 32 * 32; e += DNC_IT_THREADS) {
            const size_t o = mc + (size_t)(e >> 5) * DNC_C + 32 + (e & 31);
            qm[o] = 0.f, am[o] = 0.f;
        }
    if (ib >= L) {  // every row of the quadrant past the chunk's end
        for (int e = tid; e < 32 * 32; e += DNC_IT_THREADS) {
            const size_t o = mc + (size_t)(ib + (e >> 5)) * DNC_C + jb + (e & 31);
            qm[o] = 0.f, am[o] = 0.f;
        }
        return;
    }
    // c_i = Σ_{m ≤ i} g_m in row order, as _fast sums it (a scan would add
    // in another tree for each i, so that c_L − c_m, which the state pass
    // takes, would not cancel the common part's rounding: 10× the error in
    // the host emulation): the decays loaded at once, then one thread's
    // chain in registers (64 dependent adds; the old kernel's walk went
    // through shared memory a step).
    if (tid < DNC_C) cs[tid] = tid < L ? decay[hr + tid] : 0.f;
    else if (tid < DNC_C + 32) {
        const int i = ib + (tid - DNC_C);
        bs[tid - DNC_C] = i < L ? beta[hr + i] : 0.f;
    }
    __syncthreads();
    if (tid == 0) {
        float g[DNC_C];
#pragma unroll
        for (int i = 0; i < DNC_C; i += 4) {
            const float4 v = *reinterpret_cast<const float4*>(cs + i);
            g[i] = v.x, g[i + 1] = v.y, g[i + 2] = v.z, g[i + 3] = v.w;
        }
        float acc = 0.f;
#pragma unroll
        for (int i = 0; i < DNC_C; i++) g[i] = acc = acc + g[i];  // past L: g = 0, c stays c_{L−1}
#pragma unroll
        for (int i = 0; i < DNC_C; i += 4) *reinterpret_cast<float4*>(cs + i) = make_float4(g[i], g[i + 1], g[i + 2], g[i + 3]);
    }

    const int pr = warp >> 1;  // 0: q·k, 1: k·k
    const int u = tid & 63, ti = u >> 3, tj = u & 7;
    const float* xs = pr ? &ki[0][0] : &xi[0][0];
    const float* ks = diag ? &ki[0][0] : &kj[0][0];
    // 16-byte loads where every row starts 16-byte aligned (dk a multiple of 4: Drama 3's 128).
    const bool vec = (dk & 3) == 0 && ((reinterpret_cast<size_t>(qn) | reinterpret_cast<size_t>(kn)) & 15) == 0;
    float acc[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int s = 0; s < 4; s++) acc[r][s] = 0.f;
    for (int a0 = 0; a0 < dk; a0 += DNC_IT_A) {
        __syncthreads();  // the previous phase's reads are done (the first: cs, bs written)
        if (vec) {
#pragma unroll
            for (int e = tid; e < 32 * DNC_IT_A / 4; e += DNC_IT_THREADS) {
                const int r = e / (DNC_IT_A / 4), a = 4 * (e % (DNC_IT_A / 4)), ga = a0 + a;
                const bool oki = ib + r < L && ga < dk, okj = jb + r < L && ga < dk;
                const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
                const float4 q4 = oki ? *reinterpret_cast<const float4*>(qn + (hr + ib + r) * dk + ga) : zero;
                const float4 k4 = oki ? *reinterpret_cast<const float4*>(kn + (hr + ib + r) * dk + ga) : zero;
                *reinterpret_cast<float4*>(&xi[r][a]) = q4;
                *reinterpret_cast<float4*>(&ki[r][a]) = k4;
                if (!diag) *reinterpret_cast<float4*>(&kj[r][a]) = okj ? *reinterpret_cast<const float4*>(kn + (hr + jb + r) * dk + ga) : zero;
            }
        } else {
#pragma unroll 4
            for (int e = tid; e < 32 * DNC_IT_A; e += DNC_IT_THREADS) {
                const int r = e / DNC_IT_A, a = e % DNC_IT_A, ga = a0 + a;
                const bool oki = ib + r < L && ga < dk, okj = jb + r < L && ga < dk;
                xi[r][a] = oki ? qn[(hr + ib + r) * dk + ga] : 0.f;
                ki[r][a] = oki ? kn[(hr + ib + r) * dk + ga] : 0.f;
                if (!diag) kj[r][a] = okj ? kn[(hr + jb + r) * dk + ga] : 0.f;
            }
        }
        __syncthreads();
        const int na = min(DNC_IT_A, (dk - a0 + 3) & ~3);  // columns past dk are zero
        for (int a = 0; a < na; a += 4) {
            float4 x[4], y[4];
#pragma unroll
            for (int r = 0; r < 4; r++) x[r] = *reinterpret_cast<const float4*>(xs + (ti + 8 * r) * DNC_IT_P + a);
#pragma unroll
            for (int s = 0; s < 4; s++) y[s] = *reinterpret_cast<const float4*>(ks + (tj + 8 * s) * DNC_IT_P + a);
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int s = 0; s < 4; s++) {
                    acc[r][s] = fmaf(x[r].x, y[s].x, acc[r][s]);
                    acc[r][s] = fmaf(x[r].y, y[s].y, acc[r][s]);
                    acc[r][s] = fmaf(x[r].z, y[s].z, acc[r][s]);
                    acc[r][s] = fmaf(x[r].w, y[s].w, acc[r][s]);
                }
        }
    }
    if (z == 0 && tid < L) cum[hr + tid] = cs[tid];
    float* out = pr ? am : qm;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ib + ti + 8 * r;
#pragma unroll
        for (int s = 0; s < 4; s++) {
            const int j = jb + tj + 8 * s;
            const bool keep = i < L && (pr ? j < i : j <= i);
            const float e = keep ? __expf(cs[i] - cs[j]) : 0.f;
            const float v = pr ? (bs[ti + 8 * r] * acc[r][s]) * e : acc[r][s] * e;
            out[mc + (size_t)i * DNC_C + j] = keep ? v : 0.f;
        }
    }
}

// deltanet_chunk_solve: grid (nv, chunks, ceil((dv+dk)/DNC_SOLVE_THREADS)),
// DNC_SOLVE_THREADS threads. Forward substitution for head h and chunk c,
// one column of [Δ0 | W] per thread (a column's substitution needs only that
// column): x_i = init_i − Σ_{j<i} A[i][j] x_j in order of j, the 64 rows in
// registers, the inits (β_i v_i, or β_i e^{c_i} k_i) loaded 16 rows at a
// time ahead of their use. Writes Δ0 [nv][n][dv] and W [nv][n][dk].
#define DNC_SOLVE_THREADS 128
template <class P>
__device__ __forceinline__ void deltanet_chunk_solve_body(float* __restrict__ w0, float* __restrict__ d0,
                                                          const float* __restrict__ am,
                                                          const float* __restrict__ cum,
                                                          const float* __restrict__ kn,
                                                          const float* __restrict__ vv,
                                                          const float* __restrict__ beta, int n, int dk, int dv) {
    __shared__ float as[DNC_C][DNC_C];  // A[i][j], read by every thread at once
    __shared__ float bs[DNC_C], ecs[DNC_C];
    const int h = blockIdx.x, c = blockIdx.y, nch = gridDim.y, t0 = c * DNC_C, L = min(DNC_C, n - t0);
    const int tid = threadIdx.x;
    const size_t hr = (size_t)h * n + t0;
    pdl_entry();
    const float* amc = am + ((size_t)h * nch + c) * DNC_C * DNC_C;
    for (int idx = tid; idx < DNC_C * DNC_C; idx += DNC_SOLVE_THREADS) as[idx >> 6][idx & 63] = amc[idx];
    if (tid < DNC_C) {
        const float b = tid < L ? beta[hr + tid] : 0.f;
        bs[tid] = b;
        ecs[tid] = tid < L ? P::mul(b, P::exp(cum[hr + tid])) : 0.f;
    }
    __syncthreads();

    const int col = blockIdx.z * DNC_SOLVE_THREADS + tid;
    if (col < dv + dk) {
        const bool isv = col < dv;
        const float* src = isv ? vv + hr * dv + col : kn + hr * dk + (col - dv);
        const int stride = isv ? dv : dk;
        float* dst = isv ? d0 + hr * dv + col : w0 + hr * dk + (col - dv);
        float x[DNC_C];
#pragma unroll
        for (int b = 0; b < DNC_C; b += 16) {
            float init[16];
#pragma unroll
            for (int u = 0; u < 16; u++) init[u] = b + u < L ? src[(size_t)(b + u) * stride] : 0.f;
#pragma unroll
            for (int u = 0; u < 16; u++) {
                const int i = b + u;
                float acc = P::mul(isv ? bs[i] : ecs[i], init[u]);
#pragma unroll
                for (int j = 0; j < i; j++) acc = dnc_madd<P>(acc, -as[i][j], x[j]);
                x[i] = acc;
                if (i < L) dst[(size_t)i * stride] = acc;
            }
        }
    }
}
NUMERICS_KERNEL(deltanet_chunk_solve, __launch_bounds__(DNC_SOLVE_THREADS),
                (float* __restrict__ w0, float* __restrict__ d0, const float* __restrict__ am,
                 const float* __restrict__ cum, const float* __restrict__ kn, const float* __restrict__ vv,
                 const float* __restrict__ beta, int n, int dk, int dv),
                (w0, d0, am, cum, kn, vv, beta, n, dk, dv))

// deltanet_chunk_state: grid (nv, ceil(dv/32)), DNC_STATE_THREADS threads.
// Block (h, y) carries columns j = 32y + lane of head h's state S [dk][dv]
// (in shared memory) through the chunks in order; per chunk: Δ = Δ0 − W·S0,
// the outputs o (core [n][nv][dv], before the gated norm), then the new
// state. Warp w handles rows w, w+16, … of the chunk (and of S in the state
// update); [64][32] tiles of W, q, qm and k pass through shared memory.
#define DNC_STATE_THREADS 512
#define DNC_STATE_WARPS (DNC_STATE_THREADS / 32)
#define DNC_RPW (DNC_C / DNC_STATE_WARPS)  // chunk rows per warp
#define DNC_SPW (32 / DNC_STATE_WARPS)     // state rows per warp in each 32-row slice
template <class P>
__device__ __forceinline__ void deltanet_chunk_state_body(float* __restrict__ core, float* __restrict__ S,
                                                          const float* __restrict__ qm,
                                                          const float* __restrict__ w0,
                                                          const float* __restrict__ d0,
                                                          const float* __restrict__ cum,
                                                          const float* __restrict__ qn,
                                                          const float* __restrict__ kn, int n, int nv, int dk,
                                                          int dv) {
    __shared__ float ss[DNC_MAXDK][32];
    __shared__ float tile[DNC_C][32];
    __shared__ float ds[DNC_C][32];
    __shared__ float cs[DNC_C], eci[DNC_C], em[DNC_C];
    const int h = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5, tid = threadIdx.x;
    const int j = blockIdx.y * 32 + lane;
    const bool col = j < dv;
    const int nch = (n + DNC_C - 1) / DNC_C;
    float* st = S + (size_t)h * dk * dv;
    pdl_entry();
    for (int a = warp; a < dk; a += DNC_STATE_WARPS) ss[a][lane] = col ? st[(size_t)a * dv + j] : 0.f;

    for (int c = 0; c < nch; c++) {
        const int t0 = c * DNC_C, L = min(DNC_C, n - t0);
        const size_t hr = (size_t)h * n + t0;
        __syncthreads();  // the previous chunk is done with cs, tile, ds and ss
        if (tid < DNC_C) cs[tid] = tid < L ? cum[hr + tid] : 0.f;
        __syncthreads();
        const float last = cs[L - 1];
        if (tid < DNC_C) {
            eci[tid] = P::exp(cs[tid]);
            em[tid] = tid < L ? P::exp(last - cs[tid]) : 0.f;
        }
        const float el = P::exp(last);

        // Δ = Δ0 − W·S0, in order of a.
        float acc[DNC_RPW];
#pragma unroll
        for (int r = 0; r < DNC_RPW; r++) {
            const int i = warp + DNC_STATE_WARPS * r;
            acc[r] = (i < L && col) ? d0[(hr + i) * dv + j] : 0.f;
        }
        for (int a0 = 0; a0 < dk; a0 += 32) {
            __syncthreads();
#pragma unroll
            for (int r = 0; r < DNC_RPW; r++) {
                const int i = warp + DNC_STATE_WARPS * r;
                tile[i][lane] = (i < L && a0 + lane < dk) ? w0[(hr + i) * dk + a0 + lane] : 0.f;
            }
            __syncthreads();
            const int na = min(32, dk - a0);
            for (int aa = 0; aa < na; aa++) {
                const float s = ss[a0 + aa][lane];
#pragma unroll
                for (int r = 0; r < DNC_RPW; r++) acc[r] = dnc_madd<P>(acc[r], -tile[warp + DNC_STATE_WARPS * r][aa], s);
            }
        }
#pragma unroll
        for (int r = 0; r < DNC_RPW; r++) ds[warp + DNC_STATE_WARPS * r][lane] = acc[r];

        // o_i = e^{c_i} S0ᵀq_i, then + Σ_{m≤i} qm[i][m] Δ_m in order of m
        // (qm is 0 past i and past L).
#pragma unroll
        for (int r = 0; r < DNC_RPW; r++) acc[r] = 0.f;
        for (int a0 = 0; a0 < dk; a0 += 32) {
            __syncthreads();
#pragma unroll
            for (int r = 0; r < DNC_RPW; r++) {
                const int i = warp + DNC_STATE_WARPS * r;
                tile[i][lane] = (i < L && a0 + lane < dk) ? qn[(hr + i) * dk + a0 + lane] : 0.f;
            }
            __syncthreads();
            const int na = min(32, dk - a0);
            for (int aa = 0; aa < na; aa++) {
                const float s = ss[a0 + aa][lane];
#pragma unroll
                for (int r = 0; r < DNC_RPW; r++) acc[r] = dnc_madd<P>(acc[r], tile[warp + DNC_STATE_WARPS * r][aa], s);
            }
        }
#pragma unroll
        for (int r = 0; r < DNC_RPW; r++) acc[r] = P::mul(acc[r], eci[warp + DNC_STATE_WARPS * r]);
        const float* qmc = qm + ((size_t)h * nch + c) * DNC_C * DNC_C;
        for (int m0 = 0; m0 < L; m0 += 32) {
            __syncthreads();
#pragma unroll
            for (int r = 0; r < DNC_RPW; r++) {
                const int i = warp + DNC_STATE_WARPS * r;
                tile[i][lane] = qmc[(size_t)i * DNC_C + m0 + lane];
            }
            __syncthreads();
            const int nm = min(32, L - m0);
            for (int mm = 0; mm < nm; mm++) {
                const float dm = ds[m0 + mm][lane];
#pragma unroll
                for (int r = 0; r < DNC_RPW; r++) acc[r] = dnc_madd<P>(acc[r], tile[warp + DNC_STATE_WARPS * r][mm], dm);
            }
        }
#pragma unroll
        for (int r = 0; r < DNC_RPW; r++) {
            const int i = warp + DNC_STATE_WARPS * r;
            if (i < L && col) core[((size_t)(t0 + i) * nv + h) * dv + j] = acc[r];
        }

        // S = e^{c_L} S0 + Σ_m (e^{c_L−c_m} k_m) ⊗ Δ_m in order of m; row a
        // of the slice by warp a mod DNC_STATE_WARPS, a warp's rows side by
        // side in registers so that each Δ_m is read once for all of them.
        for (int a0 = 0; a0 < dk; a0 += 32) {
            __syncthreads();
#pragma unroll
            for (int r = 0; r < DNC_RPW; r++) {
                const int m = warp + DNC_STATE_WARPS * r;
                tile[m][lane] = (m < L && a0 + lane < dk) ? P::mul(em[m], kn[(hr + m) * dk + a0 + lane]) : 0.f;
            }
            __syncthreads();
            float s[DNC_SPW];
#pragma unroll
            for (int r = 0; r < DNC_SPW; r++) {
                const int a = a0 + warp + DNC_STATE_WARPS * r;
                s[r] = a < dk ? P::mul(ss[a][lane], el) : 0.f;
            }
            for (int m = 0; m < L; m++) {
                const float dm = ds[m][lane];
#pragma unroll
                for (int r = 0; r < DNC_SPW; r++) s[r] = dnc_madd<P>(s[r], tile[m][warp + DNC_STATE_WARPS * r], dm);
            }
#pragma unroll
            for (int r = 0; r < DNC_SPW; r++) {
                const int a = a0 + warp + DNC_STATE_WARPS * r;
                if (a < dk) ss[a][lane] = s[r];
            }
        }
    }
    __syncthreads();
    if (col)
        for (int a = warp; a < dk; a += DNC_STATE_WARPS) st[(size_t)a * dv + j] = ss[a][lane];
}
// The two instances by hand, not NUMERICS_KERNEL, for their bounds: Fast's
// says one block an SM (the grid has ≤ 128 blocks of 512 threads anyway), or
// ptxas for sm_80…89 caps it at 64 registers and spills its float chains;
// Exact keeps main's bounds, so its SASS is main's.
#define DNC_STATE_PARAMS                                                                                   \
    (float* __restrict__ core, float* __restrict__ S, const float* __restrict__ qm,                        \
     const float* __restrict__ w0, const float* __restrict__ d0, const float* __restrict__ cum,            \
     const float* __restrict__ qn, const float* __restrict__ kn, int n, int nv, int dk, int dv)
#define DNC_STATE_ARGS (core, S, qm, w0, d0, cum, qn, kn, n, nv, dk, dv)
extern "C" __global__ void __launch_bounds__(DNC_STATE_THREADS) deltanet_chunk_state DNC_STATE_PARAMS {
    deltanet_chunk_state_body<Exact> DNC_STATE_ARGS;
}
extern "C" __global__ void __launch_bounds__(DNC_STATE_THREADS, 1) deltanet_chunk_state_fast DNC_STATE_PARAMS {
    deltanet_chunk_state_body<Fast> DNC_STATE_ARGS;
}

// deltanet_chunk_state_tiled (dnstate34; fast only, engine/cuda
// PROSCENIUM_GPU_DN_STATE=tiled): deltanet_chunk_state_fast's arithmetic
// (grid (nv, ceil(dv/32)), DNC_STATE_THREADS threads, block (h, y) carries
// columns j = 32y + lane of head h's state) with a register tile a thread and
// the chunk's inputs in dynamic shared memory, loaded by cp.async ahead of
// their use. The old kernel's inner loops read one shared float per fused
// multiply-add or more (a column of S and up to four broadcast tile values
// for four FMAs) and synchronised twice per 32-wide slice (30 barriers a
// chunk, each behind a global load): shared-memory bound at ≈ 27 µs a chunk.
// Here, per chunk:
//   1. every warp: 8 rows of [W; q] (128 rows: warps 0–7 W, 8–15 q) times
//      S0's 32 columns, a thread 4 rows × 2 columns: per 4 a, 4 float2 loads
//      of S0 and 4 float4 loads of the rows (the two half-warps' rows 4
//      apart, one wavefront: dnc_woff) for 32 FMAs, 8 wavefronts a warp
//      (the old kernel: 40 for the same work). Warps 0–7 then hold
//      Δ = Δ0 − W·S0 (written to ds, and e^{c_L−c_m}Δ_m to dse), warps
//      8–15 e^{c_i} S0ᵀq_i.
//   2. warps 8–15: o_i += Σ_{m ≤ i} qm[i][m] Δ_m, the same tiles (the
//      warp's rows end at io0+7, so m stops there: qm is 0 past i), and
//      write o; at the same time warps 0–7: S = e^{c_L} S0 + Σ_m k_m ⊗
//      (e^{c_L−c_m}Δ_m), 8 rows × 2 columns a thread in registers, per m
//      one float2 load of dse and 2 float4 loads of k_m for 16 FMAs.
// Four barriers a chunk. The chunk's W, q, Δ0 and c arrive by cp.async
// (group A; 16-byte copies where dk is a multiple of 4) while the previous
// chunk's step 2 runs, its qm and k (group B) while step 1 runs. Sums run in
// another order than the old kernel's (Δ0 − Σ W·S0 summed apart,
// e^{c_L−c_m} on Δ rather than on k): inside Fast's contract (docs/MODEL.md
// "Numerics policy"). Shared memory, floats (dkp = dk rounded up to 16;
// rows and columns past dk, L and dv zero-filled):
//   ss [dkp][32] S's columns, wq [128][dkp] W and q (+128 of dnc_woff's
//   gaps), kt [64][dkp] k, qms [64][64] qm (+64), d0s ds dse [64][32], cs [64]
// (engine/cuda deltaNetStateTiledShared: 153.0 KB at dk 128, 209.0 KB at
// 192; beyond sm_86/89's 99 KB, where the SIMT kernel runs).
#define DNC_TS_ROWS 8    // rows of [W; q] a warp in step 1 (4 a half-warp)

// dnc_cp4 copies one float global → shared by cp.async (4 bytes, zero-fill
// when !ok: src is not read then); the host emulation defers it to the
// wait that covers it (docs/perf/dnstate34-emu).
__device__ __forceinline__ void dnc_cp4(float* dst, const float* src, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(s), "l"(src), "r"(ok ? 4 : 0) : "memory");
#elif defined(DNC_EMU_CP4)
    DNC_EMU_CP4(dst, src, ok);
#else
    *dst = ok ? *src : 0.f;
#endif
}
// dnc_cp16: four floats global → shared by cp.async (16 bytes, both
// 16-byte aligned; zero-fill when !ok).
__device__ __forceinline__ void dnc_cp16(float* dst, const float* src, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(src), "r"(ok ? 16 : 0) : "memory");
#else
    for (int u = 0; u < 4; u++) dnc_cp4(dst + u, src + u, ok);
#endif
}
// dnc_woff is row i's offset in a shared tile of rows of w floats (w a
// multiple of 16), rows grouped by 4 with 4 floats between groups: rows i
// and i + 4, which the two half-warps read at once, then start 4 banks
// apart, so a half-warp's 16 bytes and the other's take one wavefront.
__device__ __forceinline__ int dnc_woff(int i, int w) { return i * w + 4 * (i >> 2); }
__device__ __forceinline__ void dnc_cp_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#elif defined(DNC_EMU_COMMIT)
    DNC_EMU_COMMIT();
#endif
}
// dnc_cp_wait<N>: all but the N most recent committed groups landed (this
// thread's copies; a barrier after it makes them every thread's).
template <int N>
__device__ __forceinline__ void dnc_cp_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#elif defined(DNC_EMU_WAIT)
    DNC_EMU_WAIT(N);
#endif
}

// dnc_fma_4x2 adds rows r = 0…3 (a row every ld floats from a) times the
// four float2 in v into acc[r][0…1]: a[r][u]·v[u] for u = 0…3 in order, one
// fused multiply-add each (the tiled state's step 1 and step 2 products).
__device__ __forceinline__ void dnc_fma_4x2(float (&acc)[4][2], const float* a, int ld, const float2 (&v)[4]) {
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const float4 w = *reinterpret_cast<const float4*>(a + r * ld);
        acc[r][0] = fmaf(w.x, v[0].x, acc[r][0]);
        acc[r][1] = fmaf(w.x, v[0].y, acc[r][1]);
        acc[r][0] = fmaf(w.y, v[1].x, acc[r][0]);
        acc[r][1] = fmaf(w.y, v[1].y, acc[r][1]);
        acc[r][0] = fmaf(w.z, v[2].x, acc[r][0]);
        acc[r][1] = fmaf(w.z, v[2].y, acc[r][1]);
        acc[r][0] = fmaf(w.w, v[3].x, acc[r][0]);
        acc[r][1] = fmaf(w.w, v[3].y, acc[r][1]);
    }
}

#ifndef DNC_EMU_SMEM
extern __shared__ __align__(16) float dnc_dyn_smem[];
#define DNC_EMU_SMEM dnc_dyn_smem
#endif

extern "C" __global__ void __launch_bounds__(DNC_STATE_THREADS, 1) deltanet_chunk_state_tiled DNC_STATE_PARAMS {
    const int h = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int j = blockIdx.y * 32 + lane;
    const bool col = j < dv;
    // Steps 1 and 2's outputs: a thread rows 4·half … +3 of its warp's 8 and
    // the columns c2, c2 + 1 (of the block's 32). half is the lane's low bit,
    // so that lanes n and n^1 load the same S0 (or Δ) pair and lanes n and
    // n^2 the same rows: shared memory returns 128 bytes a clock to the
    // registers, and a load whose addresses pair up so returns at twice that
    // (a float2 of S0 in one clock, a float4 of rows in two).
    const int half = lane & 1, c2 = 2 * (lane >> 1), j2 = blockIdx.y * 32 + c2;
    const int nch = (n + DNC_C - 1) / DNC_C, dkp = (dk + 15) & ~15;
    // 16-byte copies where every row starts 16-byte aligned (dk a multiple of 4: Drama 3's 128).
    const bool vec = (dk & 3) == 0 && ((reinterpret_cast<size_t>(w0) | reinterpret_cast<size_t>(qn) |
                                        reinterpret_cast<size_t>(kn) | reinterpret_cast<size_t>(qm)) & 15) == 0;
    float* ss = DNC_EMU_SMEM;
    float* wq = ss + dkp * 32;                  // row i at dnc_woff(i, dkp)
    float* kt = wq + 128 * dkp + 128;           // row m at m·dkp
    float* qms = kt + 64 * dkp;                 // row i at dnc_woff(i, 64)
    float* d0s = qms + DNC_C * DNC_C + DNC_C;   // [64][32]
    float* ds = d0s + DNC_C * 32;
    float* dse = ds + DNC_C * 32;
    float* cs = dse + DNC_C * 32;
    float* st = S + (size_t)h * dk * dv;
    pdl_entry();
    for (int a = warp; a < dkp; a += DNC_STATE_WARPS) ss[a * 32 + lane] = (col && a < dk) ? st[(size_t)a * dv + j] : 0.f;

    // rows_to_shared copies rows [0, 64) of src (row stride dk, rows < L,
    // columns < dk; zeros elsewhere up to dkp) to dst row r at off(r).
    auto rows_to_shared = [&](float* dst, const float* src, int L, int rowoff, auto off) {
        if (vec) {
            for (int r = warp; r < DNC_C; r += DNC_STATE_WARPS)
                for (int a = 4 * lane; a < dkp; a += 128) {
                    const bool ok = r < L && a < dk;
                    dnc_cp16(dst + off(rowoff + r) + a, ok ? src + (size_t)r * dk + a : src, ok);
                }
        } else {
            for (int r = warp; r < DNC_C; r += DNC_STATE_WARPS)
                for (int a = lane; a < dkp; a += 32) {
                    const bool ok = r < L && a < dk;
                    dnc_cp4(dst + off(rowoff + r) + a, ok ? src + (size_t)r * dk + a : src, ok);
                }
        }
    };
    auto woff = [dkp](int i) { return dnc_woff(i, dkp); };
    auto koff = [dkp](int m) { return m * dkp; };
    // Group A of chunk c: W and q (wq rows 0–63 and 64–127), Δ0's columns, c.
    auto issue_a = [&](int c) {
        if (c < nch) {
            const int t0 = c * DNC_C, L = min(DNC_C, n - t0);
            const size_t hr = (size_t)h * n + t0;
            rows_to_shared(wq, w0 + hr * dk, L, 0, woff);
            rows_to_shared(wq, qn + hr * dk, L, DNC_C, woff);
            for (int i = warp; i < DNC_C; i += DNC_STATE_WARPS) {
                const bool ok = i < L && col;
                dnc_cp4(d0s + i * 32 + lane, ok ? d0 + (hr + i) * dv + j : d0, ok);
            }
            if (threadIdx.x < DNC_C) dnc_cp4(cs + threadIdx.x, cum + hr + min((int)threadIdx.x, L - 1), (int)threadIdx.x < L);
        }
        dnc_cp_commit();  // an empty group past the last chunk keeps the waits' counts
    };
    issue_a(0);
    for (int c = 0; c < nch; c++) {
        const int t0 = c * DNC_C, L = min(DNC_C, n - t0);
        const size_t hr = (size_t)h * n + t0;
        {  // Group B of chunk c: qm (intra writes all 64 × 64, 0 past i and past L) and k.
            const float* qmc = qm + ((size_t)h * nch + c) * DNC_C * DNC_C;
            if (vec) {
                for (int e = threadIdx.x; e < DNC_C * DNC_C / 4; e += DNC_STATE_THREADS)
                    dnc_cp16(qms + dnc_woff(e >> 4, DNC_C) + 4 * (e & 15), qmc + 4 * e, true);
            } else {
                for (int e = threadIdx.x; e < DNC_C * DNC_C; e += DNC_STATE_THREADS)
                    dnc_cp4(qms + dnc_woff(e >> 6, DNC_C) + (e & 63), qmc + e, true);
            }
            rows_to_shared(kt, kn + hr * dk, L, 0, koff);
            dnc_cp_commit();
        }
        dnc_cp_wait<1>();  // group A of chunk c
        __syncthreads();

        // Step 1: rows i0 … i0+3 of [W; q] times S0's columns c2, c2 + 1.
        const int i0 = warp * DNC_TS_ROWS + 4 * half;
        float acc[4][2];
#pragma unroll
        for (int r = 0; r < 4; r++) acc[r][0] = acc[r][1] = 0.f;
        if ((warp & 7) * DNC_TS_ROWS < L) {  // a warp whose rows are all past L (zeros) skips
            const float* wr = wq + dnc_woff(i0, dkp);  // rows i0 … i0+3 are contiguous (one group of 4)
            for (int a = 0; a < dkp; a += 4) {
                float2 sv[4];
#pragma unroll
                for (int u = 0; u < 4; u++) sv[u] = *reinterpret_cast<const float2*>(ss + (a + u) * 32 + c2);
                dnc_fma_4x2(acc, wr + a, dkp, sv);
            }
        }
        const float last = cs[L - 1], el = __expf(last);
        if (warp < DNC_C / DNC_TS_ROWS) {  // Δ rows: ds and the decayed dse
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int i = i0 + r;
                const float e = i < L ? __expf(last - cs[i]) : 0.f;
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    const float d = d0s[i * 32 + c2 + u] - acc[r][u];
                    ds[i * 32 + c2 + u] = d;
                    dse[i * 32 + c2 + u] = e * d;
                }
            }
        } else {  // q rows: e^{c_i} S0ᵀq_i
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const float e = __expf(cs[i0 - DNC_C + r]);
                acc[r][0] *= e, acc[r][1] *= e;
            }
        }
        __syncthreads();  // ds, dse written; wq, d0s and cs free
        issue_a(c + 1);
        dnc_cp_wait<1>();  // group B of chunk c
        __syncthreads();

        if (warp >= DNC_C / DNC_TS_ROWS) {
            // Step 2, warps 8–15: o_i += Σ_{m ≤ i} qm[i][m] Δ_m (the warp's
            // rows end at io0 + 7: qm is 0 past them).
            const int io0 = warp * DNC_TS_ROWS - DNC_C, io = io0 + 4 * half;
            const int mend = io0 < L ? min(io0 + DNC_TS_ROWS, (L + 3) & ~3) : 0;
            const float* qr = qms + dnc_woff(io, DNC_C);
            for (int m = 0; m < mend; m += 4) {
                float2 dv4[4];
#pragma unroll
                for (int u = 0; u < 4; u++) dv4[u] = *reinterpret_cast<const float2*>(ds + (m + u) * 32 + c2);
                dnc_fma_4x2(acc, qr + m, DNC_C, dv4);
            }
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int i = io + r;
                if (i < L) {
                    float* o = core + ((size_t)(t0 + i) * nv + h) * dv;
                    if (j2 < dv) o[j2] = acc[r][0];
                    if (j2 + 1 < dv) o[j2 + 1] = acc[r][1];
                }
            }
        } else {
            // Step 2, warps 0–7: S = e^{c_L} S0 + Σ_m k_m ⊗ dse_m, a warp 16
            // rows, a thread 8 of them (rows ab + 8·half …) × the columns c2,
            // c2 + 1 in registers: per m one float2 load of dse and 2 float4
            // loads of k_m (the half-warps' 8 floats apart: one wavefront)
            // for 16 FMAs.
            const int mend = (L + 3) & ~3;
            for (int ab = warp * 16 + 8 * half; ab < dkp; ab += (DNC_C / DNC_TS_ROWS) * 16) {
                float s[8][2];
#pragma unroll
                for (int r = 0; r < 8; r++) {
                    const float2 v = *reinterpret_cast<const float2*>(ss + (ab + r) * 32 + c2);
                    s[r][0] = v.x * el, s[r][1] = v.y * el;
                }
                for (int m = 0; m < mend; m++) {
                    const float2 dm = *reinterpret_cast<const float2*>(dse + m * 32 + c2);
                    const float4* kr = reinterpret_cast<const float4*>(kt + m * dkp + ab);
#pragma unroll
                    for (int u = 0; u < 2; u++) {
                        const float4 kv = kr[u];
                        s[4 * u][0] = fmaf(kv.x, dm.x, s[4 * u][0]);
                        s[4 * u][1] = fmaf(kv.x, dm.y, s[4 * u][1]);
                        s[4 * u + 1][0] = fmaf(kv.y, dm.x, s[4 * u + 1][0]);
                        s[4 * u + 1][1] = fmaf(kv.y, dm.y, s[4 * u + 1][1]);
                        s[4 * u + 2][0] = fmaf(kv.z, dm.x, s[4 * u + 2][0]);
                        s[4 * u + 2][1] = fmaf(kv.z, dm.y, s[4 * u + 2][1]);
                        s[4 * u + 3][0] = fmaf(kv.w, dm.x, s[4 * u + 3][0]);
                        s[4 * u + 3][1] = fmaf(kv.w, dm.y, s[4 * u + 3][1]);
                    }
                }
#pragma unroll
                for (int r = 0; r < 8; r++)
                    if (ab + r < dk) *reinterpret_cast<float2*>(ss + (ab + r) * 32 + c2) = make_float2(s[r][0], s[r][1]);
            }
        }
        __syncthreads();  // ss is the new state; qms, kt, ds and dse free
    }
    dnc_cp_wait<0>();
    if (col)
        for (int a = warp; a < dk; a += DNC_STATE_WARPS) st[(size_t)a * dv + j] = ss[a * 32 + lane];
}

// deltanet_chunk_norm: grid (n, nv), DNC_NORM_THREADS threads. core row t,
// head h holds o on entry and w·o/rms(o)·silu(z) on return; the blocks of
// row 0 then advance their head's conv window by the call's n rows (every
// read of the old window, in deltanet_chunk_prep, is done).
#define DNC_NORM_THREADS 128
template <class P>
__device__ __forceinline__ void deltanet_chunk_norm_body(float* __restrict__ core, const float* __restrict__ proj,
                                                         float* __restrict__ convstate,
                                                         const float* __restrict__ normw, int n, int nk, int nv,
                                                         int dk, int dv, int K, float eps) {
    typedef typename P::Sum Sum;
    __shared__ Sum redd[DNC_NORM_THREADS / 32];
    const int t = blockIdx.x, h = blockIdx.y, kh = h / (nv / nk), tid = threadIdx.x;
    const int ch = 2 * nk * dk + nv * dv, pw = ch + nv * dv + 2 * nv, cw = 2 * dk + dv;
    pdl_entry();
    float* oh = core + ((size_t)t * nv + h) * dv;
    const float* z = proj + (size_t)t * pw + ch + h * dv;
    Sum sq = 0;
    for (int j = tid; j < dv; j += DNC_NORM_THREADS) sq += P::sq(oh[j]);
    sq = warp_sum(sq);
    if ((tid & 31) == 0) redd[tid >> 5] = sq;
    __syncthreads();
    Sum tot = 0;
#pragma unroll
    for (int w = 0; w < DNC_NORM_THREADS / 32; w++) tot += redd[w];
    const float inv = P::inv_rms(tot, dv, eps);
    for (int j = tid; j < dv; j += DNC_NORM_THREADS) oh[j] = P::mul(P::mul(P::mul(oh[j], inv), normw[j]), P::silu(z[j]));
    if (t == 0) dn_conv_advance(convstate + (size_t)h * cw, proj, n, h, kh, nk, nv, dk, dv, K, pw, tid, DNC_NORM_THREADS);
}
NUMERICS_KERNEL(deltanet_chunk_norm, __launch_bounds__(DNC_NORM_THREADS),
                (float* __restrict__ core, const float* __restrict__ proj, float* __restrict__ convstate,
                 const float* __restrict__ normw, int n, int nk, int nv, int dk, int dv, int K, float eps),
                (core, proj, convstate, normw, n, nk, nv, dk, dv, K, eps))
// deltanet_chunk_norm_xp_fast (xp15; engine/cuda deltaNetChunked):
// deltanet_chunk_norm_fast, then head h's dv columns of core row t as the
// three BF16 parts of the out projection's X (bf16_parts.cuh xparts_piece:
// part p of row t at xp + p·pstride + t·kpad; the last head's block also
// the zero pads from nv·dv to kpad), which the GEMM takes instead of a
// gemm_xp_prep launch. dv a multiple of 8 (a piece within one head).
extern "C" __global__ void __launch_bounds__(DNC_NORM_THREADS)
    deltanet_chunk_norm_xp_fast(float* __restrict__ core, const float* __restrict__ proj, float* __restrict__ convstate,
                                const float* __restrict__ normw, int n, int nk, int nv, int dk, int dv, int K, float eps,
                                uint16_t* __restrict__ xp, long long pstride, int kpad) {
    deltanet_chunk_norm_body<Fast>(core, proj, convstate, normw, n, nk, nv, dk, dv, K, eps);
    __syncthreads();  // the head's normed values are the block's to read
    const int t = blockIdx.x, h = blockIdx.y, cols = nv * dv;
    const int c1 = h + 1 == nv ? kpad : (h + 1) * dv;
    for (int c = h * dv + 8 * (int)threadIdx.x; c < c1; c += 8 * DNC_NORM_THREADS)
        xparts_piece(xp, core + (size_t)t * cols, t, c, cols, kpad, pstride);
}
