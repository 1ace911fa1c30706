#include "tuner/cli/common.hpp"

#include <cstdlib>
#include <cstring>

#include "runtime/driver.hpp"

namespace lntune::cli {

std::string error_message(const std::exception& e) {
  const std::string w = terminal_text(e.what(), true);
  return w.rfind("lntune: ", 0) == 0 ? w : "lntune: " + w;
}



void require_gpu() {
  std::string why;
  if (rt::gpu_available(&why)) return;
  throw Error(why.rfind("lntune: ", 0) == 0 ? why : "lntune: " + why);
}

void use_db(const std::string& path) {
  if (!path.empty()) ::setenv("LNTUNE_CACHE", path.c_str(), 1);
}

std::shared_ptr<cache::CacheStack> cache_stack() {
  const char* v = std::getenv("LNTUNE_CACHE");
  if (v && std::strcmp(v, "off") == 0) return nullptr;
  return std::make_shared<cache::CacheStack>(cache::CacheStack::from_environment());
}

}  // namespace lntune::cli
