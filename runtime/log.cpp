#include "runtime/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace lntune::rt {
namespace {

int level() {  // 0 debug, 1 info, 2 warn, 3 off
  static const int lvl = [] {
    const char* v = std::getenv("LNTUNE_LOG");
    if (!v) return 2;
    if (!std::strcmp(v, "debug")) return 0;
    if (!std::strcmp(v, "info")) return 1;
    if (!std::strcmp(v, "off")) return 3;
    return 2;
  }();
  return lvl;
}

void emit(const char* tag, const std::string& msg) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "[lntune %s] %s\n", tag, msg.c_str());
}

}  // namespace

bool debug_enabled() { return level() == 0; }
void log_debug(const std::string& msg) {
  if (level() <= 0) emit("debug", msg);
}
void log_warn(const std::string& msg) {
  if (level() <= 2) emit("warn", msg);
}

}  // namespace lntune::rt
