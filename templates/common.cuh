// lntune/common.cuh — device helpers shared by every lntune kernel.
//
// Self-contained on purpose: kernels are compiled by NVRTC on deployment
// machines that have the driver and libnvrtc but no CUDA toolkit headers, so
// this file carries its own fp16/bf16 types and conversions (PTX cvt, sm_80+).
#pragma once

#include "lntune/params.h"

namespace lntune {

typedef long long i64;

// Storage types. Arithmetic is always fp32.
struct __align__(2) half_t { unsigned short bits; };
struct __align__(2) bf16_t { unsigned short bits; };

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(half_t v) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
  return f;
}
__device__ __forceinline__ float to_float(bf16_t v) {
  return __uint_as_float(static_cast<unsigned>(v.bits) << 16);
}

template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ half_t from_float<half_t>(float v) {
  half_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(v));
  return h;
}
template <> __device__ __forceinline__ bf16_t from_float<bf16_t>(float v) {
  bf16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(v));
  return h;
}

// VEC consecutive elements moved in accesses of at most 16 bytes each
// (fp32x4, fp16x8, bf16x8). The caller guarantees that `ptr` is aligned to
// min(16, sizeof(T) * VEC) bytes.
template <class T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
  T v[VEC];
};

template <class T, int VEC>
constexpr int piece() {
  return static_cast<int>(sizeof(T)) * VEC > 16 ? 16 / static_cast<int>(sizeof(T)) : VEC;
}

template <class T> struct is_bf16 { static constexpr bool value = false; };
template <> struct is_bf16<bf16_t> { static constexpr bool value = true; };

// Two 16-bit values packed in a 32-bit word, converted with one instruction.
template <class T> __device__ __forceinline__ unsigned pack2(float lo, float hi);
template <> __device__ __forceinline__ unsigned pack2<half_t>(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> __device__ __forceinline__ unsigned pack2<bf16_t>(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

template <int VEC, class T>
__device__ __forceinline__ void load(const T* src, float (&dst)[VEC]) {
  constexpr int kPiece = piece<T, VEC>();
#pragma unroll
  for (int k = 0; k < VEC; k += kPiece) {
    if constexpr (is_bf16<T>::value && kPiece % 2 == 0) {
      // bf16 -> fp32 is a shift: one instruction per element, none to unpack.
      const Pack<unsigned, kPiece / 2> p = *reinterpret_cast<const Pack<unsigned, kPiece / 2>*>(src + k);
#pragma unroll
      for (int q = 0; q < kPiece / 2; ++q) {
        dst[k + 2 * q] = __uint_as_float(p.v[q] << 16);
        dst[k + 2 * q + 1] = __uint_as_float(p.v[q] & 0xffff0000u);
      }
    } else {
      const Pack<T, kPiece> p = *reinterpret_cast<const Pack<T, kPiece>*>(src + k);
#pragma unroll
      for (int q = 0; q < kPiece; ++q) dst[k + q] = to_float(p.v[q]);
    }
  }
}

template <int VEC, class T>
__device__ __forceinline__ void store(T* dst, const float (&src)[VEC]) {
  constexpr int kPiece = piece<T, VEC>();
#pragma unroll
  for (int k = 0; k < VEC; k += kPiece) {
    if constexpr (sizeof(T) == 2 && kPiece % 2 == 0) {
      // Two conversions per instruction.
      Pack<unsigned, kPiece / 2> p;
#pragma unroll
      for (int q = 0; q < kPiece / 2; ++q) p.v[q] = pack2<T>(src[k + 2 * q], src[k + 2 * q + 1]);
      *reinterpret_cast<Pack<unsigned, kPiece / 2>*>(dst + k) = p;
    } else {
      Pack<T, kPiece> p;
#pragma unroll
      for (int q = 0; q < kPiece; ++q) p.v[q] = from_float<T>(src[k + q]);
      *reinterpret_cast<Pack<T, kPiece>*>(dst + k) = p;
    }
  }
}

// store() into global memory, each 16-byte piece one st.global.v4 (pieces
// under 16 bytes as store()). The compiler splits store()'s 16-byte Pack
// copy into four 4-byte stores in some loops (the SASS of fwd_cluster.cuh;
// the PTX of every wide-backward default at 16384-262144 columns:
// st.global.u32 / .f32, not .v4), four times the write requests of each
// warp's store to L2; the register kernels' stores stay whole. The
// shared-memory, wide and (since session 48) cluster forwards store y and
// z through this (with ORDERED; it was fwd_smem.cuh's store_vec), the wide backward dx,
// dresidual and its partial rows since session 47: A/B on an H200 at x = 512 MiB, % of
// copy, two rounds (bench/results/s47, call 3): LayerNorm bf16 N = 262144
// 75.6 / 75.5 -> 87.8 / 87.9, 65536 88.7 / 88.9 -> 91.9 / 91.8, 16384 91.5
// / 91.4 -> 92.1 / 92.1; RMSNorm bf16 262144 72.8 / 72.5 -> 93.8 / 93.4,
// 65536 90.1 / 89.6 -> 93.9 / 94.1, 16384 90.7 / 90.1 -> 93.1 / 92.6; fp32
// 262144 LayerNorm 66.7 / 67.2 -> 73.5 / 73.4, RMSNorm 67.5 / 67.7 -> 74.0
// / 74.3; add + LayerNorm bf16 16384 98.4 -> 100.2, 65536 92.2 -> 95.0,
// 262144 89.2 / 89.0 -> 91.9 / 92.3. Global memory only (store() also
// writes shared memory). asm volatile: never dropped, kept in order with
// the other volatile asm; ORDERED adds a memory clobber (the compiler then
// keeps every other memory access on its side: the forwards'). The wide
// backward's go without it: a row's stores alias nothing that row reads
// later (dx may alias dy or dz, but each element is read by its own thread
// before that thread writes it, and the store's value depends on the read).
template <bool ORDERED>
__device__ __forceinline__ void st_global_v4(void* dst, unsigned a, unsigned b, unsigned c, unsigned d) {
  if constexpr (ORDERED) {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
  } else {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(a), "r"(b), "r"(c), "r"(d));
  }
}
template <int VEC, bool ORDERED = false, class T>
__device__ __forceinline__ void store_global(T* dst, const float (&src)[VEC]) {
  constexpr int kPiece = piece<T, VEC>();
  if constexpr (kPiece * sizeof(T) != 16) {
    store<VEC>(dst, src);
  } else {
#pragma unroll
    for (int k = 0; k < VEC; k += kPiece) {
      unsigned w[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if constexpr (sizeof(T) == 4) {
          w[q] = __float_as_uint(src[k + q]);
        } else {
          w[q] = pack2<T>(src[k + 2 * q], src[k + 2 * q + 1]);
        }
      }
      st_global_v4<ORDERED>(dst + k, w[0], w[1], w[2], w[3]);
    }
  }
}

// ------------------------------------------------------------ kernel shapes
// Norms a RowShape computes (Norm in lntune/types.hpp).
enum NormKind : int { kLayerNorm = 0, kRmsNorm = 1 };

// A storage type chosen at compile time (NVRTC has no <type_traits>).
template <bool C, class A, class B> struct pick { using type = A; };
template <class A, class B> struct pick<false, A, B> { using type = B; };
template <class A> struct is_void_t { static constexpr bool value = false; };
template <> struct is_void_t<void> { static constexpr bool value = true; };
// A compile-time bool as a type (a generic lambda's tag; <type_traits> is not
// available under NVRTC).
template <bool B> struct bool_constant { static constexpr bool value = B; };

// v rounded to T's precision and widened back (what storing and reloading it gives).
template <class T> __device__ __forceinline__ float round_to(float v) { return to_float(from_float<T>(v)); }

// VEC elements of T held in registers as loaded, for a value that waits
// there before its one use: 16-bit types two to a register, half the
// registers of floats; other types as floats.
template <class T, int VEC>
struct Held {
  static constexpr bool kPacked = sizeof(T) == 2 && VEC % 2 == 0;
  static constexpr int kWords = kPacked ? VEC / 2 : VEC;
  typename pick<kPacked, unsigned, float>::type w[kWords];
};

template <int VEC, class T>
__device__ __forceinline__ void load_held(const T* src, Held<T, VEC>& dst) {
  if constexpr (Held<T, VEC>::kPacked) {
    constexpr int kPiece = piece<T, VEC>();
#pragma unroll
    for (int k = 0; k < VEC; k += kPiece) {
      const Pack<unsigned, kPiece / 2> p = *reinterpret_cast<const Pack<unsigned, kPiece / 2>*>(src + k);
#pragma unroll
      for (int q = 0; q < kPiece / 2; ++q) dst.w[k / 2 + q] = p.v[q];
    }
  } else {
    load<VEC>(src, dst.w);
  }
}

template <int VEC, class T>
__device__ __forceinline__ void zero_held(Held<T, VEC>& dst) {
#pragma unroll
  for (int q = 0; q < Held<T, VEC>::kWords; ++q) dst.w[q] = 0;  // +0 in every type
}

// out[k] += the held values, widened to float.
template <int VEC, class T>
__device__ __forceinline__ void add_held(const Held<T, VEC>& h, float (&out)[VEC]) {
  if constexpr (Held<T, VEC>::kPacked) {
#pragma unroll
    for (int q = 0; q < VEC / 2; ++q) {
      T lo, hi;
      lo.bits = static_cast<unsigned short>(h.w[q] & 0xffffu);
      hi.bits = static_cast<unsigned short>(h.w[q] >> 16);
      out[2 * q] += to_float(lo);
      out[2 * q + 1] += to_float(hi);
    }
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k) out[k] += h.w[k];
  }
}

// The compile-time shape of a row kernel (forward, forward over a cluster,
// backward dx): element types, CTA and tile geometry, and which optional terms
// the kernel has. The kernel headers read it with `if constexpr`, so a new
// variant is one more member here, not a new kernel. The parameters after
// CLUSTER choose the variant; their defaults are LayerNorm without options.
//   NORM           kLayerNorm or kRmsNorm (no mean: xhat = x * rstd)
//   ResidT         void: no residual; else the residual stream's storage: the
//                  forward reads residual, writes z = x + residual (rounded to
//                  ResidT) and normalises z; the backward reads z as its input
//                  row and adds the upstream dz into dx
//   ZERO_CENTERED  y = xhat * (1 + w) + b
//   OutT           storage of y (forward) and dy (backward)
template <class RowT, class WeightT, int BLOCK_SIZE, int NUM_WARPS, int ROWS_PER_CTA, int VEC, bool HAS_WEIGHT,
          bool HAS_BIAS, bool SINGLE_TILE, int CLUSTER = 1, int NORM = kLayerNorm, class ResidT = void,
          bool ZERO_CENTERED = false, class OutT = RowT>
struct RowShape {
  using T = RowT;     // x, dx
  using W = WeightT;  // weight and bias (unused without either)
  static constexpr bool kResidual = !is_void_t<ResidT>::value;
  using R = typename pick<kResidual, ResidT, RowT>::type;  // the normalised row's storage: z, or x
  using Y = OutT;                                          // y, dy
  static constexpr bool kRms = NORM == kRmsNorm;
  static constexpr bool kZeroCentered = ZERO_CENTERED;
  static constexpr int kBlockSize = BLOCK_SIZE;  // columns per tile; per CTA with clusters
  static constexpr int kThreads = 32 * NUM_WARPS;
  static constexpr int kRowsPerCta = ROWS_PER_CTA;  // rows a CTA processes side by side
  static constexpr int kThreadsPerRow = kThreads / ROWS_PER_CTA;
  static constexpr int kVec = VEC;  // elements per access
  static constexpr int kVecsPerThread = BLOCK_SIZE / (kThreadsPerRow * VEC);  // accesses per thread per tile
  static constexpr bool kHasWeight = HAS_WEIGHT;
  static constexpr bool kHasBias = HAS_BIAS;
  static constexpr bool kSingleTile = SINGLE_TILE;  // N <= BLOCK_SIZE * CLUSTER: a row stays in registers
  static constexpr int kCluster = CLUSTER;          // CTAs sharing a row (sm_90+)
  // xhat = x * rstd + shift (shift = -mean * rstd) in one FMA for 16-bit rows,
  // whose kernels are bound by instruction issue; its extra rounding is far
  // below a 16-bit output's. fp32 rows compute (x - mean) * rstd. (RMSNorm:
  // mean = shift = 0, both forms are x * rstd.)
  static constexpr bool kFusedXhat = sizeof(RowT) == 2;

  // (Other than a power of two: a single tile in one CTA whose rows are
  // whole segments of 8 or more lanes, gen::validate; row_sum's segments.)
  static_assert(NUM_WARPS >= 1 && NUM_WARPS <= 32, "num_warps: 1 to 32");
  static_assert(ROWS_PER_CTA >= 1 && kThreads % ROWS_PER_CTA == 0, "rows_per_cta divides the CTA's threads");
  static_assert((NUM_WARPS & (NUM_WARPS - 1)) == 0 || (SINGLE_TILE && CLUSTER == 1 && kThreadsPerRow % 8 == 0),
                "num_warps of other than a power of two: a single tile in one CTA, rows of a multiple of 8 threads");
  static_assert(VEC >= 1 && static_cast<int>(sizeof(RowT)) * VEC <= 16, "vec: accesses of at most 16 bytes");
  static_assert(kVecsPerThread >= 1 && kVecsPerThread * kThreadsPerRow * VEC == BLOCK_SIZE,
                "block_size is a multiple of threads_per_row * vec");
  static_assert(SINGLE_TILE || ROWS_PER_CTA == 1, "rows_per_cta > 1 needs a row that fits one tile");
  static_assert(CLUSTER == 1 || (SINGLE_TILE && ROWS_PER_CTA == 1), "a cluster holds one row in registers");
  static_assert(NORM == kLayerNorm || NORM == kRmsNorm, "norm: kLayerNorm or kRmsNorm");
  static_assert(!ZERO_CENTERED || HAS_WEIGHT, "zero-centred gamma needs a weight");
};

// The weight as applied: w, or 1 + w for zero-centred gamma.
template <class S>
__device__ __forceinline__ float applied_weight(float w) {
  if constexpr (S::kZeroCentered) {
    return 1.f + w;
  } else {
    return w;
  }
}

// z = x + residual for one access, rounded to the residual's storage (so that
// the row normalised is exactly the z written out), in place in x.
template <class S, int VEC>
__device__ __forceinline__ void add_residual(float (&x)[VEC], const float (&r)[VEC]) {
#pragma unroll
  for (int k = 0; k < VEC; ++k) x[k] = round_to<typename S::R>(x[k] + r[k]);
}

// A row's threads as segments of lanes for its sums: the largest power of
// two up to 32 that divides THREADS_PER_ROW (a row of 144 threads: 9
// segments of 16 lanes; a warp then holds the end of one row and the start
// of the next). A power of two up to 32 is one segment; larger powers of
// two are whole warps, as before.
template <int THREADS_PER_ROW>
constexpr int row_segment_lanes() {
  int g = 1;
  while (g < 32 && THREADS_PER_ROW % (2 * g) == 0) g *= 2;
  return g;
}
template <int THREADS_PER_ROW>
constexpr int row_segments() {
  return THREADS_PER_ROW / row_segment_lanes<THREADS_PER_ROW>();
}

// Floats of one area of row_scratch: one for each segment of each row (0
// when one segment holds a whole row: no cross-segment step).
template <class S>
constexpr int row_scratch_area() {
  return row_segments<S::kThreadsPerRow>() > 1 ? S::kRowsPerCta * row_segments<S::kThreadsPerRow>() : 0;
}

// Shared memory for cross-segment row reductions: PER_WARP areas of
// row_scratch_area floats, or none (a null pointer) when a segment holds a
// whole row.
template <class S, int PER_WARP>
__device__ __forceinline__ float* row_scratch() {
  if constexpr (row_scratch_area<S>() > 0) {
    __shared__ float scratch[PER_WARP * row_scratch_area<S>()];
    return scratch;
  } else {
    return nullptr;
  }
}

// This thread's part of a row held in registers, from one or more streams
// given as (dst, src) pairs (dst: floats, or Held values as loaded): access j holds the kVec columns from
// (j * kThreadsPerRow + t) * kVec on; zeros where the row is not valid or has
// ended. A row's streams are read access by access, side by side.
template <class S>
__device__ __forceinline__ void load_access(int, i64) {}
template <class S, class T, class... More>
__device__ __forceinline__ void load_access(int j, i64 col, float (&dst)[S::kVecsPerThread][S::kVec], const T* src,
                                            More&&... more) {
  load<S::kVec>(src + col, dst[j]);
  load_access<S>(j, col, more...);
}
template <class S, class T, class... More>
__device__ __forceinline__ void load_access(int j, i64 col, Held<T, S::kVec> (&dst)[S::kVecsPerThread], const T* src,
                                            More&&... more) {
  load_held<S::kVec>(src + col, dst[j]);
  load_access<S>(j, col, more...);
}
template <class S>
__device__ __forceinline__ void zero_access(int) {}
template <class S, class T, class... More>
__device__ __forceinline__ void zero_access(int j, float (&dst)[S::kVecsPerThread][S::kVec], const T*, More&&... more) {
#pragma unroll
  for (int k = 0; k < S::kVec; ++k) dst[j][k] = 0.f;
  zero_access<S>(j, more...);
}
template <class S, class T, class... More>
__device__ __forceinline__ void zero_access(int j, Held<T, S::kVec> (&dst)[S::kVecsPerThread], const T*,
                                            More&&... more) {
  zero_held<S::kVec>(dst[j]);
  zero_access<S>(j, more...);
}
template <class S, class... Streams>
__device__ __forceinline__ void load_row_part(bool valid, i64 n, int t, Streams&&... streams) {
#pragma unroll
  for (int j = 0; j < S::kVecsPerThread; ++j) {
    const i64 col = static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec;
    if (valid && col < n) {
      load_access<S>(j, col, streams...);
    } else {
      zero_access<S>(j, streams...);
    }
  }
}

// Sum of this thread's part of a row (the zeros past its end add nothing).
template <class S>
__device__ __forceinline__ float part_sum(const float (&v)[S::kVecsPerThread][S::kVec]) {
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < S::kVecsPerThread; ++j)
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) sum += v[j][k];
  return sum;
}

// Squared deviations from `mean` over the accesses of this thread's part that
// lie inside the row (n columns).
template <class S>
__device__ __forceinline__ float part_squares(const float (&v)[S::kVecsPerThread][S::kVec], float mean, i64 n, int t) {
  float sq = 0.f;
#pragma unroll
  for (int j = 0; j < S::kVecsPerThread; ++j) {
    if (static_cast<i64>(j * S::kThreadsPerRow + t) * S::kVec < n) {
#pragma unroll
      for (int k = 0; k < S::kVec; ++k) sq += (v[j][k] - mean) * (v[j][k] - mean);
    }
  }
  return sq;
}

// The factor that forms xhat = (x - mean) * scale in the forward: rstd, or 0
// for a row of variance 0 (N = 1, a constant row), whose xhat is exactly 0,
// so that y is exactly the bias. (With rstd = 1/sqrt(eps) the FMA form would
// magnify the rounding of x * rstd - mean * rstd.) The rstd saved for the
// backward stays 1/sqrt(var + eps), as PyTorch's. Once per row: costs
// nothing per element.
__device__ __forceinline__ float xhat_scale(float var, float rstd) { return var == 0.f ? 0.f : rstd; }

// A row's normalisation from its statistics (var: the variance, or RMSNorm's
// mean square): xhat = x * scale + shift, with rstd = 1/sqrt(var + eps) and
// scale its xhat_scale (RMSNorm: rstd itself). When `save`, this thread
// stores the row's mean (LayerNorm) and rstd where those pointers are set.
// Shared by every forward (fwd.cuh, fwd_cluster.cuh, fwd_smem.cuh).
struct RowAffine {
  float scale, shift, rstd;
};
template <class S>
__device__ __forceinline__ RowAffine row_affine(const FwdParams& p, i64 row, float mean, float var, bool save) {
  const float rstd = rsqrtf(var + p.eps);
  const float scale = S::kRms ? rstd : xhat_scale(var, rstd);
  const RowAffine a{scale, -mean * scale, rstd};
  if (save) {
    if constexpr (!S::kRms) {
      if (p.mean) p.mean[row] = mean;
    }
    if (p.rstd) p.rstd[row] = rstd;
  }
  return a;
}

// The statistics of a CTA's S::kRowsPerCta consecutive rows, stored as runs
// of consecutive floats by warp 0 instead of 4 bytes a row by each row's
// lane 0 (row_affine's `save`). Each row's writer leaves its mean and rstd in
// shared memory (put_cta_stats, every thread of the CTA, before any
// returns); warps 1.. arrive at named barrier 1 without waiting and go on to
// their outputs; warp 0, after its own outputs, waits there and stores the
// CTA's statistics (store_cta_stats). Session 54 (bench/results/s54, call
// 10, A/B at x = 512 MiB): LayerNorm bf16 256 260.9 -> 259.4 us, 512 259.2
// -> 255.6, RMSNorm bf16 256 257.4 -> 253.0. With every warp waiting at a
// CTA barrier instead (call 5), 256 columns lost a point: a CTA lives about
// 3 us there (bench/probes/stats_store_probe.cu). Session 55 (bench/results/
// s55, call 1, the version here): bf16 512 258.7 -> 255.8 us, RMSNorm bf16
// 256 257.3 -> 251.5; 1024 columns and up, M = 4096 and M = 1 level.
template <class S>
__device__ __forceinline__ float* cta_stats_area() {
  __shared__ float area[2 * S::kRowsPerCta];  // means, then rstds
  return area;
}
template <class S>
__device__ __forceinline__ bool has_stats_out(const FwdParams& p) {
  return (!S::kRms && p.mean) || p.rstd;
}
template <class S>
__device__ __forceinline__ void put_cta_stats(const FwdParams& p, int local, bool writer, float mean, float rstd) {
  static_assert(S::kThreads % 32 == 0, "named barriers count whole warps");
  if (!has_stats_out<S>(p)) return;  // the same for the whole CTA
  float* const area = cta_stats_area<S>();
  if (writer) {
    area[local] = mean;
    area[S::kRowsPerCta + local] = rstd;
  }
  if (threadIdx.x >= 32) asm volatile("bar.arrive 1, %0;" ::"n"(S::kThreads) : "memory");
}
template <class S>
__device__ __forceinline__ void store_cta_stats(const FwdParams& p, i64 first) {
  if (threadIdx.x >= 32 || !has_stats_out<S>(p)) return;
  asm volatile("bar.sync 1, %0;" ::"n"(S::kThreads) : "memory");
  const float* const area = cta_stats_area<S>();
  for (int i = static_cast<int>(threadIdx.x); i < 2 * S::kRowsPerCta; i += 32) {
    const int r = i % S::kRowsPerCta;
    float* const out = i < S::kRowsPerCta ? (S::kRms ? nullptr : p.mean) : p.rstd;
    if (out && first + r < p.M) out[first + r] = area[i];
  }
}

// y = xhat * w + b (w: applied_weight<S>, so 1 + w when zero-centred) for one access
// of kVec columns from `col` on, with the weight and bias the shape has; xhat as S::kFusedXhat says, with `rstd` the
// row's xhat_scale and shift = -mean * rstd. WHOLE: y through store_global (ordered), where
// the compiler split store()'s 16-byte copy (fwd_cluster.cuh). Not for fwd.cuh, whose
// store() stays whole: store_global there, ordered or not, changes its SASS (bf16 N = 1024
// 384 -> 392 instructions, fp32 16384 528 -> 608), unmeasured.
template <class S, bool WHOLE = false>
__device__ __forceinline__ void normalize_store(typename S::Y* y, const typename S::W* weight,
                                                const typename S::W* bias, i64 col, const float (&x)[S::kVec],
                                                float mean, float rstd, float shift) {
  float w[S::kVec], b[S::kVec];
  if constexpr (S::kHasWeight) {
    load<S::kVec>(weight + col, w);
#pragma unroll
    for (int k = 0; k < S::kVec; ++k) w[k] = applied_weight<S>(w[k]);
  }
  if constexpr (S::kHasBias) load<S::kVec>(bias + col, b);
  float out[S::kVec];
#pragma unroll
  for (int k = 0; k < S::kVec; ++k) {
    const float xhat = S::kFusedXhat ? fmaf(x[k], rstd, shift) : (x[k] - mean) * rstd;
    if constexpr (S::kHasWeight && S::kHasBias) {
      out[k] = fmaf(xhat, w[k], b[k]);
    } else if constexpr (S::kHasWeight) {
      out[k] = xhat * w[k];
    } else if constexpr (S::kHasBias) {
      out[k] = xhat + b[k];
    } else {
      out[k] = xhat;
    }
  }
  if constexpr (WHOLE) {
    store_global<S::kVec, true>(y + col, out);
  } else {
    store<S::kVec>(y + col, out);
  }
}

// Asks L2 to fetch the line holding `p` (no registers, no wait).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// Sum over the WIDTH lanes of each aligned WIDTH-lane segment of a warp.
// Butterfly (xor) order: every lane computes the same additions in an order
// that differs only by commutation, so all lanes hold bitwise the same sum.
template <int WIDTH>
__device__ __forceinline__ float segment_sum(float v) {
#pragma unroll
  for (int o = WIDTH / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The least power of two >= v (constexpr; NVRTC has no __builtin_clz).
constexpr int next_pow2_int(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// The cross-warp step of row_sum / row_sum2: lane l of each warp reads warp
// (l % WARPS)'s sum from `sums` (one float a warp, in warp order) and the
// warp adds them in butterfly order (segment_sum), so every thread gets the
// same bits with one shared-memory load and log2(WARPS) shuffles (a loop
// over the WARPS sums took WARPS adds and loads in every thread: the 16-bit
// forward on an H200 is bound by instructions issued, not bytes).
// Other than a power of two of sums: padded with zeros to the next power
// of two (an exact +0.f: the same bits in every lane still). The lanes of
// one butterfly must share a row: rows of other than a power of two of
// threads take it only where the padded count divides their segments'
// lanes (sums_by_shuffle), else a loop.
template <int WARPS>
__device__ __forceinline__ float warp_sums_total(const float* sums) {
  static_assert(WARPS >= 1 && WARPS <= 32, "sums a row: 1 to 32");
  if constexpr ((WARPS & (WARPS - 1)) == 0) {
    return segment_sum<WARPS>(sums[threadIdx.x % WARPS]);
  } else {
    constexpr int kPadded = next_pow2_int(WARPS);
    const int i = static_cast<int>(threadIdx.x % kPadded);
    return segment_sum<kPadded>(i < WARPS ? sums[i] : 0.f);
  }
}

// Whether a row of THREADS_PER_ROW threads can combine its segments' sums
// with warp_sums_total: its butterfly's aligned lanes (the segments' count
// padded to a power of two) lie within one row, as the segments' lanes do.
// A row of 72 threads (9 segments of 8 lanes) cannot: a butterfly over 16
// lanes would mix two rows (bench/results/s44, call 1: every such config
// failed its check).
template <int THREADS_PER_ROW>
constexpr bool sums_by_shuffle() {
  return next_pow2_int(row_segments<THREADS_PER_ROW>()) <= row_segment_lanes<THREADS_PER_ROW>();
}
// The sum of a row's SEGS segment sums, in every thread of the row: by
// warp_sums_total, or (COMBINE = loop, or where its butterfly would mix
// rows) a loop over them in every thread.
enum class WarpCombine { shuffle, loop };
template <int THREADS_PER_ROW, int SEGS, WarpCombine COMBINE = WarpCombine::shuffle>
__device__ __forceinline__ float segments_total(const float* sums) {
  if constexpr (COMBINE == WarpCombine::shuffle && sums_by_shuffle<THREADS_PER_ROW>()) {
    return warp_sums_total<SEGS>(sums);
  } else {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < SEGS; ++i) s += sums[i];
    return s;
  }
}

// Sum of `v` over the THREADS_PER_ROW threads that share a row; the
// CTA holds ROWS such rows side by side. Every thread of the row gets the
// same bits. `scratch` holds ROWS * row_segments floats.
// All threads of the CTA must call it (it may contain __syncthreads).
// REUSE (the default): the function ends with a barrier when it used
// scratch, so the next call may write the same scratch. REUSE = false leaves
// that barrier out: for the last use of a scratch area before the next
// barrier (the forward puts its mean and variance in two areas).
// COMBINE: the cross-warp step, warp_sums_total's (the default) or a loop
// over the warps' sums in every thread (fewer live registers: for kernels
// at the register limit that take a sum per slab, where its cost is lost).
// Rows of other than a power of two of threads go by segments
// (row_segment_lanes) instead of warps, the same steps.
template <int THREADS_PER_ROW, int ROWS, bool REUSE = true, WarpCombine COMBINE = WarpCombine::shuffle>
__device__ __forceinline__ float row_sum(float v, float* scratch) {
  if constexpr (row_segments<THREADS_PER_ROW>() == 1) {
    return segment_sum<THREADS_PER_ROW>(v);
  } else {
    constexpr int kLanes = row_segment_lanes<THREADS_PER_ROW>();
    constexpr int kSegs = row_segments<THREADS_PER_ROW>();  // warps, where a power of two
    const int slot = static_cast<int>(threadIdx.x / THREADS_PER_ROW);
    const int seg = static_cast<int>(threadIdx.x % THREADS_PER_ROW) / kLanes;
    v = segment_sum<kLanes>(v);
    if ((threadIdx.x % kLanes) == 0) scratch[slot * kSegs + seg] = v;
    __syncthreads();
    const float s = segments_total<THREADS_PER_ROW, kSegs, COMBINE>(scratch + slot * kSegs);
    if constexpr (REUSE) __syncthreads();
    return s;
  }
}

// A barrier of the THREADS_PER_ROW threads of this thread's row slot (named
// barrier 1 + slot), where the slots are whole warps and at most 15 (ids
// 1-15; 0 is __syncthreads'), else of the CTA. With ROWS == 1, the CTA's.
template <int THREADS_PER_ROW, int ROWS>
__device__ __forceinline__ void slot_barrier() {
  if constexpr (ROWS > 1 && ROWS <= 15 && THREADS_PER_ROW % 32 == 0) {
    // The id in a register: ptxas then reserves all 16 barriers (no limit on
    // CTAs a SM: the probe ran three such CTAs a SM). Immediate ids, a branch
    // a slot, made the plain bf16 entries spill 20-24 bytes at 128 registers.
    const unsigned id = 1u + threadIdx.x / THREADS_PER_ROW;
    asm volatile("bar.sync %0, %1;" ::"r"(id), "n"(THREADS_PER_ROW) : "memory");
  } else {
    __syncthreads();
  }
}

// Two sums at once (one barrier round instead of two); `scratch` holds
// 2 * ROWS * row_segments floats. SLOT_BARRIER: the barriers are
// the row slot's own (slot_barrier), so that the CTA's row slots need not
// step together: for kernels where nothing else between two sums waits on
// the whole CTA (the backward's single-tile rows: bf16 N = 4096 at
// M = 4096, the teams of bench/probes/bwd_team_probe.cu ran their dx 2.3 us
// faster free than with a CTA barrier a row; bench/results/s37, call 3).
template <int THREADS_PER_ROW, int ROWS, bool SLOT_BARRIER = false>
__device__ __forceinline__ void row_sum2(float& a, float& b, float* scratch) {
  if constexpr (row_segments<THREADS_PER_ROW>() == 1) {
    a = segment_sum<THREADS_PER_ROW>(a);
    b = segment_sum<THREADS_PER_ROW>(b);
  } else {
    constexpr int kLanes = row_segment_lanes<THREADS_PER_ROW>();
    constexpr int kSegs = row_segments<THREADS_PER_ROW>();  // warps, where a power of two
    const int slot = static_cast<int>(threadIdx.x / THREADS_PER_ROW);
    const int seg = static_cast<int>(threadIdx.x % THREADS_PER_ROW) / kLanes;
    a = segment_sum<kLanes>(a);
    b = segment_sum<kLanes>(b);
    float* s = scratch + 2 * slot * kSegs;
    if ((threadIdx.x % kLanes) == 0) {
      s[seg] = a;
      s[kSegs + seg] = b;
    }
    if constexpr (SLOT_BARRIER) {
      slot_barrier<THREADS_PER_ROW, ROWS>();
    } else {
      __syncthreads();
    }
    a = segments_total<THREADS_PER_ROW, kSegs>(s);
    b = segments_total<THREADS_PER_ROW, kSegs>(s + kSegs);
    if constexpr (SLOT_BARRIER) {
      slot_barrier<THREADS_PER_ROW, ROWS>();
    } else {
      __syncthreads();
    }
  }
}

// Running statistics of a set of values (count, mean, sum of squared
// deviations), merged with Chan et al.'s formula. Numerically stable for rows
// whose mean is large compared to their spread.
struct Welford {
  float n;
  float mean;
  float m2;
};

__device__ __forceinline__ Welford welford_merge(Welford a, Welford b) {
  const float n = a.n + b.n;
  if (b.n == 0.f) return a;
  if (a.n == 0.f) return b;
  const float delta = b.mean - a.mean;
  const float f = b.n / n;
  return Welford{n, a.mean + delta * f, a.m2 + b.m2 + delta * delta * a.n * f};
}

template <int WIDTH>
__device__ __forceinline__ Welford segment_welford(Welford w) {
  // Tree towards lane 0 of the segment, then broadcast, so that every lane
  // ends with the same bits (Chan's merge is not commutative bitwise).
  const unsigned lane = threadIdx.x & 31u;
  const int base = static_cast<int>(lane & ~(WIDTH - 1u));
#pragma unroll
  for (int o = WIDTH / 2; o > 0; o >>= 1) {
    Welford other;
    other.n = __shfl_down_sync(0xffffffffu, w.n, o, WIDTH);
    other.mean = __shfl_down_sync(0xffffffffu, w.mean, o, WIDTH);
    other.m2 = __shfl_down_sync(0xffffffffu, w.m2, o, WIDTH);
    w = welford_merge(w, other);
  }
  w.n = __shfl_sync(0xffffffffu, w.n, base);
  w.mean = __shfl_sync(0xffffffffu, w.mean, base);
  w.m2 = __shfl_sync(0xffffffffu, w.m2, base);
  return w;
}

// Welford statistics over the threads of a row (see row_sum). `scratch`
// holds 3 * ROWS * (THREADS_PER_ROW / 32) floats.
template <int THREADS_PER_ROW, int ROWS>
__device__ __forceinline__ Welford row_welford(Welford w, float* scratch) {
  static_assert(THREADS_PER_ROW <= 32 ? (THREADS_PER_ROW & (THREADS_PER_ROW - 1)) == 0 : THREADS_PER_ROW % 32 == 0,
                "row_welford: a power of two of lanes or whole warps");
  if constexpr (THREADS_PER_ROW <= 32) {
    return segment_welford<THREADS_PER_ROW>(w);
  } else {
    constexpr int kWarps = THREADS_PER_ROW / 32;
    const int slot = static_cast<int>(threadIdx.x) / THREADS_PER_ROW;
    const int warp = (static_cast<int>(threadIdx.x) % THREADS_PER_ROW) / 32;
    w = segment_welford<32>(w);
    float* s = scratch + 3 * (slot * kWarps + warp);
    if ((threadIdx.x & 31) == 0) {
      s[0] = w.n;
      s[1] = w.mean;
      s[2] = w.m2;
    }
    __syncthreads();
    Welford r{0.f, 0.f, 0.f};
#pragma unroll
    for (int i = 0; i < kWarps; ++i) {
      const float* q = scratch + 3 * (slot * kWarps + i);
      r = welford_merge(r, Welford{q[0], q[1], q[2]});
    }
    __syncthreads();
    return r;
  }
}

// A generic pointer into shared memory as a shared-window address (cp.async,
// mbarriers, bulk copies take those).
__device__ __forceinline__ unsigned shared_address(const void* p) {
  unsigned long long a;
  asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return static_cast<unsigned>(a);
}

// The dynamic shared memory this launch was given, in bytes: kernels that
// need some check it (a launch with less is the launcher's bug: __trap).
__device__ __forceinline__ unsigned dynamic_smem_size() {
  unsigned r;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

// cp.async (sm_80+) of BYTES (4, 8 or 16) from global memory to the shared
// address `dst`: no register holds the data, and the issuing thread goes on.
template <int BYTES>
__device__ __forceinline__ void copy_async(unsigned dst, const void* src) {
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(dst), "l"(src), "n"(BYTES) : "memory");
  }
}
// The same, or BYTES zeros where !valid (src-size 0: nothing is read);
// BYTES over 16 (an fp32 dy beside 16-bit x, 8 to an access) as 16-byte
// copies.
template <int BYTES>
__device__ __forceinline__ void copy_async(unsigned dst, const void* src, bool valid) {
  if constexpr (BYTES > 16) {
    static_assert(BYTES % 16 == 0, "cp.async copies 4, 8 or 16 bytes");
#pragma unroll
    for (int b = 0; b < BYTES; b += 16) copy_async<16>(dst + b, static_cast<const char*>(src) + b, valid);
  } else if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16u : 0u)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(src), "n"(BYTES),
                 "r"(valid ? static_cast<unsigned>(BYTES) : 0u)
                 : "memory");
  }
}
// Closes this thread's cp.async copies issued since the last group.
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most PENDING of this thread's groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}
// Waits for this thread's cp.async copies (visible to the CTA after a
// __syncthreads).
__device__ __forceinline__ void copy_async_wait_all() {
  copy_async_commit();
  copy_async_wait<0>();
}

}  // namespace lntune

// ---------------------------------------------------------------- clusters
// A row split over the CTAs of a thread-block cluster (sm_90+): each CTA holds
// a slab of columns; row sums travel through distributed shared memory.
namespace lntune {

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_index() {
  unsigned r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_count() {
  unsigned r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}

// All threads of all CTAs of the cluster; orders shared-memory accesses
// before it (release) against those after it (acquire), cluster-wide.
__device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Writes the pair (a, b) to the 8-byte word at cluster shared address
// `remote` (another CTA's, from mapa) and counts its 8 bytes on that CTA's
// mbarrier at cluster address `remote_bar` (st.async: no fence, no cluster
// barrier; the receiver waits on its mbarrier). The wide kernels' exchange.
__device__ __forceinline__ void push_pair_remote(unsigned remote, float a, float b, unsigned remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(remote),
               "f"(a), "f"(b), "r"(remote_bar)
               : "memory");
}

// Asks the copy engine to bring `bytes` (a multiple of 16; 16-byte aligned)
// from global memory into L2 (a hint: nothing waits for it).
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}

// L2 cache policies: lines kept before others (evict_last), or let go first
// (evict_first: read for the last time).
__device__ __forceinline__ unsigned long long l2_evict_last() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ unsigned long long l2_evict_first() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// bulk_prefetch_l2 with an L2 policy.
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, unsigned bytes, unsigned long long policy) {
  asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(src), "r"(bytes), "l"(policy)
               : "memory");
}
// Four floats from global memory (16-byte aligned) with an L2 policy. For
// inputs the kernel never writes: without a memory clobber, the compiler may
// move it above earlier stores. ORDERED: for inputs a store of this thread
// may alias (a gradient written in place), ordered against the thread's
// other memory accesses.
template <bool ORDERED = false>
__device__ __forceinline__ void load4(const float* src, float (&dst)[4], unsigned long long policy) {
  if constexpr (ORDERED) {
    asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(dst[0]), "=f"(dst[1]), "=f"(dst[2]), "=f"(dst[3])
                 : "l"(src), "l"(policy)
                 : "memory");
  } else {
    asm("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
        : "=f"(dst[0]), "=f"(dst[1]), "=f"(dst[2]), "=f"(dst[3])
        : "l"(src), "l"(policy));
  }
}

// Reads a float at the same shared-memory offset in CTA `rank` of the cluster.
__device__ __forceinline__ float load_remote(const float* local, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(shared_address(local)), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Shared slots for per-CTA values exchanged over a cluster, two buffers of
// FLOATS floats (alternated by row), or none (a null pointer) when the CTA is
// not part of a cluster.
template <int CLUSTER, int FLOATS>
__device__ __forceinline__ auto cluster_slots() -> float (*)[FLOATS] {
  if constexpr (CLUSTER > 1) {
    __shared__ float slots[2][FLOATS];
    return slots;
  } else {
    return nullptr;
  }
}

// Sums two per-CTA values (each identical in every thread of its CTA) over
// the CLUSTER CTAs, in rank order, so every thread of the cluster gets the
// same bits. `slots` (two floats of shared memory) must not be rewritten
// until the cluster has passed another barrier: alternate two buffers, and
// pass a barrier (cluster_arrive ... cluster_wait) before the CTA exits.
template <int CLUSTER>
__device__ __forceinline__ void cluster_sum2(float& a, float& b, float* slots) {
  if (threadIdx.x == 0) {
    slots[0] = a;
    slots[1] = b;
  }
  cluster_barrier();
  a = b = 0.f;
#pragma unroll
  for (int r = 0; r < CLUSTER; ++r) {
    a += load_remote(slots, static_cast<unsigned>(r));
    b += load_remote(slots + 1, static_cast<unsigned>(r));
  }
}

// Merges per-CTA statistics (identical in every thread of a CTA) over the
// cluster, in rank order: one exchange for the row's mean and variance.
// `slots` holds 3 floats; same lifetime rules as cluster_sum2.
template <int CLUSTER>
__device__ __forceinline__ Welford cluster_welford(Welford w, float* slots) {
  if (threadIdx.x == 0) {
    slots[0] = w.n;
    slots[1] = w.mean;
    slots[2] = w.m2;
  }
  cluster_barrier();
  Welford r{0.f, 0.f, 0.f};
#pragma unroll
  for (int c = 0; c < CLUSTER; ++c) {
    const unsigned rank = static_cast<unsigned>(c);
    r = welford_merge(r, Welford{load_remote(slots, rank), load_remote(slots + 1, rank), load_remote(slots + 2, rank)});
  }
  return r;
}

}  // namespace lntune

// ------------------------------------- dependent launches and the grid barrier

namespace lntune {

// Programmatic dependent launch (sm_90+; no-ops before). A kernel launched
// with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (bwd_dwdb after
// bwd_dx, rt::launch_dwdb) may start while the kernel before it in the
// stream still runs; wait_for_prior_grids returns once that kernel has
// completed and its writes are visible, so it comes before anything the
// kernel reads of them. allow_dependent_grids, in the kernel before, lets
// the dependent start early (its CTAs take SMs as this kernel's CTAs leave;
// without it, only when this kernel ends). Neither changes what is computed.
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// A barrier across every CTA of the grid, for kernels launched with
// cuLaunchCooperativeKernel (which guarantees that all CTAs are resident at
// once). The barrier word is the driver's: a cooperative launch passes its
// grid workspace in %envreg1 (high half) and %envreg2 (low half), as
// cooperative_groups' grid.sync() reads it (cooperative_groups/details/
// driver_abi.h and sync.h; this file carries no toolkit header, see the top).
// Each CTA adds 1 and CTA 0 adds 2^31 - (G - 1): all G arrivals add 2^31,
// which flips the word's top bit and leaves the rest as it was, so the word
// needs no reset between barriers or launches. Release on arrival, acquire
// on the poll: what a CTA wrote before the barrier is visible to every CTA
// after it (read it through L2: __ldcg). Every thread of every CTA calls it.
__device__ __forceinline__ void grid_barrier() {
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned hi, lo;
    asm volatile("mov.u32 %0, %%envreg1;" : "=r"(hi));
    asm volatile("mov.u32 %0, %%envreg2;" : "=r"(lo));
    // The workspace is {unsigned size; unsigned barrier;}.
    unsigned* const word =
        reinterpret_cast<unsigned*>((static_cast<unsigned long long>(hi) << 32 | lo) + sizeof(unsigned));
    if ((static_cast<unsigned long long>(hi) << 32 | lo) == 0) __trap();  // not a cooperative launch
    const unsigned expected = gridDim.x * gridDim.y * gridDim.z;
    const unsigned add = blockIdx.x + blockIdx.y + blockIdx.z == 0 ? 0x80000000u - (expected - 1) : 1u;
    unsigned old, now;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(word), "r"(add) : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
    } while (((old ^ now) & 0x80000000u) == 0);
  }
  __syncthreads();
}

}  // namespace lntune
