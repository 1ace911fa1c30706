// lntune CLI: the --json output of tune, bench, verify and info. A small
// writer that emits one JSON document in order (objects, arrays, scalars),
// placing the commas itself, so every command's output is valid JSON by
// construction: strings go through tune::json_string (escaped), non-finite
// numbers become null. Output only; errors still go to stderr.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "lntune/types.hpp"
#include "tuner/report.hpp"

namespace lntune::cli {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& os) : os_(os) {}
  ~JsonWriter() = default;
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  // The next value's name (inside an object).
  JsonWriter& key(const std::string& name) {
    separate();
    os_ << tune::json_string(name) << ": ";
    after_key_ = true;
    return *this;
  }

  JsonWriter& value(const std::string& s) { return raw(tune::json_string(s)); }
  JsonWriter& value(const char* s) { return s ? value(std::string(s)) : null(); }
  JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
  JsonWriter& value(int v) { return raw(std::to_string(v)); }
  JsonWriter& value(unsigned v) { return raw(std::to_string(v)); }
  JsonWriter& value(long v) { return raw(std::to_string(v)); }
  JsonWriter& value(long long v) { return raw(std::to_string(v)); }
  JsonWriter& value(unsigned long v) { return raw(std::to_string(v)); }
  JsonWriter& value(unsigned long long v) { return raw(std::to_string(v)); }
  JsonWriter& value(double v) {
    if (!std::isfinite(v)) return null();
    char b[40];
    std::snprintf(b, sizeof b, "%.6g", v);
    return raw(b);
  }
  template <class T>
  JsonWriter& value(const std::optional<T>& v) {
    return v ? value(*v) : null();
  }
  JsonWriter& value(std::nullptr_t) { return null(); }
  JsonWriter& null() { return raw("null"); }

  // key(name).value(v)
  template <class T>
  JsonWriter& field(const std::string& name, const T& v) {
    key(name);
    return value(v);
  }

  // Ends the document with a newline.
  void finish() { os_ << "\n"; }

 private:
  JsonWriter& open(char c) {
    separate();
    os_ << c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    if (!first_.empty()) first_.pop_back();
    os_ << c;
    return *this;
  }
  JsonWriter& raw(const std::string& text) {
    separate();
    os_ << text;
    return *this;
  }
  // A comma before every element but the first of its container; nothing
  // between a key and its value.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) os_ << ", ";
    first_.back() = false;
  }

  std::ostream& os_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

// Shared shapes: a GPU, a config, a tuning key's fields.
inline void write_gpu(JsonWriter& j, const cache::GpuId& g) {
  j.begin_object().field("name", g.name).field("arch", g.arch()).field("sm_count", g.sm_count).end_object();
}

inline void write_config(JsonWriter& j, const Config& c) {
  j.begin_object()
      .field("block_size", c.block_size)
      .field("num_warps", c.num_warps)
      .field("rows_per_cta", c.rows_per_cta)
      .field("group_size_m", c.group_size_m)
      .field("cluster_size", c.cluster_size)
      .end_object();
}

// The fields of a problem's traits, into the current object: the kernel,
// dtypes, affine parts and the norm variant (the same names as `show
// --json`'s records: norm, residual_dtype (null: no residual),
// zero_centered, y_dtype). kernel_name: instead of the kernel's own name.
inline void write_traits_fields(JsonWriter& j, const Traits& t, const char* kernel_name = nullptr) {
  j.field("kernel", kernel_name ? std::string(kernel_name) : std::string(to_string(t.kernel)))
      .field("x_dtype", std::string(to_string(t.x_dtype)))
      .field("w_dtype", std::string(to_string(t.w_dtype)))
      .field("has_weight", t.has_weight)
      .field("has_bias", t.has_bias)
      .field("norm", std::string(to_string(t.norm)))
      .field("residual_dtype", t.residual ? std::optional<std::string>(to_string(*t.residual)) : std::nullopt)
      .field("zero_centered", t.zero_centered)
      .field("y_dtype", std::string(to_string(t.out_dtype())));
}

// The fields of a key, into the current object (no GPU: the caller's
// document names it once).
inline void write_key_fields(JsonWriter& j, const cache::TuneKey& k) {
  write_traits_fields(j, k.traits);
  j.field("n", static_cast<long long>(k.n)).field("m_bucket", k.m_bucket);
}

}  // namespace lntune::cli
