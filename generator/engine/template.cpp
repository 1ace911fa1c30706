#include "generator/engine/template.hpp"

#include <stdexcept>

#include "generator/engine/parser.hpp"
#include "generator/engine/renderer.hpp"

namespace lntune::tmpl {

Template Template::parse(std::string name, std::string_view source) {
  return Template(detail::parse_template(std::move(name), source));
}

std::string Template::render(const Dict& data) const { return detail::render(*ast_, data, nullptr); }

std::string Template::render(const Dict& data, const Environment& env) const {
  return detail::render(*ast_, data, &env);
}

const std::string& Template::name() const { return ast_->name; }

void Environment::add(std::string name, std::string_view source) {
  Template parsed = Template::parse(name, source);
  templates_.insert_or_assign(std::move(name), std::move(parsed));
}

bool Environment::contains(std::string_view name) const { return templates_.find(name) != templates_.end(); }

const Template& Environment::get(std::string_view name) const {
  auto it = templates_.find(name);
  if (it == templates_.end()) {
    throw std::out_of_range("lntune::tmpl::Environment: no template named '" + std::string(name) + "'");
  }
  return it->second;
}

std::string Environment::render(std::string_view name, const Dict& data) const {
  return get(name).render(data, *this);
}

}  // namespace lntune::tmpl
