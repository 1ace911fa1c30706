// libFuzzer harness: the cache reader on mutated database files. The input
// is written to a file and opened through the cache layer the way lntune
// opens files: read-only (inspection, the allowlist, quick_check), then every
// read API (records, lookups, binaries), an export of it, a merge of it into
// an in-memory cache, and a read-write open of a copy (migration, upsert).
// Every failure must be a CacheError or lntune::Error; anything else (a
// crash, a sanitizer report, another exception, a hang) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "cache/cache.hpp"

using namespace lntune;
using namespace lntune::cache;

namespace {

std::string scratch(const char* what) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/lntune_fuzz_cache." + std::to_string(::getpid()) + "." + what;
}

void remove_all(const std::string& path) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

void write_file(const std::string& path, const std::uint8_t* bytes, std::size_t size) {
  remove_all(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes), static_cast<std::streamsize>(size));
}

TuneKey probe_key(const GpuId& gpu, std::int64_t n, int bucket) {
  TuneKey k;
  k.gpu = gpu;
  k.traits = Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  k.n = n > 0 ? n : 1;
  k.m_bucket = bucket >= 0 && bucket < kNumMBuckets ? bucket : 0;
  return k;
}

void read_everything(const Database& db) {
  const auto records = db.records();
  for (std::size_t i = 0; i < records.size() && i < 8; ++i) {
    const TuneRecord& r = records[i];
    if (r.key.gpu.sm_count > 0) (void)m_bucket(12345, r.key.gpu.sm_count);
    (void)db.find(r.key);
    (void)db.find_nearest(probe_key(r.key.gpu, r.key.n / 2 + 1, r.key.m_bucket));
    (void)db.records(r.key.gpu);
  }
  (void)db.find_nearest(probe_key(GpuId{"NVIDIA H100 80GB HBM3", 9, 0, 132}, 4096, 2));
  (void)db.binary_count();
  (void)db.get_binary_entry(BinaryKey{"0123456789abcdef", "sm_90", 12040});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string path = scratch("db"), out = scratch("out.db");
  write_file(path, bytes, size);
  remove_all(out);
  try {
    Database db = Database::open(path, Database::Mode::read_only);
    read_everything(db);
    db.export_to(out);
    read_everything(Database::open(out, Database::Mode::read_only));
    Database mem = Database::open(":memory:", Database::Mode::read_write_create);
    mem.merge_from(db);
    read_everything(mem);
  } catch (const CacheError&) {
  } catch (const lntune::Error&) {
  }
  // Read-write: inspection, migration of older schemas, WAL switch, a write.
  write_file(path, bytes, size);
  try {
    Database db = Database::open(path, Database::Mode::read_write_create);
    read_everything(db);
    TuneRecord r;
    r.key = probe_key(GpuId{"fuzz", 9, 0, 132}, 1024, 1);
    r.prov.origin = lntune::cache::Origin::tuned;
    db.upsert(r);
    (void)db.find(r.key);
  } catch (const CacheError&) {
  } catch (const lntune::Error&) {
  }
  remove_all(path);
  remove_all(out);
  return 0;
}
