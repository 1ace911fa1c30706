// lntune/kernels/reference.cuh — the tuner's float64 reference on the GPU:
// the outputs every tuned candidate is checked against, computed where the
// inputs already are (drawn there by kernels/fill.cuh) instead of on the
// CPU (tuner/reference.cpp, which stays the oracle: the tuner checks sampled
// rows of every GPU-built reference against it, tuner/reference_oracle.hpp).
//
// The semantics are tuner/reference.hpp's, step for step:
//   LayerNorm: m0 = sum(x)/N; d = x - m0; s1 = sum(d), s2 = sum(d^2);
//              mean = m0 + s1/N (m0 when that is not finite);
//              var = max(0, (s2 - s1*s1/N) / N); rstd = 1/sqrt(var + eps)
//   RMSNorm:   mean = 0, rstd = 1/sqrt(sum(x^2)/N + eps)
//   y  = ((x - mean) * rstd) * w + b      (w: ones, or 1 + w zero-centred; b: zeros)
//   residual (forward): z = x + residual formed in fp32, rounded to the
//              residual's dtype and written; the norm is of that stored z
//   dx = rstd * (w*dy - (xhat * c1 + c2)) (+ dz), c1 = sum(xhat * w*dy)/N,
//              c2 = sum(w*dy)/N (RMSNorm: 0), xhat = (x - mean) * rstd
//   dW = sum over rows of dy * xhat, dB = sum over rows of dy
// all in double, every output rounded once (RNE) to its dtype: fp32 through
// __double2float_rn, fp16 and bf16 by a direct rounding from double
// (round_small: tuner/host_dtype.hpp's round_double_to_small, with its
// subnormals, overflow to infinity and quiet NaNs). NaN and infinities
// propagate as on the CPU: such a row's y and dx are NaN, its rstd NaN.
//
// Deterministic: every operation is an _rn intrinsic (nothing is contracted
// into an FMA, whatever the compiler decides), and every sum has a fixed
// order: each row is owned by a group of G consecutive threads (G = 32 for
// N <= 1024, else 256: the host picks it from N alone), thread `lane` sums
// columns lane, lane + G, ... in order, and the G partial sums are added by a
// fixed tree in shared memory. The result depends on (M, N) and the inputs
// only, never on the grid. The order differs from the CPU's pairwise sums,
// so the two agree to a few double roundings, not bit for bit: an output
// rounded to its dtype may differ by one ulp where the exact value is within
// those roundings of a rounding boundary.
//
// dW/dB use a fixed two-level order: the rows are split into `chunks` chunks
// of rows_per_chunk rows (the host's partition depends on (M, N) only,
// tuner/reference_oracle.hpp: dwdb_partition); chunk c is summed in row order
// into row c of the double partials (one thread per column), then the
// partials are summed in chunk order and rounded once. The partials stay in
// device memory for the host's cross-check.
#pragma once

#include "lntune/common.cuh"
#include "lntune/kernels/reference_params.h"

namespace lntune {
namespace refk {

constexpr int kThreads = 256;  // per CTA, every reference kernel

// ---- element access ------------------------------------------------------------

// Element i of a row-major array of `dtype`, exactly, as a double.
__device__ __forceinline__ double load(const void* p, int dtype, i64 i) {
  if (dtype == kF32) return static_cast<double>(static_cast<const float*>(p)[i]);
  const unsigned short b = static_cast<const unsigned short*>(p)[i];
  if (dtype == kF16) {
    half_t h;
    h.bits = b;
    return static_cast<double>(to_float(h));
  }
  return static_cast<double>(__uint_as_float(static_cast<unsigned>(b) << 16));
}

// v rounded once (RNE) to a binary format with m stored fraction bits and e
// exponent bits; returns its bits. tuner/host_dtype.hpp's
// round_double_to_small, line for line.
__device__ __forceinline__ unsigned short round_small(double v, int m, int e) {
  const unsigned long long b = static_cast<unsigned long long>(__double_as_longlong(v));
  const unsigned sign = static_cast<unsigned>(b >> 63) << (m + e);
  const int dexp = static_cast<int>((b >> 52) & 0x7ffULL);
  const unsigned long long frac = b & ((1ULL << 52) - 1);
  const unsigned expmax = (1u << e) - 1;  // all-ones exponent field
  const unsigned inf = sign | (expmax << m);
  if (dexp == 0x7ff) {
    if (frac == 0) return static_cast<unsigned short>(inf);
    // NaN: the top payload bits kept, the quiet bit set.
    const unsigned payload = static_cast<unsigned>(frac >> (52 - m));
    return static_cast<unsigned short>(inf | (1u << (m - 1)) | payload);
  }
  // Zero, or a double subnormal: far below half the smallest subnormal.
  if (dexp == 0) return static_cast<unsigned short>(sign);
  const int bias = (1 << (e - 1)) - 1;
  const int E = dexp - 1023;
  const int emin = 1 - bias;
  if (E > bias) return static_cast<unsigned short>(inf);
  const unsigned long long sig = (1ULL << 52) | frac;  // value = sig * 2^(E - 52)
  int shift = 52 - m;
  const bool normal = E >= emin;
  if (!normal) {
    shift += emin - E;  // the subnormal quantum 2^(emin - m)
    if (shift >= 54) return static_cast<unsigned short>(sign);  // below 1/4 of the smallest subnormal
  }
  unsigned long long q = sig >> shift;
  const unsigned long long rem = sig & ((1ULL << shift) - 1);
  const unsigned long long halfway = 1ULL << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1ULL))) ++q;
  // A carry out of the fraction bumps the exponent field through the addition.
  const unsigned long long res =
      normal ? ((static_cast<unsigned long long>(E + bias) << m) + (q - (1ULL << m))) : q;
  if (res >= (static_cast<unsigned long long>(expmax) << m)) return static_cast<unsigned short>(inf);
  return static_cast<unsigned short>(sign | static_cast<unsigned>(res));
}

// Stores v rounded once (RNE) to `dtype` at element i.
__device__ __forceinline__ void store(void* p, int dtype, i64 i, double v) {
  if (dtype == kF32)
    static_cast<float*>(p)[i] = __double2float_rn(v);
  else
    static_cast<unsigned short*>(p)[i] = dtype == kF16 ? round_small(v, 10, 5) : round_small(v, 7, 8);
}

// The weight as applied: w, 1 + w (zero-centred), or 1 without a weight.
__device__ __forceinline__ double weight_at(const void* w, int dtype, int zero_centered, i64 j) {
  if (!w) return 1.0;
  const double v = load(w, dtype, j);
  return zero_centered ? __dadd_rn(v, 1.0) : v;
}

// ---- fixed-order sums ------------------------------------------------------------

// a and b summed over each group of G consecutive threads of the CTA, by a
// fixed tree (lane l += lane l + s, s = G/2, G/4, ..., 1); every thread of
// the CTA must call it (it synchronises the CTA). Every thread of a group
// receives its group's sums.
template <int G>
__device__ __forceinline__ void group_sum2(double& a, double& b, double* sa, double* sb) {
  const int t = static_cast<int>(threadIdx.x), lane = t % G, first = t - lane;
  sa[t] = a;
  sb[t] = b;
  __syncthreads();
#pragma unroll 1
  for (int s = G / 2; s > 0; s >>= 1) {
    if (lane < s) {
      sa[t] = __dadd_rn(sa[t], sa[t + s]);
      sb[t] = __dadd_rn(sb[t], sb[t + s]);
    }
    __syncthreads();
  }
  a = sa[first];
  b = sb[first];
  __syncthreads();  // before the arrays are written again
}

struct Stats {
  double mean, rstd;
};

// The statistics of one row: in(j) is its element j. `count` is N for an
// active group and 0 for one past the last row (which still takes part in
// the CTA's synchronisation); n = N.
template <int G, class In>
__device__ __forceinline__ Stats row_stats(const In& in, i64 count, double n, double eps, bool rms, int lane,
                                           double* sa, double* sb) {
  if (rms) {
    double q = 0.0, unused = 0.0;
    for (i64 j = lane; j < count; j += G) {
      const double v = in(j);
      q = __dadd_rn(q, __dmul_rn(v, v));
    }
    group_sum2<G>(q, unused, sa, sb);
    return {0.0, __ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(__ddiv_rn(q, n), eps)))};
  }
  double s = 0.0, unused = 0.0;
  for (i64 j = lane; j < count; j += G) s = __dadd_rn(s, in(j));
  group_sum2<G>(s, unused, sa, sb);
  const double m0 = __ddiv_rn(s, n);
  double s1 = 0.0, s2 = 0.0;
  for (i64 j = lane; j < count; j += G) {
    const double d = __dsub_rn(in(j), m0);
    s1 = __dadd_rn(s1, d);
    s2 = __dadd_rn(s2, __dmul_rn(d, d));
  }
  group_sum2<G>(s1, s2, sa, sb);
  double mean = m0;
  const double refined = __dadd_rn(m0, __ddiv_rn(s1, n));
  if (isfinite(refined)) mean = refined;
  double var = __ddiv_rn(__dsub_rn(s2, __ddiv_rn(__dmul_rn(s1, s1), n)), n);
  if (var < 0.0) var = 0.0;  // rounding only; NaN stays NaN
  return {mean, __ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(var, eps)))};
}

// ---- the forward ---------------------------------------------------------------------

template <int G>
__device__ __forceinline__ void forward_rows(const RefFwdParams& p) {
  __shared__ double sa[kThreads], sb[kThreads];
  constexpr int kRows = kThreads / G;  // rows per CTA and step
  const int lane = static_cast<int>(threadIdx.x) % G, group = static_cast<int>(threadIdx.x) / G;
  const i64 N = p.N;
  const double n = static_cast<double>(N);
  const bool residual = p.residual != nullptr;
  const void* row_src = residual ? static_cast<const void*>(p.z) : p.x;
  const int row_dtype = residual ? p.residual_dtype : p.x_dtype;
  for (i64 first = static_cast<i64>(blockIdx.x) * kRows; first < p.M; first += static_cast<i64>(gridDim.x) * kRows) {
    const i64 row = first + group;
    const bool active = row < p.M;
    const i64 count = active ? N : 0;
    const i64 off = active ? row * N : 0;
    if (residual) {
      // z = x + residual: the fp32 sum (the double sum of two values of at
      // most 24 significant bits, rounded once to fp32), then z's dtype. The
      // passes below read back what this thread wrote (same columns).
      for (i64 j = lane; j < count; j += G) {
        const float f = __double2float_rn(
            __dadd_rn(load(p.residual, p.residual_dtype, off + j), load(p.x, p.x_dtype, off + j)));
        store(p.z, p.residual_dtype, off + j, static_cast<double>(f));
      }
    }
    const auto in = [&](i64 j) { return load(row_src, row_dtype, off + j); };
    const Stats st = row_stats<G>(in, count, n, p.eps, p.rms != 0, lane, sa, sb);
    if (p.y) {
      for (i64 j = lane; j < count; j += G) {
        const double w = weight_at(p.weight, p.w_dtype, p.zero_centered, j);
        const double b = p.bias ? load(p.bias, p.w_dtype, j) : 0.0;
        const double xhat = __dmul_rn(__dsub_rn(in(j), st.mean), st.rstd);
        store(p.y, p.y_dtype, off + j, __dadd_rn(__dmul_rn(xhat, w), b));
      }
    }
    if (active && lane == 0) {
      if (p.mean) p.mean[row] = __double2float_rn(st.mean);
      const float r = __double2float_rn(st.rstd);
      if (p.rstd) p.rstd[row] = r;
      if (p.rstd_max && !isnan(r)) atomicMax(p.rstd_max, __float_as_uint(r));  // r >= 0: bits order as values
    }
  }
}

// ---- the backward -------------------------------------------------------------------

template <int G>
__device__ __forceinline__ void backward_rows(const RefBwdParams& p) {
  __shared__ double sa[kThreads], sb[kThreads];
  constexpr int kRows = kThreads / G;
  const int lane = static_cast<int>(threadIdx.x) % G, group = static_cast<int>(threadIdx.x) / G;
  const i64 N = p.N;
  const double n = static_cast<double>(N);
  const bool rms = p.rms != 0;
  for (i64 first = static_cast<i64>(blockIdx.x) * kRows; first < p.M; first += static_cast<i64>(gridDim.x) * kRows) {
    const i64 row = first + group;
    const bool active = row < p.M;
    const i64 count = active ? N : 0;
    const i64 off = active ? row * N : 0;
    const auto in = [&](i64 j) { return load(p.x, p.in_dtype, off + j); };
    const Stats st = row_stats<G>(in, count, n, p.eps, rms, lane, sa, sb);
    if (active && lane == 0) {
      if (p.row_mean) p.row_mean[row] = st.mean;
      if (p.row_rstd) p.row_rstd[row] = st.rstd;
    }
    if (!p.dx) continue;  // the same for every thread
    const auto xhat_at = [&](i64 j) { return __dmul_rn(__dsub_rn(in(j), st.mean), st.rstd); };
    const auto wdy_at = [&](i64 j) {
      return __dmul_rn(weight_at(p.weight, p.w_dtype, p.zero_centered, j), load(p.dy, p.y_dtype, off + j));
    };
    double c1 = 0.0, c2 = 0.0;
    for (i64 j = lane; j < count; j += G) {
      const double wdy = wdy_at(j);
      c1 = __dadd_rn(c1, __dmul_rn(xhat_at(j), wdy));
      c2 = __dadd_rn(c2, wdy);
    }
    group_sum2<G>(c1, c2, sa, sb);
    c1 = __ddiv_rn(c1, n);
    c2 = rms ? 0.0 : __ddiv_rn(c2, n);
    for (i64 j = lane; j < count; j += G) {
      double dx = __dmul_rn(st.rstd, __dsub_rn(wdy_at(j), __dadd_rn(__dmul_rn(xhat_at(j), c1), c2)));
      if (p.dz) dx = __dadd_rn(dx, load(p.dz, p.dz_dtype, off + j));
      store(p.dx, p.x_dtype, off + j, dx);
    }
  }
}

// One thread per (column, chunk); chunks grid-strided over gridDim.y.
__device__ __forceinline__ void dwdb_partials(const RefDwdbParams& p) {
  const i64 j = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= p.N) return;
  for (i64 c = blockIdx.y; c < p.chunks; c += gridDim.y) {
    const i64 r0 = c * p.rows_per_chunk;
    const i64 r1 = r0 + p.rows_per_chunk < p.M ? r0 + p.rows_per_chunk : p.M;
    double aw = 0.0, ab = 0.0;
    for (i64 r = r0; r < r1; ++r) {
      const double x = load(p.x, p.in_dtype, r * p.N + j), dy = load(p.dy, p.y_dtype, r * p.N + j);
      aw = __dadd_rn(aw, __dmul_rn(dy, __dmul_rn(__dsub_rn(x, p.row_mean[r]), p.row_rstd[r])));
      ab = __dadd_rn(ab, dy);
    }
    if (p.dw_partial) p.dw_partial[c * p.N + j] = aw;
    if (p.db_partial) p.db_partial[c * p.N + j] = ab;
  }
}

// One thread per column: the partials in chunk order, rounded once.
__device__ __forceinline__ void dwdb_sum(const RefDwdbSumParams& p) {
  const i64 j = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= p.N) return;
  double sw = 0.0, sb = 0.0;
  for (i64 c = 0; c < p.chunks; ++c) {
    if (p.dw_partial) sw = __dadd_rn(sw, p.dw_partial[c * p.N + j]);
    if (p.db_partial) sb = __dadd_rn(sb, p.db_partial[c * p.N + j]);
  }
  if (p.dw) store(p.dw, p.w_dtype, j, sw);
  if (p.db) store(p.db, p.w_dtype, j, sb);
}

}  // namespace refk
}  // namespace lntune

extern "C" __global__ void __launch_bounds__(256) lntune_ref_fwd_g32(const lntune::refk::RefFwdParams p) {
  lntune::refk::forward_rows<32>(p);
}
extern "C" __global__ void __launch_bounds__(256) lntune_ref_fwd_g256(const lntune::refk::RefFwdParams p) {
  lntune::refk::forward_rows<256>(p);
}
extern "C" __global__ void __launch_bounds__(256) lntune_ref_bwd_g32(const lntune::refk::RefBwdParams p) {
  lntune::refk::backward_rows<32>(p);
}
extern "C" __global__ void __launch_bounds__(256) lntune_ref_bwd_g256(const lntune::refk::RefBwdParams p) {
  lntune::refk::backward_rows<256>(p);
}
extern "C" __global__ void __launch_bounds__(256) lntune_ref_dwdb_partials(const lntune::refk::RefDwdbParams p) {
  lntune::refk::dwdb_partials(p);
}
extern "C" __global__ void __launch_bounds__(256) lntune_ref_dwdb_sum(const lntune::refk::RefDwdbSumParams p) {
  lntune::refk::dwdb_sum(p);
}
