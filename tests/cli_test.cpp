// The `lntune` binary, run as a user runs it (ctest label "cpu"): help,
// version, argument errors, space, show/export/merge on caches built here
// with the cache API, and info/tune on a machine without a GPU (a clear
// message, no crash). On a GPU machine the no-GPU expectations are skipped.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <optional>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "generator/instance.hpp"
#include "temp_dir.hpp"
#include "cache/cache.hpp"
#include "lntune/version.h"
#include "runtime/driver.hpp"
#include "runtime/nvrtc.hpp"
#include "tuner/cli/json.hpp"

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

// A strict JSON checker (RFC 8259 grammar; one value, then only whitespace):
// enough to tell that --json output parses, without a JSON library.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool valid() {
    ws();
    if (!value()) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  bool value() {
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{': return container('}', true);
      case '[': return container(']', false);
      case '"': return string();
      case 't': return word("true");
      case 'f': return word("false");
      case 'n': return word("null");
      default: return number();
    }
  }
  bool container(char close, bool object) {
    ++i_;
    ws();
    if (peek(close)) return ++i_, true;
    for (;;) {
      if (object) {
        if (!string()) return false;
        ws();
        if (!peek(':')) return false;
        ++i_;
        ws();
      }
      if (!value()) return false;
      ws();
      if (peek(close)) return ++i_, true;
      if (!peek(',')) return false;
      ++i_;
      ws();
    }
  }
  bool string() {
    if (!peek('"')) return false;
    for (++i_; i_ < s_.size(); ++i_) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k)
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return false;
        }
      }
    }
    return false;
  }
  bool number() {
    const std::size_t start = i_;
    if (peek('-')) ++i_;
    if (peek('0')) {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (peek('.') && (++i_, !digits())) return false;
    if (peek('e') || peek('E')) {
      ++i_;
      if (peek('+') || peek('-')) ++i_;
      if (!digits()) return false;
    }
    return i_ > start;
  }
  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ > start;
  }
  bool word(const char* w) {
    const std::string t(w);
    if (s_.compare(i_, t.size(), t) != 0) return false;
    i_ += t.size();
    return true;
  }
  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void ws() {
    while (i_ < s_.size() && std::string(" \t\r\n").find(s_[i_]) != std::string::npos) ++i_;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

bool valid_json(const std::string& s) { return JsonChecker(s).valid(); }

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
  for (const char* o : {"--n", "--m", "--dtype", "--kernel", "--db", "--budget", "--device", "--force", "--reference"})
    EXPECT_TRUE(contains(t.out, o)) << o;
}

// One version, from project(VERSION) through lntune/version.h.
TEST(Cli, Version) {
  TempDir tmp;
  const Result r = run(tmp, "--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, std::string("lntune ") + LNTUNE_VERSION + "\n");
}

// Exit codes: 0 success, 1 failure, 2 usage error (CLI11's parse errors
// included), 3 some items failed; --help lists them.
TEST(Cli, HelpDocumentsExitCodes) {
  TempDir tmp;
  const Result r = run(tmp, "--help");
  EXPECT_EQ(r.code, 0);
  for (const char* part : {"Exit codes:", "  0  success", "  1  failure", "  2  usage error", "  3  the command ran"})
    EXPECT_TRUE(contains(r.out, part)) << part << " in " << r.out;
}

TEST(Cli, NoSubcommandIsAnError) {
  TempDir tmp;
  const Result r = run(tmp, "");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "subcommand")) << r.err;
}

TEST(Cli, ParseErrorsAreUsageErrors) {
  TempDir tmp;
  // CLI11's own exit codes (105, 106, 109, 114, ...) never leak out.
  Result r = run(tmp, "frobnicate");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "frobnicate")) << r.err;
  r = run(tmp, "show --no-such-option");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--no-such-option")) << r.err;
  r = run(tmp, "space --kernel fwd --dtype bf16 --n notanumber");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--n")) << r.err;
  r = run(tmp, "space --kernel fwd --dtype bf16 --n 0");
  EXPECT_EQ(r.code, 2) << r.err;
  r = run(tmp, "tune --device -1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--device")) << r.err;
  r = run(tmp, "compile --kernel fwd --dtype bf16 --n 1024");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--output")) << r.err;
  r = run(tmp, "info --json extra");
  EXPECT_EQ(r.code, 2) << r.err;
  // --reference is gpu or cpu (checked before any GPU is looked for).
  r = run(tmp, "tune --reference host --dry-run --n 1024 --m 8");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--reference")) << r.err;
  r = run(tmp, "tune --reference cpu --dry-run --n 1024 --m 8");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Cli, GenBadArgumentsNameTheOption) {
  TempDir tmp;
  Result r = run(tmp, "gen --kernel fwd --dtype bf16");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--n")) << r.err;
  r = run(tmp, "gen --kernel nope --dtype bf16 --n 1024");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--kernel")) << r.err;
  r = run(tmp, "gen --kernel fwd --dtype fp8 --n 1024");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--dtype")) << r.err;
  // A config the kernel cannot have is a bad option value: a usage error.
  r = run(tmp, "gen --kernel fwd --dtype bf16 --n 1024 --num-warps 3");
  EXPECT_EQ(r.code, 2);
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
// A usage error: exit code 2 and a message naming the problem.
void expect_usage(const TempDir& tmp, const std::string& args, const std::string& message) {
  const Result r = run(tmp, args);
  EXPECT_EQ(r.code, 2) << args;
  EXPECT_TRUE(contains(r.err, message)) << args << ": " << r.err;
}

TEST(Cli, TuneBadListsExitWithUsageError) {
  TempDir tmp;
  expect_usage(tmp, "tune --n 10:5:1", "--n: START > STOP");
  expect_usage(tmp, "tune --n 1024,x", "--n: 'x' is not an integer");
  expect_usage(tmp, "tune --kernel bwd_dwdb", "--kernel");
  expect_usage(tmp, "tune --dtype fp16,fp8", "--dtype: unknown dtype 'fp8'");
  expect_usage(tmp, "tune --w-dtype fp16 --dtype bf16", "--w-dtype");
  expect_usage(tmp, "tune --budget -3", "--budget");
  expect_usage(tmp, "bench --n 0", "--n");
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

// Every command that names a key takes the variant options, checked before
// any GPU use: a bad value is a usage error naming the option and the value.
TEST(Cli, VariantOptionsAreCheckedEverywhere) {
  TempDir tmp;
  const std::string key = " --kernel fwd --dtype bf16 --n 4096";
  for (const std::string& cmd :
       {std::string("tune"), std::string("bench"), "gen" + key, "space" + key, "compile" + key + " -o x.cubin"}) {
    SCOPED_TRACE(cmd);
    expect_usage(tmp, cmd + " --y-dtype fp8", "--y-dtype: unknown dtype 'fp8' (fp32, fp16, bf16)");
    expect_usage(tmp, cmd + " --residual --residual-dtype int8", "--residual-dtype: unknown dtype 'int8' (fp32, fp16, bf16)");
    expect_usage(tmp, cmd + " --residual-dtype fp32", "--residual-dtype needs --residual");
    expect_usage(tmp, cmd + " --zero-centered --no-weight",
                 "--zero-centered needs a weight (it is applied as 1 + w): drop --no-weight");
    expect_usage(tmp, cmd + " --op groupnorm", "--op: unknown norm 'groupnorm' (layernorm, rmsnorm)");
    const Result h = run(tmp, cmd + " --help");
    EXPECT_EQ(h.code, 0) << h.err;
    for (const char* opt : {"--op", "--residual", "--residual-dtype", "--zero-centered", "--y-dtype"})
      EXPECT_TRUE(contains(h.out, opt)) << opt << " in " << h.out;
  }
  // gen, space and compile name one kernel: one norm.
  expect_usage(tmp, "gen" + key + " --op layernorm,rmsnorm", "--op: one norm here (layernorm or rmsnorm)");
}

// tune --dry-run: the problems a tune covers, without a GPU. The default
// grid adds RMSNorm with and without a residual for fp16 and bf16 (not fp32).
TEST(Cli, TuneDryRunShowsTheDefaultGridWithItsVariants) {
  TempDir tmp;
  Result r = run(tmp, "tune --dry-run --n 4096");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* line : {"fwd bf16 N=4096 M=4096\n", "bwd_dx fp32 N=4096 M=4096\n", "fwd bf16 noB rms N=4096 M=4096\n",
                           "fwd bf16 noB rms +res N=4096 M=4096\n", "bwd_dx fp16 noB rms N=4096 M=4096\n",
                           "bwd_dx fp16 noB rms +res N=4096 M=4096\n", "14 problems\n"})
    EXPECT_TRUE(contains(r.out, line)) << line << " in " << r.out;
  EXPECT_FALSE(contains(r.out, "fp32 noB rms")) << r.out;
  EXPECT_FALSE(fs::exists(tmp / "user.db"));  // nothing created
  // JSON: every target carries its variant (the names of show --json).
  r = run(tmp, "tune --dry-run --json --n 4096 --kernel fwd --dtype bf16");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(valid_json(r.out)) << r.out;
  for (const char* part : {"\"norm\": \"layernorm\", \"residual_dtype\": null, \"zero_centered\": false, \"y_dtype\": \"bf16\"",
                           "\"norm\": \"rmsnorm\", \"residual_dtype\": \"bf16\", \"zero_centered\": false",
                           "\"n\": 4096, \"m\": 4096", "\"count\": 3"})
    EXPECT_TRUE(contains(r.out, part)) << part << " in " << r.out;
}

TEST(Cli, TuneDryRunAppliesEveryVariantOption) {
  TempDir tmp;
  // One explicit variant: no default grid.
  Result r = run(tmp, "tune --dry-run --n 1024 --dtype bf16 --kernel fwd,bwd --op rmsnorm --residual --residual-dtype fp32 "
                      "--zero-centered --y-dtype fp32");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "fwd bf16 noB rms +resfp32 zc ->fp32 N=1024 M=4096\n"
                   "bwd_dx bf16 noB rms +resfp32 zc ->fp32 N=1024 M=4096\n2 problems\n");
  r = run(tmp, "tune --dry-run --json --n 1024 --dtype bf16 --kernel fwd --op rmsnorm --residual --residual-dtype fp32 "
               "--zero-centered --y-dtype fp32");
  EXPECT_TRUE(valid_json(r.out)) << r.out;
  EXPECT_TRUE(contains(r.out, "\"norm\": \"rmsnorm\", \"residual_dtype\": \"fp32\", \"zero_centered\": true, "
                              "\"y_dtype\": \"fp32\"")) << r.out;
  // Both norms; the output dtype alone; an output dtype equal to the row's is no variant.
  r = run(tmp, "tune --dry-run --n 1024 --dtype fp32 --kernel fwd --op layernorm,rmsnorm --zero-centered");
  EXPECT_EQ(r.out, "fwd fp32 zc N=1024 M=4096\nfwd fp32 noB rms zc N=1024 M=4096\n2 problems\n") << r.err;
  r = run(tmp, "tune --dry-run --n 1024 --dtype fp32 --kernel bwd --y-dtype bf16");
  EXPECT_EQ(r.out, "bwd_dx fp32 ->bf16 N=1024 M=4096\n1 problem\n") << r.err;
  r = run(tmp, "tune --dry-run --n 1024 --dtype fp16 --kernel fwd --y-dtype fp16");
  EXPECT_EQ(r.out, "fwd fp16 N=1024 M=4096\n1 problem\n") << r.err;
}

// gen and space show the variant's kernel: its instance name carries the variant.
TEST(Cli, GenAndSpaceTakeTheVariant) {
  TempDir tmp;
  const std::string v = " --kernel bwd_dx --dtype bf16 --n 4096 --op rmsnorm --residual --residual-dtype fp32 "
                        "--zero-centered --y-dtype fp32";
  Result r = run(tmp, "space" + v);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "configs for bwd_dx bf16 rms +resfp32 zc ->fp32 N=4096")) << r.out;
  EXPECT_TRUE(contains(r.out, "_rms")) << r.out;
  EXPECT_TRUE(contains(r.out, "_rfp32")) << r.out;
  r = run(tmp, "gen" + v);
  EXPECT_EQ(r.code, 0) << r.err;
  const Result plain = run(tmp, "gen --kernel bwd_dx --dtype bf16 --n 4096");
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(r.out, plain.out);
  EXPECT_TRUE(contains(r.out, "_rms")) << r.out;
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
  // --json: the error still goes to stderr, and stdout stays empty (never
  // half a document).
  for (const char* cmd : {"tune --json --n 1024 --kernel fwd", "bench --json --n 1024", "verify --json"}) {
    const Result b = run(tmp, cmd);
    EXPECT_EQ(b.code, 1) << cmd;
    EXPECT_TRUE(no_gpu_message(b.err)) << cmd << ": " << b.err;
    EXPECT_EQ(b.out, "") << cmd;
  }
}

TEST(Cli, InfoWithoutGpu) {
  TempDir tmp;
  make_db(tmp / "user.db", {record(kH100, 4096, 10)}, {{"h1", "sm_90"}});
  const Result r = run(tmp, "info");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, std::string("lntune ") + LNTUNE_VERSION + "\n")) << r.out;
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

TEST(Cli, InfoJson) {
  TempDir tmp;
  make_db(tmp / "user.db", {record(kH100, 4096, 10), record(kA100, 1024, 5)}, {{"h1", "sm_90"}});
  make_db(tmp / "shipped.db", {record(kH100, 8192, 12)});
  const Result r = run(tmp, "info --json", "LNTUNE_CACHE_PATH='" + (tmp / "shipped.db") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(valid_json(r.out)) << r.out;
  for (const std::string& part :
       {std::string("\"lntune_version\": \"") + LNTUNE_VERSION + "\"", std::string("\"nvrtc\": {\"version\": "),
        std::string("\"archs\": [\""), "\"path\": \"" + (tmp / "user.db") + "\", \"role\": \"user\", \"records\": 2",
        "\"path\": \"" + (tmp / "shipped.db") + "\", \"role\": \"shipped\", \"records\": 1",
        std::string("\"compiled_kernels\": 1"), std::string("\"name\": \"NVIDIA A100-SXM4-80GB\"")})
    EXPECT_TRUE(contains(r.out, part)) << part << " in " << r.out;
  if (has_gpu()) {
    EXPECT_TRUE(contains(r.out, "\"no_gpu\": null")) << r.out;
  } else {
    EXPECT_TRUE(contains(r.out, "\"driver\": null, \"no_gpu\": \"no ")) << r.out;
    EXPECT_TRUE(contains(r.out, "\"gpus\": []")) << r.out;
  }
  const Result off = run(tmp, "info --json", "LNTUNE_CACHE=off");
  EXPECT_EQ(off.code, 0) << off.err;
  EXPECT_TRUE(valid_json(off.out)) << off.out;
  EXPECT_TRUE(contains(off.out, "\"LNTUNE_CACHE\": \"off\"") && contains(off.out, "\"disabled\": true")) << off.out;
  // A broken cache file: exit 1, the reason on stderr, nothing on stdout.
  std::ofstream(tmp / "broken.db") << "not a database at all, just text\n";
  const Result bad = run(tmp, "info --json", "LNTUNE_CACHE_PATH='" + (tmp / "broken.db") + "'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_TRUE(contains(bad.err, "lntune: ")) << bad.err;
}

// tune/bench/verify --json need a GPU; the writer they share is checked
// here: nesting, empty containers, escapes, null for NaN/Inf and absent values.
TEST(Cli, JsonWriterOutputIsValidJson) {
  std::ostringstream os;
  cli::JsonWriter j(os);
  j.begin_object().field("s", std::string("quote\" backslash\\ newline\n tab\t bell\a")).field("n", 42);
  j.field("x", 2.5).field("nan", std::nan("")).field("inf", HUGE_VAL);
  j.field("none", nullptr).field("opt", std::optional<std::string>{}).field("yes", true);
  j.key("empty").begin_array().end_array().key("obj").begin_object().end_object();
  j.key("rows").begin_array();
  for (int i = 0; i < 3; ++i) {
    j.begin_object().key("config");
    cli::write_config(j, Config{1024, 4, 1, 0, 1});
    j.key("gpu");
    cli::write_gpu(j, kH100);
    j.end_object();
  }
  j.end_array().end_object().finish();
  const std::string out = os.str();
  EXPECT_TRUE(valid_json(out)) << out;
  EXPECT_TRUE(contains(out, "\"nan\": null, \"inf\": null, \"none\": null, \"opt\": null")) << out;
  EXPECT_TRUE(contains(out, "\\n tab\\t bell\\u0007")) << out;
  EXPECT_TRUE(contains(out, "\"block_size\": 1024, \"num_warps\": 4")) << out;
}

TEST(Cli, JsonCheckerRejectsWhatIsNotJson) {
  // The checker the --json tests rely on can fail.
  EXPECT_TRUE(valid_json("{\"a\": [1, -2.5e3, true, null, \"x\\n\"], \"b\": {}}\n"));
  for (const char* bad : {"", "{", "{\"a\": 1,}", "[1 2]", "{a: 1}", "[01]", "\"\t\"", "[nan]", "{} {}", "[1.]"})
    EXPECT_FALSE(valid_json(bad)) << bad;
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
  EXPECT_EQ(r.code, 0) << r.err;
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
  EXPECT_EQ(r.code, 2);
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
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\"origin\": \"merged:b.db\"")) << r.out;
  // Errors.
  r = run(tmp, "merge '" + (tmp / "a.db") + "' -o '" + (tmp / "m2.db") + "'");
  EXPECT_EQ(r.code, 2);
  r = run(tmp, "merge '" + (tmp / "a.db") + "' '" + (tmp / "b.db") + "' -o '" + (tmp / "m.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "exists")) << r.err;
  r = run(tmp, "merge '" + (tmp / "a.db") + "' '" + (tmp / "missing.db") + "' -o '" + (tmp / "m3.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "missing.db does not exist")) << r.err;
}

}  // namespace

// ------------------------------------------------------------ hardening (issue 14)
namespace hardening {

// `cmd` as user 'nobody' when running as root (root reads anything).
std::string as_nobody() { return ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : ""; }

// Runs with a time limit: a hang shows as code 124.
// `prefix` goes before the command (e.g. as_nobody()).
Result run_limited(const TempDir& tmp, const std::string& args, const std::string& env = "",
                   const std::string& prefix = "") {
  const std::string err = tmp / "stderr.txt";
  const std::string cmd = prefix + "env -u LNTUNE_CACHE_PATH -u XDG_CACHE_HOME HOME='" + tmp.path() +
                          "' LNTUNE_CACHE='" + (tmp / "user.db") + "' " + env + " timeout 60 '" + LNTUNE_CLI + "' " +
                          args + " 2>'" + err + "' </dev/null";
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

// True if `s` is valid UTF-8 (no overlongs, surrogates or code points past
// U+10FFFF).
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3fu);
    }
    const std::uint32_t min = len == 1 ? 0 : len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

}  // namespace hardening

// Integer overflow in list parsing used to trip UBSan (and, in a release
// build, allocate until memory ran out).
TEST(CliHardening, ListOverflowIsAClearUsageError) {
  TempDir tmp;
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"tune --n 9223372036854775800:9223372036854775807:5",
       "lntune: --n: 9223372036854775800 is out of range (1 .. 2147483648)"},
      {"tune --n 1024 --m 9223372036854775800:9223372036854775807:5",
       "lntune: --m: 9223372036854775800 is out of range (1 .. 1099511627776)"},
      {"bench --n 1:9223372036854775807:1", "lntune: --n: 9223372036854775807 is out of range (1 .. 2147483648)"},
      {"tune --n 99999999999999999999", "lntune: --n: 99999999999999999999 is out of range (1 .. 2147483648)"},
      {"tune --n 1024 --m 1:1099511627776:1",
       "lntune: --m: '1:1099511627776:1' gives 1099511627776 values; at most 10000 in all"},
      {"tune --n 1:9999:1,1:9999:1", "lntune: --n: '1:9999:1' gives 9999 values; at most 10000 in all"},
      {"tune --n 0", "lntune: --n: 0 is out of range (1 .. 2147483648)"},
      {"tune --n -5:10:1", "lntune: --n: -5 is out of range (1 .. 2147483648)"},
      {"tune --n 1:3000:1 --m 1:100:1", "lntune: --n x --m x --dtype x --kernel gives 1800000 problems; at most 100000"},
      {"tune --n 1024 --m 1:2:0", "lntune: --m: 0 is out of range"},
      {"tune --n 2147483648 --m 1099511627776",
       "lntune: --n x --m: M = 1099511627776 rows of N = 2147483648 elements is too large for one workload (at most "
       "2^40 elements)"},
  };
  for (const Case& c : cases) {
    const Result r = hardening::run_limited(tmp, c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
  }
  // Large in-range steps are fine: 1024 only.
  const Result ok = hardening::run_limited(tmp, "tune --n 1024:2048:9223372036854775807 --m 1");
  EXPECT_FALSE(contains(ok.err, "--n:")) << ok.err;
}

// Numeric options: no 309-digit bounds, nan and inf refused, no silent clamp.
TEST(CliHardening, NumericOptionsAreChecked) {
  TempDir tmp;
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"tune --n 1024 --budget nan", "--budget: nan is not a finite number"},
      {"tune --n 1024 --budget -3", "--budget: -3 must be >= 0"},
      {"tune --n 1024 --rel-ci nan", "--rel-ci: nan is not a finite number"},
      {"tune --n 1024 --rel-ci 0", "--rel-ci: 0 must be > 0"},
      {"bench --max-seconds inf", "--max-seconds: inf is not a finite number"},
      {"tune --n 1024 --min-reps 99999999999", "--min-reps: 99999999999 is out of range (1 .. 1000000)"},
      {"tune --n 1024 --jobs -1", "--jobs: -1 is out of range (0 .. 1024)"},
      {"space --kernel fwd --dtype bf16 --n 1024 --m 99999999999999999999",
       "--m: 99999999999999999999 is out of range (1 .. 1099511627776)"},
      {"space --kernel fwd --dtype bf16 --n 0", "--n: 0 is out of range (1 .. 2147483648)"},
      {"gen --kernel fwd --dtype bf16 --n 1024 --sm-count 0", "--sm-count: 0 is out of range (1 .. 4096)"},
  };
  for (const Case& c : cases) {
    const Result r = hardening::run_limited(tmp, c.args);
    EXPECT_NE(r.code, 0) << c.args;
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "1797693134862315")) << c.args << "\n" << r.err;
  }
}

// Text from a cache is escaped on the terminal, and JSON output is valid
// UTF-8 whatever the cache holds.
TEST(CliHardening, CacheTextIsEscaped) {
  TempDir tmp;
  const std::string evil = "EVIL\x1b]0;pwned\x07\x1b[2J\x9b" "31m\xc2\x9b\xe2\x80\xae\n";
  auto r = record(cache::GpuId{evil, 9, 0, 132}, 4096, 10.0);
  r.prov.origin = cache::Origin::merged;
  r.prov.merged_from = "\xff\xfe\xc0\xaf.db";
  r.prov.tuned_at = "2024\x1b[1m";
  make_db(tmp / "evil.db", {r});
  const Result show = run(tmp, "show --db '" + (tmp / "evil.db") + "'");
  EXPECT_EQ(show.code, 0) << show.err;
  EXPECT_FALSE(contains(show.out, "\x1b")) << show.out;
  EXPECT_FALSE(contains(show.out, "\x07"));
  EXPECT_FALSE(contains(show.out, "\xc2\x9b"));
  EXPECT_FALSE(contains(show.out, "\xe2\x80\xae"));
  EXPECT_TRUE(contains(show.out, "EVIL\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u009b\\u202e\\x0a")) << show.out;
  EXPECT_TRUE(contains(show.out, "merged:\\xff\\xfe\\xc0\\xaf.db")) << show.out;
  EXPECT_TRUE(hardening::valid_utf8(show.out));

  const Result json = run(tmp, "show --json --db '" + (tmp / "evil.db") + "'");
  EXPECT_EQ(json.code, 0) << json.err;
  EXPECT_TRUE(hardening::valid_utf8(json.out)) << json.out;
  EXPECT_FALSE(contains(json.out, "\x1b"));
  EXPECT_TRUE(contains(json.out, "merged:\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd.db")) << json.out;

  const Result info = run(tmp, "info", "LNTUNE_CACHE_PATH='" + (tmp / "evil.db") + "'");
  EXPECT_TRUE(contains(info.out, "records for EVIL\\x1b]0;pwned")) << info.out;
  EXPECT_FALSE(contains(info.out, "\x1b"));
}

// Clear errors for files that are not what they seem.
TEST(CliHardening, FileErrorsNameTheProblem) {
  TempDir tmp;
  const std::string a = tmp / "a.db", b = tmp / "b.db";
  ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);
  Result r = run(tmp, "show --db '" + a + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "symbolic link loop")) << r.err;
  EXPECT_FALSE(contains(r.err, "does not exist")) << r.err;

  r = run(tmp, "show --db /dev/null");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "/dev/null: not a regular file (a character device)")) << r.err;
  r = run(tmp, "info --db /dev/null");
  EXPECT_TRUE(contains(r.out, "/dev/null: not a regular file (a character device)")) << r.out;
  EXPECT_FALSE(contains(r.out + r.err, "disk I/O error")) << r.out;

  // A FIFO is refused at once (opening it would block).
  ASSERT_EQ(::mkfifo((tmp / "fifo.db").c_str(), 0644), 0);
  r = hardening::run_limited(tmp, "show --db '" + (tmp / "fifo.db") + "'");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "not a regular file (a FIFO)")) << r.err;
  r = hardening::run_limited(tmp, "info", "LNTUNE_CACHE_PATH='" + (tmp / "fifo.db") + "'");
  EXPECT_NE(r.code, 124);
  EXPECT_TRUE(contains(r.out, "not a regular file (a FIFO)")) << r.out;

  // info --db on an empty file only reads it.
  { std::ofstream(tmp / "empty.db"); }
  r = run(tmp, "info --db '" + (tmp / "empty.db") + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "empty.db: empty, not a cache yet")) << r.out;
  EXPECT_EQ(fs::file_size(tmp / "empty.db"), 0u);

  // Permission denied, not "unable to open database file".
  fs::permissions(tmp.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  make_db(tmp / "secret.db", {record(kH100, 4096, 10.0)});
  fs::permissions(tmp / "secret.db", fs::perms::owner_read | fs::perms::owner_write);
  r = hardening::run_limited(tmp, "show --db '" + (tmp / "secret.db") + "'", "", hardening::as_nobody());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "permission denied (the file is not readable)")) << r.err;
  EXPECT_FALSE(contains(r.err, "unable to open database file")) << r.err;
}

// A hostile cache (the recursive view) is refused promptly by every
// command instead of hanging; merge and export leave no output behind.
TEST(CliHardening, HostileCacheIsRefusedPromptly) {
  TempDir tmp;
  make_db(tmp / "good.db", {record(kH100, 4096, 10.0)});
  make_db(tmp / "hostile.db", {record(kH100, 8192, 10.0)});
  {
    cache::Database db = cache::Database::open(tmp / "hostile.db", cache::Database::Mode::read_write_create);
  }
  const std::string sql =
      "ALTER TABLE tuned RENAME TO t2; CREATE VIEW tuned AS WITH RECURSIVE c(i) AS "
      "(SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT t2.* FROM t2,c;";
  // Through python's sqlite3 (the cache API refuses to build such a file).
  ASSERT_EQ(std::system(("python3 -c \"import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); "
                         "c.commit()\" '" + (tmp / "hostile.db") + "' '" + sql + "'")
                            .c_str()),
            0);
  const std::string h = "'" + (tmp / "hostile.db") + "'";
  for (const std::string& args : {"show --db " + h, "export --db " + h + " -o '" + (tmp / "out1.db") + "'",
                                  "merge " + h + " '" + (tmp / "good.db") + "' -o '" + (tmp / "out2.db") + "'"}) {
    const Result r = hardening::run_limited(tmp, args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "not an lntune cache: unexpected table 't2'")) << args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(tmp / "out1.db"));
  EXPECT_FALSE(fs::exists(tmp / "out2.db"));
  const Result info = hardening::run_limited(tmp, "info", "LNTUNE_CACHE_PATH=" + h);
  EXPECT_EQ(info.code, 1);
  EXPECT_TRUE(contains(info.out, "not an lntune cache")) << info.out;
}
