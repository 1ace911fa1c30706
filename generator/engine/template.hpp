// lntune::tmpl — a small Jinja-like template engine for the CUDA kernel
// templates (*.cu.j2). Include this header; the others are its parts
// (lexer -> parser -> immutable tree -> renderer).
//
//   auto t = lntune::tmpl::Template::parse("fwd.cu.j2", source);    // once
//   std::string cu = t.render({{"block_size", 1024}, {"has_bias", true}});
//
// Language (Jinja2 semantics unless noted):
//   {{ expr }}  {# comment #}  {% if %}{% elif %}{% else %}{% endif %}
//   {% for x in seq %}...{% else %}...{% endfor %}   seq: list, dict (keys),
//       string (chars); loop.index/index0/revindex/revindex0/first/last/length
//   {% set name = expr %}  (inside a for body it does not leak out)
//   {% include "name" %}   (through an Environment; sees the current variables)
//   {% macro name(a, b=default) %}...{% endmacro %}, called as name(1, 2)
//   literals: 1, 2.5, 1e-3, 'str', "str" (\n \t \r \\ \' \"), true/True,
//       false/False, none/None, [a, b]
//   operators, loosest first: a if c else b; or; and; not; == != < <= > >=
//       in, not in; + -; ~; * / // %; unary - +; then x|filter, x is test,
//       x.attr, x[i] (negative indexes count from the end)
//   filters: length upper lower join(sep="") default(v) int string
//   tests: defined undefined none      functions: range len min max
// Whitespace: '-' on a tag side strips all whitespace on that side; block and
// comment tags always behave as with trim_blocks and lstrip_blocks ('{%+' and
// '+%}' turn that off for one side); {{ }} is never trimmed; a trailing
// newline of the source is kept.
//
// Deviations from Jinja: printing a bool gives "true"/"false" (C spelling);
// printing none, a list or a dict is an error; any undefined variable,
// attribute or key and any out-of-range index is an error, except under
// |default (where a whole chain like a.b[0] may be missing) and `is defined`;
// ints are 64-bit and overflow is an error; chained comparisons (a < b < c)
// are rejected; macros are hoisted (callable before their definition), see
// only their arguments and the render data, and must be at the top level;
// `loop` cannot be assigned; bool is not a number (true + 1 is an error).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "generator/engine/error.hpp"
#include "generator/engine/value.hpp"

namespace lntune::tmpl {

namespace detail {
struct TemplateAst;
class TemplateAccess;
}  // namespace detail

class Environment;

// A parsed template. Immutable: copies share the tree, and render() may run
// concurrently from any number of threads.
class Template {
 public:
  // Throws TemplateError for any syntax error.
  static Template parse(std::string name, std::string_view source);

  // Renders with data as the global variables. Throws TemplateError. The first
  // form has no Environment, so {% include %} fails with "template not found".
  std::string render(const Dict& data) const;
  std::string render(const Dict& data, const Environment& env) const;

  const std::string& name() const;

 private:
  explicit Template(std::shared_ptr<const detail::TemplateAst> ast) : ast_(std::move(ast)) {}
  std::shared_ptr<const detail::TemplateAst> ast_;
  friend class detail::TemplateAccess;
};

// Named templates, so that templates can {% include %} one another. Adding is
// not synchronized; rendering (const) may run concurrently once all are added.
class Environment {
 public:
  // Parses now (throws TemplateError); replaces a template of the same name.
  void add(std::string name, std::string_view source);
  bool contains(std::string_view name) const;
  // Throws std::out_of_range("lntune::tmpl::Environment: no template named 'x'").
  const Template& get(std::string_view name) const;
  // get(name).render(data, *this).
  std::string render(std::string_view name, const Dict& data) const;

 private:
  std::map<std::string, Template, std::less<>> templates_;
};

}  // namespace lntune::tmpl
