// lntune::tune — the CPU as the oracle of the GPU's float64 reference.
//
// A workload built on the GPU (Workload's DeviceBuild constructor) draws its
// inputs there (tuner/device_fill.hpp) and computes its reference there
// (tuner/device_reference.hpp, templates/kernels/reference.cuh). The CPU
// checks every such reference on a sample: it draws the inputs of a few rows
// itself (rnd::fill_range, the same bits), runs the CPU reference
// (tuner/reference.hpp) on them and compares:
//   * sampled_rows(M): the first row, the last, and rows at a fixed stride
//     in between: y (forward) or dx (backward) within one ulp of their dtype
//     (the two compute in double in different orders, so a value within a
//     few double roundings of a rounding boundary may round to the next
//     value: one ulp, counted; more is an error), z bit for bit (it is
//     formed exactly as on the CPU), mean and rstd within one fp32 ulp;
//   * dW/dB (backward): (a) the first and the last chunk of the GPU's
//     partials (dwdb_partition) recomputed on the CPU from its own rows, the
//     same terms dy * ((x - mean) * rstd) summed in the same row order, with
//     the CPU's double statistics: each column within
//     chunk_tolerance(rows) * sum |terms| (see there); (b) every partial
//     summed on the host in chunk order and rounded once (sum_partials):
//     bit for bit the GPU's dW and dB (any NaN matching any NaN).
// Any disagreement is an error naming the problem and the quantity; the
// tuner fails the key (KeyError, tuner/search.hpp).
//
// Also here: the tuner's input recipe (inputs::*), shared by every path that
// draws a workload's inputs, so that they cannot drift apart.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lntune/types.hpp"

namespace lntune::tune {

// One input tensor of a workload: offset + scale * N(0, 1) (rnd::fill), drawn
// with seed + seed_offset from the workload's seed.
struct InputDraw {
  double offset = 0, scale = 1;
  std::uint64_t seed_offset = 0;
};

namespace inputs {
inline constexpr InputDraw x{0.5, 2.0, 0};
// Zero-centred weights are stored around 0 (applied as 1 + w).
inline constexpr InputDraw weight(bool zero_centered) { return {zero_centered ? 0.0 : 1.0, 0.5, 1}; }
inline constexpr InputDraw bias{0.0, 0.5, 2};
inline constexpr InputDraw dy{0.0, 1.0, 3};
inline constexpr InputDraw residual{0.0, 1.0, 4};
inline constexpr InputDraw dz{0.0, 1.0, 5};
inline constexpr float kEps = 1e-5f;  // every workload's eps (exactly the kernels')
}  // namespace inputs

// The fixed two-level order of the reference's dW/dB (both the GPU's and
// the oracle's): chunk c holds rows [c * rows_per_chunk, min(M, (c + 1) *
// rows_per_chunk)).
struct DwdbPartition {
  std::int64_t chunks = 1, rows_per_chunk = 1;
  std::int64_t row_begin(std::int64_t c) const { return c * rows_per_chunk; }
  std::int64_t row_end(std::int64_t c, std::int64_t m) const {
    return std::min(m, (c + 1) * rows_per_chunk);
  }
};
// A function of (M, N) only: chunks of at least 2^20 elements (ceil(2^20 /
// N) rows), and at most 2^22 / N chunks (the partials, chunks x N doubles
// per gradient, stay within 32 MiB each); never more rows than M. Throws
// lntune::Error for M < 1 or N < 1.
DwdbPartition dwdb_partition(std::int64_t m, std::int64_t n);

// The rows the oracle checks: 0, M - 1, and the multiples of (M - 1) / 7
// between them (at most 8 rows; ascending, no repeats). Throws for M < 1.
std::vector<std::int64_t> sampled_rows(std::int64_t m);

// The distance in ulps between two values of `dtype` (the storage bits of
// one element each): 0 for equal bits, for +0 and -0, and for two NaNs; the
// number of representable values between them otherwise (counted through
// zero for opposite signs); UINT64_MAX for a NaN against a number.
std::uint64_t ulp_distance(DType dtype, const void* a, const void* b);

// The elements of `got` against `want` (count elements of dtype each). An
// element also passes (counted in `within`) when |got - want| <= abs_floor:
// two double computations of a value formed by cancellation (a dx near 0,
// whose terms are of the row's size) differ by double roundings of the
// terms, which can be many ulps of the small result.
struct UlpCount {
  std::int64_t compared = 0;
  std::int64_t within = 0;  // 0 < ulps <= max_ulps, or within abs_floor (0 ulps: not counted)
  std::int64_t beyond = 0;  // more than max_ulps and abs_floor
  std::int64_t first_beyond = -1;  // its index, or -1
  std::uint64_t worst = 0;         // the largest distance seen
};
UlpCount count_ulps(DType dtype, const void* got, const void* want, std::int64_t count, std::uint64_t max_ulps,
                    double abs_floor = 0.0);

// The oracle's abs_floor for values computed from terms of about the size of
// the largest: 2^-36 times the largest finite |want| (double roundings of
// sums of up to 2^17 terms stay far below; a wrong reference is off by far
// more). 0 when there is no finite value.
double cancellation_floor(DType dtype, const void* want, std::int64_t count);

// Partials (chunks x N doubles, row c = chunk c) summed per column in chunk
// order from 0.0, in double, each sum rounded once to `dtype`: N elements of
// its storage bits.
std::vector<unsigned char> sum_partials(const double* partials, std::int64_t chunks, std::int64_t n, DType dtype);

// The relative tolerance of a chunk's partial sums, GPU against CPU, as a
// multiple of the chunk's sum of |terms| per column: both add the same terms
// in the same row order, so they differ only by (1) the terms, whose double
// statistics come from differently ordered sums (each within a few units of
// 2^-53 relative for any non-degenerate row; 1e-12 covers them with a wide
// margin), and (2) each running sum's roundings, which the different terms
// can make differ: at most rows * 2^-53 * sum |terms| on each side.
double chunk_tolerance(std::int64_t rows);

// What the GPU built, downloaded for the check (Workload gathers it).
struct GpuReferenceSample {
  Traits traits;  // canonical; kernel fwd or bwd_dx
  std::int64_t m = 0, n = 0;
  std::uint64_t seed = 0;
  std::vector<std::int64_t> rows;  // sampled_rows(m)
  // One row of N elements per sampled row, in that order:
  std::vector<unsigned char> main;  // forward: y (y dtype); backward: dx (x dtype)
  std::vector<unsigned char> z;     // with a residual: z (residual dtype; the backward's input row)
  // Every row (M each): forward: the reference's; backward: the inputs the
  // kernels under test read (the GPU forward reference's).
  std::vector<float> mean, rstd;
  // Backward with dW and/or dB: the partials (chunks x N doubles; empty when
  // that gradient is not wanted) and the GPU's dW / dB (N elements of w dtype).
  DwdbPartition partition;
  std::vector<double> dw_partials, db_partials;
  std::vector<unsigned char> dw, db;
};

// The oracle's verdict.
struct OracleReport {
  std::string error;            // "": the GPU's reference agrees; else what disagrees, and where
  std::int64_t compared = 0;    // y/dx/z elements of the sampled rows compared
  std::int64_t one_ulp = 0;     // of those (and of mean, rstd, dW, dB), one ulp apart
  std::int64_t dwdb_chunks_checked = 0;  // chunks recomputed (0, 1 or 2)
  bool ok() const { return error.empty(); }
};

// Checks `gpu` as described at the top. Pure CPU work (run it on any
// thread); never throws for a disagreement (see OracleReport::error), only
// for invalid arguments (lntune::Error).
OracleReport check_gpu_reference(const GpuReferenceSample& gpu);

}  // namespace lntune::tune
