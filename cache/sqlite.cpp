#include "cache/sqlite.hpp"

#include <sqlite3.h>

#include <climits>
#include <utility>

namespace lntune::cache {

namespace {
std::string format_error(const std::string& doing, const std::string& file,
                         const std::string& problem, int code) {
  return doing + ": " + file + ": " + problem + " (code " + std::to_string(code) + ")";
}
}  // namespace

CacheError::CacheError(const std::string& doing, std::string file, const std::string& problem,
                       int extended_code)
    : std::runtime_error(format_error(doing, file, problem, extended_code)),
      file_(std::move(file)),
      code_(extended_code) {}

}  // namespace lntune::cache

namespace lntune::cache::sql {

static_assert(kError == SQLITE_ERROR && kBusy == SQLITE_BUSY && kReadOnly == SQLITE_READONLY &&
              kCorrupt == SQLITE_CORRUPT && kCantOpen == SQLITE_CANTOPEN &&
              kConstraint == SQLITE_CONSTRAINT && kMismatch == SQLITE_MISMATCH &&
              kNotADb == SQLITE_NOTADB);

namespace {

// "file:" URI for `path`, escaping the characters that URIs give a meaning.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char hex[] = "0123456789ABCDEF";
      const auto u = static_cast<unsigned char>(c);
      uri += '%';
      uri += hex[u >> 4];
      uri += hex[u & 15];
    } else {
      uri += c;
    }
  }
  return uri;
}

const char* open_doing(Connection::Open mode) {
  switch (mode) {
    case Connection::Open::read_only:
    case Connection::Open::read_only_immutable: return "opening cache read-only";
    case Connection::Open::read_write: return "opening cache";
    case Connection::Open::read_write_create: return "opening or creating cache";
  }
  return "opening cache";
}

}  // namespace

Connection::Connection(std::string path, Open mode)
    : path_(std::move(path)),
      read_only_(mode == Open::read_only || mode == Open::read_only_immutable) {
  int flags = SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE;
  std::string name = path_;
  switch (mode) {
    case Open::read_only: flags |= SQLITE_OPEN_READONLY; break;
    case Open::read_only_immutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
      name = file_uri(path_) + "?immutable=1";
      break;
    case Open::read_write: flags |= SQLITE_OPEN_READWRITE; break;
    case Open::read_write_create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
  }
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    const int code = db_ ? sqlite3_extended_errcode(db_) : rc;
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw CacheError(open_doing(mode), path_, msg, code);
  }
  sqlite3_extended_result_codes(db_, 1);
  install_progress_handler();
  // SQLite silently falls back to read-only for a write-protected file.
  if (!read_only_ && sqlite3_db_readonly(db_, "main") == 1) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw CacheError(open_doing(mode), path_, "the file is not writable", SQLITE_READONLY);
  }
}

Connection::~Connection() {
  // close_v2 never fails for a valid handle: unfinalised statements (there
  // are none by construction) would only defer the close.
  if (db_) sqlite3_close_v2(db_);
}

// The budget travels with the handle: its address (registered with SQLite)
// stays the same when a Connection is moved.
Connection::Connection(Connection&& o) noexcept
    : db_(std::exchange(o.db_, nullptr)),
      path_(std::move(o.path_)),
      read_only_(o.read_only_),
      budget_(std::exchange(o.budget_, std::make_unique<Budget>())) {}

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(o.db_, nullptr);
    path_ = std::move(o.path_);
    read_only_ = o.read_only_;
    budget_ = std::exchange(o.budget_, std::make_unique<Budget>());
  }
  return *this;
}

int Connection::on_progress(void* p) {
  auto* b = static_cast<Budget*>(p);
  if (++b->used <= b->limit) return 0;
  b->exceeded = true;
  return 1;  // interrupts the statement: SQLITE_INTERRUPT
}

void Connection::install_progress_handler() {
  sqlite3_progress_handler(db_, kProgressPeriod, &Connection::on_progress, budget_.get());
}

void Connection::set_step_budget(std::uint64_t instructions) {
  budget_->limit = instructions / kProgressPeriod;
}

void Connection::start_step() const {
  budget_->used = 0;
  budget_->exceeded = false;
}

void Connection::throw_step_error(const std::string& doing, const std::string& msg, int code) const {
  if ((code & 0xff) == SQLITE_INTERRUPT && budget_->exceeded) {
    throw CacheError(doing, path_,
                     "not a usable lntune cache: a query exceeded its budget of " +
                         std::to_string(budget_->limit * kProgressPeriod) +
                         " SQLite instructions (a hostile or damaged file?)",
                     code);
  }
  throw CacheError(doing, path_, msg, code);
}

void Connection::exec(const std::string& sql, const std::string& doing) const {
  char* err = nullptr;
  start_step();
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    const int ext = sqlite3_extended_errcode(db_);
    throw_step_error(doing, msg, (ext & 0xff) == (rc & 0xff) ? ext : rc);
  }
}

std::string Connection::query_text(const std::string& sql, const std::string& doing) const {
  Statement st(*this, sql, doing);
  if (!st.step()) throw_error(doing, SQLITE_ERROR);
  return st.is_null(0) ? std::string() : st.column_text(0);
}

std::int64_t Connection::query_int(const std::string& sql, const std::string& doing) const {
  Statement st(*this, sql, doing);
  if (!st.step()) throw_error(doing, SQLITE_ERROR);
  return st.column_int64(0);
}

void Connection::set_busy_timeout(int ms) const {
  const int rc = sqlite3_busy_timeout(db_, ms);
  if (rc != SQLITE_OK) throw_last_error("setting busy timeout");
}

int Connection::changes() const { return sqlite3_changes(db_); }

bool Connection::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

void Connection::throw_last_error(const std::string& doing) const {
  throw CacheError(doing, path_, sqlite3_errmsg(db_), sqlite3_extended_errcode(db_));
}

void Connection::throw_error(const std::string& doing, int code) const {
  throw CacheError(doing, path_, sqlite3_errstr(code), code);
}

// ---------------------------------------------------------------------------

Statement::Statement(const Connection& conn, std::string_view sql, std::string doing)
    : conn_(conn), doing_(std::move(doing)) {
  conn_.start_step();
  const int rc = sqlite3_prepare_v3(conn_.handle(), sql.data(), static_cast<int>(sql.size()), 0,
                                    &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    conn_.throw_last_error(doing_);
  }
  if (!stmt_) throw CacheError(doing_, conn_.path(), "empty SQL statement", SQLITE_MISUSE);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check_bind(int rc, int i) {
  if (rc != SQLITE_OK) {
    throw CacheError(doing_, conn_.path(),
                     "binding parameter " + std::to_string(i) + ": " + sqlite3_errstr(rc), rc);
  }
}

Statement& Statement::bind_int(int i, std::int64_t v) {
  check_bind(sqlite3_bind_int64(stmt_, i, static_cast<sqlite3_int64>(v)), i);
  return *this;
}

Statement& Statement::bind_double(int i, double v) {
  check_bind(sqlite3_bind_double(stmt_, i, v), i);
  return *this;
}

Statement& Statement::bind_text(int i, std::string_view v) {
  check_bind(sqlite3_bind_text64(stmt_, i, v.data(), static_cast<sqlite3_uint64>(v.size()),
                                 SQLITE_TRANSIENT, SQLITE_UTF8),
             i);
  return *this;
}

Statement& Statement::bind_blob(int i, const void* data, std::size_t size) {
  // A zero-length blob needs a non-null pointer to be stored as a blob.
  static const char empty = 0;
  check_bind(sqlite3_bind_blob64(stmt_, i, size ? data : &empty,
                                 static_cast<sqlite3_uint64>(size), SQLITE_TRANSIENT),
             i);
  return *this;
}

Statement& Statement::bind_null(int i) {
  check_bind(sqlite3_bind_null(stmt_, i), i);
  return *this;
}

bool Statement::step() {
  conn_.start_step();
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // The statement's error is the connection's last error; reset it so the
  // statement (and its read lock) is released before the exception leaves.
  const std::string msg = sqlite3_errmsg(conn_.handle());
  const int code = sqlite3_extended_errcode(conn_.handle());
  sqlite3_reset(stmt_);
  conn_.throw_step_error(doing_, msg, code);
}

void Statement::run() {
  if (step()) {
    sqlite3_reset(stmt_);
    throw CacheError(doing_, conn_.path(), "statement unexpectedly returned rows", SQLITE_MISUSE);
  }
}

void Statement::reset() { sqlite3_reset(stmt_); }

int Statement::column_type(int i) const { return sqlite3_column_type(stmt_, i); }

std::string Statement::column_name(int i) const {
  const char* n = sqlite3_column_name(stmt_, i);
  return n ? n : "#" + std::to_string(i);
}

void Statement::bad_column(int i, const std::string& problem) const {
  throw CacheError(doing_, conn_.path(), "column '" + column_name(i) + "' " + problem,
                   SQLITE_MISMATCH);
}

namespace {
const char* type_name(int t) {
  switch (t) {
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT: return "a real";
    case SQLITE_TEXT: return "text";
    case SQLITE_BLOB: return "a blob";
    case SQLITE_NULL: return "NULL";
  }
  return "an unknown type";
}
}  // namespace

bool Statement::is_null(int i) const { return column_type(i) == SQLITE_NULL; }

std::int64_t Statement::column_int64(int i) const {
  const int t = column_type(i);
  if (t != SQLITE_INTEGER) bad_column(i, std::string("holds ") + type_name(t) + ", not an integer");
  return static_cast<std::int64_t>(sqlite3_column_int64(stmt_, i));
}

int Statement::column_int(int i) const {
  const std::int64_t v = column_int64(i);
  if (v < INT_MIN || v > INT_MAX) bad_column(i, "holds " + std::to_string(v) + ", out of range");
  return static_cast<int>(v);
}

bool Statement::column_bool(int i) const {
  const std::int64_t v = column_int64(i);
  if (v != 0 && v != 1) bad_column(i, "holds " + std::to_string(v) + ", not 0 or 1");
  return v == 1;
}

double Statement::column_double(int i) const {
  const int t = column_type(i);
  if (t != SQLITE_FLOAT && t != SQLITE_INTEGER)
    bad_column(i, std::string("holds ") + type_name(t) + ", not a number");
  return sqlite3_column_double(stmt_, i);
}

std::string Statement::column_text(int i) const {
  const int t = column_type(i);
  if (t != SQLITE_TEXT) bad_column(i, std::string("holds ") + type_name(t) + ", not text");
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  const int n = sqlite3_column_bytes(stmt_, i);
  return p ? std::string(p, static_cast<std::size_t>(n)) : std::string();
}

std::vector<char> Statement::column_blob(int i) const {
  const int t = column_type(i);
  if (t != SQLITE_BLOB) bad_column(i, std::string("holds ") + type_name(t) + ", not a blob");
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, i));
  const int n = sqlite3_column_bytes(stmt_, i);
  return p ? std::vector<char>(p, p + n) : std::vector<char>();
}

// ---------------------------------------------------------------------------

Transaction::Transaction(const Connection& conn, Kind kind, std::string doing)
    : conn_(conn), doing_(std::move(doing)) {
  conn_.exec(kind == Kind::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED",
             doing_ + " (starting transaction)");
}

Transaction::~Transaction() {
  if (!done_ && conn_.in_transaction()) {
    // Never throws: a failed rollback leaves SQLite to roll back on close.
    sqlite3_exec(conn_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  conn_.exec("COMMIT", doing_ + " (committing)");
  done_ = true;
}

}  // namespace lntune::cache::sql
