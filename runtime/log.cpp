#include "runtime/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lntune::rt {
namespace {

void emit(const char* tag, const std::string& msg) {
  const std::string line = std::string("[lntune ") + tag + "] " + msg + "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace

Log Log::from_environment() {
  const char* v = std::getenv("LNTUNE_LOG");
  if (!v) return Log(LogLevel::warn);
  if (!std::strcmp(v, "debug")) return Log(LogLevel::debug);
  if (!std::strcmp(v, "info")) return Log(LogLevel::info);
  if (!std::strcmp(v, "off")) return Log(LogLevel::off);
  return Log(LogLevel::warn);
}

void Log::debug(const std::string& msg) const {
  if (level_ <= LogLevel::debug) emit("debug", msg);
}
void Log::warn(const std::string& msg) const {
  if (level_ <= LogLevel::warn) emit("warn", msg);
}

}  // namespace lntune::rt
