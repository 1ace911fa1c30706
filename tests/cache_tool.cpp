// cache_tool: builds and checks cache files for tests/crash_consistency.sh
// and the fuzzers' seed corpus.
//   cache_tool fill PATH RECORDS BINARIES BINARY_BYTES SEED
//       a new cache with RECORDS tuned records (distinct keys per SEED) and
//       BINARIES compiled "kernels" of BINARY_BYTES pseudo-random bytes
//   cache_tool check PATH RECORDS BINARIES
//       opens PATH read-only (schema, allowlist, quick_check) and exits 0 if
//       it holds exactly that many records and binaries, 1 otherwise
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cache/cache.hpp"

using namespace lntune;
using namespace lntune::cache;

namespace {

int fill(const std::string& path, long records, long binaries, long bytes, long seed) {
  Database db = Database::open(path, Database::Mode::read_write_create);
  const GpuId gpus[] = {{"NVIDIA H100 80GB HBM3", 9, 0, 132}, {"NVIDIA A100-SXM4-80GB", 8, 0, 108}};
  for (long i = 0; i < records; ++i) {
    TuneRecord r;
    r.key.gpu = gpus[i % 2];
    r.key.traits = Traits{i % 3 ? Kernel::fwd : Kernel::bwd_dx, DType::bf16, DType::bf16, true, i % 5 != 0};
    r.key.n = 64 + seed * 1000000 + i;  // distinct per seed
    r.key.m_bucket = static_cast<int>(i % kNumMBuckets);
    r.config = Config{1024, 4, 1, 0, 1};
    r.timing = {10.0 + static_cast<double>(i % 7), 9.0, 11.0, 50};
    r.gbps = 2000;
    r.copy_gbps = 3000;
    r.default_median_us = 12;
    r.prov = {"0123456789abcdef", "0.1.0", 12040, 12050, "2024-05-01T12:00:00Z", cache::Origin::tuned, ""};
    db.upsert(r);
  }
  std::uint64_t x = static_cast<std::uint64_t>(seed) * 0x9E3779B97F4A7C15ull + 1;
  for (long b = 0; b < binaries; ++b) {
    std::vector<char> cubin(static_cast<std::size_t>(bytes));
    for (char& c : cubin) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>(x);
    }
    db.put_binary(BinaryKey{"hash-" + std::to_string(seed) + "-" + std::to_string(b), b % 2 ? "sm_90" : "sm_80", 12040},
                  cubin, "kernel_" + std::to_string(b));
  }
  return 0;
}

int check(const std::string& path, long records, long binaries) {
  const Database db = Database::open(path, Database::Mode::read_only);
  const auto r = db.records().size();
  const auto b = db.binary_count();
  if (static_cast<long>(r) != records || static_cast<long>(b) != binaries) {
    std::fprintf(stderr, "cache_tool: %s: %zu records and %zu binaries, expected %ld and %ld\n", path.c_str(), r, b,
                 records, binaries);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> a(argv + 1, argv + argc);
    auto num = [&](std::size_t i) { return std::strtol(a.at(i).c_str(), nullptr, 10); };
    if (a.size() == 6 && a[0] == "fill") return fill(a[1], num(2), num(3), num(4), num(5));
    if (a.size() == 4 && a[0] == "check") return check(a[1], num(2), num(3));
    std::fprintf(stderr, "usage: cache_tool fill PATH RECORDS BINARIES BINARY_BYTES SEED | check PATH RECORDS BINARIES\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cache_tool: %s\n", e.what());
    return 1;
  }
}
