// Compiled kernels: where CUBINs persist (BinaryStore), how one is obtained
// (the store, else NVRTC), and the loaded kernels of one Runtime, per
// (context, instance). A miss renders the instance, obtains its CUBIN and
// loads it; concurrent misses on one key compile once. Thread-safe.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "generator/instance.hpp"
#include "lntune/types.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"

namespace lntune::rt {

// Where compiled binaries persist between processes (the SQLite cache
// implements it; see cache/). `hash` is binary_hash() of the source, arch and
// options (runtime/nvrtc.hpp). Implementations must be thread-safe.
class BinaryStore {
 public:
  virtual ~BinaryStore() = default;
  virtual std::optional<std::vector<char>> get(const std::string& hash, const std::string& arch,
                                               int nvrtc_version) = 0;
  virtual void put(const std::string& hash, const std::string& arch, int nvrtc_version,
                   const std::vector<char>& cubin, const std::string& kernel_name) = 0;
};

// The CUBIN of a rendered kernel for `arch`: from `store` when it holds one,
// else compiled with NVRTC and put there (a failing put is logged, not
// thrown). Throws CompileError. Needs no CUDA context. `compiler`, when
// given, compiles in place of rt::compile (the tuner's worker processes);
// it must return what rt::compile(src, arch, cubin) would.
struct Cubin {
  std::vector<char> bytes;
  bool from_store = false;
};
using CubinCompiler = std::function<std::vector<char>(const gen::KernelSource& src, const std::string& arch)>;
Cubin obtain_cubin(const gen::KernelSource& src, const std::string& arch, BinaryStore* store, const Log& log,
                   const CubinCompiler& compiler = nullptr);

struct LoadedKernel {
  CUfunction fn = nullptr;
  std::string name;
  int max_threads = 0;  // cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)
  unsigned dynamic_smem = 0;  // bytes each launch passes (gen::dynamic_smem_bytes)
  // bwd_dx without a cluster in CTAs under 512 threads: the entry that also
  // finishes dW/dB (gen::KernelSource::finish_kernel_name), launched
  // cooperatively (rt::launch_backward), and the most CTAs of such a launch
  // (the CTAs of it an SM holds at once times the SMs). Null and 0 for the
  // other kernels.
  CUfunction finish_fn = nullptr;
  std::int64_t cooperative_ctas = 0;
  int sm_count = 0;  // the device's SMs, where finish_fn is set (rt::finish_path)
  // bwd_dwdb on sm_90+: launched as a programmatic dependent of the bwd_dx
  // before it (rt::launch_dwdb; common.cuh, wait_for_prior_grids).
  bool programmatic = false;
  // Kernels in clusters: how many of its clusters the GPU runs at once
  // (cuOccupancyMaxActiveClusters at its block and shared memory; whole
  // clusters must fit a GPC, so this is not SMs / cluster size: an H200 runs
  // 15 clusters of 8 on 132 SMs). 0 without clusters.
  int max_active_clusters = 0;
};

struct KernelCacheStats {
  std::uint64_t compiled = 0;           // NVRTC compilations by this cache
  std::uint64_t loaded_from_store = 0;  // CUBINs taken from the BinaryStore
  std::uint64_t loaded = 0;             // modules loaded
};

// The loaded kernels of one Runtime. Entries (and the LoadedKernel
// references handed out) live as long as the cache; its destructor unloads
// the modules.
class KernelCache {
 public:
  KernelCache() = default;
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel of `key` in context `ctx`, building it on a miss with `store`.
  const LoadedKernel& get(CUcontext ctx, const std::string& arch, const InstanceKey& key, BinaryStore* store,
                          const Log& log);
  KernelCacheStats stats() const;

 private:
  struct Key {
    CUcontext ctx;
    InstanceKey inst;
    bool operator==(const Key& o) const { return ctx == o.ctx && inst == o.inst; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  struct Entry {
    std::once_flag once;
    UniqueModule module;
    LoadedKernel kernel;
  };
  void build(Entry& e, CUcontext ctx, const std::string& arch, const InstanceKey& key, BinaryStore* store,
             const Log& log);

  mutable std::shared_mutex mu_;
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> entries_;
  std::atomic<std::uint64_t> compiled_{0}, from_store_{0}, loaded_{0};
};

}  // namespace lntune::rt
