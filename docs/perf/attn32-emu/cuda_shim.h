// flash28's host emulation (docs/perf/flash28-emu), with __syncwarp and atomicExch for attention_decode.cu: each block's threads are
// std::threads; __syncthreads is a block barrier; warp shuffles exchange through a per-warp buffer
// between two warp barriers. Blocks run one at a time, so __shared__ = static.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <thread>
#include <vector>
#include <functional>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__
#define __align__(n) alignas(n)
struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct float4 { float x, y, z, w; };
struct uint4 { unsigned x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
extern thread_local dim3 threadIdx;
extern dim3 blockIdx, gridDim, blockDim;
using std::min; using std::max;
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __int_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __expf(float x) { return std::exp(x); }
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
// Emulation state of the running block.
struct EmuBlock {
    int threads;
    std::barrier<>* block;
    std::vector<std::barrier<>*> warp;
    std::vector<float> xbuf;  // per thread exchange slot
};
extern EmuBlock* emu;
inline void __syncthreads() { emu->block->arrive_and_wait(); }
inline float emu_shfl(float v, int src_lane) {
    const int t = threadIdx.x, w = t / 32;
    emu->xbuf[t] = v;
    emu->warp[w]->arrive_and_wait();
    const float r = emu->xbuf[w * 32 + (src_lane & 31)];
    emu->warp[w]->arrive_and_wait();
    return r;
}
inline float __shfl_xor_sync(unsigned, float v, int o) { return emu_shfl(v, (threadIdx.x & 31) ^ o); }
inline float __shfl_sync(unsigned, float v, int src) { return emu_shfl(v, src); }
inline double __shfl_xor_sync(unsigned, double v, int o) { return emu_shfl((float)v, (threadIdx.x & 31) ^ o); }  // unused
inline void __threadfence() {}
// launch runs kernel(args) over grid with block threads.
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
                EmuBlock eb{threads, &b, ws, std::vector<float>(threads)};
                emu = &eb;
                std::vector<std::thread> th;
                for (int t = 0; t < threads; t++)
                    th.emplace_back([&, t] { threadIdx = dim3{(unsigned)t, 0, 0}; kernel(); });
                for (auto& t : th) t.join();
                for (auto* w : ws) delete w;
            }
}
struct float2 { float x, y; };
inline float2 make_float2(float a, float b) { return float2{a, b}; }
struct double2 { double x, y; };
inline double2 make_double2(double a, double b) { return double2{a, b}; }
struct int4 { int x, y, z, w; };
struct uint2 { unsigned x, y; };
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline double __hiloint2double(int hi, int lo) { uint64_t b = ((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo; double d; std::memcpy(&d, &b, 8); return d; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
inline int __double2hiint(double d) { return (int)(__double_as_longlong(d) >> 32); }
inline int __double2loint(double d) { return (int)__double_as_longlong(d); }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> T __ldg(const T* p) { return *p; }
inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p += v; return o; }
inline int atomicAdd(int* p, int v) { int o = *p; *p += v; return o; }
inline double fma(double a, double b, double c, int) { return std::fma(a, b, c); }
inline void __syncwarp() { emu->warp[threadIdx.x / 32]->arrive_and_wait(); }
inline unsigned atomicExch(unsigned* p, unsigned v) { unsigned o = *p; *p = v; return o; }
