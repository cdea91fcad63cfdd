// The decode step's gated full attention in one launch (fast numerics only;
// engine/cuda Queue.attentionDecode, $PROSCENIUM_GPU_ATTN_DECODE; issues 27
// and 30): what attention.cu's attn_prep, attn_scores, attn_partial and
// attn_combine do for a step's rows in four dependent launches — the q/k
// norms, partial RoPE, the KV append, grouped-query attention over the cache
// and the sigmoid gate — as a flash-decode whose splits are merged by the
// last block to finish (fused.cuh last_of). Exact keeps the four kernels and
// their bits; this kernel computes as Fast does (float32 sums in any order,
// fused multiply-adds, __expf), within fast's tolerance of engine/cpu.
//
// Rows: B rows of B takes (the B-row step) or one row (slots null: slot 0).
// Row b is the take in slot s = slots[b]: its position pos = posp[s] (the
// rows cached before the step), its caches kc, vc + s·slot_stride floats
// ([capacity, nkv, hd] each), its projected row proj + b·pw (per query head
// [query | gate], then k and v), its output attn + b·nh·hd. A row at or past
// the capacity is not cached and its output is NaN (attention.cu's rule).
//
// Grid (splits, nkv·groups, B), DEC_THREADS threads. Block (sp, y, b) takes
// the hb = min(G, DEC_HG) query heads of group y % groups of KV head
// y / groups (G = nh/nkv heads share a KV head, groups = ceil(G/hb)) over
// split sp of the pos+1 keys row b sees: the keys are cut into
// used = min(splits, ceil((pos+1)/DEC_ROWS)) ranges on the device (a short
// cache in few splits, so the merge stays short; a captured step follows
// the position), blocks sp ≥ used leave at once.
//
// The new row (key pos) is not read from the cache: the block whose range
// holds it norms and rotates the row's key itself (its value straight from
// proj), and the block of group 0 among them appends both to the cache. No
// block of the launch reads cache row pos, so the append needs no ordering
// within the launch; the next step reads it after this grid completed.
//
// A block: (1) issues its first DEC_ROWS keys into registers (warp w rows
// w, w+8, …) and values into shared memory (cp.async); (2) warp j norms
// query head j (and one warp the new key), then rotates and scales it;
// (3) each warp dots its keys with every head's query, the lanes' partial
// sums of the hb heads reduced across the warp by a transposed butterfly
// (9 shuffles for 8 sums, not 40); (4) warp j takes head j's softmax over
// the chunk (online across chunks); (5) thread t adds e·v for head dims
// 4(t%64)… of heads t/64 and t/64+4. It writes its partial (m, l, o per
// head) and counts itself in; the last of the used blocks of (b, y)
// merges them: o = Σ o_s·e^(m_s−M) / Σ l_s·e^(m_s−M), gated.
// attn_decode_ahead_fast issues (1)'s cached rows, and reads the row's slot
// and position, before its PDL wait (docs/PERF.md "dec28").
#include "common.cuh"
#include "fused.cuh"

#define DEC_THREADS 256
#define DEC_WARPS (DEC_THREADS / 32)  // = DEC_HG: warp j takes head j's norm and softmax
#define DEC_HG 8                      // query heads a block takes (the butterfly's 8 sums)
#define DEC_ROWS 32                   // cache rows staged at once, the fewest a split takes (a lane each in the softmax)
#define DEC_KPW (DEC_ROWS / DEC_WARPS)  // rows per warp in the scores
#define DEC_VPT (DEC_ROWS * 32 * DEC_MAXD4 / DEC_THREADS)  // a chunk's value float4s per thread
#define DEC_MAXD4 2                   // float4s of head dims per lane: head_dim ≤ 256
#define DEC_MAX_SPLITS 32             // engine/cuda decodeMaxSplits (a lane each in the merge)
#define DEC_PART_HEAD 4               // a head's partial: m, l, 2 unused (alignment), then hd floats
#define DEC_TAIL 16                   // splits' outputs a merging thread loads at once (DEC_MAX_SPLITS a multiple)

// cp.async of 16 bytes global → shared (sm_80 and later; elsewhere a copy).
__device__ __forceinline__ void dec_cp16(void* smem, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
#else
    *reinterpret_cast<float4*>(smem) = *reinterpret_cast<const float4*>(src);
#endif
}
__device__ __forceinline__ void dec_cp_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
#endif
}

__device__ __forceinline__ float dec_dot4(float4 a, float4 b, float acc) {
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    return fmaf(a.w, b.w, acc);
}
__device__ __forceinline__ float4 dec_fma4(float e, float4 v, float4 acc) {
    return make_float4(fmaf(e, v.x, acc.x), fmaf(e, v.y, acc.y), fmaf(e, v.z, acc.z), fmaf(e, v.w, acc.w));
}
__device__ __forceinline__ float4 dec_scale4(float4 a, float s) { return make_float4(a.x * s, a.y * s, a.z * s, a.w * s); }
__device__ __forceinline__ float dec_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

// dec_sum8 sums each of the lanes' eight values v[0..7] over the warp and
// returns to lane l the total of v[dec_head(l)]: at each of the first three
// butterfly steps a lane keeps half its values and sends the other half to
// its partner, so 4 + 2 + 1 shuffles leave one value summed over 8 lanes,
// and two more sum it over the warp.
__device__ __forceinline__ int dec_head(int lane) { return (lane >> 2) & 7; }
__device__ __forceinline__ float dec_sum8(const float (&v)[DEC_HG], int lane) {
    const bool b4 = lane & 16, b2 = lane & 8, b1 = lane & 4;  // the lane's head bits 4, 2, 1
    float u[4], w[2];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float send = b4 ? v[k] : v[k + 4];
        u[k] = (b4 ? v[k + 4] : v[k]) + __shfl_xor_sync(FULL_MASK, send, 16);
    }
#pragma unroll
    for (int k = 0; k < 2; k++) {
        const float send = b2 ? u[k] : u[k + 2];
        w[k] = (b2 ? u[k + 2] : u[k]) + __shfl_xor_sync(FULL_MASK, send, 8);
    }
    const float send = b1 ? w[0] : w[1];
    float x = (b1 ? w[1] : w[0]) + __shfl_xor_sync(FULL_MASK, send, 4);
    x += __shfl_xor_sync(FULL_MASK, x, 2);
    x += __shfl_xor_sync(FULL_MASK, x, 1);
    return x;
}

// dec_norm: the warp's zero-centred RMS norm of the hd values x (lane l
// holds dims 4(l+32i)…) with gain w, into dst (shared memory).
__device__ __forceinline__ void dec_norm(float* dst, const float4 (&x)[DEC_MAXD4], const float* w, int hd, float eps,
                                         int lane) {
    const int hd4 = hd >> 2;
    float ss = 0.f;
#pragma unroll
    for (int i = 0; i < DEC_MAXD4; i++) ss = dec_dot4(x[i], x[i], ss);  // zeros past hd
    const float inv = Fast::inv_rms(warp_sum(ss), hd, eps);
#pragma unroll
    for (int i = 0; i < DEC_MAXD4; i++) {
        const int d4 = lane + 32 * i;
        if (d4 >= hd4) continue;
        const float* wd = w + 4 * d4;  // scalar loads: a norm's gain need not be 16-byte aligned in the arena
        const float4 g = make_float4(wd[0], wd[1], wd[2], wd[3]);
        reinterpret_cast<float4*>(dst)[d4] =
            make_float4(Fast::zc_norm(x[i].x, inv, g.x), Fast::zc_norm(x[i].y, inv, g.y),
                        Fast::zc_norm(x[i].z, inv, g.z), Fast::zc_norm(x[i].w, inv, g.w));
    }
}

// dec_rotate: the warp's rotate-half RoPE of the first rot dims of v (shared
// memory, in place) by the table cs (cos, sin of pair i), then every dim
// times mul (the scores' scale for a query, 1 for the key).
__device__ __forceinline__ void dec_rotate(float* v, const float2* cs, int hd, int rot, float mul, int lane) {
    const int half = rot / 2;
    float y[4 * DEC_MAXD4];
#pragma unroll
    for (int i = 0; i < 4 * DEC_MAXD4; i++) {
        const int d = lane + 32 * i;
        if (d >= hd) continue;
        float r = v[d];
        if (d < rot) {
            const float2 c = cs[d < half ? d : d - half];
            r = d < half ? r * c.x - v[d + half] * c.y : r * c.x + v[d - half] * c.y;
        }
        y[i] = r * mul;
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 4 * DEC_MAXD4; i++) {
        const int d = lane + 32 * i;
        if (d < hd) v[d] = y[i];
    }
}

// attn_decode_body: attn_decode_fast and attn_decode_ahead_fast (below).
// part holds, per (b, y) and split, hb partials of DEC_PART_HEAD + hd
// floats; counters one zero uint32 per (b, y) (left zero); scale is 1/√hd;
// splits ≤ DEC_MAX_SPLITS. AHEAD: the row's slot and position and its first
// chunk's cached keys and values are read before the PDL wait.
template <bool AHEAD>
__device__ __forceinline__ void attn_decode_body(float* attn, float* part, unsigned int* counters, float* kc, float* vc,
                                                 const float* proj, const float* qnorm, const float* knorm,
                                                 const int32_t* posp, const int32_t* slots, long long slot_stride,
                                                 int capacity, int nh, int nkv, int hd, int rot, double theta, float eps,
                                                 float scale, int splits) {
    __shared__ float4 vs[DEC_ROWS * 32 * DEC_MAXD4];  // the chunk's values [row][hd/4]
    __align__(16) __shared__ float qs[DEC_HG * 128 * DEC_MAXD4];  // the queries, normed, rotated, scaled [head][hd]
    __align__(16) __shared__ float kn[128 * DEC_MAXD4];           // the new row's key, normed and rotated
    __shared__ float2 cs[64 * DEC_MAXD4];                         // cos, sin of the row's angles
    __shared__ float sc[DEC_ROWS][DEC_HG];                        // the chunk's scores, then their e
    __shared__ float corr[DEC_HG];
    __shared__ float mw[DEC_HG][DEC_MAX_SPLITS];                  // the merge's weights
    __shared__ float minv[DEC_HG];
    // inv_freq of pair threadIdx.x as attn_prep computes it (the CPU's
    // float32: pow in double): it needs no input, so its double-precision
    // latency runs before the PDL wait, beside the kernels in front.
    const int half = rot / 2;  // ≤ 128 < DEC_THREADS
    float invf = 0.f;
    if (threadIdx.x < half) {
        const float e = __fdiv_rn((float)(2 * threadIdx.x), (float)rot);
        invf = (float)(1.0 / (double)(float)pow(theta, (double)e));
    }
    if (AHEAD)
        pdl_launch_dependents();
    else
        pdl_entry();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int sp = blockIdx.x, b = blockIdx.z;
    const int G = nh / nkv, hb = min(G, DEC_HG), groups = (G + hb - 1) / hb;
    const int kvh = blockIdx.y / groups, hg = blockIdx.y % groups;
    const int h0 = kvh * G + hg * hb;  // the block's first query head
    const int nhb = min(hb, G - hg * hb);  // its heads
    const int hd4 = hd >> 2, pw = (2 * nh + 2 * nkv) * hd;
    const int slot = slots ? slots[b] : 0;
    kc += (long long)slot * slot_stride;
    vc += (long long)slot * slot_stride;
    const int pos = __ldcg(posp + slot);
    const float* prow = proj + (size_t)b * pw;
    float* out = attn + ((size_t)b * nh + h0) * hd;
    // A row at the capacity: NaN, nothing cached (AHEAD: after the wait).
    auto at_capacity = [&]() {
        if (sp == 0)
            for (int i = threadIdx.x; i < nhb * hd; i += DEC_THREADS) out[i] = __int_as_float(0x7fc00000);
    };
    if (!AHEAD && pos >= capacity) return at_capacity();
    const int n = pos + 1;  // the keys the row sees: the cached rows and its own
    const int used = min(splits, (n + DEC_ROWS - 1) / DEC_ROWS);
    if (!AHEAD && sp >= used) return;
    const int per = (n + used - 1) / used;
    const int r0 = min(sp * per, n), r1 = min(r0 + per, n);
    const bool has_new = r0 <= pos && pos < r1;
    const size_t kv_at = (size_t)kvh * hd;  // the KV head's offset in a cache row
    const int kvw = nkv * hd;

    // (1) A chunk's loads: keys of rows cb + warp + 8c into kr, values into vs
    // (the new row's value from proj: it is not cached yet). The first
    // chunk's values by cp.async; a later chunk's into registers vr while
    // the chunk before it is still summed (load_next), then into vs.
    float4 kr[DEC_KPW][DEC_MAXD4];
    auto load_keys = [&](int cb, int cnt) {
#pragma unroll
        for (int c = 0; c < DEC_KPW; c++) {
            const int cc = warp + DEC_WARPS * c, row = cb + cc;
#pragma unroll
            for (int i = 0; i < DEC_MAXD4; i++) {
                const int d4 = lane + 32 * i;
                kr[c][i] = cc < cnt && row < pos && d4 < hd4
                               ? reinterpret_cast<const float4*>(kc + (size_t)row * kvw + kv_at)[d4]
                               : make_float4(0.f, 0.f, 0.f, 0.f);
            }
        }
    };
    auto load_chunk = [&](int cb) {
        const int cnt = min(DEC_ROWS, r1 - cb);
        load_keys(cb, cnt);
        for (int e = threadIdx.x; e < cnt * hd4; e += DEC_THREADS) {
            const int c = e / hd4, d4 = e - c * hd4, row = cb + c;
            if (row < pos)
                dec_cp16(&vs[e], vc + (size_t)row * kvw + kv_at + 4 * d4);
            else  // row == pos: the new row's value
                vs[e] = reinterpret_cast<const float4*>(prow + (size_t)(2 * nh + nkv + kvh) * hd)[d4];
        }
    };
    // AHEAD: the first chunk's cached keys and values (rows before pos)
    // before the wait, the new row's value (row pos, from proj) after it; no
    // block leaves before the wait (pdl_sass_test.go).
    auto load_cached = [&](int cb) {
        const int cnt = min(DEC_ROWS, r1 - cb);
        load_keys(cb, cnt);
        for (int e = threadIdx.x; e < cnt * hd4; e += DEC_THREADS) {
            const int c = e / hd4, d4 = e - c * hd4, row = cb + c;
            if (row < pos) dec_cp16(&vs[e], vc + (size_t)row * kvw + kv_at + 4 * d4);
        }
    };
    auto load_new_value = [&](int cb) {
        const int c = pos - cb;  // the new row's place in the chunk (has_new, in the first chunk)
        if (c >= DEC_ROWS) return;
        for (int d4 = threadIdx.x; d4 < hd4; d4 += DEC_THREADS)
            vs[c * hd4 + d4] = reinterpret_cast<const float4*>(prow + (size_t)(2 * nh + nkv + kvh) * hd)[d4];
    };
    if (AHEAD) {
        const bool live = pos < capacity && sp < used;
        if (live && r0 < r1) load_cached(r0);
        pdl_wait();
        if (pos >= capacity) return at_capacity();
        if (sp >= used) return;
        if (has_new) load_new_value(r0);
    } else if (r0 < r1) {
        load_chunk(r0);
    }
    float4 vr[DEC_VPT];
    auto load_next = [&](int cb) {
        const int cnt = min(DEC_ROWS, r1 - cb);
        load_keys(cb, cnt);
#pragma unroll
        for (int k = 0; k < DEC_VPT; k++) {
            const int e = threadIdx.x + DEC_THREADS * k, c = e / hd4, d4 = e - c * hd4, row = cb + c;
            vr[k] = e >= cnt * hd4 ? make_float4(0.f, 0.f, 0.f, 0.f)
                    : row < pos   ? reinterpret_cast<const float4*>(vc + (size_t)row * kvw + kv_at)[d4]
                                  : reinterpret_cast<const float4*>(prow + (size_t)(2 * nh + nkv + kvh) * hd)[d4];
        }
    };

    // (2) The queries of the block's heads (warp j: head h0 + j) and, in the
    // block that holds the new row, its key (warp nhb, or 0 when all warps
    // have a head); the rotation table of the row's position.
    const int kw = nhb < DEC_WARPS ? nhb : 0;
    const bool key_warp = has_new && warp == kw;
    {
        float4 xq[DEC_MAXD4], xk[DEC_MAXD4];
#pragma unroll
        for (int i = 0; i < DEC_MAXD4; i++) {
            const int d4 = lane + 32 * i;
            const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
            xq[i] = warp < nhb && d4 < hd4 ? reinterpret_cast<const float4*>(prow + (size_t)(h0 + warp) * 2 * hd)[d4] : z;
            xk[i] = key_warp && d4 < hd4 ? reinterpret_cast<const float4*>(prow + (size_t)(2 * nh + kvh) * hd)[d4] : z;
        }
        if (threadIdx.x < half) {  // the angle's product in float32 as attn_prep's; sin and cos in float32
            float sn, cn;
            sincosf(__fmul_rn((float)pos, invf), &sn, &cn);
            cs[threadIdx.x] = make_float2(cn, sn);
        }
        if (warp < nhb) dec_norm(qs + warp * hd, xq, qnorm, hd, eps, lane);
        if (key_warp) dec_norm(kn, xk, knorm, hd, eps, lane);
    }
    __syncthreads();
    if (warp < nhb) dec_rotate(qs + warp * hd, cs, hd, rot, scale, lane);
    if (key_warp) {
        dec_rotate(kn, cs, hd, rot, 1.f, lane);
        __syncwarp();
        if (hg == 0) {  // the append: this KV head's key and value at row pos
            const float4* vsrc = reinterpret_cast<const float4*>(prow + (size_t)(2 * nh + nkv + kvh) * hd);
            float4* kd = reinterpret_cast<float4*>(kc + (size_t)pos * kvw + kv_at);
            float4* vd = reinterpret_cast<float4*>(vc + (size_t)pos * kvw + kv_at);
            for (int d4 = lane; d4 < hd4; d4 += 32) {
                kd[d4] = reinterpret_cast<const float4*>(kn)[d4];
                vd[d4] = vsrc[d4];
            }
        }
    }
    __syncthreads();
    float4 q[DEC_HG][DEC_MAXD4];
#pragma unroll
    for (int j = 0; j < DEC_HG; j++)
#pragma unroll
        for (int i = 0; i < DEC_MAXD4; i++) {
            const int d4 = lane + 32 * i;
            q[j][i] = j < nhb && d4 < hd4 ? reinterpret_cast<const float4*>(qs + j * hd)[d4] : make_float4(0.f, 0.f, 0.f, 0.f);
        }

    // The running softmax: warp j's m and l of head j; thread t's outputs of
    // heads ja, jb at dims 4·d4….
    float m_run = -INFINITY, l_run = 0.f;
    const int d4o = threadIdx.x & 63, ja = threadIdx.x >> 6, jb = ja + 4;
    float4 oa = make_float4(0.f, 0.f, 0.f, 0.f), ob = oa;
    for (int cb = r0; cb < r1; cb += DEC_ROWS) {
        const int cnt = min(DEC_ROWS, r1 - cb);
        const bool more = cb + DEC_ROWS < r1;
        if (cb == r0) dec_cp_wait();
        __syncthreads();  // the values and (chunk 0) the queries are in
        // (3) Scores of the warp's rows against every head.
#pragma unroll
        for (int c = 0; c < DEC_KPW; c++) {
            const int cc = warp + DEC_WARPS * c;
            if (cc >= cnt) continue;  // the warp's rows past the chunk: warp-uniform
            float4 k[DEC_MAXD4];
#pragma unroll
            for (int i = 0; i < DEC_MAXD4; i++) {
                const int d4 = lane + 32 * i;
                k[i] = cb + cc == pos && d4 < hd4 ? reinterpret_cast<const float4*>(kn)[d4] : kr[c][i];
            }
            float p[DEC_HG];
#pragma unroll
            for (int j = 0; j < DEC_HG; j++) {
                float acc = 0.f;
#pragma unroll
                for (int i = 0; i < DEC_MAXD4; i++) acc = dec_dot4(q[j][i], k[i], acc);
                p[j] = acc;
            }
            const float s = dec_sum8(p, lane);
            if ((lane & 3) == 0 && dec_head(lane) < nhb) sc[cc][dec_head(lane)] = s;
        }
        if (more) load_next(cb + DEC_ROWS);  // kr is read: the next keys, and values, in flight
        __syncthreads();
        // (4) The chunk's softmax, online: warp j, head j, lane c row c.
        if (warp < nhb) {
            const float s = lane < cnt ? sc[lane][warp] : -INFINITY;
            const float mn = fmaxf(m_run, dec_max(s));
            const float cr = m_run == mn ? 1.f : __expf(m_run - mn);  // m_run −inf: 0
            const float e = lane < cnt ? __expf(s - mn) : 0.f;
            if (lane < cnt) sc[lane][warp] = e;
            l_run = l_run * cr + warp_sum(e);
            m_run = mn;
            if (lane == 0) corr[warp] = cr;
        }
        __syncthreads();
        // (5) o = o·corr + Σ e·v.
        if (d4o < hd4) {
            const bool hasa = ja < nhb, hasb = jb < nhb;
            if (hasa) oa = dec_scale4(oa, corr[ja]);
            if (hasb) ob = dec_scale4(ob, corr[jb]);
            for (int c = 0; c < cnt; c++) {
                const float4 v = vs[c * hd4 + d4o];
                if (hasa) oa = dec_fma4(sc[c][ja], v, oa);
                if (hasb) ob = dec_fma4(sc[c][jb], v, ob);
            }
        }
        if (!more) break;
        __syncthreads();  // vs and sc are read
#pragma unroll
        for (int k = 0; k < DEC_VPT; k++) {
            const int e = threadIdx.x + DEC_THREADS * k;
            if (e < min(DEC_ROWS, r1 - cb - DEC_ROWS) * hd4) vs[e] = vr[k];
        }
    }

    // The block's partial, then the merge in the last of the used blocks.
    const int hstride = DEC_PART_HEAD + hd;
    const size_t rec = (size_t)hb * hstride;
    float* mine = part + (((size_t)b * gridDim.y + blockIdx.y) * splits + sp) * rec;
    if (warp < nhb && lane == 0) {
        mine[warp * hstride] = m_run;
        mine[warp * hstride + 1] = l_run;
    }
    if (d4o < hd4) {
        if (ja < nhb) reinterpret_cast<float4*>(mine + ja * hstride + DEC_PART_HEAD)[d4o] = oa;
        if (jb < nhb) reinterpret_cast<float4*>(mine + jb * hstride + DEC_PART_HEAD)[d4o] = ob;
    }
    if (!last_of(counters + (size_t)b * gridDim.y + blockIdx.y, used)) return;
    const float* all = part + ((size_t)b * gridDim.y + blockIdx.y) * splits * rec;
    // The splits' outputs of heads ja, jb at dims 4·d4o…, DEC_TAIL splits a
    // batch, the first batch and the gates issued before the weights (which
    // they do not need): one L2 latency for both, not one after the other.
    const bool oka = ja < nhb && d4o < hd4, okb = jb < nhb && d4o < hd4;
    const float4* srca = reinterpret_cast<const float4*>(all + ja * hstride + DEC_PART_HEAD) + d4o;
    const float4* srcb = reinterpret_cast<const float4*>(all + jb * hstride + DEC_PART_HEAD) + d4o;
    const size_t rec4 = rec / 4;
    const float4 z4 = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 va[DEC_TAIL], vb[DEC_TAIL];
#pragma unroll
    for (int k = 0; k < DEC_TAIL; k++) {
        va[k] = oka && k < used ? __ldcg(srca + k * rec4) : z4;
        vb[k] = okb && k < used ? __ldcg(srcb + k * rec4) : z4;
    }
    const float4 ga = oka ? reinterpret_cast<const float4*>(prow + (size_t)(h0 + ja) * 2 * hd + hd)[d4o] : z4;
    const float4 gb = okb ? reinterpret_cast<const float4*>(prow + (size_t)(h0 + jb) * 2 * hd + hd)[d4o] : z4;
    if (warp < nhb) {  // head warp's weights: lane s split s (l = 0: it saw no key)
        float ls = 0.f, ms = -INFINITY;
        if (lane < used) {
            ls = __ldcg(all + lane * rec + warp * hstride + 1);
            if (ls > 0.f) ms = __ldcg(all + lane * rec + warp * hstride);
        }
        const float M = dec_max(ms);
        const float w = ls > 0.f ? __expf(ms - M) : 0.f;
        const float L = warp_sum(ls * w);
        mw[warp][lane] = w;  // 0 past the used splits
        if (lane == 0) minv[warp] = 1.f / L;
    }
    __syncthreads();
    float4 acca = z4, accb = z4;
    for (int s0 = 0;;) {
#pragma unroll
        for (int k = 0; k < DEC_TAIL; k++) {
            acca = dec_fma4(mw[ja][s0 + k], va[k], acca);
            accb = dec_fma4(mw[jb][s0 + k], vb[k], accb);
        }
        s0 += DEC_TAIL;
        if (s0 >= used) break;
#pragma unroll
        for (int k = 0; k < DEC_TAIL; k++) {
            va[k] = oka && s0 + k < used ? __ldcg(srca + (s0 + k) * rec4) : z4;
            vb[k] = okb && s0 + k < used ? __ldcg(srcb + (s0 + k) * rec4) : z4;
        }
    }
    if (oka) {
        const float il = minv[ja];
        reinterpret_cast<float4*>(out + (size_t)ja * hd)[d4o] =
            make_float4(acca.x * il * Fast::sigmoid(ga.x), acca.y * il * Fast::sigmoid(ga.y),
                        acca.z * il * Fast::sigmoid(ga.z), acca.w * il * Fast::sigmoid(ga.w));
    }
    if (okb) {
        const float il = minv[jb];
        reinterpret_cast<float4*>(out + (size_t)jb * hd)[d4o] =
            make_float4(accb.x * il * Fast::sigmoid(gb.x), accb.y * il * Fast::sigmoid(gb.y),
                        accb.z * il * Fast::sigmoid(gb.z), accb.w * il * Fast::sigmoid(gb.w));
    }
}

// attn_decode_fast: see the top of the file. attn_decode_ahead_fast: the
// same with the row's slot and position and its first chunk's cached keys
// and values read before the PDL wait, so that they stream while the q/k/v
// projection finishes (docs/PERF.md "dec28"). The caller promises that the
// launch before it is that projection, letting it start only after its own
// wait (gemv.cuh pdl_entry_waited), so that every kernel before it — the
// layer's previous step, the cache's last writer, and the step that
// advanced the position — has finished. The same values as attn_decode_fast.
#define DEC_ENTRY(NAME, AHEAD)                                                                                        \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS)                                                         \
        NAME(float* attn, float* part, unsigned int* counters, float* kc, float* vc, const float* proj,              \
             const float* qnorm, const float* knorm, const int32_t* posp, const int32_t* slots, long long slot_stride, \
             int capacity, int nh, int nkv, int hd, int rot, double theta, float eps, float scale, int splits) {      \
        attn_decode_body<AHEAD>(attn, part, counters, kc, vc, proj, qnorm, knorm, posp, slots, slot_stride, capacity, \
                                nh, nkv, hd, rot, theta, eps, scale, splits);                                         \
    }
DEC_ENTRY(attn_decode_fast, false)
DEC_ENTRY(attn_decode_ahead_fast, true)
