#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <system_error>
#include <vector>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "cache/cache.hpp"
#include "cache/internal.hpp"
#include "cache/schema.hpp"
#include "cache/sqlite.hpp"

namespace lntune::cache {

// ---------------------------------------------------------------------------
// Small value helpers

std::string GpuId::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

std::ostream& operator<<(std::ostream& os, const GpuId& g) {
  return os << g.name << " (" << g.arch() << ", " << g.sm_count << " SMs)";
}

std::ostream& operator<<(std::ostream& os, const TuneKey& k) {
  return os << k.gpu << ": " << k.traits.canonical() << " n=" << k.n << " m_bucket=" << k.m_bucket;
}

int m_bucket(std::int64_t M, int sm_count) {
  if (sm_count <= 0) throw Error("lntune::cache::m_bucket: sm_count must be > 0");
  if (M < 0) throw Error("lntune::cache::m_bucket: M must be >= 0");
  const std::int64_t sm = sm_count;
  if (M < sm) return 4 * M < sm ? 0 : 1;  // 4 * M < 4 * INT_MAX: no overflow
  if (M < 4 * sm) return 2;
  if (M < 16 * sm) return 3;
  if (M < 64 * sm) return 4;
  return 5;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace detail {
bool nearer(std::int64_t n, std::int64_t a, std::int64_t b) {
  __extension__ using u128 = unsigned __int128;
  // Distance of c as the ratio p/q = max(c, n) / min(c, n) >= 1.
  const auto pa = static_cast<u128>(std::max(a, n)), qa = static_cast<u128>(std::min(a, n));
  const auto pb = static_cast<u128>(std::max(b, n)), qb = static_cast<u128>(std::min(b, n));
  const u128 da = pa * qb, db = pb * qa;  // compare pa/qa with pb/qb
  if (da != db) return da < db;
  return a > b;
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Rows

namespace {

// Everything but n: the parameters ?1..?10 and ?30..?33 (the variant, schema
// v4) of bind_key().
constexpr const char* kWhereKeyButN =
    " WHERE gpu_name = ?1 AND cc_major = ?2 AND cc_minor = ?3 AND sm_count = ?4 AND kernel = ?5"
    " AND x_dtype = ?6 AND w_dtype = ?7 AND has_weight = ?8 AND has_bias = ?9 AND m_bucket = ?10"
    " AND norm = ?30 AND residual_dtype = ?31 AND zero_centered = ?32 AND y_dtype = ?33";
constexpr const char* kOrderByKey =
    " ORDER BY gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype, has_weight,"
    " has_bias, norm, residual_dtype, zero_centered, y_dtype, m_bucket, n";

// The record columns in the order read_record() expects, as a subquery so
// that kWhereKeyButN and kOrderByKey apply to every schema version; older
// versions lack later columns, which read as their defaults (v1: no
// default_median_us or origin; v2: no cluster_size; v3: no variant, i.e. a
// LayerNorm without options).
std::string select_records(int version) {
  std::string s =
      "SELECT * FROM (SELECT gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype, has_weight,"
      " has_bias, m_bucket, n, block_size, num_warps, rows_per_cta, group_size_m, median_us,"
      " p20_us, p80_us, reps, gbps, copy_gbps, template_hash, lntune_version, nvrtc_version,"
      " driver_version, tuned_at, ";
  s += version >= 2 ? "default_median_us, origin"
                    : std::string("0.0 AS default_median_us, '") + schema::kUnknownOrigin +
                          "' AS origin";
  s += version >= 3 ? ", cluster_size" : ", 1 AS cluster_size";
  s += version >= 4 ? ", norm, residual_dtype, zero_centered, y_dtype"
                    : ", 'layernorm' AS norm, '' AS residual_dtype, 0 AS zero_centered, '' AS y_dtype";
  s += " FROM tuned)";
  return s;
}

constexpr const char* kInsertRecord =
    "INSERT OR REPLACE INTO tuned (gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype,"
    " w_dtype, has_weight, has_bias, m_bucket, n, block_size, num_warps, rows_per_cta,"
    " group_size_m, median_us, p20_us, p80_us, reps, gbps, copy_gbps, template_hash,"
    " lntune_version, nvrtc_version, driver_version, tuned_at, default_median_us, origin,"
    " cluster_size, norm, residual_dtype, zero_centered, y_dtype)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
    " ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33)";

constexpr const char* kInsertBinary =
    "INSERT OR REPLACE INTO binaries (source_hash, arch, nvrtc_version, kernel_name, cubin,"
    " created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
constexpr const char* kSelectBinaries =
    "SELECT source_hash, arch, nvrtc_version, kernel_name, cubin, created_at FROM binaries";

// Binds ?1..?10 and ?30..?33 (the key without n), with the traits canonicalised.
void bind_key(sql::Statement& st, const TuneKey& k) {
  const Traits t = k.traits.canonical();
  st.bind_text(1, k.gpu.name)
      .bind_int(2, k.gpu.cc_major)
      .bind_int(3, k.gpu.cc_minor)
      .bind_int(4, k.gpu.sm_count)
      .bind_text(5, to_string(t.kernel))
      .bind_text(6, to_string(t.x_dtype))
      .bind_text(7, to_string(t.w_dtype))
      .bind_int(8, t.has_weight ? 1 : 0)
      .bind_int(9, t.has_bias ? 1 : 0)
      .bind_int(10, k.m_bucket)
      .bind_text(30, to_string(t.norm))
      .bind_text(31, t.residual ? to_string(*t.residual) : std::string_view(""))
      .bind_int(32, t.zero_centered ? 1 : 0)
      .bind_text(33, t.y_dtype ? to_string(*t.y_dtype) : std::string_view(""));
}

void bind_record(sql::Statement& st, const TuneRecord& r) {
  bind_key(st, r.key);
  st.bind_int(11, r.key.n)
      .bind_int(12, r.config.block_size)
      .bind_int(13, r.config.num_warps)
      .bind_int(14, r.config.rows_per_cta)
      .bind_int(15, r.config.group_size_m)
      .bind_double(16, r.timing.median_us)
      .bind_double(17, r.timing.p20_us)
      .bind_double(18, r.timing.p80_us)
      .bind_int(19, r.timing.reps)
      .bind_double(20, r.gbps)
      .bind_double(21, r.copy_gbps)
      .bind_text(22, r.prov.template_hash)
      .bind_text(23, r.prov.lntune_version)
      .bind_int(24, r.prov.nvrtc_version)
      .bind_int(25, r.prov.driver_version)
      .bind_text(26, r.prov.tuned_at)
      .bind_double(27, r.default_median_us)
      .bind_text(28, r.prov.origin_text())
      .bind_int(29, r.config.cluster_size);
}

TuneRecord read_record(const sql::Statement& st) {
  TuneRecord r;
  r.key.gpu.name = st.column_text(0);
  r.key.gpu.cc_major = st.column_int(1);
  r.key.gpu.cc_minor = st.column_int(2);
  r.key.gpu.sm_count = st.column_int(3);
  {
    const std::string s = st.column_text(4);
    const auto k = parse_kernel(s);
    if (!k) st.bad_column(4, "holds '" + s + "', not a kernel (fwd, bwd_dx, bwd_dwdb)");
    r.key.traits.kernel = *k;
  }
  for (int i : {5, 6}) {
    const std::string s = st.column_text(i);
    const auto d = parse_dtype(s);
    if (!d) st.bad_column(i, "holds '" + s + "', not a dtype (fp32, fp16, bf16)");
    (i == 5 ? r.key.traits.x_dtype : r.key.traits.w_dtype) = *d;
  }
  r.key.traits.has_weight = st.column_bool(7);
  r.key.traits.has_bias = st.column_bool(8);
  r.key.m_bucket = st.column_int(9);
  if (r.key.m_bucket < 0 || r.key.m_bucket >= kNumMBuckets)
    st.bad_column(9, "holds " + std::to_string(r.key.m_bucket) + ", not a bucket (0..5)");
  r.key.n = st.column_int64(10);
  if (r.key.n <= 0) st.bad_column(10, "holds " + std::to_string(r.key.n) + ", not > 0");
  r.config.block_size = st.column_int(11);
  r.config.num_warps = st.column_int(12);
  r.config.rows_per_cta = st.column_int(13);
  r.config.group_size_m = st.column_int(14);
  r.timing.median_us = st.column_double(15);
  r.timing.p20_us = st.column_double(16);
  r.timing.p80_us = st.column_double(17);
  r.timing.reps = st.column_int(18);
  r.gbps = st.column_double(19);
  r.copy_gbps = st.column_double(20);
  r.prov.template_hash = st.column_text(21);
  r.prov.lntune_version = st.column_text(22);
  r.prov.nvrtc_version = st.column_int(23);
  r.prov.driver_version = st.column_int(24);
  r.prov.tuned_at = st.column_text(25);
  r.default_median_us = st.column_double(26);
  r.prov.origin = parse_origin(st.column_text(27), &r.prov.merged_from);
  r.config.cluster_size = st.column_int(28);
  {
    const std::string s = st.column_text(29);
    const auto n = parse_norm(s);
    if (!n) st.bad_column(29, "holds '" + s + "', not a norm (layernorm, rmsnorm)");
    r.key.traits.norm = *n;
  }
  for (int i : {30, 32}) {
    const std::string s = st.column_text(i);
    if (s.empty()) continue;  // no residual; y in x_dtype
    const auto d = parse_dtype(s);
    if (!d) st.bad_column(i, "holds '" + s + "', not a dtype (fp32, fp16, bf16) or '' (none)");
    (i == 30 ? r.key.traits.residual : r.key.traits.y_dtype) = *d;
  }
  r.key.traits.zero_centered = st.column_bool(31);
  if (r.config.cluster_size < 1)
    st.bad_column(28, "holds " + std::to_string(r.config.cluster_size) + ", not a cluster size (>= 1)");
  return r;
}

void validate(const TuneKey& k, const char* what) {
  const std::string where = std::string("lntune::cache::Database::") + what + ": ";
  if (k.gpu.name.empty()) throw Error(where + "key.gpu.name is empty");
  if (k.gpu.sm_count <= 0) throw Error(where + "key.gpu.sm_count must be > 0");
  if (k.n <= 0) throw Error(where + "key.n must be > 0");
  if (k.m_bucket < 0 || k.m_bucket >= kNumMBuckets)
    throw Error(where + "key.m_bucket must be in [0, " + std::to_string(kNumMBuckets) + ")");
}

void validate(const BinaryKey& k, const char* what) {
  const std::string where = std::string("lntune::cache::Database::") + what + ": ";
  if (k.source_hash.empty()) throw Error(where + "source_hash is empty");
  if (k.arch.empty()) throw Error(where + "arch is empty");
}

void insert_binary(sql::Statement& ins, const Binary& b) {
  ins.reset();
  ins.bind_text(1, b.key.source_hash)
      .bind_text(2, b.key.arch)
      .bind_int(3, b.key.nvrtc_version)
      .bind_text(4, b.kernel_name)
      .bind_blob(5, b.cubin.data(), b.cubin.size())
      .bind_text(6, b.created_at);
  ins.run();
}

Binary read_binary(const sql::Statement& st) {
  Binary b;
  b.key.source_hash = st.column_text(0);
  b.key.arch = st.column_text(1);
  b.key.nvrtc_version = st.column_int(2);
  b.kernel_name = st.column_text(3);
  b.cubin = st.column_blob(4);
  b.created_at = st.column_text(5);
  return b;
}

// "sm_90" matches gpu arch "sm_90" and its suffixed variants ("sm_90a").
bool arch_matches(const std::string& arch, const std::string& base) {
  if (arch.compare(0, base.size(), base) != 0) return false;
  for (std::size_t i = base.size(); i < arch.size(); ++i) {
    const char c = arch[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  }
  return true;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool path_exists(const std::string& path) {
  struct stat sb {};
  return ::lstat(path.c_str(), &sb) == 0;
}

}  // namespace

namespace detail {

// Looks at `path` with stat(2) before SQLite opens it -- opening a FIFO
// would block, and SQLite's own errors ("unable to open database file",
// "disk I/O error") do not say what is wrong. Returns false if the file does
// not exist (a dangling symbolic link included); throws CacheError for
// anything that is not a regular file lntune may read (and, with
// `for_writing`, create).
bool check_cache_path(const std::string& path, const std::string& doing, bool for_writing) {
  if (path == ":memory:") return true;
  auto fail = [&](const std::string& problem) -> bool {
    throw CacheError(doing, path, problem, SQLITE_CANTOPEN);
  };
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) {
    const int err = errno;
    switch (err) {
      case ENOENT: {
        if (!for_writing) return false;
        // Where it would be created: the directory must exist and be writable.
        const std::string dir = parent_dir(path);
        struct stat db {};
        if (::stat(dir.c_str(), &db) != 0) {
          const int e2 = errno;
          return fail(e2 == ENOENT ? "no such directory: " + dir
                                   : "cannot reach directory " + dir + ": " + std::strerror(e2));
        }
        if (!S_ISDIR(db.st_mode)) return fail(dir + " is not a directory");
        if (::access(dir.c_str(), W_OK | X_OK) != 0 && errno == EACCES)
          return fail("permission denied: cannot create a file in " + dir);
        return false;
      }
      case ELOOP: return fail("symbolic link loop (too many levels of symbolic links)");
      case EACCES: return fail("permission denied (a directory on the path cannot be searched)");
      case ENOTDIR: return fail("a component of the path is not a directory");
      case ENAMETOOLONG: return fail("file name too long");
      default: return fail(std::string("cannot stat the file: ") + std::strerror(err));
    }
  }
  if (!S_ISREG(sb.st_mode)) {
    if (S_ISDIR(sb.st_mode)) return fail("is a directory");
    return fail(std::string("not a regular file (") + file_kind(sb.st_mode) + ")");
  }
  if (::access(path.c_str(), R_OK) != 0 && errno == EACCES)
    return fail("permission denied (the file is not readable)");
  return true;
}

}  // namespace detail

namespace {
}  // namespace

// ---------------------------------------------------------------------------
// Database

struct Database::Impl {
  Impl(sql::Connection c, int v) : conn(std::move(c)), version(v) {}
  sql::Connection conn;
  int version;
  mutable std::mutex mu;

  void require_writable(const std::string& doing) const {
    if (conn.read_only()) {
      throw CacheError(doing, conn.path(), "the cache is opened read-only", SQLITE_READONLY);
    }
  }
};

namespace {

constexpr int kBusyTimeoutMs = 10000;

std::unique_ptr<Database::Impl> open_read_only(const std::string& path) {
  const std::string doing = "opening cache read-only";
  if (!detail::check_cache_path(path, doing, false))
    throw CacheError(doing, path, "no such file", SQLITE_CANTOPEN);
  auto attempt = [&](sql::Connection::Open how) {
    sql::Connection conn(path, how);
    conn.set_busy_timeout(kBusyTimeoutMs);
    const int version = schema::inspect(conn, true);
    if (version == 0) {
      throw CacheError(doing, path, "not an lntune cache: an empty database", SQLITE_NOTADB);
    }
    return std::make_unique<Database::Impl>(std::move(conn), version);
  };
  try {
    return attempt(sql::Connection::Open::read_only);
  } catch (const CacheError& e) {
    if (path == ":memory:") throw;
    if (e.extended_code() == SQLITE_READONLY_ROLLBACK) {
      // Reading past the journal would show a half-written file.
      throw CacheError(doing, path,
                       "an interrupted write left a hot rollback journal (" + path +
                           "-journal) that a read-only open cannot roll back; open the file once "
                           "with write access (e.g. sqlite3 FILE 'PRAGMA quick_check') to restore "
                           "its last committed state",
                       e.extended_code());
    }
    if (e.sqlite_code() != SQLITE_CANTOPEN && e.sqlite_code() != SQLITE_READONLY) throw;
    // A WAL-mode file in a directory we cannot write (a shipped cache under
    // /usr/share, say) cannot get its -shm file. It may be read as immutable
    // (no locks, no -shm) only where no journal or WAL can hold newer
    // content: none exists beside it, and the directory is not writable.
    if (path_exists(path + "-wal") || path_exists(path + "-journal")) {
      throw CacheError(doing, path,
                       "cannot be read consistently: a -wal or -journal file beside it holds "
                       "changes that a read-only open in this directory cannot apply (" +
                           std::string(e.what()) + ")",
                       e.extended_code());
    }
    if (::access(parent_dir(path).c_str(), W_OK) == 0) throw;
    try {
      return attempt(sql::Connection::Open::read_only_immutable);
    } catch (const CacheError&) {
      throw e;
    }
  }
}

std::unique_ptr<Database::Impl> open_read_write(const std::string& path) {
  detail::check_cache_path(path, "opening cache", true);
  sql::Connection conn(path, sql::Connection::Open::read_write_create);
  conn.set_busy_timeout(kBusyTimeoutMs);
  // Nothing is written before the file has passed inspection.
  int version = schema::inspect(conn, true);
  // Changing the journal mode needs an exclusive lock and, unlike other lock
  // waits, does not call the busy handler: retry until the busy timeout.
  std::string mode;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    try {
      mode = conn.query_text("PRAGMA journal_mode = WAL", "enabling WAL mode");
      break;
    } catch (const CacheError& e) {
      if ((e.sqlite_code() != SQLITE_BUSY && e.sqlite_code() != SQLITE_LOCKED) ||
          std::chrono::steady_clock::now() > deadline)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1 + attempt, 20)));
    }
  }
  if (mode != "wal" && mode != "memory") {
    throw CacheError("enabling WAL mode", path, "journal_mode is '" + mode + "'", SQLITE_ERROR);
  }
  conn.exec("PRAGMA synchronous = NORMAL", "setting synchronous mode");
  if (version < schema::kCurrentVersion) {
    schema::upgrade(conn);
    version = schema::kCurrentVersion;
  }
  return std::make_unique<Database::Impl>(std::move(conn), version);
}

}  // namespace

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Database Database::open(const std::string& path, Mode mode) {
  return Database(mode == Mode::read_only ? open_read_only(path) : open_read_write(path));
}

int Database::schema_version() const { return impl_->version; }
const std::string& Database::path() const { return impl_->conn.path(); }
bool Database::read_only() const { return impl_->conn.read_only(); }

void Database::upsert(const TuneRecord& r) {
  validate(r.key, "upsert");
  const std::string doing = "storing tuned record";
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->require_writable(doing);
  sql::Transaction txn(impl_->conn, sql::Transaction::Kind::immediate, doing);
  sql::Statement st(impl_->conn, kInsertRecord, doing);
  bind_record(st, r);
  st.run();
  txn.commit();
}

std::optional<TuneRecord> Database::find(const TuneKey& key) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Statement st(impl_->conn, select_records(impl_->version) + kWhereKeyButN + " AND n = ?11",
                    "looking up tuned record");
  bind_key(st, key);
  st.bind_int(11, key.n);
  if (!st.step()) return std::nullopt;
  return read_record(st);
}

std::optional<TuneRecord> Database::find_nearest(const TuneKey& key) const {
  if (key.n <= 0) throw Error("lntune::cache::Database::find_nearest: key.n must be > 0");
  const std::string doing = "looking up nearest tuned record";
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Transaction txn(impl_->conn, sql::Transaction::Kind::deferred, doing);
  auto nearest_on_side = [&](bool below) -> std::optional<TuneRecord> {
    sql::Statement st(impl_->conn,
                      select_records(impl_->version) + kWhereKeyButN +
                          (below ? " AND n <= ?11 ORDER BY n DESC" : " AND n >= ?11 ORDER BY n ASC") +
                          " LIMIT 1",
                      doing);
    bind_key(st, key);
    st.bind_int(11, key.n);
    if (!st.step()) return std::nullopt;
    return read_record(st);
  };
  std::optional<TuneRecord> lo = nearest_on_side(true);
  std::optional<TuneRecord> hi;
  if (!lo || lo->key.n != key.n) hi = nearest_on_side(false);
  txn.commit();
  if (lo && hi) return detail::nearer(key.n, hi->key.n, lo->key.n) ? hi : lo;
  return lo ? lo : hi;
}

std::vector<TuneRecord> Database::records(const std::optional<GpuId>& gpu) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string q = select_records(impl_->version);
  if (gpu) q += " WHERE gpu_name = ?1 AND cc_major = ?2 AND cc_minor = ?3 AND sm_count = ?4";
  q += kOrderByKey;
  sql::Statement st(impl_->conn, q, "listing tuned records");
  if (gpu) {
    st.bind_text(1, gpu->name).bind_int(2, gpu->cc_major).bind_int(3, gpu->cc_minor);
    st.bind_int(4, gpu->sm_count);
  }
  std::vector<TuneRecord> out;
  while (st.step()) out.push_back(read_record(st));
  return out;
}

void Database::put_binary(const BinaryKey& key, const std::vector<char>& cubin,
                          const std::string& kernel_name) {
  validate(key, "put_binary");
  if (cubin.empty()) throw Error("lntune::cache::Database::put_binary: cubin is empty");
  const std::string doing = "storing compiled binary";
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->require_writable(doing);
  sql::Transaction txn(impl_->conn, sql::Transaction::Kind::immediate, doing);
  sql::Statement st(impl_->conn, kInsertBinary, doing);
  insert_binary(st, Binary{key, cubin, kernel_name, utc_now_iso8601()});
  txn.commit();
}

std::optional<Binary> Database::get_binary_entry(const BinaryKey& key) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Statement st(impl_->conn,
                    std::string(kSelectBinaries) +
                        " WHERE source_hash = ?1 AND arch = ?2 AND nvrtc_version = ?3",
                    "looking up compiled binary");
  st.bind_text(1, key.source_hash).bind_text(2, key.arch).bind_int(3, key.nvrtc_version);
  if (!st.step()) return std::nullopt;
  return read_binary(st);
}

std::optional<std::vector<char>> Database::get_binary(const BinaryKey& key) const {
  auto b = get_binary_entry(key);
  if (!b) return std::nullopt;
  return std::move(b->cubin);
}

std::size_t Database::binary_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::int64_t n =
      impl_->conn.query_int("SELECT count(*) FROM binaries", "counting compiled binaries");
  return static_cast<std::size_t>(n);
}

void Database::export_to(const std::string& out_path, const std::optional<GpuId>& gpu,
                         const std::set<std::string>* only_binaries) const {
  const std::string doing = "exporting cache " + path();
  // Fail early (the final link re-checks atomically).
  if (path_exists(out_path))
    throw CacheError(doing, out_path, "file exists; refusing to overwrite it", SQLITE_CANTOPEN);
  // The new file is built in memory, in rollback-journal mode (not WAL): self-
  // contained and readable from read-only directories; then its image is
  // written out in one piece (write_new_file), so that a killed export
  // leaves no file or the complete one.
  sql::Connection out(":memory:", sql::Connection::Open::read_write_create);
  schema::upgrade(out);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    sql::Transaction wtxn(out, sql::Transaction::Kind::immediate, doing);
    sql::Transaction rtxn(impl_->conn, sql::Transaction::Kind::deferred, doing);

    std::string q = select_records(impl_->version);
    if (gpu) q += " WHERE gpu_name = ?1 AND cc_major = ?2 AND cc_minor = ?3 AND sm_count = ?4";
    q += kOrderByKey;
    sql::Statement rd(impl_->conn, q, doing + " (reading records)");
    if (gpu) {
      rd.bind_text(1, gpu->name).bind_int(2, gpu->cc_major).bind_int(3, gpu->cc_minor);
      rd.bind_int(4, gpu->sm_count);
    }
    sql::Statement ins(out, kInsertRecord, doing + " (writing records)");
    while (rd.step()) {
      ins.reset();
      bind_record(ins, read_record(rd));
      ins.run();
    }

    const std::string arch = gpu ? gpu->arch() : std::string();
    sql::Statement rb(impl_->conn, std::string(kSelectBinaries) + " ORDER BY source_hash, arch",
                      doing + " (reading binaries)");
    sql::Statement ib(out, kInsertBinary, doing + " (writing binaries)");
    while (rb.step()) {
      const Binary b = read_binary(rb);
      if (only_binaries && !only_binaries->count(b.key.source_hash)) continue;
      if (!gpu || arch_matches(b.key.arch, arch)) insert_binary(ib, b);
    }
    rtxn.commit();
    wtxn.commit();
  }
  sqlite3_int64 size = 0;
  unsigned char* image = sqlite3_serialize(out.handle(), "main", &size, 0);
  if (!image) throw CacheError(doing, out_path, "out of memory while serialising the new cache", SQLITE_NOMEM);
  std::unique_ptr<unsigned char, void (*)(void*)> owned(image, sqlite3_free);
  detail::write_new_file(out_path, image, static_cast<std::size_t>(size), doing);
}

namespace detail {

namespace {

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "write");
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the file is in place; durability of the name is best effort here
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_new_file(const std::string& path, const void* data, std::size_t size,
                    const std::string& doing) {
  const std::string dir = parent_dir(path);
  auto fail = [&](const std::string& problem, int err) {
    throw CacheError(doing, path,
                     err == EEXIST ? std::string("file exists; refusing to overwrite it")
                                   : problem + ": " + std::strerror(err),
                     SQLITE_CANTOPEN);
  };
  // 1. An unnamed file in the destination directory, linked in when complete.
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0) {
    int err = 0;
    try {
      write_all(fd, data, size);
    } catch (const std::system_error& e) {
      err = e.code().value();
    }
    if (err == 0 && ::fsync(fd) != 0) err = errno;
    if (err != 0) {
      ::close(fd);
      fail("writing the new file", err);
    }
    const std::string proc = "/proc/self/fd/" + std::to_string(fd);
    const int rc = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW);
    err = rc == 0 ? 0 : errno;
    ::close(fd);
    if (rc == 0) {
      sync_dir(dir);
      return;
    }
    if (err != ENOENT && err != EPERM && err != EXDEV && err != EOPNOTSUPP) fail("linking the new file into place", err);
    // No /proc, or a file system that cannot link it: a named temporary.
  } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
    fail("cannot create a file in " + dir, errno);
  }
  // 2. A hidden named temporary beside it, renamed without replacing.
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  std::string templ = dir + "/." + name + ".lntune-tmp-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  fd = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd < 0) fail("cannot create a file in " + dir, errno);
  const std::string tmp = buf.data();
  int err = 0;
  try {
    write_all(fd, data, size);
  } catch (const std::system_error& e) {
    err = e.code().value();
  }
  if (err == 0 && ::fchmod(fd, 0644) != 0) err = errno;
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  bool renamed = false;
  if (err == 0) {
    renamed = ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0;
    if (!renamed) {
      err = errno;
      if (err == EINVAL || err == ENOSYS) {  // no RENAME_NOREPLACE here: link, which never replaces
        err = ::link(tmp.c_str(), path.c_str()) == 0 ? 0 : errno;
      }
    }
  }
  if (!renamed) ::unlink(tmp.c_str());
  if (err != 0) fail("writing the new file", err);
  sync_dir(dir);
}

}  // namespace detail

bool config_before(const Config& a, const Config& b) {
  return std::tie(a.block_size, a.num_warps, a.rows_per_cta, a.group_size_m, a.cluster_size) <
         std::tie(b.block_size, b.num_warps, b.rows_per_cta, b.group_size_m, b.cluster_size);
}

bool record_wins(const TuneRecord& a, const TuneRecord& b) {
  if (a.timing.median_us != b.timing.median_us) return a.timing.median_us < b.timing.median_us;
  return config_before(a.config, b.config);
}

void Database::merge_from(const Database& other) {
  if (&other == this) return;
  const std::string doing = "merging " + other.path() + " into cache";
  std::scoped_lock lock(impl_->mu, other.impl_->mu);
  impl_->require_writable(doing);
  const std::string merged_from = base_name(other.path());

  sql::Transaction wtxn(impl_->conn, sql::Transaction::Kind::immediate, doing);
  sql::Transaction rtxn(other.impl_->conn, sql::Transaction::Kind::deferred, doing);

  sql::Statement rd(other.impl_->conn, select_records(other.impl_->version) + kOrderByKey,
                    doing + " (reading records)");
  sql::Statement cur(impl_->conn, select_records(impl_->version) + kWhereKeyButN + " AND n = ?11",
                     doing + " (comparing records)");
  sql::Statement ins(impl_->conn, kInsertRecord, doing + " (writing records)");
  while (rd.step()) {
    TuneRecord r = read_record(rd);
    cur.reset();
    bind_key(cur, r.key);
    cur.bind_int(11, r.key.n);
    if (cur.step() && !record_wins(r, read_record(cur))) continue;  // ours wins or is the same
    cur.reset();
    if (r.prov.origin == Origin::tuned) {
      r.prov.origin = Origin::merged;
      r.prov.merged_from = merged_from;
    }
    ins.reset();
    bind_record(ins, r);
    ins.run();
  }

  sql::Statement rb(other.impl_->conn, kSelectBinaries, doing + " (reading binaries)");
  sql::Statement ib(impl_->conn,
                    "INSERT OR IGNORE INTO binaries (source_hash, arch, nvrtc_version, kernel_name,"
                    " cubin, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    doing + " (writing binaries)");
  while (rb.step()) insert_binary(ib, read_binary(rb));
  rtxn.commit();
  wtxn.commit();
}

}  // namespace lntune::cache
