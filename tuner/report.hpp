// lntune::tune — reporting: the tune summary table, the cache listing (table
// and JSON), and the progress bar. Output only; nothing here measures.
//
// Compact config notation in tables: "b<block_size> w<num_warps>
// r<rows_per_cta>", then " g<group_size_m>" when set and " c<cluster_size>"
// for clusters, e.g. "b4096 w8 r1 g264 c2".
#pragma once

#include <chrono>
#include <map>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "tuner/tuner.hpp"

namespace lntune::tune {

std::string short_config(const Config& c);

// The dtypes and variant of a problem, as the tables print them: "bf16",
// "fp16/wfp32 noB rms +resfp32 zc ->fp32" (weights' dtype, missing affine
// parts, RMSNorm, residual (its dtype when not the row's), zero-centred
// gamma, output dtype).
std::string dtype_label(const Traits& t);

// Per key: kernel dtype N M-bucket | winner config | median us | GB/s |
// % of copy | speed-up vs default | state; then the totals with the
// geometric-mean speed-up over the default, the same per M bucket and
// kernel (gains_by_bucket), what each stage of the search removed, the
// compilations, per GPU (several) and wall time.
void print_summary(std::ostream& os, const TuneSummary& s);

// The tuned-over-default speed-up of a key: the default config's median
// over the winner's (record.default_median_us / record.timing.median_us,
// both measured in the run that tuned it); nullopt without a record or
// either time.
std::optional<double> speedup_vs_default(const KeyResult& k);

// Speed-ups over the default of the keys measured in this run (state tuned
// or partial, speedup_vs_default known), grouped by M bucket and kernel.
struct GainGroup {
  int m_bucket = 0;
  std::optional<Kernel> kernel;  // none: every kernel of the bucket
  int keys = 0;
  double geomean = 0, min = 0, max = 0;
};
// One group per (bucket, kernel) present, and one per bucket over all its
// kernels (kernel none, after that bucket's kernels); buckets ascending,
// kernels in enum order (fwd, bwd_dx, bwd_dwdb). A bwd_dwdb key's bucket is
// that of its partial rows, as in its key. Empty when nothing was measured.
std::vector<GainGroup> gains_by_bucket(const std::vector<KeyResult>& keys);
// The same over every measured key; nullopt when none.
std::optional<GainGroup> overall_gain(const std::vector<KeyResult>& keys);

// "search: 13263 candidates; removed: 120 reused from the previous N, ..."
std::string search_counts_line(const SearchCounts& c);

// The cache's records as a table (`lntune show`).
void print_records(std::ostream& os, const std::vector<cache::TuneRecord>& records);

// The records as a JSON array of objects, one per record, every field
// (`lntune show --json`); with `files` (one per record), each object also
// names the cache file it came from.
std::string records_json(const std::vector<cache::TuneRecord>& records,
                         const std::vector<std::string>* files = nullptr);

// A JSON string literal (quotes included) for `s`.
std::string json_string(const std::string& s);

// Live progress on a stream: a redrawn bar with ETA when `tty`, else one
// line per finished key. With several GPUs (set_devices), each line names
// the GPU ("gpu 1: [3/342] ...") and the bar shows what each GPU works on.
class ProgressBar : public Progress {
 public:
  ProgressBar(std::FILE* out, bool tty);
  void set_devices(const std::vector<int>& ordinals);
  void begin(std::size_t keys, std::size_t candidates) override;
  void key_begin(const cache::TuneKey& key, std::size_t candidates, int device) override;
  void candidate_done(const cache::TuneKey& key, std::size_t index, const CandidateResult& r) override;
  void key_done(const KeyResult& r) override;
  void note(const std::string& message) override;

 private:
  void draw();
  void clear_line();
  std::FILE* out_;
  bool tty_;
  std::size_t keys_total_ = 0, keys_done_ = 0, cand_total_ = 0, cand_done_ = 0;
  std::string current_;
  bool multi_ = false;
  std::map<int, std::string> current_by_device_;
  std::map<int, std::size_t> done_by_device_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

// `lntune tune --trace FILE`: one JSON object per line for every candidate
// ({"event": "candidate", the key's fields, "config", "default", "status",
// "median_us", "reps", "screen_us", "message"}) and every finished key
// ({"event": "key", the key's fields, "state", "config", "median_us",
// "device", "warm", "seconds", ..., and for a bwd_dx key tuned jointly with
// its reduction "dwdb_form" (its bwd_dwdb keys' dtype label, as the text
// report prints it) and "joint": its finalists with "config",
// "partial_rows", "backward_us", "dwdb_default_us", "dwdb_best_us",
// "dwdb_config", "chosen", "finishes_in_kernel"}), forwarding every call to
// `inner` (may be null). What bench/compare_winners.py and
// bench/tune_gaps.py read.
class TraceWriter : public Progress {
 public:
  TraceWriter(std::ostream& out, Progress* inner) : out_(out), inner_(inner) {}
  void begin(std::size_t keys, std::size_t candidates) override;
  void key_begin(const cache::TuneKey& key, std::size_t candidates, int device) override;
  void candidate_done(const cache::TuneKey& key, std::size_t index, const CandidateResult& r) override;
  void key_done(const KeyResult& r) override;
  void note(const std::string& message) override;

 private:
  std::ostream& out_;
  Progress* inner_;
};

// "fwd bf16 N=4096 M-bucket 4" style label of a key.
std::string key_label(const cache::TuneKey& k);

}  // namespace lntune::tune
