// lntune/kernels/bwd_dwdb.cuh — the final dW/dB reduction: sums the P fp32
// partial rows written by the backward (bwd_dx.cuh) into dW and dB.
//
// A CTA owns S::kCols columns; its threads split the partial rows in a fixed
// interleaving and combine their sums in a fixed order, so the result does
// not depend on timing.
#pragma once

#include "lntune/common.cuh"

namespace lntune {

// The compile-time shape of the reduction: output type, columns per CTA,
// warps, and which of dW and dB it produces.
template <class WeightT, int BLOCK_SIZE, int NUM_WARPS, bool HAS_WEIGHT, bool HAS_BIAS>
struct DwdbShape {
  using W = WeightT;
  static constexpr int kCols = BLOCK_SIZE;  // columns per CTA
  static constexpr int kThreads = 32 * NUM_WARPS;
  static constexpr int kRowGroups = kThreads / BLOCK_SIZE;  // threads per column
  static constexpr bool kHasWeight = HAS_WEIGHT;
  static constexpr bool kHasBias = HAS_BIAS;
  static_assert(BLOCK_SIZE >= 32 && kThreads % BLOCK_SIZE == 0, "32 <= block_size <= threads, both powers of two");
  static_assert(HAS_WEIGHT || HAS_BIAS, "a reduction of dW, dB or both");
};

template <class S>
__device__ __forceinline__ void layer_norm_bwd_dwdb(const DwdbParams& p) {
  using W = typename S::W;
  constexpr int kCols = S::kCols;
  constexpr int kRowGroups = S::kRowGroups;
  const int c = static_cast<int>(threadIdx.x) % kCols;
  const int r = static_cast<int>(threadIdx.x) / kCols;
  const i64 col = static_cast<i64>(blockIdx.x) * kCols + c;
  const bool valid = col < p.N;
  float dw = 0.f, db = 0.f;
  if (valid) {
    for (i64 i = r; i < p.P; i += kRowGroups) {
      if constexpr (S::kHasWeight) {
        if (p.dw_partial) dw += p.dw_partial[i * p.N + col];
      }
      if constexpr (S::kHasBias) {
        if (p.db_partial) db += p.db_partial[i * p.N + col];
      }
    }
  }
  if constexpr (kRowGroups > 1) {
    // Combine the row groups' sums, in order.
    __shared__ float dw_sums[S::kHasWeight ? kRowGroups : 1][kCols];
    __shared__ float db_sums[S::kHasBias ? kRowGroups : 1][kCols];
    if constexpr (S::kHasWeight) dw_sums[r][c] = dw;
    if constexpr (S::kHasBias) db_sums[r][c] = db;
    __syncthreads();
    if (r != 0) return;
    dw = db = 0.f;
    for (int g = 0; g < kRowGroups; ++g) {
      if constexpr (S::kHasWeight) dw += dw_sums[g][c];
      if constexpr (S::kHasBias) db += db_sums[g][c];
    }
  }
  if (!valid) return;
  if constexpr (S::kHasWeight) {
    if (p.dw) static_cast<W*>(p.dw)[col] = from_float<W>(dw);
  }
  if constexpr (S::kHasBias) {
    if (p.db) static_cast<W*>(p.db)[col] = from_float<W>(db);
  }
}

}  // namespace lntune
