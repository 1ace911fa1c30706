// lntune CLI: the parsers of list options and the numeric validators. Pure
// functions over the option text (no GPU, no cache), so that they can be
// fuzzed on their own (tests/fuzz/fuzz_cli_list.cpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "tuner/cli/common.hpp"

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

// Text for messages: at most 40 bytes of it, made terminal_text, so that no
// option value can flood or drive the terminal.
std::string shown(const std::string& s) {
  return terminal_text(std::string_view(s).substr(0, 40)) + (s.size() > 40 ? "..." : "");
}

std::string range_text(std::int64_t lo, std::int64_t hi) {
  return std::to_string(lo) + " .. " + std::to_string(hi);
}

std::int64_t to_int(const std::string& s, const std::string& option, std::int64_t max_value) {
  if (s.empty()) throw UsageError("lntune: " + option + ": empty value in the list");
  std::int64_t v = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (*begin == '+') ++begin;  // from_chars takes no '+'
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ptr != end || begin == end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw UsageError("lntune: " + option + ": '" + shown(s) + "' is not an integer");
  if (ec == std::errc::result_out_of_range || v < 1 || v > max_value)
    throw UsageError("lntune: " + option + ": " + shown(s) + " is out of range (" + range_text(1, max_value) + ")");
  return v;
}

void push(std::vector<std::int64_t>& out, std::int64_t v, const std::string& option) {
  if (out.size() >= kMaxListValues)
    throw UsageError("lntune: " + option + ": more than " + std::to_string(kMaxListValues) + " values");
  out.push_back(v);
}

}  // namespace

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option,
                                         std::int64_t max_value) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split(text, ',')) {
    const auto parts = split(item, ':');
    if (parts.size() == 1) {
      push(out, to_int(parts[0], option, max_value), option);
    } else if (parts.size() == 3) {
      const std::int64_t start = to_int(parts[0], option, max_value), stop = to_int(parts[1], option, max_value),
                         step = to_int(parts[2], option, std::numeric_limits<std::int64_t>::max());
      if (start > stop) throw UsageError("lntune: " + option + ": START > STOP in '" + shown(item) + "'");
      // 1 <= start <= stop: stop - start cannot overflow, and neither can
      // start + i * step <= stop.
      const std::int64_t count = (stop - start) / step + 1;
      if (count > static_cast<std::int64_t>(kMaxListValues - out.size()))
        throw UsageError("lntune: " + option + ": '" + shown(item) + "' gives " + std::to_string(count) +
                         " values; at most " + std::to_string(kMaxListValues) + " in all");
      for (std::int64_t i = 0; i < count; ++i) push(out, start + i * step, option);
    } else {
      throw UsageError("lntune: " + option + ": '" + shown(item) + "' is neither a number nor START:STOP:STEP");
    }
  }
  return out;
}

std::vector<DType> parse_dtype_list(const std::string& text, const std::string& option) {
  std::vector<DType> out;
  for (const std::string& item : split(text, ',')) {
    const auto d = parse_dtype(item);
    if (!d) throw UsageError("lntune: " + option + ": unknown dtype '" + shown(item) + "' (fp32, fp16, bf16)");
    if (out.size() >= kMaxListValues)
      throw UsageError("lntune: " + option + ": more than " + std::to_string(kMaxListValues) + " values");
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
      throw UsageError("lntune: " + option + ": unknown kernel '" + shown(item) + "' (fwd, bwd)");
    if (out.size() > kMaxListValues)
      throw UsageError("lntune: " + option + ": more than " + std::to_string(kMaxListValues) + " values");
  }
  return out;
}

void check_problem_count(std::size_t ns, std::size_t ms, std::size_t dtypes, std::size_t kernels) {
  // Each factor is at most kMaxListValues: the product fits in 64 bits.
  const unsigned long long total = static_cast<unsigned long long>(ns) * ms * dtypes * kernels;
  if (total > kMaxProblems)
    throw UsageError("lntune: --n x --m x --dtype x --kernel gives " + std::to_string(total) +
                     " problems; at most " + std::to_string(kMaxProblems));
}

void check_workload_size(const std::vector<std::int64_t>& ns, const std::vector<std::int64_t>& ms) {
  std::int64_t n = 0, m = 0;
  for (std::int64_t v : ns) n = std::max(n, v);
  for (std::int64_t v : ms) m = std::max(m, v);
  std::int64_t elements = 0;
  if (__builtin_mul_overflow(n, m, &elements) || elements > kMaxElements)
    throw UsageError("lntune: --n x --m: M = " + std::to_string(m) + " rows of N = " + std::to_string(n) +
                     " elements is too large for one workload (at most 2^40 elements)");
}

// ---------------------------------------------------------------- norm variants

namespace {

std::optional<DType> dtype_option(const std::string& text, const char* option) {
  if (text.empty()) return std::nullopt;
  const auto d = parse_dtype(text);
  if (!d) throw UsageError(std::string("lntune: ") + option + ": unknown dtype '" + shown(text) + "' (fp32, fp16, bf16)");
  return d;
}

}  // namespace

void VariantOptions::add(CLI::App& app, bool op_list, const std::string& op_default) {
  app.add_option("--op", op,
                 std::string(op_list ? "Norms, comma-separated: " : "Norm: ") + "layernorm, rmsnorm (default: " +
                     op_default + ")");
  app.add_flag("--residual", residual,
               "Fused residual add: z = x + residual is written out and y = norm(z) (the backward reads z and adds "
               "the gradient of z into dx)");
  app.add_option("--residual-dtype", residual_dtype,
                 "dtype of the residual stream, z and its gradient: fp32, fp16, bf16 (default: the row dtype; "
                 "needs --residual)");
  app.add_flag("--zero-centered", zero_centered,
               "Zero-centred gamma: y = xhat * (1 + w) + b, the weight stored around 0 (needs a weight)");
  app.add_option("--y-dtype", y_dtype,
                 "dtype of y (forward) and dy (backward): fp32, fp16, bf16 (default: the row dtype)");
}

bool VariantOptions::given() const {
  return !op.empty() || residual || !residual_dtype.empty() || zero_centered || !y_dtype.empty();
}

std::vector<Norm> VariantOptions::norms() const {
  if (op.empty()) return {Norm::layer};
  std::vector<Norm> out;
  for (const std::string& item : split(op, ',')) {
    const auto n = parse_norm(item);
    if (!n) throw UsageError("lntune: --op: unknown norm '" + shown(item) + "' (layernorm, rmsnorm)");
    if (std::find(out.begin(), out.end(), *n) == out.end()) out.push_back(*n);
  }
  return out;
}

std::optional<DType> VariantOptions::residual_type() const { return dtype_option(residual_dtype, "--residual-dtype"); }

void VariantOptions::check(bool has_weight) const {
  (void)norms();
  (void)residual_type();
  (void)dtype_option(y_dtype, "--y-dtype");
  if (!residual_dtype.empty() && !residual) throw UsageError("lntune: --residual-dtype needs --residual");
  if (zero_centered && !has_weight)
    throw UsageError("lntune: --zero-centered needs a weight (it is applied as 1 + w): drop --no-weight");
}

Traits VariantOptions::apply_options(Traits t) const {
  t.zero_centered = zero_centered;
  if (const auto y = dtype_option(y_dtype, "--y-dtype")) t.y_dtype = *y;
  return t.canonical();
}

Traits VariantOptions::apply(Traits t, Norm norm) const {
  t.norm = norm;
  if (residual) t.residual = residual_type().value_or(t.x_dtype);
  return apply_options(t);
}

CLI::Validator int_range(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        std::int64_t v = 0;
        const char* begin = s.data();
        const char* end = s.data() + s.size();
        if (begin != end && *begin == '+') ++begin;
        const auto [ptr, ec] = std::from_chars(begin, end, v);
        if (ptr != end || begin == end || (ec != std::errc() && ec != std::errc::result_out_of_range))
          return "'" + shown(s) + "' is not an integer";
        if (ec == std::errc::result_out_of_range || v < lo || v > hi)
          return shown(s) + " is out of range (" + range_text(lo, hi) + ")";
        return std::string();
      },
      "INT in " + range_text(lo, hi));
}

CLI::Validator finite_number(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& s) -> std::string {
        const char* begin = s.c_str();
        char* end = nullptr;
        const double v = std::strtod(begin, &end);
        if (end == begin || *end != '\0') return "'" + shown(s) + "' is not a number";
        if (!std::isfinite(v)) return shown(s) + " is not a finite number";
        if (allow_zero ? v < 0 : v <= 0) return shown(s) + (allow_zero ? " must be >= 0" : " must be > 0");
        return std::string();
      },
      allow_zero ? "NUMBER >= 0" : "NUMBER > 0");
}

// ---------------------------------------------------------------- text

namespace {

// Decodes one UTF-8 sequence at s[i]: its code point and length, or length
// 0 if the bytes there are not valid UTF-8 (overlong forms, surrogates and
// code points above U+10FFFF included).
std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t len = 0;
  char32_t min = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    len = 2, cp = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, cp = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

void append_hex(std::string& out, const char* prefix, unsigned v, int digits) {
  static const char hex[] = "0123456789abcdef";
  out += prefix;
  for (int d = digits - 1; d >= 0; --d) out += hex[(v >> (4 * d)) & 15];
}

}  // namespace

std::string terminal_text(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      append_hex(out, "\\x", static_cast<unsigned char>(s[i]), 2);
      ++i;
      continue;
    }
    const bool control = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
    const bool bidi = (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
    if (keep_newlines && (cp == '\n' || cp == '\t')) {
      out += static_cast<char>(cp);
    } else if (cp < 0x80 && control) {
      append_hex(out, "\\x", static_cast<unsigned>(cp), 2);
    } else if (control || bidi) {
      append_hex(out, "\\u", static_cast<unsigned>(cp), 4);
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string utf8_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

cache::TuneRecord printable(const cache::TuneRecord& r, bool for_json) {
  auto f = [for_json](const std::string& t) { return for_json ? utf8_text(t) : terminal_text(t); };
  cache::TuneRecord o = r;
  o.key.gpu.name = f(r.key.gpu.name);
  o.prov.template_hash = f(r.prov.template_hash);
  o.prov.lntune_version = f(r.prov.lntune_version);
  o.prov.tuned_at = f(r.prov.tuned_at);
  o.prov.merged_from = f(r.prov.merged_from);  // the only free text of an origin
  return o;
}

}  // namespace lntune::cli
