// lntune::tmpl — turns template source into tokens.
//
// Whitespace control is applied here, to the Text tokens: '-' on a tag side
// strips all whitespace on that side; block and comment tags behave as with
// Jinja's trim_blocks and lstrip_blocks ('+' on a side turns that off).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "generator/engine/error.hpp"
#include "generator/engine/token.hpp"

namespace lntune::tmpl::detail {

// Maps byte offsets of one source to Locations.
class SourceMap {
 public:
  SourceMap(std::string name, std::string_view source);
  Location locate(std::size_t offset) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<std::size_t> line_starts_;
};

// Tokenizes the whole source; the last token is End. Token texts point into
// source, which must outlive them. Throws TemplateError.
std::vector<Token> tokenize(std::string_view source, const SourceMap& map);

}  // namespace lntune::tmpl::detail
