// lntune::tune — tuning a list of problems on the current GPU into a cache.
//
// For each target (fwd, or bwd = bwd_dx followed by its bwd_dwdb):
//   * its key (GPU, canonical traits, N, M bucket) is skipped when the
//     writable cache already holds a complete record for it made with the
//     current templates (resume; see retune_mode), unless `force`; a record
//     from other templates is re-tuned warm (below);
//   * every candidate of gen::search_space (or of warm_space) and the
//     default config is
//     compiled on the CompilePool, submitted for all targets up front so that
//     compilation overlaps the GPU work; CUBINs already in the cache are
//     taken from it;
//   * a Workload with fresh random inputs is built (on the GPU, with its
//     float64 reference computed there and checked by the CPU on sampled
//     rows; or on the host, see ReferenceMode), and tune::search runs over a
//     GPU Bench: the Runner times, the Workload verifies against the
//     reference;
//   * bwd_dx candidates are timed as the whole backward (bwd_dx + the default
//     bwd_dwdb config for their own partial rows); then bwd_dwdb is searched
//     for the bwd_dx finalists (dx_finalists) and the pair with the least
//     sum of times wins (pick_joint, issue 10); bwd_dwdb is stored as its own
//     key with M = the partial rows of the chosen bwd_dx config (what the
//     launcher looks up);
//   * the winner is upserted at once (so an interrupted run keeps it) with
//     its timing, GB/s, the copy bandwidth measured at the start of this run,
//     the default config's time, and provenance. A key cut short by the
//     budget is stored with origin cache::Origin::partial ("tuned-partial") and
//     tuned again on resume.
// A candidate's failure is recorded in its result; a key's failure (e.g. out
// of memory) in the key's; only an unusable CUDA context stops the run
// (TuneSummary::fatal).
//
// Search (see tuner/search.hpp): staged by default (screening, roofline
// bound from the bytes a config moves and the copy bandwidth measured at the
// start of the run, reuse of failures and plainly dominated configs from the
// previous N of the same kernel, dtype and M); TuneOptions::full gives the
// exhaustive search.
//
// Warm re-tune (retune_mode, plan_retune): a key whose record was measured
// with other kernel templates (or any key, with `force`) but the same GPU
// (the key), driver and NVRTC is re-tuned over the previous winner and its
// close rivals (warm_space; the previous winner even where the space does
// not list it, e.g. the default config) instead of the whole space; `full`
// searches the whole space. A bwd_dwdb key is re-tuned whenever its bwd_dx
// is, warm around its own record or the one of the previous bwd_dx winner.
//
// Related keys (prior_traits): a key with no record whose kernel is a
// variant of a more common one (a fused residual, RMSNorm, fp16 rows) is
// searched like a warm re-tune, around the winner of that related key at the
// same N and M, once it is stored (in this run, or already in the cache);
// `full` or `priors = false` searches the whole space. Their compilations
// are submitted when the related winner is known, ahead of the queue.
// order_targets puts each related key before the keys derived from it, on
// the same worker.
//
// Several GPUs (run_tuning_on): one worker thread per GPU, each with its own
// context, runner and workload, over a deterministic share of the targets
// (partition_keys); one compile pool for all; every winner goes into the
// same Database through its own transaction. A record does not say which GPU
// measured it. GPUs of different models are tuned one model after another,
// each into its own records (the GPU is part of the key). State: a worker
// owns its rt::Runtime (kernel cache, device table; the run's shared binary
// store set on it with set_binary_store), runner, workloads and neighbour
// history; the compile pool and the binary store behind it are shared. The
// process's default runtime (rt::default_runtime) is never touched.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "runtime/driver.hpp"
#include "runtime/kernel_cache.hpp"
#include "tuner/compile_pool.hpp"
#include "tuner/runner.hpp"
#include "tuner/search.hpp"

namespace lntune::tune {

// One problem: traits.kernel is fwd or bwd_dx (the latter also tunes the
// bwd_dwdb that follows it).
struct Target {
  Traits traits;
  std::int64_t n = 0, m = 0;
};

// The cross product, in the order kernels, dtypes, ms, ns. w_dtype: the
// weights' dtype (none: each x dtype's own). Throws lntune::Error for empty
// lists, N < 1, M < 1, or kernel bwd_dwdb (tuned with its bwd_dx).
std::vector<Target> make_targets(const std::vector<std::int64_t>& ns, const std::vector<std::int64_t>& ms,
                                 const std::vector<DType>& dtypes, const std::vector<Kernel>& kernels,
                                 std::optional<DType> w_dtype = {}, bool weight = true, bool bias = true);

// The same targets as `norm`, with a fused residual add (in residual_dtype,
// default each target's x dtype) when `residual`. RMSNorm targets take no
// bias (its usual form). Throws lntune::Error for a residual_dtype without
// `residual`.
std::vector<Target> with_variant(std::vector<Target> targets, Norm norm, bool residual,
                                 std::optional<DType> residual_dtype = {});

// `lntune tune`'s default grid: the LayerNorm targets given, then RMSNorm
// without and with a residual (in the row dtype) for those of fp16 and bf16.
std::vector<Target> default_variant_grid(const std::vector<Target>& layernorm_targets);

// A complete record exists for the key (resume skips it): present, not cut
// short by a budget, and not stale (rt::is_stale: the launcher's rule too).
bool is_tuned(const cache::Database& db, const cache::TuneKey& key);

// The provenance of results measured now.
cache::Provenance make_provenance(int nvrtc_version, int driver_version, bool partial);

// The record stored for a key's winner (pure). bytes: moved by one call of
// the winner (see tuner/workload.hpp).
cache::TuneRecord make_record(const cache::TuneKey& key, const Outcome& outcome, double bytes, double copy_gbps,
                              const cache::Provenance& prov);

// One bwd_dx finalist of the joint bwd_dx + bwd_dwdb choice (joint_dwdb,
// pick_joint): its times, the bwd_dwdb search's winner for its partial rows,
// and whether it won.
struct JointTiming {
  std::size_t dx = 0;                      // the finalist's index in the bwd_dx outcome
  double backward_us = 0;                  // bwd_dx + its default bwd_dwdb, timed together
  std::optional<double> dwdb_default_us;   // that default bwd_dwdb alone (the bwd_dwdb search's baseline)
  std::optional<double> dwdb_best_us;      // the bwd_dwdb search's winner (none: no winner)
  Config config;                           // the finalist's bwd_dx config
  std::int64_t partial_rows = 0;           // its partial rows (the bwd_dwdb problem's M)
  std::optional<Config> dwdb;              // the bwd_dwdb search's winner's config
  bool chosen = false;
  // The launcher finishes dW/dB inside this finalist's dx kernel
  // (rt::finish_path): then no bwd_dwdb runs after it, and the bwd_dwdb
  // record of its partial rows serves only where the cooperative launch is
  // refused.
  bool finishes_in_kernel = false;
};

struct KeyResult {
  enum class State {
    tuned,           // searched, winner stored
    partial,         // searched until the budget ran out, best so far stored
    cached,          // already in the cache (resume): not searched
    skipped_budget,  // not started: the budget was spent
    no_winner,       // searched, no candidate verified: nothing stored
    failed,          // the key could not be tuned (message says why)
  };
  cache::TuneKey key;
  std::int64_t m = 0;  // rows of the timed problem (bwd_dwdb: partial rows)
  State state = State::failed;
  int device = -1;     // ordinal of the GPU that measured it (-1: not measured)
  bool warm = false;   // searched over the previous winner and its rivals only
  bool prior = false;  // searched over a related key's winner and its rivals (prior_traits)
  std::string message;
  Outcome outcome;                         // empty unless searched
  std::optional<cache::TuneRecord> record;  // stored (or found, for cached)
  double winner_gbps = 0, default_gbps = 0;
  double seconds = 0;        // the search (and storing its winner)
  // fwd/bwd_dx: waiting for its workload: built on the GPU before the
  // search (inputs, the float64 reference, the downloads for the CPU's
  // check), or (ReferenceMode::cpu) inputs, the backward's statistics and
  // uploads built ahead on another thread (see prepare_ahead).
  double setup_seconds = 0;
  // Where the key's seconds went, on the host (fwd/bwd_dx: with its bwd_dwdb
  // searches): waiting for compilations, loading modules, verifying (the run
  // on the GPU, the wait for the CPU reference, the downloads and compares).
  struct Phases {
    double compile_wait_s = 0, load_s = 0, verify_s = 0;
    double reference_wait_s = 0, compare_s = 0;  // of verify_s: waiting for the CPU reference (or its check of the
                                                 // GPU's); the comparisons
    // The runner's (Runner::Times, over the target): warm-ups, of them the
    // re-warms after an idle GPU (and how many), the timed repetitions.
    double warmup_s = 0, rewarm_s = 0, reps_s = 0;
    long rewarms = 0;
  } phases;
  double finished_at = 0;    // seconds since the run started, when the key was done (0: not measured)
  // bwd_dx tuned jointly with its bwd_dwdb (joint_dwdb): every finalist's
  // times and whether it won (the trace records them, so that a comparison
  // of two runs can compare the objective, dx + dW/dB, and not the bwd_dx
  // median alone). Empty otherwise.
  std::vector<JointTiming> joint;
};
const char* to_string(KeyResult::State s);

// Progress reporting (the CLI's progress bar). Calls are never concurrent
// (the tuner serialises them), but with several GPUs they come from the
// workers' threads; `device` is the ordinal of the GPU working on the key.
class Progress {
 public:
  virtual ~Progress() = default;
  virtual void begin(std::size_t keys, std::size_t candidates) { (void)keys, (void)candidates; }
  virtual void key_begin(const cache::TuneKey& key, std::size_t candidates, int device) {
    (void)key, (void)candidates, (void)device;
  }
  virtual void candidate_done(const cache::TuneKey& key, std::size_t index, const CandidateResult& r) {
    (void)key, (void)index, (void)r;
  }
  virtual void key_done(const KeyResult& r) { (void)r; }
  virtual void note(const std::string& message) { (void)message; }
};

// Where a key's inputs are drawn and its reference computed (see
// tuner/workload.hpp):
//   gpu  on the GPU, synchronously on the benchmarking thread right before
//        the key's search (about a millisecond), the CPU checking sampled
//        rows of the reference on a background thread (the default; the
//        CPU path where the GPU's helper kernels cannot be built);
//   cpu  on the host, ahead of the GPU on background threads (prepare_ahead),
//        the CPU reference of every element uploaded.
enum class ReferenceMode { gpu, cpu };
const char* to_string(ReferenceMode m);
// "gpu" or "cpu"; throws lntune::Error naming the value otherwise.
ReferenceMode parse_reference_mode(const std::string& s);

struct TuneOptions {
  RunnerOptions runner;
  ReferenceMode reference = ReferenceMode::gpu;
  double budget_s = 0;  // 0: no limit
  bool force = false;   // re-tune keys already in the cache
  bool full = false;    // exhaustive search of the whole space, no warm re-tune
  bool tune_dwdb = true;
  bool priors = true;   // search keys with a related key around its winner (prior_traits); not with `full`
  unsigned jobs = 0;    // compile threads (0: automatic)
  // An executable serving `_compile-worker` (the lntune CLI passes itself):
  // each compile thread compiles in a process of its own (CompilePool).
  // Empty: in-process.
  std::string compile_worker;
  std::uint64_t seed = 0x6c6e74756e65ULL;
  // The staged search (ignored with `full`): see tuner/search.hpp.
  int screen_reps = 5;
  double screen_margin = 0.10;
  // A warm re-tune's S3 margin: its candidates are the previous winner and
  // its close rivals, nearly all within 10% of one another, so only those
  // that screen at least as fast as the best verified are timed carefully.
  double warm_screen_margin = 0.0;
  double screen_cut = 1.5;          // a screening stops after 2 repetitions beyond 1.5x the fastest
  double roofline_headroom = 1.15;  // floor = bytes / (headroom x copy bandwidth)
  double dominated_ratio = 2.0;     // reuse from the previous N; 0: no reuse
  // S4, the final (tuner/search.hpp, FinalOptions), in every search but a
  // warm re-tune's, --full included: 8 rounds of 8 repetitions (0: none).
  FinalOptions final = {8};
  // Joint bwd_dx + bwd_dwdb tuning (see dx_finalists, pick_joint).
  double joint_margin = 0.05;
  // Targets whose workloads are prepared ahead of the GPU, per worker
  // (0: automatic, 3, or 8 when most of the worker's keys are warm). With
  // the GPU reference nothing is prepared ahead.
  int prepare_ahead = 0;
  std::size_t joint_finalists = 3;  // a warm re-tune: 1 (the bwd_dx winner)
};

// What to do with a key that is about to be tuned, given its existing record
// and the provenance of results measured now (pure):
//   skip  the record is complete and from the current templates, no `force`;
//   warm  re-tune over the previous winner and its rivals: the record is
//         complete and from the same NVRTC and driver (the GPU is the key's),
//         only the code (templates) changed, or `force`; never with `full`;
//   full  everything else (no record, a partial one, another NVRTC/driver,
//         or `full`).
enum class Retune { skip, warm, full };
const char* to_string(Retune r);
Retune retune_mode(const std::optional<cache::TuneRecord>& existing, const cache::Provenance& now, bool force,
                   bool full);

// The warm re-tune's candidates (pure), searched after the baseline (the
// default config, which every search times first): the previous winner
// (unless it is the default), then the configs of `space` close to it, in
// space order: one field (block_size, num_warps, rows_per_cta, group_size_m,
// cluster_size) changed by at most a factor of two, or block_size and
// num_warps scaled together by the same factor of two (the same elements per
// thread). A related key's search (related_space) looks wider: it starts
// from another key's winner, where a warm re-tune starts from this key's. The previous winner need not be in `space`: the default
// config often is not (its group_size_m follows its own rule), and new code
// may list other configs; it is timed and verified like any candidate, so
// one that no longer compiles or verifies is a recorded failure. Empty only
// when the previous winner is the default and has no rival in `space` (the
// search is then the baseline alone).
std::vector<Config> warm_space(const std::vector<Config>& space, const Config& previous,
                               const Config& default_config);

// The candidates of a key searched around a related key's winner
// (prior_traits; pure): that winner (unless it is the default), the configs
// of `space` differing from it in at most two fields each by at most a
// factor of four (a variant may want twice or four times the warps), and
// the configs differing from this key's own default in at most two fields
// each by at most a factor of two (its own rule may know the variant), in
// that order without repeats. group_size_m is not counted among the two
// fields (it must still be within the factor): for the backward it sets the
// partial-row count that the joint dx + dW/dB choice weighs.
std::vector<Config> related_space(const std::vector<Config>& space, const Config& related,
                                  const Config& default_config);

// The decision for one key (pure): retune_mode, and for a warm re-tune the
// space reduced by warm_space around the existing record's config.
struct RetunePlan {
  Retune mode = Retune::full;
  std::vector<Config> space;  // what to search besides the default config (skip: empty)
};
RetunePlan plan_retune(const std::optional<cache::TuneRecord>& existing, const cache::Provenance& now, bool force,
                       bool full, const Config& default_config, std::vector<Config> space);

// ---- joint bwd_dx + bwd_dwdb tuning (issue 10; pure helpers)
//
// The bwd_dx config decides how many partial rows (P) bwd_dwdb reduces, so
// the pair is chosen by the sum of their times. bwd_dx candidates are timed
// as the whole backward with the default bwd_dwdb config for their own P
// (what the launcher runs without a tuned bwd_dwdb); bwd_dwdb is then
// searched for each finalist, its baseline being that same default. The
// estimated sum of a finalist is backward - dwdb default + dwdb best.

// The bwd_dx finalists: the winner first, then the candidates timed to
// convergence (ok or slower) within (1 + margin) x the winner's median, by
// median (ties: index); one per partial-row count (candidates with the same
// P share the bwd_dwdb problem: the faster one stands for it); at most
// `max`. Empty without a winner.
std::vector<std::size_t> dx_finalists(const Outcome& dx,
                                      const std::function<std::int64_t(const Config&)>& partial_rows, double margin,
                                      std::size_t max);

// The index (into `t`) of the least estimated sum; ties: the earlier. None
// when no entry has all three times.
std::optional<std::size_t> pick_joint(const std::vector<JointTiming>& t);

// ---- related keys (pure helpers)

// The traits whose winner seeds the search of `t` (fwd and bwd_dx only):
//   a fused residual  -> the same traits without it;
//   else RMSNorm      -> LayerNorm with a bias, same dtypes and options;
//   else fp16 rows    -> bf16 rows (fp16 weights and y -> bf16 too).
// The kernel body is the same template with an `if constexpr` or an element
// type of the same size, so the best tiling moves little. None otherwise.
std::optional<Traits> prior_traits(const Traits& t);
// prior_traits steps to traits without one (0: none).
int prior_depth(const Traits& t);

// The order and the split of `targets` over `workers`: targets with the same
// kernel, N and M (one family: a key and the keys derived from it by
// prior_traits) go to the same worker, families split by partition_keys over
// their summed `costs`; each worker's targets ordered by prior_depth, then
// by index. Deterministic; every target exactly once.
std::vector<std::vector<std::size_t>> order_targets(const std::vector<Target>& targets,
                                                    const std::vector<double>& costs, std::size_t workers);

// ---- several GPUs (pure helpers)

// `--devices`: "all" (every one of `count` devices) or a comma-separated
// list of ordinals, in the order given. Throws lntune::Error naming the
// problem: empty, not a number, out of range, listed twice, or no device.
std::vector<int> parse_devices(const std::string& spec, int count);

// The estimated cost of tuning a target (arbitrary units): a fixed part per
// key plus one growing with the bytes its workload moves.
double target_cost(const Target& t);

// Splits items (given in order, with their costs) over `workers`: each item
// goes to the worker with the least cost so far, ties to the lowest index.
// Deterministic; every item exactly once; each worker's items in order.
// Throws lntune::Error for workers == 0 or a negative or non-finite cost.
std::vector<std::vector<std::size_t>> partition_keys(const std::vector<double>& costs, std::size_t workers);

// Indices of `gpus` grouped by model (equal GpuId), groups in order of first
// appearance, indices ascending.
std::vector<std::vector<std::size_t>> group_by_model(const std::vector<cache::GpuId>& gpus);

// One GPU's share of a run.
struct DeviceStats {
  int ordinal = -1;
  double copy_gbps = 0;
  std::size_t keys = 0;   // searched (not cached, not skipped)
  double busy_s = 0;      // wall time of its worker
  std::string fatal;      // non-empty: this GPU stopped early
};

struct TuneSummary {
  rt::DeviceInfo device;  // the first GPU of the run
  cache::GpuId gpu;
  double copy_gbps = 0;   // the first GPU's
  std::vector<KeyResult> keys;  // in the order of the targets
  std::vector<DeviceStats> devices;
  SearchCounts search;    // summed over the searched keys
  std::size_t warm_keys = 0;
  std::size_t prior_keys = 0;  // searched around a related key's winner
  CompileStats compile;
  unsigned compile_threads = 0;
  rt::KernelCacheStats kernel_cache;  // of the tuner's own runtime, at the end
  double wall_s = 0;
  bool budget_spent = false;
  std::string fatal;  // non-empty: the run stopped early (unusable CUDA context)
};

class Workload;

// One-off runs of given configs on the current GPU, outside a search
// (`lntune bench`, `lntune verify`), with the tuner's compilation, timing and
// checks. Use from one thread.
class Session {
 public:
  // compile_worker: as TuneOptions::compile_worker.
  explicit Session(std::shared_ptr<rt::BinaryStore> store, RunnerOptions runner = {}, unsigned jobs = 0,
                   std::string compile_worker = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  const rt::DeviceInfo& device() const;
  double copy_gbps();
  CompileStats compile_stats() const;  // of this session's compile pool
  // kernel fwd: `config` is the forward's (`other` unused). bwd_dx: the
  // whole backward, `config` for bwd_dx and `other` for the bwd_dwdb after
  // it. bwd_dwdb: `config` reducing the partials of bwd_dx config `other`.
  // time: measure to convergence; verify: compare with the CPU reference.
  CandidateResult run(Workload& w, Kernel kernel, const Config& config, const Config& other, bool time,
                      bool verify);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Rows that stand for an M bucket (cache::m_bucket) on a GPU with sm_count
// SMs: the geometric middle of the bucket (its lower end for the last one,
// times 2), at least 1.
std::int64_t representative_m(int bucket, int sm_count);

// Makes device `ordinal`'s primary context current on this thread.
void use_device(int ordinal);

// Tunes `targets` on the current context's device, writing winners to `db`.
// `store` (may be null) is where CUBINs are looked up and saved, behind an
// in-memory layer, by the run's own rt::Runtime (the process's default
// runtime is not touched). Throws only for problems before any key is tuned (no
// driver, no device, the copy measurement failing).
TuneSummary run_tuning(const std::vector<Target>& targets, cache::Database& db,
                       std::shared_ptr<rt::BinaryStore> store, const TuneOptions& options,
                       Progress* progress = nullptr);

// The same over the devices `ordinals` (see "Several GPUs" above): one
// summary per GPU model, in order of first appearance. The calling thread
// plans and submits compilations; each GPU gets a worker thread.
std::vector<TuneSummary> run_tuning_on(const std::vector<int>& ordinals, const std::vector<Target>& targets,
                                       cache::Database& db, std::shared_ptr<rt::BinaryStore> store,
                                       const TuneOptions& options, Progress* progress = nullptr);

}  // namespace lntune::tune
