#include "cache/schema.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace lntune::cache::schema {

namespace {

// v1: what lntune 0.0.x wrote. No default-heuristic time, no origin.
constexpr const char* kV0toV1 = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
CREATE TABLE tuned (
  gpu_name       TEXT    NOT NULL,
  cc_major       INTEGER NOT NULL,
  cc_minor       INTEGER NOT NULL,
  sm_count       INTEGER NOT NULL,
  kernel         TEXT    NOT NULL,
  x_dtype        TEXT    NOT NULL,
  w_dtype        TEXT    NOT NULL,
  has_weight     INTEGER NOT NULL,
  has_bias       INTEGER NOT NULL,
  m_bucket       INTEGER NOT NULL,
  n              INTEGER NOT NULL,
  block_size     INTEGER NOT NULL,
  num_warps      INTEGER NOT NULL,
  rows_per_cta   INTEGER NOT NULL,
  group_size_m   INTEGER NOT NULL,
  median_us      REAL    NOT NULL,
  p20_us         REAL    NOT NULL,
  p80_us         REAL    NOT NULL,
  reps           INTEGER NOT NULL,
  gbps           REAL    NOT NULL,
  copy_gbps      REAL    NOT NULL,
  template_hash  TEXT    NOT NULL,
  lntune_version TEXT    NOT NULL,
  nvrtc_version  INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  tuned_at       TEXT    NOT NULL,
  UNIQUE (gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype,
          has_weight, has_bias, m_bucket, n)
);
CREATE TABLE binaries (
  source_hash   TEXT    NOT NULL,
  arch          TEXT    NOT NULL,
  nvrtc_version INTEGER NOT NULL,
  kernel_name   TEXT    NOT NULL,
  cubin         BLOB    NOT NULL,
  created_at    TEXT    NOT NULL,
  PRIMARY KEY (source_hash, arch, nvrtc_version)
);
INSERT INTO meta (key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
)sql";

// v2: the default heuristic's time measured in the same run (0: unknown) and
// where the record came from.
constexpr const char* kV1toV2 = R"sql(
ALTER TABLE tuned ADD COLUMN default_median_us REAL NOT NULL DEFAULT 0;
ALTER TABLE tuned ADD COLUMN origin TEXT NOT NULL DEFAULT 'unknown';
)sql";

// v3: thread-block cluster size of the tuned config (1: no cluster).
constexpr const char* kV2toV3 = R"sql(
ALTER TABLE tuned ADD COLUMN cluster_size INTEGER NOT NULL DEFAULT 1;
)sql";

// v4: the norm's variant (issue 11) joins the key: kind of norm, fused
// residual add and its dtype ('' = none), zero-centred gamma, output dtype
// ('' = x_dtype). The UNIQUE constraint gains them, and SQLite cannot alter a
// constraint, so the table is rebuilt; every v3 record is copied as a
// LayerNorm without options, which is what it was.
constexpr const char* kV3toV4 = R"sql(
CREATE TABLE tuned_v4 (
  gpu_name          TEXT    NOT NULL,
  cc_major          INTEGER NOT NULL,
  cc_minor          INTEGER NOT NULL,
  sm_count          INTEGER NOT NULL,
  kernel            TEXT    NOT NULL,
  x_dtype           TEXT    NOT NULL,
  w_dtype           TEXT    NOT NULL,
  has_weight        INTEGER NOT NULL,
  has_bias          INTEGER NOT NULL,
  m_bucket          INTEGER NOT NULL,
  n                 INTEGER NOT NULL,
  block_size        INTEGER NOT NULL,
  num_warps         INTEGER NOT NULL,
  rows_per_cta      INTEGER NOT NULL,
  group_size_m      INTEGER NOT NULL,
  median_us         REAL    NOT NULL,
  p20_us            REAL    NOT NULL,
  p80_us            REAL    NOT NULL,
  reps              INTEGER NOT NULL,
  gbps              REAL    NOT NULL,
  copy_gbps         REAL    NOT NULL,
  template_hash     TEXT    NOT NULL,
  lntune_version    TEXT    NOT NULL,
  nvrtc_version     INTEGER NOT NULL,
  driver_version    INTEGER NOT NULL,
  tuned_at          TEXT    NOT NULL,
  default_median_us REAL    NOT NULL DEFAULT 0,
  origin            TEXT    NOT NULL DEFAULT 'unknown',
  cluster_size      INTEGER NOT NULL DEFAULT 1,
  norm              TEXT    NOT NULL DEFAULT 'layernorm',
  residual_dtype    TEXT    NOT NULL DEFAULT '',
  zero_centered     INTEGER NOT NULL DEFAULT 0,
  y_dtype           TEXT    NOT NULL DEFAULT '',
  UNIQUE (gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype,
          has_weight, has_bias, norm, residual_dtype, zero_centered, y_dtype, m_bucket, n)
);
INSERT INTO tuned_v4 (gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype, has_weight,
  has_bias, m_bucket, n, block_size, num_warps, rows_per_cta, group_size_m, median_us, p20_us, p80_us,
  reps, gbps, copy_gbps, template_hash, lntune_version, nvrtc_version, driver_version, tuned_at,
  default_median_us, origin, cluster_size)
SELECT gpu_name, cc_major, cc_minor, sm_count, kernel, x_dtype, w_dtype, has_weight,
  has_bias, m_bucket, n, block_size, num_warps, rows_per_cta, group_size_m, median_us, p20_us, p80_us,
  reps, gbps, copy_gbps, template_hash, lntune_version, nvrtc_version, driver_version, tuned_at,
  default_median_us, origin, cluster_size FROM tuned;
DROP TABLE tuned;
ALTER TABLE tuned_v4 RENAME TO tuned;
)sql";

struct TableSpec {
  const char* table;
  std::vector<const char*> columns;
  int since_version;  // columns listed for later versions are checked separately
};

const std::vector<TableSpec>& table_specs() {
  static const std::vector<TableSpec> specs = {
      {"meta", {"key", "value"}, 1},
      {"tuned",
       {"gpu_name", "cc_major", "cc_minor", "sm_count", "kernel", "x_dtype", "w_dtype",
        "has_weight", "has_bias", "m_bucket", "n", "block_size", "num_warps", "rows_per_cta",
        "group_size_m", "median_us", "p20_us", "p80_us", "reps", "gbps", "copy_gbps",
        "template_hash", "lntune_version", "nvrtc_version", "driver_version", "tuned_at"},
       1},
      {"tuned", {"default_median_us", "origin"}, 2},
      {"tuned", {"cluster_size"}, 3},
      {"tuned", {"norm", "residual_dtype", "zero_centered", "y_dtype"}, 4},
      {"binaries",
       {"source_hash", "arch", "nvrtc_version", "kernel_name", "cubin", "created_at"},
       1},
  };
  return specs;
}

std::string hex32(std::int64_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(static_cast<std::uint32_t>(v)));
  return buf;
}

const char* kInspecting = "checking cache file";

[[noreturn]] void fail(const sql::Connection& conn, const std::string& problem, int code) {
  throw CacheError(kInspecting, conn.path(), problem, code);
}

bool is_lntune_table(const std::string& name) {
  return name == "meta" || name == "tuned" || name == "binaries";
}

// The allowlist: the file holds exactly lntune's tables (plain tables, with
// exactly the columns of its schema version, none generated), the indexes
// SQLite makes for their keys, and SQLite's own statistics tables: no views,
// triggers, virtual tables or other indexes, whose SQL would run (or be
// consulted) when lntune reads the tables. Anything else is "not an lntune
// cache: <reason>".
void check_objects(const sql::Connection& conn, int version) {
  auto reject = [&](const std::string& why) { fail(conn, "not an lntune cache: " + why, SQLITE_NOTADB); };
  sql::Statement st(conn, "SELECT type, name, tbl_name, sql FROM sqlite_master", kInspecting);
  while (st.step()) {
    auto text = [&](int i) { return st.is_null(i) ? std::string() : st.column_text(i); };
    const std::string type = text(0), name = text(1), table = text(2), ddl = text(3);
    const bool sqlite_own = name.rfind("sqlite_", 0) == 0;
    if (type == "table") {
      if (sqlite_own && (name == "sqlite_sequence" || name.rfind("sqlite_stat", 0) == 0)) continue;
      if (!is_lntune_table(name)) reject("unexpected table '" + name + "'");
      if (ddl.compare(0, 13, "CREATE TABLE ") != 0) reject("'" + name + "' is not a plain table");
    } else if (type == "index") {
      if (!(sqlite_own && ddl.empty() && is_lntune_table(table)))
        reject("unexpected index '" + name + "' on '" + table + "'");
    } else {
      reject("unexpected " + type + " '" + name + "'" +
             (is_lntune_table(name) ? " (lntune's '" + name + "' must be a table)" : ""));
    }
  }
  for (const char* table : {"meta", "tuned", "binaries"}) {
    std::vector<std::string> expected;
    for (const TableSpec& spec : table_specs())
      if (spec.since_version <= version && std::string(spec.table) == table)
        expected.insert(expected.end(), spec.columns.begin(), spec.columns.end());
    sql::Statement cols(conn, "SELECT name, hidden FROM pragma_table_xinfo(?1)", kInspecting);
    cols.bind_text(1, table);
    while (cols.step()) {
      const std::string column = cols.is_null(0) ? std::string() : cols.column_text(0);
      if (cols.column_int64(1) != 0)
        reject("column '" + column + "' of table '" + table + "' is hidden or generated");
      if (std::find(expected.begin(), expected.end(), column) == expected.end())
        reject("table '" + std::string(table) + "' has an unexpected column '" + column + "'");
    }
  }
}

int inspect_in_transaction(const sql::Connection& conn, bool check_integrity) {
  std::int64_t app_id = 0, version = 0, objects = 0;
  try {
    app_id = conn.query_int("PRAGMA application_id", kInspecting);
    version = conn.query_int("PRAGMA user_version", kInspecting);
    objects = conn.query_int("SELECT count(*) FROM sqlite_master", kInspecting);
  } catch (const CacheError& e) {
    // Say what the low-level codes mean for a cache file.
    if (e.sqlite_code() == SQLITE_NOTADB)
      fail(conn, std::string("not an lntune cache: ") + sqlite3_errstr(SQLITE_NOTADB),
           e.extended_code());
    if (e.sqlite_code() == SQLITE_CORRUPT)
      fail(conn, std::string("damaged or truncated cache file: ") + sqlite3_errstr(SQLITE_CORRUPT),
           e.extended_code());
    throw;
  }

  if (app_id == 0 && version == 0 && objects == 0) return 0;  // empty database
  if (app_id != kApplicationId) {
    fail(conn,
         "not an lntune cache: a database of another application (application_id " +
             hex32(app_id) + ", lntune's is " + hex32(kApplicationId) + ", " +
             std::to_string(objects) + " schema objects)",
         SQLITE_NOTADB);
  }
  if (version > kCurrentVersion) {
    fail(conn,
         "lntune cache schema version " + std::to_string(version) +
             " is newer than this build of lntune supports (" + std::to_string(kCurrentVersion) +
             "); use a newer lntune",
         SQLITE_CANTOPEN);
  }
  if (version < 1) {
    fail(conn, "damaged lntune cache: application_id set but schema version " +
                   std::to_string(version), SQLITE_CORRUPT);
  }

  check_objects(conn, static_cast<int>(version));
  for (const TableSpec& spec : table_specs()) {
    if (spec.since_version > version) continue;
    sql::Statement st(conn, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", kInspecting);
    for (const char* column : spec.columns) {
      st.reset();
      st.bind_text(1, spec.table).bind_text(2, column);
      if (!st.step()) {
        fail(conn, std::string("damaged lntune cache: table '") + spec.table +
                       "' is missing or lacks column '" + column + "'",
             SQLITE_CORRUPT);
      }
    }
  }
  {
    sql::Statement st(conn, "SELECT value FROM meta WHERE key = 'application'", kInspecting);
    if (!st.step() || st.is_null(0) || st.column_text(0) != kApplicationMarker) {
      fail(conn, "damaged lntune cache: meta table lacks application = 'lntune'", SQLITE_CORRUPT);
    }
  }
  if (check_integrity) {
    sql::Statement st(conn, "PRAGMA quick_check(1)", kInspecting);
    if (!st.step()) fail(conn, "damaged cache file: quick_check returned nothing", SQLITE_CORRUPT);
    const std::string result = st.is_null(0) ? "" : st.column_text(0);
    if (result != "ok") fail(conn, "damaged cache file: " + result, SQLITE_CORRUPT);
  }
  return static_cast<int>(version);
}

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = {
      {0, "create the v1 tables", kV0toV1},
      {1, "add tuned.default_median_us and tuned.origin", kV1toV2},
      {2, "add tuned.cluster_size", kV2toV3},
      {3, "add the norm variant (norm, residual_dtype, zero_centered, y_dtype) to the tuned key", kV3toV4},
  };
  return list;
}

int inspect(const sql::Connection& conn, bool check_integrity) {
  if (conn.in_transaction()) return inspect_in_transaction(conn, check_integrity);
  sql::Transaction txn(conn, sql::Transaction::Kind::deferred, kInspecting);
  const int version = inspect_in_transaction(conn, check_integrity);
  txn.commit();  // ends the read transaction
  return version;
}

int upgrade(const sql::Connection& conn) {
  static_assert(kCurrentVersion == 4, "add the migration step to migrations()");
  sql::Transaction txn(conn, sql::Transaction::Kind::immediate, "upgrading cache schema");
  const int found = inspect_in_transaction(conn, false);
  if (found == kCurrentVersion) {
    txn.commit();
    return found;
  }
  const auto& steps = migrations();
  for (int v = found; v < kCurrentVersion; ++v) {
    const Migration& m = steps.at(static_cast<std::size_t>(v));
    conn.exec(m.sql, "migrating cache schema from version " + std::to_string(v) + " to " +
                         std::to_string(v + 1) + " (" + m.description + ")");
  }
  conn.exec("PRAGMA application_id = " + std::to_string(kApplicationId) +
                "; PRAGMA user_version = " + std::to_string(kCurrentVersion) + ";",
            "writing cache schema version");
  sql::Statement meta(conn,
                      "INSERT OR REPLACE INTO meta (key, value) VALUES ('application', ?1), "
                      "('schema_version', ?2)",
                      "writing cache meta table");
  meta.bind_text(1, kApplicationMarker).bind_text(2, std::to_string(kCurrentVersion));
  meta.run();
  txn.commit();
  return found;
}

}  // namespace lntune::cache::schema
