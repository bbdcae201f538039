// Fused scaled dot-product attention in the FlashAttention style.
//
// q: (batch, nq, d), k: (batch, nk, d), v: (batch, nk, dv), C-contiguous;
// out: (batch, nq, dv) in T; lse: (batch, nq) in C (float for half_t).
// One block of 4 warps handles BQ = 4 * RPW query rows; warp w owns rows
// w * RPW .. w * RPW + RPW - 1 of the block.  Keys come in tiles of 32 (one
// per lane): the K tile is staged in shared memory, each lane computes the
// score of its key for each of its warp's rows, then the V tile replaces the
// K tile in the same buffer and every row's running state is updated:
//
//     M = max(m, max of the tile's scores)         (NaN-propagating)
//     r = rescale(m, M)                            (exactly 1 when equal)
//     p = w(s, M);  l = l r + sum p;  acc = acc r + p V
//
// The n x n score matrix is never stored.  At the end out = acc / l (0 for a
// row with no allowed key: m = -inf) and lse = m + log l (m when not finite).
// Scores are (q . k) * sa * sb, the product first, as compute.attention does
// (sa * sb = scale, split as in tscale).  causal: key j is allowed for query i iff j <= i (top-left);
// tiles wholly right of a block's last query are skipped.  Head dimensions up
// to 32 * DPL (DPL = 1, 2, 4: 128 at most); lane l owns the output dims
// l + 32 c, c < DPL.
//
// compute/backends/emulate.py (emulate_flash_attention) replays this tiling.

#include "softmax_common.cuh"

template <typename T, int DPL, int RPW>
__global__ void __launch_bounds__(128)
    flash_attention(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                    T* __restrict__ out, typename Traits<T>::C* __restrict__ lse, long long batch,
                    long long nq, long long nk, int d, int dv, typename Traits<T>::C sa, typename Traits<T>::C sb, int causal) {
    typedef typename Traits<T>::C C;
    constexpr int D = 32 * DPL;       // padded head dimension
    constexpr int KS = D + 1;         // K/V tile row stride (no bank conflicts on K rows)
    constexpr int BQ = 4 * RPW;       // query rows per block
    extern __shared__ __align__(16) unsigned char sl_dyn_smem[];
    C* qs = reinterpret_cast<C*>(sl_dyn_smem);  // [BQ][D]
    C* kv = qs + BQ * D;                        // [32][KS], K then V

    const long long qblocks = (nq + BQ - 1) / BQ;
    const long long b = blockIdx.x / qblocks;
    const long long q0 = (blockIdx.x % qblocks) * BQ;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const T* __restrict__ qb = q + b * nq * d;
    const T* __restrict__ kb = k + b * nk * d;
    const T* __restrict__ vb = v + b * nk * dv;

    for (int i = threadIdx.x; i < BQ * D; i += blockDim.x) {
        const int r = i / D, c = i % D;
        qs[i] = (q0 + r < nq && c < d) ? to_c(qb[(q0 + r) * d + c]) : C(0);
    }

    C m[RPW], l[RPW], acc[RPW][DPL];
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
        m[i] = neg_inf<C>();
        l[i] = C(0);
#pragma unroll
        for (int c = 0; c < DPL; ++c) acc[i][c] = C(0);
    }
    const long long q_last = (q0 + BQ < nq ? q0 + BQ : nq) - 1;

    for (long long k0 = 0; k0 < nk; k0 += 32) {
        if (causal && k0 > q_last) break;  // every key of this tile and beyond is masked
        __syncthreads();  // the previous V tile is no longer read
        for (int i = threadIdx.x; i < 32 * D; i += blockDim.x) {
            const int r = i / D, c = i % D;
            kv[r * KS + c] = (k0 + r < nk && c < d) ? to_c(kb[(k0 + r) * d + c]) : C(0);
        }
        __syncthreads();
        C s[RPW];
        const long long key = k0 + lane;
#pragma unroll
        for (int i = 0; i < RPW; ++i) {
            const int r = warp * RPW + i;
            const long long qi = q0 + r;
            C dot = C(0);
#pragma unroll 8
            for (int c = 0; c < D; ++c) dot += qs[r * D + c] * kv[lane * KS + c];
            const bool allowed = key < nk && qi < nq && !(causal && key > qi);
            s[i] = allowed ? tscale(dot, sa, sb) : neg_inf<C>();
        }
        __syncthreads();  // the K tile is no longer read
        for (int i = threadIdx.x; i < 32 * D; i += blockDim.x) {
            const int r = i / D, c = i % D;
            kv[r * KS + c] = (k0 + r < nk && c < dv) ? to_c(vb[(k0 + r) * dv + c]) : C(0);
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < RPW; ++i) {
            const C m_new = nmax(m[i], warp_max(s[i]));
            const C r = rescale(m[i], m_new, C(1), C(1));
            const C p = wgt(s[i], m_new, C(1), C(1));
            l[i] = l[i] * r + warp_sum(p);
#pragma unroll
            for (int c = 0; c < DPL; ++c) acc[i][c] *= r;
#pragma unroll 4
            for (int j = 0; j < 32; ++j) {
                const C pj = __shfl_sync(SL_FULL_MASK, p, j);
#pragma unroll
                for (int c = 0; c < DPL; ++c) acc[i][c] += pj * kv[j * KS + lane + 32 * c];
            }
            m[i] = m_new;
        }
    }

#pragma unroll
    for (int i = 0; i < RPW; ++i) {
        const long long qi = q0 + warp * RPW + i;
        if (qi >= nq) continue;
        const bool empty = m[i] == neg_inf<C>();
        T* __restrict__ orow = out + (b * nq + qi) * dv;
#pragma unroll
        for (int c = 0; c < DPL; ++c) {
            const int col = lane + 32 * c;
            if (col < dv) orow[col] = from_c<T>(empty ? C(0) : acc[i][c] / l[i]);
        }
        if (lane == 0) lse[b * nq + qi] = finish_lse(m[i], l[i]);
    }
}
