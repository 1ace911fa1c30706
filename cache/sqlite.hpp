// Thin RAII wrappers over the SQLite C API, in the style of SQLiteCpp:
// Connection (one open database), Statement (one prepared statement) and
// Transaction (rolls back in its destructor unless committed). Every failure
// throws lntune::cache::CacheError carrying the extended result code, what
// was being done and the file.
//
// Internal to lntune::cache (and its tests): <sqlite3.h> is included only by
// cache/*.cpp; this header only forward-declares the handle types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace lntune::cache::sql {

// SQLite primary result codes used by this layer (values fixed by SQLite).
inline constexpr int kError = 1, kBusy = 5, kReadOnly = 8, kInterrupt = 9, kCorrupt = 11,
                     kCantOpen = 14, kConstraint = 19, kMismatch = 20, kNotADb = 26;

// Every statement step (and every exec) may run at most this many SQLite VM
// instructions (counted in units of kProgressPeriod) before it is
// interrupted with a CacheError "... exceeded its budget ...". An lntune
// query over a legitimate cache needs a few per row it reads (a merge of
// 1M records: ~10^8); a hostile file (a recursive view, say) would need
// forever.
inline constexpr std::uint64_t kDefaultStepBudget = std::uint64_t{1} << 28;
inline constexpr int kProgressPeriod = 1000;

class Connection {
 public:
  enum class Open {
    read_only,            // SQLITE_OPEN_READONLY
    read_only_immutable,  // read-only, file:...?immutable=1 (no locks, no -shm/-wal)
    read_write,           // SQLITE_OPEN_READWRITE: the file must exist and be writable
    read_write_create,    // SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
  };
  // Opens `path` (":memory:" allowed). Throws CacheError.
  Connection(std::string path, Open mode);
  ~Connection();
  Connection(Connection&& o) noexcept;
  Connection& operator=(Connection&& o) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more SQL statements that return no rows of interest.
  void exec(const std::string& sql, const std::string& doing) const;
  // Runs a statement returning one row of one column and returns it as text
  // (e.g. "PRAGMA journal_mode=WAL") or integer.
  std::string query_text(const std::string& sql, const std::string& doing) const;
  std::int64_t query_int(const std::string& sql, const std::string& doing) const;

  void set_busy_timeout(int ms) const;
  // The budget of VM instructions for each later step()/exec() (rounded to
  // kProgressPeriod); for tests.
  void set_step_budget(std::uint64_t instructions);
  // Starts a fresh budget for the next statement step (done by step/exec).
  void start_step() const;
  int changes() const;  // rows changed by the last statement
  bool in_transaction() const;

  // Throws a CacheError for the connection's last error.
  [[noreturn]] void throw_last_error(const std::string& doing) const;
  [[noreturn]] void throw_error(const std::string& doing, int code) const;

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  sqlite3* handle() const { return db_; }

 private:
  // The progress handler: counts periods, interrupts past the budget.
  struct Budget {
    std::uint64_t limit = kDefaultStepBudget / kProgressPeriod;
    std::uint64_t used = 0;
    bool exceeded = false;
  };
  static int on_progress(void* budget);
  void install_progress_handler();
  friend class Statement;
  // Rethrows SQLITE_INTERRUPT from the budget as its own message.
  [[noreturn]] void throw_step_error(const std::string& doing, const std::string& msg, int code) const;

  sqlite3* db_ = nullptr;
  std::string path_;
  bool read_only_ = false;
  std::unique_ptr<Budget> budget_ = std::make_unique<Budget>();  // stable address for SQLite
};

class Statement {
 public:
  // Prepares one statement; `doing` describes it for error messages.
  Statement(const Connection& conn, std::string_view sql, std::string doing);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based; values are copied (SQLITE_TRANSIENT).
  Statement& bind_int(int i, std::int64_t v);
  Statement& bind_double(int i, double v);
  Statement& bind_text(int i, std::string_view v);
  Statement& bind_blob(int i, const void* data, std::size_t size);
  Statement& bind_null(int i);

  // Steps once: true if a row is available, false when done.
  bool step();
  // Steps a statement that returns no rows.
  void run();
  // Clears the result so the statement can run again (bindings are kept).
  void reset();

  // Column readers (0-based) check the stored type and name the column in
  // their errors. column_int checks the int range, column_bool 0/1.
  bool is_null(int i) const;
  std::int64_t column_int64(int i) const;
  int column_int(int i) const;
  bool column_bool(int i) const;
  double column_double(int i) const;
  std::string column_text(int i) const;
  std::vector<char> column_blob(int i) const;
  std::string column_name(int i) const;

  // Throws CacheError(SQLITE_MISMATCH) "column '<name>' <problem>".
  [[noreturn]] void bad_column(int i, const std::string& problem) const;

  const std::string& doing() const { return doing_; }

 private:
  void check_bind(int rc, int i);
  int column_type(int i) const;

  const Connection& conn_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string doing_;
};

class Transaction {
 public:
  enum class Kind { deferred, immediate };
  Transaction(const Connection& conn, Kind kind, std::string doing);
  ~Transaction();  // rolls back unless committed; never throws
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  const Connection& conn_;
  std::string doing_;
  bool done_ = false;
};

}  // namespace lntune::cache::sql
