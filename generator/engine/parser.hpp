// lntune::tmpl — builds the syntax tree from the tokens of one source.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "generator/engine/ast.hpp"

namespace lntune::tmpl::detail {

// Parses a whole template. Throws TemplateError naming the offending token.
std::shared_ptr<const TemplateAst> parse_template(std::string name, std::string_view source);

}  // namespace lntune::tmpl::detail
