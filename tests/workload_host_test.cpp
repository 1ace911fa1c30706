// The host half of a tuning workload (Workload::prepare): inputs, the
// backward's statistics and the CPU reference job, with no GPU and no CUDA
// context, so that the tuner prepares the next key's on another thread.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "lntune/lntune.hpp"
#include "tuner/workload.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;

std::string error_of(const Traits& t, std::int64_t m, std::int64_t n) {
  try {
    Workload::prepare(t, m, n, 1);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(WorkloadHost, PreparesEveryVariantWithoutAGpu) {
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (DType d : {DType::f16, DType::bf16, DType::f32}) {
      Traits ln{k, d, d, true, true};
      Traits rms = ln;
      rms.norm = Norm::rms;
      rms.has_bias = false;
      rms.residual = DType::f32;
      rms.zero_centered = true;
      for (const Traits& t : {ln, rms}) {
        // On another thread, as the tuner does; odd sizes.
        auto f = std::async(std::launch::async, [t] { return Workload::prepare(t, 37, 1001, 7); });
        Workload::HostPtr h = f.get();
        EXPECT_TRUE(h) << t;
      }  // destroyed here: waits for its reference job
    }
}

TEST(WorkloadHost, BadProblemsAreNamed) {
  const Traits fwd{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  EXPECT_EQ(error_of(fwd, 0, 1024), "lntune: a workload needs M >= 1 and N >= 1");
  EXPECT_EQ(error_of(fwd, 4, 0), "lntune: a workload needs M >= 1 and N >= 1");
  const Traits dwdb{Kernel::bwd_dwdb, DType::bf16, DType::bf16, true, true};
  EXPECT_EQ(error_of(dwdb, 4, 1024), "lntune: a workload is built for fwd or bwd_dx (bwd_dwdb shares the backward's)");
}

}  // namespace
