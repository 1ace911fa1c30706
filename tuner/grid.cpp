#include "tuner/grid.hpp"

#include <tuple>

#include "cache/cache.hpp"
#include "generator/space.hpp"

namespace lntune::tune {

std::vector<Target> bandwidth_targets(const std::vector<DType>& dtypes, const std::vector<Kernel>& kernels,
                                      std::optional<DType> w_dtype, bool weight, bool bias) {
  if (dtypes.empty() || kernels.empty()) throw Error("lntune: bandwidth_targets: empty dtype or kernel list");
  std::vector<Target> out;
  for (Kernel k : kernels)
    for (DType d : dtypes)
      for (std::int64_t n : gen::bandwidth_n_grid()) {
        const auto one = make_targets({n}, {gen::bandwidth_m(n, d)}, {d}, {k}, w_dtype, weight, bias);
        out.insert(out.end(), one.begin(), one.end());
      }
  return out;
}

std::vector<Target> default_grid(const std::vector<DType>& dtypes, const std::vector<Kernel>& kernels,
                                 std::optional<DType> w_dtype, bool weight, bool bias) {
  std::vector<Target> out = default_variant_grid(
      make_targets(gen::default_n_grid(), {gen::kTrainingM}, dtypes, kernels, w_dtype, weight, bias));
  // The bandwidth bucket with the same variants: served from the training
  // bucket's records instead (the nearest M bucket), RMSNorm bf16 on an H200
  // fell to 52.5 / 82.0 / 80.6% of copy in the backward at N = 256 / 512 /
  // 1024 (99.3-99.7% with the default heuristic) and 80.4% in the forward at
  // 8192 (93.9%): the training bucket's winners are sized for 4096 rows
  // (bench/results/s33, call 4).
  const auto bw = default_variant_grid(bandwidth_targets(dtypes, kernels, w_dtype, weight, bias));
  out.insert(out.end(), bw.begin(), bw.end());
  return out;
}

std::vector<Target> unique_keys(const std::vector<Target>& targets, int sm_count, std::vector<Target>* dropped) {
  if (sm_count <= 0) throw Error("lntune: unique_keys: sm_count must be > 0, got " + std::to_string(sm_count));
  using Key = std::tuple<Traits, std::int64_t, int>;
  std::vector<Key> seen;
  std::vector<Target> out;
  for (const Target& t : targets) {
    Key k{t.traits.canonical(), t.n, cache::m_bucket(t.m, sm_count)};
    bool dup = false;
    for (const Key& s : seen) dup = dup || s == k;
    if (dup) {
      if (dropped) dropped->push_back(t);
      continue;
    }
    seen.push_back(std::move(k));
    out.push_back(t);
  }
  return out;
}

}  // namespace lntune::tune
