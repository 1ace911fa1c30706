// lntune::cache — the persistent store of tuning results and compiled kernels.
//
// A cache file is a SQLite database holding
//   * the best Config found per problem key (GPU, canonical traits, N, bucket
//     of M), with its timing, bandwidth and provenance, and
//   * compiled CUBINs keyed by (source hash, arch, NVRTC version).
// Users ship cache files with deployments (`export_to`), and a process sees a
// stack of them (`CacheStack`): its own writable cache over read-only shipped
// ones.
//
// File format (schema version 2; see cache/schema.cpp for the exact DDL and
// the migration steps from older versions):
//   PRAGMA application_id = 0x4C4E5455 ("LNTU"), PRAGMA user_version = schema
//   version; tables meta(key, value) (holding 'application' = 'lntune' and
//   'schema_version'), tuned(...) with one row per key, binaries(...).
//   Enums are stored as their text (to_string) and parsed back on reading.
//
// Safety guarantees:
//   * A file that is not an lntune cache (text, truncated, corrupt, another
//     application's database) or that has a newer schema than this build
//     supports is refused with a CacheError naming it and the problem, and is
//     never modified. (A zero-length file counts as an empty database: opened
//     read-write it is initialised, opened read-only it is refused.)
//   * Read-only opening never modifies the file, not even to migrate an older
//     schema: records of an older schema are read as they are. It never
//     ignores a journal: a hot rollback journal left by an interrupted write
//     is an error naming it (a read-only open cannot roll it back), and the
//     immutable fallback (a WAL file in a directory lntune cannot write) is
//     taken only where no -wal or -journal file exists beside it.
//   * Hostile files: only lntune's own objects are accepted -- the tables
//     meta, tuned and binaries with exactly their columns (none generated),
//     the indexes SQLite makes for their keys and SQLite's statistics tables;
//     a view, trigger, virtual table, other table or index is "not an lntune
//     cache: <what>" (SQLITE_NOTADB). Every statement step runs under a
//     budget of SQLite VM instructions (sql::kDefaultStepBudget): a runaway
//     query is a CacheError, never a hang. Only regular files are opened: a
//     FIFO, device, socket or directory is refused (checked with stat(2), so
//     nothing blocks), as are symbolic link loops and unreadable files, each
//     with its own message.
//   * Read-write files are in WAL mode with a 10 s busy timeout, and every
//     write is one BEGIN IMMEDIATE transaction, so several processes (and
//     threads) writing one file lose nothing.
//
// Thread safety: a Database serialises its own calls (internal mutex), so one
// Database may be shared between threads; so may a CacheStack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lntune/types.hpp"

namespace lntune::cache {

// ---------------------------------------------------------------------------
// Keys and records

struct GpuId {
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;

  std::string arch() const;  // "sm_<major><minor>", e.g. "sm_90"
  friend bool operator==(const GpuId& a, const GpuId& b) {
    return a.name == b.name && a.cc_major == b.cc_major && a.cc_minor == b.cc_minor &&
           a.sm_count == b.sm_count;
  }
  friend bool operator!=(const GpuId& a, const GpuId& b) { return !(a == b); }
};
std::ostream& operator<<(std::ostream& os, const GpuId& g);  // "NVIDIA H100 (sm_90, 132 SMs)"

// Bucket of the row count M relative to the number of SMs, r = M / sm_count:
//   0: r < 1/4        (a small fraction of one wave of one-row CTAs)
//   1: 1/4 <= r < 1
//   2: 1   <= r < 4
//   3: 4   <= r < 16
//   4: 16  <= r < 64
//   5: 64  <= r
// i.e. clamp(floor(log2(r) / 2) + 2, 0, 5), computed exactly in integers.
// M = 0 is bucket 0. Throws lntune::Error if M < 0 or sm_count <= 0.
inline constexpr int kNumMBuckets = 6;
int m_bucket(std::int64_t M, int sm_count);

struct TuneKey {
  GpuId gpu;
  Traits traits;  // stored and matched as traits.canonical()
  std::int64_t n = 0;  // row length, > 0
  int m_bucket = 0;    // m_bucket(M, gpu.sm_count), in [0, kNumMBuckets)

  friend bool operator==(const TuneKey& a, const TuneKey& b) {
    return a.gpu == b.gpu && a.traits.canonical() == b.traits.canonical() && a.n == b.n &&
           a.m_bucket == b.m_bucket;
  }
  friend bool operator!=(const TuneKey& a, const TuneKey& b) { return !(a == b); }
};
std::ostream& operator<<(std::ostream& os, const TuneKey& k);

struct Timing {
  double median_us = 0, p20_us = 0, p80_us = 0;
  int reps = 0;
  friend bool operator==(const Timing& a, const Timing& b) {
    return a.median_us == b.median_us && a.p20_us == b.p20_us && a.p80_us == b.p80_us &&
           a.reps == b.reps;
  }
  friend bool operator!=(const Timing& a, const Timing& b) { return !(a == b); }
};

// Where a record came from. Stored as text (origin_text): "tuned",
// "tuned-partial", "merged:<file name>", "unknown".
enum class Origin {
  tuned,    // measured here, the whole search
  partial,  // measured here, the search cut short by the time budget
  merged,   // won a merge_from from another file (Provenance::merged_from)
  unknown,  // migrated from schema v1, which did not record it (or unreadable text)
};
std::string_view to_string(Origin o);  // "tuned", "tuned-partial", "merged", "unknown"
// The stored text of an origin; `merged_from` is used for Origin::merged only.
std::string origin_text(Origin o, const std::string& merged_from = {});
// Parses stored text (sets *merged_from for "merged:<file>"); anything else is unknown.
Origin parse_origin(std::string_view text, std::string* merged_from);

struct Provenance {
  std::string template_hash, lntune_version;
  int nvrtc_version = 0, driver_version = 0;
  std::string tuned_at;  // ISO-8601 UTC, e.g. "2024-05-01T12:00:00Z"
  Origin origin = Origin::tuned;
  std::string merged_from;  // the file name, with Origin::merged; else empty
  std::string origin_text() const { return cache::origin_text(origin, merged_from); }
  friend bool operator==(const Provenance& a, const Provenance& b) {
    return a.template_hash == b.template_hash && a.lntune_version == b.lntune_version &&
           a.nvrtc_version == b.nvrtc_version && a.driver_version == b.driver_version &&
           a.tuned_at == b.tuned_at && a.origin == b.origin && a.merged_from == b.merged_from;
  }
  friend bool operator!=(const Provenance& a, const Provenance& b) { return !(a == b); }
};

struct TuneRecord {
  TuneKey key;
  Config config;
  Timing timing;
  double gbps = 0, copy_gbps = 0;  // achieved bandwidth; a plain copy's on the same GPU
  double default_median_us = 0;    // the default heuristic's time in the same run, 0 if unknown
  Provenance prov;
  friend bool operator==(const TuneRecord& a, const TuneRecord& b) {
    return a.key == b.key && a.config == b.config && a.timing == b.timing && a.gbps == b.gbps &&
           a.copy_gbps == b.copy_gbps && a.default_median_us == b.default_median_us &&
           a.prov == b.prov;
  }
  friend bool operator!=(const TuneRecord& a, const TuneRecord& b) { return !(a == b); }
};

// The fleet's deterministic order of winners (pure): configs compare by
// (block_size, num_warps, rows_per_cta, group_size_m, cluster_size); record a
// wins over b for the same key when its median is lower, or equal with a
// config earlier in that order. Equal medians and configs: neither wins.
bool config_before(const Config& a, const Config& b);
bool record_wins(const TuneRecord& a, const TuneRecord& b);

struct BinaryKey {
  std::string source_hash;
  std::string arch;  // "sm_90", "sm_90a", ...
  int nvrtc_version = 0;
  friend bool operator==(const BinaryKey& a, const BinaryKey& b) {
    return a.source_hash == b.source_hash && a.arch == b.arch && a.nvrtc_version == b.nvrtc_version;
  }
  friend bool operator!=(const BinaryKey& a, const BinaryKey& b) { return !(a == b); }
};

struct Binary {
  BinaryKey key;
  std::vector<char> cubin;
  std::string kernel_name;
  std::string created_at;  // ISO-8601 UTC
};

// The current time as ISO-8601 UTC, e.g. "2024-05-01T12:00:00Z".
std::string utc_now_iso8601();

// ---------------------------------------------------------------------------
// Errors

// Every failure of the cache layer. what() reads
//   "<what was being done>: <file>: <problem> (code N)"
// where N is the SQLite extended result code. Problems lntune detects itself
// carry the closest SQLite code:
//   SQLITE_CANTOPEN (14)  missing file (read-only open), newer schema, export
//                         target exists
//   SQLITE_NOTADB   (26)  not an lntune cache (text, foreign database, empty)
//   SQLITE_CORRUPT  (11)  damaged file or damaged lntune schema
//   SQLITE_READONLY (8)   write through a read-only Database
//   SQLITE_MISMATCH (20)  a stored value of the wrong type or out of range;
//                         the message names the column
class CacheError : public std::runtime_error {
 public:
  CacheError(const std::string& doing, std::string file, const std::string& problem,
             int extended_code);
  int sqlite_code() const { return code_ & 0xff; }  // primary result code
  int extended_code() const { return code_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  int code_;
};

// ---------------------------------------------------------------------------
// One cache file

class Database {
 public:
  enum class Mode { read_write_create, read_only };

  // Opens (read_write_create: creating if missing, and migrating an older
  // schema to the current one) the cache file at `path`; ":memory:" gives a
  // private in-memory cache. Parent directories are not created. An existing
  // file is checked first (application_id, schema version, tables, then
  // PRAGMA quick_check, which reads the whole file: ~0.5 ms per MB).
  static Database open(const std::string& path, Mode mode);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // The file's schema version: kCurrentSchemaVersion unless the file is older
  // and opened read-only.
  int schema_version() const;
  static constexpr int kCurrentSchemaVersion = 4;

  // Stores `r` under r.key (traits canonicalised), replacing any record for
  // the same key. Throws lntune::Error for an invalid record (n <= 0, m_bucket
  // out of range, sm_count <= 0, empty gpu name).
  void upsert(const TuneRecord& r);
  std::optional<TuneRecord> find(const TuneKey& key) const;

  // The record with the same gpu, canonical traits and m_bucket whose n is
  // nearest to key.n on a log scale: smallest |log(n / key.n)|; of two at the
  // same distance (n1 < key.n < n2 with n1 * n2 == key.n^2), the larger n.
  // An exact match is its own nearest. Throws lntune::Error if key.n <= 0.
  std::optional<TuneRecord> find_nearest(const TuneKey& key) const;

  // All records, or those of one GPU, ordered by key.
  std::vector<TuneRecord> records(const std::optional<GpuId>& gpu = {}) const;

  // Stores a compiled kernel (replacing one with the same key); created_at is
  // the current time. `cubin` must not be empty.
  void put_binary(const BinaryKey& key, const std::vector<char>& cubin,
                  const std::string& kernel_name);
  std::optional<std::vector<char>> get_binary(const BinaryKey& key) const;
  std::optional<Binary> get_binary_entry(const BinaryKey& key) const;
  std::size_t binary_count() const;

  // Writes a new self-contained cache file (rollback journal, not WAL, so it
  // can be read from a read-only directory) with the records of `gpu` (all
  // records if none) and the binaries for gpu->arch() ("sm_XY" and suffixed
  // variants such as "sm_XYa"; all binaries if no gpu). Refuses (CacheError)
  // if `out_path` exists (a dangling symbolic link included; there is no
  // overwrite). Atomic: the file is built in memory and appears complete or
  // not at all -- written to an unnamed O_TMPFILE file in the destination
  // directory, fsync'ed, linked into place (which never replaces a file that
  // appeared meanwhile), and the directory fsync'ed; a killed export leaves
  // nothing (where O_TMPFILE is unsupported, a hidden ".<name>.lntune-tmp-*"
  // temporary is used and a kill -9 can leave it). With
  // `only_binaries`, just the binaries whose source hash it holds (e.g. the
  // tuned winners' kernels, not every candidate compiled while tuning).
  void export_to(const std::string& out_path, const std::optional<GpuId>& gpu = {},
                 const std::set<std::string>* only_binaries = nullptr) const;

  // Merges `other` into this cache in one transaction: each of its records is
  // stored when this cache has none for the same key or it wins over this
  // cache's (record_wins: faster median, ties by config order), so merging
  // files in any order keeps the same winners. A stored record whose origin
  // was Origin::tuned gets the origin Origin::merged with merged_from the file
  // name of `other`. Binaries this cache lacks are copied.
  void merge_from(const Database& other);

  const std::string& path() const;
  bool read_only() const;

  struct Impl;

 private:
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------
// The search path: a writable user cache layered over read-only shipped ones.
//
// from_environment() resolves
//   user cache:   $LNTUNE_CACHE (the file itself) if set and non-empty, else
//                 $XDG_CACHE_HOME/lntune/lntune.db if XDG_CACHE_HOME is an
//                 absolute path, else $HOME/.cache/lntune/lntune.db if HOME is
//                 set and non-empty, else none;
//   shipped:      the ':'-separated entries of $LNTUNE_CACHE_PATH, in order,
//                 then `extra_shipped` (e.g. the install's share/lntune dir).
// Each shipped entry is a cache file or a directory standing for every *.db
// file directly inside it, in name order. Entries that do not exist, are
// empty strings, or name the user cache or an earlier entry's file are
// skipped. Shipped files are opened read-only when the stack is built; one
// that cannot be opened (corrupt, foreign, newer schema) throws CacheError.
//
// Lookups consult the user cache first (only if its file exists and is not
// empty; lookups open it read-only, so reading never creates, initialises,
// migrates or switches the journal mode of it), then the shipped caches in
// order. Shipped entries that are not regular files (a FIFO, say) throw.
class CacheStack {
 public:
  static CacheStack from_environment(const std::vector<std::string>& extra_shipped = {});
  CacheStack(std::optional<std::string> writable_path, std::vector<std::string> shipped_paths);

  CacheStack(CacheStack&&) noexcept;
  CacheStack& operator=(CacheStack&&) noexcept;
  CacheStack(const CacheStack&) = delete;
  CacheStack& operator=(const CacheStack&) = delete;
  ~CacheStack();

  // The record from the first layer that has the key.
  std::optional<TuneRecord> find(const TuneKey& key) const;
  // Each layer's find_nearest; the nearest of those by the same rule
  // (distance, then larger n), and of equal ones the earlier layer's.
  std::optional<TuneRecord> find_nearest(const TuneKey& key) const;
  // The binary from the first layer that has it.
  std::optional<std::vector<char>> get_binary(const BinaryKey& key) const;

  // The user cache, opened read-write on first use (creating the file and its
  // parent directories); nullptr if there is none. Throws CacheError if the
  // file cannot be used.
  Database* writable();
  const std::optional<std::string>& writable_path() const;

  // The layers in lookup order: the user cache (read-write once writable()
  // was called, else read-only, if its file exists), then the shipped caches.
  std::vector<const Database*> layers() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace lntune::cache
