// lntune::tmpl — evaluates a parsed template against data.
#pragma once

#include <string>

#include "generator/engine/ast.hpp"
#include "generator/engine/template.hpp"

namespace lntune::tmpl::detail {

// Gives the renderer the tree behind a Template.
class TemplateAccess {
 public:
  static const TemplateAst& ast(const Template& t) { return *t.ast_; }
};

// Renders ast with data as globals; env (may be null) resolves includes.
// Throws TemplateError.
std::string render(const TemplateAst& ast, const Dict& data, const Environment* env);

}  // namespace lntune::tmpl::detail
