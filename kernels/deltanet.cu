// Gated DeltaNet mixer after its input projections (engine/cpu deltaNetForward
// between the projections and out_proj): causal depthwise conv with its
// state, SiLU, q/k L2 norms, the gates, the delta rule on the fp32 state and
// the gated RMSNorm, for n rows in one launch.
#include "cluster.cuh"
#include "deltanet.cuh"
#include "fused.cuh"

// One block per value head h, DN_THREADS threads, the rows of the layer in
// order (the recurrence: engine/cpu gatedDeltaRuleRecurrent's bits, which a
// one-row call has on the CPU; the CPU's calls of more rows take the chunked
// form, within 1e-5 of this). The head's state S [dk, dv] stays in registers
// for all rows: warps are laid out CW = ceil(dv/32) across the columns
// (thread column j = lane + 32·(warp mod CW)) by G = 16/CW groups down the
// rows (group γ holds rows γ, γ+G, …, at most DN_MAXR). Sums over the rows
// (Sᵀk, Sᵀq) are double partials that meet in shared memory and are rounded
// once.
//
// Per row t: the conv of the head's 2·dk + dv channels (q and k of its key
// head, its own v) over the previous K−1 inputs (the conv state, then earlier
// rows) and SiLU; the L2 norms of q and k (eps inside the sum, q also ·dk^-½);
// β = sigmoid(b), g = −exp(A_log)·softplus(a + dt_bias) (linear above 20);
// then S ← e^g·S, u = Sᵀk, S ← S + k ⊗ β(v − u), o = Sᵀq; and
// out = w·o/rms(o)·silu(z). Transcendentals of the scalars use double like
// the reference (which rounds float64 results to float32).
//
// The conv state is kept per value head ([K−1][nv][2·dk+dv]: the key head's
// q and k inputs copied for each of its value heads), so each block reads and
// writes only its own state and one launch can both read the old state and
// leave the new one.
#define DN_THREADS 512
#define DN_WARPS (DN_THREADS / 32)
#define DN_MAXR 32
#define DN_MAXCH 1536  // 2·dk + dv: dk ≤ 512, dv ≤ 512 (engine/cuda DeltaNetGeometry.Validate)

// block_sum2 sums a and b over the block (red: 64 T of shared memory).
template <class T>
__device__ __forceinline__ void block_sum2(T& a, T& b, T* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    a = warp_sum(a);
    b = warp_sum(b);
    __syncthreads();
    if (lane == 0) {
        red[warp] = a;
        red[32 + warp] = b;
    }
    __syncthreads();
    const int nw = blockDim.x >> 5;
    a = warp_sum(lane < nw ? red[lane] : T(0));
    b = warp_sum(lane < nw ? red[32 + lane] : T(0));
}

// dn_norm_qk L2-normalises the head's q and k in xs (q also ·dk^-½, the
// CPU's two float multiplies) once every thread has written them; xs holds
// the normed vectors for every thread on return. P: the numerics policy
// (Exact: dn_l2_inv of the float64 sums; Fast: float32 sums, rsqrtf).
template <class P = Exact>
__device__ __forceinline__ void dn_norm_qk(float* xs, int dk, typename P::Sum* red) {
    const int tid = threadIdx.x, nt = blockDim.x;
    __syncthreads();  // the conv's writes of xs
    typename P::Sum sq = 0, sk = 0;
    for (int c = tid; c < dk; c += nt) {
        sq += P::sq(xs[c]);
        sk += P::sq(xs[dk + c]);
    }
    block_sum2(sq, sk, red);  // its first barrier also ends every read of xs above
    const float invq = P::exact ? dn_l2_inv(sq) : rsqrtf((float)sq + 1e-6f);
    const float invk = P::exact ? dn_l2_inv(sk) : rsqrtf((float)sk + 1e-6f);
    const float qscale = (float)(1.0 / sqrt((double)dk));
    for (int c = tid; c < dk; c += nt) {
        xs[c] = P::mul(P::mul(xs[c], invq), qscale);
        xs[dk + c] = P::mul(xs[dk + c], invk);
    }
    __syncthreads();
}

// core: [n, nv·dv] out. proj: [n, pw] rows of (qkv | z | b | a), pw = ch +
// nv·dv + 2·nv. convstate and S: the layer's state. convw: [ch, K].
extern "C" __global__ void __launch_bounds__(DN_THREADS, 1)
    deltanet_rows(float* __restrict__ core, const float* __restrict__ proj, float* __restrict__ convstate,
                  float* __restrict__ S, const float* __restrict__ convw, const float* __restrict__ dtbias,
                  const float* __restrict__ alog, const float* __restrict__ normw, int n, int nk, int nv, int dk,
                  int dv, int K, float eps) {
    __shared__ float xs[DN_MAXCH];           // this row's q, k, v after conv and SiLU (q, k then normed)
    __shared__ double red_u[DN_THREADS];     // [G][dv] partial Sᵀk
    __shared__ double red_o[DN_THREADS];     // [G][dv] partial Sᵀq
    __shared__ double red[64];
    __shared__ double redd[DN_WARPS];
    __shared__ float gate[2];                // β, e^g

    const int h = blockIdx.x, kh = h / (nv / nk);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ch = 2 * nk * dk + nv * dv, vd = nv * dv, pw = ch + vd + 2 * nv;
    const int cw = 2 * dk + dv;  // this head's channels
    const int CW = (dv + 31) / 32, G = DN_WARPS / CW;
    const int grp = warp / CW, j = (warp % CW) * 32 + lane;
    const bool col = grp < G && j < dv;  // holds a state column
    float* st = S + (size_t)h * dk * dv;
    float* cs = convstate + (size_t)h * cw;  // row r of the conv state at cs + r·nv·cw

    pdl_entry();
    float s[DN_MAXR];
#pragma unroll
    for (int r = 0; r < DN_MAXR; r++) {
        const int i = grp + G * r;
        s[r] = (col && i < dk) ? st[(size_t)i * dv + j] : 0.f;
    }
    const float ealog = (float)exp((double)alog[h]), dtb = dtbias[h];

    for (int t = 0; t < n; t++) {
        const float* prow = proj + (size_t)t * pw;
        const float z = (col && grp == 0) ? prow[ch + h * dv + j] : 0.f;  // loaded early: the norm's gate
        // Conv and SiLU of the head's channels.
        for (int c = tid; c < cw; c += DN_THREADS) {
            const int gc = dn_channel(c, h, kh, nk, dk, dv);
            double acc = 0.0;
            for (int q = 0; q < K; q++) {
                const int rr = t - (K - 1) + q;
                const float x = rr >= 0 ? proj[(size_t)rr * pw + gc] : cs[(size_t)(K - 1 + rr) * nv * cw + c];
                acc += (double)convw[(size_t)gc * K + q] * (double)x;
            }
            xs[c] = silu_ref((float)acc);
        }
        if (tid == 0) {
            const float b = prow[ch + vd + h], a = prow[ch + vd + nv + h];
            gate[0] = sigmoid_ref(b);
            gate[1] = (float)exp((double)(-ealog * softplus_f(a + dtb)));
        }
        dn_norm_qk(xs, dk, red);
        const float beta = gate[0], eg = gate[1];

        // The delta rule on this thread's column: S ← e^g·S, u = Sᵀk,
        // δ = β(v − u), S ← S + k ⊗ δ, o = Sᵀq.
        double pu = 0.0;
#pragma unroll
        for (int r = 0; r < DN_MAXR; r++) {
            const int i = grp + G * r;
            if (col && i < dk) {
                s[r] = __fmul_rn(s[r], eg);
                pu += (double)s[r] * (double)xs[dk + i];
            }
        }
        if (col) red_u[grp * dv + j] = pu;
        __syncthreads();
        double po = 0.0;
        if (col) {
            double u = 0.0;
            for (int g2 = 0; g2 < G; g2++) u += red_u[g2 * dv + j];
            const float delta = __fmul_rn(beta, __fsub_rn(xs[2 * dk + j], (float)u));
#pragma unroll
            for (int r = 0; r < DN_MAXR; r++) {
                const int i = grp + G * r;
                if (i < dk) {
                    s[r] = __fadd_rn(s[r], __fmul_rn(xs[dk + i], delta));
                    po += (double)s[r] * (double)xs[i];
                }
            }
            red_o[grp * dv + j] = po;
        }
        __syncthreads();
        // Gated RMSNorm over the head's dv outputs (group 0 holds them).
        float o = 0.f;
        if (col && grp == 0) {
            double acc = 0.0;
            for (int g2 = 0; g2 < G; g2++) acc += red_o[g2 * dv + j];
            o = (float)acc;
        }
        double ss = warp_sum((double)o * (double)o);
        if (lane == 0) redd[warp] = ss;
        __syncthreads();
        if (col && grp == 0) {
            double tot = 0.0;
            for (int w = 0; w < CW; w++) tot += redd[w];
            const float inv = inv_rms_ref(tot, dv, eps);
            core[((size_t)t * nv + h) * dv + j] = __fmul_rn(__fmul_rn(__fmul_rn(o, inv), normw[j]), silu_ref(z));
        }
        // xs is rewritten by the next row's conv only after this row's last
        // read of it (before the red_o barrier); red_u, red_o, red and redd
        // only after a barrier that every thread reaches after its reads.
    }

#pragma unroll
    for (int r = 0; r < DN_MAXR; r++) {
        const int i = grp + G * r;
        if (col && i < dk) st[(size_t)i * dv + j] = s[r];
    }
    __syncthreads();  // every conv read of the old state is done
    dn_conv_advance(cs, proj, n, h, kh, nk, nv, dk, dv, K, pw, tid, DN_THREADS);
}

// ---------------------------------------------------------------------------
// One-row step split by value columns (engine/cuda DeltaNetSplitStep): the
// state update of a column of S needs only that column, so a head's state is
// spread over ceil(dv/32) blocks of 32 columns (32 value heads × 4 blocks at
// Drama 3's geometry instead of 32 blocks), each recomputing the head's conv,
// q/k norms and gates. Two launches: deltanet_step_cols writes each head's
// unnormalised output o; deltanet_step_norm applies the gated RMSNorm (it
// needs the whole head) and advances the conv window, after every block of
// the first has read it. Rows of S: warp w of a block holds rows w, w+4, …
// (dk ≤ 4·DN_MAXR). Both take the numerics policy (numerics.cuh): Exact is
// the contract described above; Fast sums float32 with fused multiply-adds
// (the gates' scalars stay in double: one thread, once a step).
#define DNS_THREADS 128
#define DNS_WARPS (DNS_THREADS / 32)
// deltanet_step_norm's values of o a thread holds: dv ≤ 512
// (engine/cuda DeltaNetGeometry.Validate).
#define DNS_NORM_REGS 4
// The conv's passes over a block's 2·dk + 32 channels (dk ≤ DNS_WARPS·DN_MAXR).
#define DNS_CONV_PASSES ((2 * DNS_WARPS * DN_MAXR + 32 + DNS_THREADS - 1) / DNS_THREADS)

// o: [nv, dv] out (unnormalised). Other arguments as deltanet_rows (n = 1).
template <class P, bool AHEAD = false>
__device__ __forceinline__ void deltanet_step_cols_body(float* __restrict__ o, const float* __restrict__ proj,
                                                        const float* __restrict__ convstate, float* __restrict__ S,
                                                        const float* __restrict__ convw,
                                                        const float* __restrict__ dtbias,
                                                        const float* __restrict__ alog, int nk, int nv, int dk,
                                                        int dv, int K) {
    typedef typename P::Sum Sum;
    __shared__ float xs[2 * 512 + 32];  // q (dk), k (dk), this block's 32 v columns
    __shared__ Sum red_u[DNS_WARPS][32], red_o[DNS_WARPS][32];
    __shared__ Sum red[64];
    __shared__ float gate[2];

    const int h = blockIdx.x, j0 = blockIdx.y * 32, kh = h / (nv / nk);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ch = 2 * nk * dk + nv * dv, vd = nv * dv;
    const int cw = 2 * dk + dv;
    const int j = j0 + lane;
    const bool col = j < dv;
    float* st = S + (size_t)h * dk * dv;

    // AHEAD: the state before the wait (see deltanet_step_cols_slots_ahead_fast).
    if (AHEAD)
        pdl_launch_dependents();
    else
        pdl_entry();
    float s[DN_MAXR];
#pragma unroll
    for (int r = 0; r < DN_MAXR; r++) {
        const int i = warp + DNS_WARPS * r;
        s[r] = (col && i < dk) ? st[(size_t)i * dv + j] : 0.f;
    }
    if (AHEAD) pdl_wait();
    // The gates' inputs, loaded by the gate thread (the block's last, which
    // has the fewest conv channels) before the conv.
    float gb = 0.f, ga = 0.f, galog = 0.f, gdt = 0.f;
    if (tid == DNS_THREADS - 1) {
        gb = proj[ch + vd + h], ga = proj[ch + vd + nv + h], galog = alog[h], gdt = dtbias[h];
    }
    // Conv and SiLU: local channel c < 2·dk is q or k, then v column j0 + c −
    // 2·dk. A fixed count of passes, unrolled, so that every pass's loads are
    // in flight together.
#pragma unroll
    for (int it = 0; it < DNS_CONV_PASSES; it++) {
        const int c = tid + it * DNS_THREADS;
        if (c >= 2 * dk + 32) break;
        const int lc = c < 2 * dk ? c : 2 * dk + j0 + (c - 2 * dk);  // channel within the head's window
        if (lc >= cw) continue;
        const int gc = dn_channel(lc, h, kh, nk, dk, dv);
        // The window's K inputs and weights loaded together, then summed in
        // order (K ≤ DN_MAXK).
        float xw[DN_MAXK], ww[DN_MAXK];
#pragma unroll
        for (int q = 0; q < DN_MAXK; q++) {
            xw[q] = q < K - 1 ? convstate[((size_t)q * nv + h) * cw + lc] : q == K - 1 ? proj[gc] : 0.f;
            ww[q] = q < K ? convw[(size_t)gc * K + q] : 0.f;
        }
        Sum acc = 0;
#pragma unroll
        for (int q = 0; q < DN_MAXK; q++)
            if (q < K) acc += P::prod(ww[q], xw[q]);
        xs[c] = P::silu((float)acc);
    }
    if (tid == DNS_THREADS - 1) {
        gate[0] = P::sigmoid(gb);
        gate[1] = P::exp(P::mul(-P::exp(galog), softplus_f(P::add(ga, gdt))));
    }
    dn_norm_qk<P>(xs, dk, red);
    const float beta = gate[0], eg = gate[1];

    Sum pu = 0;
#pragma unroll
    for (int r = 0; r < DN_MAXR; r++) {
        const int i = warp + DNS_WARPS * r;
        if (col && i < dk) {
            s[r] = P::mul(s[r], eg);
            pu += P::prod(s[r], xs[dk + i]);
        }
    }
    red_u[warp][lane] = pu;
    __syncthreads();
    Sum u = 0;
#pragma unroll
    for (int w = 0; w < DNS_WARPS; w++) u += red_u[w][lane];
    const float delta = col ? P::mul(beta, P::sub(xs[2 * dk + lane], (float)u)) : 0.f;
    Sum po = 0;
#pragma unroll
    for (int r = 0; r < DN_MAXR; r++) {
        const int i = warp + DNS_WARPS * r;
        if (col && i < dk) {
            s[r] = P::add(s[r], P::mul(xs[dk + i], delta));
            po += P::prod(s[r], xs[i]);
        }
    }
    red_o[warp][lane] = po;
    __syncthreads();
    if (warp == 0 && col) {
        Sum acc = 0;
#pragma unroll
        for (int w = 0; w < DNS_WARPS; w++) acc += red_o[w][lane];
        o[(size_t)h * dv + j] = (float)acc;
    }
#pragma unroll
    for (int r = 0; r < DN_MAXR; r++) {
        const int i = warp + DNS_WARPS * r;
        if (col && i < dk) st[(size_t)i * dv + j] = s[r];
    }
}
#define DNS_BOUNDS __launch_bounds__(DNS_THREADS)
NUMERICS_KERNEL(deltanet_step_cols, DNS_BOUNDS,
                (float* __restrict__ o, const float* __restrict__ proj, const float* __restrict__ convstate,
                 float* __restrict__ S, const float* __restrict__ convw, const float* __restrict__ dtbias,
                 const float* __restrict__ alog, int nk, int nv, int dk, int dv, int K),
                (o, proj, convstate, S, convw, dtbias, alog, nk, nv, dk, dv, K))

// deltanet_step_norm: grid (nv), DNS_THREADS threads. core [nv, dv] holds o
// on entry and w·o/rms(o)·silu(z) on return; the head's conv window moves
// on by the step's pre-conv inputs.
// deltanet_step_norm_head is head h's part (LD reads o, fused.cuh).
template <class P, class LD>
__device__ __forceinline__ void deltanet_step_norm_head(int h, float* __restrict__ core,
                                                        const float* __restrict__ proj,
                                                        float* __restrict__ convstate,
                                                        const float* __restrict__ normw, int nk, int nv, int dk,
                                                        int dv, int K, float eps) {
    __shared__ typename P::Sum redd[DNS_WARPS];
    const int kh = h / (nv / nk), tid = threadIdx.x;
    const int ch = 2 * nk * dk + nv * dv, cw = 2 * dk + dv;
    float* oh = core + (size_t)h * dv;
    // The head's o, gains and gate inputs in registers (dv ≤ DNS_THREADS·
    // DNS_NORM_REGS), loaded with the conv window's rows below, so the
    // kernel waits for memory once before its sum instead of once per loop.
    float ov[DNS_NORM_REGS], nwv[DNS_NORM_REGS], zv[DNS_NORM_REGS];
#pragma unroll
    for (int i = 0; i < DNS_NORM_REGS; i++) {
        const int j = tid + i * DNS_THREADS;
        ov[i] = j < dv ? LD::ld(oh + j) : 0.f;
        nwv[i] = j < dv ? normw[j] : 0.f;
        zv[i] = j < dv ? proj[ch + h * dv + j] : 0.f;
    }
    for (int c = tid; c < cw; c += DNS_THREADS) {
        const int gc = dn_channel(c, h, kh, nk, dk, dv);
        // Rows 1 … K−2 and the step's input read together, then written one
        // row up (K ≤ DN_MAXK).
        float win[DN_MAXK];
#pragma unroll
        for (int q = 0; q < DN_MAXK; q++)
            win[q] = q + 1 < K - 1 ? convstate[((size_t)(q + 1) * nv + h) * cw + c] : q + 1 == K - 1 ? proj[gc] : 0.f;
#pragma unroll
        for (int q = 0; q < DN_MAXK; q++)
            if (q < K - 1) convstate[((size_t)q * nv + h) * cw + c] = win[q];
    }
    typename P::Sum ss = 0;
#pragma unroll
    for (int i = 0; i < DNS_NORM_REGS; i++)
        if (tid + i * DNS_THREADS < dv) ss += P::sq(ov[i]);
    ss = warp_sum(ss);
    if ((tid & 31) == 0) redd[tid >> 5] = ss;
    __syncthreads();
    typename P::Sum tot = 0;
#pragma unroll
    for (int w = 0; w < DNS_WARPS; w++) tot += redd[w];
    const float inv = P::inv_rms(tot, dv, eps);
#pragma unroll
    for (int i = 0; i < DNS_NORM_REGS; i++) {
        const int j = tid + i * DNS_THREADS;
        if (j < dv) oh[j] = P::mul(P::mul(P::mul(ov[i], inv), nwv[i]), P::silu(zv[i]));
    }
}
template <class P>
__device__ __forceinline__ void deltanet_step_norm_body(float* __restrict__ core, const float* __restrict__ proj,
                                                        float* __restrict__ convstate,
                                                        const float* __restrict__ normw, int nk, int nv, int dk,
                                                        int dv, int K, float eps) {
    const int h = blockIdx.x;
    pdl_entry();
    deltanet_step_norm_head<P, LoadPlain>(h, core, proj, convstate, normw, nk, nv, dk, dv, K, eps);
}
NUMERICS_KERNEL(deltanet_step_norm, DNS_BOUNDS,
                (float* __restrict__ core, const float* __restrict__ proj, float* __restrict__ convstate,
                 const float* __restrict__ normw, int nk, int nv, int dk, int dv, int K, float eps),
                (core, proj, convstate, normw, nk, nv, dk, dv, K, eps))

// The fused step's DeltaNet step (Fast only: engine/cuda Backbone.Fused):
// deltanet_step_cols_fast, then in the last of each head's blocks
// (fused.cuh, counters[h] over the head's gridDim.y blocks)
// deltanet_step_norm_fast's part for that head: every block that reads the
// head's conv window has counted in before the tail moves it on. Grid (nv,
// ⌈dv/32⌉), DNS_THREADS threads (the norm's own block: its sums in the
// unfused kernel's order).
extern "C" __global__ void DNS_BOUNDS deltanet_step_fused_fast(
    float* __restrict__ core, const float* __restrict__ proj, float* __restrict__ convstate, float* __restrict__ S,
    const float* __restrict__ convw, const float* __restrict__ dtbias, const float* __restrict__ alog,
    const float* __restrict__ normw, int nk, int nv, int dk, int dv, int K, float eps, unsigned int* counters) {
    deltanet_step_cols_body<Fast>(core, proj, convstate, S, convw, dtbias, alog, nk, nv, dk, dv, K);
    if (!last_of(counters + blockIdx.x, gridDim.y)) return;
    deltanet_step_norm_head<Fast, LoadL2>(blockIdx.x, core, proj, convstate, normw, nk, nv, dk, dv, K, eps);
}

// ---------------------------------------------------------------------------
// The split step of B rows of B takes in one launch each (engine/cuda
// Backbone.StepRows): grid (nv, ⌈dv/32⌉, B) and (nv, 1, B). Row b
// (blockIdx.z) belongs to the take in slot slots[b], whose conv and recurrent
// state lie slots[b]·slot_stride floats after convstate and S (each slot a
// copy of the one-take state layout); proj and core hold the B rows one after
// another. Each row runs the one-row bodies above on its own row and slot, so
// a take's values are those it has stepped alone, under either policy.
// slots was copied by the host before the step: it is read before the PDL
// wait.
template <class P, bool AHEAD = false>
__device__ __forceinline__ void deltanet_step_cols_slots_body(
    float* __restrict__ o, const float* __restrict__ proj, const float* __restrict__ convstate, float* __restrict__ S,
    const float* __restrict__ convw, const float* __restrict__ dtbias, const float* __restrict__ alog, int nk, int nv,
    int dk, int dv, int K, const int32_t* __restrict__ slots, long long slot_stride) {
    const int b = blockIdx.z;
    const long long off = (long long)slots[b] * slot_stride;
    const size_t pw = (size_t)2 * nk * dk + 2 * (size_t)nv * dv + 2 * nv;
    deltanet_step_cols_body<P, AHEAD>(o + (size_t)b * nv * dv, proj + b * pw, convstate + off, S + off, convw, dtbias,
                                      alog, nk, nv, dk, dv, K);
}
NUMERICS_KERNEL(deltanet_step_cols_slots, DNS_BOUNDS,
                (float* __restrict__ o, const float* __restrict__ proj, const float* __restrict__ convstate,
                 float* __restrict__ S, const float* __restrict__ convw, const float* __restrict__ dtbias,
                 const float* __restrict__ alog, int nk, int nv, int dk, int dv, int K,
                 const int32_t* __restrict__ slots, long long slot_stride),
                (o, proj, convstate, S, convw, dtbias, alog, nk, nv, dk, dv, K, slots, slot_stride))
// deltanet_step_cols_slots_ahead_fast: deltanet_step_cols_slots_fast with
// each row's recurrent state read before the PDL wait (docs/PERF.md
// "ahead25"), so that it streams while the input projections finish. The
// caller promises that the launch before it is an input projection that
// lets it start only after its own wait (gemv.cuh pdl_entry_waited: every
// GEMV but those loading weights ahead), so that every kernel before that
// one — the layer's previous step, the state's last writer — has finished.
// The same values as deltanet_step_cols_slots_fast.
extern "C" __global__ void DNS_BOUNDS deltanet_step_cols_slots_ahead_fast(
    float* __restrict__ o, const float* __restrict__ proj, const float* __restrict__ convstate, float* __restrict__ S,
    const float* __restrict__ convw, const float* __restrict__ dtbias, const float* __restrict__ alog, int nk, int nv,
    int dk, int dv, int K, const int32_t* __restrict__ slots, long long slot_stride) {
    deltanet_step_cols_slots_body<Fast, true>(o, proj, convstate, S, convw, dtbias, alog, nk, nv, dk, dv, K, slots,
                                              slot_stride);
}

template <class P>
__device__ __forceinline__ void deltanet_step_norm_slots_body(float* __restrict__ core, const float* __restrict__ proj,
                                                              float* __restrict__ convstate,
                                                              const float* __restrict__ normw, int nk, int nv, int dk,
                                                              int dv, int K, float eps,
                                                              const int32_t* __restrict__ slots,
                                                              long long slot_stride) {
    const int b = blockIdx.z;
    const long long off = (long long)slots[b] * slot_stride;
    const size_t pw = (size_t)2 * nk * dk + 2 * (size_t)nv * dv + 2 * nv;
    deltanet_step_norm_body<P>(core + (size_t)b * nv * dv, proj + b * pw, convstate + off, normw, nk, nv, dk, dv, K,
                               eps);
}
NUMERICS_KERNEL(deltanet_step_norm_slots, DNS_BOUNDS,
                (float* __restrict__ core, const float* __restrict__ proj, float* __restrict__ convstate,
                 const float* __restrict__ normw, int nk, int nv, int dk, int dv, int K, float eps,
                 const int32_t* __restrict__ slots, long long slot_stride),
                (core, proj, convstate, normw, nk, nv, dk, dv, K, eps, slots, slot_stride))

// ---------------------------------------------------------------------------
// The one-row step in one launch (Fast only; engine/cuda DeltaNetClusterStep,
// issues 27 and 30). deltanet_step_cols + deltanet_step_norm cost two
// dependent launches a layer and seven barriers, the conv in three serial
// passes of loads, and the norm kernel's own L2 round trips (ncu: 8.3 + 4.8
// µs at B = 1, the state's 4 MB of bytes ≈ 1.2 µs). Here a head's dv value
// columns are spread over a thread block cluster of DNC_CLUSTER blocks (sm_90)
// of at most DNC_COLS columns each (grid (nv, DNC_CLUSTER, B): 256 blocks of
// 128 threads at Drama 3's geometry, 1024 at B = 4), and the head's gated
// RMSNorm needs no second launch: each block pushes its columns' Σo² into
// every block of its cluster (distributed shared memory) and one cluster
// barrier later every block norms its own columns. The barrier also orders
// the conv window's advance after every block of the head has read the old
// window; each block moves 1/DNC_CLUSTER of the head's q/k channels and its
// own v channels, from the shared-memory copies its conv read.
//
// Per block: every load (the state's slice, conv window, input, weights, gate
// inputs, norm gain and gate z) issued at once after the PDL wait, by cp.async
// into shared memory (no register held while they fly; the slice in 16-byte
// pieces); the conv of the key head's q and k channel tid by thread tid (and
// of v column j0 + tid by the column's owner thread, tid < DNC_COLS), SiLU;
// one barrier for q, k, v, Σq², Σk², q·k, the gates and the slice; then,
// from the old state, both Sᵀk and Sᵀq (one reduction, one barrier) and, the
// rule rearranged,
//   u = e^g·(Sᵀk̂),  δ = β(v − u),  o = e^g·(Sᵀq̂) + δ·(k̂·q̂),
//   S ← e^g·S + k̂ ⊗ δ,
// where k̂ = k/‖k‖ and q̂ = q/‖q‖/√dk (the same values as the split step's,
// summed in another order: Fast's "any order"). The new state goes back into
// the slice and out in 16-byte pieces after the cluster barrier (which orders
// the block's writes too). Two block barriers and one cluster barrier (and a
// first cluster phase that is free by the time it is waited on) against the
// split pair's seven and a launch.
//
// Threads: warp w's half-warps are row groups 2w and 2w+1 (8 in all): lane l
// holds column j0 + (l mod 16) of rows (2w + l/16) + 8r, r < DNC_ROWS (read
// from the slice after the first barrier). Bounds: dk ≤ DNC_THREADS (a
// thread per q/k channel) and ≤ 8·DNC_ROWS, dv ≤ DNC_CLUSTER·DNC_COLS,
// K ≤ DNC_MAXK (engine/cuda DeltaNetGeometry.clusterable).
#define DNC_THREADS 128
#define DNC_CLUSTER 8
#define DNC_COLS 16
#define DNC_ROWS 16
#define DNC_MAXK 4
#define DNC_WARPS (DNC_THREADS / 32)
#define DNC_GROUPS (2 * DNC_WARPS)  // row groups: half-warps

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define DNC_ATTRS __cluster_dims__(1, DNC_CLUSTER, 1) __launch_bounds__(DNC_THREADS, 8)
#else
#define DNC_ATTRS __launch_bounds__(DNC_THREADS)
#endif

// The cluster's primitives: kernels/cluster.cuh (barrier.cluster.arrive
// releases — ptxas puts MEMBAR.ALL.GPU before it, so the kernel issues its
// global stores after an arrive — and wait acquires).

// dnc_copy starts a 4-byte copy from global src to shared dst (cp.async:
// the load in flight without a register; dnc_copied waits for the thread's
// own copies, which only it then reads).
__device__ __forceinline__ void dnc_copy(float* dst, const float* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
                 : "memory");
}
__device__ __forceinline__ void dnc_copy16(float* dst, const float* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
                 : "memory");
}
__device__ __forceinline__ void dnc_copied() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// One (head, row) of the step: core [nv, dv] gets the gated-norm output,
// S and convstate (that row's take's) move on. Other arguments as
// deltanet_rows (n = 1). Launched only on sm_90 (engine/cuda checks the
// device), where the cluster exists; the other architectures' instance is
// never launched and traps.
template <bool AHEAD>
__device__ __forceinline__ void deltanet_step_cluster_body(float* __restrict__ core, const float* __restrict__ proj,
                                                           float* __restrict__ convstate, float* __restrict__ S,
                                                           const float* __restrict__ convw,
                                                           const float* __restrict__ dtbias,
                                                           const float* __restrict__ alog,
                                                           const float* __restrict__ normw, int nk, int nv, int dk,
                                                           int dv, int K, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Local channels: q 0 … dk−1, k dk … 2dk−1, this block's v 2dk + c.
    __shared__ float xin[DNC_MAXK][2 * DNC_THREADS + DNC_COLS];  // window rows 0 … K−2, then the input
    __shared__ float wgt[DNC_MAXK][2 * DNC_THREADS + DNC_COLS];  // conv weights
    __shared__ float xs[2 * DNC_THREADS + DNC_COLS];             // q, k (SiLU, not yet normed), v
    __shared__ float colin[2][DNC_COLS];                         // the columns' norm gains and gates z
    __shared__ float gin[4];                                     // b, a, A_log, dt_bias
    __shared__ float red1[DNC_WARPS][4];                         // per warp: Σq², Σk², q·k
    __shared__ float2 red2[DNC_WARPS][DNC_COLS];                 // per warp and column: (Sᵀk, Sᵀq) partials
    __shared__ float ssp[DNC_CLUSTER];                           // Σo² of each block of the head (pushed)
    __shared__ float gate[2];                                    // β, e^g
    __shared__ float4 sS4[DNC_GROUPS * DNC_ROWS][DNC_COLS / 4];  // the block's state slice (16-byte rows)
    float(*sS)[DNC_COLS] = reinterpret_cast<float(*)[DNC_COLS]>(sS4);  // rows × columns

    const int h = blockIdx.x, kh = h / (nv / nk);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int c = lane & 15, grp = 2 * warp + (lane >> 4);
    const int cb = (dv + DNC_CLUSTER - 1) / DNC_CLUSTER;  // columns a block holds
    const int j0 = blockIdx.y * cb, j = j0 + c;
    const bool col = c < cb && j < dv;
    const bool owner = tid < DNC_COLS && col;  // the column's conv, norm and output (tid = c)
    const bool qk = tid < dk;                   // q and k channel tid
    const int ch = 2 * nk * dk + nv * dv, vd = nv * dv, cw = 2 * dk + dv;
    const unsigned rank = cluster_rank();
    // Block rank r moves the window of the q and k channels of threads
    // r·share … (r+1)·share − 1, and its own v channels.
    const int share = (dk + DNC_CLUSTER - 1) / DNC_CLUSTER;
    const bool mine = qk && tid / share == (int)rank;
    float* st = S + (size_t)h * dk * dv;

    // The cluster's first phase: its wait (before the push below) makes sure
    // every block of the head runs, so its shared memory may be written.
    cluster_arrive();
    // AHEAD: what no kernel of the step writes before this one (the state,
    // the conv window, the weights) is copied before the wait; see
    // deltanet_step_cluster_ahead_fast.
    if (AHEAD)
        pdl_launch_dependents();
    else
        pdl_entry();
    // Every load first, all by cp.async into shared memory (no registers
    // held while they fly): the state's slice [dk][cb] whole (16-byte pieces
    // where the head is DNC_CLUSTER·DNC_COLS columns wide and aligned, Drama
    // 3's case), the conv window and weights per channel, the columns'
    // gains, the gates' parameters; then the projected row's inputs, gates'
    // inputs and the columns' gates z. Offsets are 32-bit (a head's state
    // and a window row are far below 2^31 floats).
    const bool vec = dv == DNC_CLUSTER * DNC_COLS && ((size_t)st & 15) == 0;
    if (vec) {
#pragma unroll 4
        for (unsigned e = tid; e < dk * (DNC_COLS / 4); e += DNC_THREADS) {
            const unsigned i = e / (DNC_COLS / 4), c4 = 4 * (e % (DNC_COLS / 4));
            dnc_copy16(&sS[i][c4], st + i * dv + j0 + c4);
        }
    } else {
        for (int e = tid; e < dk * cb; e += DNC_THREADS) {
            const int i = e / cb, cc = e - i * cb;
            if (j0 + cc < dv) dnc_copy(&sS[i][cc], st + i * dv + j0 + cc);
        }
    }
    const int gq = kh * dk + tid, gk = nk * dk + kh * dk + tid, gv = 2 * nk * dk + h * dv + j;
    const int lq = tid, lk = dk + tid, lv = 2 * dk + c;
    const int ws = nv * cw;                       // floats between the window's rows
    const float* win = convstate + h * cw;        // the head's window, row 0
    const float *wq = convw + gq * K, *wk = convw + gk * K, *wv = convw + gv * K;
    if (qk || owner) {
#pragma unroll
        for (int q = 0; q < DNC_MAXK; q++) {
            if (q >= K) break;
            const bool w = q < K - 1;
            if (qk) {
                if (w) dnc_copy(&xin[q][lq], win + q * ws + lq), dnc_copy(&xin[q][lk], win + q * ws + lk);
                dnc_copy(&wgt[q][lq], wq + q);
                dnc_copy(&wgt[q][lk], wk + q);
            }
            if (owner) {
                if (w) dnc_copy(&xin[q][lv], win + q * ws + 2 * dk + j);
                dnc_copy(&wgt[q][lv], wv + q);
            }
        }
    }
    if (owner) dnc_copy(&colin[0][c], normw + j);
    if (tid == DNC_THREADS - 1) dnc_copy(&gin[2], alog + h), dnc_copy(&gin[3], dtbias + h);
    if (AHEAD) pdl_wait();
    if (qk) dnc_copy(&xin[K - 1][lq], proj + gq), dnc_copy(&xin[K - 1][lk], proj + gk);
    if (owner) dnc_copy(&xin[K - 1][lv], proj + gv), dnc_copy(&colin[1][c], proj + ch + h * dv + j);
    if (tid == DNC_THREADS - 1) dnc_copy(&gin[0], proj + ch + vd + h), dnc_copy(&gin[1], proj + ch + vd + nv + h);
    dnc_copied();

    // Conv and SiLU; the norms' sums and q·k; the gates.
    float aq = 0.f, ak = 0.f, av = 0.f;
#pragma unroll
    for (int q = 0; q < DNC_MAXK; q++) {
        if (q >= K) break;
        aq += wgt[q][lq] * xin[q][lq];
        ak += wgt[q][lk] * xin[q][lk];
        if (owner) av += wgt[q][lv] * xin[q][lv];
    }
    const float qv = qk ? Fast::silu(aq) : 0.f, kv = qk ? Fast::silu(ak) : 0.f;
    if (qk) xs[tid] = qv, xs[dk + tid] = kv;
    if (owner) xs[lv] = Fast::silu(av);
    float sq = warp_sum(qv * qv), sk = warp_sum(kv * kv), sqk = warp_sum(qv * kv);
    if (lane == 0) red1[warp][0] = sq, red1[warp][1] = sk, red1[warp][2] = sqk;
    if (tid == DNC_THREADS - 1) {
        gate[0] = Fast::sigmoid(gin[0]);
        // Fast's exponentials (the split step's e^A_log and e^g, the chunked
        // prefill's softplus): one thread's dependent chain before the
        // barrier, so the short forms.
        const float x = gin[1] + gin[3], sp = x > 20.f ? x : log1pf(Fast::exp(x));
        gate[1] = Fast::exp(-Fast::exp(gin[2]) * sp);
    }
    __syncthreads();
    sq = sk = sqk = 0.f;
#pragma unroll
    for (int w = 0; w < DNC_WARPS; w++) sq += red1[w][0], sk += red1[w][1], sqk += red1[w][2];
    const float invk = rsqrtf(sk + 1e-6f), invq = rsqrtf(sq + 1e-6f) * (1.f / sqrtf((float)dk));
    const float beta = gate[0], eg = gate[1];
    float s[DNC_ROWS];  // this thread's column of the slice, rows grp + DNC_GROUPS·r
#pragma unroll
    for (int r = 0; r < DNC_ROWS; r++) s[r] = (col && grp + DNC_GROUPS * r < dk) ? sS[grp + DNC_GROUPS * r][c] : 0.f;

    // Sᵀk and Sᵀq of the old state (k and q not yet normed: the norms are
    // scalars of the head, applied below).
    float pa = 0.f, pb = 0.f;
#pragma unroll
    for (int r = 0; r < DNC_ROWS; r++) {
        const int i = grp + DNC_GROUPS * r;
        if (i < dk) {
            pa += s[r] * xs[dk + i];
            pb += s[r] * xs[i];
        }
    }
    pa += __shfl_xor_sync(FULL_MASK, pa, 16);
    pb += __shfl_xor_sync(FULL_MASK, pb, 16);
    if (lane < 16) red2[warp][c] = make_float2(pa, pb);
    __syncthreads();
    float A = 0.f, Bq = 0.f;
#pragma unroll
    for (int w = 0; w < DNC_WARPS; w++) {
        const float2 p = red2[w][c];
        A += p.x, Bq += p.y;
    }
    const float u = eg * invk * A;
    const float delta = col ? beta * (xs[lv] - u) : 0.f;
    const float o = eg * invq * Bq + delta * (sqk * invk * invq);

    // The new state into the slice (each thread its own values), stored
    // whole once the cluster barrier below has ordered the block's writes.
#pragma unroll
    for (int r = 0; r < DNC_ROWS; r++) {
        const int i = grp + DNC_GROUPS * r;
        if (col && i < dk) sS[i][c] = eg * s[r] + (xs[dk + i] * invk) * delta;
    }

    // The head's Σo²: each block's, pushed into every block of the cluster.
    cluster_wait();
    if (warp == 0) {
        float ss = owner ? o * o : 0.f;
#pragma unroll
        for (int m = 8; m > 0; m >>= 1) ss += __shfl_xor_sync(FULL_MASK, ss, m);  // lanes 0–15: the block's sum
        if (lane < DNC_CLUSTER) cluster_push(&ssp[rank], lane, ss);
    }
    cluster_arrive();
    cluster_wait();  // every block's Σo² is here, every block has read the old window, the slice is written
    if (vec) {
#pragma unroll 4
        for (unsigned e = tid; e < dk * (DNC_COLS / 4); e += DNC_THREADS) {
            const unsigned i = e / (DNC_COLS / 4), c4 = 4 * (e % (DNC_COLS / 4));
            *(float4*)(st + i * dv + j0 + c4) = *(const float4*)&sS[i][c4];
        }
    } else {
        for (int e = tid; e < dk * cb; e += DNC_THREADS) {
            const int i = e / cb, cc = e - i * cb;
            if (j0 + cc < dv) st[i * dv + j0 + cc] = sS[i][cc];
        }
    }
    if (owner) {
        float tot = 0.f;
#pragma unroll
        for (int b = 0; b < DNC_CLUSTER; b++) tot += ssp[b];
        core[(size_t)h * dv + j] = o * Fast::inv_rms(tot, dv, eps) * colin[0][c] * Fast::silu(colin[1][c]);
    }
    // The conv window one input on: row q ← row q+1, the last ← the input
    // (this block's channels, from its own copies).
#pragma unroll
    for (int q = 0; q + 1 < DNC_MAXK; q++) {
        if (q >= K - 1) break;
        float* row = convstate + h * cw + q * ws;
        if (mine) row[lq] = xin[q + 1][lq], row[lk] = xin[q + 1][lk];
        if (owner) row[2 * dk + j] = xin[q + 1][lv];
    }
#else
    __trap();
#endif
}

// deltanet_step_cluster_fast: one row, grid (nv, DNC_CLUSTER), DNC_THREADS
// threads. deltanet_step_cluster_ahead_fast: the same with the state, the
// conv window and the weights copied before the PDL wait (docs/PERF.md
// "ahead25"), so that they stream while the input projections finish. The
// caller promises that the launch before it is an input projection that
// lets it start only after its own wait (gemv.cuh pdl_entry_waited: every
// GEMV but those loading weights ahead), so that every kernel before that
// one — the layer's previous step, the state's and the window's last
// writer — has finished. The same values as deltanet_step_cluster_fast.
#define DNC_ONE_ROW(NAME, AHEAD)                                                                                     \
    extern "C" __global__ void DNC_ATTRS NAME(float* __restrict__ core, const float* __restrict__ proj,                \
                                              float* __restrict__ convstate, float* __restrict__ S,                   \
                                              const float* __restrict__ convw, const float* __restrict__ dtbias,      \
                                              const float* __restrict__ alog, const float* __restrict__ normw, int nk, \
                                              int nv, int dk, int dv, int K, float eps) {                             \
        deltanet_step_cluster_body<AHEAD>(core, proj, convstate, S, convw, dtbias, alog, normw, nk, nv, dk, dv, K, eps); \
    }
DNC_ONE_ROW(deltanet_step_cluster_fast, false)
DNC_ONE_ROW(deltanet_step_cluster_ahead_fast, true)

// deltanet_step_cluster_slots_fast: B rows of B takes (as
// deltanet_step_cols_slots), grid (nv, DNC_CLUSTER, B);
// deltanet_step_cluster_slots_ahead_fast with the loads ahead, as
// deltanet_step_cluster_ahead_fast.
#define DNC_SLOTS(NAME, AHEAD)                                                                                       \
    extern "C" __global__ void DNC_ATTRS NAME(                                                                       \
        float* __restrict__ core, const float* __restrict__ proj, float* __restrict__ convstate, float* __restrict__ S, \
        const float* __restrict__ convw, const float* __restrict__ dtbias, const float* __restrict__ alog,            \
        const float* __restrict__ normw, int nk, int nv, int dk, int dv, int K, float eps,                           \
        const int32_t* __restrict__ slots, long long slot_stride) {                                                  \
        const int b = blockIdx.z;                                                                                    \
        const long long off = (long long)slots[b] * slot_stride;                                                     \
        const size_t pw = (size_t)2 * nk * dk + 2 * (size_t)nv * dv + 2 * nv;                                        \
        deltanet_step_cluster_body<AHEAD>(core + (size_t)b * nv * dv, proj + b * pw, convstate + off, S + off, convw, \
                                          dtbias, alog, normw, nk, nv, dk, dv, K, eps);                              \
    }
DNC_SLOTS(deltanet_step_cluster_slots_fast, false)
DNC_SLOTS(deltanet_step_cluster_slots_ahead_fast, true)
