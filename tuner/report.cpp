#include "tuner/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <sstream>

#include "runtime/selector.hpp"

namespace lntune::tune {

namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace

std::string dtype_label(const Traits& t) {
  std::string s(to_string(t.x_dtype));
  if ((t.has_weight || t.has_bias) && t.w_dtype != t.x_dtype && t.kernel != Kernel::bwd_dwdb)
    s += "/w" + std::string(to_string(t.w_dtype));
  if (!t.has_weight && !t.has_bias) s += " noaffine";
  else if (!t.has_weight) s += " noW";
  else if (!t.has_bias) s += " noB";
  if (t.norm == Norm::rms) s += " rms";
  if (t.residual) s += " +res" + (*t.residual != t.x_dtype ? std::string(to_string(*t.residual)) : std::string());
  if (t.zero_centered) s += " zc";
  if (t.y_dtype && *t.y_dtype != t.x_dtype) s += " ->" + std::string(to_string(*t.y_dtype));
  return s;
}

namespace {

std::string duration(double s) {
  if (!(s >= 0) || std::isinf(s)) return "?";
  const long t = std::lround(s);
  if (t >= 3600) return format("%ldh%02ldm", t / 3600, (t / 60) % 60);
  if (t >= 60) return format("%ldm%02lds", t / 60, t % 60);
  return format("%lds", t);
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

// Headers through the rows' formats ("µs" is two bytes, one column: %11s).
std::string summary_header() {
  return format("%-8s %-12s %7s  %10s  %-22s %11s %10s %7s %11s  %s\n", "kernel", "dtype", "N", "M (bucket)", "winner",
                "median µs", "GB/s", "% copy", "vs default", "state");
}
std::string records_header() {
  return format("%-8s %-12s %7s  %6s  %-22s %11s %10s %7s %11s  %s\n", "kernel", "dtype", "N", "bucket", "config",
                "median µs", "GB/s", "% copy", "vs default", "origin, tuned at");
}

}  // namespace

std::string short_config(const Config& c) {
  std::string s = format("b%d w%d r%d", c.block_size, c.num_warps, c.rows_per_cta);
  if (c.group_size_m > 0) s += format(" g%d", c.group_size_m);
  if (c.cluster_size > 1) s += format(" c%d", c.cluster_size);
  return s;
}

std::string key_label(const cache::TuneKey& k) {
  return std::string(to_string(k.traits.kernel)) + " " + dtype_label(k.traits) + " N=" + std::to_string(k.n) +
         " M-bucket " + std::to_string(k.m_bucket);
}

std::optional<double> speedup_vs_default(const KeyResult& k) {
  if (!k.record || !(k.record->default_median_us > 0) || !(k.record->timing.median_us > 0)) return std::nullopt;
  const double x = k.record->default_median_us / k.record->timing.median_us;
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}

namespace {

bool measured(const KeyResult& k) {
  return (k.state == KeyResult::State::tuned || k.state == KeyResult::State::partial) && speedup_vs_default(k);
}

// Accumulates speed-ups into a group (geometric mean in log space).
struct GainSum {
  int keys = 0;
  double log_sum = 0, min = 0, max = 0;
  void add(double x) {
    min = keys == 0 ? x : std::min(min, x);
    max = keys == 0 ? x : std::max(max, x);
    log_sum += std::log(x);
    ++keys;
  }
  GainGroup group(int bucket, std::optional<Kernel> kernel) const {
    return GainGroup{bucket, kernel, keys, std::exp(log_sum / keys), min, max};
  }
};

constexpr Kernel kKernels[] = {Kernel::fwd, Kernel::bwd_dx, Kernel::bwd_dwdb};

std::string gain_text(const GainGroup& g) {
  std::string s = format("%.3fx (%d key%s", g.geomean, g.keys, g.keys == 1 ? "" : "s");
  if (g.keys > 1) s += format(", %.2f-%.2fx", g.min, g.max);
  return s + ")";
}

}  // namespace

std::vector<GainGroup> gains_by_bucket(const std::vector<KeyResult>& keys) {
  std::vector<GainGroup> out;
  for (int b = 0; b < cache::kNumMBuckets; ++b) {
    GainSum all;
    for (Kernel kernel : kKernels) {
      GainSum one;
      for (const KeyResult& k : keys)
        if (k.key.m_bucket == b && k.key.traits.kernel == kernel && measured(k)) {
          one.add(*speedup_vs_default(k));
          all.add(*speedup_vs_default(k));
        }
      if (one.keys > 0) out.push_back(one.group(b, kernel));
    }
    if (all.keys > 0) out.push_back(all.group(b, std::nullopt));
  }
  return out;
}

std::optional<GainGroup> overall_gain(const std::vector<KeyResult>& keys) {
  GainSum all;
  for (const KeyResult& k : keys)
    if (measured(k)) all.add(*speedup_vs_default(k));
  if (all.keys == 0) return std::nullopt;
  return all.group(-1, std::nullopt);
}

void print_summary(std::ostream& os, const TuneSummary& s) {
  os << "GPU: " << s.gpu << ", driver " << s.device.driver_version << "; device-to-device copy "
     << format("%.0f", s.copy_gbps) << " GB/s (read + written)\n";
  os << summary_header();
  int counts[6] = {};
  for (const KeyResult& k : s.keys) {
    ++counts[static_cast<int>(k.state)];
    std::string winner = "-", median = "-", gbps = "-", pct = "-", speedup = "-";
    if (k.record) {
      const cache::TuneRecord& r = *k.record;
      winner = short_config(r.config);
      median = format("%.2f", r.timing.median_us);
      gbps = format("%.0f", r.gbps);
      const double copy = r.copy_gbps > 0 ? r.copy_gbps : s.copy_gbps;
      if (copy > 0) pct = format("%.1f", 100.0 * r.gbps / copy);
      if (const auto x = speedup_vs_default(k)) speedup = format("%.2fx", *x);
    }
    std::string state = to_string(k.state);
    if (!k.message.empty() && k.state != KeyResult::State::tuned && k.state != KeyResult::State::cached)
      state += ": " + k.message.substr(0, 200);
    os << format("%-8s %-12s %7lld  %10s  %-22s %10s %10s %7s %11s  %s\n",
                 std::string(to_string(k.key.traits.kernel)).c_str(), dtype_label(k.key.traits).c_str(),
                 static_cast<long long>(k.key.n), format("%lld (%d)", static_cast<long long>(k.m), k.key.m_bucket).c_str(),
                 winner.c_str(),
                 median.c_str(), gbps.c_str(), pct.c_str(), speedup.c_str(), state.c_str());
  }
  os << "\n" << s.keys.size() << " keys: " << counts[0] << " tuned, " << counts[1] << " partial, " << counts[2]
     << " already cached, " << counts[3] << " skipped (budget), " << counts[4] << " without winner, " << counts[5]
     << " failed";
  if (const auto all = overall_gain(s.keys))
    os << format("; geometric-mean speed-up over the default: %.3fx", all->geomean);
  os << "\n";
  // Per M bucket (keys tuned in this run): "M-bucket 4: 1.104x (330 keys,
  // 0.95-1.70x); fwd 1.050x (...), bwd_dx ..., bwd_dwdb ...".
  const std::vector<GainGroup> gains = gains_by_bucket(s.keys);
  if (!gains.empty()) os << "speed-up over the default (geometric mean, min-max), per M bucket:\n";
  std::string kernels;
  for (const GainGroup& g : gains) {
    if (g.kernel) {
      kernels += (kernels.empty() ? "" : ", ") + std::string(to_string(*g.kernel)) + " " + gain_text(g);
      continue;
    }
    os << "  M-bucket " << g.m_bucket << ": " << gain_text(g) << "; " << kernels << "\n";
    kernels.clear();
  }
  if (s.search.candidates > 0) os << search_counts_line(s.search) << "\n";
  if (s.warm_keys > 0)
    os << s.warm_keys << " key" << (s.warm_keys == 1 ? "" : "s")
       << " re-tuned warm (previous winner and its close rivals; --full searches everything)\n";
  if (s.prior_keys > 0)
    os << s.prior_keys << " key" << (s.prior_keys == 1 ? "" : "s")
       << " searched around a related key's winner (RMSNorm from LayerNorm, fused from unfused, fp16 from bf16;"
          " --full or --no-priors searches everything)\n";
  os << "compilations: " << s.compile.compiled << " with NVRTC (" << format("%.1f", s.compile.compile_seconds)
     << " s on " << s.compile_threads << " threads"
     << (s.compile.in_worker_processes == 0 ? std::string()
         : s.compile.in_worker_processes == s.compile.compiled
             ? ", each in a worker process"
             : ", " + std::to_string(s.compile.in_worker_processes) + " in worker processes")
     << "), " << s.compile.from_cache << " CUBINs from the cache, "
     << s.compile.failed << " failed\n";
  if (s.devices.size() > 1)
    for (const DeviceStats& d : s.devices)
      os << "gpu " << d.ordinal << ": " << d.keys << " keys searched in " << format("%.1f", d.busy_s)
         << " s, copy " << format("%.0f", d.copy_gbps) << " GB/s" << (d.fatal.empty() ? "" : ", stopped: " + d.fatal)
         << "\n";
  os << "wall time: " << format("%.1f", s.wall_s) << " s" << (s.budget_spent ? " (budget spent)" : "") << "\n";
  if (!s.fatal.empty()) os << "stopped early: " << s.fatal << "\n";
}

std::string search_counts_line(const SearchCounts& c) {
  std::ostringstream os;
  os << "search: " << c.candidates << " candidates; removed before timing: " << c.reused
     << " reused from the previous N, " << c.roofline << " by the roofline bound; " << c.screened
     << " screened, " << c.screened_out << " of them screened out; " << c.careful << " timed carefully ("
     << c.pruned << " pruned early), " << c.verified << " verified, " << c.failed << " failed";
  if (c.skipped) os << ", " << c.skipped << " skipped (budget)";
  if (c.finals)
    os << "; " << c.finals << " final" << (c.finals == 1 ? "" : "s") << " (close finalists timed in turn), "
       << c.final_changed << " of them changing the winner";
  return os.str();
}

void print_records(std::ostream& os, const std::vector<cache::TuneRecord>& records) {
  if (records.empty()) {
    os << "no tuned records\n";
    return;
  }
  std::optional<cache::GpuId> gpu;
  for (const cache::TuneRecord& r : records) {
    if (!gpu || *gpu != r.key.gpu) {
      gpu = r.key.gpu;
      os << "\n" << *gpu << "\n";
      os << records_header();
    }
    const std::string pct = r.copy_gbps > 0 ? format("%.1f", 100.0 * r.gbps / r.copy_gbps) : "-";
    const std::string speedup =
        r.default_median_us > 0 && r.timing.median_us > 0 ? format("%.2fx", r.default_median_us / r.timing.median_us) : "-";
    os << format("%-8s %-12s %7lld  %6d  %-22s %10.2f %10.0f %7s %11s  %s, %s\n",
                 std::string(to_string(r.key.traits.kernel)).c_str(), dtype_label(r.key.traits).c_str(),
                 static_cast<long long>(r.key.n), r.key.m_bucket, short_config(r.config).c_str(), r.timing.median_us,
                 r.gbps, pct.c_str(), speedup.c_str(), r.prov.origin_text().c_str(), r.prov.tuned_at.c_str());
  }
  os << "\n" << records.size() << " record" << (records.size() == 1 ? "" : "s") << "\n";
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20)
          o += format("\\u%04x", c);
        else
          o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

std::string records_json(const std::vector<cache::TuneRecord>& records, const std::vector<std::string>* files) {
  std::ostringstream os;
  os << "[";
  bool first = true;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const cache::TuneRecord& r = records[i];
    os << (first ? "\n" : ",\n");
    first = false;
    if (files && i < files->size()) os << "  {\"file\": " << json_string((*files)[i]) << ",\n   \"gpu\": {";
    else os << "  {\"gpu\": {";
    const Traits& t = r.key.traits;
    const Config& c = r.config;
    os << "\"name\": " << json_string(r.key.gpu.name) << ", \"arch\": " << json_string(r.key.gpu.arch())
       << ", \"sm_count\": " << r.key.gpu.sm_count << "},\n"
       << "   \"kernel\": " << json_string(std::string(to_string(t.kernel)))
       << ", \"x_dtype\": " << json_string(std::string(to_string(t.x_dtype)))
       << ", \"w_dtype\": " << json_string(std::string(to_string(t.w_dtype)))
       << ", \"has_weight\": " << (t.has_weight ? "true" : "false")
       << ", \"has_bias\": " << (t.has_bias ? "true" : "false")
       << ", \"norm\": " << json_string(std::string(to_string(t.norm)))
       << ", \"residual_dtype\": " << (t.residual ? json_string(std::string(to_string(*t.residual))) : "null")
       << ", \"zero_centered\": " << (t.zero_centered ? "true" : "false")
       << ", \"y_dtype\": " << json_string(std::string(to_string(t.out_dtype()))) << ", \"n\": " << r.key.n
       << ", \"m_bucket\": " << r.key.m_bucket << ",\n"
       << "   \"config\": {\"block_size\": " << c.block_size << ", \"num_warps\": " << c.num_warps
       << ", \"rows_per_cta\": " << c.rows_per_cta << ", \"group_size_m\": " << c.group_size_m
       << ", \"cluster_size\": " << c.cluster_size << "},\n"
       << "   \"timing\": {\"median_us\": " << json_number(r.timing.median_us)
       << ", \"p20_us\": " << json_number(r.timing.p20_us) << ", \"p80_us\": " << json_number(r.timing.p80_us)
       << ", \"reps\": " << r.timing.reps << "},\n"
       << "   \"gbps\": " << json_number(r.gbps) << ", \"copy_gbps\": " << json_number(r.copy_gbps)
       << ", \"pct_of_copy\": " << (r.copy_gbps > 0 ? json_number(100.0 * r.gbps / r.copy_gbps) : "null")
       << ", \"default_median_us\": " << json_number(r.default_median_us) << ", \"speedup_vs_default\": "
       << (r.default_median_us > 0 && r.timing.median_us > 0 ? json_number(r.default_median_us / r.timing.median_us)
                                                              : "null")
       << ",\n"
       << "   \"provenance\": {\"template_hash\": " << json_string(r.prov.template_hash)
       << ", \"lntune_version\": " << json_string(r.prov.lntune_version)
       << ", \"nvrtc_version\": " << r.prov.nvrtc_version << ", \"driver_version\": " << r.prov.driver_version
       << ", \"tuned_at\": " << json_string(r.prov.tuned_at) << ", \"origin\": " << json_string(r.prov.origin_text())
       << "}}";
  }
  os << (first ? "]\n" : "\n]\n");
  return os.str();
}

// ------------------------------------------------------------ trace
namespace {
std::string key_json(const cache::TuneKey& k) {
  const Traits& t = k.traits;
  std::ostringstream os;
  os << "\"gpu\": " << json_string(k.gpu.name) << ", \"sm_count\": " << k.gpu.sm_count
     << ", \"kernel\": " << json_string(std::string(to_string(t.kernel)))
     << ", \"x_dtype\": " << json_string(std::string(to_string(t.x_dtype)))
     << ", \"w_dtype\": " << json_string(std::string(to_string(t.w_dtype)))
     << ", \"has_weight\": " << (t.has_weight ? "true" : "false") << ", \"has_bias\": " << (t.has_bias ? "true" : "false")
     << ", \"n\": " << k.n << ", \"m_bucket\": " << k.m_bucket;
  // Variants only (LayerNorm without options keeps the fields it always had).
  if (t.norm != Norm::layer || t.residual || t.zero_centered || t.y_dtype) {
    std::string v = t.norm == Norm::rms ? "rmsnorm" : "layernorm";
    if (t.residual) v += "+residual_" + std::string(to_string(*t.residual));
    if (t.zero_centered) v += "+zero_centered";
    if (t.y_dtype) v += "+y_" + std::string(to_string(*t.y_dtype));
    os << ", \"variant\": " << json_string(v);
  }
  return os.str();
}
std::string config_json(const Config& c) {
  std::ostringstream os;
  os << "{\"block_size\": " << c.block_size << ", \"num_warps\": " << c.num_warps << ", \"rows_per_cta\": "
     << c.rows_per_cta << ", \"group_size_m\": " << c.group_size_m << ", \"cluster_size\": " << c.cluster_size << "}";
  return os.str();
}
}  // namespace

void TraceWriter::begin(std::size_t keys, std::size_t candidates) {
  if (inner_) inner_->begin(keys, candidates);
}
void TraceWriter::key_begin(const cache::TuneKey& key, std::size_t candidates, int device) {
  if (inner_) inner_->key_begin(key, candidates, device);
}
void TraceWriter::note(const std::string& message) {
  if (inner_) inner_->note(message);
}
void TraceWriter::candidate_done(const cache::TuneKey& key, std::size_t index, const CandidateResult& r) {
  out_ << "{\"event\": \"candidate\", " << key_json(key) << ", \"config\": " << config_json(r.config)
       << ", \"default\": " << (r.is_default ? "true" : "false") << ", \"status\": " << json_string(to_string(r.status))
       << ", \"median_us\": " << (r.timing ? json_number(r.timing->stats.median) : "null")
       << ", \"reps\": " << (r.timing ? r.timing->stats.n : 0)
       << ", \"screen_us\": " << (r.screen ? json_number(r.screen->stats.median) : "null")
       << ", \"message\": " << json_string(r.message.substr(0, 300)) << "}\n";
  out_.flush();
  if (inner_) inner_->candidate_done(key, index, r);
}
void TraceWriter::key_done(const KeyResult& r) {
  out_ << "{\"event\": \"key\", " << key_json(r.key) << ", \"state\": " << json_string(to_string(r.state))
       << ", \"config\": " << (r.record ? config_json(r.record->config) : "null")
       << ", \"median_us\": " << (r.record ? json_number(r.record->timing.median_us) : "null")
       << ", \"device\": " << r.device << ", \"warm\": " << (r.warm ? "true" : "false")
       << ", \"prior\": " << (r.prior ? "true" : "false")
       << ", \"seconds\": " << json_number(r.seconds) << ", \"setup_s\": " << json_number(r.setup_seconds)
       << ", \"t_s\": " << json_number(r.finished_at) << ", \"phases\": {\"compile_wait_s\": " << json_number(r.phases.compile_wait_s) << ", \"load_s\": "
       << json_number(r.phases.load_s) << ", \"verify_s\": " << json_number(r.phases.verify_s)
       << ", \"reference_wait_s\": " << json_number(r.phases.reference_wait_s) << ", \"compare_s\": "
       << json_number(r.phases.compare_s) << ", \"warmup_s\": " << json_number(r.phases.warmup_s)
       << ", \"rewarm_s\": " << json_number(r.phases.rewarm_s) << ", \"rewarms\": " << r.phases.rewarms
       << ", \"reps_s\": " << json_number(r.phases.reps_s) << "}";
  {
    // S4's finalists: their interleaved medians (what chose the winner).
    bool first = true;
    for (const CandidateResult& c : r.outcome.candidates) {
      if (!c.final) continue;
      out_ << (first ? ", \"final\": [" : ", ") << "{\"config\": " << config_json(c.config)
           << ", \"median_us\": " << json_number(c.final->stats.median) << ", \"rounds\": " << c.final->stats.n
           << "}";
      first = false;
    }
    if (!first) out_ << "]";
  }
  if (!r.joint.empty()) {
    // The finalists' bwd_dwdb keys share the form (the key's traits as a
    // reduction; their partial rows differ), labelled as the text report
    // labels keys.
    const Traits& t = r.key.traits;
    out_ << ", \"dwdb_form\": " << json_string(dtype_label(rt::dwdb_traits(t, t.has_weight, t.has_bias)))
         << ", \"joint\": [";
    for (std::size_t i = 0; i < r.joint.size(); ++i) {
      const JointTiming& j = r.joint[i];
      auto opt = [](const std::optional<double>& v) { return v ? json_number(*v) : std::string("null"); };
      out_ << (i ? ", " : "") << "{\"config\": " << config_json(j.config) << ", \"partial_rows\": " << j.partial_rows
           << ", \"backward_us\": " << json_number(j.backward_us) << ", \"dwdb_default_us\": " << opt(j.dwdb_default_us)
           << ", \"dwdb_best_us\": " << opt(j.dwdb_best_us)
           << ", \"dwdb_config\": " << (j.dwdb ? config_json(*j.dwdb) : std::string("null"))
           << ", \"chosen\": " << (j.chosen ? "true" : "false")
           << ", \"finishes_in_kernel\": " << (j.finishes_in_kernel ? "true" : "false") << "}";
    }
    out_ << "]";
  }
  out_ << "}\n";
  out_.flush();
  if (inner_) inner_->key_done(r);
}

// ------------------------------------------------------------ progress
ProgressBar::ProgressBar(std::FILE* out, bool tty) : out_(out), tty_(tty), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::begin(std::size_t keys, std::size_t candidates) {
  keys_total_ = keys;
  cand_total_ = candidates;
  start_ = std::chrono::steady_clock::now();
  std::fprintf(out_, "tuning %zu key%s, %zu candidate configs\n", keys, keys == 1 ? "" : "s", candidates);
  std::fflush(out_);
}

void ProgressBar::set_devices(const std::vector<int>& ordinals) { multi_ = ordinals.size() > 1; }

void ProgressBar::key_begin(const cache::TuneKey& key, std::size_t, int device) {
  if (multi_) {
    current_by_device_[device] = key_label(key);
    current_.clear();
    for (const auto& [d, label] : current_by_device_)
      current_ += (current_.empty() ? "" : " | ") + ("gpu " + std::to_string(d) + ": ") + label;
  } else {
    current_ = key_label(key);
  }
  draw();
}

void ProgressBar::candidate_done(const cache::TuneKey&, std::size_t, const CandidateResult&) {
  ++cand_done_;
  draw();
}

void ProgressBar::key_done(const KeyResult& r) {
  if (r.state != KeyResult::State::cached) ++keys_done_;
  clear_line();
  std::string line = "[" + std::to_string(keys_done_) + "/" + std::to_string(keys_total_) + "] " + key_label(r.key) +
                     " (M=" + std::to_string(r.m) + "): " + to_string(r.state);
  if (r.record) {
    line += " " + short_config(r.record->config) + format(", %.2f us, %.0f GB/s", r.record->timing.median_us, r.record->gbps);
    if (r.record->default_median_us > 0 && r.record->timing.median_us > 0)
      line += format(", %.2fx vs default", r.record->default_median_us / r.record->timing.median_us);
  }
  if (!r.message.empty() && r.state != KeyResult::State::tuned) line += " — " + r.message.substr(0, 300);
  if (!r.outcome.candidates.empty()) {
    const SearchCounts c = r.outcome.counts();
    line += ", " + std::to_string(c.careful) + "/" + std::to_string(c.candidates) + " timed carefully";
  }
  if (r.warm) line += " [warm]";
  if (r.prior) line += " [prior]";
  if (r.state != KeyResult::State::cached) line += format(" (%.1f s)", r.seconds);
  if (multi_ && r.device >= 0) {
    const std::size_t mine = ++done_by_device_[r.device];
    line = "gpu " + std::to_string(r.device) + " (" + std::to_string(mine) + "): " + line;
  }
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  draw();
}

void ProgressBar::note(const std::string& message) {
  clear_line();
  std::fprintf(out_, "%s\n", message.c_str());
  std::fflush(out_);
}

void ProgressBar::clear_line() {
  if (tty_) std::fputs("\r\033[K", out_);
}

void ProgressBar::draw() {
  if (!tty_ || cand_total_ == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100) && cand_done_ < cand_total_) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double frac = std::min(1.0, static_cast<double>(cand_done_) / static_cast<double>(cand_total_));
  const int width = 30;
  const int filled = static_cast<int>(frac * width);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(width - filled), '.');
  const std::string eta = cand_done_ > 0 ? duration(elapsed / frac - elapsed) : "?";
  std::fprintf(out_, "\r\033[K[%s] %3.0f%%  %zu/%zu configs  %zu/%zu keys  %s elapsed, ETA %s  %s", bar.c_str(),
               100 * frac, cand_done_, cand_total_, keys_done_, keys_total_, duration(elapsed).c_str(), eta.c_str(),
               current_.c_str());
  std::fflush(out_);
}

}  // namespace lntune::tune
