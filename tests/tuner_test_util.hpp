// Helpers shared by the tuner's GPU-free tests: configs, a scripted fake
// bench, a test GPU and sample records.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "runtime/driver.hpp"
#include "runtime/nvrtc.hpp"
#include "tuner/search.hpp"
#include "tuner/stats.hpp"
#include "tuner/tuner.hpp"

namespace lntune::testing {

using namespace lntune::tune;

inline Config cfg(int block, int warps, int rows = 1, int group = 0) { return Config{block, warps, rows, group}; }


// A bench whose behaviour per config is scripted: time in us (constant
// samples), or a failure; records what was called.
class FakeBench : public Bench {
 public:
  struct Script {
    double us = 10;
    bool compile_fails = false, launch_fails = false, wrong = false, fatal = false;
    bool bad_reference = false;  // verify(): the workload's reference failed its check (KeyError)
  };
  std::map<int, Script> by_block;  // keyed by block_size
  std::vector<int> prepared, timed, verified;
  StopRule rule;

  FakeBench() {
    rule.min_reps = 10;
    rule.prune_after = 5;
  }
  const Script& script(const Config& c) { return by_block[c.block_size]; }
  void prepare(const Config& c) override {
    prepared.push_back(c.block_size);
    if (script(c).compile_fails) throw rt::CompileError("nvrtc: boom", "log", {}, "k");
  }
  Measurement time(const Config& c, std::optional<double> best) override {
    timed.push_back(c.block_size);
    const Script& s = script(c);
    if (s.fatal) throw FatalError("context lost");
    if (s.launch_fails) throw rt::CudaError("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    // The runner's loop, on constant samples.
    std::vector<double> samples;
    StopReason r = StopReason::none;
    while (r == StopReason::none) {
      samples.push_back(s.us);
      r = should_stop(samples, 0, best, rule);
    }
    return Measurement{summarize(samples), r};
  }
  std::string verify(const Config& c) override {
    verified.push_back(c.block_size);
    if (script(c).bad_reference) throw KeyError("the GPU reference disagrees with the CPU's: y [0, 3]");
    return script(c).wrong ? "y: 12 of 4096 elements wrong" : "";
  }
};


inline const cache::GpuId kGpu{"Test GPU", 9, 0, 132};

inline rt::DeviceInfo test_device() {
  rt::DeviceInfo d;
  d.name = kGpu.name;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 50 << 20;
  d.driver_version = 12040;
  return d;
}


inline cache::TuneRecord sample_record(std::int64_t n, int bucket, cache::Origin origin, Config c = cfg(4096, 8)) {
  cache::TuneRecord r;
  r.key.gpu = kGpu;
  r.key.traits = Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  r.key.n = n;
  r.key.m_bucket = bucket;
  r.config = c;
  r.timing = {10, 9, 11, 50};
  r.gbps = 1000;
  r.copy_gbps = 3000;
  r.default_median_us = 12;
  r.prov = make_provenance(12040, 12040, origin == cache::Origin::partial);
  r.prov.origin = origin;
  return r;
}

}  // namespace lntune::testing
