// libFuzzer harness: the template engine (generator/engine/), parse and
// render. The input is up to three template sources separated by NUL bytes,
// added to one Environment as "t", "u" and "v" (so that includes, mutual and
// self recursion, and macros across them are reached) and each rendered
// against a small data dict. Any error must be a TemplateError; anything
// else (a crash, a sanitizer report, another exception, a hang past
// libFuzzer's -timeout, memory past -rss_limit_mb) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "generator/engine/template.hpp"

using lntune::tmpl::Dict;
using lntune::tmpl::Environment;
using lntune::tmpl::List;
using lntune::tmpl::TemplateError;
using lntune::tmpl::Value;

namespace {

const Dict& data() {
  static const Dict d{
      {"n", 3},
      {"xs", List{1, 2, 3}},
      {"s", "abc"},
      {"f", 2.5},
      {"yes", true},
      {"nothing", Value()},
      {"d", Dict{{"a", 1}, {"inner", Dict{{"c", "deep"}}}}},
      {"block_size", 1024},
      {"has_bias", true},
  };
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(bytes), size);
  static const char* const kNames[] = {"t", "u", "v"};
  Environment env;
  std::size_t begin = 0;
  int added = 0;
  for (int i = 0; i < 3 && begin <= input.size(); ++i) {
    std::size_t end = input.find('\0', begin);
    if (end == std::string_view::npos || i == 2) end = input.size();
    try {
      env.add(kNames[i], input.substr(begin, end - begin));
      ++added;
    } catch (const TemplateError&) {
      // A syntax error: what a bad template gets.
    }
    begin = end + 1;
  }
  for (int i = 0; i < 3; ++i) {
    if (!env.contains(kNames[i])) continue;
    try {
      const std::string out = env.render(kNames[i], data());
      (void)out;
    } catch (const TemplateError&) {
    }
  }
  // A template without an Environment: includes fail cleanly.
  try {
    lntune::tmpl::Template::parse("solo", input).render(data());
  } catch (const TemplateError&) {
  }
  (void)added;
  return 0;
}
