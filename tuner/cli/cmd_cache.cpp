// lntune show | export | merge | info: the commands over cache files (no GPU
// needed, except for info's device lines).
#include "generator/instance.hpp"
#include <set>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "runtime/cache_binding.hpp"
#include "runtime/driver.hpp"
#include "runtime/nvrtc.hpp"
#include "tuner/cli/common.hpp"
#include "tuner/cli/json.hpp"
#include "tuner/fleet.hpp"
#include "tuner/report.hpp"
#include "lntune/lntune.hpp"

namespace lntune::cli {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool name_matches(const std::string& name, const std::string& pattern) {
  return pattern.empty() || name == pattern || lower(name).find(lower(pattern)) != std::string::npos;
}

// Opens a cache file read-only. A missing file is "does not exist"; anything
// else that is not a readable regular file (symbolic link loop, permission,
// FIFO, device) gets the cache layer's own message, checked before SQLite
// opens it.
cache::Database open_existing(const std::string& path, const char* doing) {
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (ec && st.type() == fs::file_type::not_found)
    throw Error(std::string("lntune: ") + doing + ": " + path + " does not exist");
  return cache::Database::open(path, cache::Database::Mode::read_only);
}

// A path or other text for the terminal.
std::string shown(const std::string& s) { return terminal_text(s); }

// ------------------------------------------------------------ show
int run_show(const std::string& db_path, const std::string& gpu, bool json) {
  std::vector<cache::TuneRecord> records;
  std::vector<std::string> files;
  auto keep = [&](const cache::TuneRecord& r) { return name_matches(r.key.gpu.name, gpu); };
  if (!db_path.empty()) {
    const cache::Database db = open_existing(db_path, "show");
    for (const auto& r : db.records())
      if (keep(r)) {
        records.push_back(r);
        files.push_back(db.path());
      }
  } else {
    auto stack = cache_stack();
    if (!stack) {
      std::cerr << "lntune: LNTUNE_CACHE=off: no cache\n";
    } else {
      // What lookups see: of records with the same key, the first layer's.
      for (const cache::Database* layer : stack->layers())
        for (const auto& r : layer->records()) {
          if (!keep(r)) continue;
          const bool seen = std::any_of(records.begin(), records.end(), [&](const auto& o) { return o.key == r.key; });
          if (seen) continue;
          records.push_back(r);
          files.push_back(layer->path());
        }
      if (!json && stack->layers().empty())
        std::cout << "no cache files yet (user cache: "
                  << (stack->writable_path() ? shown(*stack->writable_path()) : std::string("none")) << ")\n";
    }
  }
  if (json) {
    // Valid UTF-8 whatever the cache holds.
    for (auto& r : records) r = printable(r, true);
    for (auto& f : files) f = utf8_text(f);
    std::cout << tune::records_json(records, &files);
    return 0;
  }
  // Cache text is printed escaped: no terminal control sequences.
  for (auto& r : records) r = printable(r, false);
  for (auto& f : files) f = shown(f);
  // Table, one section per file.
  std::vector<std::string> order;
  for (const auto& f : files)
    if (std::find(order.begin(), order.end(), f) == order.end()) order.push_back(f);
  if (order.empty()) tune::print_records(std::cout, {});
  for (const auto& f : order) {
    std::vector<cache::TuneRecord> mine;
    for (std::size_t i = 0; i < records.size(); ++i)
      if (files[i] == f) mine.push_back(records[i]);
    std::cout << "== " << f << "\n";
    tune::print_records(std::cout, mine);
  }
  return 0;
}

// ------------------------------------------------------------ export
// The kernels the launcher loads for the records' winners (with the vector
// width an aligned call of that N gets): what a deployment needs shipped.
std::set<std::string> winners_kernels(const std::vector<cache::TuneRecord>& records) {
  std::set<std::string> hashes;
  for (const auto& r : records) {
    int vec = gen::max_vec(r.key.traits.x_dtype);
    while (vec > 1 && r.key.n % vec) vec /= 2;
    try {
      hashes.insert(rt::binary_hash(gen::render(gen::make_instance(r.key.traits, r.config, r.key.n, vec)),
                                    r.key.gpu.arch()));
    } catch (const Error&) {
      // A record this build cannot instantiate ships no kernel; the launcher
      // will not use its config either.
    }
  }
  return hashes;
}

int run_export(const std::string& db_path, const std::string& gpu, const std::string& out, bool all_kernels) {
  std::string src = db_path;
  if (src.empty()) {
    auto stack = cache_stack();
    if (!stack || !stack->writable_path())
      throw Error("lntune: export: no user cache to export from: pass --db PATH");
    src = *stack->writable_path();
  }
  const cache::Database db = open_existing(src, "export");
  std::optional<cache::GpuId> id;
  if (!gpu.empty()) {
    std::vector<cache::GpuId> exact, partial, all;
    for (const auto& r : db.records()) {
      const cache::GpuId& g = r.key.gpu;
      if (std::find(all.begin(), all.end(), g) == all.end()) all.push_back(g);
      if (g.name == gpu && std::find(exact.begin(), exact.end(), g) == exact.end()) exact.push_back(g);
      if (name_matches(g.name, gpu) && std::find(partial.begin(), partial.end(), g) == partial.end())
        partial.push_back(g);
    }
    const auto& found = exact.empty() ? partial : exact;
    auto list = [](const std::vector<cache::GpuId>& v) {
      std::string s;
      for (const auto& g : v) s += (s.empty() ? "" : "; ") + shown(g.name) + " (" + g.arch() + ", " + std::to_string(g.sm_count) + " SMs)";
      return s.empty() ? std::string("none") : s;
    };
    if (found.empty())
      throw Error("lntune: export: no records for GPU '" + gpu + "' in " + src + " (GPUs there: " + list(all) + ")");
    if (found.size() > 1)
      throw Error("lntune: export: '" + gpu + "' matches several GPUs in " + src + ": " + list(found) +
                  "; give the full name");
    id = found.front();
  }
  std::set<std::string> winners;
  if (!all_kernels) winners = winners_kernels(db.records(id));
  db.export_to(out, id, all_kernels ? nullptr : &winners);
  const cache::Database written = cache::Database::open(out, cache::Database::Mode::read_only);
  std::cout << "wrote " << shown(out) << ": " << written.records().size() << " records, " << written.binary_count()
            << " compiled kernels";
  if (id) std::cout << " for " << shown(id->name) << " (" << id->arch() << ", " << id->sm_count << " SMs)";
  std::cout << "\n";
  return 0;
}

// ------------------------------------------------------------ merge
int run_merge(const std::vector<std::string>& inputs, const std::string& out, bool check) {
  if (inputs.size() < 2) throw UsageError("lntune: merge: give at least two cache files to merge");
  if (out.empty() && !check) throw UsageError("lntune: merge: -o/--output FILE is required (or --check to only report)");
  std::vector<cache::Database> dbs;
  for (const auto& p : inputs) dbs.push_back(open_existing(p, "merge"));
  if (check) {
    std::vector<std::pair<std::string, std::vector<cache::TuneRecord>>> files;
    // Text from the files (GPU names, provenance) and their names made safe
    // for a terminal before the report prints them.
    for (std::size_t i = 0; i < dbs.size(); ++i) {
      std::vector<cache::TuneRecord> records = dbs[i].records();
      for (cache::TuneRecord& r : records) r = printable(r, false);
      files.emplace_back(shown(inputs[i]), std::move(records));
    }
    tune::print_merge_check(std::cout, tune::check_merge(files));
    if (out.empty()) return 0;
  }
  // Merged in memory (per key, the faster record wins), then written out as
  // one self-contained file.
  cache::Database merged = cache::Database::open(":memory:", cache::Database::Mode::read_write_create);
  for (const auto& d : dbs) merged.merge_from(d);
  merged.export_to(out);
  const cache::Database written = cache::Database::open(out, cache::Database::Mode::read_only);
  std::cout << "wrote " << shown(out) << ": " << written.records().size() << " records, " << written.binary_count()
            << " compiled kernels, from " << inputs.size() << " files\n";
  return 0;
}

// ------------------------------------------------------------ info
void describe_layer(const std::string& role, const cache::Database& db, const std::optional<cache::GpuId>& gpu) {
  auto gpu_text = [](const cache::GpuId& g) {
    return shown(g.name) + " (" + g.arch() + ", " + std::to_string(g.sm_count) + " SMs)";
  };
  const auto records = db.records();
  std::size_t mine = 0;
  std::vector<cache::GpuId> gpus;
  for (const auto& r : records) {
    if (gpu && r.key.gpu == *gpu) ++mine;
    if (std::find(gpus.begin(), gpus.end(), r.key.gpu) == gpus.end()) gpus.push_back(r.key.gpu);
  }
  std::cout << "  " << role << " " << shown(db.path()) << ": " << records.size() << " records";
  if (gpu) std::cout << " (" << mine << " for this GPU)";
  std::cout << ", " << db.binary_count() << " compiled kernels, schema v" << db.schema_version()
            << (db.read_only() ? ", read-only" : "") << "\n";
  for (const auto& g : gpus) std::cout << "      records for " << gpu_text(g) << "\n";
}

int run_info() {
  std::cout << "lntune " << version() << "\n";
  const auto archs = rt::supported_archs();
  const int nv = rt::nvrtc_version();
  std::cout << "NVRTC " << nv / 1000 << "." << (nv % 1000) / 10;
  if (!archs.empty()) std::cout << " (targets " << archs.front() << " .. " << archs.back() << ")";
  std::cout << "\n";
  std::optional<cache::GpuId> this_gpu;
  std::string why;
  if (rt::gpu_available(&why)) {
    const rt::DriverApi& d = rt::driver();
    int version = 0, count = 0;
    rt::check(d.DriverGetVersion(&version), "cuDriverGetVersion");
    rt::check(d.DeviceGetCount(&count), "cuDeviceGetCount");
    std::cout << "driver: CUDA " << version / 1000 << "." << (version % 1000) / 10 << "\n";
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      rt::check(d.DeviceGet(&dev, i), "cuDeviceGet");
      const rt::DeviceInfo info = rt::device_info(dev);
      if (i == 0) this_gpu = rt::gpu_id(info);
      std::ostringstream ratio;
      ratio.precision(3);
      ratio << info.dram_bytes_per_sm_cycle;
      std::cout << "gpu " << i << ": " << info.name << " (" << info.arch() << ", " << info.sm_count << " SMs, L2 "
                << (info.l2_bytes >> 20) << " MiB, DRAM "
                << (info.dram_bytes_per_sm_cycle > 0 ? ratio.str() + " B per SM cycle" : "clock unknown") << ")\n";
    }
  } else {
    std::cout << "no GPU: " << (why.rfind("lntune: ", 0) == 0 ? why.substr(8) : why) << "\n";
  }
  const char* env_cache = std::getenv("LNTUNE_CACHE");
  const char* env_path = std::getenv("LNTUNE_CACHE_PATH");
  std::cout << "cache search path (LNTUNE_CACHE=" << shown(env_cache ? env_cache : "") << ", LNTUNE_CACHE_PATH="
            << shown(env_path ? env_path : "") << "):\n";
  try {
    auto stack = cache_stack();
    if (!stack) {
      std::cout << "  disabled (LNTUNE_CACHE=off): default heuristic only\n";
      return 0;
    }
    const auto layers = stack->layers();
    const auto& user = stack->writable_path();
    if (!user)
      std::cout << "  user    none (set LNTUNE_CACHE, XDG_CACHE_HOME or HOME)\n";
    else if (layers.empty() || layers.front()->path() != *user)
      std::cout << "  user    " << shown(*user) << ": " << ([&] { std::error_code ec; return fs::exists(*user, ec); }() ? "empty, not a cache yet" : "not created yet")
                << "\n";
    // info only reads: the user cache is opened read-only, like any lookup.
    for (const cache::Database* l : layers) describe_layer(user && l->path() == *user ? "user   " : "shipped", *l, this_gpu);
  } catch (const std::exception& e) {
    std::cout << "  error: " << error_message(e) << "\n";
    return 1;
  }
  return 0;
}

// `info --json`: the same facts as one JSON object.
int run_info_json() {
  std::ostringstream buf;  // printed whole at the end: an error leaves stdout empty
  JsonWriter j(buf);
  j.begin_object().field("lntune_version", version());
  const int nv = rt::nvrtc_version();
  j.key("nvrtc").begin_object().field("version", std::to_string(nv / 1000) + "." + std::to_string((nv % 1000) / 10));
  j.key("archs").begin_array();
  for (const auto& a : rt::supported_archs()) j.value(a);
  j.end_array().end_object();
  std::optional<cache::GpuId> this_gpu;
  std::string why;
  if (rt::gpu_available(&why)) {
    const rt::DriverApi& d = rt::driver();
    int version = 0, count = 0;
    rt::check(d.DriverGetVersion(&version), "cuDriverGetVersion");
    rt::check(d.DeviceGetCount(&count), "cuDeviceGetCount");
    j.field("driver", std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10)).field("no_gpu", nullptr);
    j.key("gpus").begin_array();
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      rt::check(d.DeviceGet(&dev, i), "cuDeviceGet");
      const rt::DeviceInfo info = rt::device_info(dev);
      if (i == 0) this_gpu = rt::gpu_id(info);
      j.begin_object()
          .field("index", i)
          .field("name", info.name)
          .field("arch", info.arch())
          .field("sm_count", info.sm_count)
          .field("l2_bytes", static_cast<long long>(info.l2_bytes))
          .field("dram_bytes_per_sm_cycle", info.dram_bytes_per_sm_cycle)
          .end_object();
    }
    j.end_array();
  } else {
    j.field("driver", nullptr).field("no_gpu", why.rfind("lntune: ", 0) == 0 ? why.substr(8) : why);
    j.key("gpus").begin_array().end_array();
  }
  const char* env_cache = std::getenv("LNTUNE_CACHE");
  const char* env_path = std::getenv("LNTUNE_CACHE_PATH");
  j.key("cache").begin_object().field("LNTUNE_CACHE", env_cache).field("LNTUNE_CACHE_PATH", env_path);
  auto stack = cache_stack();  // a broken cache file: the error goes to stderr, exit 1
  j.field("disabled", !stack);
  if (stack) {
    const auto& user = stack->writable_path();
    j.field("user", user);
    j.key("files").begin_array();
    for (const cache::Database* l : stack->layers()) {
      const auto records = l->records();
      std::vector<cache::GpuId> gpus;
      std::size_t mine = 0;
      for (const auto& r : records) {
        if (this_gpu && r.key.gpu == *this_gpu) ++mine;
        if (std::find(gpus.begin(), gpus.end(), r.key.gpu) == gpus.end()) gpus.push_back(r.key.gpu);
      }
      j.begin_object()
          .field("path", l->path())
          .field("role", user && l->path() == *user ? "user" : "shipped")  // lookups open every layer read-only
          .field("records", records.size());
      j.key("records_for_this_gpu");
      if (this_gpu) j.value(mine); else j.null();
      j.field("compiled_kernels", l->binary_count()).field("schema_version", l->schema_version()).field("read_only", l->read_only());
      j.key("gpus").begin_array();
      for (const auto& g : gpus) write_gpu(j, g);
      j.end_array().end_object();
    }
    j.end_array();
  }
  j.end_object().end_object().finish();
  std::cout << buf.str();
  return kExitOk;
}

}  // namespace

void add_cache_commands(CLI::App& app, std::vector<Command>& out) {
  {
    struct O {
      std::string db, gpu;
      bool json = false;
    };
    auto o = std::make_shared<O>();
    CLI::App* sub = app.add_subcommand("show", "List tuned records (the search path, or one file)");
    sub->add_option("--db", o->db, "One cache file (default: every cache of the search path)");
    sub->add_option("--gpu", o->gpu, "Only records of GPUs whose name contains this");
    sub->add_flag("--json", o->json, "JSON array instead of a table");
    out.push_back({sub, [o] { return run_show(o->db, o->gpu, o->json); }});
  }
  {
    struct O {
      std::string db, gpu, out;
      bool all_kernels = false;
    };
    auto o = std::make_shared<O>();
    CLI::App* sub = app.add_subcommand("export", "Write a shippable cache file (records and the winners' compiled kernels)");
    sub->add_option("--db", o->db, "Source cache file (default: the user cache)");
    sub->add_option("--gpu", o->gpu, "Only this GPU's records and kernels (its name, or a unique part of it)");
    sub->add_option("-o,--output", o->out, "File to create (must not exist)")->required();
    sub->add_flag("--all-kernels", o->all_kernels, "Ship every compiled kernel, not only the tuned winners'");
    out.push_back({sub, [o] { return run_export(o->db, o->gpu, o->out, o->all_kernels); }});
  }
  {
    struct O {
      std::vector<std::string> inputs;
      std::string out;
      bool check = false;
    };
    auto o = std::make_shared<O>();
    CLI::App* sub = app.add_subcommand(
        "merge", "Merge cache files into a new one (per key, the faster median wins; ties: config order)");
    sub->add_option("inputs", o->inputs, "Cache files to merge (two or more)")->required()->expected(2, 1 << 20);
    sub->add_option("-o,--output", o->out, "File to create (must not exist; optional with --check)");
    sub->add_flag("--check", o->check,
                  "Report keys whose files disagree on the winner (same GPU model, different configs) and the timing "
                  "spread");
    out.push_back({sub, [o] { return run_merge(o->inputs, o->out, o->check); }});
  }
  {
    auto db = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    CLI::App* sub = app.add_subcommand("info", "GPU, driver, NVRTC, and the cache files in the search path");
    sub->add_option("--db", *db, "Cache file to use as the user cache");
    sub->add_flag("--json", *json, "One JSON object instead of text");
    out.push_back({sub, [db, json] {
                     use_db(*db);
                     return *json ? run_info_json() : run_info();
                   }});
  }
}

}  // namespace lntune::cli
