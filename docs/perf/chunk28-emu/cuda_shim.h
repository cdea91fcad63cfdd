// Host emulation of the CUDA features kernels/deltanet_chunk.cu uses (after
// docs/perf/flash28-emu/cuda_shim.h): each block's threads are std::threads,
// __syncthreads a block barrier, warp shuffles an exchange through per-thread
// slots between two warp barriers (float and double). Blocks run one at a
// time, so __shared__ = static. The fast intrinsics are modelled at their
// documented error, not better: __expf as the device computes it
// (ex2.approx of x·log2(e) rounded to float32) and rsqrtf, each then moved
// by ±2^-22 relative (the sign from the argument's bits), at or past the
// hardware's approximation error (PTX ISA: ex2.approx.f32 and rsqrt.approx.f32
// within 2 ulp). g++ contracts nothing (-ffp-contract=off), so Fast's fused
// multiply-adds are fmaf where the source says so and separate roundings
// elsewhere (more error than the device's contracted ones, never less).
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__
struct dim3 { unsigned x = 1, y = 1, z = 1; };
extern thread_local dim3 threadIdx;
extern dim3 blockIdx, gridDim, blockDim;
using std::min; using std::max;
// The vector types and bit casts common.cuh's other helpers name (unused here).
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
struct int4 { int x, y, z, w; };
inline float2 make_float2(float a, float b) { return float2{a, b}; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline double __hiloint2double(int hi, int lo) { uint64_t b = ((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo; double d; std::memcpy(&d, &b, 8); return d; }
inline float __int_as_float(uint32_t i) { float f; std::memcpy(&f, &i, 4); return f; }
inline uint32_t __float_as_uint(float f) { uint32_t i; std::memcpy(&i, &f, 4); return i; }
// emu_approx moves an approximate intrinsic's result by ±2^-22 relative.
inline float emu_approx(float r, float x) { return r * (1.f + ((__float_as_uint(x) * 2654435761u) >> 31 ? 0x1p-22f : -0x1p-22f)); }
inline float __expf(float x) { return emu_approx(exp2f(x * 1.44269504f), x); }
inline float rsqrtf(float x) { return emu_approx(1.f / std::sqrt(x), x); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> T __ldg(const T* p) { return *p; }
// Emulation state of the running block.
struct EmuBlock {
    std::barrier<>* block;
    std::vector<std::barrier<>*> warp;
    std::vector<double> xbuf;  // per-thread exchange slot
};
extern EmuBlock* emu;
inline void __syncthreads() { emu->block->arrive_and_wait(); }
template <class T>
inline T emu_shfl(T v, int src_lane) {
    const int t = threadIdx.x, w = t / 32;
    emu->xbuf[t] = (double)v;
    emu->warp[w]->arrive_and_wait();
    const T r = (T)emu->xbuf[w * 32 + (src_lane & 31)];
    emu->warp[w]->arrive_and_wait();
    return r;
}
inline float __shfl_xor_sync(unsigned, float v, int o) { return emu_shfl(v, (threadIdx.x & 31) ^ o); }
inline double __shfl_xor_sync(unsigned, double v, int o) { return emu_shfl(v, (threadIdx.x & 31) ^ o); }
// emu_launch runs kernel() over grid with threads a block.
template <class F>
void emu_launch(dim3 grid, int threads, F kernel) {
    gridDim = grid; blockDim = dim3{(unsigned)threads, 1, 1};
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                blockIdx = dim3{x, y, z};
                std::barrier<> b(threads);
                std::vector<std::barrier<>*> ws;
                for (int i = 0; i < threads / 32; i++) ws.push_back(new std::barrier<>(32));
                EmuBlock eb{&b, ws, std::vector<double>(threads)};
                emu = &eb;
                std::vector<std::thread> th;
                for (int t = 0; t < threads; t++)
                    th.emplace_back([&, t] { threadIdx = dim3{(unsigned)t, 0, 0}; kernel(); });
                for (auto& t : th) t.join();
                for (auto* w : ws) delete w;
            }
}
