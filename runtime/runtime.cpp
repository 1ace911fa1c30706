#include "runtime/runtime.hpp"

#include "cache/cache.hpp"
#include "generator/instance.hpp"
#include "runtime/cache_binding.hpp"

namespace lntune::rt {

Runtime::Runtime(Log log) : log_(log) {}

Runtime::~Runtime() = default;

// ------------------------------------------------------------ sources
Runtime::Source Runtime::source_snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Source{source_, generation_.load(std::memory_order_relaxed)};
}

void Runtime::set_source_locked(std::shared_ptr<ConfigSource> source) {
  source_ = std::move(source);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void Runtime::set_config_source(std::shared_ptr<ConfigSource> source) {
  std::lock_guard<std::mutex> lock(mu_);
  set_source_locked(std::move(source));
}

std::shared_ptr<ConfigSource> Runtime::config_source() const {
  std::lock_guard<std::mutex> lock(mu_);
  return source_;
}

void Runtime::set_binary_store(std::shared_ptr<BinaryStore> store) {
  std::lock_guard<std::mutex> lock(mu_);
  store_ = std::move(store);
}

std::shared_ptr<BinaryStore> Runtime::binary_store() const {
  std::lock_guard<std::mutex> lock(mu_);
  return store_;
}

void Runtime::install_cache(std::shared_ptr<cache::CacheStack> stack) {
  std::lock_guard<std::mutex> lock(mu_);
  stack_ = stack;
  store_ = stack ? std::make_shared<CacheBinaryStore>(stack, log_) : nullptr;
  set_source_locked(stack && tuned_ ? std::make_shared<CacheConfigSource>(stack, log_) : nullptr);
}

std::shared_ptr<cache::CacheStack> Runtime::cache_stack() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stack_;
}

void Runtime::set_tuned(bool enabled) {
  std::lock_guard<std::mutex> lock(mu_);
  tuned_ = enabled;
  set_source_locked(enabled && stack_ ? std::make_shared<CacheConfigSource>(stack_, log_) : nullptr);
  log_.debug(enabled ? "tuned configs enabled" : "tuned configs disabled: the default heuristic everywhere");
}

bool Runtime::tuned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tuned_;
}

Selection Runtime::select(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m,
                          int vec) const {
  return rt::select(dev, traits, n, m, vec, config_source().get(), log_);
}

// ------------------------------------------------------------ kernels, devices
const LoadedKernel& Runtime::kernel(CUcontext ctx, const std::string& arch, const InstanceKey& key) {
  return kernels_.get(ctx, arch, key, binary_store().get(), log_);
}

const DeviceInfo& Runtime::current_device(CUcontext* ctx_out) {
  CUcontext ctx = current_context();
  if (ctx_out) *ctx_out = ctx;
  return devices_.of(ctx);
}

// ------------------------------------------------------------ plans
namespace {

void log_plan(const Log& log, const char* what, std::int64_t m, std::int64_t n, const PlannedKernel& k,
              const std::string& reason) {
  if (log.debug_enabled())
    log.debug(std::string(what) + " M=" + std::to_string(m) + " N=" + std::to_string(n) + ": " + k.key.name() +
              " (" + to_string(k.config) + "), " + reason);
}

}  // namespace

PlannedKernel Runtime::choose(CUcontext ctx, const DeviceInfo& dev, const Traits& traits, std::int64_t n,
                              std::int64_t m, int vec, ConfigSource* source, std::string* reason) {
  Selection s = rt::select(dev, traits, n, m, vec, source, log_);
  PlannedKernel k;
  k.config = s.config;
  k.key = gen::make_instance(traits, k.config, n, vec);
  k.kernel = &kernel(ctx, dev.arch(), k.key);
  // What the launch runs (the backward's dW/dB reduction is chosen for its
  // partial rows).
  k.config = fit_coresident(*k.kernel, k.config);
  if (reason) *reason = std::move(s.reason);
  return k;
}

// Warm path: the published plan of the current generation (one atomic load,
// a hash lookup under a shared lock). Cold: built from one snapshot of the
// source, outside every lock (it may compile), then published.
template <class Plan, class Build>
std::shared_ptr<const Plan> Runtime::plan(PlanTable<Plan>& table, const PlanKey& key, Build&& build) {
  if (auto found = table.find(key, generation())) return found;
  const Source src = source_snapshot();
  return table.publish(key, src.generation, build(src.source.get()));
}

std::shared_ptr<const FwdPlan> Runtime::forward_plan(const FwdProblem& p) {
  CUcontext ctx = nullptr;
  const DeviceInfo& dev = current_device(&ctx);
  const PlanKey key{ctx, p.traits, p.N, plan_m(p.M, dev.sm_count), p.vec, false, false};
  return plan(fwd_plans_, key, [&](ConfigSource* source) {
    auto out = std::make_shared<FwdPlan>();
    out->fwd = choose(ctx, dev, p.traits, p.N, p.M, p.vec, source, &out->reason);
    log_plan(log_, "forward", p.M, p.N, out->fwd, out->reason);
    return std::shared_ptr<const FwdPlan>(std::move(out));
  });
}

std::shared_ptr<const BwdPlan> Runtime::backward_plan(const BwdProblem& p) {
  CUcontext ctx = nullptr;
  const DeviceInfo& dev = current_device(&ctx);
  const PlanKey key{ctx, p.traits, p.N, plan_m(p.M, dev.sm_count), p.vec, p.want_dw, p.want_db};
  return plan(bwd_plans_, key, [&](ConfigSource* source) {
    auto out = std::make_shared<BwdPlan>();
    out->dx = choose(ctx, dev, p.traits, p.N, p.M, p.vec, source, &out->reason);
    if (p.want_dw || p.want_db) {
      const DwdbProblem r = dwdb_problem(p.traits, p.want_dw, p.want_db, out->dx.config, p.M);
      out->dwdb = choose(ctx, dev, r.traits, p.N, r.rows, 1, source, nullptr);
    }
    log_plan(log_, "backward", p.M, p.N, out->dx, out->reason);
    return std::shared_ptr<const BwdPlan>(std::move(out));
  });
}

// ------------------------------------------------------------ launches
void Runtime::launch_backward(const LoadedKernel& dx, const LoadedKernel* dwdb, const Config& dx_config,
                              const Config& dwdb_config, const BackwardArgs& a, const BwdProblem& p) {
  const std::size_t need = workspace_bytes(p, dx_config);
  if (need == 0 || a.workspace) {
    rt::launch_backward(dx, dwdb, dx_config, dwdb_config, a, p);
    return;
  }
  Workspaces::Locked ws = workspaces_.acquire(current_context(), static_cast<CUstream>(a.stream), need);
  BackwardArgs with = a;  // a copy of plain pointers and sizes: no allocation
  with.workspace = ws.ptr;
  with.workspace_bytes = need;
  rt::launch_backward(dx, dwdb, dx_config, dwdb_config, with, p);
}

void Runtime::forward(const ForwardArgs& a) {
  const FwdProblem p = check_forward(a);
  if (p.M == 0) return;
  const auto plan = forward_plan(p);
  launch_forward(*plan->fwd.kernel, plan->fwd.config, a, p);
}

void Runtime::backward(const BackwardArgs& a) {
  const BwdProblem p = check_backward(a);
  if (p.M == 0) {
    // dW and dB of zero rows are zero: written on the caller's stream, in
    // order with its other work.
    if (!a.dweight && !a.dbias) return;
    const DriverApi& d = driver();
    current_context();
    const std::size_t bytes = static_cast<std::size_t>(p.N) * dtype_size(a.w_dtype);
    for (void* g : {a.dweight, a.dbias})
      if (g)
        check(d.MemsetD8Async(reinterpret_cast<CUdeviceptr>(g), 0, bytes, static_cast<CUstream>(a.stream)),
              "cuMemsetD8Async (zero-row backward)");
    return;
  }
  const auto plan = backward_plan(p);
  launch_backward(*plan->dx.kernel, plan->dwdb.kernel, plan->dx.config, plan->dwdb.config, a, p);
}

std::size_t Runtime::backward_workspace_size(const BackwardArgs& a) {
  const BwdProblem p = check_backward(a);
  if (p.M == 0 || (!p.want_dw && !p.want_db)) return 0;
  return workspace_bytes(p, backward_plan(p)->dx.config);
}

Choice Runtime::explain_forward(const ForwardArgs& a) {
  const auto plan = forward_plan(check_forward(a));
  return Choice{plan->fwd.config, plan->fwd.key.name(), plan->reason};
}

Choice Runtime::explain_backward(const BackwardArgs& a) {
  const auto plan = backward_plan(check_backward(a));
  return Choice{plan->dx.config, plan->dx.key.name(), plan->reason};
}

// ------------------------------------------------------------ the default
Runtime& default_runtime() {
  // Never destroyed: modules and plans stay valid through static destruction.
  static Runtime* const runtime = [] {
    auto* r = new Runtime(Log::from_environment());
    r->install_cache(cache_stack_from_environment(r->log()));
    return r;
  }();
  return *runtime;
}

}  // namespace lntune::rt
