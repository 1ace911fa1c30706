#include "runtime/launcher.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "generator/instance.hpp"
#include "cache/cache.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/log.hpp"
#include "runtime/selector.hpp"
#include "templates/params.h"

namespace lntune::rt {
namespace {

// Everything a plan depends on. M enters only through the tuning cache's
// bucket (cache::m_bucket, relative to the SM count): selection never looks
// at M more finely than that.
struct PlanKey {
  CUcontext ctx;
  Traits traits;
  std::int64_t n;
  int m_bucket;
  int vec;
  bool want_dw, want_db;
  bool operator==(const PlanKey& o) const {
    return ctx == o.ctx && traits == o.traits && n == o.n && m_bucket == o.m_bucket && vec == o.vec &&
           want_dw == o.want_dw && want_db == o.want_db;
  }
};
struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const noexcept {
    std::size_t h = std::hash<const void*>{}(k.ctx);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(static_cast<std::size_t>(k.traits.kernel) | static_cast<std::size_t>(k.traits.x_dtype) << 4 |
        static_cast<std::size_t>(k.traits.w_dtype) << 8 | static_cast<std::size_t>(k.traits.has_weight) << 12 |
        static_cast<std::size_t>(k.traits.has_bias) << 13 | static_cast<std::size_t>(k.want_dw) << 14 |
        static_cast<std::size_t>(k.want_db) << 15);
    mix(static_cast<std::size_t>(k.n));
    mix(static_cast<std::size_t>(k.m_bucket) << 8 | static_cast<std::size_t>(k.vec));
    return h;
  }
};

template <class Plan>
struct PlanTable {
  std::shared_mutex mu;
  std::unordered_map<PlanKey, std::pair<std::uint64_t, Plan>, PlanKeyHash> plans;  // epoch, plan

  template <class Make>
  const Plan& get(const PlanKey& key, Make&& make) {
    const std::uint64_t epoch = selection_epoch();
    {
      std::shared_lock<std::shared_mutex> lock(mu);
      auto it = plans.find(key);
      if (it != plans.end() && it->second.first == epoch) return it->second.second;
    }
    Plan plan = make();  // may compile: outside the lock
    std::unique_lock<std::shared_mutex> lock(mu);
    auto& slot = plans[key];
    slot = {epoch, std::move(plan)};
    return slot.second;
  }
};

PlanTable<FwdPlan>& fwd_table() {
  static auto* t = new PlanTable<FwdPlan>;
  return *t;
}
PlanTable<BwdPlan>& bwd_table() {
  static auto* t = new PlanTable<BwdPlan>;
  return *t;
}

struct DeviceTable {
  std::shared_mutex mu;
  std::unordered_map<CUcontext, DeviceInfo> by_ctx;
};
DeviceTable& devices() {
  static auto* t = new DeviceTable;
  return *t;
}

void launch(const LoadedKernel& k, unsigned grid, unsigned block, CUstream stream, void* params) {
  void* args[] = {params};
  const CUresult r = driver().LaunchKernel(k.fn, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr);
  if (r != CUDA_SUCCESS)  // the message is built only on failure: warm calls allocate nothing
    check(r, "cuLaunchKernel(" + k.name + ", grid " + std::to_string(grid) + ", block " + std::to_string(block) + ")");
}

unsigned grid_size(std::int64_t ctas, const char* what) {
  if (ctas > 0x7fffffff) throw Error(std::string("lntune: ") + what + ": too many rows for one launch");
  return static_cast<unsigned>(ctas < 1 ? 1 : ctas);
}

std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

// Workspaces lntune manages for callers who pass none: one per (context,
// stream). A backward is two launches that share the workspace, so the
// workspace stays locked until both are enqueued: two host threads using one
// stream then cannot interleave their launches (which would let one call's
// bwd_dx overwrite partials before the other's bwd_dwdb read them).
struct Workspace {
  std::mutex mu;
  DeviceBuffer buffer;
};
struct Workspaces {
  std::mutex mu;
  std::map<std::pair<CUcontext, CUstream>, std::unique_ptr<Workspace>> by_stream;
};
Workspaces& workspaces() {
  static auto* w = new Workspaces;
  return *w;
}

struct LockedWorkspace {
  std::unique_lock<std::mutex> lock;
  void* ptr = nullptr;
};

LockedWorkspace managed_workspace(CUcontext ctx, CUstream stream, std::size_t bytes) {
  Workspace* ws = nullptr;
  {
    Workspaces& all = workspaces();
    std::lock_guard<std::mutex> lock(all.mu);
    auto& slot = all.by_stream[{ctx, stream}];
    if (!slot) slot = std::make_unique<Workspace>();
    ws = slot.get();
  }
  LockedWorkspace out{std::unique_lock<std::mutex>(ws->mu), nullptr};
  if (ws->buffer.size() < bytes) {
    // Work already queued on this stream may still read the old buffer; the
    // stream is drained before it is freed.
    if (ws->buffer.size() > 0) check(driver().StreamSynchronize(stream), "cuStreamSynchronize (growing the workspace)");
    ws->buffer = DeviceBuffer(round_up(bytes, 1 << 20));
  }
  out.ptr = ws->buffer.ptr();
  return out;
}

}  // namespace

const DeviceInfo& device_of(CUcontext ctx) {
  // One entry per thread: the warm path finds its device without a lock.
  thread_local CUcontext last_ctx = nullptr;
  thread_local const DeviceInfo* last_dev = nullptr;
  if (ctx == last_ctx && last_dev) return *last_dev;
  DeviceTable& t = devices();
  const DeviceInfo* found = nullptr;
  {
    std::shared_lock<std::shared_mutex> lock(t.mu);
    auto it = t.by_ctx.find(ctx);
    if (it != t.by_ctx.end()) found = &it->second;
  }
  if (!found) {
    CUdevice dev = 0;
    check(driver().CtxGetDevice(&dev), "cuCtxGetDevice");
    DeviceInfo info = device_info(dev);
    std::unique_lock<std::shared_mutex> lock(t.mu);
    found = &t.by_ctx.emplace(ctx, std::move(info)).first->second;  // nodes are stable
  }
  last_ctx = ctx;
  last_dev = found;
  return *found;
}

const DeviceInfo& current_device(CUcontext* ctx_out) {
  CUcontext ctx = current_context();
  if (ctx_out) *ctx_out = ctx;
  return device_of(ctx);
}

// Warm path: cuCtxGetCurrent, the thread's cached device, a hash lookup under
// a shared lock, the launch.
const FwdPlan& forward_plan(const FwdProblem& p) {
  install_default_cache();  // once per process; then one atomic load
  CUcontext ctx = nullptr;
  const DeviceInfo& dev = current_device(&ctx);
  const PlanKey key{ctx, p.traits, p.N, cache::m_bucket(p.M, dev.sm_count), p.vec, false, false};
  return fwd_table().get(key, [&] {
    FwdPlan plan;
    Selection s = select(dev, p.traits, p.N, p.M, p.vec);
    plan.config = s.config;
    plan.reason = s.reason;
    plan.key = gen::make_instance(p.traits, s.config, p.N, p.vec);
    plan.kernel = &get_kernel(ctx, dev.arch(), plan.key);
    log_debug("forward M=" + std::to_string(p.M) + " N=" + std::to_string(p.N) + ": " + plan.key.name() + " (" +
              to_string(plan.config) + "), " + plan.reason);
    return plan;
  });
}

const BwdPlan& backward_plan(const BwdProblem& p) {
  install_default_cache();
  CUcontext ctx = nullptr;
  const DeviceInfo& dev = current_device(&ctx);
  const PlanKey key{ctx, p.traits, p.N, cache::m_bucket(p.M, dev.sm_count), p.vec, p.want_dw, p.want_db};
  return bwd_table().get(key, [&] {
    BwdPlan plan;
    Selection s = select(dev, p.traits, p.N, p.M, p.vec);
    plan.dx_config = s.config;
    plan.reason = s.reason;
    plan.dx_key = gen::make_instance(p.traits, s.config, p.N, p.vec);
    plan.dx = &get_kernel(ctx, dev.arch(), plan.dx_key);
    if (p.want_dw || p.want_db) {
      Traits t = p.traits;
      t.kernel = Kernel::bwd_dwdb;
      t.has_weight = p.want_dw;
      t.has_bias = p.want_db;
      Selection r = select(dev, t, p.N, partial_rows(plan.dx_config, p.M), 1);
      plan.dwdb_config = r.config;
      plan.dwdb_key = gen::make_instance(t, r.config, p.N, 1);
      plan.dwdb = &get_kernel(ctx, dev.arch(), plan.dwdb_key);
    }
    log_debug("backward M=" + std::to_string(p.M) + " N=" + std::to_string(p.N) + ": " + plan.dx_key.name() + " (" +
              to_string(plan.dx_config) + "), " + plan.reason);
    return plan;
  });
}

// group_size_m CTAs (or clusters) each own rows_per_cta partial rows; a
// cluster's CTAs write disjoint columns of one partial row.
std::int64_t partial_rows(const Config& c, std::int64_t M) {
  const std::int64_t groups = (M + c.rows_per_cta - 1) / c.rows_per_cta;
  const std::int64_t owners = std::max<std::int64_t>(1, std::min<std::int64_t>(c.group_size_m, groups));
  return owners * c.rows_per_cta;
}

std::size_t workspace_bytes(const BwdProblem& p, const Config& c) {
  if (p.M == 0 || (!p.want_dw && !p.want_db)) return 0;
  const std::size_t one = round_up(static_cast<std::size_t>(partial_rows(c, p.M)) * static_cast<std::size_t>(p.N) * 4, 256);
  return one * ((p.want_dw ? 1 : 0) + (p.want_db ? 1 : 0));
}

void launch_forward(const LoadedKernel& k, const Config& c, const ForwardArgs& a, const FwdProblem& p) {
  FwdParams params{a.x, a.weight, a.bias, a.y, a.mean, a.rstd, p.M, p.N, p.x_stride, p.y_stride, a.eps};
  // Clusters are persistent: group_size_m of them walk the rows.
  const std::int64_t ctas = c.cluster_size > 1
                                ? std::max<std::int64_t>(1, std::min<std::int64_t>(c.group_size_m, p.M)) * c.cluster_size
                                : (p.M + c.rows_per_cta - 1) / c.rows_per_cta;
  launch(k, grid_size(ctas, "forward"), static_cast<unsigned>(c.threads()), static_cast<CUstream>(a.stream), &params);
}

void launch_backward(const LoadedKernel& dx, const LoadedKernel* dwdb, const Config& dc, const Config& rc,
                     const BackwardArgs& a, const BwdProblem& p) {
  const std::int64_t P = partial_rows(dc, p.M);
  const std::size_t need = workspace_bytes(p, dc);
  CUstream stream = static_cast<CUstream>(a.stream);
  char* ws = static_cast<char*>(a.workspace);
  LockedWorkspace managed;  // held until both kernels are enqueued
  if (need > 0 && !ws) {
    managed = managed_workspace(current_context(), stream, need);
    ws = static_cast<char*>(managed.ptr);
  } else if (need > a.workspace_bytes) {
    throw Error("lntune: backward: workspace_bytes (" + std::to_string(a.workspace_bytes) + ") is smaller than the " +
                std::to_string(need) + " bytes this call needs (see backward_workspace_size)");
  }
  const int buffers = (p.want_dw ? 1 : 0) + (p.want_db ? 1 : 0);
  const std::size_t one = buffers ? need / static_cast<std::size_t>(buffers) : 0;
  float* dw_partial = p.want_dw ? reinterpret_cast<float*>(ws) : nullptr;
  float* db_partial = p.want_db ? reinterpret_cast<float*>(ws + (p.want_dw ? one : 0)) : nullptr;

  BwdParams params{a.dy, a.x, a.weight, a.mean, a.rstd, a.dx, dw_partial, db_partial,
                   p.M,  p.N, p.dy_stride, p.x_stride, p.dx_stride};
  launch(dx, grid_size(P / dc.rows_per_cta * dc.cluster_size, "backward"), static_cast<unsigned>(dc.threads()), stream,
         &params);
  if (dwdb && (p.want_dw || p.want_db)) {
    DwdbParams r{dw_partial, db_partial, a.dweight, a.dbias, P, p.N};
    const std::int64_t ctas = (p.N + rc.block_size - 1) / rc.block_size;
    launch(*dwdb, grid_size(ctas, "backward dW/dB"), static_cast<unsigned>(rc.threads()), stream, &r);
  }
}

}  // namespace lntune::rt
