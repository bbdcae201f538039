// Row softmax, log_softmax and logsumexp: Softmax Lab's CUDA kernels.
//
// x and y are C-contiguous (rows, n); every row is reduced independently.
// T is the storage type (half_t, float, double), C = Traits<T>::C the type
// the arithmetic runs in (float for half_t).  kind: 0 softmax, 1
// log_softmax, 2 logsumexp (y then holds one value per row).  The
// temperature is folded in after the shift: (x - m) * ta * tb (see tscale).  Offsets are
// 64-bit.  VEC > 1 variants use 16-byte loads and stores and need both
// pointers 16-byte aligned and n % VEC == 0 (the launcher checks; VEC == 1
// takes anything).
//
// Paths (chosen by compute/backends/kernels.py, launch_plan):
//   softmax_warp         one warp per row, the row in registers (n <= 32 * PER)
//   softmax_block        one block per row, the row in dynamic shared memory
//   softmax_stream       one block per row, online (m, d) pass, then a write pass
//   softmax_split_*      several blocks per row: partial (m, d) per chunk, then
//                        every block merges its row's partials and writes its chunk
//
// compute/backends/emulate.py replays each decomposition in NumPy.

#include "softmax_common.cuh"

template <typename T, int VEC>
__device__ __forceinline__ void load_pack(const T* __restrict__ p, typename Traits<T>::C* out) {
    const Pack<T, VEC> pk = *reinterpret_cast<const Pack<T, VEC>*>(p);
#pragma unroll
    for (int k = 0; k < VEC; ++k) out[k] = to_c(pk.v[k]);
}
template <typename T, int VEC>
__device__ __forceinline__ void store_pack(T* __restrict__ p, const typename Traits<T>::C* in) {
    Pack<T, VEC> pk;
#pragma unroll
    for (int k = 0; k < VEC; ++k) pk.v[k] = from_c<T>(in[k]);
    *reinterpret_cast<Pack<T, VEC>*>(p) = pk;
}

// The output value of one element for kind 0 (softmax) or 1 (log_softmax).
// Softmax multiplies by inv_d = 1 / d (one division per row, not per
// element: an IEEE division is a subroutine call in SASS, whose saved
// registers ptxas counts as spills); 0 * inf = NaN keeps the all -inf rows NaN.
template <typename C>
__device__ __forceinline__ C finish_value(C x, C m, C inv_d, C log_d, C ta, C tb, int kind) {
    if (kind == 1) return log_shift(x, m, ta, tb) - log_d;
    return wgt(x, m, ta, tb) * inv_d;
}

// ---------------------------------------------------------------------------
// Warp per row, the row in registers.  Lane l holds elements
// (j * 32 + l) * VEC + k for j < PER / VEC, k < VEC; missing ones are -inf.
// ---------------------------------------------------------------------------
template <typename T, int VEC, int PER>
__global__ void __launch_bounds__(128, 1)  // (128) alone made ptxas spill a few bytes
    softmax_warp(const T* __restrict__ x, T* __restrict__ y, long long rows, long long n, typename Traits<T>::C ta, typename Traits<T>::C tb, int kind) {
    typedef typename Traits<T>::C C;
    static_assert(PER % VEC == 0, "PER must be a multiple of VEC");
    const long long row = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;  // the whole warp leaves together
    const int lane = threadIdx.x & 31;
    const T* __restrict__ xr = x + row * n;
    C v[PER];
#pragma unroll
    for (int j = 0; j < PER / VEC; ++j) {
        const long long base = ((long long)j * 32 + lane) * VEC;
        if (VEC > 1) {
            if (base < n) {
                load_pack<T, VEC>(xr + base, v + j * VEC);
            } else {
#pragma unroll
                for (int k = 0; k < VEC; ++k) v[j * VEC + k] = neg_inf<C>();
            }
        } else {
            v[j] = base < n ? to_c(xr[base]) : neg_inf<C>();
        }
    }
    C m = neg_inf<C>();
#pragma unroll
    for (int i = 0; i < PER; ++i) m = nmax(m, v[i]);
    m = warp_max(m);
    C d = C(0);
    if (kind == 0) {
#pragma unroll
        for (int i = 0; i < PER; ++i) {
            v[i] = wgt(v[i], m, ta, tb);  // keep the weights: no second exp
            d += v[i];
        }
    } else {
#pragma unroll
        for (int i = 0; i < PER; ++i) d += wgt(v[i], m, ta, tb);
    }
    d = warp_sum(d);
    if (kind == 2) {
        if (lane == 0) y[row] = from_c<T>(finish_lse(m, d));
        return;
    }
    const C log_d = sl_log(d), inv_d = sl_rcp(d);
    T* __restrict__ yr = y + row * n;
#pragma unroll
    for (int j = 0; j < PER / VEC; ++j) {
        const long long base = ((long long)j * 32 + lane) * VEC;
        C o[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            const C xi = v[j * VEC + k];
            o[k] = kind == 0 ? xi * inv_d : log_shift(xi, m, ta, tb) - log_d;
        }
        if (VEC > 1) {
            if (base < n) store_pack<T, VEC>(yr + base, o);
        } else if (base < n) {
            yr[base] = from_c<T>(o[0]);
        }
    }
}

// ---------------------------------------------------------------------------
// Block per row, the row in dynamic shared memory (n * sizeof(T) bytes).
// Thread i handles packets i, i + B, i + 2B, ... (B = blockDim.x) and only
// ever reads back the packets it wrote itself.
// ---------------------------------------------------------------------------
template <typename T, int VEC>
__global__ void __launch_bounds__(1024)
    softmax_block(const T* __restrict__ x, T* __restrict__ y, long long rows, long long n, typename Traits<T>::C ta, typename Traits<T>::C tb, int kind) {
    typedef typename Traits<T>::C C;
    extern __shared__ __align__(16) unsigned char sl_dyn_smem[];
    __shared__ C red[32];
    T* row_s = reinterpret_cast<T*>(sl_dyn_smem);
    const long long row = blockIdx.x;
    const T* __restrict__ xr = x + row * n;
    const long long npk = (n + VEC - 1) / VEC;  // n % VEC == 0 when VEC > 1
    C m = neg_inf<C>();
    for (long long i = threadIdx.x; i < npk; i += blockDim.x) {
        C a[VEC];
        if (VEC > 1) {
            *reinterpret_cast<Pack<T, VEC>*>(row_s + i * VEC) =
                *reinterpret_cast<const Pack<T, VEC>*>(xr + i * VEC);
            load_pack<T, VEC>(row_s + i * VEC, a);
        } else {
            row_s[i] = xr[i];
            a[0] = to_c(row_s[i]);
        }
#pragma unroll
        for (int k = 0; k < VEC; ++k) m = nmax(m, a[k]);
    }
    m = block_max(m, red);
    C d = C(0);
    for (long long i = threadIdx.x; i < npk; i += blockDim.x) {
        C a[VEC];
        load_pack<T, VEC>(row_s + i * VEC, a);
#pragma unroll
        for (int k = 0; k < VEC; ++k) d += wgt(a[k], m, ta, tb);
    }
    d = block_sum(d, red);
    if (kind == 2) {
        if (threadIdx.x == 0) y[row] = from_c<T>(finish_lse(m, d));
        return;
    }
    const C log_d = sl_log(d), inv_d = sl_rcp(d);
    T* __restrict__ yr = y + row * n;
    for (long long i = threadIdx.x; i < npk; i += blockDim.x) {
        C a[VEC];
        load_pack<T, VEC>(row_s + i * VEC, a);
#pragma unroll
        for (int k = 0; k < VEC; ++k) a[k] = finish_value(a[k], m, inv_d, log_d, ta, tb, kind);
        store_pack<T, VEC>(yr + i * VEC, a);
    }
}

// Online (m, d) of the packets [p0, p1) of one row, thread-strided, merged
// over the block.  sh_m, sh_d: 32 entries each.
template <typename T, int VEC>
__device__ __forceinline__ void block_online(const T* __restrict__ xr, long long p0, long long p1,
                                             typename Traits<T>::C ta, typename Traits<T>::C tb, typename Traits<T>::C& m,
                                             typename Traits<T>::C& d, typename Traits<T>::C* sh_m,
                                             typename Traits<T>::C* sh_d) {
    typedef typename Traits<T>::C C;
    m = neg_inf<C>();
    d = C(0);
    for (long long i = p0 + threadIdx.x; i < p1; i += blockDim.x) {
        C a[VEC];
        load_pack<T, VEC>(xr + i * VEC, a);
#pragma unroll
        for (int k = 0; k < VEC; ++k) online_add(m, d, a[k], ta, tb);
    }
    block_merge(m, d, sh_m, sh_d, ta, tb);
}

// Second pass over the packets [p0, p1): y = w(x, m) / d or (x - m) / T - log d.
template <typename T, int VEC>
__device__ __forceinline__ void write_pass(const T* __restrict__ xr, T* __restrict__ yr, long long p0,
                                           long long p1, typename Traits<T>::C m,
                                           typename Traits<T>::C d, typename Traits<T>::C ta, typename Traits<T>::C tb, int kind) {
    typedef typename Traits<T>::C C;
    const C log_d = sl_log(d), inv_d = sl_rcp(d);
    for (long long i = p0 + threadIdx.x; i < p1; i += blockDim.x) {
        C a[VEC];
        load_pack<T, VEC>(xr + i * VEC, a);
#pragma unroll
        for (int k = 0; k < VEC; ++k) a[k] = finish_value(a[k], m, inv_d, log_d, ta, tb, kind);
        store_pack<T, VEC>(yr + i * VEC, a);
    }
}

// ---------------------------------------------------------------------------
// Block per row, streaming: pass 1 running (m, d), pass 2 writes.
// ---------------------------------------------------------------------------
template <typename T, int VEC>
__global__ void __launch_bounds__(512)
    softmax_stream(const T* __restrict__ x, T* __restrict__ y, long long rows, long long n, typename Traits<T>::C ta, typename Traits<T>::C tb, int kind) {
    typedef typename Traits<T>::C C;
    __shared__ C sh_m[32], sh_d[32];
    const long long row = blockIdx.x;
    const T* __restrict__ xr = x + row * n;
    const long long npk = (n + VEC - 1) / VEC;
    C m, d;
    block_online<T, VEC>(xr, 0, npk, ta, tb, m, d, sh_m, sh_d);
    if (kind == 2) {
        if (threadIdx.x == 0) y[row] = from_c<T>(finish_lse(m, d));
        return;
    }
    write_pass<T, VEC>(xr, y + row * n, 0, npk, m, d, ta, tb, kind);
}

// ---------------------------------------------------------------------------
// Split rows.  Grid (splits, rows); block s of a row owns the elements
// [s * chunk, min(n, (s + 1) * chunk)), chunk % VEC == 0.
// Kernel 1 writes each chunk's partial (m, d) to pm/pd[row * splits + s].
// ---------------------------------------------------------------------------
template <typename T, int VEC>
__global__ void __launch_bounds__(512)
    softmax_split_partial(const T* __restrict__ x, typename Traits<T>::C* __restrict__ pm,
                          typename Traits<T>::C* __restrict__ pd, long long rows, long long n,
                          long long chunk, typename Traits<T>::C ta, typename Traits<T>::C tb) {
    typedef typename Traits<T>::C C;
    __shared__ C sh_m[32], sh_d[32];
    const long long row = blockIdx.y, s = blockIdx.x, splits = gridDim.x;
    const long long start = s * chunk;
    const long long stop = start + chunk < n ? start + chunk : n;
    C m, d;
    block_online<T, VEC>(x + row * n, start / VEC, (stop + VEC - 1) / VEC, ta, tb, m, d, sh_m, sh_d);
    if (threadIdx.x == 0) {
        pm[row * splits + s] = m;
        pd[row * splits + s] = d;
    }
}

// Kernel 2: every warp merges the row's partials (lane l takes partials
// l, l + 32, ... in order, then the butterfly), so all threads agree on
// (m, d) with no barrier; then the block writes its chunk.  For kind 2
// (logsumexp) launch it with one block per row (grid (1, rows)).
template <typename T, int VEC>
__global__ void __launch_bounds__(512)
    softmax_split_finish(const T* __restrict__ x, T* __restrict__ y,
                         const typename Traits<T>::C* __restrict__ pm,
                         const typename Traits<T>::C* __restrict__ pd, long long rows, long long n,
                         long long chunk, long long splits, typename Traits<T>::C ta, typename Traits<T>::C tb, int kind) {
    typedef typename Traits<T>::C C;
    const long long row = blockIdx.y, s = blockIdx.x;
    const int lane = threadIdx.x & 31;
    C m = neg_inf<C>(), d = C(0);
    for (long long p = lane; p < splits; p += 32) merge(m, d, pm[row * splits + p], pd[row * splits + p], ta, tb);
    warp_merge(m, d, ta, tb);
    if (kind == 2) {
        if (s == 0 && threadIdx.x == 0) y[row] = from_c<T>(finish_lse(m, d));
        return;
    }
    const long long start = s * chunk;
    const long long stop = start + chunk < n ? start + chunk : n;
    write_pass<T, VEC>(x + row * n, y + row * n, start / VEC, (stop + VEC - 1) / VEC, m, d, ta, tb, kind);
}
