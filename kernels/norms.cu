// Normalisation kernels: the backbone's zero-centred RMSNorm (the layer
// glue's fused add + norm is in backbone.cu, the combine's in moe.cu) and the
// tower's plain-gain norms, which also assemble a layer's eh_proj input
// (engine/cpu/tower.go).
#include "common.cuh"
#include "frame_control.cuh"
#include "tower_embed.cuh"

// ---------------------------------------------------------------------------
// Zero-centred RMSNorm (RMSNormZeroCentred): y = x / sqrt(mean(x²) + eps) · (1 + w)
// for each of n rows of width elements. Grid: (n); the sum of squares is
// float64 (per thread, then across the block), the inverse rms rounded once,
// as the CPU does (Exact; float32 under Fast).
template <class P>
__device__ __forceinline__ void rmsnorm_zc_f32_body(float* __restrict__ out, const float* __restrict__ x,
                                                    const float* __restrict__ w, int width, float eps) {
    pdl_entry();
    __shared__ typename P::Sum red[32];
    const float* xr = x + (size_t)blockIdx.x * width;
    float* o = out + (size_t)blockIdx.x * width;
    typename P::Sum ss = 0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) ss += P::sq(xr[c]);
    ss = block_sum(ss, red);
    const float inv = P::inv_rms(ss, width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) o[c] = P::zc_norm(xr[c], inv, w[c]);
}
NUMERICS_KERNEL(rmsnorm_zc_f32, ,
                (float* __restrict__ out, const float* __restrict__ x, const float* __restrict__ w, int width,
                 float eps),
                (out, x, w, width, eps))

// ---------------------------------------------------------------------------
// A one-row norm's values stay in registers: thread t holds elements
// t + i·blockDim.x, i < ROW_REGS, so width ≤ ROW_REGS·blockDim.x (the
// tower launches 1024 threads a row: engine/cuda TowerMaxDim). Each
// thread's partial sum of squares runs over its elements in that order, as
// a strided loop would.
#define ROW_REGS 8

__device__ __forceinline__ void load_row(float (&v)[ROW_REGS], const float* __restrict__ x, int width) {
#pragma unroll
    for (int i = 0; i < ROW_REGS; i++) {
        const int c = threadIdx.x + i * blockDim.x;
        v[i] = c < width ? x[c] : 0.f;
    }
}

// regs_inv_rms is row_inv_rms of the row held in v (every thread of the
// block calls it; red: 32 doubles of shared memory).
__device__ __forceinline__ float regs_inv_rms(const float (&v)[ROW_REGS], int width, float eps, double* red) {
    double ss = 0.0;
#pragma unroll
    for (int i = 0; i < ROW_REGS; i++)
        if (threadIdx.x + i * blockDim.x < width) ss += (double)v[i] * (double)v[i];
    return row_inv_rms(block_sum(ss, red), width, eps);
}

// norm_row writes o = v·inv·w and leaves it in v.
__device__ __forceinline__ void norm_row(float* __restrict__ o, float (&v)[ROW_REGS], float inv,
                                         const float* __restrict__ w, int width) {
#pragma unroll
    for (int i = 0; i < ROW_REGS; i++) {
        const int c = threadIdx.x + i * blockDim.x;
        if (c < width) {
            v[i] = v[i] * inv * w[c];
            o[c] = v[i];
        }
    }
}

// ---------------------------------------------------------------------------
// The eh_proj input of n rows: cat[r] = [enorm(mask·E[code]); hnorm(h[r])]
// (Tower.layer). table null: text rows, mask 0 (enorm of the zero vector).
// Otherwise one audio row embedding code ctrl->codes[code_slot] of the
// [entries, width] BF16 table; after end of speech (ctrl->end) code 0 stands
// in (the frame is discarded); a code out of range writes NaN and sets
// FRAME_ERR_BAD_CODE. Audio rows are frame rows of takes: row r reads (and
// flags) ctrl[slots[r]] (slots null: ctrl[r]; Tower.FrameRows; one take:
// n = 1). enorm null: no embedding half, hnorm(h[r]) as row r of cat as a
// [n, width] matrix (a layer's W_h input, its embedding by table:
// tower_out_eh's emode 3). Grid: (n), 1024 threads (ROW_REGS).
extern "C" __global__ void __launch_bounds__(1024) tower_eh_input(float* __restrict__ cat, const float* __restrict__ h,
                                          const uint16_t* __restrict__ table, FrameControl* ctrl, int code_slot,
                                          int entries, const float* __restrict__ enorm,
                                          const float* __restrict__ hnorm, int width, float eps,
                                          const int32_t* __restrict__ slots) {
    pdl_entry();
    __shared__ double red[32];
    const int row = blockIdx.x;
    const bool hnorm_only = enorm == nullptr;
    float* ce = cat + (size_t)row * (hnorm_only ? 1 : 2) * width;
    float* ch = hnorm_only ? ce : ce + width;
    const float* hr = h + (size_t)row * width;
    if (hnorm_only) {
    } else if (table == nullptr) {
        const float inv = row_inv_rms(0.0, width, eps);
        for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = 0.f * inv * enorm[c];
    } else {
        ctrl += slots ? slots[row] : row;
        tower_embed_row(ce, table, ctrl->codes[code_slot], ctrl, entries, enorm, width, eps, red);
    }
    float v[ROW_REGS];
    load_row(v, hr, width);
    norm_row(ch, v, regs_inv_rms(v, width, eps, red), hnorm, width);
}

// ---------------------------------------------------------------------------
// The one-row norms between a layer's projections are strided loops that
// reread the row: holding it in registers instead (as tower_eh_input does)
// measured 1 µs slower a launch and 0.044 ms a frame (docs/PERF.md; code in
// 22c6bf8, tower_add_rmsnorm_regs and tower_out_eh_regs).

// The embedding half of an eh_proj input by emode (tower_out_eh).
__device__ __forceinline__ void eh_embed_half(float* __restrict__ ce, int emode, const uint16_t* __restrict__ table,
                                              FrameControl* ctrl, int code_slot, int entries,
                                              const float* __restrict__ enorm, int width, float eps, double* red) {
    if (emode == 0) {
        const float inv0 = row_inv_rms(0.0, width, eps);
        for (int c = threadIdx.x; c < width; c += blockDim.x) ce[c] = 0.f * inv0 * enorm[c];
    } else if (emode == 1) {
        tower_embed_row(ce, table, ctrl->codes[code_slot], ctrl, entries, enorm, width, eps, red);
    }
}

// tower_out_eh's row with strided loops (hr, xr, ar: the row's h, x, add;
// ce, ch: where the embedding half and hnorm(h) go).
__device__ __forceinline__ void out_eh_loops(float* hr, float* xr, const float* ar, const float* __restrict__ out_w,
                                             float* ce, float* ch, int emode, const uint16_t* __restrict__ table,
                                             FrameControl* ctrl, int code_slot, int entries,
                                             const float* __restrict__ enorm, const float* __restrict__ hnorm,
                                             int width, float eps, double* red) {
    add_rmsnorm_loops(hr, xr, ar, out_w, width, eps, red);
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        const float v = hr[c];
        ss += (double)v * (double)v;
    }
    const float inv = row_inv_rms(block_sum(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) ch[c] = hr[c] * inv * hnorm[c];
    eh_embed_half(ce, emode, table, ctrl, code_slot, entries, enorm, width, eps, red);
}

// Residual add and plain-gain RMSNorm of n rows: x[r] += add[r] (when add is
// not null), out[r] = x[r]·inv·w. Grid: (n), any multiple of 32 threads up
// to 1024.
extern "C" __global__ void __launch_bounds__(1024) tower_add_rmsnorm(float* __restrict__ out, float* __restrict__ x,
                                             const float* __restrict__ add, const float* __restrict__ w, int width,
                                             float eps) {
    pdl_entry();
    __shared__ double red[32];
    const size_t r = (size_t)blockIdx.x * width;
    add_rmsnorm_loops(out + r, x + r, add ? add + r : nullptr, w, width, eps, red);
}

// A layer's end and the next layer's eh_proj input in one launch, n rows:
// x[r] += add[r], h[r] = out_norm(x[r]) (h_out, as tower_add_rmsnorm), then
// cat[r]'s hnorm half = hnorm(h[r]) of the next layer and its embedding
// half by emode: 0 text rows (enorm of the zero vector, as tower_eh_input
// with no table), 1 enorm(E[ctrl->codes[code_slot]]) of table (a code drawn
// before this layer), 2 left alone (the draw after this layer's head picks
// that code and writes it: sample_logits' embedding); emode 1 rows are
// frame rows of takes, row r reading ctrl[slots[r]] (slots null: ctrl[r];
// Tower.FrameRows). emode 3: no embedding half, and hnorm(h[r]) goes to row
// r of cat as a [n, width] matrix (the next layer's hnorm GEMV input, its
// embedding by table: tower_table_add_rmsnorm). Grid: (n), any multiple of
// 32 threads up to 1024.
extern "C" __global__ void __launch_bounds__(1024) tower_out_eh(
    float* __restrict__ h, float* __restrict__ x, const float* __restrict__ add, const float* __restrict__ out_w,
    float* __restrict__ cat, int emode, const uint16_t* __restrict__ table, FrameControl* ctrl, int code_slot,
    int entries, const float* __restrict__ enorm, const float* __restrict__ hnorm, int width, float eps,
    const int32_t* __restrict__ slots) {
    pdl_entry();
    __shared__ double red[32];
    const size_t r = (size_t)blockIdx.x * width;
    FrameControl* c = ctrl + (slots ? slots[blockIdx.x] : (int)blockIdx.x);
    float* ce = emode == 3 ? cat + r : cat + 2 * r;
    out_eh_loops(h + r, x + r, add ? add + r : nullptr, out_w, ce, emode == 3 ? ce : ce + width, emode, table, c,
                 code_slot, entries, enorm, hnorm, width, eps, red);
}

// ---------------------------------------------------------------------------
// A drawn code's half of eh_proj by table (engine/cuda towerDrawnEH): eh_proj
// is linear, so eh_proj([enorm(E[c]); hnorm(h)]) = T[c] + W_h·hnorm(h) with
// T[c] = W_e·enorm(E[c]) made once per model (tower_eh_table_rows and a GEMV
// at NewTower) and W_h·hnorm(h) projected before the draw that picks c. So
// after the draw only this launch stands between the code and the layer's
// q/k/v: x[r] += T[c] (x holds W_h·hnorm(h)), out[r] = attention_norm(x[r]),
// tower_add_rmsnorm's arithmetic with T's row as its add. c =
// ctrl->codes[code_slot] of the row's control block (ctrl[slots[r]]; slots
// null: ctrl[r]); after end of speech code 0 stands in (the frame is
// discarded); a code out of range writes NaN and sets FRAME_ERR_BAD_CODE
// (tower_embed_row's rules). Grid: (n), any multiple of 32 threads up to
// 1024.
extern "C" __global__ void __launch_bounds__(1024) tower_table_add_rmsnorm(
    float* __restrict__ out, float* __restrict__ x, const float* __restrict__ table, FrameControl* ctrl,
    int code_slot, int entries, const float* __restrict__ w, int width, float eps,
    const int32_t* __restrict__ slots) {
    pdl_entry();
    __shared__ double red[32];
    const size_t r = (size_t)blockIdx.x * width;
    FrameControl* c = ctrl + (slots ? slots[blockIdx.x] : (int)blockIdx.x);
    table_add_rmsnorm_row(out + r, x + r, table, c->codes[code_slot], c->end != 0, c, entries, w, width, eps, red);
}

// The drawn-code table's inputs (towerDrawnEH): cat[r] = [enorm(E[code0 +
// r]); 0] for the [entries, width] BF16 table E (code0 + r < entries: the
// host's chunks), tower_embed_row's arithmetic, so that eh_proj of cat[r]
// is W_e·enorm(E[c]) alone. Grid: (n), 1024 threads.
extern "C" __global__ void __launch_bounds__(1024) tower_eh_table_rows(float* __restrict__ cat,
                                                                       const uint16_t* __restrict__ table, int code0,
                                                                       const float* __restrict__ enorm, int width,
                                                                       float eps) {
    pdl_entry();
    __shared__ double red[32];
    float* ce = cat + (size_t)blockIdx.x * 2 * width;
    const uint16_t* er = table + (size_t)(code0 + blockIdx.x) * width;
    double ss = 0.0;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        const double v = (double)__int_as_float((uint32_t)er[c] << 16);
        ss += v * v;
    }
    const float inv = row_inv_rms(block_sum(ss, red), width, eps);
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        ce[c] = __int_as_float((uint32_t)er[c] << 16) * inv * enorm[c];
        ce[width + c] = 0.f;
    }
}
