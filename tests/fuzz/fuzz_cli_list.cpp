// libFuzzer harness: the CLI's list parsers and validators
// (tuner/cli/parse.cpp), the variant options and the text sanitisers. Every
// bad input must be a UsageError; every accepted list must hold only values
// in range, at most kMaxListValues of them; terminal_text must leave no
// control character and utf8_text only valid UTF-8. A violation traps.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tuner/cli/common.hpp"

namespace {

using namespace lntune::cli;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3fu);
    }
    const std::uint32_t min = len == 1 ? 0 : len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

void int_list(const std::string& text, std::int64_t max) {
  try {
    const auto values = parse_int_list(text, "--n", max);
    require(values.size() <= kMaxListValues);
    for (std::int64_t v : values) require(v >= 1 && v <= max);
  } catch (const UsageError& e) {
    require(std::string(e.what()).rfind("lntune: --n: ", 0) == 0);
  }
}

void validator(CLI::Validator v, std::string text) {
  const std::string message = v(text);
  (void)message;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(bytes), size);
  int_list(text, kMaxN);
  int_list(text, kMaxM);
  int_list(text, 7);
  try {
    const auto d = parse_dtype_list(text, "--dtype");
    require(d.size() <= kMaxListValues);
  } catch (const UsageError&) {
  }
  try {
    const auto k = parse_kernel_list(text, "--kernel");
    require(k.size() <= kMaxListValues + 1);
  } catch (const UsageError&) {
  }
  // The variant options: any text is a valid value or a UsageError naming the option.
  {
    VariantOptions v;
    v.op = text;
    v.residual = !text.empty() && (text[0] & 1);
    v.residual_dtype = text.size() > 1 ? text.substr(1) : "";
    v.y_dtype = text;
    try {
      v.check(true);
      const auto norms = v.norms();
      require(!norms.empty() && norms.size() <= 2);
      const lntune::Traits t = v.apply(lntune::Traits{lntune::Kernel::fwd, lntune::DType::bf16, lntune::DType::bf16, true, true},
                               norms.front());
      require(t.residual.has_value() == v.residual);
    } catch (const UsageError& e) {
      require(std::string(e.what()).rfind("lntune: --", 0) == 0);
    }
  }
  validator(int_range(1, kMaxM), text);
  validator(int_range(-5, 5), text);
  validator(finite_number(false), text);
  validator(finite_number(true), text);

  const std::string safe = terminal_text(text);
  require(valid_utf8(safe));
  for (unsigned char c : safe) require(c >= 0x20 && c != 0x7f);
  for (std::size_t i = 0; i + 1 < safe.size(); ++i)  // no C1 control (U+0080..U+009F) either
    require(!(static_cast<unsigned char>(safe[i]) == 0xc2 && static_cast<unsigned char>(safe[i + 1]) < 0xa0));
  const std::string kept = terminal_text(text, true);
  for (unsigned char c : kept) require(c >= 0x20 ? c != 0x7f : (c == '\n' || c == '\t'));
  const std::string utf8 = utf8_text(text);
  require(valid_utf8(utf8));
  if (valid_utf8(text)) require(utf8 == text);
  return 0;
}
