// Host emulation of the CUDA features kernels/deltanet.cu's cluster step uses
// (after docs/perf/chunk28-emu/cuda_shim.h): every thread of a cluster's
// blocks a std::thread, all of a cluster's blocks at once; __syncthreads a
// block barrier; warp shuffles an exchange through per-thread slots between
// two warp barriers; the cluster barrier's arrive and wait a std::barrier's
// arrive and wait (the same phases); cp.async a plain copy (its wait then
// nothing); a block's __shared__ arrays one per cluster rank (run.sh rewrites
// the declarations), so dnc_push, which stores into the same array of
// another rank, is a store at that rank's copy. The fast intrinsics at their
// documented error, not better: __expf as ex2.approx of x·log2(e) and rsqrtf,
// each moved by ±2^-22 relative; g++ contracts nothing (-ffp-contract=off).
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <optional>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __restrict__
struct dim3 { unsigned x = 1, y = 1, z = 1; };
extern thread_local dim3 threadIdx, blockIdx;
extern dim3 gridDim, blockDim;
using std::min; using std::max;
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
inline float emu_approx(float r, float x) { return r * (1.f + ((__float_as_uint(x) * 2654435761u) >> 31 ? 0x1p-22f : -0x1p-22f)); }
inline float __expf(float x) { return emu_approx(exp2f(x * 1.44269504f), x); }
inline float rsqrtf(float x) { return emu_approx(1.f / std::sqrt(x), x); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> T __ldg(const T* p) { return *p; }
struct EmuBlock {
    std::barrier<>* block;
    std::vector<std::barrier<>*> warp;
    std::vector<double> xbuf;  // per-thread exchange slot
};
extern thread_local EmuBlock* emu;
extern std::barrier<>* emu_cluster;
extern thread_local std::optional<std::barrier<>::arrival_token> emu_token;
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
// The cluster's primitives (kernels/deltanet.cu's, removed by run.sh).
inline unsigned emu_rank() { return blockIdx.y; }
inline unsigned dnc_rank() { return emu_rank(); }
inline void dnc_arrive() { emu_token.emplace(emu_cluster->arrive()); }
inline void dnc_wait() { emu_cluster->wait(std::move(*emu_token)); emu_token.reset(); }
// ssp_all[DNC_CLUSTER][DNC_CLUSTER]: rank r's copy is row r.
#define dnc_push(p, rank, v) ((p)[((int)(rank) - (int)emu_rank()) * DNC_CLUSTER] = (v))
inline void dnc_copy(float* dst, const float* src) { *dst = *src; }
inline void dnc_copy16(float* dst, const float* src) { std::memcpy(dst, src, 16); }
inline void dnc_copied() {}
// emu_launch runs kernel() over grid with threads a block, the blocks of
// one (x, z) — a cluster of gridDim.y blocks — at once.
template <class F>
void emu_launch(dim3 grid, int threads, F kernel) {
    gridDim = grid; blockDim = dim3{(unsigned)threads, 1, 1};
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned x = 0; x < grid.x; x++) {
            const int nb = grid.y;
            std::barrier<> cluster(nb * threads);
            emu_cluster = &cluster;
            std::vector<EmuBlock> blocks;
            std::vector<std::barrier<>*> own;
            for (int y = 0; y < nb; y++) {
                auto* b = new std::barrier<>(threads);
                std::vector<std::barrier<>*> ws;
                for (int i = 0; i < threads / 32; i++) ws.push_back(new std::barrier<>(32));
                own.push_back(b);
                for (auto* w : ws) own.push_back(w);
                blocks.push_back(EmuBlock{b, ws, std::vector<double>(threads)});
            }
            std::vector<std::thread> th;
            for (int y = 0; y < nb; y++)
                for (int t = 0; t < threads; t++)
                    th.emplace_back([&, y, t] {
                        threadIdx = dim3{(unsigned)t, 0, 0};
                        blockIdx = dim3{x, (unsigned)y, z};
                        emu = &blocks[y];
                        kernel();
                    });
            for (auto& t : th) t.join();
            for (auto* b : own) delete b;
        }
}
