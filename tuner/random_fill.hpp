// lntune::tune — the tuner's random inputs: counter-based, so that a fill
// depends only on (dtype, count, offset, scale, seed), whatever the number
// of threads, and so that the GPU can draw the same bits
// (tuner/device_fill.hpp, templates/kernels/fill.cuh).
//
// Element i of a fill: with c = i >> 16 and k = i & 0xffff,
//   r   = splitmix64's mix(seed ^ (c * 0xd1b54a32d192ed03) + (k + 1) * 0x9e3779b97f4a7c15)
//   sum = the sum of r's four 16-bit fields (0 .. 4 * 65535)
//   value = table[sum], table[s] = offset + scale * normal_of_sum(s) rounded
//           once (RNE) to the dtype, normal_of_sum(s) = ((s + 2) / 65536 - 2) * sqrt(3)
// (approximately offset + scale * N(0, 1): a sum of four uniforms scaled to
// unit variance).
#pragma once

#include <cstdint>
#include <vector>

#include "lntune/types.hpp"

namespace lntune::tune::rnd {

constexpr std::uint32_t kSums = 4 * 65535 + 1;  // the integer sums: 0 .. 4 * 65535

// The rounded value of every sum: kSums elements of `dtype` (dtype_size
// bytes each, the storage bits).
std::vector<unsigned char> table(DType dtype, double offset, double scale);

// Writes `count` elements of `dtype` at `out` (count * dtype_size bytes), on
// several threads. Returns the largest |value| written (0 when count is 0).
double fill(unsigned char* out, DType dtype, std::int64_t count, double offset, double scale, std::uint64_t seed);

// Elements [start, start + count) of that fill (of any count beyond them),
// written to out[0, count): bit for bit the same slice of a whole fill, at
// the cost of the slice alone (the host draws the rows it checks the GPU's
// reference on). Returns the largest |value| of the slice. Throws
// lntune::Error for start < 0 or a range beyond INT64_MAX.
double fill_range(unsigned char* out, DType dtype, std::int64_t start, std::int64_t count, double offset,
                  double scale, std::uint64_t seed);

}  // namespace lntune::tune::rnd
