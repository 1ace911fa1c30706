#include "generator/engine/value.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <limits>
#include <stdexcept>

namespace lntune::tmpl {

namespace {

int64_t checked_unsigned(unsigned long long u) {
  if (u > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
    throw std::out_of_range("lntune::tmpl::Value: integer " + std::to_string(u) +
                            " does not fit in int64");
  }
  return static_cast<int64_t>(u);
}

[[noreturn]] void bad_access(const char* wanted, const Value& v) {
  throw std::invalid_argument(std::string("lntune::tmpl::Value: expected ") + wanted + ", got " +
                              v.type_name());
}

void append_quoted(std::string& out, const std::string& s) {
  out += '\'';
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += '\'';
}

}  // namespace

Value::Value(unsigned long i) : data_(checked_unsigned(i)) {}
Value::Value(unsigned long long i) : data_(checked_unsigned(i)) {}
Value::Value(const char* s) : data_(std::string(s == nullptr ? "" : s)) {
  if (s == nullptr) throw std::invalid_argument("lntune::tmpl::Value: null const char*");
}
Value::Value(List list) : data_(std::make_shared<const List>(std::move(list))) {}
Value::Value(Dict dict) : data_(std::make_shared<const Dict>(std::move(dict))) {}

const char* Value::type_name(Type type) noexcept {
  switch (type) {
    case Type::None: return "none";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Double: return "double";
    case Type::String: return "string";
    case Type::List: return "list";
    case Type::Dict: return "dict";
  }
  return "?";
}

const char* Value::type_name() const noexcept { return type_name(type()); }

bool Value::as_bool() const {
  if (!is_bool()) bad_access("bool", *this);
  return std::get<bool>(data_);
}

int64_t Value::as_int() const {
  if (!is_int()) bad_access("int", *this);
  return std::get<int64_t>(data_);
}

double Value::as_double() const {
  if (is_int()) return static_cast<double>(std::get<int64_t>(data_));
  if (!is_double()) bad_access("double", *this);
  return std::get<double>(data_);
}

const std::string& Value::as_string() const {
  if (!is_string()) bad_access("string", *this);
  return std::get<std::string>(data_);
}

const List& Value::as_list() const {
  if (!is_list()) bad_access("list", *this);
  return *std::get<std::shared_ptr<const List>>(data_);
}

const Dict& Value::as_dict() const {
  if (!is_dict()) bad_access("dict", *this);
  return *std::get<std::shared_ptr<const Dict>>(data_);
}

const Value* Value::find(std::string_view key) const {
  if (!is_dict()) return nullptr;
  const Dict& d = as_dict();
  auto it = d.find(key);
  return it == d.end() ? nullptr : &it->second;
}

bool Value::truthy() const noexcept {
  switch (type()) {
    case Type::None: return false;
    case Type::Bool: return std::get<bool>(data_);
    case Type::Int: return std::get<int64_t>(data_) != 0;
    case Type::Double: return std::get<double>(data_) != 0.0;
    case Type::String: return !std::get<std::string>(data_).empty();
    case Type::List: return !std::get<std::shared_ptr<const List>>(data_)->empty();
    case Type::Dict: return !std::get<std::shared_ptr<const Dict>>(data_)->empty();
  }
  return false;
}

std::string Value::repr() const {
  switch (type()) {
    case Type::None: return "none";
    case Type::Bool: return as_bool() ? "true" : "false";
    case Type::Int: return std::to_string(as_int());
    case Type::Double: return format_double(as_double());
    case Type::String: {
      std::string out;
      append_quoted(out, as_string());
      return out;
    }
    case Type::List: {
      std::string out = "[";
      for (const Value& v : as_list()) {
        if (out.size() > 1) out += ", ";
        out += v.repr();
      }
      return out + "]";
    }
    case Type::Dict: {
      std::string out = "{";
      for (const auto& [k, v] : as_dict()) {
        if (out.size() > 1) out += ", ";
        append_quoted(out, k);
        out += ": " + v.repr();
      }
      return out + "}";
    }
  }
  return "?";
}

bool operator==(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Value::Type::None: return true;
    case Value::Type::Bool: return a.as_bool() == b.as_bool();
    case Value::Type::String: return a.as_string() == b.as_string();
    case Value::Type::List: return a.as_list() == b.as_list();
    case Value::Type::Dict: return a.as_dict() == b.as_dict();
    default: return false;  // numbers handled above
  }
}

// Like Python's repr(float): the fewest significant digits that read back as
// d, in fixed notation for 1e-4 <= |d| < 1e16 and in exponent notation
// otherwise.
std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  int precision = 1;
  for (; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
  int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent < -4 || exponent >= 16) return buf;  // "1e+20", "1.5e-07"
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, precision - 1 - exponent), d);
  std::string s = buf;
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

}  // namespace lntune::tmpl
