#pragma once
// Where a routed expert's weights are, for the kernels that read experts by
// id (the gathered GEMVs, the routed gate·up moe_gate_up_*, moe_down,
// moe_down_rows, moe_down_combine_fast).
//
// Without a table (xt null) expert m of a layer is at the packed layout's
// place: W + m·mstride bytes and S + m·sstride scales. With one (a host tier's
// expert cache, engine/cuda expert_cache.go) the layer's experts are wherever
// the cache put them, one at a time: xt points at the layer's row of the
// table, EXPERT_WORDS words per expert — gate_up matrix, gate_up scales,
// down matrix, down scales, as addresses the device reads (a cache slot in
// device memory, or the expert's pinned host copy read over the bus) — offset
// by the part the kernel projects (EXPERT_GATE_UP or EXPERT_DOWN). Bit 0 of
// a part's matrix word is set when the expert is read from host memory (the
// matrices are 256-byte aligned, so the bit is free): expert_count tallies
// hits and misses by it.
#include <stdint.h>

#define EXPERT_WORDS 4
#define EXPERT_GATE_UP 0
#define EXPERT_DOWN 2
#define EXPERT_HOST_BIT 1ull
// Per-layer statistics words (expert_count): hits, misses, then E use counts.
#define EXPERT_STAT_HITS 0
#define EXPERT_STAT_MISSES 1
#define EXPERT_STAT_USES 2

struct ExpertAddr {
    const uint8_t* w;
    const float* s;
};

// expert_addr is expert m's matrix and scales; mstride is in bytes.
__device__ __forceinline__ ExpertAddr expert_addr(const unsigned long long* __restrict__ xt, long long m,
                                                  const uint8_t* W, const float* S, long long mstride,
                                                  long long sstride) {
    if (xt) {
        const unsigned long long* e = xt + m * EXPERT_WORDS;
        return {reinterpret_cast<const uint8_t*>(e[0] & ~EXPERT_HOST_BIT), reinterpret_cast<const float*>(e[1])};
    }
    return {W + m * mstride, S ? S + m * sstride : nullptr};
}

// expert_count tallies one routed (row, expert) pair of a step in the
// layer's statistics (xs null: none kept): a hit when the table reads the
// expert on the device, a miss when over the bus, and its use.
__device__ __forceinline__ void expert_count(unsigned int* xs, const unsigned long long* __restrict__ xt,
                                             long long m) {
    if (!xs || !xt) return;
    atomicAdd(xs + EXPERT_STAT_USES + m, 1u);
    atomicAdd(xs + ((xt[m * EXPERT_WORDS] & EXPERT_HOST_BIT) ? EXPERT_STAT_MISSES : EXPERT_STAT_HITS), 1u);
}
