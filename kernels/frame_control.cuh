// The frame control block the tower (tower.cu) and the sampler (sampling.cu)
// share: one small struct in device memory holding a take's sampling
// settings, the position and frame counters, the codes a frame forces
// (teacher forcing) and the codes it drew. The host writes the settings
// before a take; the kernels read every counter from here, so one captured
// graph serves every frame and every setting. engine/cuda (frame_control.go)
// mirrors the layout word for word.
#pragma once

#include <stdint.h>

#define FRAME_MAX_CODEBOOKS 16

// The most takes one batched frame advances (engine/cuda Tower.FrameRows):
// row b of its launches is take slot b, with control block ctrl[b] of an
// array of them.
#define FRAME_MAX_TAKES 8

// Error bits of FrameControl.error (codebook c's non-finite logits: bit c).
#define FRAME_ERR_KV_FULL (1 << 30)   // a row past the KV cache's capacity
#define FRAME_ERR_BAD_CODE (1 << 29)  // a code outside its codebook reached an embedding

struct FrameControl {
    uint32_t seed_lo, seed_hi;  // the Philox key
    float temperature, top_p;   // 0: greedy; 1: top-p off
    int32_t top_k;              // 0: off
    int32_t frame;              // frame index in the take (Philox counter word 0)
    int32_t pos;                // tower rows completed (the next row's position)
    int32_t forced;             // 1: take forced_codes instead of drawing
    int32_t forced_codes[FRAME_MAX_CODEBOOKS];
    // The frame's result (FRAME_RESULT_WORDS words from codes): the codes
    // drawn (or forced), end of speech, error bits.
    int32_t codes[FRAME_MAX_CODEBOOKS];
    int32_t end;
    int32_t error;
};
