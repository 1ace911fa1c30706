// lntune tune | bench | verify: the commands that run kernels on a GPU.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>

#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/runtime.hpp"
#include "runtime/selector.hpp"
#include "tuner/cli/common.hpp"
#include "tuner/report.hpp"
#include "tuner/tuner.hpp"
#include "tuner/workload.hpp"

namespace lntune::cli {
namespace {

// Options shared by the GPU commands.
struct GpuOptions {
  std::string db;
  int device = 0;
  int min_reps = 20, max_reps = 400;
  double max_seconds = 2.0, rel_ci = 0.01;
  unsigned jobs = 0;

  void add(CLI::App& app) {
    app.add_option("--db", db, "Cache file to use (default: $LNTUNE_CACHE, else ~/.cache/lntune/lntune.db)");
    app.add_option("--device", device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
    app.add_option("--min-reps", min_reps, "Fewest timed repetitions per config")->check(CLI::PositiveNumber);
    app.add_option("--max-reps", max_reps, "Most timed repetitions per config")->check(CLI::PositiveNumber);
    app.add_option("--max-seconds", max_seconds, "Most seconds of repetitions per config")->check(CLI::PositiveNumber);
    app.add_option("--rel-ci", rel_ci, "Stop when the median's 95% CI is within +-this fraction (default 0.01)")
        ->check(CLI::PositiveNumber);
    app.add_option("--jobs", jobs, "NVRTC compile threads (default: CPUs - 2)");
  }
  tune::RunnerOptions runner() const {
    tune::RunnerOptions r;
    r.rule.min_reps = min_reps;
    r.rule.max_reps = std::max(max_reps, min_reps);
    r.rule.max_seconds = max_seconds;
    r.rule.target_rel_ci = rel_ci;
    return r;
  }
};

// Options naming the problems.
struct ProblemOptions {
  std::string n, m = "4096", dtype, kernel = "fwd,bwd", w_dtype;
  bool no_weight = false, no_bias = false;
  // Norm variants (issue 11). variant_grid: without --op or --residual, add
  // RMSNorm with and without a residual for fp16/bf16 (tune's default grid).
  std::string op, residual_dtype;
  bool residual = false, variant_grid = false;

  void add(CLI::App& app, const std::string& default_dtypes, const std::string& n_help) {
    dtype = default_dtypes;
    app.add_option("--n", n, n_help);
    app.add_option("--m", m, "Rows M: LIST or START:STOP:STEP (default 4096)");
    app.add_option("--dtype", dtype, "Row dtypes, comma-separated: fp16, bf16, fp32 (default " + default_dtypes + ")");
    app.add_option("--kernel", kernel, "fwd, bwd or both, comma-separated (default fwd,bwd)");
    app.add_option("--w-dtype", w_dtype, "Weight/bias dtype: fp32 (default: the row dtype)");
    app.add_flag("--no-weight", no_weight, "LayerNorm without weight");
    app.add_flag("--no-bias", no_bias, "LayerNorm without bias");
    app.add_option("--op", op,
                   "Norms, comma-separated: layernorm, rmsnorm (default: layernorm" +
                       std::string(variant_grid ? ", plus rmsnorm with and without --residual for fp16 and bf16)" : ")"));
    app.add_flag("--residual", residual, "With a fused residual add: z = x + residual is written, y = norm(z)");
    app.add_option("--residual-dtype", residual_dtype, "dtype of the residual stream (default: the row dtype)");
  }
  std::vector<tune::Target> targets(const std::vector<std::int64_t>& default_ns) const {
    const auto ns = n.empty() ? default_ns : parse_int_list(n, "--n");
    const auto ms = parse_int_list(m, "--m");
    std::optional<DType> wd;
    if (!w_dtype.empty()) {
      wd = parse_dtype(w_dtype);
      if (!wd) throw UsageError("lntune: --w-dtype: unknown dtype '" + w_dtype + "' (fp32, fp16, bf16)");
    }
    const auto dtypes = parse_dtype_list(dtype, "--dtype");
    if (wd)
      for (DType d : dtypes)
        if (*wd != d && *wd != DType::f32)
          throw UsageError("lntune: --w-dtype: weights must be fp32 or the row dtype (" +
                           std::string(to_string(d)) + ")");
    const auto base = tune::make_targets(ns, ms, dtypes, parse_kernel_list(kernel, "--kernel"), wd, !no_weight, !no_bias);
    std::optional<DType> rd;
    if (!residual_dtype.empty()) {
      rd = parse_dtype(residual_dtype);
      if (!rd) throw UsageError("lntune: --residual-dtype: unknown dtype '" + residual_dtype + "' (fp32, fp16, bf16)");
      if (!residual) throw UsageError("lntune: --residual-dtype needs --residual");
    }
    if (op.empty() && !residual) return variant_grid ? tune::default_variant_grid(base) : base;
    std::vector<tune::Target> out;
    const std::string ops = op.empty() ? "layernorm" : op;
    for (std::size_t pos = 0; pos <= ops.size();) {
      const std::size_t comma = std::min(ops.find(',', pos), ops.size());
      const std::string name = ops.substr(pos, comma - pos);
      pos = comma + 1;
      const auto norm = parse_norm(name);
      if (!norm) throw UsageError("lntune: --op: unknown norm '" + name + "' (layernorm, rmsnorm)");
      const auto v = tune::with_variant(base, *norm, residual, rd);
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  }
};

// ------------------------------------------------------------ tune
int run_tune(const ProblemOptions& po, const GpuOptions& go, double budget, bool force, bool no_dwdb,
             std::uint64_t seed) {
  const auto targets = po.targets(gen::default_n_grid());
  require_gpu();
  use_db(go.db);
  auto stack = cache_stack();
  if (!stack) throw Error("lntune: tune: LNTUNE_CACHE=off: pass --db PATH to say where results go");
  cache::Database* db = stack->writable();
  if (!db)
    throw Error("lntune: tune: no cache file to write: pass --db PATH (or set LNTUNE_CACHE, XDG_CACHE_HOME or HOME)");
  tune::use_device(go.device);

  tune::TuneOptions o;
  o.runner = go.runner();
  o.budget_s = budget;
  o.force = force;
  o.tune_dwdb = !no_dwdb;
  o.jobs = go.jobs;
  o.seed = seed;
  tune::ProgressBar progress(stderr, ::isatty(::fileno(stderr)) != 0);
  std::fprintf(stderr, "cache: %s\n", db->path().c_str());
  const tune::TuneSummary s =
      tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), o, &progress);
  std::cout << "\n";
  tune::print_summary(std::cout, s);
  std::cout << "cache: " << db->path() << "\n";
  if (!s.fatal.empty()) return 1;
  for (const auto& k : s.keys)
    if (k.state == tune::KeyResult::State::failed || k.state == tune::KeyResult::State::no_winner) return 1;
  return 0;
}

// ------------------------------------------------------------ bench

struct Configs {
  Config main, other;  // fwd: config; bwd: dx config and dwdb config
  std::string reason;
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof(b), f, v);
  return b;
}

int run_bench(const ProblemOptions& po, const GpuOptions& go, std::uint64_t seed) {
  const auto targets = po.targets({1024, 4096, 8192});
  require_gpu();
  use_db(go.db);
  tune::use_device(go.device);
  rt::Runtime& launcher = rt::default_runtime();  // the launcher's own selection, from the same search path
  auto stack = launcher.cache_stack();
  tune::Session session(stack ? std::make_shared<rt::CacheBinaryStore>(stack) : nullptr, go.runner(), go.jobs);
  const rt::DeviceInfo& dev = session.device();
  const double copy = session.copy_gbps();
  std::cout << "GPU: " << rt::gpu_id(dev) << "; device-to-device copy " << fmt("%.0f", copy)
            << " GB/s (read + written)\n"
            << "kernel  dtype        N      M  default config        µs    GB/s  tuned config          µs    GB/s  "
               "% copy  speed-up  check  selection\n";
  int bad = 0;
  for (const tune::Target& t : targets) {
    tune::Workload w(t.traits, t.m, t.n, seed);
    const bool bwd = t.traits.kernel == Kernel::bwd_dx;
    Configs def, tuned;
    def.main = rt::default_selection(dev, t.traits, t.n, t.m).config;
    // The launcher's own plan (exact -> nearest -> default): what a call with
    // these buffers would run.
    if (bwd) {
      const auto plan = launcher.backward_plan(w.bwd_problem());
      def.other = rt::default_dwdb_config(dev, w.dwdb(def.main), t.n);
      tuned.main = plan->dx.config;
      tuned.other = w.has_dwdb() ? plan->dwdb.config : def.other;
      tuned.reason = plan->reason;
    } else {
      const auto plan = launcher.forward_plan(w.fwd_problem());
      tuned.main = plan->fwd.config;
      tuned.reason = plan->reason;
    }
    const Kernel k = t.traits.kernel;
    const tune::CandidateResult d = session.run(w, k, def.main, def.other, true, false);
    const tune::CandidateResult r = session.run(w, k, tuned.main, tuned.other, true, true);
    auto us = [](const tune::CandidateResult& c) { return c.timing ? c.timing->stats.median : 0.0; };
    auto gbps = [&](const tune::CandidateResult& c, const Config& cfg) {
      const double bytes = bwd ? w.bwd_bytes(cfg) : w.fwd_bytes();
      return us(c) > 0 ? bytes / (us(c) * 1e-6) / 1e9 : 0.0;
    };
    const double dg = gbps(d, def.main), tg = gbps(r, tuned.main);
    const std::string check = r.status == tune::Status::ok ? "ok" : tune::to_string(r.status);
    if (r.status != tune::Status::ok) ++bad;
    char line[512];
    std::snprintf(line, sizeof(line), "%-6s  %-5s %7lld %6lld  %-20s %7s %7s  %-20s %7s %7s  %6s  %8s  %-5s  %s\n",
                  k == Kernel::fwd ? "fwd" : "bwd", std::string(to_string(t.traits.x_dtype)).c_str(),
                  static_cast<long long>(t.n), static_cast<long long>(t.m), tune::short_config(def.main).c_str(),
                  d.timing ? fmt("%.2f", us(d)).c_str() : "-", d.timing ? fmt("%.0f", dg).c_str() : "-",
                  tune::short_config(tuned.main).c_str(), r.timing ? fmt("%.2f", us(r)).c_str() : "-",
                  r.timing ? fmt("%.0f", tg).c_str() : "-", copy > 0 && tg > 0 ? fmt("%.1f", 100 * tg / copy).c_str() : "-",
                  us(d) > 0 && us(r) > 0 ? fmt("%.2fx", us(d) / us(r)).c_str() : "-", check.c_str(), tuned.reason.c_str());
    std::cout << line;
    if (!r.message.empty()) std::cout << "        " << r.message.substr(0, 400) << "\n";
    if (d.status != tune::Status::slower && !d.message.empty())
      std::cout << "        default: " << d.message.substr(0, 400) << "\n";
  }
  // The zero-compilation check: a process running only cached kernels
  // prints "0 NVRTC compilations".
  const rt::KernelCacheStats ks = launcher.kernel_cache_stats();
  const tune::CompileStats cs = session.compile_stats();
  std::cout << "kernels in this process: " << ks.compiled + cs.compiled << " NVRTC compilations ("
            << cs.compiled << " by the benchmark, " << ks.compiled << " by the launcher), "
            << ks.loaded_from_store << " CUBINs loaded from the cache, " << ks.loaded << " modules loaded\n";
  return bad ? 1 : 0;
}

// ------------------------------------------------------------ verify
int run_verify(const GpuOptions& go, std::uint64_t seed) {
  require_gpu();
  use_db(go.db);
  tune::use_device(go.device);
  auto stack = cache_stack();
  if (!stack) throw Error("lntune: verify: LNTUNE_CACHE=off: pass --db PATH");
  tune::Session session(std::make_shared<rt::CacheBinaryStore>(stack), go.runner(), go.jobs);
  const rt::DeviceInfo& dev = session.device();
  const cache::GpuId gpu = rt::gpu_id(dev);
  // The records a lookup would find: first layer wins.
  std::vector<std::pair<cache::TuneRecord, std::string>> records;
  for (const cache::Database* layer : stack->layers())
    for (const cache::TuneRecord& r : layer->records(gpu)) {
      bool seen = false;
      for (const auto& p : records) seen = seen || p.first.key == r.key;
      if (!seen) records.emplace_back(r, layer->path());
    }
  std::cout << "GPU: " << gpu << "; " << records.size() << " cached winner" << (records.size() == 1 ? "" : "s")
            << " to check against the CPU reference\n";
  int bad = 0;
  for (const auto& [r, file] : records) {
    const Traits t = r.key.traits.canonical();
    const std::int64_t m = tune::representative_m(r.key.m_bucket, dev.sm_count);
    tune::CandidateResult c;
    try {
      if (t.kernel == Kernel::fwd) {
        tune::Workload w(t, m, r.key.n, seed);
        c = session.run(w, Kernel::fwd, r.config, {}, false, true);
      } else {
        Traits bt = t;
        bt.kernel = Kernel::bwd_dx;
        tune::Workload w(bt, m, r.key.n, seed);
        if (t.kernel == Kernel::bwd_dx) {
          const Config rc = rt::default_dwdb_config(dev, w.dwdb(r.config), r.key.n);
          c = session.run(w, Kernel::bwd_dx, r.config, rc, false, true);
        } else {
          const Config dc = rt::default_selection(dev, bt, r.key.n, m).config;
          c = session.run(w, Kernel::bwd_dwdb, r.config, dc, false, true);
        }
      }
    } catch (const tune::FatalError&) {
      throw;
    } catch (const std::exception& e) {
      c.status = tune::Status::launch_error;
      c.message = e.what();
    }
    const bool ok = c.status == tune::Status::ok;
    if (!ok) ++bad;
    std::cout << (ok ? "ok     " : "FAILED ") << tune::key_label(r.key) << " (M=" << m << ") "
              << tune::short_config(r.config) << "  [" << file << "]";
    if (!ok) std::cout << "\n       " << tune::to_string(c.status) << ": " << c.message.substr(0, 600);
    std::cout << "\n";
  }
  std::cout << (records.size() - static_cast<std::size_t>(bad)) << " of " << records.size() << " correct\n";
  return bad ? 1 : 0;
}

}  // namespace

void add_tune_commands(CLI::App& app, std::vector<Command>& out) {
  // tune
  {
    auto po = std::make_shared<ProblemOptions>();
    auto go = std::make_shared<GpuOptions>();
    auto budget = std::make_shared<double>(0);
    auto flags = std::make_shared<std::pair<bool, bool>>(false, false);  // force, no-dwdb
    auto seed = std::make_shared<std::uint64_t>(tune::TuneOptions{}.seed);
    CLI::App* sub = app.add_subcommand("tune", "Tune kernels on this GPU into the cache (resumable)");
    po->variant_grid = true;
    po->add(*sub, "fp16,bf16,fp32", "Row lengths N: LIST or START:STOP:STEP (default: the built-in grid of common hidden sizes)");
    go->add(*sub);
    sub->add_option("--budget", *budget, "Time budget in seconds for the whole run (default: none)")
        ->check(CLI::NonNegativeNumber);
    sub->add_flag("--force", flags->first, "Re-tune keys already in the cache");
    sub->add_flag("--no-dwdb", flags->second, "Do not tune the backward's dW/dB reduction kernel");
    sub->add_option("--seed", *seed, "Seed of the random inputs");
    out.push_back({sub, [=] { return run_tune(*po, *go, *budget, flags->first, flags->second, *seed); }});
  }
  // bench
  {
    auto po = std::make_shared<ProblemOptions>();
    auto go = std::make_shared<GpuOptions>();
    auto seed = std::make_shared<std::uint64_t>(1);
    CLI::App* sub = app.add_subcommand("bench", "Time the tuned config against the default heuristic and the copy bandwidth");
    po->add(*sub, "bf16", "Row lengths N: LIST or START:STOP:STEP (default 1024,4096,8192)");
    go->add(*sub);
    sub->add_option("--seed", *seed, "Seed of the random inputs");
    out.push_back({sub, [=] { return run_bench(*po, *go, *seed); }});
  }
  // verify
  {
    auto go = std::make_shared<GpuOptions>();
    auto seed = std::make_shared<std::uint64_t>(2);
    CLI::App* sub = app.add_subcommand("verify", "Re-check this GPU's cached winners against the CPU reference");
    sub->add_option("--db", go->db, "Cache file to check (default: the whole search path)");
    sub->add_option("--device", go->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
    sub->add_option("--jobs", go->jobs, "NVRTC compile threads (default: CPUs - 2)");
    sub->add_option("--seed", *seed, "Seed of the random inputs");
    out.push_back({sub, [=] { return run_verify(*go, *seed); }});
  }
}

}  // namespace lntune::cli
