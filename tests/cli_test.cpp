// The `lntune` binary, run as a user runs it (ctest label "cpu"): help,
// version, argument errors, space, show/export/merge on caches built here
// with the cache API, and info/tune on a machine without a GPU (a clear
// message, no crash). On a GPU machine the no-GPU expectations are skipped.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "generator/instance.hpp"
#include "temp_dir.hpp"
#include "cache/cache.hpp"
#include "runtime/driver.hpp"
#include "runtime/nvrtc.hpp"

#ifndef LNTUNE_CLI
#error "LNTUNE_CLI must be the path of the lntune binary"
#endif

namespace {

namespace fs = std::filesystem;
using namespace lntune;

using lntune::testing::TempDir;

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs `env... lntune args` through the shell; HOME and the cache variables
// point into `tmp` so that no real cache is touched.
Result run(const TempDir& tmp, const std::string& args, const std::string& env = "") {
  const std::string err = tmp / "stderr.txt";
  const std::string cmd = "env -u LNTUNE_CACHE_PATH -u XDG_CACHE_HOME HOME='" + tmp.path() + "' LNTUNE_CACHE='" +
                          (tmp / "user.db") + "' " + env + " '" + LNTUNE_CLI + "' " + args + " 2>'" + err + "'";
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.err = slurp(err);
  return r;
}

bool has_gpu() { return rt::gpu_available(); }

const cache::GpuId kH100{"NVIDIA H100 80GB HBM3", 9, 0, 132};
const cache::GpuId kA100{"NVIDIA A100-SXM4-80GB", 8, 0, 108};

cache::TuneRecord record(const cache::GpuId& gpu, std::int64_t n, double median_us) {
  cache::TuneRecord r;
  r.key.gpu = gpu;
  r.key.traits = Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  r.key.n = n;
  r.key.m_bucket = 4;
  r.config = Config{4096, 8, 1, 0};
  r.timing = {median_us, median_us * 0.95, median_us * 1.05, 40};
  r.gbps = 2500;
  r.copy_gbps = 3000;
  r.default_median_us = median_us * 1.25;
  r.prov = {"0123456789abcdef", "0.1.0", 12040, 12040, "2024-05-01T12:00:00Z", cache::Origin::tuned, ""};
  return r;
}

void make_db(const std::string& path, const std::vector<cache::TuneRecord>& records,
             const std::vector<std::pair<std::string, std::string>>& binaries = {}) {
  cache::Database db = cache::Database::open(path, cache::Database::Mode::read_write_create);
  for (const auto& r : records) db.upsert(r);
  for (const auto& [hash, arch] : binaries) db.put_binary({hash, arch, 12040}, {'c', 'u', 'b', 'i', 'n'}, "k_" + hash);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// What lntune says without a driver ("no CUDA driver: ...") or with one but
// no device (e.g. the toolkit's stub libcuda: "no usable CUDA device: ...").
bool no_gpu_message(const std::string& err) {
  return contains(err, "lntune: no CUDA") || contains(err, "lntune: no usable CUDA");
}

// ------------------------------------------------------------ basics
TEST(Cli, HelpListsEverySubcommand) {
  TempDir tmp;
  const Result r = run(tmp, "--help");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* c : {"gen", "space", "compile", "tune", "show", "export", "merge", "info", "verify", "bench"})
    EXPECT_TRUE(contains(r.out, c)) << c;
  const Result t = run(tmp, "tune --help");
  EXPECT_EQ(t.code, 0);
  for (const char* o : {"--n", "--m", "--dtype", "--kernel", "--db", "--budget", "--device", "--force"})
    EXPECT_TRUE(contains(t.out, o)) << o;
}

TEST(Cli, Version) {
  TempDir tmp;
  const Result r = run(tmp, "--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "lntune 0.1.0")) << r.out;
}

TEST(Cli, NoSubcommandIsAnError) {
  TempDir tmp;
  const Result r = run(tmp, "");
  EXPECT_NE(r.code, 0);
}

TEST(Cli, GenBadArgumentsNameTheOption) {
  TempDir tmp;
  Result r = run(tmp, "gen --kernel fwd --dtype bf16");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, "--n")) << r.err;
  r = run(tmp, "gen --kernel nope --dtype bf16 --n 1024");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, "--kernel")) << r.err;
  r = run(tmp, "gen --kernel fwd --dtype fp8 --n 1024");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, "--dtype")) << r.err;
  r = run(tmp, "gen --kernel fwd --dtype bf16 --n 1024 --num-warps 3");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "lntune: ") && contains(r.err, "num_warps")) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, GenPrintsCuda) {
  TempDir tmp;
  const Result r = run(tmp, "gen --kernel fwd --dtype bf16 --n 4096");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "extern \"C\"")) << r.out.substr(0, 400);
}

TEST(Cli, GenFlattenInlinesTheHeaders) {
  TempDir tmp;
  const Result plain = run(tmp, "gen --kernel bwd_dx --dtype bf16 --n 4096");
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_TRUE(contains(plain.out, "#include \"lntune/kernels/bwd_dx.cuh\"")) << plain.out;
  const Result r = run(tmp, "gen --kernel bwd_dx --dtype bf16 --n 4096 --flatten");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "#include")) << r.out.substr(0, 400);
  EXPECT_TRUE(contains(r.out, "struct RowShape"));
  EXPECT_TRUE(contains(r.out, "layer_norm_bwd_dx_single_tile"));
  EXPECT_TRUE(contains(r.out, "extern \"C\" __global__"));
}

TEST(Cli, SpaceListsConfigsAndMarksTheDefault) {
  TempDir tmp;
  const Result r = run(tmp, "space --kernel fwd --dtype bf16 --n 4096");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "configs for fwd bf16 N=4096")) << r.out;
  EXPECT_TRUE(contains(r.out, "block_size num_warps rows_per_cta"));
  EXPECT_TRUE(contains(r.out, "(default)")) << r.out;
}

// ------------------------------------------------------------ tune's argument errors (before any GPU use)
TEST(Cli, TuneBadListsExitWithUsageError) {
  TempDir tmp;
  Result r = run(tmp, "tune --n 10:5:1");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--n: START > STOP")) << r.err;
  r = run(tmp, "tune --n 1024,x");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--n: 'x' is not an integer")) << r.err;
  r = run(tmp, "tune --kernel bwd_dwdb");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--kernel")) << r.err;
  r = run(tmp, "tune --dtype fp16,fp8");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--dtype: unknown dtype 'fp8'")) << r.err;
  r = run(tmp, "tune --w-dtype fp16 --dtype bf16");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--w-dtype")) << r.err;
  r = run(tmp, "tune --budget -3");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, "--budget")) << r.err;
}

TEST(Cli, TuneNormOptionsAreChecked) {
  TempDir tmp;
  Result r = run(tmp, "tune --op layernorm,cubic");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--op: unknown norm 'cubic' (layernorm, rmsnorm)")) << r.err;
  r = run(tmp, "tune --op rmsnorm --residual-dtype fp32");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--residual-dtype needs --residual")) << r.err;
  r = run(tmp, "tune --op rmsnorm --residual --residual-dtype fp8");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--residual-dtype: unknown dtype 'fp8'")) << r.err;
  r = run(tmp, "tune --help");
  EXPECT_TRUE(contains(r.out, "--op")) << r.out;
  EXPECT_TRUE(contains(r.out, "--residual")) << r.out;
}

// ------------------------------------------------------------ no GPU
TEST(Cli, TuneWithoutGpuSaysWhyAndFails) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU";
  TempDir tmp;
  const Result r = run(tmp, "tune --n 1024 --dtype bf16 --kernel fwd --db '" + (tmp / "t.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(no_gpu_message(r.err)) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "t.db"));  // nothing created
  for (const char* cmd : {"bench --n 1024", "verify"}) {
    const Result b = run(tmp, cmd);
    EXPECT_EQ(b.code, 1) << cmd;
    EXPECT_TRUE(no_gpu_message(b.err)) << cmd << ": " << b.err;
  }
}

TEST(Cli, InfoWithoutGpu) {
  TempDir tmp;
  make_db(tmp / "user.db", {record(kH100, 4096, 10)}, {{"h1", "sm_90"}});
  const Result r = run(tmp, "info");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "lntune 0.1.0"));
  EXPECT_TRUE(contains(r.out, "NVRTC "));
  if (has_gpu()) {
    EXPECT_TRUE(contains(r.out, "\ngpu 0: ")) << r.out;
  } else {
    EXPECT_TRUE(contains(r.out, "no GPU: no CUDA") || contains(r.out, "no GPU: no usable CUDA")) << r.out;
    EXPECT_FALSE(contains(r.out, "\ngpu ")) << r.out;  // scripts/run.sh greps "^gpu"
  }
  EXPECT_TRUE(contains(r.out, tmp / "user.db")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 records")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 compiled kernels")) << r.out;
  EXPECT_TRUE(contains(r.out, "NVIDIA H100 80GB HBM3")) << r.out;
  const Result off = run(tmp, "info", "LNTUNE_CACHE=off");
  EXPECT_EQ(off.code, 0);
  EXPECT_TRUE(contains(off.out, "disabled (LNTUNE_CACHE=off)")) << off.out;
}

// ------------------------------------------------------------ show
TEST(Cli, ShowJsonOnEmptyAndFilledCaches) {
  TempDir tmp;
  make_db(tmp / "empty.db", {});
  Result r = run(tmp, "show --json --db '" + (tmp / "empty.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[]\n");
  // No cache file at all: an empty list, nothing created.
  r = run(tmp, "show --json");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[]\n");
  EXPECT_FALSE(fs::exists(tmp / "user.db"));

  make_db(tmp / "c.db", {record(kH100, 4096, 10), record(kA100, 8192, 20)});
  r = run(tmp, "show --json --db '" + (tmp / "c.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* part : {"\"n\": 4096", "\"n\": 8192", "\"name\": \"NVIDIA H100 80GB HBM3\"", "\"origin\": \"tuned\"",
                           "\"speedup_vs_default\": 1.25", "\"block_size\": 4096", "\"file\": "})
    EXPECT_TRUE(contains(r.out, part)) << part << " in " << r.out;
  r = run(tmp, "show --json --gpu a100 --db '" + (tmp / "c.db") + "'");
  EXPECT_FALSE(contains(r.out, "\"n\": 4096")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"n\": 8192")) << r.out;
  // The table.
  r = run(tmp, "show --db '" + (tmp / "c.db") + "'");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "b4096 w8 r1")) << r.out;
  EXPECT_TRUE(contains(r.out, "1.25x")) << r.out;
  EXPECT_TRUE(contains(r.out, "2 records") || contains(r.out, "1 record")) << r.out;
  // Through the search path: user cache plus a shipped one.
  make_db(tmp / "user.db", {record(kH100, 4096, 9)});
  r = run(tmp, "show --json", "LNTUNE_CACHE_PATH='" + (tmp / "c.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "user.db")) << r.out;
  EXPECT_TRUE(contains(r.out, "c.db")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"median_us\": 9")) << r.out;   // the user's record shadows the shipped one
  EXPECT_FALSE(contains(r.out, "\"median_us\": 10,")) << r.out;
}

TEST(Cli, ShowMissingOrBrokenFileFails) {
  TempDir tmp;
  Result r = run(tmp, "show --db '" + (tmp / "nope.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "does not exist")) << r.err;
  std::ofstream(tmp / "text.db") << "not a database at all, just text\n";
  r = run(tmp, "show --db '" + (tmp / "text.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "lntune")) << r.err;
}

// ------------------------------------------------------------ export / merge
// By default an export ships only the kernels the winners need, not every
// candidate compiled while tuning.
TEST(Cli, ExportShipsOnlyTheWinnersKernels) {
  TempDir tmp;
  const cache::TuneRecord rec = record(kH100, 4096, 10);
  const std::string winner =
      rt::binary_hash(gen::render(gen::make_instance(rec.key.traits, rec.config, rec.key.n, 8)), "sm_90");
  make_db(tmp / "src.db", {rec}, {{winner, "sm_90"}, {"loser", "sm_90"}});
  Result r = run(tmp, "export --db '" + (tmp / "src.db") + "' --gpu h100 -o '" + (tmp / "ship.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "1 records, 1 compiled kernels")) << r.out;
  cache::Database out = cache::Database::open(tmp / "ship.db", cache::Database::Mode::read_only);
  EXPECT_TRUE(out.get_binary({winner, "sm_90", 12040}));
  EXPECT_FALSE(out.get_binary({"loser", "sm_90", 12040}));
}

TEST(Cli, ExportRoundTripFilteredByGpu) {
  TempDir tmp;
  make_db(tmp / "src.db", {record(kH100, 4096, 10), record(kH100, 8192, 12), record(kA100, 4096, 15)},
          {{"h1", "sm_90"}, {"a1", "sm_80"}});
  Result r = run(tmp, "export --all-kernels --db '" + (tmp / "src.db") + "' --gpu 'NVIDIA H100 80GB HBM3' -o '" +
                         (tmp / "h100.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "2 records, 1 compiled kernels")) << r.out;
  {
    cache::Database out = cache::Database::open(tmp / "h100.db", cache::Database::Mode::read_only);
    const auto recs = out.records();
    ASSERT_EQ(recs.size(), 2u);
    EXPECT_EQ(recs[0], record(kH100, 4096, 10));
    EXPECT_EQ(out.binary_count(), 1u);
    EXPECT_TRUE(out.get_binary({"h1", "sm_90", 12040}));
  }
  // A unique part of the name is enough; an existing output is refused.
  r = run(tmp, "export --db '" + (tmp / "src.db") + "' --gpu a100 -o '" + (tmp / "h100.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "exists")) << r.err;
  r = run(tmp, "export --db '" + (tmp / "src.db") + "' --gpu a100 -o '" + (tmp / "a100.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "1 records")) << r.out;
  // Unknown GPU: names the GPUs that are there.
  r = run(tmp, "export --db '" + (tmp / "src.db") + "' --gpu V100 -o '" + (tmp / "v.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "no records for GPU 'V100'") && contains(r.err, "NVIDIA A100")) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "v.db"));
  // Default source: the user cache.
  make_db(tmp / "user.db", {record(kA100, 1024, 3)});
  r = run(tmp, "export -o '" + (tmp / "all.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "1 records")) << r.out;
  // -o is required.
  r = run(tmp, "export --gpu a100");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, "--output")) << r.err;
}

TEST(Cli, MergeKeepsTheFasterRecordPerKey) {
  TempDir tmp;
  make_db(tmp / "a.db", {record(kH100, 4096, 10), record(kH100, 8192, 30)}, {{"h1", "sm_90"}});
  make_db(tmp / "b.db", {record(kH100, 4096, 12), record(kH100, 8192, 20), record(kA100, 1024, 5)}, {{"h2", "sm_90"}});
  Result r = run(tmp, "merge '" + (tmp / "a.db") + "' '" + (tmp / "b.db") + "' -o '" + (tmp / "m.db") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "3 records, 2 compiled kernels")) << r.out;
  cache::Database m = cache::Database::open(tmp / "m.db", cache::Database::Mode::read_only);
  EXPECT_DOUBLE_EQ(m.find(record(kH100, 4096, 0).key)->timing.median_us, 10);
  EXPECT_DOUBLE_EQ(m.find(record(kH100, 8192, 0).key)->timing.median_us, 20);
  EXPECT_TRUE(m.find(record(kA100, 1024, 0).key));
  EXPECT_EQ(m.find(record(kH100, 8192, 0).key)->prov.origin_text(), "merged:b.db");
  // Round trip: show reads the merged file.
  r = run(tmp, "show --json --db '" + (tmp / "m.db") + "'");
  EXPECT_TRUE(contains(r.out, "\"origin\": \"merged:b.db\"")) << r.out;
  // Errors.
  r = run(tmp, "merge '" + (tmp / "a.db") + "' -o '" + (tmp / "m2.db") + "'");
  EXPECT_NE(r.code, 0);
  r = run(tmp, "merge '" + (tmp / "a.db") + "' '" + (tmp / "b.db") + "' -o '" + (tmp / "m.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "exists")) << r.err;
  r = run(tmp, "merge '" + (tmp / "a.db") + "' '" + (tmp / "missing.db") + "' -o '" + (tmp / "m3.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "missing.db does not exist")) << r.err;
}

}  // namespace
