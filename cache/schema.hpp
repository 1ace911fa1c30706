// The cache file's schema: identification, validation and migrations.
// Internal to lntune::cache.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/sqlite.hpp"

namespace lntune::cache::schema {

// PRAGMA application_id of every lntune cache: "LNTU".
inline constexpr std::int32_t kApplicationId = 0x4C4E5455;
// meta('application') of every lntune cache.
inline constexpr const char* kApplicationMarker = "lntune";
// PRAGMA user_version written by this build.
inline constexpr int kCurrentVersion = 4;
// Provenance.origin of records from schema v1, which did not record one.
inline constexpr const char* kUnknownOrigin = "unknown";

// One step of the ordered migration list: migrations()[i] takes a file from
// schema version i to i + 1 (step 0 creates the v1 tables in an empty
// database). Steps are SQL only; application_id, user_version and meta are
// written after the last step, in the same transaction.
struct Migration {
  int from_version;
  const char* description;
  const char* sql;
};
const std::vector<Migration>& migrations();

// Checks, without writing anything, that the open file is an lntune cache
// this build can use, and returns its schema version; 0 means an empty
// database (no tables, no application_id) that may be initialised.
// `check_integrity` adds PRAGMA quick_check. Throws CacheError naming the
// problem: not a database, another application's database, damaged file or
// schema, schema newer than kCurrentVersion. Runs in its own read transaction
// unless the connection is already in one.
int inspect(const sql::Connection& conn, bool check_integrity);

// Brings the file to kCurrentVersion in one BEGIN IMMEDIATE transaction,
// re-inspecting it under the write lock (another process may have done it).
// Returns the version found before.
int upgrade(const sql::Connection& conn);

}  // namespace lntune::cache::schema
