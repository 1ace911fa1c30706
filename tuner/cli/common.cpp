#include "tuner/cli/common.hpp"

#include <cstdlib>
#include <cstring>

#include "runtime/driver.hpp"

namespace lntune::cli {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::int64_t to_int(const std::string& s, const std::string& option) {
  if (s.empty()) throw UsageError("lntune: " + option + ": empty value in the list");
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size()) throw UsageError("lntune: " + option + ": '" + s + "' is not an integer");
  return v;
}

}  // namespace

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split(text, ',')) {
    const auto parts = split(item, ':');
    if (parts.size() == 1) {
      out.push_back(to_int(parts[0], option));
    } else if (parts.size() == 3) {
      const std::int64_t start = to_int(parts[0], option), stop = to_int(parts[1], option),
                         step = to_int(parts[2], option);
      if (step <= 0) throw UsageError("lntune: " + option + ": STEP must be > 0 in '" + item + "'");
      if (start > stop) throw UsageError("lntune: " + option + ": START > STOP in '" + item + "'");
      if ((stop - start) / step > 100000) throw UsageError("lntune: " + option + ": '" + item + "' has too many values");
      for (std::int64_t v = start; v <= stop; v += step) out.push_back(v);
    } else {
      throw UsageError("lntune: " + option + ": '" + item + "' is neither a number nor START:STOP:STEP");
    }
  }
  for (std::int64_t v : out)
    if (v < 1) throw UsageError("lntune: " + option + ": values must be >= 1, got " + std::to_string(v));
  return out;
}

std::vector<DType> parse_dtype_list(const std::string& text, const std::string& option) {
  std::vector<DType> out;
  for (const std::string& item : split(text, ',')) {
    const auto d = parse_dtype(item);
    if (!d) throw UsageError("lntune: " + option + ": unknown dtype '" + item + "' (fp32, fp16, bf16)");
    out.push_back(*d);
  }
  return out;
}

std::vector<Kernel> parse_kernel_list(const std::string& text, const std::string& option) {
  std::vector<Kernel> out;
  for (const std::string& item : split(text, ',')) {
    if (item == "fwd")
      out.push_back(Kernel::fwd);
    else if (item == "bwd" || item == "bwd_dx")
      out.push_back(Kernel::bwd_dx);
    else if (item == "bwd_dwdb")
      throw UsageError("lntune: " + option + ": bwd_dwdb is tuned with the backward: use 'bwd'");
    else
      throw UsageError("lntune: " + option + ": unknown kernel '" + item + "' (fwd, bwd)");
  }
  return out;
}

std::string error_message(const std::exception& e) {
  const std::string w = e.what();
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
