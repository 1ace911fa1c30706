#include "runtime/selector.hpp"
#include "tuner/tuner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/runtime.hpp"
#include "runtime/launcher.hpp"
#include "runtime/nvrtc.hpp"
#include "tuner/device_check.hpp"
#include "tuner/device_fill.hpp"
#include "tuner/device_reference.hpp"
#include "tuner/device_pool.hpp"
#include "tuner/uploader.hpp"
#include "tuner/scoped_seconds.hpp"
#include "tuner/workload.hpp"

namespace lntune::tune {

using Clock = std::chrono::steady_clock;

// ------------------------------------------------------------ pure helpers
std::vector<Target> make_targets(const std::vector<std::int64_t>& ns, const std::vector<std::int64_t>& ms,
                                 const std::vector<DType>& dtypes, const std::vector<Kernel>& kernels,
                                 std::optional<DType> w_dtype, bool weight, bool bias) {
  if (ns.empty() || ms.empty() || dtypes.empty() || kernels.empty())
    throw Error("lntune: nothing to tune: the lists of N, M, dtypes and kernels must not be empty");
  std::vector<Target> out;
  for (Kernel k : kernels) {
    if (k == Kernel::bwd_dwdb) throw Error("lntune: bwd_dwdb is tuned together with bwd_dx (--kernel bwd)");
    for (DType d : dtypes)
      for (std::int64_t m : ms)
        for (std::int64_t n : ns) {
          if (n < 1) throw Error("lntune: N must be >= 1, got " + std::to_string(n));
          if (m < 1) throw Error("lntune: M must be >= 1, got " + std::to_string(m));
          Target t;
          t.traits = Traits{k, d, w_dtype.value_or(d), weight, bias}.canonical();
          t.n = n;
          t.m = m;
          out.push_back(t);
        }
  }
  return out;
}

std::vector<Target> with_variant(std::vector<Target> targets, Norm norm, bool residual,
                                 std::optional<DType> residual_dtype) {
  if (residual_dtype && !residual) throw Error("lntune: a residual dtype was given without a residual");
  for (Target& t : targets) {
    t.traits.norm = norm;
    if (norm == Norm::rms) t.traits.has_bias = false;
    if (residual) t.traits.residual = residual_dtype.value_or(t.traits.x_dtype);
    t.traits = t.traits.canonical();
  }
  return targets;
}

std::vector<Target> default_variant_grid(const std::vector<Target>& layernorm_targets) {
  std::vector<Target> out = layernorm_targets;
  std::vector<Target> half;
  for (const Target& t : layernorm_targets)
    if (t.traits.x_dtype == DType::f16 || t.traits.x_dtype == DType::bf16) half.push_back(t);
  for (bool residual : {false, true}) {
    const auto v = with_variant(half, Norm::rms, residual);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

bool is_tuned(const cache::Database& db, const cache::TuneKey& key) {
  const auto r = db.find(key);
  return r && r->prov.origin != cache::Origin::partial && !rt::is_stale(*r);
}

cache::Provenance make_provenance(int nvrtc_version, int driver_version, bool partial) {
  cache::Provenance p;
  p.template_hash = gen::hex(gen::templates_hash());
  p.lntune_version = version();
  p.nvrtc_version = nvrtc_version;
  p.driver_version = driver_version;
  p.tuned_at = cache::utc_now_iso8601();
  p.origin = partial ? cache::Origin::partial : cache::Origin::tuned;
  return p;
}

cache::TuneRecord make_record(const cache::TuneKey& key, const Outcome& outcome, double bytes, double copy_gbps,
                              const cache::Provenance& prov) {
  const CandidateResult* w = outcome.best();
  if (!w || !w->timing) throw Error("lntune: internal: a record needs a timed winner");
  cache::TuneRecord r;
  r.key = key;
  r.key.traits = key.traits.canonical();
  r.config = w->config;
  const Summary& s = w->timing->stats;
  r.timing = cache::Timing{s.median, s.p20, s.p80, s.n};
  r.gbps = s.median > 0 ? bytes / (s.median * 1e-6) / 1e9 : 0;
  r.copy_gbps = copy_gbps;
  const CandidateResult& d = outcome.baseline();
  r.default_median_us = d.timing ? d.timing->stats.median : 0;
  r.prov = prov;
  return r;
}

const char* to_string(KeyResult::State s) {
  switch (s) {
    case KeyResult::State::tuned: return "tuned";
    case KeyResult::State::partial: return "partial";
    case KeyResult::State::cached: return "cached";
    case KeyResult::State::skipped_budget: return "skipped (budget)";
    case KeyResult::State::no_winner: return "no winner";
    case KeyResult::State::failed: return "failed";
  }
  return "?";
}

const char* to_string(ReferenceMode m) { return m == ReferenceMode::cpu ? "cpu" : "gpu"; }

ReferenceMode parse_reference_mode(const std::string& s) {
  if (s == "gpu") return ReferenceMode::gpu;
  if (s == "cpu") return ReferenceMode::cpu;
  throw Error("lntune: unknown reference mode '" + s + "' (gpu, cpu)");
}

const char* to_string(Retune r) {
  switch (r) {
    case Retune::skip: return "skip";
    case Retune::warm: return "warm";
    case Retune::full: return "full";
  }
  return "?";
}

Retune retune_mode(const std::optional<cache::TuneRecord>& existing, const cache::Provenance& now, bool force,
                   bool full) {
  if (!existing || existing->prov.origin == cache::Origin::partial) return Retune::full;
  if (!force && existing->prov.template_hash == now.template_hash) return Retune::skip;
  if (full) return Retune::full;
  if (existing->prov.nvrtc_version == now.nvrtc_version && existing->prov.driver_version == now.driver_version)
    return Retune::warm;
  return Retune::full;
}

namespace {
// a and b equal, or both positive and at most `factor` apart (warm: two;
// the default's group_size_m, e.g. 512, has rivals 264 and 528 in the space).
bool near_value(int a, int b, int factor) {
  if (a == b) return true;
  if (a <= 0 || b <= 0) return false;
  const int lo = std::min(a, b), hi = std::max(a, b);
  return hi <= factor * lo;
}
}  // namespace

namespace {
// The configs of `space` within `factor` of `around` in every field (neither
// `skip_a` nor `skip_b`, nor one already in `out`) that `keep` accepts, in
// space order. keep(differ, a, b): the number of fields that differ, and
// the fields (block_size, num_warps, rows_per_cta, group_size_m,
// cluster_size) of the config and of `around`.
template <class Keep>
void add_neighbours(std::vector<Config>& out, const std::vector<Config>& space, const Config& around, int factor,
                    const Config& skip_a, const Config& skip_b, Keep keep) {
  for (const Config& c : space) {
    if (c == skip_a || c == skip_b || std::find(out.begin(), out.end(), c) != out.end()) continue;
    const int a[] = {c.block_size, c.num_warps, c.rows_per_cta, c.group_size_m, c.cluster_size};
    const int b[] = {around.block_size, around.num_warps, around.rows_per_cta, around.group_size_m,
                     around.cluster_size};
    int differ = 0;
    bool close = true;
    for (int i = 0; i < 5; ++i) {
      if (a[i] != b[i]) ++differ;
      close = close && near_value(a[i], b[i], factor);
    }
    if (close && keep(differ, a, b)) out.push_back(c);
  }
}

// At most two fields changed besides group_size_m (related_space): for the
// backward, group_size_m sets the partial-row count of the dW/dB reduction,
// and the joint choice (pick_joint) may want another count than the related
// key's winner has, with other warps or rows (H100, bwd_dx bf16 RMSNorm +
// residual, N = 1024: RMSNorm won with 8 warps, 2 rows, 528 groups; this
// key jointly with 4 warps, 1 row, 1056 groups, 3% faster).
bool two_fields(int, const int* a, const int* b) {
  int differ = 0;
  for (int i : {0, 1, 2, 4}) differ += a[i] != b[i];
  return differ <= 2;
}
}  // namespace

std::vector<Config> warm_space(const std::vector<Config>& space, const Config& previous,
                               const Config& default_config) {
  std::vector<Config> out;
  if (previous != default_config) out.push_back(previous);
  // One field changed, or block_size and num_warps scaled together (the same
  // elements per thread).
  add_neighbours(out, space, previous, 2, previous, default_config, [](int differ, const int* a, const int* b) {
    const bool same_per_thread = differ == 2 && a[0] != b[0] && a[1] != b[1] &&
                                 static_cast<long>(a[0]) * b[1] == static_cast<long>(b[0]) * a[1];
    return differ == 1 || same_per_thread;
  });
  return out;
}

std::vector<Config> related_space(const std::vector<Config>& space, const Config& related,
                                  const Config& default_config) {
  std::vector<Config> out;
  if (related != default_config) out.push_back(related);
  add_neighbours(out, space, related, 4, related, default_config, two_fields);
  add_neighbours(out, space, default_config, 2, related, default_config, two_fields);
  return out;
}

RetunePlan plan_retune(const std::optional<cache::TuneRecord>& existing, const cache::Provenance& now, bool force,
                       bool full, const Config& default_config, std::vector<Config> space) {
  RetunePlan p;
  p.mode = retune_mode(existing, now, force, full);
  if (p.mode == Retune::warm)
    p.space = warm_space(space, existing->config, default_config);
  else if (p.mode == Retune::full)
    p.space = std::move(space);
  return p;
}

std::vector<std::size_t> dx_finalists(const Outcome& dx,
                                      const std::function<std::int64_t(const Config&)>& partial_rows, double margin,
                                      std::size_t max) {
  std::vector<std::size_t> out;
  const CandidateResult* win = dx.best();
  if (!win || !win->timing || max == 0) return out;
  const double limit = win->timing->stats.median * (1 + margin);
  std::vector<std::size_t> close;
  for (std::size_t i = 0; i < dx.candidates.size(); ++i) {
    const CandidateResult& c = dx.candidates[i];
    if (i == *dx.winner || !c.timing) continue;
    if (c.status != Status::ok && c.status != Status::slower) continue;
    if (c.timing->stats.median <= limit) close.push_back(i);
  }
  std::stable_sort(close.begin(), close.end(), [&](std::size_t a, std::size_t b) {
    return dx.candidates[a].timing->stats.median < dx.candidates[b].timing->stats.median;
  });
  close.insert(close.begin(), *dx.winner);
  std::vector<std::int64_t> seen;
  for (std::size_t i : close) {
    const std::int64_t p = partial_rows(dx.candidates[i].config);
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
    seen.push_back(p);
    out.push_back(i);
    if (out.size() == max) break;
  }
  return out;
}

std::optional<std::size_t> pick_joint(const std::vector<JointTiming>& t) {
  std::optional<std::size_t> best;
  double best_sum = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!t[i].dwdb_best_us || !t[i].dwdb_default_us || !(t[i].backward_us > 0)) continue;
    const double sum = t[i].backward_us - *t[i].dwdb_default_us + *t[i].dwdb_best_us;
    if (!best || sum < best_sum) {
      best = i;
      best_sum = sum;
    }
  }
  return best;
}

std::vector<int> parse_devices(const std::string& spec, int count) {
  if (count <= 0) throw Error("lntune: --devices: this machine has no CUDA device");
  std::vector<int> out;
  if (spec == "all") {
    for (int i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  if (spec.empty()) throw Error("lntune: --devices: empty list (give 'all' or ordinals such as 0,1)");
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string item = spec.substr(pos, comma - pos);
    if (item.empty() || item.size() > 6 || item.find_first_not_of("0123456789") != std::string::npos)
      throw Error("lntune: --devices: '" + item + "' is not a device ordinal (give 'all' or ordinals such as 0,1)");
    const int d = std::stoi(item);
    if (d >= count)
      throw Error("lntune: --devices: device " + item + " does not exist (this machine has " + std::to_string(count) +
                  " CUDA device" + (count == 1 ? "" : "s") + ")");
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw Error("lntune: --devices: device " + item + " is listed twice");
    out.push_back(d);
    pos = comma + 1;
  }
  return out;
}

double target_cost(const Target& t) {
  // Per key: a fixed part (planning, warm-up, screening launches) worth about
  // 32 MiB of traffic, plus the workload's bytes (inputs generated on the
  // host, the CPU reference, every timed launch).
  const double tensors = t.traits.kernel == Kernel::fwd ? 2.0 : 3.0;
  const double bytes = tensors * static_cast<double>(t.m) * static_cast<double>(t.n) * static_cast<double>(dtype_size(t.traits.x_dtype));
  return 1.0 + bytes / double(1 << 25);
}

std::vector<std::vector<std::size_t>> partition_keys(const std::vector<double>& costs, std::size_t workers) {
  if (workers == 0) throw Error("lntune: internal: partition_keys needs at least one worker");
  std::vector<std::vector<std::size_t>> out(workers);
  std::vector<double> load(workers, 0.0);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (!(costs[i] >= 0) || !std::isfinite(costs[i]))
      throw Error("lntune: internal: partition_keys: cost " + std::to_string(i) + " is not a finite number >= 0");
    const std::size_t w = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[w].push_back(i);
    load[w] += costs[i];
  }
  return out;
}

std::optional<Traits> prior_traits(const Traits& traits) {
  Traits t = traits.canonical();
  if (t.kernel != Kernel::fwd && t.kernel != Kernel::bwd_dx) return std::nullopt;
  if (t.residual) {
    t.residual.reset();
  } else if (t.norm == Norm::rms) {
    t.norm = Norm::layer;
    t.has_bias = true;
  } else if (t.x_dtype == DType::f16) {
    t.x_dtype = DType::bf16;
    if ((t.has_weight || t.has_bias) && t.w_dtype == DType::f16) t.w_dtype = DType::bf16;
    if (t.y_dtype == DType::f16) t.y_dtype = DType::bf16;
  } else {
    return std::nullopt;
  }
  return t.canonical();
}

int prior_depth(const Traits& t) {
  int depth = 0;
  for (std::optional<Traits> p = prior_traits(t); p; p = prior_traits(*p)) ++depth;
  return depth;
}

std::vector<std::vector<std::size_t>> order_targets(const std::vector<Target>& targets,
                                                    const std::vector<double>& costs, std::size_t workers) {
  if (costs.size() != targets.size())
    throw Error("lntune: internal: order_targets needs one cost per target");
  // Families in order of first appearance.
  using Family = std::tuple<Kernel, std::int64_t, std::int64_t>;
  std::vector<Family> families;
  std::vector<std::size_t> family_of(targets.size());
  std::vector<double> family_cost;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Family f{targets[i].traits.kernel, targets[i].n, targets[i].m};
    const auto it = std::find(families.begin(), families.end(), f);
    if (it == families.end()) {
      family_of[i] = families.size();
      families.push_back(f);
      family_cost.push_back(0.0);
    } else {
      family_of[i] = static_cast<std::size_t>(it - families.begin());
    }
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (!(costs[i] >= 0) || !std::isfinite(costs[i]))
      throw Error("lntune: internal: order_targets: cost " + std::to_string(i) + " is not a finite number >= 0");
    family_cost[family_of[i]] += costs[i];
  }
  const auto shares = partition_keys(family_cost, workers);
  std::vector<std::size_t> worker_of(families.size());
  for (std::size_t w = 0; w < shares.size(); ++w)
    for (std::size_t f : shares[w]) worker_of[f] = w;
  std::vector<int> depth(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) depth[i] = prior_depth(targets[i].traits);
  std::vector<std::vector<std::size_t>> out(workers);
  for (std::size_t i = 0; i < targets.size(); ++i) out[worker_of[family_of[i]]].push_back(i);
  for (auto& o : out)
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return depth[a] < depth[b]; });
  return out;
}

std::vector<std::vector<std::size_t>> group_by_model(const std::vector<cache::GpuId>& gpus) {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<cache::GpuId> models;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const auto it = std::find(models.begin(), models.end(), gpus[i]);
    if (it == models.end()) {
      models.push_back(gpus[i]);
      groups.push_back({i});
    } else {
      groups[static_cast<std::size_t>(it - models.begin())].push_back(i);
    }
  }
  return groups;
}

void use_device(int ordinal) {
  const rt::DriverApi& d = rt::driver();
  int count = 0;
  rt::check(d.DeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0) throw rt::NoDeviceError("lntune: no CUDA device");
  if (ordinal < 0 || ordinal >= count)
    throw Error("lntune: --device " + std::to_string(ordinal) + " does not exist (this machine has " +
                std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + ")");
  CUdevice dev = 0;
  rt::check(d.DeviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  CUcontext ctx = nullptr;
  // Retained for the life of the process, like the CUDA runtime's.
  rt::check(d.DevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain(device " + std::to_string(ordinal) + ")");
  rt::check(d.CtxSetCurrent(ctx), "cuCtxSetCurrent");
}

// ------------------------------------------------------------ the GPU bench
namespace {

// What every GPU bench shares. The runtime is the tuner's own: its binary
// store is the compile pool's, and it has no config source.
struct Env {
  rt::Runtime* runtime = nullptr;
  CUcontext ctx = nullptr;
  const rt::DeviceInfo* dev = nullptr;
  CompilePool* pool = nullptr;
  Runner* runner = nullptr;
  KeyResult::Phases* phases = nullptr;  // the current key's (the worker's), or none
  DeviceCheck* check = nullptr;         // verifications compare on the GPU (tuner/device_check.hpp), or none
  DevicePool* pool_buffers = nullptr;   // the workloads' device buffers (tuner/device_pool.hpp), or none
  Uploader* uploader = nullptr;         // the workloads' uploads (tuner/uploader.hpp), or none
  // Both or neither: workloads are built on the GPU (inputs drawn, float64
  // reference computed there; tuner/workload.hpp), else on the host.
  DeviceFill* fill = nullptr;
  DeviceReference* reference = nullptr;
  bool gpu_workloads() const { return fill && reference && check; }
};

// w.verify(...) through `verify`, its times so far into the key's phases.
template <class F>
std::string verified(const Env& env, const Workload& w, F&& verify) {
  std::string why = verify();
  if (env.phases) {
    env.phases->verify_s = w.verify_times().total_s;
    env.phases->reference_wait_s = w.verify_times().reference_wait_s;
    env.phases->compare_s = w.verify_times().compare_s;
  }
  return why;
}

// A failed CUDA call leaves the context usable (e.g. a launch refused for its
// resources) or not (a kernel fault): in the second case nothing else can
// run, so the search must stop.
[[noreturn]] void rethrow_cuda(const rt::CudaError& e, const std::string& doing) {
  const CUresult r = rt::driver().CtxSynchronize();
  if (r != CUDA_SUCCESS)
    throw FatalError("lntune: the CUDA context is unusable after " + doing + " (" + e.what() + "; " +
                     rt::error_name(r) + "). Finished keys are in the cache; run the same command to resume.");
  throw e;
}

// Candidates of one kernel: compile (pool), load, check the CTA size.
class Kernels {
 public:
  Kernels(const Env& env, const Traits& traits, std::int64_t n, int vec)
      : env_(env), traits_(traits), n_(n), vec_(vec) {}

  InstanceKey instance(const Config& c) const { return gen::make_instance(traits_, c, n_, vec_); }

  const rt::LoadedKernel& load(const Config& c) {
    auto it = loaded_.find(key_of(c));
    if (it != loaded_.end()) return *it->second;
    InstanceKey key;
    try {
      key = instance(c);
    } catch (const Error& e) {
      throw CandidateError(Status::compile_error, e.what());
    }
    CompileResult r;
    {
      ScopedSeconds pt(env_.phases ? &env_.phases->compile_wait_s : nullptr);
      r = env_.pool->submit(key).get();
    }
    if (!r.ok) throw CandidateError(Status::compile_error, r.error);
    const rt::LoadedKernel* k = nullptr;
    try {
      ScopedSeconds pt(env_.phases ? &env_.phases->load_s : nullptr);
      k = &env_.runtime->kernel(env_.ctx, env_.dev->arch(), key);
    } catch (const rt::CudaError& e) {
      rethrow_cuda(e, "loading " + key.name());
    }
    if (c.threads() > k->max_threads)
      throw CandidateError(Status::launch_error, key.name() + " needs " + std::to_string(c.threads()) +
                                                     " threads per CTA; the compiled kernel allows at most " +
                                                     std::to_string(k->max_threads) + " (registers)");
    loaded_.emplace(key_of(c), k);
    return *k;
  }

 private:
  // Launch-only parameters (group_size_m) do not change the kernel.
  static std::tuple<int, int, int, int> key_of(const Config& c) {
    return {c.block_size, c.num_warps, c.rows_per_cta, c.cluster_size};
  }
  Env env_;
  Traits traits_;
  std::int64_t n_;
  int vec_;
  std::map<std::tuple<int, int, int, int>, const rt::LoadedKernel*> loaded_;
};

// Times/verifies with CUDA failures classified (see rethrow_cuda).
template <class F>
auto guarded(const std::string& doing, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const rt::CudaError& e) {
    rethrow_cuda(e, doing);
  }
}

class FwdBench : public Bench {
 public:
  FwdBench(const Env& env, Workload& w) : env_(env), w_(w), kernels_(env, w.traits(), w.n(), w.vec()) {}
  void prepare(const Config& c) override { kernels_.load(c); }
  Measurement time(const Config& c, std::optional<double> best) override {
    const rt::LoadedKernel& k = kernels_.load(c);
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_forward(k, c, s); };
    return guarded("timing " + k.name, [&] { return env_.runner->time(launch, best); });
  }
  Measurement screen(const Config& c, int reps) override {
    const rt::LoadedKernel& k = kernels_.load(c);
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_forward(k, c, s); };
    return guarded("screening " + k.name, [&] { return env_.runner->screen(launch, reps); });
  }
  Measurement screen_cut(const Config& c, int reps, int first, double stop_above_us) override {
    const rt::LoadedKernel& k = kernels_.load(c);
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_forward(k, c, s); };
    return guarded("screening " + k.name, [&] { return env_.runner->screen(launch, reps, first, stop_above_us); });
  }
  std::string verify(const Config& c) override {
    const rt::LoadedKernel& k = kernels_.load(c);
    return guarded("verifying " + k.name,
                   [&] {
                     return verified(env_, w_, [&] {
                       return w_.verify([&](CUstream s) { w_.launch_forward(k, c, s); }, env_.runner->stream());
                     });
                   });
  }

 private:
  Env env_;
  Workload& w_;
  Kernels kernels_;
};

// bwd_dx candidates, each timed as the whole backward: with a given bwd_dwdb
// config (Session), or with the default bwd_dwdb config for its own partial
// rows (the search: what the launcher runs without a tuned bwd_dwdb, and the
// baseline of the bwd_dwdb search for that dx config, so that the joint
// choice can swap one for the other; see pick_joint).
class BwdDxBench : public Bench {
 public:
  BwdDxBench(const Env& env, Workload& w, std::optional<Config> dwdb_config = std::nullopt)
      : env_(env), w_(w), dx_(env, w.bwd_problem().traits, w.n(), w.vec()),
        dwdb_(env, w.dwdb_traits(), w.n(), 1), fixed_(dwdb_config) {}
  void prepare(const Config& c) override {
    dx_.load(c);
    if (w_.has_dwdb()) {
      try {
        dwdb_.load(dwdb_for(c));
      } catch (const CandidateError& e) {
        throw CandidateError(e.status(), std::string("the default bwd_dwdb config failed: ") + e.what());
      }
    }
    guarded("allocating the workspace", [&] { w_.reserve_workspace(c); });
  }
  Measurement time(const Config& c, std::optional<double> best) override {
    const rt::LoadedKernel& k = dx_.load(c);
    const Config rc = dwdb_for(c);
    const rt::LoadedKernel* r = w_.has_dwdb() ? &dwdb_.load(rc) : &k;
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_backward(k, c, *r, rc, s); };
    return guarded("timing " + k.name, [&] { return env_.runner->time(launch, best); });
  }
  Measurement screen(const Config& c, int reps) override {
    const rt::LoadedKernel& k = dx_.load(c);
    const Config rc = dwdb_for(c);
    const rt::LoadedKernel* r = w_.has_dwdb() ? &dwdb_.load(rc) : &k;
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_backward(k, c, *r, rc, s); };
    return guarded("screening " + k.name, [&] { return env_.runner->screen(launch, reps); });
  }
  Measurement screen_cut(const Config& c, int reps, int first, double stop_above_us) override {
    const rt::LoadedKernel& k = dx_.load(c);
    const Config rc = dwdb_for(c);
    const rt::LoadedKernel* r = w_.has_dwdb() ? &dwdb_.load(rc) : &k;
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_backward(k, c, *r, rc, s); };
    return guarded("screening " + k.name, [&] { return env_.runner->screen(launch, reps, first, stop_above_us); });
  }
  std::string verify(const Config& c) override {
    const rt::LoadedKernel& k = dx_.load(c);
    const Config rc = dwdb_for(c);
    const rt::LoadedKernel* r = w_.has_dwdb() ? &dwdb_.load(rc) : &k;
    return guarded("verifying " + k.name, [&] {
      return verified(env_, w_, [&] {
        return w_.verify([&](CUstream s) { w_.launch_backward(k, c, *r, rc, s); }, env_.runner->stream());
      });
    });
  }
  // Whether the launcher finishes dW/dB inside dx config `c`'s kernel (then
  // no bwd_dwdb runs after it: rt::finish_path).
  bool finishes_in_kernel(const Config& c) {
    return rt::finish_path(dx_.load(c), c, w_.bwd_problem()) != rt::FinishPath::separate;
  }
  // The bwd_dwdb config timed after dx config `c`.
  Config dwdb_for(const Config& c) const {
    if (fixed_) return *fixed_;
    return rt::default_dwdb_config(*env_.dev, w_.dwdb(c), w_.n());
  }

 private:
  Env env_;
  Workload& w_;
  Kernels dx_, dwdb_;
  std::optional<Config> fixed_;
};

// bwd_dwdb candidates reducing the partials of one bwd_dx config.
class DwdbBench : public Bench {
 public:
  DwdbBench(const Env& env, Workload& w, const Config& dx_config, const Config& dwdb_default)
      : env_(env), w_(w), dx_(env, w.bwd_problem().traits, w.n(), w.vec()), dwdb_(env, w.dwdb_traits(), w.n(), 1),
        dx_config_(dx_config) {
    // Fill the partials once with a whole backward, in two kernels: where
    // the launcher finishes dW/dB in the dx kernel, that path zeroes no
    // counters, and every bwd_dwdb candidate of more than one split found
    // the pooled workspace's stale counters and wrote nothing (session 56's
    // cold tune: 457 candidates "unwritten", 16-bit and fp32 768-3584 at
    // 264 partial rows). The dx config as the launcher runs it: a cluster
    // config's group_size_m bounded by the clusters that fit at once sets
    // the partial rows and the workspace's layout (the same tune's 21 failed
    // keys, clusters of 3-8 at 8704-65536 columns, reduced the config's 88
    // rows where fewer were written, at other offsets).
    const rt::LoadedKernel& k = dx_.load(dx_config);
    dx_config_ = rt::fit_coresident(k, dx_config);
    const rt::LoadedKernel& r = dwdb_.load(dwdb_default);
    guarded("computing the backward partials", [&] {
      w_.reserve_workspace(dx_config_);
      w_.launch_backward(k, dx_config_, r, dwdb_default, env_.runner->stream(), rt::Finish::separate);
      rt::check(rt::driver().StreamSynchronize(env_.runner->stream()), "cuStreamSynchronize");
    });
  }
  // The partial rows the candidates reduce (the fitted dx config's).
  std::int64_t partial_rows() const { return rt::partial_rows(dx_config_, w_.m()); }
  void prepare(const Config& c) override { dwdb_.load(c); }
  Measurement time(const Config& c, std::optional<double> best) override {
    const rt::LoadedKernel& k = dwdb_.load(c);
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_dwdb(k, c, dx_config_, s); };
    return guarded("timing " + k.name, [&] { return env_.runner->time(launch, best); });
  }
  Measurement screen(const Config& c, int reps) override {
    const rt::LoadedKernel& k = dwdb_.load(c);
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_dwdb(k, c, dx_config_, s); };
    return guarded("screening " + k.name, [&] { return env_.runner->screen(launch, reps); });
  }
  Measurement screen_cut(const Config& c, int reps, int first, double stop_above_us) override {
    const rt::LoadedKernel& k = dwdb_.load(c);
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_dwdb(k, c, dx_config_, s); };
    return guarded("screening " + k.name, [&] { return env_.runner->screen(launch, reps, first, stop_above_us); });
  }
  std::string verify(const Config& c) override {
    const rt::LoadedKernel& k = dwdb_.load(c);
    return guarded("verifying " + k.name, [&] {
      return verified(env_, w_, [&] {
        return w_.verify([&](CUstream s) { w_.launch_dwdb(k, c, dx_config_, s); }, env_.runner->stream(), true);
      });
    });
  }

 private:
  Env env_;
  Workload& w_;
  Kernels dx_, dwdb_;
  Config dx_config_;
};

// The widest vector the Workload's buffers allow (cuMemAlloc'd, contiguous):
// what rt::check_forward/check_backward will compute, known before the
// workload exists so that compilations can start early.
int expected_vec(const Traits& t, std::int64_t n) {
  int v = gen::max_vec(t.x_dtype);
  while (v > 1 && n % v) v /= 2;
  return v;
}


// One key's plan: what to search.
struct KeyPlan {
  cache::TuneKey key;
  std::int64_t m = 0;
  Config default_config;
  std::vector<Config> space;
};

KeyPlan plan_key(const rt::DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m) {
  KeyPlan p;
  p.key = rt::tune_key(dev, traits, n, m);
  p.m = m;
  const DType d = traits.kernel == Kernel::bwd_dwdb ? traits.w_dtype : traits.x_dtype;
  // The baseline is what the launcher runs untuned: its default for these
  // traits (a variant's own rules, the shared-memory configs that fit).
  p.default_config = rt::default_selection(dev, traits, n, m, expected_vec(traits, n)).config;
  p.space = gen::search_space(rt::space_query(dev, traits.kernel, d, n, m));
  return p;
}

// urgent: ahead of what is queued (the worker is about to need them).
void submit_all(CompilePool& pool, const KeyPlan& p, int vec, bool urgent = false) {
  auto submit = [&](const Config& c) {
    try {
      pool.submit(gen::make_instance(p.key.traits, c, p.key.n, vec), urgent);
    } catch (const Error&) {
      // An invalid instance is reported when the candidate is prepared.
    }
  };
  submit(p.default_config);
  for (const Config& c : p.space) submit(c);
}

std::uint64_t target_seed(std::uint64_t seed, const Target& t) {
  std::uint64_t h = seed;
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL; };
  mix(static_cast<std::uint64_t>(t.traits.kernel));
  mix(static_cast<std::uint64_t>(t.traits.x_dtype));
  mix(static_cast<std::uint64_t>(t.traits.w_dtype));
  if (t.traits.norm != Norm::layer || t.traits.residual) {  // LayerNorm seeds as before
    mix(static_cast<std::uint64_t>(t.traits.norm));
    mix(t.traits.residual ? 1 + static_cast<std::uint64_t>(*t.traits.residual) : 0);
  }
  mix(static_cast<std::uint64_t>(t.n));
  mix(static_cast<std::uint64_t>(t.m));
  return h;
}

// The bwd_dwdb key of a backward target: it depends on the bwd_dx config
// (its partial rows).
KeyPlan dwdb_plan(const rt::DeviceInfo& dev, const Target& t, const Config& dx_config) {
  const rt::DwdbProblem r = rt::dwdb_problem(t.traits, t.traits.has_weight, t.traits.has_bias, dx_config, t.m);
  return plan_key(dev, r.traits, t.n, r.rows);
}

// ------------------------------------------------------------ workers
// What the workers of one run over one GPU model share.
struct Shared {
  Shared(const TuneOptions& options, cache::Database& database, Progress* p)
      : o(options), db(database), progress(p), start(Clock::now()) {}
  const TuneOptions& o;
  cache::Database& db;
  Progress* progress;
  CompilePool* pool = nullptr;
  cache::Provenance now;  // templates, NVRTC and driver of this run
  Clock::time_point start;
  bool single = true;     // one worker: a fatal error may cancel the pool
  std::mutex progress_mu;
  std::atomic<bool> budget_spent{false};

  bool out_of_time() const {
    return o.budget_s > 0 && std::chrono::duration<double>(Clock::now() - start).count() > o.budget_s;
  }
  // Progress calls, serialised.
  template <class F>
  void report(F&& f) {
    if (!progress) return;
    std::lock_guard<std::mutex> lock(progress_mu);
    f(*progress);
  }
};

// One target: its main key (fwd or bwd_dx) and what to do with it.
struct TargetPlan {
  Target target;
  KeyPlan main;                                // space already reduced for a warm re-tune
  Retune main_mode = Retune::full;
  std::optional<cache::TuneRecord> main_record;  // the existing one
  bool dwdb = false;                           // bwd_dwdb follows (bwd with gradients, tune_dwdb)
  // The related key whose winner narrows the search (prior_traits), when it
  // is in this run or in the cache; main.space is then still the whole space.
  std::optional<cache::TuneKey> prior;
};

// The outcome at the last N searched for the same kernel, traits and M.
struct History {
  std::int64_t n = 0;
  int vec = 1;
  Outcome outcome;
};

// The plan of a target with a related key (TargetPlan::prior) narrowed to
// related_space around that key's stored winner; none without a complete
// record of it (then the whole space is searched).
std::optional<KeyPlan> related_plan(const cache::Database& db, const TargetPlan& p) {
  if (!p.prior) return std::nullopt;
  const auto rec = db.find(*p.prior);
  if (!rec || rec->prov.origin == cache::Origin::partial) return std::nullopt;
  KeyPlan narrowed = p.main;
  narrowed.space = related_space(p.main.space, rec->config, p.main.default_config);
  return narrowed;
}

// Builds a target's workload on a thread of its own, at a lower priority
// than the benchmarking thread (background_priority 15): the host half
// (Workload::prepare: inputs, statistics, the CPU reference started), then
// the device half in `ctx` (allocations and uploads, on the legacy stream,
// which does not wait for the runner's non-blocking stream). Its uploads
// overlap the current key's timings: at most a few GB/s of PCIe writes,
// about 1% of the HBM bandwidth, while they last.
// With `check` (the worker's DeviceCheck), the CPU reference is awaited and
// uploaded there too, so that verifications compare on the GPU.
// Device buffers come from `pool` and uploads go through `uploader` (the
// worker's, or none).
std::future<std::unique_ptr<Workload>> prepare_ahead(const Target& t, std::uint64_t seed, CUcontext ctx,
                                                     DeviceCheck* check, DevicePool* pool, Uploader* uploader) {
  return std::async(std::launch::async, [t, seed, ctx, check, pool, uploader] {
    background_priority(15);
    Workload::HostPtr h = Workload::prepare(t.traits, t.m, t.n, seed);
    rt::check(rt::driver().CtxSetCurrent(ctx), "cuCtxSetCurrent (preparing a workload)");
    auto w = std::make_unique<Workload>(std::move(h), pool, uploader);
    if (check) {
      w->use_device_check(check);
      w->upload_reference();
    }
    return w;
  });
}

class Worker {
 public:
  Worker(Shared& sh, const Env& env, int ordinal, double copy_gbps)
      : sh_(sh), env_(env), ordinal_(ordinal), copy_gbps_(copy_gbps) {}

  std::size_t searched() const { return searched_; }

  // Tunes one target (its main key, then its bwd_dwdb), reporting each key.
  // Throws FatalOut, with the target's results, when the context is unusable.
  // ahead: the target's workload, built on another thread while the previous
  // keys ran (prepare_ahead); started here when not valid.
  std::vector<KeyResult> run(const TargetPlan& p, std::future<std::unique_ptr<Workload>> ahead = {}) {
    std::vector<KeyResult> out;
    const Target& t = p.target;
    const rt::DeviceInfo& dev = *env_.dev;
    const std::string spent = "the time budget was spent";
    std::optional<Config> dx_config;
    if (p.main_mode == Retune::skip) {
      finish(out, cached(p.main.key, t.m));
      dx_config = p.main_record->config;
      if (!p.dwdb) return out;
      const KeyPlan dp = dwdb_plan(dev, t, *dx_config);
      const auto rec = sh_.db.find(dp.key);
      if (retune_mode(rec, sh_.now, sh_.o.force, sh_.o.full) == Retune::skip) {
        finish(out, cached(dp.key, dp.m));
        return out;
      }
    }
    if (sh_.out_of_time()) {
      sh_.budget_spent = true;
      if (p.main_mode != Retune::skip)
        finish(out, skipped(p.main.key, t.m, KeyResult::State::skipped_budget, spent));
      if (p.dwdb) {
        const KeyPlan dp = dwdb_plan(dev, t, dx_config.value_or(p.main.default_config));
        finish(out, skipped(dp.key, dp.m, KeyResult::State::skipped_budget, spent));
      }
      return out;
    }
    // A related key's winner narrows the search (prior_traits), once that key
    // is stored: the same worker tuned it earlier (see order_targets).
    const std::optional<KeyPlan> narrowed = related_plan(sh_.db, p);
    const KeyPlan* main = narrowed ? &*narrowed : &p.main;
    const bool prior = narrowed.has_value();
    if (p.prior) submit_all(*env_.pool, *main, expected_vec(t.traits, t.n), true);
    try {
      phases_ = KeyResult::Phases{};
      env_.phases = &phases_;
      runner_at_start_ = env_.runner->times();
      const auto setup0 = Clock::now();
      // Freed on another thread once the target is done (retire).
      struct Retire {
        Worker& wk;
        std::unique_ptr<Workload> w;
        ~Retire() { wk.retire(std::move(w)); }
      } held{*this, nullptr};
      if (env_.gpu_workloads()) {
        // Built here, on the runner's stream, before the search: nothing
        // else runs on the GPU while it times (the fill and the reference
        // would take HBM bandwidth from the timings). Only the CPU's check of
        // the reference runs on, on a thread of its own; the first
        // verification waits for it.
        DeviceBuild gpu;
        gpu.fill = env_.fill;
        gpu.reference = env_.reference;
        gpu.stream = env_.runner->stream();
        held.w = std::make_unique<Workload>(t.traits, t.m, t.n, target_seed(sh_.o.seed, t), gpu, env_.pool_buffers);
        held.w->use_device_check(env_.check);
      } else {
        if (!ahead.valid())
          ahead = prepare_ahead(t, target_seed(sh_.o.seed, t), env_.ctx, env_.check, env_.pool_buffers, env_.uploader);
        held.w = ahead.get();
      }
      Workload& w = *held.w;
      const double setup_s = std::chrono::duration<double>(Clock::now() - setup0).count();
      if (p.main_mode != Retune::skip) {
        KeyResult kr;
        const bool warm = p.main_mode == Retune::warm;
        if (t.traits.kernel == Kernel::fwd) {
          FwdBench bench(env_, w);
          kr = search_key(*main, bench, [&](const Config&) { return w.fwd_bytes(); }, w.vec(), warm, prior);
          kr.setup_seconds = setup_s;
        } else {
          // bwd_dx, then bwd_dwdb for its finalists: the pair with the least
          // sum wins (pick_joint).
          BwdDxBench bench(env_, w);
          const std::function<double(const Config&)> bytes = [&](const Config& c) { return w.bwd_bytes(c); };
          kr = search_only(*main, bench, w.vec(), warm, false, &bytes, prior);
          kr.setup_seconds = setup_s;
          std::optional<DwdbPick> pick;
          if (p.dwdb && w.has_dwdb() && kr.outcome.best() && !kr.outcome.partial) pick = joint_dwdb(p, w, bench, kr);
          store_key(*main, kr, bytes, w.vec(), false);
          if (pick) {
            dx_config = kr.outcome.best()->config;
            finish(out, std::move(kr));
            const std::int64_t P = pick->rows;
            store_key(pick->plan, pick->result, [&](const Config&) { return w.dwdb_bytes(P); }, 1, true);
            finish(out, std::move(pick->result));
            return out;
          }
        }
        if (kr.outcome.best() && kr.state != KeyResult::State::failed) dx_config = kr.outcome.best()->config;
        const bool partial = kr.outcome.partial;
        finish(out, std::move(kr));
        if (p.dwdb && (!dx_config || partial)) {
          const KeyPlan dp = dwdb_plan(dev, t, dx_config.value_or(p.main.default_config));
          finish(out, skipped(dp.key, dp.m, partial ? KeyResult::State::skipped_budget : KeyResult::State::failed,
                              partial ? spent : "bwd_dx has no winner"));
          return out;
        }
        if (p.dwdb && t.traits.kernel == Kernel::bwd_dx && w.has_dwdb()) {
          // No finalist's bwd_dwdb could run.
          const KeyPlan dp = dwdb_plan(dev, t, *dx_config);
          finish(out, skipped(dp.key, dp.m, KeyResult::State::failed,
                              "no bwd_dwdb config ran after the bwd_dx finalists"));
          return out;
        }
      }
      if (p.dwdb && dx_config && w.has_dwdb()) {
        // The bwd_dx record is current: its bwd_dwdb alone, keyed by the
        // partial rows of the dx config as the launcher runs it (a kernel
        // that cannot load is reported by DwdbBench below).
        Config run = *dx_config;
        try {
          run = launched_dx(w, *dx_config);
        } catch (const CandidateError&) {
        }
        KeyPlan dp = dwdb_plan(dev, t, run);
        const auto rec = sh_.db.find(dp.key);
        RetunePlan rp = plan_retune(rec, sh_.now, sh_.o.force, sh_.o.full, dp.default_config, std::move(dp.space));
        if (rp.mode == Retune::skip) {
          finish(out, cached(dp.key, dp.m));
          return out;
        }
        dp.space = std::move(rp.space);
        try {
          DwdbBench bench(env_, w, run, dp.default_config);
          const std::int64_t P = bench.partial_rows();
          finish(out, search_key(dp, bench, [&](const Config&) { return w.dwdb_bytes(P); }, 1,
                                 rp.mode == Retune::warm));
        } catch (const CandidateError& e) {
          finish(out, skipped(dp.key, dp.m, KeyResult::State::failed,
                              std::string("could not run the bwd_dx winner: ") + e.what()));
        }
      }
    } catch (const FatalError& e) {
      finish(out, skipped(p.main.key, t.m, KeyResult::State::failed, e.what()));
      throw FatalOut(e.what(), std::move(out));
    } catch (const std::exception& e) {
      // E.g. out of GPU memory for this shape: the next key may still fit.
      finish(out, skipped(p.main.key, t.m, KeyResult::State::failed, e.what()));
      const CUresult r = rt::driver().CtxSynchronize();
      if (r != CUDA_SUCCESS)
        throw FatalOut("lntune: the CUDA context is unusable (" + rt::error_name(r) + ") after: " + e.what(),
                       std::move(out));
    }
    return out;
  }

  // The bwd_dx config as the launcher runs it: rt::fit_coresident's (a
  // cluster config's group_size_m bounded by the clusters that fit at once),
  // whose partial rows key and size bwd_dwdb.
  Config launched_dx(const Workload& w, const Config& c) {
    Kernels dx(env_, w.bwd_problem().traits, w.n(), w.vec());
    return rt::fit_coresident(dx.load(c), c);
  }

  // A bwd_dwdb search for one bwd_dx finalist, not yet stored.
  struct DwdbPick {
    KeyPlan plan;
    KeyResult result;
    std::int64_t rows = 0;  // the partial rows reduced (DwdbBench::partial_rows)
  };

  // Joint bwd_dx + bwd_dwdb tuning (issue 10): bwd_dwdb is searched for each
  // bwd_dx finalist (dx_finalists: timed carefully, close to the winner, one
  // per partial-row count), and the pair with the least estimated sum wins
  // (pick_joint). A finalist other than the bwd_dx winner is verified before
  // it may win. Sets dx.outcome.winner; returns the chosen bwd_dwdb search,
  // or nothing when no finalist's bwd_dwdb ran.
  std::optional<DwdbPick> joint_dwdb(const TargetPlan& p, Workload& w, BwdDxBench& dx_bench, KeyResult& dx) {
    const Target& t = p.target;
    const rt::DeviceInfo& dev = *env_.dev;
    const TuneOptions& o = sh_.o;
    const auto t0 = Clock::now();
    // A warm re-tune keeps to the bwd_dx winner's own reduction (one
    // finalist): the pair was chosen jointly when the key was tuned.
    const std::size_t most = p.main_mode == Retune::warm ? 1 : o.joint_finalists;
    const std::vector<std::size_t> finalists = dx_finalists(
        dx.outcome, [&](const Config& c) { return rt::partial_rows(c, t.m); }, o.joint_margin, most);
    std::vector<JointTiming> timings;
    std::vector<DwdbPick> picks;
    for (std::size_t i : finalists) {
      const Config dc = dx.outcome.candidates[i].config;
      // Keyed by the partial rows of the dx config as the launcher runs it
      // (rt::fit_coresident; Runtime's plans look bwd_dwdb up by those).
      Config run = dc;
      try {
        run = launched_dx(w, dc);
      } catch (const CandidateError&) {
        continue;  // this finalist cannot run: not a finalist
      }
      KeyPlan dp = dwdb_plan(dev, t, run);
      // Warm around the existing record (or the one for the previous bwd_dx
      // winner's partial rows) when NVRTC and driver are the same; else the
      // whole space. Searched whenever its bwd_dx is.
      auto rec = sh_.db.find(dp.key);
      if (!rec && p.main_record) rec = sh_.db.find(dwdb_plan(dev, t, p.main_record->config).key);
      RetunePlan rp = plan_retune(rec, sh_.now, true, o.full, dp.default_config, std::move(dp.space));
      dp.space = std::move(rp.space);
      try {
        DwdbBench bench(env_, w, run, dp.default_config);
        const std::int64_t P = bench.partial_rows();
        const std::function<double(const Config&)> bytes = [&w, P](const Config&) { return w.dwdb_bytes(P); };
        KeyResult r = search_only(dp, bench, 1, rp.mode == Retune::warm, true, &bytes);
        JointTiming jt;
        jt.dx = i;
        jt.config = dc;
        jt.partial_rows = P;
        jt.backward_us = dx.outcome.candidates[i].timing->stats.median;
        if (const CandidateResult& b = r.outcome.baseline(); b.timing) jt.dwdb_default_us = b.timing->stats.median;
        if (const CandidateResult* best = r.outcome.best()) {
          jt.dwdb_best_us = best->timing->stats.median;
          jt.dwdb = best->config;
        }
        // dW/dB finished in the dx kernel: the backward's time is the pair's,
        // whatever bwd_dwdb config is stored (used only if the cooperative
        // launch is refused).
        jt.finishes_in_kernel = dx_bench.finishes_in_kernel(dc);
        if (jt.finishes_in_kernel && jt.dwdb_default_us) jt.dwdb_best_us = jt.dwdb_default_us;
        timings.push_back(jt);
        picks.push_back(DwdbPick{dp, std::move(r), P});
      } catch (const CandidateError&) {
        // This finalist's partials cannot be produced: not a finalist.
      }
    }
    dx.joint = timings;  // every finalist, for the trace (chosen: below)
    while (true) {
      const std::optional<std::size_t> k = pick_joint(timings);
      if (!k) return std::nullopt;
      CandidateResult& c = dx.outcome.candidates[timings[*k].dx];
      if (c.status == Status::ok || verify_candidate(dx_bench, c)) {
        dx.outcome.winner = timings[*k].dx;
        for (JointTiming& jt : dx.joint) jt.chosen = jt.dx == timings[*k].dx;
        // Its seconds: every finalist's search (the price of the joint choice).
        picks[*k].result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        return std::move(picks[*k]);
      }
      timings.erase(timings.begin() + static_cast<std::ptrdiff_t>(*k));
      picks.erase(picks.begin() + static_cast<std::ptrdiff_t>(*k));
    }
  }

  // Frees a finished target's workload on a thread of its own: its device
  // buffers, page-locked buffers and host arrays (up to a few GB for the
  // bandwidth-regime shapes) take tens of milliseconds to give back, which
  // the next key need not wait for. At most kRetiring at once, so memory
  // stays bounded when freeing falls behind.
  void retire(std::unique_ptr<Workload> w) noexcept {
    if (!w) return;
    constexpr std::size_t kRetiring = 4;
    try {
      while (!retiring_.empty() && (retiring_.size() >= kRetiring ||
                                    retiring_.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready))
        retiring_.pop_front();  // waits for it
      retiring_.push_back(std::async(std::launch::async, [w = std::move(w), ctx = env_.ctx]() mutable {
        background_priority(19);
        rt::driver().CtxSetCurrent(ctx);  // the buffers' context; freeing without it would leak them
        w.reset();
      }));
    } catch (...) {
      // No thread could be started: free it here (w may already be moved
      // into the failed task, which then freed it).
      w.reset();
    }
  }

  ~Worker() {
    for (auto& f : retiring_) f.wait();
  }

  // A fatal error with the results of the target it stopped in.
  struct FatalOut {
    FatalOut(std::string m, std::vector<KeyResult> r) : message(std::move(m)), results(std::move(r)) {}
    std::string message;
    std::vector<KeyResult> results;
  };

 private:
  using HistoryKey = std::tuple<int, int, int, bool, bool, std::int64_t>;
  static HistoryKey history_key(const Traits& t, std::int64_t m) {
    const Traits c = t.canonical();
    return {static_cast<int>(c.kernel), static_cast<int>(c.x_dtype), static_cast<int>(c.w_dtype), c.has_weight,
            c.has_bias, m};
  }

  // Searches one key on `bench` and stores its winner.
  // Searches one key on `bench` and stores its winner.
  KeyResult search_key(const KeyPlan& plan, Bench& bench, const std::function<double(const Config&)>& bytes, int vec,
                       bool warm, bool prior = false) {
    KeyResult kr = search_only(plan, bench, vec, warm, false, &bytes, prior);
    store_key(plan, kr, bytes, vec, false);
    return kr;
  }

  // The search alone. quiet: no progress calls (a bwd_dwdb search for a
  // joint finalist: replayed by store_key once it is chosen).
  // prior: plan.space is a related key's winner and its rivals (see
  // prior_traits); like warm, no reuse from the previous N in either direction.
  KeyResult search_only(const KeyPlan& plan, Bench& bench, int vec, bool warm, bool quiet,
                        const std::function<double(const Config&)>* bytes_for_roofline = nullptr,
                        bool prior = false) {
    KeyResult kr;
    kr.key = plan.key;
    kr.m = plan.m;
    kr.warm = warm;
    kr.prior = prior;
    const auto t0 = Clock::now();
    if (!quiet) sh_.report([&](Progress& p) { p.key_begin(plan.key, plan.space.size() + 1, ordinal_); });
    SearchOptions so;
    so.out_of_time = [this] { return sh_.out_of_time(); };
    if (!quiet)
      so.on_result = [this, &plan](std::size_t i, const CandidateResult& r) {
        sh_.report([&](Progress& p) { p.candidate_done(plan.key, i, r); });
      };
    const TuneOptions& o = sh_.o;
    // Not in a warm re-tune: it re-times the stored winner and its close
    // rivals within its 30-second aim, and the winner had its final then.
    so.final = o.final;
    if (warm) so.final.rounds = 0;
    const HistoryKey hk = history_key(plan.key.traits, plan.m);
    const History* prev = nullptr;
    if (!o.full && o.screen_reps > 0) {
      so.screen_reps = o.screen_reps;
      so.screen_margin = warm ? std::min(o.screen_margin, o.warm_screen_margin) : o.screen_margin;
      so.screen_cut = o.screen_cut;
      const double copy = copy_gbps_, headroom = o.roofline_headroom;
      if (bytes_for_roofline) {
        const auto& bytes = *bytes_for_roofline;
        so.floor_us = [&bytes, copy, headroom](const Config& c) { return roofline_floor_us(bytes(c), copy, headroom); };
      }
      auto it = history_.find(hk);
      if (!warm && !prior && o.dominated_ratio > 0 && it != history_.end() && it->second.n != plan.key.n)
        prev = &it->second;
    }
    if (prev) {
      const Traits traits = plan.key.traits;
      const std::int64_t n = plan.key.n;
      const double ratio = o.dominated_ratio;
      so.reuse = [prev, traits, n, vec, ratio](const Config& c) -> std::optional<std::string> {
        // Only where the config makes the same kind of kernel at both N.
        try {
          const InstanceKey a = gen::make_instance(traits, c, prev->n, prev->vec);
          const InstanceKey b = gen::make_instance(traits, c, n, vec);
          if (a.single_tile != b.single_tile || a.vec != b.vec) return std::nullopt;
        } catch (const Error&) {
          return std::nullopt;
        }
        return reuse_reason(prev->outcome, prev->n, c, ratio);
      };
    }
    kr.outcome = search(bench, plan.default_config, plan.space, so);
    kr.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return kr;
  }

  // Records a search's history and stores its winner (or says why none).
  // replay: report the key and its candidates now (a quiet search).
  void store_key(const KeyPlan& plan, KeyResult& kr, const std::function<double(const Config&)>& bytes, int vec,
                 bool replay) {
    const auto t0 = Clock::now();
    if (replay) {
      sh_.report([&](Progress& p) { p.key_begin(plan.key, plan.space.size() + 1, ordinal_); });
      for (std::size_t i = 0; i < kr.outcome.candidates.size(); ++i)
        sh_.report([&](Progress& p) { p.candidate_done(plan.key, i, kr.outcome.candidates[i]); });
    }
    ++searched_;
    const Outcome& out = kr.outcome;
    if (!kr.warm && !kr.prior) history_[history_key(plan.key.traits, plan.m)] = History{plan.key.n, vec, out};
    if (out.partial) sh_.budget_spent = true;
    if (const CandidateResult* d = &out.baseline(); d->timing && d->timing->stats.median > 0)
      kr.default_gbps = bytes(d->config) / (d->timing->stats.median * 1e-6) / 1e9;
    if (const CandidateResult* win = out.best()) {
      cache::Provenance prov = sh_.now;
      prov.tuned_at = cache::utc_now_iso8601();
      prov.origin = out.partial ? cache::Origin::partial : cache::Origin::tuned;
      kr.record = make_record(plan.key, out, bytes(win->config), copy_gbps_, prov);
      kr.winner_gbps = kr.record->gbps;
      try {
        sh_.db.upsert(*kr.record);
        kr.state = out.partial ? KeyResult::State::partial : KeyResult::State::tuned;
      } catch (const std::exception& e) {
        kr.state = KeyResult::State::failed;
        kr.message = std::string("could not store the result: ") + e.what();
      }
    } else {
      kr.state = KeyResult::State::no_winner;
      kr.message = "no candidate ran correctly";
      for (const CandidateResult& c : out.candidates)
        if (c.is_default && !c.message.empty()) kr.message += "; default: " + c.message;
    }
    kr.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  }

  void finish(std::vector<KeyResult>& out, KeyResult kr) {
    if (kr.state != KeyResult::State::cached && kr.state != KeyResult::State::skipped_budget) kr.device = ordinal_;
    // The target's host phases go with its main key (with its bwd_dwdb searches).
    if (kr.key.traits.kernel != Kernel::bwd_dwdb && !kr.outcome.candidates.empty()) {
      const Runner::Times& now = env_.runner->times();
      phases_.warmup_s = now.warmup_s - runner_at_start_.warmup_s;
      phases_.rewarm_s = now.rewarm_s - runner_at_start_.rewarm_s;
      phases_.rewarms = now.rewarms - runner_at_start_.rewarms;
      phases_.reps_s = now.reps_s - runner_at_start_.reps_s;
      kr.phases = phases_;
    }
    kr.finished_at = std::chrono::duration<double>(Clock::now() - sh_.start).count();
    sh_.report([&](Progress& p) { p.key_done(kr); });
    out.push_back(std::move(kr));
  }

  KeyResult cached(const cache::TuneKey& key, std::int64_t m) const {
    KeyResult kr;
    kr.key = key;
    kr.m = m;
    kr.state = KeyResult::State::cached;
    kr.record = sh_.db.find(key);
    if (kr.record) kr.winner_gbps = kr.record->gbps;
    return kr;
  }

  KeyResult skipped(const cache::TuneKey& key, std::int64_t m, KeyResult::State s, std::string why) const {
    KeyResult kr;
    kr.key = key;
    kr.m = m;
    kr.state = s;
    kr.message = std::move(why);
    return kr;
  }

  Shared& sh_;
  Env env_;
  KeyResult::Phases phases_;  // the current target's (env_.phases points here)
  Runner::Times runner_at_start_;  // the runner's times when the current target began
  int ordinal_;
  double copy_gbps_;
  std::size_t searched_ = 0;
  std::map<HistoryKey, History> history_;
  std::deque<std::future<void>> retiring_;  // retire()'s tasks, oldest first
};


}  // namespace

// ------------------------------------------------------------ Session
struct Session::Impl {
  rt::DeviceInfo dev;
  CUcontext ctx = nullptr;
  std::shared_ptr<LayeredBinaryStore> store;
  std::unique_ptr<rt::Runtime> runtime;
  std::unique_ptr<CompilePool> pool;
  std::unique_ptr<Runner> runner;
  Env env() { return Env{runtime.get(), ctx, &dev, pool.get(), runner.get()}; }
};

Session::Session(std::shared_ptr<rt::BinaryStore> store, RunnerOptions runner, unsigned jobs,
                 std::string compile_worker)
    : impl_(std::make_unique<Impl>()) {
  impl_->runtime = std::make_unique<rt::Runtime>();
  impl_->dev = impl_->runtime->current_device(&impl_->ctx);
  impl_->store = std::make_shared<LayeredBinaryStore>(std::move(store));
  impl_->runtime->set_binary_store(impl_->store);
  impl_->pool = std::make_unique<CompilePool>(impl_->dev.arch(), impl_->store, jobs, std::move(compile_worker));
  impl_->runner = std::make_unique<Runner>(impl_->dev, runner);
}

Session::~Session() {
  // The runner and the pool go before the runtime (and its modules).
  impl_->runner.reset();
  impl_->pool.reset();
  impl_->runtime.reset();
}

const rt::DeviceInfo& Session::device() const { return impl_->dev; }

double Session::copy_gbps() { return impl_->runner->copy_gbps(); }

CompileStats Session::compile_stats() const { return impl_->pool->stats(); }

CandidateResult Session::run(Workload& w, Kernel kernel, const Config& config, const Config& other, bool time,
                             bool verify) {
  CandidateResult r;
  r.config = config;
  const Env env = impl_->env();
  std::unique_ptr<Bench> bench;
  try {
    if (kernel == Kernel::fwd)
      bench = std::make_unique<FwdBench>(env, w);
    else if (kernel == Kernel::bwd_dx)
      bench = std::make_unique<BwdDxBench>(env, w, other);
    else
      bench = std::make_unique<DwdbBench>(env, w, other, rt::default_dwdb_config(impl_->dev, w.dwdb(other), w.n()));
  } catch (const FatalError&) {
    throw;
  } catch (const CandidateError& e) {
    r.status = e.status();
    r.message = e.what();
    return r;
  } catch (const std::exception& e) {
    r.status = Status::launch_error;
    r.message = e.what();
    return r;
  }
  if (time ? !prepare_and_time(*bench, r, std::nullopt) : !prepare_candidate(*bench, r)) return r;
  if (verify)
    verify_candidate(*bench, r);
  else
    r.status = Status::slower;  // timed, not checked
  return r;
}

std::int64_t representative_m(int bucket, int sm_count) {
  const std::int64_t sm = sm_count > 0 ? sm_count : 1;
  std::int64_t m = 1;
  switch (bucket) {
    case 0: m = sm / 8; break;
    case 1: m = sm / 2; break;
    case 2: m = 2 * sm; break;
    case 3: m = 8 * sm; break;
    case 4: m = 32 * sm; break;
    default: m = 128 * sm; break;
  }
  return std::max<std::int64_t>(1, m);
}

// ------------------------------------------------------------ run_tuning
namespace {

// Tunes `targets` on one GPU model: on the calling thread's current context
// when `ordinals` is empty, else one worker thread per ordinal.
TuneSummary run_group(const std::vector<int>& ordinals, const rt::DeviceInfo& dev, const std::vector<Target>& targets,
                      cache::Database& db, const std::shared_ptr<LayeredBinaryStore>& store,
                      const TuneOptions& options, Progress* progress, Clock::time_point start) {
  const auto t0 = Clock::now();
  TuneSummary summary;
  summary.device = dev;
  summary.gpu = rt::gpu_id(dev);
  const std::size_t workers = std::max<std::size_t>(1, ordinals.size());
  unsigned jobs = options.jobs;
  if (jobs == 0) {
    // One hardware thread per GPU worker, one for the references.
    const unsigned hw = std::thread::hardware_concurrency();
    const unsigned busy = static_cast<unsigned>(workers) + 1;
    jobs = hw > busy + 1 ? hw - busy : 1;
  }
  CompilePool pool(dev.arch(), store, jobs, options.compile_worker);
  summary.compile_threads = pool.threads();
  Shared sh(options, db, progress);
  sh.start = start;
  sh.pool = &pool;
  sh.now = make_provenance(rt::nvrtc_version(), dev.driver_version, false);
  sh.single = workers == 1;

  // Plans, retune decisions and compilations, all up front.
  std::vector<cache::TuneKey> run_keys;
  for (const Target& t : targets) run_keys.push_back(rt::tune_key(dev, t.traits, t.n, t.m));
  std::vector<std::vector<std::size_t>> children(targets.size());  // by the index of their related key
  std::vector<TargetPlan> plans;
  std::vector<double> costs;
  std::size_t keys = 0, candidates = 0;
  for (const Target& t : targets) {
    TargetPlan p;
    p.target = t;
    p.main = plan_key(dev, t.traits, t.n, t.m);
    p.main_record = db.find(p.main.key);
    RetunePlan rp = plan_retune(p.main_record, sh.now, options.force, options.full, p.main.default_config,
                                std::move(p.main.space));
    p.main_mode = rp.mode;
    p.main.space = std::move(rp.space);
    if (p.main_mode == Retune::full && options.priors && !options.full) {
      if (const auto pt = prior_traits(t.traits)) {
        const cache::TuneKey pk = rt::tune_key(dev, *pt, t.n, t.m);
        const auto in_run = std::find(run_keys.begin(), run_keys.end(), pk);
        if (in_run != run_keys.end()) {
          p.prior = pk;
          children[static_cast<std::size_t>(in_run - run_keys.begin())].push_back(plans.size());
        } else if (const auto rec = db.find(pk); rec && rec->prov.origin != cache::Origin::partial) {
          p.prior = pk;
        }
      }
    }
    if (p.prior) {
      // Its space is known once the related key is stored: the default now,
      // the rest then (submit_children, Worker::run). Counted as the related
      // space around its own default.
      KeyPlan d = p.main;
      d.space.clear();
      submit_all(pool, d, expected_vec(t.traits, t.n));
      candidates += related_space(p.main.space, p.main.default_config, p.main.default_config).size() + 1;
      ++keys;
    } else if (p.main_mode != Retune::skip) {
      submit_all(pool, p.main, expected_vec(t.traits, t.n));
      candidates += p.main.space.size() + 1;
      ++keys;
    }
    const bool grads = t.traits.has_weight || t.traits.has_bias;
    bool dwdb_work = false;
    if (t.traits.kernel == Kernel::bwd_dx && options.tune_dwdb && grads) {
      p.dwdb = true;
      // Any bwd_dx config will do for the space and the compilations: the
      // bwd_dwdb instances do not depend on M.
      const Config dx = p.main_mode == Retune::skip ? p.main_record->config : p.main.default_config;
      const KeyPlan dp = dwdb_plan(dev, t, dx);
      dwdb_work = p.main_mode != Retune::skip ||
                  retune_mode(db.find(dp.key), sh.now, options.force, options.full) != Retune::skip;
      if (dwdb_work) {
        submit_all(pool, dp, 1);
        candidates += dp.space.size() + 1;
        ++keys;
      }
    }
    costs.push_back(p.main_mode != Retune::skip || dwdb_work ? target_cost(t) : 0.0);
    plans.push_back(std::move(p));
  }
  sh.report([&](Progress& pr) { pr.begin(keys, candidates); });

  const std::vector<std::vector<std::size_t>> shares = order_targets(targets, costs, workers);

  // A target's derived keys (children, found while planning) are compiled
  // as soon as its winner is stored, long before they run (order_targets
  // puts them later).
  auto submit_children = [&](std::size_t i) {
    for (std::size_t c : children[i])
      if (const auto narrowed = related_plan(db, plans[c]))
        submit_all(pool, *narrowed, expected_vec(plans[c].target.traits, plans[c].target.n));
  };
  std::vector<std::vector<KeyResult>> results(plans.size());
  std::vector<DeviceStats> stats(workers);
  std::vector<rt::KernelCacheStats> kernel_stats(workers);

  auto work = [&](std::size_t w) {
    const auto w0 = Clock::now();
    DeviceStats& st = stats[w];
    st.ordinal = ordinals.empty() ? dev.ordinal : ordinals[w];
    const std::string who = workers > 1 ? "gpu " + std::to_string(st.ordinal) + ": " : "";
    // The worker's own runtime (never the process's default one): its
    // modules and device table, CUBINs from the run's shared store. Declared
    // first, so that it outlives the runner and the benches' kernels.
    rt::Runtime runtime;
    runtime.set_binary_store(store);
    std::unique_ptr<Runner> runner;
    CUcontext ctx = nullptr;
    const rt::DeviceInfo* d = &dev;
    try {
      if (!ordinals.empty()) use_device(ordinals[w]);
      d = &runtime.current_device(&ctx);
      runner = std::make_unique<Runner>(*d, options.runner);
      st.copy_gbps = runner->copy_gbps();
    } catch (const std::exception& e) {
      if (ordinals.empty()) throw;  // one GPU: nothing was tuned yet
      st.fatal = e.what();
      for (std::size_t i : shares[w]) {
        KeyResult kr;
        kr.key = plans[i].main.key;
        kr.m = plans[i].target.m;
        kr.state = KeyResult::State::failed;
        kr.message = "GPU " + std::to_string(st.ordinal) + " could not start: " + e.what();
        sh.report([&](Progress& pr) { pr.key_done(kr); });
        results[i].push_back(std::move(kr));
      }
      st.busy_s = std::chrono::duration<double>(Clock::now() - w0).count();
      return;
    }
    sh.report([&](Progress& pr) {
      pr.note(who + "device-to-device copy: " + std::to_string(static_cast<long>(st.copy_gbps)) + " GB/s");
    });
    // Verifications compare on the GPU; the host compares where the check
    // cannot be built (it is compiled with NVRTC like the kernels).
    std::unique_ptr<DeviceCheck> check;
    // With the GPU reference, its fill and reference kernels compile (NVRTC)
    // on threads of their own meanwhile.
    const bool want_gpu_reference = options.reference == ReferenceMode::gpu;
    auto build_async = [&](auto make) {
      return std::async(std::launch::async, [ctx, make] {
        rt::check(rt::driver().CtxSetCurrent(ctx), "cuCtxSetCurrent (building the tuner's helper kernels)");
        return make();
      });
    };
    std::future<std::unique_ptr<DeviceFill>> fill_pending;
    std::future<std::unique_ptr<DeviceReference>> reference_pending;
    if (want_gpu_reference) {
      const std::string arch = d->arch();
      fill_pending = build_async([arch] { return std::make_unique<DeviceFill>(arch); });
      reference_pending = build_async([arch] { return std::make_unique<DeviceReference>(arch); });
    }
    try {
      check = std::make_unique<DeviceCheck>(d->arch());
    } catch (const std::exception& e) {
      sh.report([&](Progress& pr) { pr.note(who + "outputs compared on the host: " + e.what()); });
    }
    std::unique_ptr<DeviceFill> fill;
    std::unique_ptr<DeviceReference> reference;
    if (want_gpu_reference) {
      std::string why;
      try {
        fill = fill_pending.get();
      } catch (const std::exception& e) {
        why = e.what();
      }
      try {
        reference = reference_pending.get();
      } catch (const std::exception& e) {
        if (why.empty()) why = e.what();
      }
      if (!check && why.empty()) why = "the GPU's output check could not be built";
      if (!why.empty()) {
        fill.reset();
        reference.reset();
        sh.report([&](Progress& pr) { pr.note(who + "inputs and references computed on the host: " + why); });
      }
    }
    // The workloads' device buffers, reused from one key to the next (no
    // cuMemAlloc while the GPU times: it slows the timings); half of the
    // memory free now may be kept unused (an allocation that runs out of
    // memory frees what is kept and tries again).
    std::size_t free_bytes = 0, total_bytes = 0;
    rt::check(rt::driver().MemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo");
    DevicePool buffers(free_bytes / 2);
    // Their uploads, through page-locked staging: a pageable cuMemcpyHtoD
    // on the preparing threads stalled this thread's timings.
    Uploader uploader;
    Env env{&runtime, ctx, d, &pool, runner.get()};
    env.check = check.get();
    env.pool_buffers = &buffers;
    env.uploader = &uploader;
    env.fill = fill.get();
    env.reference = reference.get();
    Worker wk(sh, env, st.ordinal, st.copy_gbps);
    // The next target's workload (inputs, CPU reference, device buffers) is
    // built on another thread while the GPU times the current one (not once
    // the budget is spent).
    auto prepare = [&](std::size_t k) -> std::future<std::unique_ptr<Workload>> {
      const TargetPlan& p = plans[k];
      if ((p.main_mode == Retune::skip && !p.dwdb) || sh.out_of_time()) return {};
      if (env.gpu_workloads()) return {};  // built by the worker, before the key's search
      return prepare_ahead(p.target, target_seed(options.seed, p.target), ctx, check.get(), &buffers, &uploader);
    };
    // Up to `ahead_n` targets in preparation: a short key (a few candidates
    // around a related key's winner) takes less time than building one
    // workload, so one ahead is not enough to keep the GPU busy. Three while
    // NVRTC shares the CPU; eight when most of this worker's keys are warm
    // re-tunes (a handful of candidates each, their CUBINs in the cache).
    const std::vector<std::size_t>& share = shares[w];
    const auto warm_targets = std::count_if(share.begin(), share.end(),
                                            [&](std::size_t k) { return plans[k].main_mode == Retune::warm; });
    const std::size_t ahead_n = options.prepare_ahead > 0 ? static_cast<std::size_t>(options.prepare_ahead)
                                : 2 * static_cast<std::size_t>(warm_targets) >= share.size() ? 8
                                                                                          : 3;
    std::deque<std::future<std::unique_ptr<Workload>>> ahead;
    std::size_t started = 0;  // share[0, started) have had prepare() called
    for (std::size_t s = 0; s < share.size(); ++s) {
      const std::size_t i = share[s];
      for (; started < share.size() && started < s + ahead_n; ++started) ahead.push_back(prepare(share[started]));
      std::future<std::unique_ptr<Workload>> host = std::move(ahead.front());
      ahead.pop_front();
      try {
        results[i] = wk.run(plans[i], std::move(host));
        submit_children(i);
      } catch (const Worker::FatalOut& f) {
        results[i] = f.results;
        st.fatal = f.message;
        if (sh.single) pool.cancel();
        break;
      }
    }
    st.keys = wk.searched();
    {
      const DevicePool::Stats b = buffers.stats();
      sh.report([&](Progress& pr) {
        pr.note(who + "device buffers: " + std::to_string(b.reused) + " of " + std::to_string(b.taken) +
                " reused from earlier keys; " + std::to_string(uploader.lanes()) + " upload lanes");
      });
    }
    runner.reset();
    kernel_stats[w] = runtime.kernel_cache_stats();
    st.busy_s = std::chrono::duration<double>(Clock::now() - w0).count();
  };

  if (ordinals.empty()) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    std::vector<std::string> crashed(workers);
    for (std::size_t w = 0; w < workers; ++w)
      threads.emplace_back([&, w] {
        try {
          work(w);
        } catch (const std::exception& e) {
          crashed[w] = e.what();
        } catch (...) {
          crashed[w] = "unknown error";
        }
      });
    for (auto& th : threads) th.join();
    for (std::size_t w = 0; w < workers; ++w)
      if (!crashed[w].empty() && stats[w].fatal.empty()) stats[w].fatal = crashed[w];
  }

  for (auto& r : results)
    for (auto& k : r) {
      if (!k.outcome.candidates.empty()) summary.search += k.outcome.counts();
      if (k.warm) ++summary.warm_keys;
      if (k.prior) ++summary.prior_keys;
      summary.keys.push_back(std::move(k));
    }
  for (const DeviceStats& st : stats)
    if (!st.fatal.empty())
      summary.fatal += (summary.fatal.empty() ? "" : "; ") +
                       (workers > 1 ? "gpu " + std::to_string(st.ordinal) + ": " : std::string()) + st.fatal;
  summary.copy_gbps = stats.front().copy_gbps;
  summary.devices = std::move(stats);
  summary.budget_spent = sh.budget_spent;
  summary.compile = pool.stats();
  for (const rt::KernelCacheStats& k : kernel_stats) {
    summary.kernel_cache.compiled += k.compiled;
    summary.kernel_cache.loaded_from_store += k.loaded_from_store;
    summary.kernel_cache.loaded += k.loaded;
  }
  summary.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return summary;
}

}  // namespace

TuneSummary run_tuning(const std::vector<Target>& targets, cache::Database& db,
                       std::shared_ptr<rt::BinaryStore> store, const TuneOptions& options, Progress* progress) {
  const auto start = Clock::now();
  CUdevice cu = 0;
  rt::current_context(&cu);
  const rt::DeviceInfo dev = rt::device_info(cu);
  auto layered = std::make_shared<LayeredBinaryStore>(std::move(store));
  return run_group({}, dev, targets, db, layered, options, progress, start);
}

std::vector<TuneSummary> run_tuning_on(const std::vector<int>& ordinals, const std::vector<Target>& targets,
                                       cache::Database& db, std::shared_ptr<rt::BinaryStore> store,
                                       const TuneOptions& options, Progress* progress) {
  const auto start = Clock::now();
  if (ordinals.empty()) throw Error("lntune: no devices to tune on");
  const rt::DriverApi& d = rt::driver();
  int count = 0;
  rt::check(d.DeviceGetCount(&count), "cuDeviceGetCount");
  std::vector<rt::DeviceInfo> infos;
  std::vector<cache::GpuId> ids;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    const int o = ordinals[i];
    if (o < 0 || o >= count)
      throw Error("lntune: device " + std::to_string(o) + " does not exist (this machine has " +
                  std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + ")");
    if (std::find(ordinals.begin(), ordinals.begin() + static_cast<std::ptrdiff_t>(i), o) !=
        ordinals.begin() + static_cast<std::ptrdiff_t>(i))
      throw Error("lntune: device " + std::to_string(o) + " is listed twice");
    CUdevice dev = 0;
    rt::check(d.DeviceGet(&dev, o), "cuDeviceGet(" + std::to_string(o) + ")");
    infos.push_back(rt::device_info(dev));
    ids.push_back(rt::gpu_id(infos.back()));
  }
  auto layered = std::make_shared<LayeredBinaryStore>(std::move(store));
  std::vector<TuneSummary> out;
  const auto groups = group_by_model(ids);
  for (const auto& g : groups) {
    std::vector<int> mine;
    for (std::size_t i : g) mine.push_back(ordinals[i]);
    if (groups.size() > 1 && progress) {
      std::string list;
      for (int o : mine) list += (list.empty() ? "" : ",") + std::to_string(o);
      std::ostringstream os;
      os << ids[g.front()];
      progress->note("tuning " + os.str() + " on device" + (mine.size() == 1 ? " " : "s ") + list);
    }
    out.push_back(run_group(mine, infos[g.front()], targets, db, layered, options, progress, start));
  }
  return out;
}

}  // namespace lntune::tune
