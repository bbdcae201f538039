// Shared device helpers of Softmax Lab's kernels (softmax.cu, attention.cu).
//
// Self-contained on purpose: no CUDA headers, so NVRTC compiles it with no
// include path and no device.  kernels.py inlines this file where a source
// says #include "softmax_common.cuh" (CuPy caches modules by source text).
//
// The semantics are those of compute/online.py:
//   w(x, m)  = exp((x - m) / T) if x != m; 1 if x == m != -inf; 0 if x == m == -inf
//   r(a, b)  = exp((a - b) / T) if a != b; exactly 1 if a == b
//   merge    = (max(m1, m2) NaN-propagating, d1 r(m1, M) + d2 r(m2, M))
#pragma once

typedef unsigned short half_t;  // IEEE binary16 bits (converted with cvt, no cuda_fp16.h)

#define SL_FULL_MASK 0xffffffffu

template <typename T> struct Traits;
template <> struct Traits<half_t> { typedef float C; enum { VEC = 8 }; };
template <> struct Traits<float> { typedef float C; enum { VEC = 4 }; };
template <> struct Traits<double> { typedef double C; enum { VEC = 2 }; };

// 16-byte (or element-sized for VEC == 1) packet for vector loads/stores.
template <typename T, int VEC> struct alignas(sizeof(T) * VEC) Pack { T v[VEC]; };

// ---- conversions ----------------------------------------------------------
__device__ __forceinline__ float to_c(half_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ float to_c(float x) { return x; }
__device__ __forceinline__ double to_c(double x) { return x; }

template <typename T> __device__ __forceinline__ T from_c(typename Traits<T>::C c);
template <> __device__ __forceinline__ half_t from_c<half_t>(float c) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(c));  // round to nearest even, like NumPy
    return h;
}
template <> __device__ __forceinline__ float from_c<float>(float c) { return c; }
template <> __device__ __forceinline__ double from_c<double>(double c) { return c; }

// ---- constants (NVRTC predefines neither INFINITY nor NAN) ----------------
template <typename C> __device__ __forceinline__ C neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double neg_inf<double>() {
    return __longlong_as_double(0xfff0000000000000ULL);
}
template <typename C> __device__ __forceinline__ C qnan();
template <> __device__ __forceinline__ float qnan<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double qnan<double>() {
    return __longlong_as_double(0x7ff8000000000000ULL);
}

__device__ __forceinline__ float sl_exp(float x) { return expf(x); }
__device__ __forceinline__ double sl_exp(double x) { return exp(x); }
__device__ __forceinline__ float sl_log(float x) { return logf(x); }
// 1 / d without the IEEE division subroutine (its CALL makes ptxas save the
// row's registers to the stack, counted as spills): the hardware
// approximation and Newton steps, within an ulp or so.  d is a sum of
// weights: 0 (all -inf row: NaN results either way), NaN, or >= 1.
__device__ __forceinline__ float sl_rcp(float x) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return fmaf(r, fmaf(-x, r, 1.0f), r);
}
__device__ __forceinline__ double sl_rcp(double x) {
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    r = fma(r, fma(-x, r, 1.0), r);
    r = fma(r, fma(-x, r, 1.0), r);
    return fma(r, fma(-x, r, 1.0), r);
}
__device__ __forceinline__ double sl_log(double x) { return log(x); }

// ---- the temperature (or attention scale) ---------------------------------
// (x - m) / T is computed as ((x - m) * ta) * tb: the launcher passes
// ta = 1/T, tb = 1 when 1/T is a normal number in C, and splits it into two
// factors otherwise (float32 with T = 1e-50 or 1e50), so neither rounds to 0
// or inf where the product should not (kernels.scale_factors).  T = 1 gives
// ta = tb = 1: exact.  No branch, so the compiler keeps one copy of each loop.
template <typename C> __device__ __forceinline__ C tscale(C diff, C ta, C tb) { return (diff * ta) * tb; }
// (x - m) / T for x <= m.  x - m overflows to -inf for finite scores of
// opposite signs near the limit (-1e308 - 1e308) where the quotient need not
// (T > 1): there it is ((x/2 - m/2) * ta * tb) * 2, the halvings exact
// (compute's "overflowing shift", compute._rows._halves).  A select, no branch.
template <typename C> __device__ __forceinline__ C tshift(C x, C m, C ta, C tb) {
    C diff = x - m;
    C halves = tscale(C(0.5) * x - C(0.5) * m, ta, tb) * C(2);
    return (diff == neg_inf<C>() && x != neg_inf<C>()) ? halves : tscale(diff, ta, tb);
}

// max that propagates NaN from either side (fmaxf would drop it)
template <typename C> __device__ __forceinline__ C nmax(C a, C b) { return (a > b || a != a) ? a : b; }

template <typename C> __device__ __forceinline__ C wgt(C x, C m, C ta, C tb) {
    if (x == m) return (m == neg_inf<C>()) ? C(0) : C(1);
    return sl_exp(tshift(x, m, ta, tb));
}
template <typename C> __device__ __forceinline__ C rescale(C m_old, C m_new, C ta, C tb) {
    if (m_old == m_new) return C(1);
    return sl_exp(tshift(m_old, m_new, ta, tb));
}
template <typename C>
__device__ __forceinline__ void merge(C& m, C& d, C m2, C d2, C ta, C tb) {
    C mm = nmax(m, m2);
    d = d * rescale(m, mm, ta, tb) + d2 * rescale(m2, mm, ta, tb);
    m = mm;
}
// One score into a running partial: exactly merge(m, d, x, w(x, x)), with
// one exp instead of two.
template <typename C>
__device__ __forceinline__ void online_add(C& m, C& d, C x, C ta, C tb) {
    if (x > m) {
        d = d * sl_exp(tshift(m, x, ta, tb)) + C(1);  // r(m, x); m != x here
        m = x;
    } else if (x == x) {
        d += wgt(x, m, ta, tb);
    } else {  // NaN: the max is undefined from here on
        m = x;
        d = x;
    }
}
// (x - m) / T with the x == m cases of compute.online.finish_log_softmax
template <typename C> __device__ __forceinline__ C log_shift(C x, C m, C ta, C tb) {
    if (x == m) return (m == neg_inf<C>()) ? qnan<C>() : C(0);
    return tshift(x, m, ta, tb);
}
template <typename C> __device__ __forceinline__ C finish_lse(C m, C d) {
    return (m - m == C(0)) ? m + sl_log(d) : m;  // finite m: m + log d; else m
}

// ---- warp and block reductions --------------------------------------------
// Butterfly (xor 16, 8, 4, 2, 1): every lane ends with the same value, since
// each step is commutative.  compute/backends/emulate.py mirrors the order.
template <typename C> __device__ __forceinline__ C warp_max(C v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = nmax(v, __shfl_xor_sync(SL_FULL_MASK, v, off));
    return v;
}
template <typename C> __device__ __forceinline__ C warp_sum(C v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(SL_FULL_MASK, v, off);
    return v;
}
template <typename C>
__device__ __forceinline__ void warp_merge(C& m, C& d, C ta, C tb) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        C m2 = __shfl_xor_sync(SL_FULL_MASK, m, off);
        C d2 = __shfl_xor_sync(SL_FULL_MASK, d, off);
        merge(m, d, m2, d2, ta, tb);
    }
}
// Block reductions: each warp reduces, lane 0 writes its warp's value, then
// every warp reduces the (up to 32) warp values itself, so all threads get
// the result without a second barrier.  sh: 32 entries of shared memory.
template <typename C> __device__ __forceinline__ C block_max(C v, C* sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_max(v);
    __syncthreads();  // sh may still be read by a previous reduction
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    return warp_max(lane < nw ? sh[lane] : neg_inf<C>());
}
template <typename C> __device__ __forceinline__ C block_sum(C v, C* sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    return warp_sum(lane < nw ? sh[lane] : C(0));
}
template <typename C>
__device__ __forceinline__ void block_merge(C& m, C& d, C* sh_m, C* sh_d, C ta, C tb) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    warp_merge(m, d, ta, tb);
    __syncthreads();
    if (lane == 0) {
        sh_m[warp] = m;
        sh_d[warp] = d;
    }
    __syncthreads();
    m = lane < nw ? sh_m[lane] : neg_inf<C>();
    d = lane < nw ? sh_d[lane] : C(0);
    warp_merge(m, d, ta, tb);
}
