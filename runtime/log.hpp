// lntune's messages on stderr, at a level a Runtime owns (LNTUNE_LOG=
// debug|info|warn|off, default warn, read when the Runtime is built).
#pragma once

#include <string>

namespace lntune::rt {

enum class LogLevel { debug = 0, info = 1, warn = 2, off = 3 };

class Log {
 public:
  explicit Log(LogLevel level = LogLevel::warn) : level_(level) {}
  static Log from_environment();  // LNTUNE_LOG; unset or unknown: warn

  LogLevel level() const { return level_; }
  bool debug_enabled() const { return level_ <= LogLevel::debug; }
  // One write per message (stdio locks the stream), so lines never interleave.
  void debug(const std::string& msg) const;
  void warn(const std::string& msg) const;

 private:
  LogLevel level_;
};

}  // namespace lntune::rt
