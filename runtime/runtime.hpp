// lntune::rt::Runtime — everything the launcher keeps between calls, owned by
// one object instead of process-wide state:
//   * the kernel cache (loaded modules, per context and instance),
//   * the binary store (where CUBINs persist) and the config source (tuned
//     configs), usually both bound to one SQLite cache stack,
//   * the plans (immutable; a new config source publishes new ones),
//   * the device table, the managed workspaces and the log settings.
// The public C++ API and the C ABI use default_runtime(); the tuner builds its
// own. Every member function is thread-safe.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cache/cache.hpp"
#include "lntune/lntune.hpp"
#include "runtime/driver.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/launcher.hpp"
#include "runtime/log.hpp"
#include "runtime/problem.hpp"
#include "runtime/selector.hpp"

namespace lntune::rt {

class Runtime {
 public:
  // No config source (default heuristic everywhere), no binary store
  // (compiles every kernel it loads).
  explicit Runtime(Log log = Log::from_environment());
  ~Runtime();  // unloads its modules; plans still held by callers must not be launched after this
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // ---- the public API's calls (lntune.hpp), on this runtime
  void forward(const ForwardArgs& a);
  void backward(const BackwardArgs& a);
  std::size_t backward_workspace_size(const BackwardArgs& a);
  Choice explain_forward(const ForwardArgs& a);
  Choice explain_backward(const BackwardArgs& a);

  // ---- plans for the current context (compiling and loading on first use).
  // Warm path: the thread's cached device, a hash lookup, no allocation.
  std::shared_ptr<const FwdPlan> forward_plan(const FwdProblem& p);
  std::shared_ptr<const BwdPlan> backward_plan(const BwdProblem& p);

  // A backward with given kernels and configs; a.workspace null: this
  // runtime's managed workspace for (context, stream), held until both
  // kernels are enqueued.
  void launch_backward(const LoadedKernel& dx, const LoadedKernel* dwdb, const Config& dx_config,
                       const Config& dwdb_config, const BackwardArgs& a, const BwdProblem& p);

  // ---- where configs and binaries come from
  // Installs the source consulted before the default heuristic (nullptr:
  // none). Plans built before are no longer handed out (callers holding one
  // keep it unchanged).
  void set_config_source(std::shared_ptr<ConfigSource> source);
  std::shared_ptr<ConfigSource> config_source() const;
  void set_binary_store(std::shared_ptr<BinaryStore> store);
  std::shared_ptr<BinaryStore> binary_store() const;
  // Counts config-source changes: plans carry the generation they were built from.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Binds a SQLite cache stack: a CacheConfigSource and a CacheBinaryStore
  // over it (nullptr: removes both).
  void install_cache(std::shared_ptr<cache::CacheStack> stack);
  std::shared_ptr<cache::CacheStack> cache_stack() const;
  // enabled = false: no tuned configs (the binary store stays); true: the
  // installed cache stack's configs again (nothing if none is installed).
  void set_tuned(bool enabled);
  bool tuned() const;

  // The selection for a problem, with this runtime's source.
  Selection select(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m, int vec) const;

  // ---- kernels and devices
  const LoadedKernel& kernel(CUcontext ctx, const std::string& arch, const InstanceKey& key);
  KernelCacheStats kernel_cache_stats() const { return kernels_.stats(); }
  const DeviceInfo& device_of(CUcontext ctx) { return devices_.of(ctx); }
  const DeviceInfo& current_device(CUcontext* ctx_out = nullptr);
  const Log& log() const { return log_; }

 private:
  struct Source {
    std::shared_ptr<ConfigSource> source;
    std::uint64_t generation = 0;
  };
  Source source_snapshot() const;
  template <class Plan, class Build>
  std::shared_ptr<const Plan> plan(PlanTable<Plan>& table, const PlanKey& key, Build&& build);
  // One kernel of a plan: selected with `source`, instantiated, loaded.
  PlannedKernel choose(CUcontext ctx, const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m,
                       int vec, ConfigSource* source, std::string* reason);
  void set_source_locked(std::shared_ptr<ConfigSource> source);

  const Log log_;
  KernelCache kernels_;
  DeviceTable devices_;
  Workspaces workspaces_;
  PlanTable<FwdPlan> fwd_plans_;
  PlanTable<BwdPlan> bwd_plans_;

  mutable std::mutex mu_;  // guards the four below
  std::shared_ptr<ConfigSource> source_;
  std::shared_ptr<BinaryStore> store_;
  std::shared_ptr<cache::CacheStack> stack_;
  bool tuned_ = true;
  std::atomic<std::uint64_t> generation_{0};
};

// The runtime of the public API (lntune.hpp, lntune.h): built on first use
// with the cache of the environment (cache_stack_from_environment), and never
// destroyed (modules stay valid through static destruction).
Runtime& default_runtime();

}  // namespace lntune::rt
