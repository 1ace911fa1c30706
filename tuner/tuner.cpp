#include "runtime/selector.hpp"
#include "tuner/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/runtime.hpp"
#include "runtime/launcher.hpp"
#include "runtime/nvrtc.hpp"
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
};

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
    const CompileResult r = env_.pool->submit(key).get();
    if (!r.ok) throw CandidateError(Status::compile_error, r.error);
    const rt::LoadedKernel* k = nullptr;
    try {
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
  std::string verify(const Config& c) override {
    const rt::LoadedKernel& k = kernels_.load(c);
    return guarded("verifying " + k.name,
                   [&] { return w_.verify([&](CUstream s) { w_.launch_forward(k, c, s); }, env_.runner->stream()); });
  }

 private:
  Env env_;
  Workload& w_;
  Kernels kernels_;
};

// bwd_dx candidates, each with the default bwd_dwdb config.
class BwdDxBench : public Bench {
 public:
  BwdDxBench(const Env& env, Workload& w, const Config& dwdb_config)
      : env_(env), w_(w), dx_(env, w.bwd_problem().traits, w.n(), w.vec()),
        dwdb_(env, w.dwdb_traits(), w.n(), 1), dwdb_config_(dwdb_config) {}
  void prepare(const Config& c) override {
    dx_.load(c);
    if (w_.has_dwdb()) {
      try {
        dwdb_.load(dwdb_config_);
      } catch (const CandidateError& e) {
        throw CandidateError(e.status(), std::string("the default bwd_dwdb config failed: ") + e.what());
      }
    }
    guarded("allocating the workspace", [&] { w_.reserve_workspace(c); });
  }
  Measurement time(const Config& c, std::optional<double> best) override {
    const rt::LoadedKernel& k = dx_.load(c);
    const rt::LoadedKernel* r = w_.has_dwdb() ? &dwdb_.load(dwdb_config_) : &k;
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_backward(k, c, *r, dwdb_config_, s); };
    return guarded("timing " + k.name, [&] { return env_.runner->time(launch, best); });
  }
  std::string verify(const Config& c) override {
    const rt::LoadedKernel& k = dx_.load(c);
    const rt::LoadedKernel* r = w_.has_dwdb() ? &dwdb_.load(dwdb_config_) : &k;
    return guarded("verifying " + k.name, [&] {
      return w_.verify([&](CUstream s) { w_.launch_backward(k, c, *r, dwdb_config_, s); }, env_.runner->stream());
    });
  }

 private:
  Env env_;
  Workload& w_;
  Kernels dx_, dwdb_;
  Config dwdb_config_;
};

// bwd_dwdb candidates reducing the partials of one bwd_dx config.
class DwdbBench : public Bench {
 public:
  DwdbBench(const Env& env, Workload& w, const Config& dx_config, const Config& dwdb_default)
      : env_(env), w_(w), dx_(env, w.bwd_problem().traits, w.n(), w.vec()), dwdb_(env, w.dwdb_traits(), w.n(), 1),
        dx_config_(dx_config) {
    // Fill the partials once with a whole backward.
    const rt::LoadedKernel& k = dx_.load(dx_config_);
    const rt::LoadedKernel& r = dwdb_.load(dwdb_default);
    guarded("computing the backward partials", [&] {
      w_.reserve_workspace(dx_config_);
      w_.launch_backward(k, dx_config_, r, dwdb_default, env_.runner->stream());
      rt::check(rt::driver().StreamSynchronize(env_.runner->stream()), "cuStreamSynchronize");
    });
  }
  void prepare(const Config& c) override { dwdb_.load(c); }
  Measurement time(const Config& c, std::optional<double> best) override {
    const rt::LoadedKernel& k = dwdb_.load(c);
    const std::function<void(CUstream)> launch = [&](CUstream s) { w_.launch_dwdb(k, c, dx_config_, s); };
    return guarded("timing " + k.name, [&] { return env_.runner->time(launch, best); });
  }
  std::string verify(const Config& c) override {
    const rt::LoadedKernel& k = dwdb_.load(c);
    return guarded("verifying " + k.name, [&] {
      return w_.verify([&](CUstream s) { w_.launch_dwdb(k, c, dx_config_, s); }, env_.runner->stream(), true);
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
  const gen::SpaceQuery q = rt::space_query(dev, traits.kernel, d, n, m);
  p.default_config = gen::default_config(q);
  p.space = gen::search_space(q);
  return p;
}

void submit_all(CompilePool& pool, const KeyPlan& p, int vec) {
  auto submit = [&](const Config& c) {
    try {
      pool.submit(gen::make_instance(p.key.traits, c, p.key.n, vec));
    } catch (const Error&) {
      // An invalid instance is reported when the candidate is prepared.
    }
  };
  submit(p.default_config);
  for (const Config& c : p.space) submit(c);
}

class Tuning {
 public:
  Tuning(const Env& env, cache::Database& db, const TuneOptions& o, Progress* progress, TuneSummary& summary)
      : env_(env), db_(db), o_(o), progress_(progress), summary_(summary), start_(Clock::now()) {}

  bool out_of_time() const {
    return o_.budget_s > 0 && std::chrono::duration<double>(Clock::now() - start_).count() > o_.budget_s;
  }

  // Searches one key on `bench` and stores its winner.
  KeyResult search_key(const KeyPlan& plan, Bench& bench, const std::function<double(const Config&)>& bytes) {
    KeyResult kr;
    kr.key = plan.key;
    kr.m = plan.m;
    const auto t0 = Clock::now();
    if (progress_) progress_->key_begin(plan.key, plan.space.size() + 1);
    SearchOptions so;
    so.out_of_time = [this] { return out_of_time(); };
    so.on_result = [this, &plan](std::size_t i, const CandidateResult& r) {
      if (progress_) progress_->candidate_done(plan.key, i, r);
    };
    kr.outcome = search(bench, plan.default_config, plan.space, so);
    const Outcome& out = kr.outcome;
    if (out.partial) summary_.budget_spent = true;
    if (const CandidateResult* d = &out.baseline(); d->timing && d->timing->stats.median > 0)
      kr.default_gbps = bytes(d->config) / (d->timing->stats.median * 1e-6) / 1e9;
    if (const CandidateResult* w = out.best()) {
      const auto prov = make_provenance(rt::nvrtc_version(), env_.dev->driver_version, out.partial);
      kr.record = make_record(plan.key, out, bytes(w->config), summary_.copy_gbps, prov);
      kr.winner_gbps = kr.record->gbps;
      try {
        db_.upsert(*kr.record);
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
    kr.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return kr;
  }

  void finish(KeyResult kr) {
    if (progress_) progress_->key_done(kr);
    summary_.keys.push_back(std::move(kr));
  }

  KeyResult cached(const cache::TuneKey& key, std::int64_t m) const {
    KeyResult kr;
    kr.key = key;
    kr.m = m;
    kr.state = KeyResult::State::cached;
    kr.record = db_.find(key);
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

  const Env& env() const { return env_; }
  const TuneOptions& options() const { return o_; }
  cache::Database& db() { return db_; }

 private:
  Env env_;
  cache::Database& db_;
  const TuneOptions& o_;
  Progress* progress_;
  TuneSummary& summary_;
  Clock::time_point start_;
};

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

Session::Session(std::shared_ptr<rt::BinaryStore> store, RunnerOptions runner, unsigned jobs)
    : impl_(std::make_unique<Impl>()) {
  impl_->runtime = std::make_unique<rt::Runtime>();
  impl_->dev = impl_->runtime->current_device(&impl_->ctx);
  impl_->store = std::make_shared<LayeredBinaryStore>(std::move(store));
  impl_->runtime->set_binary_store(impl_->store);
  impl_->pool = std::make_unique<CompilePool>(impl_->dev.arch(), impl_->store, jobs);
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
TuneSummary run_tuning(const std::vector<Target>& targets, cache::Database& db,
                       std::shared_ptr<rt::BinaryStore> store, const TuneOptions& options, Progress* progress) {
  const auto t0 = Clock::now();
  TuneSummary summary;
  rt::Runtime runtime;  // the tuner's own: it never touches the default runtime
  CUcontext ctx = nullptr;
  summary.device = runtime.current_device(&ctx);
  summary.gpu = rt::gpu_id(summary.device);
  const rt::DeviceInfo& dev = summary.device;

  auto layered = std::make_shared<LayeredBinaryStore>(std::move(store));
  runtime.set_binary_store(layered);
  CompilePool pool(dev.arch(), layered, options.jobs);
  summary.compile_threads = pool.threads();
  Runner runner(dev, options.runner);
  Env env{&runtime, ctx, &summary.device, &pool, &runner};
  Tuning tuning(env, db, options, progress, summary);

  // Plans, resume decisions and compilations, all up front.
  struct TargetPlan {
    Target target;
    KeyPlan main;                // fwd or bwd_dx
    bool main_done = false;      // already tuned (resume)
    std::optional<Config> stored_dx;  // the cached bwd_dx winner, when main_done
    bool dwdb = false;           // bwd_dwdb still to tune after bwd_dx
    Config dwdb_default;         // its default config
  };
  // The bwd_dwdb key depends on the bwd_dx config (its partial rows).
  auto dwdb_plan = [&dev](const Target& t, const Config& dx_config) {
    const rt::DwdbProblem r = rt::dwdb_problem(t.traits, t.traits.has_weight, t.traits.has_bias, dx_config, t.m);
    return plan_key(dev, r.traits, t.n, r.rows);
  };
  std::vector<TargetPlan> plans;
  std::size_t keys = 0, candidates = 0;
  for (const Target& t : targets) {
    TargetPlan p;
    p.target = t;
    p.main = plan_key(dev, t.traits, t.n, t.m);
    p.main_done = !options.force && is_tuned(db, p.main.key);
    if (p.main_done) {
      if (auto r = db.find(p.main.key)) p.stored_dx = r->config;
    } else {
      submit_all(pool, p.main, expected_vec(t.traits, t.n));
      candidates += p.main.space.size() + 1;
      ++keys;
    }
    const bool grads = t.traits.has_weight || t.traits.has_bias;
    if (t.traits.kernel == Kernel::bwd_dx && options.tune_dwdb && grads) {
      // Any bwd_dx config will do for the space and the compilations: the
      // bwd_dwdb instances do not depend on M.
      const KeyPlan dp = dwdb_plan(t, p.stored_dx.value_or(p.main.default_config));
      p.dwdb_default = dp.default_config;
      p.dwdb = !p.main_done || !p.stored_dx || options.force || !is_tuned(db, dp.key);
      if (p.dwdb) {
        submit_all(pool, dp, 1);
        candidates += dp.space.size() + 1;
        ++keys;
      }
    }
    plans.push_back(std::move(p));
  }
  if (progress) progress->begin(keys, candidates);

  summary.copy_gbps = runner.copy_gbps();
  if (progress) progress->note("device-to-device copy: " + std::to_string(static_cast<long>(summary.copy_gbps)) + " GB/s");

  for (const TargetPlan& p : plans) {
    const Target& t = p.target;
    std::optional<Config> dx_config = p.stored_dx;
    const std::string spent = "the time budget was spent";
    if (p.main_done) tuning.finish(tuning.cached(p.main.key, t.m));
    if (p.main_done && p.stored_dx && p.dwdb_default.block_size > 0 && !p.dwdb) {
      const KeyPlan dp = dwdb_plan(t, *p.stored_dx);
      tuning.finish(tuning.cached(dp.key, dp.m));
    }
    if (p.main_done && !p.dwdb) continue;
    if (tuning.out_of_time()) {
      summary.budget_spent = true;
      if (!p.main_done) tuning.finish(tuning.skipped(p.main.key, t.m, KeyResult::State::skipped_budget, spent));
      if (p.dwdb) {
        const KeyPlan dp = dwdb_plan(t, dx_config.value_or(p.main.default_config));
        tuning.finish(tuning.skipped(dp.key, dp.m, KeyResult::State::skipped_budget, spent));
      }
      continue;
    }
    try {
      Workload w(t.traits, t.m, t.n, target_seed(options.seed, t));
      if (!p.main_done) {
        KeyResult kr;
        if (t.traits.kernel == Kernel::fwd) {
          FwdBench bench(env, w);
          kr = tuning.search_key(p.main, bench, [&](const Config&) { return w.fwd_bytes(); });
        } else {
          const Config dwdb_default = p.dwdb_default.block_size > 0 ? p.dwdb_default
                                                                     : dwdb_plan(t, p.main.default_config).default_config;
          BwdDxBench bench(env, w, dwdb_default);
          kr = tuning.search_key(p.main, bench, [&](const Config& c) { return w.bwd_bytes(c); });
        }
        if (kr.outcome.best() && kr.state != KeyResult::State::failed) dx_config = kr.outcome.best()->config;
        const bool partial = kr.outcome.partial;
        tuning.finish(std::move(kr));
        if (p.dwdb && (!dx_config || partial)) {
          const KeyPlan dp = dwdb_plan(t, dx_config.value_or(p.main.default_config));
          tuning.finish(tuning.skipped(dp.key, dp.m,
                                       partial ? KeyResult::State::skipped_budget : KeyResult::State::failed,
                                       partial ? spent : "bwd_dx has no winner"));
          continue;
        }
      }
      if (p.dwdb && dx_config && w.has_dwdb()) {
        const KeyPlan dp = dwdb_plan(t, *dx_config);
        if (!options.force && is_tuned(db, dp.key)) {
          tuning.finish(tuning.cached(dp.key, dp.m));
          continue;
        }
        try {
          DwdbBench bench(env, w, *dx_config, dp.default_config);
          const std::int64_t P = dp.m;
          tuning.finish(tuning.search_key(dp, bench, [&](const Config&) { return w.dwdb_bytes(P); }));
        } catch (const CandidateError& e) {
          tuning.finish(tuning.skipped(dp.key, dp.m, KeyResult::State::failed,
                                       std::string("could not run the bwd_dx winner: ") + e.what()));
        }
      }
    } catch (const FatalError& e) {
      summary.fatal = e.what();
      tuning.finish(tuning.skipped(p.main.key, t.m, KeyResult::State::failed, e.what()));
      pool.cancel();
      break;
    } catch (const std::exception& e) {
      // E.g. out of GPU memory for this shape: the next key may still fit.
      tuning.finish(tuning.skipped(p.main.key, t.m, KeyResult::State::failed, e.what()));
      const CUresult r = rt::driver().CtxSynchronize();
      if (r != CUDA_SUCCESS) {
        summary.fatal = "lntune: the CUDA context is unusable (" + rt::error_name(r) + ") after: " + e.what();
        pool.cancel();
        break;
      }
    }
  }
  summary.compile = pool.stats();
  summary.kernel_cache = runtime.kernel_cache_stats();
  summary.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return summary;
}

}  // namespace lntune::tune
