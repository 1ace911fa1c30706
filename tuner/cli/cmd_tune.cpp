// lntune tune | bench | verify: the commands that run kernels on a GPU.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/runtime.hpp"
#include "runtime/selector.hpp"
#include "tuner/cli/common.hpp"
#include "tuner/cli/json.hpp"
#include "tuner/cli/tune_json.hpp"
#include "tuner/compile_process.hpp"
#include "tuner/grid.hpp"
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
  bool in_process_compile = false;

  void add(CLI::App& app) {
    app.add_option("--db", db, "Cache file to use (default: $LNTUNE_CACHE, else ~/.cache/lntune/lntune.db)");
    app.add_option("--device", device, "CUDA device ordinal")->check(int_range(0, 1023));
    app.add_option("--min-reps", min_reps, "Fewest timed repetitions per config")->check(int_range(1, 1000000));
    app.add_option("--max-reps", max_reps, "Most timed repetitions per config")->check(int_range(1, 1000000));
    app.add_option("--max-seconds", max_seconds, "Most seconds of repetitions per config")->check(finite_number(false));
    app.add_option("--rel-ci", rel_ci, "Stop when the median's 95% CI is within +-this fraction (default 0.01)")
        ->check(finite_number(false));
    app.add_option("--jobs", jobs, "NVRTC compile threads (default: CPUs - 2)")->check(int_range(0, 1024));
    app.add_flag("--in-process-compile", in_process_compile,
                 "Run NVRTC in this process's threads, not in one worker process per compile thread");
  }
  // The worker executable for the compile pool: this very binary (so the
  // embedded headers and NVRTC are the same), or none.
  std::string compile_worker() const { return in_process_compile ? std::string() : tune::self_executable(); }
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
  std::string n, m, dtype, kernel = "fwd,bwd", w_dtype;  // m empty: gen::kTrainingM
  bool no_weight = false, no_bias = false;
  // Norm variants (issue 11). variant_grid: without any variant option, add
  // RMSNorm with and without a residual for fp16/bf16 (tune's default grid).
  VariantOptions variant;
  bool variant_grid = false;
  // bandwidth_grid: without --n and --m, add the bandwidth-regime M bucket
  // (tune's default grid, tuner/grid.hpp).
  bool bandwidth_grid = false;

  void add(CLI::App& app, const std::string& default_dtypes, const std::string& n_help) {
    dtype = default_dtypes;
    app.add_option("--n", n, n_help);
    app.add_option("--m", m,
                   bandwidth_grid ? "Rows M: LIST or START:STOP:STEP (default: 4096, and x of 512 MiB over a sparser N grid)"
                                  : "Rows M: LIST or START:STOP:STEP (default 4096)");
    app.add_option("--dtype", dtype, "Row dtypes, comma-separated: fp16, bf16, fp32 (default " + default_dtypes + ")");
    app.add_option("--kernel", kernel, "fwd, bwd or both, comma-separated (default fwd,bwd)");
    app.add_option("--w-dtype", w_dtype, "Weight/bias dtype: fp32 (default: the row dtype)");
    app.add_flag("--no-weight", no_weight, "LayerNorm without weight");
    app.add_flag("--no-bias", no_bias, "LayerNorm without bias");
    variant.add(app, true,
                variant_grid ? "layernorm; with no variant option, also rmsnorm with and without --residual for fp16 "
                               "and bf16"
                             : "layernorm");
  }
  std::vector<tune::Target> targets(const std::vector<std::int64_t>& default_ns) const {
    const auto ns = n.empty() ? default_ns : parse_int_list(n, "--n", kMaxN);
    const auto ms = m.empty() ? std::vector<std::int64_t>{gen::kTrainingM} : parse_int_list(m, "--m", kMaxM);
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
    const auto kernels = parse_kernel_list(kernel, "--kernel");
    variant.check(!no_weight);
    check_problem_count(ns.size() * variant.norms().size(), ms.size(), dtypes.size(), kernels.size());
    check_workload_size(ns, ms);
    const auto base = tune::make_targets(ns, ms, dtypes, kernels, wd, !no_weight, !no_bias);
    // The default grid's second M bucket, tuned last (tuner/grid.hpp).
    std::vector<tune::Target> bandwidth;
    if (bandwidth_grid && n.empty() && m.empty())
      bandwidth = tune::bandwidth_targets(dtypes, kernels, wd, !no_weight, !no_bias);
    if (!variant.given()) {
      // The default grid: the default variants (RMSNorm for fp16/bf16) in
      // both buckets (tune::default_grid).
      if (variant_grid && !bandwidth.empty()) return tune::default_grid(dtypes, kernels, wd, !no_weight, !no_bias);
      auto out = variant_grid ? tune::default_variant_grid(base) : base;
      out.insert(out.end(), bandwidth.begin(), bandwidth.end());
      return out;
    }
    std::vector<tune::Target> out;
    auto add = [&](const std::vector<tune::Target>& part) {
      for (Norm norm : variant.norms()) {
        // with_variant: the norm and residual (RMSNorm without bias); then the options.
        auto v = tune::with_variant(part, norm, variant.residual, variant.residual_type());
        for (tune::Target& t : v) t.traits = variant.apply_options(t.traits);
        out.insert(out.end(), v.begin(), v.end());
      }
    };
    add(base);
    add(bandwidth);
    return out;
  }
};

// ------------------------------------------------------------ tune
struct TuneFlags {
  double budget = 0;
  bool force = false, no_dwdb = false, no_priors = false, full = false, json = false, dry_run = false;
  std::uint64_t seed = tune::TuneOptions{}.seed;
  std::string devices;  // --devices: "all" or a list; empty: --device
  std::string trace;    // --trace FILE
  int screen_reps = tune::TuneOptions{}.screen_reps;
  double screen_margin = tune::TuneOptions{}.screen_margin;
  int prepare_ahead = 0;
  std::string reference = "gpu";  // --reference
};

// `tune --dry-run`: the problems a tune would cover, one per line (or JSON),
// without a GPU.
int print_targets(const std::vector<tune::Target>& targets, bool json) {
  if (json) {
    JsonWriter j(std::cout);
    j.begin_object().field("lntune_version", version()).key("targets").begin_array();
    for (const tune::Target& t : targets) {
      j.begin_object();
      write_traits_fields(j, t.traits);
      j.field("n", static_cast<long long>(t.n)).field("m", static_cast<long long>(t.m)).end_object();
    }
    j.end_array().field("count", targets.size()).end_object().finish();
    return kExitOk;
  }
  for (const tune::Target& t : targets)
    std::cout << to_string(t.traits.kernel) << " " << tune::dtype_label(t.traits) << " N=" << t.n << " M=" << t.m
              << "\n";
  std::cout << targets.size() << " problem" << (targets.size() == 1 ? "" : "s") << "\n";
  return kExitOk;
}

int run_tune(const ProblemOptions& po, const GpuOptions& go, const TuneFlags& f) {
  auto targets = po.targets(gen::default_n_grid());
  if (f.dry_run) return print_targets(targets, f.json);
  require_gpu();
  use_db(go.db);
  auto stack = cache_stack();
  if (!stack) throw Error("lntune: tune: LNTUNE_CACHE=off: pass --db PATH to say where results go");
  cache::Database* db = stack->writable();
  if (!db)
    throw Error("lntune: tune: no cache file to write: pass --db PATH (or set LNTUNE_CACHE, XDG_CACHE_HOME or HOME)");
  std::vector<int> devices;
  if (!f.devices.empty()) {
    int count = 0;
    rt::check(rt::driver().DeviceGetCount(&count), "cuDeviceGetCount");
    devices = tune::parse_devices(f.devices, count);
  } else {
    tune::use_device(go.device);
  }
  // Targets that share a tune key (M bucket) on this GPU are tuned once
  // (with --devices: buckets of the first GPU's SM count).
  {
    CUdevice first = 0;
    rt::check(rt::driver().DeviceGet(&first, devices.empty() ? go.device : devices.front()), "cuDeviceGet");
    std::vector<tune::Target> dropped;
    targets = tune::unique_keys(targets, rt::device_info(first).sm_count, &dropped);
    if (!dropped.empty())
      std::fprintf(stderr, "%zu target%s share%s an M bucket with an earlier one on this GPU: tuned once\n",
                   dropped.size(), dropped.size() == 1 ? "" : "s", dropped.size() == 1 ? "s" : "");
  }

  tune::TuneOptions o;
  o.runner = go.runner();
  o.budget_s = f.budget;
  o.force = f.force;
  o.full = f.full;
  o.tune_dwdb = !f.no_dwdb;
  o.priors = !f.no_priors;
  o.jobs = go.jobs;
  o.compile_worker = go.compile_worker();
  o.seed = f.seed;
  o.screen_reps = f.screen_reps;
  o.screen_margin = f.screen_margin;
  o.prepare_ahead = f.prepare_ahead;
  o.reference = tune::parse_reference_mode(f.reference);
  tune::ProgressBar bar(stderr, ::isatty(::fileno(stderr)) != 0);
  bar.set_devices(devices);
  std::ofstream trace_file;
  std::unique_ptr<tune::TraceWriter> trace;
  tune::Progress* progress = &bar;
  if (!f.trace.empty()) {
    trace_file.open(f.trace, std::ios::out | std::ios::trunc);
    if (!trace_file) throw Error("lntune: tune: --trace: cannot write " + f.trace);
    trace = std::make_unique<tune::TraceWriter>(trace_file, &bar);
    progress = trace.get();
  }
  std::fprintf(stderr, "cache: %s\n", db->path().c_str());
  auto store = std::make_shared<rt::CacheBinaryStore>(stack);
  std::vector<tune::TuneSummary> summaries;
  if (devices.empty())
    summaries.push_back(tune::run_tuning(targets, *db, store, o, progress));
  else
    summaries = tune::run_tuning_on(devices, targets, *db, store, o, progress);
  if (f.json) {
    write_tune_json(std::cout, summaries, !devices.empty(), db->path());
  } else {
    std::cout << "\n";
    for (const tune::TuneSummary& s : summaries) tune::print_summary(std::cout, s);
    std::cout << "cache: " << db->path() << "\n";
  }
  // Over all summaries: a fatal stop first, then keys without a winner.
  int rc = kExitOk;
  for (const tune::TuneSummary& s : summaries) {
    if (!s.fatal.empty()) return kExitFailure;  // stopped early
    for (const auto& k : s.keys)
      if (k.state == tune::KeyResult::State::failed || k.state == tune::KeyResult::State::no_winner)
        rc = kExitSomeFailed;  // finished, but some keys have no winner
  }
  return rc;
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

int run_bench(const ProblemOptions& po, const GpuOptions& go, std::uint64_t seed, bool json) {
  const auto targets = po.targets({1024, 4096, 8192});
  require_gpu();
  use_db(go.db);
  tune::use_device(go.device);
  rt::Runtime& launcher = rt::default_runtime();  // the launcher's own selection, from the same search path
  auto stack = launcher.cache_stack();
  tune::Session session(stack ? std::make_shared<rt::CacheBinaryStore>(stack) : nullptr, go.runner(), go.jobs,
                        go.compile_worker());
  const rt::DeviceInfo& dev = session.device();
  const double copy = session.copy_gbps();
  // --json: built in memory, printed whole at the end (an error on the way
  // leaves stdout empty, never half a document).
  std::ostringstream jbuf;
  JsonWriter j(jbuf);
  if (json) {
    j.begin_object().field("lntune_version", version()).key("gpu");
    write_gpu(j, rt::gpu_id(dev));
    j.field("copy_gbps", copy).key("rows").begin_array();
  } else {
    std::cout << "GPU: " << rt::gpu_id(dev) << "; device-to-device copy " << fmt("%.0f", copy)
              << " GB/s (read + written)\n"
              << "kernel  dtype               N      M  default config        µs    GB/s  tuned config          µs    "
                 "GB/s  % copy  speed-up  check  selection\n";
  }
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
    if (json) {
      auto run = [&](const char* name, const tune::CandidateResult& c, const Configs& cs, double g) {
        j.key(name).begin_object().key("config");
        write_config(j, cs.main);
        if (bwd) {
          j.key("dwdb_config");
          write_config(j, cs.other);
        }
        j.field("median_us", c.timing ? std::optional<double>(us(c)) : std::nullopt)
            .field("gbps", c.timing ? std::optional<double>(g) : std::nullopt)
            .field("status", tune::to_string(c.status))
            .field("message", c.message)
            .end_object();
      };
      j.begin_object();
      write_traits_fields(j, t.traits, bwd ? "bwd" : "fwd");  // "bwd": dx and dW/dB together
      j.field("n", static_cast<long long>(t.n))
          .field("m", static_cast<long long>(t.m));
      run("default", d, def, dg);
      run("tuned", r, tuned, tg);
      j.field("selection", tuned.reason)
          .field("pct_of_copy", copy > 0 && tg > 0 ? std::optional<double>(100 * tg / copy) : std::nullopt)
          .field("speedup", us(d) > 0 && us(r) > 0 ? std::optional<double>(us(d) / us(r)) : std::nullopt)
          .field("ok", r.status == tune::Status::ok)
          .end_object();
      continue;
    }
    char line[512];
    std::snprintf(line, sizeof(line), "%-6s  %-12s %7lld %6lld  %-20s %7s %7s  %-20s %7s %7s  %6s  %8s  %-5s  %s\n",
                  k == Kernel::fwd ? "fwd" : "bwd", tune::dtype_label(t.traits).c_str(),
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
  if (json) {
    j.end_array()
        .key("compilations")
        .begin_object()
        .field("nvrtc_benchmark", cs.compiled)
        .field("nvrtc_launcher", ks.compiled)
        .field("cubins_from_cache", ks.loaded_from_store)
        .field("modules_loaded", ks.loaded)
        .end_object()
        .field("failed_checks", bad)
        .end_object()
        .finish();
    std::cout << jbuf.str();
    return bad ? kExitSomeFailed : kExitOk;
  }
  std::cout << "kernels in this process: " << ks.compiled + cs.compiled << " NVRTC compilations ("
            << cs.compiled << " by the benchmark, " << ks.compiled << " by the launcher), "
            << ks.loaded_from_store << " CUBINs loaded from the cache, " << ks.loaded << " modules loaded\n";
  return bad ? kExitSomeFailed : kExitOk;
}

// ------------------------------------------------------------ verify
int run_verify(const GpuOptions& go, std::uint64_t seed, bool json) {
  require_gpu();
  use_db(go.db);
  tune::use_device(go.device);
  auto stack = cache_stack();
  if (!stack) throw Error("lntune: verify: LNTUNE_CACHE=off: pass --db PATH");
  tune::Session session(std::make_shared<rt::CacheBinaryStore>(stack), go.runner(), go.jobs,
                        go.compile_worker());
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
  std::ostringstream jbuf;  // --json: printed whole at the end
  JsonWriter j(jbuf);
  if (json) {
    j.begin_object().field("lntune_version", version()).key("gpu");
    write_gpu(j, gpu);
    j.key("records").begin_array();
  } else {
    std::cout << "GPU: " << gpu << "; " << records.size() << " cached winner" << (records.size() == 1 ? "" : "s")
              << " to check against the CPU reference\n";
  }
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
    if (json) {
      j.begin_object();
      write_key_fields(j, r.key);
      j.field("m", static_cast<long long>(m)).key("config");
      write_config(j, r.config);
      j.field("file", file).field("ok", ok).field("status", tune::to_string(c.status)).field("message", c.message);
      j.end_object();
      continue;
    }
    std::cout << (ok ? "ok     " : "FAILED ") << tune::key_label(r.key) << " (M=" << m << ") "
              << tune::short_config(r.config) << "  [" << file << "]";
    if (!ok) std::cout << "\n       " << tune::to_string(c.status) << ": " << c.message.substr(0, 600);
    std::cout << "\n";
  }
  if (json) {
    j.end_array()
        .field("correct", records.size() - static_cast<std::size_t>(bad))
        .field("total", records.size())
        .end_object()
        .finish();
    std::cout << jbuf.str();
  } else {
    std::cout << (records.size() - static_cast<std::size_t>(bad)) << " of " << records.size() << " correct\n";
  }
  return bad ? kExitSomeFailed : kExitOk;
}

}  // namespace

void add_tune_commands(CLI::App& app, std::vector<Command>& out) {
  // tune
  {
    auto po = std::make_shared<ProblemOptions>();
    auto go = std::make_shared<GpuOptions>();
    auto f = std::make_shared<TuneFlags>();
    CLI::App* sub = app.add_subcommand("tune", "Tune kernels on this GPU into the cache (resumable)");
    po->variant_grid = true;
    po->bandwidth_grid = true;
    po->add(*sub, "fp16,bf16,fp32",
            "Row lengths N: LIST or START:STOP:STEP (default: the built-in grid of common hidden sizes at M = 4096, "
            "and 256..262144 at x of 512 MiB)");
    go->add(*sub);
    sub->add_option("--budget", f->budget, "Time budget in seconds for the whole run (default: none)")
        ->check(finite_number(true));
    sub->add_flag("--force", f->force,
                  "Re-tune keys already in the cache (warm: the previous winner and its rivals, unless --full)");
    sub->add_flag("--full", f->full, "Exhaustive search: every candidate timed to convergence, no warm re-tune");
    sub->add_flag("--no-dwdb", f->no_dwdb, "Do not tune the backward's dW/dB reduction kernel");
    sub->add_flag("--no-priors", f->no_priors,
                  "Search every key's whole space, also where a related key's winner (RMSNorm from LayerNorm, fused "
                  "from unfused, fp16 from bf16, same N and M) would narrow it");
    sub->add_option("--seed", f->seed, "Seed of the random inputs");
    sub->add_option("--devices", f->devices,
                    "Tune on several GPUs: 'all' or ordinals such as 0,1 (one worker per GPU, keys split between them)")
        ->excludes(sub->get_option("--device"));
    sub->add_option("--trace", f->trace, "Write every candidate's result as JSON lines to this file");
    sub->add_option("--screen-reps", f->screen_reps,
                    "Repetitions of the screening stage (default 5; 0: no screening, every candidate timed carefully)")
        ->check(int_range(0, 1000000));
    sub->add_option("--screen-margin", f->screen_margin,
                    "Time carefully the candidates screened within this fraction of the best (default 0.10)")
        ->check(finite_number(true));
    sub->add_option("--reference", f->reference,
                    "Where each key's inputs are drawn and its float64 reference computed: gpu (default: on the GPU "
                    "before the key's search, about a millisecond, the CPU checking sampled rows of it) or cpu (on "
                    "the host, ahead of the GPU, every element; the earlier way)")
        ->check(CLI::IsMember({"gpu", "cpu"}));
    sub->add_option("--prepare-ahead", f->prepare_ahead,
                    "With --reference cpu: workloads (inputs, CPU reference, device buffers) built ahead of the GPU, "
                    "per GPU (default 0: 3, or 8 when most keys are warm re-tunes; fewer need less host and GPU memory)")
        ->check(int_range(0, 64));
    sub->add_flag("--json", f->json,
                  "Print the summary as JSON (progress still goes to stderr; with --devices: one summary per GPU model)");
    sub->add_flag("--dry-run", f->dry_run,
                  "List the problems (kernel, dtypes, variant, N, M) that would be tuned, and exit (no GPU needed)");
    out.push_back({sub, [=] { return run_tune(*po, *go, *f); }});
  }
  // bench
  {
    auto po = std::make_shared<ProblemOptions>();
    auto go = std::make_shared<GpuOptions>();
    auto seed = std::make_shared<std::uint64_t>(1);
    auto json = std::make_shared<bool>(false);
    CLI::App* sub = app.add_subcommand("bench", "Time the tuned config against the default heuristic and the copy bandwidth");
    po->add(*sub, "bf16", "Row lengths N: LIST or START:STOP:STEP (default 1024,4096,8192)");
    go->add(*sub);
    sub->add_option("--seed", *seed, "Seed of the random inputs");
    sub->add_flag("--json", *json, "Print the results as JSON");
    out.push_back({sub, [=] { return run_bench(*po, *go, *seed, *json); }});
  }
  // verify
  {
    auto go = std::make_shared<GpuOptions>();
    auto seed = std::make_shared<std::uint64_t>(2);
    auto json = std::make_shared<bool>(false);
    CLI::App* sub = app.add_subcommand("verify", "Re-check this GPU's cached winners against the CPU reference");
    sub->add_option("--db", go->db, "Cache file to check (default: the whole search path)");
    sub->add_option("--device", go->device, "CUDA device ordinal")->check(int_range(0, 1023));
    sub->add_option("--jobs", go->jobs, "NVRTC compile threads (default: CPUs - 2)")->check(int_range(0, 1024));
    sub->add_option("--seed", *seed, "Seed of the random inputs");
    sub->add_flag("--json", *json, "Print the results as JSON");
    out.push_back({sub, [=] { return run_verify(*go, *seed, *json); }});
  }
}

}  // namespace lntune::cli
