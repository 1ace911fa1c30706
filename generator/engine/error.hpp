// lntune::tmpl — errors raised while parsing or rendering a template.
#pragma once

#include <stdexcept>
#include <string>

namespace lntune::tmpl {

// A position in a template source: template name, 1-based line and column
// (the column counts bytes).
struct Location {
  std::string name;
  int line = 0;
  int column = 0;
};

// Every parse or render failure. what() reads "<name>:<line>:<col>: <message>".
class TemplateError : public std::runtime_error {
 public:
  TemplateError(Location location, std::string message)
      : std::runtime_error(location.name + ":" + std::to_string(location.line) + ":" +
                           std::to_string(location.column) + ": " + message),
        location_(std::move(location)),
        message_(std::move(message)) {}

  const Location& location() const noexcept { return location_; }
  const std::string& message() const noexcept { return message_; }

 private:
  Location location_;
  std::string message_;
};

}  // namespace lntune::tmpl
