#include "tuner/random_fill.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "tuner/host_dtype.hpp"

namespace lntune::tune::rnd {

namespace {

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Approximately N(0, 1): the sum of four 16-bit uniforms, scaled to unit
// variance (as tests/gpu_util.hpp does, cheaper). The sum of (u_i + 0.5) /
// 65536 is exact in a double, so it is computed once from the integer sum.
std::uint32_t uniform_sum(std::uint64_t& s) {
  const std::uint64_t r = splitmix64(s);
  return static_cast<std::uint32_t>((r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48));
}
double normal_of_sum(std::uint32_t sum) { return (static_cast<double>(sum + 2) / 65536.0 - 2.0) * 1.7320508075688772; }

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Elements [begin, end) of one chunk of fill_random in one dtype (no
// per-element dispatch), written to out[0, end - begin); s is the chunk's
// state advanced to `begin` (element k of a chunk is the (k + 1)-th draw).
// `table` (kSums entries, or null): offset + scale * normal_of_sum(s) already
// rounded, for every sum s; else each value is rounded here (the same bits).
// Returns the chunk's max |value| after rounding: the stored value is a
// monotonic function of the sum (the affine map, then a monotonic rounding),
// so with a table only the least and the greatest sum need looking at.
template <DType D>
double fill_chunk(ref::Storage<D>* out, std::int64_t begin, std::int64_t end, double offset, double scale,
                  const ref::Storage<D>* table, std::uint64_t s) {
  const std::int64_t n = end - begin;
  if (table) {
    std::uint32_t lo = kSums, hi = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint32_t sum = uniform_sum(s);
      out[i] = table[sum];
      lo = std::min(lo, sum);
      hi = std::max(hi, sum);
    }
    if (n <= 0) return 0;
    return std::max(std::fabs(ref::to_double<D>(table[lo])), std::fabs(ref::to_double<D>(table[hi])));
  }
  double m = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const ref::Storage<D> v = ref::round_to<D>(offset + scale * normal_of_sum(uniform_sum(s)));
    out[i] = v;
    m = std::max(m, std::fabs(ref::to_double<D>(v)));
  }
  return m;
}

// fill_random in one dtype. Large fills first tabulate the rounded value of
// every sum (kSums conversions instead of one per element, the costly part).
// Every sum's value, rounded once to D.
template <DType D>
std::vector<ref::Storage<D>> typed_table(double offset, double scale) {
  std::vector<ref::Storage<D>> t(kSums);
  for (std::uint32_t s = 0; s < kSums; ++s) t[s] = ref::round_to<D>(offset + scale * normal_of_sum(s));
  return t;
}

// Elements [start, start + count) of a fill, written to bytes[0, count).
// Work is split by the generator's chunks (those the range touches), so a
// range is drawn exactly as the same elements of a whole fill.
template <DType D>
double fill_typed(unsigned char* bytes, std::int64_t start, std::int64_t count, double offset, double scale,
                  std::uint64_t seed) {
  ref::Storage<D>* out = reinterpret_cast<ref::Storage<D>*>(bytes);
  constexpr std::int64_t kChunk = 1 << 16;
  if (count <= 0) return 0;
  const std::int64_t end = start + count;
  const std::int64_t first = start / kChunk, chunks = (end + kChunk - 1) / kChunk - first;
  const auto threads = std::min<std::int64_t>(chunks, std::min<unsigned>(hardware_threads(), 64));
  std::vector<ref::Storage<D>> table;
  if (count >= std::int64_t{4} * kSums) table = typed_table<D>(offset, scale);
  const ref::Storage<D>* tab = table.empty() ? nullptr : table.data();
  std::vector<double> maxes(static_cast<std::size_t>(std::max<std::int64_t>(threads, 1)), 0.0);
  auto work = [&](std::int64_t t) {
    double m = 0;
    for (std::int64_t k = t; k < chunks; k += threads) {
      const std::int64_t c = first + k;
      const std::int64_t begin = std::max(start, c * kChunk), stop = std::min(end, (c + 1) * kChunk);
      // The chunk's state, advanced past the draws of the elements before `begin`.
      const std::uint64_t s = (seed ^ (static_cast<std::uint64_t>(c) * 0xd1b54a32d192ed03ULL)) +
                              static_cast<std::uint64_t>(begin - c * kChunk) * 0x9e3779b97f4a7c15ULL;
      m = std::max(m, fill_chunk<D>(out + (begin - start), begin, stop, offset, scale, tab, s));
    }
    maxes[static_cast<std::size_t>(t)] = m;
  };
  if (threads <= 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (std::int64_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
  }
  return *std::max_element(maxes.begin(), maxes.end());
}

template <DType D>
std::vector<unsigned char> table_bytes(double offset, double scale) {
  const std::vector<ref::Storage<D>> t = typed_table<D>(offset, scale);
  std::vector<unsigned char> out(t.size() * sizeof(ref::Storage<D>));
  std::memcpy(out.data(), t.data(), out.size());
  return out;
}

}  // namespace

std::vector<unsigned char> table(DType dtype, double offset, double scale) {
  switch (dtype) {
    case DType::f32: return table_bytes<DType::f32>(offset, scale);
    case DType::bf16: return table_bytes<DType::bf16>(offset, scale);
    case DType::f16: return table_bytes<DType::f16>(offset, scale);
  }
  return {};
}

double fill(unsigned char* out, DType dtype, std::int64_t count, double offset, double scale, std::uint64_t seed) {
  return fill_range(out, dtype, 0, count, offset, scale, seed);
}

double fill_range(unsigned char* out, DType dtype, std::int64_t start, std::int64_t count, double offset,
                  double scale, std::uint64_t seed) {
  if (start < 0) throw Error("lntune: fill_range needs start >= 0, got " + std::to_string(start));
  if (count > 0 && start > std::numeric_limits<std::int64_t>::max() - count)
    throw Error("lntune: fill_range's range [" + std::to_string(start) + ", +" + std::to_string(count) +
                ") overflows");
  switch (dtype) {
    case DType::f32: return fill_typed<DType::f32>(out, start, count, offset, scale, seed);
    case DType::bf16: return fill_typed<DType::bf16>(out, start, count, offset, scale, seed);
    case DType::f16: return fill_typed<DType::f16>(out, start, count, offset, scale, seed);
  }
  return 0;
}

}  // namespace lntune::tune::rnd
