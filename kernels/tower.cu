// The codebook tower (engine/cpu/tower.go), the feedback row
// (engine/cpu/heads.go) and the frame counters. Projections run on the GEMV
// kernels (gemv.cu, and the fused gate·up here on gemv.cuh's body); its
// norms are in norms.cu, its attention in attention.cu. Every activation and
// the KV caches are float32; counters come from the frame control block so
// the kernels can be captured once and replayed per frame.
#include "gemv.cuh"
#include "frame_control.cuh"
#include "tower_embed.cuh"

// ---------------------------------------------------------------------------
// Gate and up with their SwiGLU in one GEMV launch (engine/cuda
// towerFusion.gateUp): gemv.cuh's body (gemv_rows, Fast) with one row of each
// matrix per group, as gemv.cu's t128r2u2 instance runs two rows of one
// (groups of 128 threads, 16-byte chunks j, j+128, … of a row per thread, two
// chunks' loads in flight per row, warp then group sums), so gate and up are
// the same bit for bit as the two-matrix GEMV. (GEMVs whose last block also
// did the norm after them, tower_gemv_add_rmsnorm and tower_gemv_out_eh,
// measured 0.07 ms a frame slower each, docs/PERF.md; code in 22c6bf8.)
#define TG_THREADS GEMV_THREADS  // engine/cuda towerGemvThreads
#define TG_TPR 128               // a group: one row of each matrix
#define TG_UNROLL 2

// Gate and up with SwiGLU (FeedForward): out[r] = silu(W1[r]·x)·(W3[r]·x),
// each group of 128 threads one row of both matrices; the same values as
// the two-matrix GEMV followed by swiglu_f32, a launch less. Grid:
// (ceil(rows/2)), TG_THREADS.
extern "C" __global__ void __launch_bounds__(TG_THREADS, 2) tower_gate_up_swiglu(
    float* __restrict__ out, const uint16_t* __restrict__ W1, const uint16_t* __restrict__ W3,
    const float* __restrict__ x, int rows, int cols) {
    const int group = threadIdx.x / TG_TPR;
    const int row = blockIdx.x * (TG_THREADS / TG_TPR) + group, rr = min(row, rows - 1);
    const uint4* wr[2] = {reinterpret_cast<const uint4*>(W1 + (size_t)rr * cols),
                          reinterpret_cast<const uint4*>(W3 + (size_t)rr * cols)};
    const float* sr[2] = {nullptr, nullptr};
    pdl_entry();
    float acc[2];
    gemv_rows<BF16Weights, Fast, TG_TPR, 2, TG_UNROLL>(acc, wr, sr, x, cols);
    if (threadIdx.x % TG_TPR == 0 && row < rows) {
        const float g = acc[0];
        out[row] = g / (1.f + expf(-g)) * acc[1];
    }
}

// ---------------------------------------------------------------------------
// Several takes' rows (Tower.FrameRows): each kernel below reads every
// weight once for nx ≤ FRAME_MAX_TAKES input rows, one per take, through
// gemv_rows_x, whose per-row arithmetic is the one-row GEMV's: row b's
// outputs have the bits the same take would get alone.

// gemv_rows_body: y[b·ystride + r] = Σ_c W[r, c]·x[b·xstride + c] for b < nx
// and the rows of this block's groups (gemv_body's split of rows).
template <class P, int TPR, int ROWS, int UNROLL>
__device__ __forceinline__ void gemv_rows_body(float* __restrict__ y, const uint16_t* __restrict__ W,
                                               const float* __restrict__ x, int xstride, int ystride, int nx,
                                               int rows, int cols) {
    constexpr int GROUPS = GEMV_THREADS / TPR;
    const int group = threadIdx.x / TPR, j = threadIdx.x % TPR;
    const int row0 = (blockIdx.x * GROUPS + group) * ROWS;
    const uint4* wr[ROWS];
    const float* sr[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        wr[r] = reinterpret_cast<const uint4*>(W + (size_t)min(row0 + r, rows - 1) * cols);
        sr[r] = nullptr;
    }
    pdl_entry();
    typename P::Sum acc[FRAME_MAX_TAKES][ROWS];
    gemv_rows_x<BF16Weights, P, TPR, ROWS, UNROLL, FRAME_MAX_TAKES>(acc, wr, sr, x, xstride, nx, cols);
    if (j == 0) {
#pragma unroll
        for (int b = 0; b < FRAME_MAX_TAKES; b++)
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                if (b < nx && row0 + r < rows) y[(size_t)b * ystride + row0 + r] = (float)acc[b][r];
    }
}

// Instances gemv_rows_bf16_t{TPR}r{ROWS}u{UNROLL} (Fast: every tower
// projection) and gemv_rows_bf16d_… (Exact: the semantic head under exact
// numerics), at the shapes ChooseGemv gives the tower. Grid: (ceil(rows /
// (GEMV_THREADS/TPR·ROWS))), GEMV_THREADS.
#define GEMV_ROWS_X(NAME, P, TPR, ROWS, UNROLL)                                                             \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS, 2)                                          \
        NAME(float* __restrict__ y, const uint16_t* __restrict__ W, const float* __restrict__ x, int xstride, \
             int ystride, int nx, int rows, int cols) {                                                      \
        gemv_rows_body<P, TPR, ROWS, UNROLL>(y, W, x, xstride, ystride, nx, rows, cols);                     \
    }
#define GEMV_ROWS(TPR, ROWS, UNROLL)                                              \
    GEMV_ROWS_X(gemv_rows_bf16_t##TPR##r##ROWS##u##UNROLL, Fast, TPR, ROWS, UNROLL) \
    GEMV_ROWS_X(gemv_rows_bf16d_t##TPR##r##ROWS##u##UNROLL, Exact, TPR, ROWS, UNROLL)
GEMV_ROWS(128, 2, 2)
GEMV_ROWS(32, 4, 2)

// tower_gate_up_swiglu over nx rows: out[b·rows + r] = silu(W1[r]·x_b)·(W3[r]·x_b),
// x_b = x + b·cols, each row's values tower_gate_up_swiglu's. Grid:
// (ceil(rows/2)), TG_THREADS.
extern "C" __global__ void __launch_bounds__(TG_THREADS, 2) tower_gate_up_swiglu_rows(
    float* __restrict__ out, const uint16_t* __restrict__ W1, const uint16_t* __restrict__ W3,
    const float* __restrict__ x, int nx, int rows, int cols) {
    const int group = threadIdx.x / TG_TPR;
    const int row = blockIdx.x * (TG_THREADS / TG_TPR) + group, rr = min(row, rows - 1);
    const uint4* wr[2] = {reinterpret_cast<const uint4*>(W1 + (size_t)rr * cols),
                          reinterpret_cast<const uint4*>(W3 + (size_t)rr * cols)};
    const float* sr[2] = {nullptr, nullptr};
    pdl_entry();
    float acc[FRAME_MAX_TAKES][2];
    gemv_rows_x<BF16Weights, Fast, TG_TPR, 2, TG_UNROLL, FRAME_MAX_TAKES>(acc, wr, sr, x, cols, nx, cols);
    if (threadIdx.x % TG_TPR == 0 && row < rows) {
#pragma unroll
        for (int b = 0; b < FRAME_MAX_TAKES; b++) {
            if (b < nx) {
                const float g = acc[b][0];
                out[(size_t)b * rows + row] = g / (1.f + expf(-g)) * acc[b][1];
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The feedback row (AudioHeads.FeedbackRow) of the frame's codes
// ctrl->codes[0..ncb): (E_text[sem_tokens[c0]] + Σ_i E_cb_i[c_i]) / div,
// summed in float32 in that order; tables holds the ncb BF16 codebook tables'
// addresses, entries their sizes. A code out of range (end of speech) writes
// NaN: no backbone step follows it. The frame's counters step as
// tower_advance's (1 row, 1 frame): this is the frame's last launch, and it
// reads neither counter. Block b writes take b's row out + b·width from
// ctrl[b] (Tower.FrameRows; one take: grid 1). Grid: (takes), 1024 threads.
extern "C" __global__ void __launch_bounds__(1024) tower_feedback(float* __restrict__ out, const uint16_t* __restrict__ text_embed,
                                          const int32_t* __restrict__ sem_tokens,
                                          const unsigned long long* __restrict__ tables,
                                          const int32_t* __restrict__ entries, FrameControl* ctrl, int ncb,
                                          int width, float div) {
    pdl_entry();
    ctrl += blockIdx.x;
    out += (size_t)blockIdx.x * width;
    if (threadIdx.x == 0) {
        ctrl->pos += 1;
        ctrl->frame += 1;
    }
    // The rows' addresses found once (thread i: codebook i) and shared; then
    // per column every row's value is loaded at once and summed in order.
    __shared__ const uint16_t* rows[FRAME_MAX_CODEBOOKS + 1];  // the text row, then codebook i's
    __shared__ int bad;
    if (threadIdx.x == 0) bad = 0;
    __syncthreads();
    if (threadIdx.x < ncb) {
        const int i = threadIdx.x, code = ctrl->codes[i];
        if (code < 0 || code >= entries[i]) {
            bad = 1;
        } else {
            rows[i + 1] = reinterpret_cast<const uint16_t*>(tables[i]) + (size_t)code * width;
            if (i == 0) rows[0] = text_embed + (size_t)sem_tokens[code] * width;
        }
    }
    __syncthreads();
    if (bad) {
        for (int c = threadIdx.x; c < width; c += blockDim.x) out[c] = __int_as_float(0x7fc00000);
        return;
    }
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        uint32_t v[FRAME_MAX_CODEBOOKS + 1];
#pragma unroll
        for (int i = 0; i <= FRAME_MAX_CODEBOOKS; i++) v[i] = i <= ncb ? rows[i][c] : 0u;
        float s = __int_as_float(v[0] << 16);
#pragma unroll
        for (int i = 1; i <= FRAME_MAX_CODEBOOKS; i++)
            if (i <= ncb) s += __int_as_float(v[i] << 16);
        out[c] = s / div;
    }
}

// ---------------------------------------------------------------------------
// Counters: rows more tower rows done, frames more frames drawn. Grid: (1).
extern "C" __global__ void tower_advance(FrameControl* ctrl, int rows, int frames) {
    pdl_entry();
    if (threadIdx.x == 0) {
        ctrl->pos += rows;
        ctrl->frame += frames;
    }
}

// ---------------------------------------------------------------------------
// BF16 row gather (for the semantic head taken from LM head rows):
// dst[i, :] = src[ids[i], :]. Grid: (n).
extern "C" __global__ void bf16_gather_rows(uint16_t* __restrict__ dst, const uint16_t* __restrict__ src,
                                            const int32_t* __restrict__ ids, int width) {
    pdl_entry();
    const uint16_t* s = src + (size_t)ids[blockIdx.x] * width;
    uint16_t* d = dst + (size_t)blockIdx.x * width;
    for (int c = threadIdx.x; c < width; c += blockDim.x) d[c] = s[c];
}
