// Loaded kernels, per (context, instance). A miss renders the instance,
// obtains a CUBIN (from a BinaryStore if one is installed, else NVRTC) and
// loads it; concurrent misses on one key compile once. Thread-safe.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lntune/types.hpp"

namespace lntune::rt {

// Where compiled binaries persist between processes (the SQLite cache
// implements it; see cache/). Implementations must be thread-safe.
class BinaryStore {
 public:
  virtual ~BinaryStore() = default;
  virtual std::optional<std::vector<char>> get(const std::string& source_hash, const std::string& arch,
                                               int nvrtc_version) = 0;
  virtual void put(const std::string& source_hash, const std::string& arch, int nvrtc_version,
                   const std::vector<char>& cubin, const std::string& kernel_name) = 0;
};

struct LoadedKernel {
  CUfunction fn = nullptr;
  std::string name;
  int max_threads = 0;  // cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)
};

struct KernelCacheStats {
  std::uint64_t compiled = 0;         // NVRTC compilations in this process
  std::uint64_t loaded_from_store = 0;  // CUBINs taken from the BinaryStore
  std::uint64_t loaded = 0;           // modules loaded
};

// The process-wide kernel cache.
const LoadedKernel& get_kernel(CUcontext ctx, const std::string& arch, const InstanceKey& key);
KernelCacheStats kernel_cache_stats();

// Installs the store used on misses (nullptr: none). Returns the previous one.
std::shared_ptr<BinaryStore> set_binary_store(std::shared_ptr<BinaryStore> store);

}  // namespace lntune::rt
