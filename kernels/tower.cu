// The codebook tower (engine/cpu/tower.go), the feedback row
// (engine/cpu/heads.go) and the frame counters. Projections run on the GEMV
// kernels (gemv.cu, and the fused gate·up here on gemv.cuh's body); its
// norms are in norms.cu, its attention in attention.cu. Every activation and
// the KV caches are float32; counters come from the frame control block so
// the kernels can be captured once and replayed per frame.
#include "gemv.cuh"
#include "gemv_mma.cuh"
#include "frame_control.cuh"
#include "tower_embed.cuh"

// ---------------------------------------------------------------------------
// Gate and up with their SwiGLU in one GEMV launch (engine/cuda
// towerFusion.gateUp): gemv.cuh's body (gemv_rows_entry, Fast) with one row of each
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
// (ceil(rows/2)), TG_THREADS. ahead: the first weights loaded before the PDL
// wait (gemv.cuh gemv_rows_entry; engine/cuda gemvAhead[siteTower]).
extern "C" __global__ void __launch_bounds__(TG_THREADS, 2) tower_gate_up_swiglu(
    float* __restrict__ out, const uint16_t* __restrict__ W1, const uint16_t* __restrict__ W3,
    const float* __restrict__ x, int rows, int cols, int ahead) {
    const int group = threadIdx.x / TG_TPR;
    const int row = blockIdx.x * (TG_THREADS / TG_TPR) + group, rr = min(row, rows - 1);
    const uint4* wr[2] = {reinterpret_cast<const uint4*>(W1 + (size_t)rr * cols),
                          reinterpret_cast<const uint4*>(W3 + (size_t)rr * cols)};
    const float* sr[2] = {nullptr, nullptr};
    float acc[2];
    gemv_rows_entry<BF16Weights, Fast, TG_TPR, 2, TG_UNROLL>(ahead, acc, wr, sr, x, cols);
    if (threadIdx.x % TG_TPR == 0 && row < rows) {
        const float g = acc[0];
        out[row] = g / (1.f + expf(-g)) * acc[1];
    }
}

// ---------------------------------------------------------------------------
// Gate and up with SwiGLU over nb ≤ NB rows of several takes (Tower.FrameRows):
// out[b·rows + r] = silu(W1[r]·x_b)·(W3[r]·x_b), x_b = x + b·cols, each
// weight read once for all rows (gemv_rows_x, gemv.cuh), each row's values
// tower_gate_up_swiglu's bits (a row's split over TG_TPR threads is its:
// the order of its sums depends on that alone). Each group takes RPM rows of
// each matrix (RPM 2: each x chunk loaded once for four weight rows, UNROLL
// 1). Instances tower_gate_up_swiglu_rows_b{NB} (RPM 1) and
// tower_gate_up_swiglu_rows2_b{NB} (RPM 2). Grid: (ceil(rows/(2·RPM))),
// TG_THREADS.
template <int RPM, int UNROLL, int NB>
__device__ __forceinline__ void gate_up_swiglu_rows_body(float* __restrict__ out, const uint16_t* __restrict__ W1,
                                                         const uint16_t* __restrict__ W3,
                                                         const float* __restrict__ x, int nb, int rows,
                                                         int cols) {
    const int group = threadIdx.x / TG_TPR;
    const int row0 = (blockIdx.x * (TG_THREADS / TG_TPR) + group) * RPM;
    const uint4* wr[2 * RPM];
    const float* sr[2 * RPM];
#pragma unroll
    for (int k = 0; k < RPM; k++) {
        const int rr = min(row0 + k, rows - 1);
        wr[2 * k] = reinterpret_cast<const uint4*>(W1 + (size_t)rr * cols);
        wr[2 * k + 1] = reinterpret_cast<const uint4*>(W3 + (size_t)rr * cols);
        sr[2 * k] = sr[2 * k + 1] = nullptr;
    }
    pdl_entry();
    float acc[2 * RPM][NB];
    gemv_rows_x<BF16Weights, Fast, TG_TPR, 2 * RPM, UNROLL, NB>(acc, wr, sr, x, cols, nb, cols);
    if (threadIdx.x % TG_TPR == 0) {
#pragma unroll
        for (int k = 0; k < RPM; k++) {
            if (row0 + k >= rows) continue;
#pragma unroll
            for (int b = 0; b < NB; b++) {
                if (b < nb) {
                    const float g = acc[2 * k][b];
                    out[(size_t)b * rows + row0 + k] = g / (1.f + expf(-g)) * acc[2 * k + 1][b];
                }
            }
        }
    }
}
#define GATE_UP_ROWS(NAME, RPM, UNROLL, NB)                                                                \
    extern "C" __global__ void __launch_bounds__(TG_THREADS) NAME(                                           \
        float* __restrict__ out, const uint16_t* __restrict__ W1, const uint16_t* __restrict__ W3,            \
        const float* __restrict__ x, int nb, int rows, int cols) {                                            \
        gate_up_swiglu_rows_body<RPM, UNROLL, NB>(out, W1, W3, x, nb, rows, cols);                            \
    }
GATE_UP_ROWS(tower_gate_up_swiglu_rows_b2, 1, TG_UNROLL, 2)
GATE_UP_ROWS(tower_gate_up_swiglu_rows_b4, 1, TG_UNROLL, 4)
GATE_UP_ROWS(tower_gate_up_swiglu_rows_b8, 1, TG_UNROLL, 8)
GATE_UP_ROWS(tower_gate_up_swiglu_rows2_b4, 2, 1, 4)
GATE_UP_ROWS(tower_gate_up_swiglu_rows2_b8, 2, 1, 8)
// rows2u2: rows2 with both of a thread's chunks of a 2048-column row in
// flight at once (Tower.gateUpRows with PROSCENIUM_GPU_TOWER_GEMVX=t128r4u2).
GATE_UP_ROWS(tower_gate_up_swiglu_rows2u2_b4, 2, 2, 4)
GATE_UP_ROWS(tower_gate_up_swiglu_rows2u2_b8, 2, 2, 8)

// Gate and up with SwiGLU over nb ≤ 8 rows on the tensor cores (Fast only;
// engine/cuda Tower.gateUpRows under fast numerics, where
// towerGateUpUseMMA says): gemv_mma.cuh's body with its two tiles the same
// 16 rows of W1 and of W3, so a block's epilogue has both halves of each
// out[b·rows + r] = silu(W1[r]·x_b)·(W3[r]·x_b), x_b = x + b·cols. The sums'
// order is the tensor-core GEMV's, not tower_gate_up_swiglu's: a take's
// values in a batch are within float32 rounding of its values alone, not its
// bits. Grid: (ceil(rows/16)), GEMV_THREADS; cols a multiple of 32.
extern "C" __global__ void __launch_bounds__(GEMV_THREADS) tower_gate_up_swiglu_mma_fast(
    float* __restrict__ out, const uint16_t* __restrict__ W1, const uint16_t* __restrict__ W3,
    const float* __restrict__ x, int nb, int rows, int cols) {
    __shared__ GemvxMmaPart<2> part;
    const int row0 = blockIdx.x * 16;
    const uint16_t* __restrict__ Wt[2] = {W1, W3};
    gemvx_mma_sums<2, 0>(part, Wt, row0, x, cols, nb, rows, cols);
    if (threadIdx.x < 16 * 8) {
        const int r = threadIdx.x / 8, b = threadIdx.x % 8, row = row0 + r;
        if (b < nb && row < rows) {
            const float g = gemvx_mma_total<2>(part, 0, r, b);
            out[(size_t)b * rows + row] = g / (1.f + expf(-g)) * gemvx_mma_total<2>(part, 1, r, b);
        }
    }
}

// ---------------------------------------------------------------------------
// The feedback row (AudioHeads.FeedbackRow) of the frame's codes
// ctrl->codes[0..ncb): (E_text[sem_tokens[c0]] + Σ_i E_cb_i[c_i]) / div,
// summed in float32 in that order; tables holds the ncb BF16 codebook tables'
// addresses, entries their sizes. A code out of range (the end of speech)
// writes zeros: the step launched ahead of a take's end (two frames in
// flight, engine/cuda frame_ahead_cuda.go) runs on them and its result is
// dropped; a NaN row would reach the routing (its top-k of NaN logits is
// no expert). The frame's counters step as
// tower_advance's (1 row, 1 frame): this is the frame's last launch, and it
// reads neither counter.
__device__ __forceinline__ void feedback_body(float* __restrict__ out, const uint16_t* __restrict__ text_embed,
                                              const int32_t* __restrict__ sem_tokens,
                                              const unsigned long long* __restrict__ tables,
                                              const int32_t* __restrict__ entries, FrameControl* ctrl, int ncb,
                                              int width, float div) {
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
        for (int c = threadIdx.x; c < width; c += blockDim.x) out[c] = 0.f;
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

// One take's feedback row into out from ctrl. Grid: (1), 1024 threads.
extern "C" __global__ void __launch_bounds__(1024) tower_feedback(float* __restrict__ out, const uint16_t* __restrict__ text_embed,
                                          const int32_t* __restrict__ sem_tokens,
                                          const unsigned long long* __restrict__ tables,
                                          const int32_t* __restrict__ entries, FrameControl* ctrl, int ncb,
                                          int width, float div) {
    pdl_entry();
    feedback_body(out, text_embed, sem_tokens, tables, entries, ctrl, ncb, width, div);
}

// The feedback rows of n takes (Tower.FrameRows): block b, the take in slot
// s = slots[b] (slots null: s = b), from ctrl[s] into its row out + s·width
// (each slot keeps its own row until its next step). Grid: (n), 1024 threads.
extern "C" __global__ void __launch_bounds__(1024) tower_feedback_takes(
    float* __restrict__ out, const uint16_t* __restrict__ text_embed, const int32_t* __restrict__ sem_tokens,
    const unsigned long long* __restrict__ tables, const int32_t* __restrict__ entries, FrameControl* ctrl, int ncb,
    int width, float div, const int32_t* __restrict__ slots) {
    pdl_entry();
    const int s = slots ? slots[blockIdx.x] : (int)blockIdx.x;
    feedback_body(out + (size_t)s * width, text_embed, sem_tokens, tables, entries, ctrl + s, ncb, width, div);
}

// gather_rows_body: block i copies row ids[i] of src into row i of dst
// (width T each), after the PDL wait.
template <class T>
__device__ __forceinline__ void gather_rows_body(T* __restrict__ dst, const T* __restrict__ src,
                                                 const int32_t* __restrict__ ids, int width) {
    pdl_entry();
    const T* s = src + (size_t)ids[blockIdx.x] * width;
    T* d = dst + (size_t)blockIdx.x * width;
    for (int c = threadIdx.x; c < width; c += blockDim.x) d[c] = s[c];
}

// Rows of float32 gathered by slot: dst[b] = src[slots[b]] (width floats
// each; a batched frame's backbone input rows from the takes' feedback
// rows). Grid: (n).
extern "C" __global__ void tower_gather_rows(float* __restrict__ dst, const float* __restrict__ src,
                                             const int32_t* __restrict__ slots, int width) {
    gather_rows_body(dst, src, slots, width);
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
    gather_rows_body(dst, src, ids, width);
}

// BF16 column window: dst[r, c] = src[r, col0 + c] for rows × cols of a
// row-major src of src_cols columns (a drawn layer's W_h, the hnorm columns
// of eh_proj, as a matrix of its own: towerDrawnEH). Grid: (rows).
extern "C" __global__ void bf16_copy_cols(uint16_t* __restrict__ dst, const uint16_t* __restrict__ src, int src_cols,
                                          int col0, int cols) {
    pdl_entry();
    const uint16_t* s = src + (size_t)blockIdx.x * src_cols + col0;
    uint16_t* d = dst + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) d[c] = s[c];
}

// ---------------------------------------------------------------------------
// Two projections of one width in one launch (engine/cuda towerDrawnEH):
// y1_b = W1·x1_b for rows1 rows and y2_b = W2·x2_b for rows2 rows, b < nb
// (x_b = x + b·cols; y1_b = y1 + b·rows1, y2_b = y2 + b·rows2), W1's rows
// on the first ⌈rows1/(GROUPS·ROWS)⌉ blocks, W2's on the rest. A drawn
// layer's codebook head (x1 = h_out) and the next layer's W_h (x2 =
// hnorm(h_out)) are independent: one launch where two ran. Each row is summed
// as the gemv.cu instance of the same TPR sums it (gemv_rows_x), so a row's
// values are that GEMV's bits, alone or among nb rows. NB = 1: the first
// weights before the PDL wait when ahead (gemv_rows_entry). From 3 rows the
// two GEMVs on the tower's B-row instances measured as fast or faster
// (docs/PERF.md "ehtab27"): no instance for them.
template <int TPR, int ROWS, int UNROLL, int NB>
__device__ __forceinline__ void tower_gemv2_body(float* __restrict__ y1, const uint16_t* __restrict__ W1,
                                                 const float* __restrict__ x1, int rows1,
                                                 float* __restrict__ y2, const uint16_t* __restrict__ W2,
                                                 const float* __restrict__ x2, int rows2, int nb, int cols,
                                                 int ahead) {
    constexpr int PER_BLOCK = GEMV_THREADS / TPR * ROWS;
    const int blocks1 = (rows1 + PER_BLOCK - 1) / PER_BLOCK;
    const bool second = (int)blockIdx.x >= blocks1;  // the same for the whole block
    float* __restrict__ y = second ? y2 : y1;
    const uint16_t* __restrict__ W = second ? W2 : W1;
    const float* __restrict__ x = second ? x2 : x1;
    const int rows = second ? rows2 : rows1, block = second ? (int)blockIdx.x - blocks1 : (int)blockIdx.x;
    const int j = threadIdx.x % TPR;
    const int row0 = (block * (GEMV_THREADS / TPR) + (int)threadIdx.x / TPR) * ROWS;
    const uint4* wr[ROWS];
    const float* sr[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        wr[r] = reinterpret_cast<const uint4*>(W + (size_t)min(row0 + r, rows - 1) * cols);
        sr[r] = nullptr;
    }
    float acc[ROWS][NB];
    if (NB == 1) {
        typedef float(&Acc1)[ROWS];
        gemv_rows_entry<BF16Weights, Fast, TPR, ROWS, UNROLL>(ahead != 0, reinterpret_cast<Acc1>(acc), wr, sr, x,
                                                              cols);
    } else {
        gemv_rows_x_entry<BF16Weights, Fast, TPR, ROWS, UNROLL, NB, false>(acc, wr, sr, x, cols, nb, cols);
    }
    if (j == 0) {
#pragma unroll
        for (int b = 0; b < NB; b++)
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                if (b < nb && row0 + r < rows) y[(size_t)b * rows + row0 + r] = acc[r][b];
    }
}
// Instances tower_gemv2_t{TPR}r{ROWS}u{UNROLL}b{NB}: ChooseGemv's one-row
// splits (t128r2u2 from 513 columns, Drama 3's; t32r4u2 up to 512, the tiny
// towers'), one row (b1) and two (b2: Tower.rowsVariant's split there).
#define TOWER_GEMV2(TPR, ROWS, UNROLL, NB)                                                                        \
    extern "C" __global__ void __launch_bounds__(GEMV_THREADS) tower_gemv2_t##TPR##r##ROWS##u##UNROLL##b##NB(   \
        float* __restrict__ y1, const uint16_t* __restrict__ W1, const float* __restrict__ x1, int rows1,       \
        float* __restrict__ y2, const uint16_t* __restrict__ W2, const float* __restrict__ x2, int rows2, int nb, \
        int cols, int ahead) {                                                                                  \
        tower_gemv2_body<TPR, ROWS, UNROLL, NB>(y1, W1, x1, rows1, y2, W2, x2, rows2, nb, cols, ahead);         \
    }
TOWER_GEMV2(128, 2, 2, 1)
TOWER_GEMV2(128, 2, 2, 2)
TOWER_GEMV2(32, 4, 2, 1)
TOWER_GEMV2(32, 4, 2, 2)
