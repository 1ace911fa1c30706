// Helpers shared by the lntune::cache sources. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lntune::cache::detail {

// find_nearest's rule: true if candidate `a` is preferred to candidate `b`
// for the wanted row length `n`, i.e. |log(a/n)| < |log(b/n)|, or equal and
// a > b. Exact (128-bit integer arithmetic). All arguments > 0.
bool nearer(std::int64_t n, std::int64_t a, std::int64_t b);

// Checks `path` with stat(2) before SQLite opens it (opening a FIFO would
// block): returns false if it does not exist, true for a readable regular
// file, and throws CacheError(doing, path, ...) naming anything else
// (a directory, FIFO, device or socket; a symbolic link loop; permission
// denied). With `for_writing`, a missing file's directory must exist and be
// writable.
bool check_cache_path(const std::string& path, const std::string& doing, bool for_writing);

// Writes `size` bytes as a new file at `path`, atomically: the file appears
// complete (written and fsync'ed, then linked into place and the directory
// fsync'ed) or not at all, and an existing `path` is never replaced
// (CacheError "file exists; refusing to overwrite it"). Uses an unnamed
// O_TMPFILE file in the destination directory, so a killed process leaves
// nothing behind; where the file system lacks O_TMPFILE, a hidden temporary
// ".<name>.lntune-tmp-XXXXXX" beside it (removed on failure, but left by a
// kill -9).
void write_new_file(const std::string& path, const void* data, std::size_t size,
                    const std::string& doing);

}  // namespace lntune::cache::detail
