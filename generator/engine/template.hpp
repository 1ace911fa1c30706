// lntune::tmpl — a small Jinja-like template engine for the CUDA kernel
// templates (*.cu.j2). Include this header; the others are its parts.
//
//   auto t = lntune::tmpl::Template::parse("gemm.cu.j2", source);   // once
//   std::string cu = t.render({{"tile_m", 64}, {"use_tf32", true}}); // many times
//
// The language is a subset of Jinja2 with trim_blocks and lstrip_blocks always
// on; see README-style notes in generator/engine/renderer.cpp. Deviations from
// Jinja: printing a bool gives "true"/"false" (C spelling), printing none, a
// list or a dict is an error, and so is any undefined name, attribute, key or
// out-of-range index (except under |default and `is defined`).
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
