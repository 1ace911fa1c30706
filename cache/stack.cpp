#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

#include "cache/cache.hpp"
#include "cache/internal.hpp"
#include "cache/sqlite.hpp"

namespace lntune::cache {

namespace fs = std::filesystem;

struct CacheStack::State {
  std::optional<std::string> user_path;
  std::vector<Database> shipped;  // filled once by the constructor: addresses stay put
  mutable std::mutex mu;          // guards `user` and `user_ro`
  mutable std::optional<Database> user;     // read-write, once writable() was called
  mutable std::optional<Database> user_ro;  // read-only, for lookups before that

  // The user cache opened read-write (creating it and its directory); nullptr
  // if there is none.
  Database* writable_db() {
    std::lock_guard<std::mutex> lock(mu);
    if (user) return &*user;
    if (!user_path) return nullptr;
    const fs::path parent = fs::path(*user_path).parent_path();
    if (!parent.empty()) {
      std::error_code ec;
      fs::create_directories(parent, ec);
      if (ec) {
        throw CacheError("creating the user cache directory", parent.string(), ec.message(),
                         sql::kCantOpen);
      }
    }
    user.emplace(Database::open(*user_path, Database::Mode::read_write_create));
    return &*user;
  }

  // The user cache for lookups: the read-write one if open, else the file
  // opened read-only -- reading never creates, initialises, migrates or
  // switches the journal mode of it. nullptr if there is no file yet (or an
  // empty one, which a first write initialises).
  const Database* lookup_db() const {
    std::lock_guard<std::mutex> lock(mu);
    if (user) return &*user;
    if (user_ro) return &*user_ro;
    if (!user_path) return nullptr;
    const std::string doing = "opening the user cache";
    if (!detail::check_cache_path(*user_path, doing, false)) return nullptr;
    struct stat sb {};
    if (::stat(user_path->c_str(), &sb) == 0 && sb.st_size == 0) return nullptr;
    user_ro.emplace(Database::open(*user_path, Database::Mode::read_only));
    return &*user_ro;
  }

  // Layers in lookup order; opens the user cache if its file exists.
  std::vector<const Database*> all_layers() const {
    std::vector<const Database*> out;
    if (const Database* u = lookup_db()) out.push_back(u);
    for (const Database& d : shipped) out.push_back(&d);
    return out;
  }
};

namespace {

// A file's identity for skipping duplicates: its canonical path where it
// exists, else the lexically normalised absolute path.
std::string identity(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  return p.string();
}

// Expands one shipped entry into cache files: a file stands for itself, a
// directory for its *.db files in name order; a missing entry for none.
std::vector<std::string> expand(const std::string& entry) {
  std::vector<std::string> files;
  if (entry.empty()) return files;
  std::error_code ec;
  const fs::file_status st = fs::status(entry, ec);
  if (ec || !fs::exists(st)) {
    // A missing entry is skipped; anything else (a symbolic link loop, no
    // permission) is left to Database::open to report.
    if (ec && ec != std::errc::no_such_file_or_directory) files.push_back(entry);
    return files;
  }
  if (!fs::is_directory(st)) {
    files.push_back(entry);
    return files;
  }
  for (fs::directory_iterator it(entry, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code ec2;
    if (p.extension() == ".db" && fs::is_regular_file(it->status(ec2))) files.push_back(p.string());
  }
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    return fs::path(a).filename() < fs::path(b).filename();
  });
  return files;
}

std::vector<std::string> split_path_list(const char* s) {
  std::vector<std::string> out;
  if (!s) return out;
  std::string cur;
  for (const char* p = s;; ++p) {
    if (*p == ':' || *p == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  return out;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

CacheStack CacheStack::from_environment(const std::vector<std::string>& extra_shipped) {
  std::optional<std::string> user;
  if (const char* c = env("LNTUNE_CACHE")) {
    user = c;
  } else if (const char* x = env("XDG_CACHE_HOME"); x && x[0] == '/') {
    user = std::string(x) + "/lntune/lntune.db";
  } else if (const char* h = env("HOME")) {
    user = std::string(h) + "/.cache/lntune/lntune.db";
  }
  std::vector<std::string> shipped = split_path_list(env("LNTUNE_CACHE_PATH"));
  shipped.insert(shipped.end(), extra_shipped.begin(), extra_shipped.end());
  return CacheStack(std::move(user), std::move(shipped));
}

CacheStack::CacheStack(std::optional<std::string> writable_path,
                       std::vector<std::string> shipped_paths)
    : state_(std::make_unique<State>()) {
  if (writable_path && writable_path->empty()) writable_path.reset();
  state_->user_path = std::move(writable_path);
  std::vector<std::string> seen;
  if (state_->user_path) seen.push_back(identity(*state_->user_path));
  for (const std::string& entry : shipped_paths) {
    for (const std::string& file : expand(entry)) {
      std::string id = identity(file);
      if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(std::move(id));
      state_->shipped.push_back(Database::open(file, Database::Mode::read_only));
    }
  }
}

CacheStack::CacheStack(CacheStack&&) noexcept = default;
CacheStack& CacheStack::operator=(CacheStack&&) noexcept = default;
CacheStack::~CacheStack() = default;

std::optional<TuneRecord> CacheStack::find(const TuneKey& key) const {
  for (const Database* db : state_->all_layers()) {
    if (auto r = db->find(key)) return r;
  }
  return std::nullopt;
}

std::optional<TuneRecord> CacheStack::find_nearest(const TuneKey& key) const {
  if (key.n <= 0) throw Error("lntune::cache::CacheStack::find_nearest: key.n must be > 0");
  std::optional<TuneRecord> best;
  for (const Database* db : state_->all_layers()) {
    auto r = db->find_nearest(key);
    if (r && (!best || detail::nearer(key.n, r->key.n, best->key.n))) best = std::move(r);
  }
  return best;
}

std::optional<std::vector<char>> CacheStack::get_binary(const BinaryKey& key) const {
  for (const Database* db : state_->all_layers()) {
    if (auto b = db->get_binary(key)) return b;
  }
  return std::nullopt;
}

Database* CacheStack::writable() { return state_->writable_db(); }

const std::optional<std::string>& CacheStack::writable_path() const { return state_->user_path; }

std::vector<const Database*> CacheStack::layers() const { return state_->all_layers(); }

}  // namespace lntune::cache
