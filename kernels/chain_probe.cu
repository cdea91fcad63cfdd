// The launch-chain probe (docs/PERF.md "chain19", "chain20"): what a chain of dependent
// one-row projections costs as one launch per operation against one
// persistent kernel whose blocks meet at grid-wide barriers. Measurement
// kernels only (engine/cuda chain_probe_cuda_test.go); nothing in the model
// runs them. A probe layer is three BF16 GEMVs of the decode step's shapes
// with the small dependent operations between them:
//
//   u = A·n                       (the DeltaNet in-projection, rows_a × hidden)
//   v = u[:inner] ⊙ σ(u[gate:])   (an elementwise step of the mixer)
//   w = B·v                       (the output projection, hidden × inner)
//   x += w;  n = rmsnorm(x)·g     (the post-mixer norm)
//   z = C·n                       (the MoE's dense projection, rows_c × hidden)
//   x[:rows_c] += z;  n = rmsnorm(x)·g
//
// Fast numerics only (float32 sums in any order). The persistent kernel has
// each GEMV's first rows of weights in flight before the barrier that
// releases its input, so the bytes keep streaming across dependencies.
#include "common.cuh"
#include "gemv.cuh"

#define CHAIN_THREADS 512
#define CHAIN_WARPS (CHAIN_THREADS / 32)
#define CHAIN_MAXX 4096  // the widest GEMV input the persistent kernel stages

// chain_gated: the probe's mixer step, a·σ(b), the same rounding in every variant.
__device__ __forceinline__ float chain_gated(float a, float b) { return a * (1.f / (1.f + __expf(-b))); }

// chain_mix: v[i] = u[i]·σ(u[gate + i]) for i < n, over the whole grid.
__device__ __forceinline__ void chain_mix(float* v, const float* u, int n, int gate) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v[i] = chain_gated(__ldcg(u + i), __ldcg(u + gate + i));
}

// chain_mix_fast: chain_mix as a launch.
extern "C" __global__ void chain_mix_fast(float* v, const float* u, int n, int gate) {
    pdl_entry();
    chain_mix(v, u, n, gate);
}

// chain_ld4: this thread's float4s of p's first n floats, all loads issued
// before any is used (a staging loop of one load an iteration waits an L2
// round trip each): float4 k holds floats 4·(t + k·blockDim) …, zero past n;
// n ≤ 16·blockDim, p 16-byte aligned.
__device__ __forceinline__ void chain_ld4(float4 (&v)[4], const float* p, int n) {
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int i = 4 * (threadIdx.x + k * blockDim.x);
        if (i + 3 < n) {
            v[k] = __ldcg(reinterpret_cast<const float4*>(p + i));
        } else {
            v[k] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (i < n) v[k].x = __ldcg(p + i);
            if (i + 1 < n) v[k].y = __ldcg(p + i + 1);
            if (i + 2 < n) v[k].z = __ldcg(p + i + 2);
        }
    }
}
__device__ __forceinline__ float4 add4(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
__device__ __forceinline__ float sumsq4(float4 a) { return a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w; }
__device__ __forceinline__ float4 scale4(float4 a, float s, float4 g) {
    return make_float4(a.x * s * g.x, a.y * s * g.y, a.z * s * g.z, a.w * s * g.w);
}

// chain_add_norm_regs loads x + d (d over its first nd values; n values, a
// multiple of 4, ≤ 16·blockDim) into xv in chain_ld4's layout and returns
// rsqrt(mean((x + d)²) + eps), by one block (red: 32 floats of shared memory).
__device__ __forceinline__ float chain_add_norm_regs(float4 (&xv)[4], const float* x, const float* d, int nd,
                                                     int n, float eps, float* red) {
    float4 dv[4];
    chain_ld4(xv, x, n);
    chain_ld4(dv, d, nd);
    float ss = 0.f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        xv[k] = add4(xv[k], dv[k]);
        ss += sumsq4(xv[k]);
    }
    return rsqrtf(block_sum(ss, red) / n + eps);
}
// chain_add_norm: x += d, then normed = x·rsqrt(mean(x²) + eps)·g, by one block.
__device__ __forceinline__ void chain_add_norm(float* x, const float* d, int nd, float* normed,
                                               const float* __restrict__ g, int n, float eps, float* red) {
    float4 xv[4], gv[4];
    chain_ld4(gv, g, n);
    const float inv = chain_add_norm_regs(xv, x, d, nd, n, eps, red);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int i = 4 * (threadIdx.x + k * blockDim.x);
        if (i < n) {
            *reinterpret_cast<float4*>(x + i) = xv[k];
            *reinterpret_cast<float4*>(normed + i) = scale4(xv[k], inv, gv[k]);
        }
    }
}

// chain_norm_fast: chain_add_norm as a launch of one block.
extern "C" __global__ void __launch_bounds__(1024) chain_norm_fast(float* x, const float* d, int nd, float* normed,
                                                                   const float* __restrict__ g, int n, float eps) {
    __shared__ float red[32];
    pdl_entry();
    chain_add_norm(x, d, nd, normed, g, n, eps, red);
}

// chain_arrive and chain_wait: a grid barrier in two halves, so a block can
// issue its next weights' loads between them. Block b adds 1 to counter b
// mod 8 (eight counters 128 bytes apart: arrivals queue at eight L2
// addresses, not one) by a reduction that does not wait for its result;
// its release orders the block's earlier stores before it (the barrier's
// point) but also makes it wait for every load thread 0 has in flight, so
// no weights are loaded between a GEMV's last sums and the arrival (≈ 3 µs
// a barrier when they were, chain19 run 9; ≈ 2.5 µs in two halves, chain20
// run 1). chain_wait: threads 0…7 wait for their
// counter to reach done × its blocks, done being the barriers completed
// with this one (the counters only grow).
#define CHAIN_COUNTERS 8
#define CHAIN_COUNTER_STRIDE 32  // uints: 128 bytes
__device__ __forceinline__ void chain_arrive(unsigned int* ctr) {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int* c = ctr + CHAIN_COUNTER_STRIDE * (blockIdx.x % CHAIN_COUNTERS);
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(c) : "memory");
    }
}
__device__ __forceinline__ void chain_wait(const unsigned int* ctr, unsigned int done) {
    if (threadIdx.x < CHAIN_COUNTERS) {
        const unsigned int* c = ctr + CHAIN_COUNTER_STRIDE * threadIdx.x;
        const unsigned int target = done * ((gridDim.x - threadIdx.x + CHAIN_COUNTERS - 1) / CHAIN_COUNTERS);
        unsigned int v;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(c) : "memory");
        } while ((int)(v - target) < 0);
    }
    __syncthreads();
}

// A warp's row of weights in registers: CPL 16-byte chunks a lane (cols =
// 256·CPL BF16 values), lane j's chunks j, j + 32, ….
template <int CPL>
__device__ __forceinline__ void chain_load(uint4 (&w)[CPL], const uint16_t* __restrict__ W, int row, int cols) {
    const uint4* p = reinterpret_cast<const uint4*>(W + (size_t)row * cols) + (threadIdx.x & 31);
#pragma unroll
    for (int u = 0; u < CPL; u++) w[u] = load_stream(p + 32 * u);
}

// chain_dot: the row's dot with the staged input xs, summed over the warp.
template <int CPL>
__device__ __forceinline__ float chain_dot(const uint4 (&w)[CPL], const float* xs) {
    const float4* xv = reinterpret_cast<const float4*>(xs) + 2 * (threadIdx.x & 31);
    float s = 0.f;
#pragma unroll
    for (int u = 0; u < CPL; u++) s += BF16Weights::dot(w[u], xv + 64 * u);
    return warp_sum(s);
}

// The ring of a warp's rows in flight: CHAIN_RING 16-byte chunks a lane,
// D rows of CPL chunks (D·CPL = CHAIN_RING).
#define CHAIN_RING 16

// chain_ahead loads the first D rows of this warp (gw, gw + tw, …) into the
// ring: what a GEMV issues before the barrier that releases its input.
template <int CPL, int D>
__device__ __forceinline__ void chain_ahead(uint4 (&ring)[CHAIN_RING], const uint16_t* __restrict__ W, int rows,
                                            int gw, int tw) {
    static_assert(CPL * D == CHAIN_RING, "the ring holds D rows of CPL chunks");
#pragma unroll
    for (int k = 0; k < D; k++)
        if (gw + k * tw < rows)
            chain_load<CPL>(reinterpret_cast<uint4(&)[CPL]>(ring[k * CPL]), W, gw + k * tw, CPL * 256);
}

// chain_gemv: y[r] = W[r]·xs for the rows r = gw, gw + tw, … of this warp,
// its first D rows already in the ring (chain_ahead); each row's slot is
// refilled with the row D further on as soon as its sums are done, so D
// rows a warp stay in flight.
template <int CPL, int D>
__device__ __forceinline__ void chain_gemv(float* __restrict__ y, const uint16_t* __restrict__ W, int rows,
                                           const float* xs, uint4 (&ring)[CHAIN_RING], int gw, int tw) {
    for (int row0 = gw;; row0 += D * tw) {
#pragma unroll
        for (int k = 0; k < D; k++) {
            const int row = row0 + k * tw;
            if (row >= rows) return;
            uint4(&w)[CPL] = reinterpret_cast<uint4(&)[CPL]>(ring[k * CPL]);
            const float s = chain_dot<CPL>(w, xs);
            if ((threadIdx.x & 31) == 0) y[row] = s;
            if (row + D * tw < rows) chain_load<CPL>(w, W, row + D * tw, CPL * 256);
        }
    }
}

// chain_stage_norm stages normed = (xin + d)·rsqrt(mean² + eps)·g (d over
// its first nd values) into xs, every block the whole row from L2, and
// writes block b's slice (16-float aligned) of xin + d to xout.
__device__ __forceinline__ void chain_stage_norm(float* xs, float* __restrict__ xout, const float* xin, const float* d,
                                                 int nd, const float* __restrict__ g, int n, float eps, float* red) {
    float4 xv[4], gv[4];
    chain_ld4(gv, g, n);
    const float inv = chain_add_norm_regs(xv, xin, d, nd, n, eps, red);
    const int per = ((n + gridDim.x - 1) / gridDim.x + 15) & ~15;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int i = 4 * (threadIdx.x + k * blockDim.x);
        if (i < n) {
            if (i / per == (int)blockIdx.x) *reinterpret_cast<float4*>(xout + i) = xv[k];
            *reinterpret_cast<float4*>(xs + i) = scale4(xv[k], inv, gv[k]);
        }
    }
    __syncthreads();
}

// chain_stage stages xs = p's first n floats.
__device__ __forceinline__ void chain_stage(float* xs, const float* p, int n) {
    float4 v[4];
    chain_ld4(v, p, n);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int i = 4 * (threadIdx.x + k * blockDim.x);
        if (i < n) *reinterpret_cast<float4*>(xs + i) = v[k];
    }
    __syncthreads();
}

// mix4: chain_gated four at a time (the fused mixer step).
__device__ __forceinline__ float4 mix4(float4 a, float4 b) {
    return make_float4(chain_gated(a.x, b.x), chain_gated(a.y, b.y), chain_gated(a.z, b.z), chain_gated(a.w, b.w));
}

// chain_persistent_fast: layers probe layers in one launch, a grid of at most
// one block an SM (all resident). fused = 0: the small operations are phases
// of their own between barriers (block 0 the norms, as the one-block
// kernels); fused = 1: each is done by every block while staging the next
// GEMV's input (no barrier of its own); fused = 2: as 1 with every grid
// barrier left out (wrong values: it times the GEMVs' streaming and the
// stagings alone). x starts in xa with n = its norm;
// the final x is left in xa. ctr: the barrier counters (chain_barrier:
// CHAIN_COUNTERS·CHAIN_COUNTER_STRIDE uints, zero before the first launch),
// base the barriers the launches before this one completed on them
// (layers·6 a launch, fused layers·3, none at 2).
extern "C" __global__ void __launch_bounds__(CHAIN_THREADS, 1) chain_persistent_fast(
    const uint16_t* __restrict__ A, const uint16_t* __restrict__ B, const uint16_t* __restrict__ C,
    const float* __restrict__ g, float* u, float* v, float* w, float* z, float* xa, float* xb, float* n,
    int layers, int rows_a, int hidden, int inner, int rows_c, int gate, float eps, int fused, unsigned int* ctr,
    unsigned int base) {
    __shared__ __align__(16) float xs[CHAIN_MAXX];
    __shared__ float red[32];
    pdl_entry();
    const int gw = blockIdx.x * CHAIN_WARPS + (threadIdx.x >> 5), tw = gridDim.x * CHAIN_WARPS;
    unsigned int done = base;
    // barrier(ahead): every block's earlier stores visible to all; ahead()
    // (the next GEMV's first weights) issued between the halves.
    auto barrier = [&](auto ahead) {
        if (fused == 2) {  // no barrier: xs is rewritten next
            ahead();
            __syncthreads();
            return;
        }
        chain_arrive(ctr);
        ahead();
        chain_wait(ctr, ++done);
    };
    auto nothing = [] {};
    uint4 ring[CHAIN_RING];  // the next GEMV's first rows, loaded ahead
    chain_ahead<8, 2>(ring, A, rows_a, gw, tw);
    for (int l = 0; l < layers; l++) {
        const uint16_t* Al = A + (size_t)l * rows_a * hidden;
        const uint16_t* Bl = B + (size_t)l * hidden * inner;
        const uint16_t* Cl = C + (size_t)l * rows_c * hidden;
        // u = A·n: n staged (fused: the norm of x + z, made here).
        if (fused)
            chain_stage_norm(xs, xa, l == 0 ? xa : xb, z, l == 0 ? 0 : rows_c, g, hidden, eps, red);
        else
            chain_stage(xs, n, hidden);
        chain_gemv<8, 2>(u, Al, rows_a, xs, ring, gw, tw);
        barrier([&] { chain_ahead<16, 1>(ring, Bl, hidden, gw, tw); });
        // v = u ⊙ σ(u[gate:]); w = B·v.
        if (fused) {
            float4 a[4], b[4];
            chain_ld4(a, u, inner);
            chain_ld4(b, u + gate, inner);
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int i = 4 * (threadIdx.x + k * blockDim.x);
                if (i < inner) *reinterpret_cast<float4*>(xs + i) = mix4(a[k], b[k]);
            }
            __syncthreads();
        } else {
            chain_mix(v, u, inner, gate);
            barrier(nothing);
            chain_stage(xs, v, inner);
        }
        chain_gemv<16, 1>(w, Bl, hidden, xs, ring, gw, tw);
        barrier([&] { chain_ahead<8, 2>(ring, Cl, rows_c, gw, tw); });
        // x += w, n = its norm; z = C·n.
        if (fused) {
            chain_stage_norm(xs, xb, xa, w, hidden, g, hidden, eps, red);
        } else {
            if (blockIdx.x == 0) chain_add_norm(xa, w, hidden, n, g, hidden, eps, red);
            barrier(nothing);
            chain_stage(xs, n, hidden);
        }
        chain_gemv<8, 2>(z, Cl, rows_c, xs, ring, gw, tw);
        barrier([&] {
            if (l + 1 < layers) chain_ahead<8, 2>(ring, A + (size_t)(l + 1) * rows_a * hidden, rows_a, gw, tw);
        });
        // x[:rows_c] += z, n = its norm (fused: the next layer's staging).
        if (!fused) {
            if (blockIdx.x == 0) chain_add_norm(xa, z, rows_c, n, g, hidden, eps, red);
            barrier(nothing);
        }
    }
    // Fused: the last layer's x + z, from xb and z, into xa.
    if (fused) {
        const int per = ((hidden + gridDim.x - 1) / gridDim.x + 15) & ~15;
        for (int i = blockIdx.x * per + threadIdx.x; i < min(hidden, (int)(blockIdx.x + 1) * per); i += blockDim.x)
            xa[i] = __ldcg(xb + i) + (i < rows_c ? __ldcg(z + i) : 0.f);
    }
}
