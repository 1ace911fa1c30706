// lntune::tune — `lntune tune`'s default grid over two M buckets, and the
// de-duplication of targets that share a tune key.
//
// The default grid (no --n, no --m) is, in tuning order:
//   1. the training bucket: M = gen::kTrainingM over gen::default_n_grid()
//      (then, without --op/--residual, its RMSNorm variants: see
//      default_variant_grid in tuner.hpp);
//   2. the bandwidth-regime bucket (bandwidth_targets): x of
//      gen::kBandwidthBytes over gen::bandwidth_n_grid(), LayerNorm, then
//      (without --op/--residual) the same RMSNorm variants.
// The bandwidth bucket comes last, so a --budget that runs out skips it
// first: its keys are stored nothing, the launcher serves those shapes from
// the nearest M bucket, or, in the last bucket (M >= 64 x SMs), by the
// default heuristic (runtime/cache_binding.hpp), and the next `lntune tune`
// resumes them.
#pragma once

#include <optional>
#include <vector>

#include "lntune/types.hpp"
#include "tuner/tuner.hpp"

namespace lntune::tune {

// The bandwidth-regime targets, in the order kernels, dtypes, N (as
// make_targets): for each N of gen::bandwidth_n_grid(), M =
// gen::bandwidth_m(N, dtype). Throws lntune::Error for empty lists or
// kernel bwd_dwdb (as make_targets).
std::vector<Target> bandwidth_targets(const std::vector<DType>& dtypes, const std::vector<Kernel>& kernels,
                                      std::optional<DType> w_dtype = {}, bool weight = true, bool bias = true);

// `lntune tune`'s default grid for these dtypes and kernels (no --n, --m,
// --op, --residual), in tuning order: the training bucket's LayerNorm
// targets, their RMSNorm variants (default_variant_grid), then
// bandwidth_targets and their RMSNorm variants. Keys may repeat (see
// unique_keys).
std::vector<Target> default_grid(const std::vector<DType>& dtypes, const std::vector<Kernel>& kernels,
                                 std::optional<DType> w_dtype = {}, bool weight = true, bool bias = true);

// `targets` without those whose tune key (canonical traits, N, and the M
// bucket cache::m_bucket(M, sm_count)) an earlier target has: the tuner
// plans every target up front and would tune such a key twice into one
// record. Order kept; the first target of a key stays (its M is the one
// timed). `dropped`, when given, receives the targets left out. Throws
// lntune::Error for sm_count <= 0.
std::vector<Target> unique_keys(const std::vector<Target>& targets, int sm_count,
                                std::vector<Target>* dropped = nullptr);

}  // namespace lntune::tune
