#include "tuner/cli/tune_json.hpp"

#include <optional>

#include "lntune/lntune.hpp"
#include "tuner/cli/json.hpp"
#include "tuner/report.hpp"

namespace lntune::cli {

const char* state_id(tune::KeyResult::State st) {
  using S = tune::KeyResult::State;
  switch (st) {
    case S::tuned: return "tuned";
    case S::partial: return "partial";
    case S::cached: return "cached";
    case S::skipped_budget: return "skipped_budget";
    case S::no_winner: return "no_winner";
    case S::failed: return "failed";
  }
  return "unknown";
}

namespace {

constexpr tune::KeyResult::State kAllStates[] = {
    tune::KeyResult::State::tuned,          tune::KeyResult::State::partial,   tune::KeyResult::State::cached,
    tune::KeyResult::State::skipped_budget, tune::KeyResult::State::no_winner, tune::KeyResult::State::failed};

// The fields of one summary (one GPU model), inside an open object.
void write_summary_fields(JsonWriter& j, const tune::TuneSummary& s) {
  j.key("gpu");
  write_gpu(j, s.gpu);
  j.field("driver_version", s.device.driver_version).field("copy_gbps", s.copy_gbps);
  j.key("devices").begin_array();  // the GPUs that tuned (one without --devices)
  for (const tune::DeviceStats& d : s.devices)
    j.begin_object()
        .field("ordinal", d.ordinal)
        .field("copy_gbps", d.copy_gbps)
        .field("keys", d.keys)
        .field("busy_s", d.busy_s)
        .field("fatal", d.fatal.empty() ? std::nullopt : std::optional<std::string>(d.fatal))
        .end_object();
  j.end_array();
  j.key("keys").begin_array();
  for (const tune::KeyResult& k : s.keys) {
    j.begin_object();
    write_key_fields(j, k.key);
    j.field("m", static_cast<long long>(k.m)).field("state", state_id(k.state)).field("message", k.message);
    j.field("device", k.device >= 0 ? std::optional<int>(k.device) : std::nullopt).field("warm", k.warm);
    j.key("config");
    if (k.record) {
      const cache::TuneRecord& r = *k.record;
      write_config(j, r.config);
      const std::optional<double> speedup = tune::speedup_vs_default(k);
      j.field("median_us", r.timing.median_us)
          .field("gbps", r.gbps)
          .field("copy_gbps", r.copy_gbps)
          .field("default_median_us", speedup ? std::optional<double>(r.default_median_us) : std::nullopt)
          .field("speedup_vs_default", speedup);
    } else {
      // No record: nothing stored for this key; the same fields, null.
      j.null().field("median_us", nullptr).field("gbps", nullptr).field("copy_gbps", nullptr);
      j.field("default_median_us", nullptr).field("speedup_vs_default", nullptr);
    }
    j.field("seconds", k.seconds).end_object();
  }
  j.end_array();
  j.key("counts").begin_object();
  for (tune::KeyResult::State st : kAllStates) {
    int count = 0;
    for (const tune::KeyResult& k : s.keys) count += k.state == st;
    j.field(state_id(st), count);
  }
  j.end_object();
  // Tuned over default (keys measured in this run): overall and per M
  // bucket and kernel (tune::gains_by_bucket; "kernel": null is the whole
  // bucket). Per key: "speedup_vs_default" above.
  const auto overall = tune::overall_gain(s.keys);
  j.field("geomean_speedup_vs_default", overall ? std::optional<double>(overall->geomean) : std::nullopt);
  j.key("speedup_vs_default_by_bucket").begin_array();
  for (const tune::GainGroup& g : tune::gains_by_bucket(s.keys))
    j.begin_object()
        .field("m_bucket", g.m_bucket)
        .field("kernel", g.kernel ? std::optional<std::string>(to_string(*g.kernel)) : std::nullopt)
        .field("keys", g.keys)
        .field("geomean", g.geomean)
        .field("min", g.min)
        .field("max", g.max)
        .end_object();
  j.end_array();
  j.key("compile")
      .begin_object()
      .field("nvrtc", s.compile.compiled)
      .field("seconds", s.compile.compile_seconds)
      .field("in_worker_processes", s.compile.in_worker_processes)
      .field("threads", s.compile_threads)
      .field("from_cache", s.compile.from_cache)
      .field("failed", s.compile.failed)
      .end_object();
  j.field("wall_s", s.wall_s).field("budget_spent", s.budget_spent);
  j.field("fatal", s.fatal.empty() ? std::nullopt : std::optional<std::string>(s.fatal));
}

}  // namespace

// `tune --json`: one JSON object. Without --devices: the summary's fields at
// the top level. With --devices: "summaries", one per GPU model (in the order
// tuned), and "counts" and "fatal" over all of them.
void write_tune_json(std::ostream& os, const std::vector<tune::TuneSummary>& summaries, bool several,
                     const std::string& cache_path) {
  JsonWriter j(os);
  j.begin_object().field("lntune_version", version()).field("cache", cache_path);
  if (!several && summaries.size() == 1) {
    write_summary_fields(j, summaries.front());
    j.end_object().finish();
    return;
  }
  j.key("summaries").begin_array();
  for (const tune::TuneSummary& s : summaries) {
    j.begin_object();
    write_summary_fields(j, s);
    j.end_object();
  }
  j.end_array();
  j.key("counts").begin_object();
  for (tune::KeyResult::State st : kAllStates) {
    int count = 0;
    for (const tune::TuneSummary& s : summaries)
      for (const tune::KeyResult& k : s.keys) count += k.state == st;
    j.field(state_id(st), count);
  }
  j.end_object();
  std::string fatal;
  for (const tune::TuneSummary& s : summaries)
    if (!s.fatal.empty()) fatal += (fatal.empty() ? "" : "; ") + s.fatal;
  j.field("fatal", fatal.empty() ? std::nullopt : std::optional<std::string>(fatal));
  j.end_object().finish();
}

}  // namespace lntune::cli
