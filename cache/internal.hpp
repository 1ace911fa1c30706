// Helpers shared by the lntune::cache sources. Internal.
#pragma once

#include <cstdint>

namespace lntune::cache::detail {

// find_nearest's rule: true if candidate `a` is preferred to candidate `b`
// for the wanted row length `n`, i.e. |log(a/n)| < |log(b/n)|, or equal and
// a > b. Exact (128-bit integer arithmetic). All arguments > 0.
bool nearer(std::int64_t n, std::int64_t a, std::int64_t b);

}  // namespace lntune::cache::detail
