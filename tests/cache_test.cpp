// Tests of lntune::cache: schema, records, nearest lookup, binaries, the
// layered search path, export/merge, migration, refusal of damaged or foreign
// files (left byte-identical), read-only use, and two writer processes.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"
#include "cache/cache.hpp"
#include "cache/sqlite.hpp"  // raw SQL for building old, foreign and damaged files

namespace {

namespace fs = std::filesystem;
using namespace lntune;
using namespace lntune::cache;

constexpr int kSqliteReadOnly = 8, kSqliteCorrupt = 11, kSqliteCantOpen = 14,
              kSqliteMismatch = 20, kSqliteNotADb = 26;

using lntune::testing::TempDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

bool exists(const std::string& path) { return fs::exists(path); }

const GpuId kH100{"NVIDIA H100 80GB HBM3", 9, 0, 132};
const GpuId kA100{"NVIDIA A100-SXM4-80GB", 8, 0, 108};

Traits fwd_bf16() {
  Traits t;
  t.kernel = Kernel::fwd;
  t.x_dtype = DType::bf16;
  t.w_dtype = DType::bf16;
  return t;
}

TuneKey key(std::int64_t n, int bucket = 2, const GpuId& gpu = kH100, Traits t = fwd_bf16()) {
  TuneKey k;
  k.gpu = gpu;
  k.traits = t;
  k.n = n;
  k.m_bucket = bucket;
  return k;
}

TuneRecord record(const TuneKey& k, double median_us, int block_size = 1024) {
  TuneRecord r;
  r.key = k;
  r.key.traits = k.traits.canonical();
  r.config.block_size = block_size;
  r.config.num_warps = 4;
  r.config.rows_per_cta = 1;
  r.config.group_size_m = 0;
  r.config.cluster_size = block_size >= 4096 ? 4 : 1;  // both values round-trip
  r.timing = {median_us, median_us * 0.9, median_us * 1.1, 100};
  r.gbps = 2500.5;
  r.copy_gbps = 3000.25;
  r.default_median_us = median_us * 1.5;
  r.prov.template_hash = "tmpl-abc";
  r.prov.lntune_version = "0.1.0";
  r.prov.nvrtc_version = 12040;
  r.prov.driver_version = 12050;
  r.prov.tuned_at = "2024-05-01T12:00:00Z";
  r.prov.origin = Origin::tuned;
  return r;
}

std::vector<char> blob(std::size_t size, unsigned seed) {
  std::vector<char> b(size);
  for (std::size_t i = 0; i < size; ++i) b[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return b;
}

Database open_rw(const std::string& path) {
  return Database::open(path, Database::Mode::read_write_create);
}
Database open_ro(const std::string& path) { return Database::open(path, Database::Mode::read_only); }

// Runs raw SQL on a file (the file's journal mode stays as it is).
void raw_exec(const std::string& path, const std::string& sql) {
  sql::Connection c(path, sql::Connection::Open::read_write_create);
  c.exec(sql, "test setup");
}

std::int64_t raw_int(const std::string& path, const std::string& sql) {
  sql::Connection c(path, sql::Connection::Open::read_only);
  return c.query_int(sql, "test query");
}

// Expects `fn` to throw a CacheError whose message names `path` and contains
// `needle`, and returns its primary code (-1 if it did not throw).
template <typename Fn>
int expect_cache_error(Fn fn, const std::string& path, const std::string& needle) {
  try {
    fn();
  } catch (const CacheError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_NE(msg.find("(code "), std::string::npos) << msg;
    EXPECT_EQ(e.file(), path);
    return e.sqlite_code();
  }
  ADD_FAILURE() << "no CacheError for " << path;
  return -1;
}

// ---------------------------------------------------------------------------

TEST(MBucket, Rules) {
  const int sm = 132;
  EXPECT_EQ(m_bucket(0, sm), 0);
  EXPECT_EQ(m_bucket(32, sm), 0);   // 32 < 33 = sm/4
  EXPECT_EQ(m_bucket(33, sm), 1);   // 4*33 = 132
  EXPECT_EQ(m_bucket(131, sm), 1);
  EXPECT_EQ(m_bucket(132, sm), 2);
  EXPECT_EQ(m_bucket(4 * 132 - 1, sm), 2);
  EXPECT_EQ(m_bucket(4 * 132, sm), 3);
  EXPECT_EQ(m_bucket(16 * 132 - 1, sm), 3);
  EXPECT_EQ(m_bucket(16 * 132, sm), 4);
  EXPECT_EQ(m_bucket(64 * 132 - 1, sm), 4);
  EXPECT_EQ(m_bucket(64 * 132, sm), 5);
  EXPECT_EQ(m_bucket(INT64_MAX, sm), 5);
  EXPECT_EQ(m_bucket(1, 1), 2);
  EXPECT_EQ(m_bucket(0, 1), 0);
  EXPECT_THROW(m_bucket(1, 0), lntune::Error);
  EXPECT_THROW(m_bucket(-1, 132), lntune::Error);
  // Monotone and within range.
  int prev = 0;
  for (std::int64_t M = 0; M < 20000; ++M) {
    const int b = m_bucket(M, sm);
    EXPECT_GE(b, prev);
    EXPECT_LT(b, kNumMBuckets);
    prev = b;
  }
}

TEST(Schema, CreatesCurrentSchema) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  {
    Database db = open_rw(path);
    EXPECT_EQ(db.schema_version(), 4);
    EXPECT_EQ(Database::kCurrentSchemaVersion, 4);
    EXPECT_EQ(db.path(), path);
    EXPECT_FALSE(db.read_only());
    EXPECT_TRUE(db.records().empty());
    EXPECT_EQ(db.binary_count(), 0u);
  }
  EXPECT_EQ(raw_int(path, "PRAGMA application_id"), 0x4C4E5455);
  EXPECT_EQ(raw_int(path, "PRAGMA user_version"), 4);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM meta WHERE key = 'application' AND value = 'lntune'"), 1);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM meta WHERE key = 'schema_version' AND value = '4'"), 1);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                          "('meta', 'tuned', 'binaries')"),
            3);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM pragma_table_info('tuned') WHERE name IN "
                          "('default_median_us', 'origin', 'copy_gbps', 'm_bucket', 'n')"),
            5);
  {
    sql::Connection c(path, sql::Connection::Open::read_only);
    EXPECT_EQ(c.query_text("PRAGMA journal_mode", "test"), "wal");
  }
  // Reopening is a no-op.
  EXPECT_EQ(open_rw(path).schema_version(), 4);
  EXPECT_EQ(open_ro(path).schema_version(), 4);
}

TEST(Schema, InMemory) {
  Database db = open_rw(":memory:");
  db.upsert(record(key(1024), 5.0));
  EXPECT_TRUE(db.find(key(1024)).has_value());
}

TEST(Records, RoundTripAllFields) {
  Database db = open_rw(":memory:");
  TuneRecord r = record(key(4096, 3), 12.25, 2048);
  r.config.num_warps = 8;
  r.config.rows_per_cta = 2;
  r.config.group_size_m = 264;
  r.prov.origin = Origin::tuned;
  db.upsert(r);
  auto got = db.find(r.key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, r);
  EXPECT_EQ(got->timing.reps, 100);
  EXPECT_EQ(got->default_median_us, 12.25 * 1.5);
  EXPECT_EQ(got->prov.tuned_at, "2024-05-01T12:00:00Z");
  EXPECT_FALSE(db.find(key(4097, 3)).has_value());
}

TEST(Records, UpsertReplacesSameKey) {
  TempDir tmp;
  Database db = open_rw(tmp / "c.db");
  db.upsert(record(key(1024), 10.0, 512));
  db.upsert(record(key(1024), 20.0, 256));  // replaces, even though slower
  auto all = db.records();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].config.block_size, 256);
  EXPECT_EQ(all[0].timing.median_us, 20.0);
}

TEST(Records, EveryKeyPartDistinguishes) {
  Database db = open_rw(":memory:");
  const TuneKey base = key(1024, 2);
  std::vector<TuneKey> keys{base};
  TuneKey k = base; k.gpu.name = "other"; keys.push_back(k);
  k = base; k.gpu.cc_major = 8; keys.push_back(k);
  k = base; k.gpu.cc_minor = 9; keys.push_back(k);
  k = base; k.gpu.sm_count = 114; keys.push_back(k);
  k = base; k.traits.kernel = Kernel::bwd_dx; keys.push_back(k);
  k = base; k.traits.x_dtype = DType::f16; keys.push_back(k);
  k = base; k.traits.w_dtype = DType::f32; keys.push_back(k);
  k = base; k.traits.has_weight = false; keys.push_back(k);
  k = base; k.traits.has_bias = false; keys.push_back(k);
  k = base; k.n = 2048; keys.push_back(k);
  k = base; k.m_bucket = 3; keys.push_back(k);
  for (std::size_t i = 0; i < keys.size(); ++i) db.upsert(record(keys[i], 1.0 + static_cast<double>(i)));
  EXPECT_EQ(db.records().size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto r = db.find(keys[i]);
    ASSERT_TRUE(r.has_value()) << i;
    EXPECT_EQ(r->timing.median_us, 1.0 + static_cast<double>(i));
  }
}

TEST(Records, TraitsAreCanonicalised) {
  Database db = open_rw(":memory:");
  Traits t = fwd_bf16();
  t.has_weight = false;
  t.has_bias = false;
  t.w_dtype = DType::f32;  // irrelevant without weight and bias
  db.upsert(record(key(1024, 2, kH100, t), 3.0));
  Traits t2 = t;
  t2.w_dtype = DType::f16;
  auto got = db.find(key(1024, 2, kH100, t2));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->key.traits, t.canonical());
  EXPECT_EQ(got->key.traits.w_dtype, t.canonical().w_dtype);
  db.upsert(record(key(1024, 2, kH100, t2), 2.0));  // same key: replaces
  EXPECT_EQ(db.records().size(), 1u);
}

TEST(Records, RejectsInvalidKeys) {
  Database db = open_rw(":memory:");
  EXPECT_THROW(db.upsert(record(key(0), 1.0)), lntune::Error);
  EXPECT_THROW(db.upsert(record(key(1024, 6), 1.0)), lntune::Error);
  EXPECT_THROW(db.upsert(record(key(1024, -1), 1.0)), lntune::Error);
  GpuId g = kH100;
  g.sm_count = 0;
  EXPECT_THROW(db.upsert(record(key(1024, 2, g), 1.0)), lntune::Error);
  g = kH100;
  g.name.clear();
  EXPECT_THROW(db.upsert(record(key(1024, 2, g), 1.0)), lntune::Error);
  EXPECT_THROW(db.find_nearest(key(0)), lntune::Error);
  EXPECT_TRUE(db.records().empty());
}

TEST(Records, FilteredByGpuAndOrdered) {
  Database db = open_rw(":memory:");
  db.upsert(record(key(4096, 2, kA100), 1.0));
  db.upsert(record(key(2048, 2, kH100), 1.0));
  db.upsert(record(key(1024, 2, kH100), 1.0));
  db.upsert(record(key(1024, 2, kA100), 1.0));
  EXPECT_EQ(db.records().size(), 4u);
  auto h = db.records(kH100);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].key.n, 1024);
  EXPECT_EQ(h[1].key.n, 2048);
  for (const auto& r : h) EXPECT_EQ(r.key.gpu, kH100);
  GpuId other = kH100;
  other.sm_count = 114;  // H100 PCIe: a different GPU
  EXPECT_TRUE(db.records(other).empty());
}

TEST(Nearest, LogDistanceTiesToLarger) {
  Database db = open_rw(":memory:");
  EXPECT_FALSE(db.find_nearest(key(1024)).has_value());
  db.upsert(record(key(1024), 1.0));
  db.upsert(record(key(4096), 4.0));
  auto n_of = [&](std::int64_t n) { return db.find_nearest(key(n))->key.n; };
  EXPECT_EQ(n_of(1024), 1024);   // exact
  EXPECT_EQ(n_of(4096), 4096);
  EXPECT_EQ(n_of(2048), 4096);   // 2048/1024 == 4096/2048: tie -> larger
  EXPECT_EQ(n_of(2047), 1024);
  EXPECT_EQ(n_of(2049), 4096);
  EXPECT_EQ(n_of(2000), 1024);   // nearer on log scale, though 1000 from 1024 < 2096 ...
  EXPECT_EQ(n_of(2900), 4096);   // ... and here nearer to 4096 on log scale while |2900-1024| > |4096-2900|
  EXPECT_EQ(n_of(1), 1024);
  EXPECT_EQ(n_of(1000000), 4096);
  // log scale, not linear: 1024 vs 3000 for n = 1700 -> 1700/1024 = 1.66, 3000/1700 = 1.76
  db.upsert(record(key(3000), 3.0));
  EXPECT_EQ(n_of(1700), 1024);
  EXPECT_EQ(n_of(1800), 3000);  // linear would pick 1024 (776 vs 1200)
  EXPECT_EQ(db.find_nearest(key(1800))->timing.median_us, 3.0);
}

TEST(Nearest, SameGpuTraitsAndBucketOnly) {
  Database db = open_rw(":memory:");
  db.upsert(record(key(1024, 2, kH100), 1.0));
  EXPECT_FALSE(db.find_nearest(key(1024, 3, kH100)).has_value());
  EXPECT_FALSE(db.find_nearest(key(1024, 2, kA100)).has_value());
  Traits t = fwd_bf16();
  t.kernel = Kernel::bwd_dx;
  EXPECT_FALSE(db.find_nearest(key(1024, 2, kH100, t)).has_value());
  t = fwd_bf16();
  t.x_dtype = DType::f16;
  EXPECT_FALSE(db.find_nearest(key(1024, 2, kH100, t)).has_value());
  EXPECT_TRUE(db.find_nearest(key(100000, 2, kH100)).has_value());
}

TEST(Binaries, RoundTrip) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  const BinaryKey k1{"hash1", "sm_90", 12040}, k2{"hash1", "sm_80", 12040},
      k3{"hash1", "sm_90", 12050};
  const std::vector<char> b1 = blob(300000, 1);  // spans many overflow pages
  std::vector<char> b2 = blob(17, 2);
  b2[3] = '\0';  // binary data, not a string
  {
    Database db = open_rw(path);
    EXPECT_FALSE(db.get_binary(k1).has_value());
    db.put_binary(k1, b1, "lntune_fwd_bf16");
    db.put_binary(k2, b2, "lntune_fwd_bf16");
    EXPECT_EQ(db.binary_count(), 2u);
    EXPECT_FALSE(db.get_binary(k3).has_value());
    EXPECT_THROW(db.put_binary(k3, {}, "x"), lntune::Error);
    EXPECT_THROW(db.put_binary({"", "sm_90", 1}, b2, "x"), lntune::Error);
  }
  Database db = open_ro(path);
  EXPECT_EQ(db.get_binary(k1), b1);
  EXPECT_EQ(db.get_binary(k2), b2);
  auto e = db.get_binary_entry(k1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, k1);
  EXPECT_EQ(e->kernel_name, "lntune_fwd_bf16");
  EXPECT_EQ(e->created_at.size(), 20u);  // YYYY-MM-DDTHH:MM:SSZ
  EXPECT_EQ(e->created_at.back(), 'Z');
  {
    Database w = open_rw(path);
    w.put_binary(k1, b2, "other");  // replaces
    EXPECT_EQ(w.binary_count(), 2u);
    EXPECT_EQ(w.get_binary(k1), b2);
  }
}

// ---------------------------------------------------------------------------
// Layering

TEST(Stack, UserOverShippedInOrder) {
  TempDir tmp;
  const std::string user = tmp / "user/sub/lntune.db";
  const std::string s1 = tmp / "s1.db", s2 = tmp / "s2.db";
  {
    Database a = open_rw(s1);
    a.upsert(record(key(1024), 11.0));
    a.upsert(record(key(2048), 12.0));
    a.put_binary({"h", "sm_90", 1}, blob(10, 1), "k");
    Database b = open_rw(s2);
    b.upsert(record(key(1024), 21.0));
    b.upsert(record(key(8192), 28.0));
    b.put_binary({"h", "sm_90", 1}, blob(10, 2), "k");
    b.put_binary({"h2", "sm_90", 1}, blob(10, 3), "k");
  }
  CacheStack stack(user, {s1, s2, tmp / "missing.db"});
  EXPECT_EQ(stack.layers().size(), 2u);  // no user file yet, missing entry skipped
  EXPECT_FALSE(exists(user));            // lookups never create it
  EXPECT_EQ(stack.find(key(1024))->timing.median_us, 11.0);  // s1 before s2
  EXPECT_EQ(stack.find(key(8192))->timing.median_us, 28.0);
  EXPECT_FALSE(stack.find(key(4096)).has_value());
  EXPECT_EQ(stack.get_binary({"h", "sm_90", 1}), blob(10, 1));
  EXPECT_EQ(stack.get_binary({"h2", "sm_90", 1}), blob(10, 3));
  EXPECT_FALSE(exists(user));
  for (const Database* d : stack.layers()) EXPECT_TRUE(d->read_only());

  Database* w = stack.writable();
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(exists(user));  // parent directories created
  EXPECT_EQ(stack.writable(), w);
  w->upsert(record(key(1024), 1.0));
  w->put_binary({"h", "sm_90", 1}, blob(10, 9), "k");
  EXPECT_EQ(stack.find(key(1024))->timing.median_us, 1.0);  // user first
  EXPECT_EQ(stack.find(key(2048))->timing.median_us, 12.0);
  EXPECT_EQ(stack.get_binary({"h", "sm_90", 1}), blob(10, 9));
  auto layers = stack.layers();
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0], w);
  EXPECT_EQ(layers[1]->path(), s1);
  EXPECT_EQ(layers[2]->path(), s2);

  // A new stack over the same files finds the existing user file.
  CacheStack again(user, {s2, s1});
  EXPECT_EQ(again.layers().size(), 3u);
  EXPECT_EQ(again.find(key(1024))->timing.median_us, 1.0);
  CacheStack reordered(tmp / "nouser.db", {s2, s1});
  EXPECT_EQ(reordered.find(key(1024))->timing.median_us, 21.0);  // s2 now first
}

TEST(Stack, NearestAcrossLayers) {
  TempDir tmp;
  const std::string user = tmp / "u.db", shipped = tmp / "s.db";
  {
    Database u = open_rw(user);
    u.upsert(record(key(4096), 1.0));
    u.upsert(record(key(16384), 1.5));
    Database s = open_rw(shipped);
    s.upsert(record(key(1024), 2.0));
    s.upsert(record(key(16384), 2.5));
  }
  CacheStack stack(user, {shipped});
  EXPECT_EQ(stack.find_nearest(key(1024))->timing.median_us, 2.0);   // shipped exact beats user's 4096
  EXPECT_EQ(stack.find_nearest(key(2048))->key.n, 4096);             // tie -> larger
  EXPECT_EQ(stack.find_nearest(key(1500))->key.n, 1024);
  EXPECT_EQ(stack.find_nearest(key(16384))->timing.median_us, 1.5);  // same n: user's
  EXPECT_FALSE(stack.find_nearest(key(1024, 4)).has_value());
}

TEST(Stack, DirectoriesAndDuplicates) {
  TempDir tmp;
  fs::create_directories(tmp / "ship");
  {
    Database b = open_rw(tmp / "ship/b.db");
    b.upsert(record(key(1024), 2.0));
    Database a = open_rw(tmp / "ship/a.db");
    a.upsert(record(key(1024), 1.0));
    Database u = open_rw(tmp / "user.db");
  }
  write_bytes(tmp / "ship/notes.txt", "not a cache, and not *.db: ignored");
  fs::create_directories(tmp / "ship/sub.db");  // a directory named *.db: ignored
  // dir = a.db, b.db by name; a duplicate file entry and the user file are skipped.
  CacheStack stack(tmp / "user.db", {"", tmp / "ship", tmp / "ship/a.db", tmp / "user.db"});
  auto layers = stack.layers();
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(fs::path(layers[1]->path()).filename(), "a.db");
  EXPECT_EQ(fs::path(layers[2]->path()).filename(), "b.db");
  EXPECT_EQ(stack.find(key(1024))->timing.median_us, 1.0);
  EXPECT_TRUE(layers[1]->read_only());
  // Lookups read the user cache read-only; writable() opens it read-write.
  EXPECT_TRUE(layers[0]->read_only());
  ASSERT_NE(stack.writable(), nullptr);
  EXPECT_FALSE(stack.layers()[0]->read_only());
  EXPECT_EQ(stack.layers()[0]->path(), tmp / "user.db");

  CacheStack none(std::nullopt, {});
  EXPECT_EQ(none.writable(), nullptr);
  EXPECT_TRUE(none.layers().empty());
  EXPECT_FALSE(none.find(key(1024)).has_value());
  EXPECT_FALSE(none.find_nearest(key(1024)).has_value());
}

TEST(Stack, BrokenShippedCacheThrows) {
  TempDir tmp;
  write_bytes(tmp / "bad.db", "this is text, not SQLite, long enough to fill a header ........"
                              "..............................................................");
  const std::string before = read_bytes(tmp / "bad.db");
  const int code = expect_cache_error([&] { CacheStack s(std::nullopt, {tmp / "bad.db"}); },
                                      tmp / "bad.db", "not an lntune cache");
  EXPECT_EQ(code, kSqliteNotADb);
  EXPECT_EQ(read_bytes(tmp / "bad.db"), before);
}

class EnvGuard {
 public:
  explicit EnvGuard(std::vector<std::string> names) : names_(std::move(names)) {
    for (const auto& n : names_) {
      const char* v = std::getenv(n.c_str());
      saved_.push_back(v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  ~EnvGuard() {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (saved_[i]) ::setenv(names_[i].c_str(), saved_[i]->c_str(), 1);
      else ::unsetenv(names_[i].c_str());
    }
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::optional<std::string>> saved_;
};

TEST(Stack, FromEnvironment) {
  EnvGuard guard({"LNTUNE_CACHE", "LNTUNE_CACHE_PATH", "XDG_CACHE_HOME", "HOME"});
  TempDir tmp;
  fs::create_directories(tmp / "d1");
  fs::create_directories(tmp / "share");
  {
    open_rw(tmp / "d1/x.db").upsert(record(key(1024), 1.0));
    open_rw(tmp / "f2.db").upsert(record(key(1024), 2.0));
    open_rw(tmp / "share/lntune.db").upsert(record(key(1024), 3.0));
  }
  ::setenv("LNTUNE_CACHE", (tmp / "u/mine.db").c_str(), 1);
  ::setenv("LNTUNE_CACHE_PATH", (tmp / "d1" + "::" + tmp / "f2.db" + ":" + tmp / "nope").c_str(), 1);
  ::setenv("XDG_CACHE_HOME", (tmp / "xdg").c_str(), 1);
  ::setenv("HOME", (tmp / "home").c_str(), 1);
  {
    CacheStack s = CacheStack::from_environment({tmp / "share"});
    EXPECT_EQ(s.writable_path(), tmp / "u/mine.db");
    auto layers = s.layers();
    ASSERT_EQ(layers.size(), 3u);
    EXPECT_EQ(layers[0]->path(), tmp / "d1/x.db");
    EXPECT_EQ(layers[1]->path(), tmp / "f2.db");
    EXPECT_EQ(layers[2]->path(), tmp / "share/lntune.db");
    EXPECT_EQ(s.find(key(1024))->timing.median_us, 1.0);
  }
  ::unsetenv("LNTUNE_CACHE");
  EXPECT_EQ(CacheStack::from_environment().writable_path(), tmp / "xdg/lntune/lntune.db");
  ::setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  EXPECT_EQ(CacheStack::from_environment().writable_path(), tmp / "home/.cache/lntune/lntune.db");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("LNTUNE_CACHE_PATH", "", 1);
  {
    CacheStack s = CacheStack::from_environment();
    EXPECT_EQ(s.writable_path(), tmp / "home/.cache/lntune/lntune.db");
    EXPECT_TRUE(s.layers().empty());
    ASSERT_NE(s.writable(), nullptr);
    EXPECT_TRUE(exists(tmp / "home/.cache/lntune/lntune.db"));
  }
  ::unsetenv("HOME");
  EXPECT_FALSE(CacheStack::from_environment().writable_path().has_value());
}

// ---------------------------------------------------------------------------
// Export and merge

TEST(ExportMerge, RoundTripFilteredByGpu) {
  TempDir tmp;
  const std::string src = tmp / "src.db", out = tmp / "h100.db", dst = tmp / "dst.db";
  std::vector<TuneRecord> h100;
  {
    Database db = open_rw(src);
    for (int i = 0; i < 5; ++i) {
      h100.push_back(record(key(512 << i, i % kNumMBuckets, kH100), 1.0 + i));
      db.upsert(h100.back());
      db.upsert(record(key(512 << i, 0, kA100), 1.0 + i));
    }
    db.put_binary({"h1", "sm_90", 1}, blob(100, 1), "k1");
    db.put_binary({"h2", "sm_90a", 1}, blob(100, 2), "k2");
    db.put_binary({"h3", "sm_80", 1}, blob(100, 3), "k3");
    db.put_binary({"h4", "sm_900", 1}, blob(100, 4), "k4");  // not sm_90
    db.export_to(out, kH100);
  }
  {
    Database e = open_ro(out);
    EXPECT_EQ(e.schema_version(), 4);
    EXPECT_EQ(e.records(), h100);  // only H100's, all fields (origin kept)
    EXPECT_EQ(e.binary_count(), 2u);
    EXPECT_TRUE(e.get_binary({"h1", "sm_90", 1}).has_value());
    EXPECT_TRUE(e.get_binary({"h2", "sm_90a", 1}).has_value());
  }
  // Self-contained: rollback journal, no -wal/-shm beside it.
  EXPECT_FALSE(exists(out + "-wal"));
  EXPECT_FALSE(exists(out + "-journal"));
  {
    sql::Connection c(out, sql::Connection::Open::read_only);
    EXPECT_EQ(c.query_text("PRAGMA journal_mode", "test"), "delete");
  }

  Database d = open_rw(dst);
  d.merge_from(open_ro(out));
  auto merged = d.records();
  ASSERT_EQ(merged.size(), h100.size());
  for (std::size_t i = 0; i < merged.size(); ++i) {
    TuneRecord expect = h100[i];
    expect.prov.origin = Origin::merged;
    expect.prov.merged_from = "h100.db";
    EXPECT_EQ(merged[i], expect);
  }
  EXPECT_EQ(d.binary_count(), 2u);
  EXPECT_EQ(d.get_binary({"h1", "sm_90", 1}), blob(100, 1));

  // Unfiltered export carries everything.
  open_ro(src).export_to(tmp / "all.db");
  Database all = open_ro(tmp / "all.db");
  EXPECT_EQ(all.records().size(), 10u);
  EXPECT_EQ(all.binary_count(), 4u);
}

TEST(ExportMerge, ExportRefusesExistingFile) {
  TempDir tmp;
  Database db = open_rw(tmp / "src.db");
  db.upsert(record(key(1024), 1.0));
  write_bytes(tmp / "taken.db", "precious");
  EXPECT_EQ(expect_cache_error([&] { db.export_to(tmp / "taken.db", std::nullopt); },
                               tmp / "taken.db", "refusing to overwrite"),
            kSqliteCantOpen);
  EXPECT_EQ(read_bytes(tmp / "taken.db"), "precious");
  // Own file too.
  expect_cache_error([&] { db.export_to(db.path(), std::nullopt); }, db.path(), "exists");
  // A failed export leaves nothing behind.
  EXPECT_THROW(db.export_to(tmp / "no/such/dir/x.db", std::nullopt), CacheError);
  EXPECT_FALSE(exists(tmp / "no"));
}

TEST(ExportMerge, MergeKeepsFasterAndCopiesBinaries) {
  Database a = open_rw(":memory:");
  Database b = open_rw(":memory:");
  a.upsert(record(key(1024), 5.0, 111));  // a faster
  b.upsert(record(key(1024), 6.0, 222));
  a.upsert(record(key(2048), 9.0, 111));  // b faster
  b.upsert(record(key(2048), 8.0, 222));
  a.upsert(record(key(4096), 7.0, 111));  // equal: a kept
  b.upsert(record(key(4096), 7.0, 222));
  b.upsert(record(key(8192), 3.0, 222));  // only in b
  TuneRecord mergedish = record(key(16384), 3.0, 222);
  mergedish.prov.origin = Origin::merged;
  mergedish.prov.merged_from = "elsewhere.db";
  b.upsert(mergedish);
  a.put_binary({"h", "sm_90", 1}, blob(5, 1), "mine");
  b.put_binary({"h", "sm_90", 1}, blob(5, 2), "theirs");
  b.put_binary({"g", "sm_90", 1}, blob(5, 3), "theirs");
  a.merge_from(b);
  a.merge_from(a);  // no-op
  EXPECT_EQ(a.find(key(1024))->config.block_size, 111);
  EXPECT_EQ(a.find(key(1024))->prov.origin_text(), "tuned");
  EXPECT_EQ(a.find(key(2048))->config.block_size, 222);
  EXPECT_EQ(a.find(key(2048))->prov.origin_text(), "merged::memory:");
  EXPECT_EQ(a.find(key(4096))->config.block_size, 111);
  EXPECT_EQ(a.find(key(8192))->config.block_size, 222);
  EXPECT_EQ(a.find(key(16384))->prov.origin_text(), "merged:elsewhere.db");  // kept
  EXPECT_EQ(a.records().size(), 5u);
  EXPECT_EQ(a.binary_count(), 2u);
  EXPECT_EQ(a.get_binary({"h", "sm_90", 1}), blob(5, 1));  // ours kept
  EXPECT_EQ(a.get_binary({"g", "sm_90", 1}), blob(5, 3));
}

// ---------------------------------------------------------------------------
// Migration

// The schema of lntune 0.0.x (v1), written by hand.
void build_v1_file(const std::string& path) {
  raw_exec(path, R"sql(
    PRAGMA application_id = 1280201813;  -- 0x4C4E5455, "LNTU"
    PRAGMA user_version = 1;
    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('application', 'lntune'), ('schema_version', '1');
    CREATE TABLE tuned (
      gpu_name TEXT NOT NULL, cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL,
      sm_count INTEGER NOT NULL, kernel TEXT NOT NULL, x_dtype TEXT NOT NULL,
      w_dtype TEXT NOT NULL, has_weight INTEGER NOT NULL, has_bias INTEGER NOT NULL,
      m_bucket INTEGER NOT NULL, n INTEGER NOT NULL, block_size INTEGER NOT NULL,
      num_warps INTEGER NOT NULL, rows_per_cta INTEGER NOT NULL, group_size_m INTEGER NOT NULL,
      median_us REAL NOT NULL, p20_us REAL NOT NULL, p80_us REAL NOT NULL, reps INTEGER NOT NULL,
      gbps REAL NOT NULL, copy_gbps REAL NOT NULL, template_hash TEXT NOT NULL,
      lntune_version TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
      driver_version INTEGER NOT NULL, tuned_at TEXT NOT NULL,
      UNIQUE (gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype, has_weight,
              has_bias, m_bucket, n));
    CREATE TABLE binaries (
      source_hash TEXT NOT NULL, arch TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
      kernel_name TEXT NOT NULL, cubin BLOB NOT NULL, created_at TEXT NOT NULL,
      PRIMARY KEY (source_hash, arch, nvrtc_version));
    INSERT INTO tuned VALUES ('NVIDIA H100 80GB HBM3', 9, 0, 132, 'fwd', 'bf16', 'bf16', 1, 1,
      2, 1024, 1024, 4, 1, 0, 5.5, 5.0, 6.0, 50, 2000.0, 3000.0, 'th', '0.0.9', 12040, 12050,
      '2023-01-01T00:00:00Z');
    INSERT INTO tuned VALUES ('NVIDIA H100 80GB HBM3', 9, 0, 132, 'bwd_dx', 'fp16', 'fp32', 1, 0,
      3, 4096, 512, 8, 2, 264, 9.5, 9.0, 10.0, 50, 1800.0, 3000.0, 'th', '0.0.9', 12040, 12050,
      '2023-01-02T00:00:00Z');
    INSERT INTO binaries VALUES ('hh', 'sm_90', 12040, 'k', x'00010203', '2023-01-01T00:00:00Z');
  )sql");
}

TuneRecord v1_first_record() {
  TuneRecord r = record(key(1024, 2), 5.5);
  r.timing = {5.5, 5.0, 6.0, 50};
  r.gbps = 2000.0;
  r.copy_gbps = 3000.0;
  r.default_median_us = 0;  // unknown in v1
  r.prov = {"th", "0.0.9", 12040, 12050, "2023-01-01T00:00:00Z", Origin::unknown, ""};
  return r;
}

TEST(Migration, ReadOnlyReadsV1WithoutMigrating) {
  TempDir tmp;
  const std::string path = tmp / "v1.db";
  build_v1_file(path);
  const std::string before = read_bytes(path);
  {
    Database db = open_ro(path);
    EXPECT_EQ(db.schema_version(), 1);
    EXPECT_EQ(db.records().size(), 2u);
    EXPECT_EQ(*db.find(key(1024, 2)), v1_first_record());
    EXPECT_EQ(db.get_binary({"hh", "sm_90", 12040}), (std::vector<char>{0, 1, 2, 3}));
    EXPECT_EQ(expect_cache_error([&] { db.upsert(record(key(1, 0), 1.0)); }, path, "read-only"),
              kSqliteReadOnly);
  }
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(raw_int(path, "PRAGMA user_version"), 1);
}

TEST(Migration, ReadWriteMigratesV1ToCurrent) {
  TempDir tmp;
  const std::string path = tmp / "v1.db";
  build_v1_file(path);
  {
    Database db = open_rw(path);
    EXPECT_EQ(db.schema_version(), 4);
    EXPECT_EQ(*db.find(key(1024, 2)), v1_first_record());
    Traits t;
    t.kernel = Kernel::bwd_dx;
    t.x_dtype = DType::f16;
    t.w_dtype = DType::f32;
    t.has_bias = false;
    auto second = db.find(key(4096, 3, kH100, t));
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->config, (Config{512, 8, 2, 264, 1}));  // v3's cluster_size defaults to 1
    EXPECT_EQ(db.binary_count(), 1u);
    TuneRecord fresh = record(key(2048, 2), 4.0);
    db.upsert(fresh);
    EXPECT_EQ(*db.find(fresh.key), fresh);
  }
  EXPECT_EQ(raw_int(path, "PRAGMA user_version"), 4);
  EXPECT_EQ(raw_int(path, "PRAGMA application_id"), 0x4C4E5455);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM meta WHERE key = 'schema_version' AND value = '4'"), 1);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM tuned WHERE origin = 'unknown'"), 2);
  EXPECT_EQ(open_ro(path).schema_version(), 4);
}

// The schema of lntune before issue 11 (v3: no norm variant in the key),
// written by hand, with one record of each kind that must survive.
void build_v3_file(const std::string& path) {
  raw_exec(path, R"sql(
    PRAGMA application_id = 1280201813;
    PRAGMA user_version = 3;
    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('application', 'lntune'), ('schema_version', '3');
    CREATE TABLE tuned (
      gpu_name TEXT NOT NULL, cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL,
      sm_count INTEGER NOT NULL, kernel TEXT NOT NULL, x_dtype TEXT NOT NULL,
      w_dtype TEXT NOT NULL, has_weight INTEGER NOT NULL, has_bias INTEGER NOT NULL,
      m_bucket INTEGER NOT NULL, n INTEGER NOT NULL, block_size INTEGER NOT NULL,
      num_warps INTEGER NOT NULL, rows_per_cta INTEGER NOT NULL, group_size_m INTEGER NOT NULL,
      median_us REAL NOT NULL, p20_us REAL NOT NULL, p80_us REAL NOT NULL, reps INTEGER NOT NULL,
      gbps REAL NOT NULL, copy_gbps REAL NOT NULL, template_hash TEXT NOT NULL,
      lntune_version TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
      driver_version INTEGER NOT NULL, tuned_at TEXT NOT NULL,
      default_median_us REAL NOT NULL DEFAULT 0, origin TEXT NOT NULL DEFAULT 'unknown',
      cluster_size INTEGER NOT NULL DEFAULT 1,
      UNIQUE (gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype, has_weight,
              has_bias, m_bucket, n));
    CREATE TABLE binaries (
      source_hash TEXT NOT NULL, arch TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
      kernel_name TEXT NOT NULL, cubin BLOB NOT NULL, created_at TEXT NOT NULL,
      PRIMARY KEY (source_hash, arch, nvrtc_version));
    INSERT INTO tuned VALUES ('NVIDIA H100 80GB HBM3', 9, 0, 132, 'fwd', 'bf16', 'bf16', 1, 1,
      2, 1024, 1024, 4, 1, 0, 5.5, 5.0, 6.0, 50, 2000.0, 3000.0, 'th', '0.1.0', 12040, 12050,
      '2026-01-01T00:00:00Z', 7.5, 'tuned', 1);
    INSERT INTO tuned VALUES ('NVIDIA H100 80GB HBM3', 9, 0, 132, 'bwd_dx', 'fp16', 'fp32', 1, 0,
      3, 16384, 4096, 8, 1, 132, 9.5, 9.0, 10.0, 50, 1800.0, 3000.0, 'th', '0.1.0', 12040, 12050,
      '2026-01-02T00:00:00Z', 11.0, 'merged:a.db', 4);
    INSERT INTO binaries VALUES ('hh', 'sm_90', 12040, 'k', x'00010203', '2026-01-01T00:00:00Z');
  )sql");
}

TEST(Migration, V3RecordsReadAsLayerNormWithoutOptions) {
  TempDir tmp;
  const std::string path = tmp / "v3.db";
  build_v3_file(path);
  Traits bwd;
  bwd.kernel = Kernel::bwd_dx;
  bwd.x_dtype = DType::f16;
  bwd.w_dtype = DType::f32;
  bwd.has_bias = false;
  TuneRecord first = record(key(1024, 2), 5.5);
  first.timing = {5.5, 5.0, 6.0, 50};
  first.gbps = 2000.0;
  first.copy_gbps = 3000.0;
  first.default_median_us = 7.5;
  first.prov = {"th", "0.1.0", 12040, 12050, "2026-01-01T00:00:00Z", Origin::tuned, ""};
  const auto check = [&](const Database& db) {
    ASSERT_EQ(db.records().size(), 2u);
    EXPECT_EQ(*db.find(key(1024, 2)), first);
    for (const TuneRecord& r : db.records()) {
      EXPECT_EQ(r.key.traits.norm, Norm::layer);
      EXPECT_FALSE(r.key.traits.residual.has_value());
      EXPECT_FALSE(r.key.traits.zero_centered);
      EXPECT_FALSE(r.key.traits.y_dtype.has_value());
    }
    auto second = db.find(key(16384, 3, kH100, bwd));
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->config, (Config{4096, 8, 1, 132, 4}));
    EXPECT_EQ(second->prov.origin_text(), "merged:a.db");
    EXPECT_DOUBLE_EQ(second->default_median_us, 11.0);
    // The same key as an RMSNorm (or any variant) is another problem: absent.
    Traits rms = first.key.traits;
    rms.norm = Norm::rms;
    EXPECT_FALSE(db.find(key(1024, 2, kH100, rms)).has_value());
    EXPECT_FALSE(db.find_nearest(key(1000, 2, kH100, rms)).has_value());
  };
  const std::string before = read_bytes(path);
  {
    Database ro = open_ro(path);  // reads v3 as is
    EXPECT_EQ(ro.schema_version(), 3);
    check(ro);
  }
  EXPECT_EQ(read_bytes(path), before);
  {
    Database db = open_rw(path);  // migrates to v4, records intact
    EXPECT_EQ(db.schema_version(), 4);
    check(db);
    EXPECT_EQ(db.binary_count(), 1u);
    // A variant record beside the LayerNorm one with the same old key columns.
    Traits rms = first.key.traits;
    rms.norm = Norm::rms;
    rms.residual = DType::f32;
    TuneRecord r = record(key(1024, 2, kH100, rms), 3.0, 512);
    db.upsert(r);
    EXPECT_EQ(*db.find(r.key), r);
    EXPECT_EQ(*db.find(key(1024, 2)), first);  // not replaced
    EXPECT_EQ(db.records().size(), 3u);
  }
  EXPECT_EQ(raw_int(path, "PRAGMA user_version"), 4);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM tuned WHERE norm = 'layernorm' AND residual_dtype = '' AND "
                          "zero_centered = 0 AND y_dtype = ''"),
            2);
  EXPECT_EQ(raw_int(path, "SELECT count(*) FROM tuned WHERE norm = 'rmsnorm' AND residual_dtype = 'fp32'"), 1);
}

TEST(Migration, EveryVariantFieldIsPartOfTheKey) {
  TempDir tmp;
  Database db = open_rw(tmp / "k.db");
  std::vector<Traits> variants(6, fwd_bf16());
  variants[1].norm = Norm::rms;
  variants[2].residual = DType::bf16;
  variants[3].residual = DType::f32;
  variants[4].zero_centered = true;
  variants[5].y_dtype = DType::f32;
  for (std::size_t i = 0; i < variants.size(); ++i)
    db.upsert(record(key(2048, 2, kH100, variants[i]), 1.0 + static_cast<double>(i)));
  ASSERT_EQ(db.records().size(), variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    auto r = db.find(key(2048, 2, kH100, variants[i]));
    ASSERT_TRUE(r.has_value()) << i;
    EXPECT_EQ(r->key.traits, variants[i].canonical()) << i;
    EXPECT_DOUBLE_EQ(r->timing.median_us, 1.0 + static_cast<double>(i)) << i;
  }
  // Canonical forms: y_dtype equal to x_dtype is no y_dtype.
  Traits same = fwd_bf16();
  same.y_dtype = DType::bf16;
  EXPECT_DOUBLE_EQ(db.find(key(2048, 2, kH100, same))->timing.median_us, 1.0);
}

// ---------------------------------------------------------------------------
// Damaged, foreign and newer files: clear error, never modified.

// Opens `path` both ways and expects a CacheError naming it and containing
// `needle`, with the file byte-identical and no journal files beside it.
void expect_refused_untouched(const std::string& path, const std::string& needle, int code) {
  const std::string before = read_bytes(path);
  ASSERT_FALSE(before.empty());
  for (auto mode : {Database::Mode::read_write_create, Database::Mode::read_only}) {
    SCOPED_TRACE(mode == Database::Mode::read_only ? "read-only" : "read-write");
    EXPECT_EQ(expect_cache_error([&] { Database::open(path, mode); }, path, needle), code);
    EXPECT_EQ(read_bytes(path), before);
    EXPECT_FALSE(exists(path + "-wal"));
    EXPECT_FALSE(exists(path + "-shm"));
    EXPECT_FALSE(exists(path + "-journal"));
  }
  // Through the search path too.
  EXPECT_THROW(CacheStack(std::nullopt, {path}), CacheError);
  CacheStack stack(path, {});
  EXPECT_THROW(stack.writable(), CacheError);
  EXPECT_EQ(read_bytes(path), before);
}

// A valid cache with some records and a large binary, in rollback-journal
// mode so that closing leaves no side files.
void build_valid_file(const std::string& path) {
  {
    Database db = open_rw(path);
    for (int i = 0; i < 300; ++i) db.upsert(record(key(100 + i), 1.0 + i));
    db.put_binary({"h", "sm_90", 1}, blob(200000, 5), "k");
  }
  raw_exec(path, "PRAGMA journal_mode = DELETE");
  ASSERT_FALSE(exists(path + "-wal"));
}

TEST(Damaged, TextFile) {
  TempDir tmp;
  const std::string path = tmp / "notes.db";
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + " of a text file\n";
  write_bytes(path, text);
  expect_refused_untouched(path, "not an lntune cache", kSqliteNotADb);
  write_bytes(path, "short");
  expect_refused_untouched(path, "not an lntune cache", kSqliteNotADb);
}

TEST(Damaged, TruncatedFile) {
  TempDir tmp;
  const std::string path = tmp / "t.db";
  build_valid_file(path);
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 100000u);
  fs::resize_file(path, size / 2);
  expect_refused_untouched(path, "damaged or truncated", kSqliteCorrupt);
  // Cut inside the first page.
  fs::resize_file(path, 1000);
  expect_refused_untouched(path, "", kSqliteCorrupt);
}

TEST(Damaged, CorruptPage) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  build_valid_file(path);
  std::string bytes = read_bytes(path);
  const std::size_t page = static_cast<std::size_t>(raw_int(path, "PRAGMA page_size"));
  // Garble the root page of the tuned table.
  const auto root = static_cast<std::size_t>(
      raw_int(path, "SELECT rootpage FROM sqlite_master WHERE name = 'tuned'"));
  for (std::size_t i = 0; i < page; ++i) bytes[(root - 1) * page + i] = static_cast<char>(0xA5 ^ i);
  write_bytes(path, bytes);
  expect_refused_untouched(path, "damaged", kSqliteCorrupt);
}

TEST(Damaged, ForeignDatabaseWithApplicationId) {
  TempDir tmp;
  const std::string path = tmp / "other.db";
  raw_exec(path, "PRAGMA application_id = 0x0F0F0F0F; CREATE TABLE tuned (x); "
                 "INSERT INTO tuned VALUES (1);");
  expect_refused_untouched(path, "another application", kSqliteNotADb);
  // Even an empty one claimed by another application.
  const std::string path2 = tmp / "other2.db";
  raw_exec(path2, "PRAGMA application_id = 1234; PRAGMA user_version = 7;");
  expect_refused_untouched(path2, "another application", kSqliteNotADb);
}

TEST(Damaged, ForeignDatabaseWithoutApplicationId) {
  TempDir tmp;
  const std::string path = tmp / "plain.db";
  raw_exec(path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); "
                 "INSERT INTO notes (body) VALUES ('hello');");
  expect_refused_untouched(path, "another application", kSqliteNotADb);
}

TEST(Damaged, NewerSchema) {
  TempDir tmp;
  const std::string path = tmp / "new.db";
  build_valid_file(path);
  raw_exec(path, "PRAGMA user_version = " + std::to_string(Database::kCurrentSchemaVersion + 1) +
                     "; ALTER TABLE tuned ADD COLUMN future TEXT;");
  expect_refused_untouched(path, "newer than this build", kSqliteCantOpen);
}

TEST(Damaged, MissingTable) {
  TempDir tmp;
  const std::string path = tmp / "m.db";
  build_valid_file(path);
  raw_exec(path, "DROP TABLE binaries; VACUUM;");
  expect_refused_untouched(path, "table 'binaries'", kSqliteCorrupt);
}

TEST(Damaged, BadValuesNameTheColumn) {
  TempDir tmp;
  const std::string path = tmp / "v.db";
  {
    Database db = open_rw(path);
    db.upsert(record(key(1024), 1.0));
  }
  raw_exec(path, "UPDATE tuned SET x_dtype = 'fp99'");
  {
    Database db = open_ro(path);
    EXPECT_EQ(expect_cache_error([&] { db.records(); }, path, "column 'x_dtype' holds 'fp99'"),
              kSqliteMismatch);
  }
  raw_exec(path, "UPDATE tuned SET x_dtype = 'bf16', kernel = 'sideways'");
  expect_cache_error([&] { open_ro(path).records(); }, path, "column 'kernel'");
  raw_exec(path, "UPDATE tuned SET kernel = 'fwd', has_bias = 2");
  expect_cache_error([&] { open_ro(path).records(); }, path, "column 'has_bias'");
  raw_exec(path, "UPDATE tuned SET has_bias = 1, block_size = 'big'");
  expect_cache_error([&] { open_ro(path).records(); }, path, "column 'block_size'");
  raw_exec(path, "UPDATE tuned SET block_size = 1024, norm = 'cubic'");
  expect_cache_error([&] { open_ro(path).records(); }, path, "column 'norm'");
  raw_exec(path, "UPDATE tuned SET norm = 'rmsnorm', residual_dtype = 'fp8'");
  expect_cache_error([&] { open_ro(path).records(); }, path, "column 'residual_dtype'");
  raw_exec(path, "UPDATE tuned SET residual_dtype = '', y_dtype = 'int8'");
  expect_cache_error([&] { open_ro(path).records(); }, path, "column 'y_dtype'");
}

TEST(Damaged, ZeroLengthFile) {
  TempDir tmp;
  const std::string path = tmp / "empty.db";
  write_bytes(path, "");
  // Read-only: refused, untouched.
  expect_cache_error([&] { open_ro(path); }, path, "empty database");
  EXPECT_EQ(fs::file_size(path), 0u);
  // Read-write: an empty database, initialised.
  EXPECT_EQ(open_rw(path).schema_version(), 4);
}

// ---------------------------------------------------------------------------
// Read-only use

TEST(ReadOnly, RefusesWrites) {
  TempDir tmp;
  const std::string path = tmp / "c.db";
  {
    Database db = open_rw(path);
    db.upsert(record(key(1024), 1.0));
  }
  raw_exec(path, "PRAGMA journal_mode = DELETE");
  const std::string before = read_bytes(path);
  {
    Database db = open_ro(path);
    EXPECT_TRUE(db.read_only());
    EXPECT_EQ(expect_cache_error([&] { db.upsert(record(key(2048), 1.0)); }, path, "read-only"),
              kSqliteReadOnly);
    EXPECT_EQ(expect_cache_error([&] { db.put_binary({"h", "sm_90", 1}, blob(4, 1), "k"); }, path,
                                 "read-only"),
              kSqliteReadOnly);
    Database other = open_rw(":memory:");
    other.upsert(record(key(4096), 1.0));
    EXPECT_EQ(expect_cache_error([&] { db.merge_from(other); }, path, "read-only"),
              kSqliteReadOnly);
    EXPECT_EQ(db.records().size(), 1u);
  }
  EXPECT_EQ(read_bytes(path), before);
}

TEST(ReadOnly, MissingFileIsNotCreated) {
  TempDir tmp;
  const std::string path = tmp / "absent.db";
  EXPECT_EQ(expect_cache_error([&] { open_ro(path); }, path, "no such file"), kSqliteCantOpen);
  EXPECT_FALSE(exists(path));
  EXPECT_THROW(open_ro(tmp.path()), CacheError);  // a directory
  // Read-write into a missing directory: error, nothing created.
  EXPECT_THROW(open_rw(tmp / "no/dir/x.db"), CacheError);
  EXPECT_FALSE(exists(tmp / "no"));
}

// A WAL-mode cache copied into a directory the reader cannot write (a shipped
// cache under /usr/share): SQLite cannot create its -shm file, so lntune reads
// it as immutable.
TEST(ReadOnly, WalFileInUnwritableDirectory) {
  TempDir tmp;
  const std::string dir = tmp / "ro";
  fs::create_directories(dir);
  const std::string path = dir + "/c.db";
  {
    Database db = open_rw(path);
    db.upsert(record(key(1024), 1.0));
  }
  ASSERT_FALSE(exists(path + "-wal"));  // checkpointed on close, still WAL mode
  fs::permissions(tmp.path(), fs::perms::owner_all | fs::perms::group_read |
                                  fs::perms::group_exec | fs::perms::others_read |
                                  fs::perms::others_exec);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
  const std::string before = read_bytes(path);
  auto check = [&]() -> int {
    try {
      Database db = open_ro(path);
      return db.records().size() == 1 ? 0 : 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 3;
    }
  };
  if (::geteuid() == 0) {
    // Root writes anywhere: read as 'nobody' in a child process.
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(4);
      ::_exit(check());
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  } else {
    EXPECT_EQ(check(), 0);
  }
  EXPECT_EQ(read_bytes(path), before);
}

// ---------------------------------------------------------------------------
// The SQLite wrappers

TEST(Sql, TransactionRollsBackUnlessCommitted) {
  sql::Connection c(":memory:", sql::Connection::Open::read_write_create);
  c.exec("CREATE TABLE t (x INTEGER)", "test");
  {
    sql::Transaction txn(c, sql::Transaction::Kind::immediate, "test");
    c.exec("INSERT INTO t VALUES (1)", "test");
  }
  EXPECT_FALSE(c.in_transaction());
  EXPECT_EQ(c.query_int("SELECT count(*) FROM t", "test"), 0);
  try {
    sql::Transaction txn(c, sql::Transaction::Kind::immediate, "test");
    c.exec("INSERT INTO t VALUES (2)", "test");
    c.exec("INSERT INTO nowhere VALUES (2)", "inserting into nowhere");
    txn.commit();
  } catch (const CacheError& e) {
    EXPECT_NE(std::string(e.what()).find("inserting into nowhere: :memory:: no such table"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.sqlite_code(), 1);
  }
  EXPECT_EQ(c.query_int("SELECT count(*) FROM t", "test"), 0);
  {
    sql::Transaction txn(c, sql::Transaction::Kind::deferred, "test");
    c.exec("INSERT INTO t VALUES (3)", "test");
    txn.commit();
  }
  EXPECT_EQ(c.query_int("SELECT count(*) FROM t", "test"), 1);
}

TEST(Sql, ErrorKeepsExtendedCode) {
  sql::Connection c(":memory:", sql::Connection::Open::read_write_create);
  c.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)", "test");
  c.exec("INSERT INTO t VALUES (1)", "test");
  try {
    sql::Statement st(c, "INSERT INTO t VALUES (1)", "inserting a duplicate");
    st.run();
    ADD_FAILURE() << "no error";
  } catch (const CacheError& e) {
    EXPECT_EQ(e.sqlite_code(), 19);        // SQLITE_CONSTRAINT
    EXPECT_EQ(e.extended_code(), 19 | (6 << 8));  // SQLITE_CONSTRAINT_PRIMARYKEY
    EXPECT_EQ(e.file(), ":memory:");
    EXPECT_NE(std::string(e.what()).find("inserting a duplicate: :memory:: "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(code 1555)"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------
// Two processes writing one file lose nothing.

TEST(Concurrency, TwoProcessesEachUpsert200) {
  TempDir tmp;
  const std::string path = tmp / "shared.db";  // created by the racing children
  constexpr int kPerProcess = 200;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int c = 0; c < 2; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char ch;
      while (::read(go[0], &ch, 1) > 0) {}  // start together, when the parent closes the pipe
      int rc = 0;
      try {
        Database db = open_rw(path);
        for (int i = 0; i < kPerProcess; ++i) {
          db.upsert(record(key(1 + c * 100000 + i, i % kNumMBuckets), 1.0 + i));
          if (i % 50 == 0) db.put_binary({"p" + std::to_string(c), "sm_90", i}, blob(1000, 1), "k");
          if (i % 40 == 0) db = open_rw(path);  // reopen now and then
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", c, e.what());
        rc = 1;
      }
      ::_exit(rc);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  Database db = open_ro(path);
  const auto all = db.records();
  EXPECT_EQ(all.size(), 2u * kPerProcess);
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < kPerProcess; ++i) {
      auto r = db.find(key(1 + c * 100000 + i, i % kNumMBuckets));
      ASSERT_TRUE(r.has_value()) << c << " " << i;
      EXPECT_EQ(r->timing.median_us, 1.0 + i);
    }
  }
  EXPECT_EQ(db.binary_count(), 8u);
}

TEST(Concurrency, ThreadsShareOneDatabase) {
  TempDir tmp;
  Database db = open_rw(tmp / "threads.db");
  CacheStack stack(tmp / "threads.db", {});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        db.upsert(record(key(1 + t * 1000 + i), 1.0 + i));
        EXPECT_TRUE(db.find(key(1 + t * 1000 + i)).has_value());
        EXPECT_TRUE(db.find_nearest(key(1 + t * 1000 + i)).has_value());
        stack.writable()->upsert(record(key(100000 + t * 1000 + i), 2.0));
        EXPECT_TRUE(stack.find(key(100000 + t * 1000 + i)).has_value());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(db.records().size(), 400u);
}


// ---------------------------------------------------------------------------
// Hardening (issue 14): hostile and damaged files, clear errors, atomic and
// read-only-safe writes.

// Runs `fn` in a child process (as uid/gid 65534 with `as_nobody`) that is
// killed after `seconds`; returns its exit code, or 128 + signal (SIGALRM:
// it blocked or hung). `fn` returns the child's exit code.
template <typename Fn>
int in_child(Fn fn, unsigned seconds = 20, bool as_nobody = false) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::alarm(seconds);
    if (as_nobody && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(90);
    int code = 91;
    try {
      code = fn();
    } catch (...) {
      code = 92;
    }
    ::_exit(code);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// 0 if opening `path` read-only throws a CacheError containing `needle`
// (printed), 1 if it opens, 2 for another message.
int open_ro_fails_with(const std::string& path, const std::string& needle) {
  try {
    Database db = open_ro(path);
    db.records();
    return 1;
  } catch (const CacheError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return std::string(e.what()).find(needle) != std::string::npos ? 0 : 2;
  }
}

std::string make_cache(const TempDir& tmp, const std::string& name, int records = 3) {
  const std::string path = tmp / name;
  Database db = open_rw(path);
  for (int i = 0; i < records; ++i) db.upsert(record(key(1024 + i), 1.0 + i));
  return path;
}

// The issue's hostile cache: `tuned` a view over an infinite recursive CTE.
// It used to pass every check and then hang show/info/export/merge.
TEST(Hostile, ViewNamedTunedIsRejected) {
  TempDir tmp;
  const std::string path = make_cache(tmp, "view.db");
  raw_exec(path,
           "ALTER TABLE tuned RENAME TO t2; CREATE VIEW tuned AS WITH RECURSIVE c(i) AS "
           "(SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT t2.* FROM t2, c;");
  const std::string before = read_bytes(path);
  EXPECT_EQ(in_child([&] { return open_ro_fails_with(path, "not an lntune cache: unexpected table 't2'"); }), 0);
  EXPECT_EQ(in_child([&] {
              try {
                CacheStack s(std::nullopt, {path});
                return 1;
              } catch (const CacheError& e) {
                return std::string(e.what()).find("not an lntune cache") != std::string::npos ? 0 : 2;
              }
            }),
            0);
  EXPECT_EQ(read_bytes(path), before);
}

TEST(Hostile, UnexpectedObjectsAreRejected) {
  struct Case {
    const char* sql;
    const char* reason;
  };
  const Case cases[] = {
      {"CREATE TRIGGER tr AFTER INSERT ON tuned BEGIN SELECT 1; END;", "unexpected trigger 'tr'"},
      {"CREATE VIEW v AS SELECT 1;", "unexpected view 'v'"},
      {"CREATE TABLE extra (a);", "unexpected table 'extra'"},
      {"CREATE INDEX ix ON tuned (n);", "unexpected index 'ix' on 'tuned'"},
      {"ALTER TABLE tuned ADD COLUMN junk TEXT;", "table 'tuned' has an unexpected column 'junk'"},
      {"ALTER TABLE binaries ADD COLUMN g INTEGER AS (length(cubin));",
       "column 'g' of table 'binaries' is hidden or generated"},
      {"DROP TABLE meta; CREATE VIEW meta AS SELECT 'application' AS key, 'lntune' AS value;",
       "unexpected view 'meta' (lntune's 'meta' must be a table)"},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    const std::string path = make_cache(tmp, "c.db");
    raw_exec(path, c.sql);
    EXPECT_EQ(expect_cache_error([&] { open_ro(path); }, path, std::string("not an lntune cache: ") + c.reason),
              kSqliteNotADb)
        << c.sql;
    EXPECT_EQ(expect_cache_error([&] { open_rw(path); }, path, c.reason), kSqliteNotADb) << c.sql;
  }
}

// Every step runs under a budget of SQLite VM instructions: a runaway query
// becomes a clear error instead of a hang.
TEST(Hostile, QueryBudgetStopsRunawayQuery) {
  sql::Connection c(":memory:", sql::Connection::Open::read_write_create);
  c.set_step_budget(2'000'000);
  try {
    c.query_int("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT max(i) FROM r",
                "counting forever");
    ADD_FAILURE() << "no error";
  } catch (const CacheError& e) {
    EXPECT_NE(std::string(e.what()).find("counting forever: :memory:: not a usable lntune cache: a query "
                                         "exceeded its budget of 2000000 SQLite instructions"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.sqlite_code(), 9);  // SQLITE_INTERRUPT
  }
  // The budget is per step: the connection works on.
  EXPECT_EQ(c.query_int("SELECT 42", "after"), 42);
  c.exec("CREATE TABLE t(a)", "after");
  try {
    c.exec("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) INSERT INTO t SELECT i FROM r",
           "inserting forever");
    ADD_FAILURE() << "no error";
  } catch (const CacheError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeded its budget"), std::string::npos) << e.what();
  }
}

// A FIFO (or any non-regular file) is refused before SQLite opens it:
// opening a FIFO blocks until a writer appears.
TEST(Hostile, FifoAndDevicesAreRejectedWithoutBlocking) {
  TempDir tmp;
  const std::string fifo = tmp / "fifo.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(in_child([&] { return open_ro_fails_with(fifo, "not a regular file (a FIFO)"); }), 0);
  EXPECT_EQ(in_child([&] {
              try {
                open_rw(fifo);
                return 1;
              } catch (const CacheError& e) {
                return std::string(e.what()).find("not a regular file (a FIFO)") != std::string::npos ? 0 : 2;
              }
            }),
            0);
  EXPECT_EQ(in_child([&] {
              try {
                CacheStack s(std::nullopt, {fifo});
                return 1;
              } catch (const CacheError& e) {
                return std::string(e.what()).find("a FIFO") != std::string::npos ? 0 : 2;
              }
            }),
            0);
  // /dev/null: "not a regular file (a character device)", not "disk I/O error".
  EXPECT_EQ(expect_cache_error([&] { open_ro("/dev/null"); }, "/dev/null",
                               "not a regular file (a character device)"),
            kSqliteCantOpen);
  EXPECT_EQ(expect_cache_error([&] { open_rw("/dev/null"); }, "/dev/null",
                               "not a regular file (a character device)"),
            kSqliteCantOpen);
}

TEST(Errors, SymlinkLoopIsNamed) {
  TempDir tmp;
  const std::string a = tmp / "a.db", b = tmp / "b.db";
  ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);
  EXPECT_EQ(expect_cache_error([&] { open_ro(a); }, a, "symbolic link loop"), kSqliteCantOpen);
  EXPECT_EQ(expect_cache_error([&] { open_rw(a); }, a, "symbolic link loop"), kSqliteCantOpen);
  expect_cache_error([&] { CacheStack s(std::nullopt, {a}); }, a, "symbolic link loop");
  // A dangling link is a missing file.
  const std::string d = tmp / "dangling.db";
  ASSERT_EQ(::symlink((tmp / "nowhere").c_str(), d.c_str()), 0);
  expect_cache_error([&] { open_ro(d); }, d, "no such file");
}

TEST(Errors, PermissionDeniedIsNamed) {
  TempDir tmp;
  fs::permissions(tmp.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  const std::string path = make_cache(tmp, "secret.db");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  fs::create_directories(tmp / "closed");
  const std::string inside = make_cache(tmp, "closed/c.db");
  fs::permissions(tmp / "closed", fs::perms::owner_all);
  auto check = [&]() -> int {
    int bad = 0;
    bad += open_ro_fails_with(path, "permission denied (the file is not readable)") != 0;
    bad += open_ro_fails_with(inside, "permission denied (a directory on the path cannot be searched)") != 0;
    try {
      open_rw(tmp / "closed/new.db");
      ++bad;
    } catch (const CacheError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      bad += std::string(e.what()).find("permission denied") == std::string::npos;
    }
    return bad;
  };
  if (::geteuid() == 0) {
    EXPECT_EQ(in_child(check, 20, true), 0);  // root reads anything: check as 'nobody'
  } else {
    EXPECT_EQ(check(), 0);
  }
}

// Lookups never write the user cache: an empty file stays empty (it used to
// be initialised as a cache by `info --db`), and an existing file in
// rollback-journal mode (an export) is not switched to WAL.
TEST(Stack, LookupsNeverWriteTheUserCache) {
  TempDir tmp;
  write_bytes(tmp / "empty.db", "");
  {
    CacheStack s(tmp / "empty.db", {});
    EXPECT_TRUE(s.layers().empty());
    EXPECT_FALSE(s.find(key(1024)));
  }
  EXPECT_EQ(read_bytes(tmp / "empty.db"), "");
  const std::string src = make_cache(tmp, "src.db");
  open_ro(src).export_to(tmp / "export.db");
  const std::string before = read_bytes(tmp / "export.db");
  {
    CacheStack s(tmp / "export.db", {});
    ASSERT_EQ(s.layers().size(), 1u);
    EXPECT_EQ(s.layers()[0]->records().size(), 3u);
    EXPECT_TRUE(s.find(key(1024)));
  }
  EXPECT_EQ(read_bytes(tmp / "export.db"), before);
  // Writing still works, and then lookups see the writes.
  CacheStack s(tmp / "empty.db", {});
  ASSERT_NE(s.writable(), nullptr);
  s.writable()->upsert(record(key(2048), 1.0));
  EXPECT_TRUE(s.find(key(2048)));
}

// A rollback journal left by an interrupted write must not be ignored: the
// read-only open used to fall back to immutable=1 and show the half-written
// file.
TEST(ReadOnly, HotJournalIsNotIgnored) {
  TempDir tmp;
  const std::string src = make_cache(tmp, "src.db", 0);
  {
    Database db = open_rw(src);
    for (int i = 0; i < 2000; ++i) db.upsert(record(key(1000 + i), 1.0));
  }
  const std::string path = tmp / "crashed.db";
  open_ro(src).export_to(path);  // rollback-journal mode
  // Start deleting everything with a one-page cache (dirty pages spill into
  // the file), then snapshot file + journal mid-transaction: what a kill -9
  // leaves behind.
  {
    sql::Connection c(path, sql::Connection::Open::read_write);
    c.exec("PRAGMA cache_size = 1; BEGIN IMMEDIATE; DELETE FROM tuned;", "test setup");
    ASSERT_TRUE(exists(path + "-journal"));
    fs::copy_file(path, tmp / "snap.db");
    fs::copy_file(path + "-journal", tmp / "snap.db-journal");
    c.exec("ROLLBACK", "test setup");
  }
  const std::string snap = tmp / "snap.db";
  const std::string before = read_bytes(snap);
  // Either a clear error, or (never) the wrong records.
  try {
    Database db = open_ro(snap);
    EXPECT_EQ(db.records().size(), 2000u) << "read past a hot journal";
  } catch (const CacheError& e) {
    EXPECT_NE(std::string(e.what()).find("hot rollback journal"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_bytes(snap), before);
  EXPECT_TRUE(exists(snap + "-journal"));
  // Read-write rolls it back, as SQLite does.
  EXPECT_EQ(open_rw(snap).records().size(), 2000u);
}

// export_to writes the file in one piece: no temporary files are left in the
// directory, the result is a rollback-journal file, and a failed export
// leaves nothing that blocks a re-run.
TEST(ExportMerge, ExportLeavesNoTemporaryFiles) {
  TempDir tmp;
  fs::create_directories(tmp / "out");
  const std::string src = make_cache(tmp, "src.db");
  {
    Database db = open_rw(src);
    db.put_binary(BinaryKey{"h1", "sm_90", 12040}, blob(100000, 1), "k1");
  }
  open_ro(src).export_to(tmp / "out/x.db");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp / "out")) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"x.db"});
  const std::string bytes = read_bytes(tmp / "out/x.db");
  ASSERT_GE(bytes.size(), 100u);
  EXPECT_EQ(bytes[18], 1);  // rollback journal, not WAL
  EXPECT_EQ(open_ro(tmp / "out/x.db").records().size(), 3u);
  EXPECT_EQ(open_ro(tmp / "out/x.db").binary_count(), 1u);
  EXPECT_EQ(fs::status(tmp / "out/x.db").permissions() & fs::perms::owner_read, fs::perms::owner_read);
  // A dangling symbolic link at the destination counts as existing.
  ASSERT_EQ(::symlink((tmp / "nowhere").c_str(), (tmp / "out/link.db").c_str()), 0);
  expect_cache_error([&] { open_ro(src).export_to(tmp / "out/link.db"); }, tmp / "out/link.db",
                     "refusing to overwrite");
  EXPECT_FALSE(exists(tmp / "nowhere"));
}

// A writer killed at a random moment leaves no file or the complete one
// (tests/crash_consistency.sh does this 50 times on a large merge).
TEST(ExportMerge, KilledExportLeavesNothingOrTheWholeFile) {
  TempDir tmp;
  const std::string src = tmp / "big.db";
  {
    Database db = open_rw(src);
    for (int i = 0; i < 300; ++i) db.upsert(record(key(1000 + i), 1.0));
    for (int i = 0; i < 40; ++i)
      db.put_binary(BinaryKey{"h" + std::to_string(i), "sm_90", 12040}, blob(200000, static_cast<unsigned>(i)), "k");
  }
  // How long one export takes here; kills are spread over 1.5 times that.
  const auto t0 = std::chrono::steady_clock::now();
  open_ro(src).export_to(tmp / "timing.db");
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  int complete = 0, absent = 0;
  const int rounds = 8;
  for (int round = 0; round < rounds; ++round) {
    const std::string out = tmp / ("out" + std::to_string(round) + ".db");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        open_ro(src).export_to(out);
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    ::usleep(static_cast<useconds_t>(took.count() * 3 * round / (2 * rounds)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!exists(out)) {
      ++absent;
      continue;
    }
    Database db = open_ro(out);
    EXPECT_EQ(db.records().size(), 300u);
    EXPECT_EQ(db.binary_count(), 40u);
    ++complete;
  }
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find("lntune-tmp"), std::string::npos) << e.path();
  std::printf("killed exports: %d absent, %d complete\n", absent, complete);
}

}  // namespace
