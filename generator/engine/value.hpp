// lntune::tmpl — the values a template computes with: none, bool, int (64-bit),
// double, string, list and dict (string keys). Lists and dicts are immutable
// once wrapped in a Value and shared on copy, so copying a Value is cheap and
// a Value may be read from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lntune::tmpl {

// The kinds of Value (declared ahead of List and Dict so that the names do not
// shadow one another); also spelled Value::Type.
enum class ValueType { None, Bool, Int, Double, String, List, Dict };

class Value;
using List = std::vector<Value>;
using Dict = std::map<std::string, Value, std::less<>>;

class Value {
 public:
  using Type = ValueType;

  // Implicit conversions, so that Dict{{"n", 4}, {"name", "k"}} reads naturally.
  // A const char* becomes a string (never a bool); unsigned values above
  // INT64_MAX throw std::out_of_range.
  Value() noexcept = default;
  Value(std::nullptr_t) noexcept {}
  Value(bool b) noexcept : data_(b) {}
  Value(int i) noexcept : data_(int64_t{i}) {}
  Value(long i) noexcept : data_(static_cast<int64_t>(i)) {}
  Value(long long i) noexcept : data_(static_cast<int64_t>(i)) {}
  Value(unsigned i) noexcept : data_(int64_t{i}) {}
  Value(unsigned long i);
  Value(unsigned long long i);
  Value(double d) noexcept : data_(d) {}
  Value(float f) noexcept : data_(double{f}) {}
  Value(const char* s);
  Value(std::string s) noexcept : data_(std::move(s)) {}
  Value(std::string_view s) : data_(std::string(s)) {}
  Value(List list);
  Value(Dict dict);

  Type type() const noexcept { return static_cast<Type>(data_.index()); }
  // "none", "bool", "int", "double", "string", "list" or "dict".
  const char* type_name() const noexcept;
  static const char* type_name(Type type) noexcept;

  bool is_none() const noexcept { return type() == Type::None; }
  bool is_bool() const noexcept { return type() == Type::Bool; }
  bool is_int() const noexcept { return type() == Type::Int; }
  bool is_double() const noexcept { return type() == Type::Double; }
  bool is_number() const noexcept { return is_int() || is_double(); }
  bool is_string() const noexcept { return type() == Type::String; }
  bool is_list() const noexcept { return type() == Type::List; }
  bool is_dict() const noexcept { return type() == Type::Dict; }

  // Accessors throw std::invalid_argument on a type mismatch. as_double()
  // also accepts an int and converts it.
  bool as_bool() const;
  int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const;
  const List& as_list() const;
  const Dict& as_dict() const;

  // For a dict: the value under key, or nullptr (also for non-dicts).
  const Value* find(std::string_view key) const;

  // Jinja truthiness: none, false, 0, 0.0, "", [] and {} are false.
  bool truthy() const noexcept;

  // A debugging form: none, true, 42, 1.5, 'text', [1, 'a'], {'k': 2}.
  std::string repr() const;

  // Deep equality; an int and a double compare by numeric value.
  friend bool operator==(const Value& a, const Value& b);
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, std::shared_ptr<const List>,
               std::shared_ptr<const Dict>>
      data_;
};

// Shortest text that reads back as the same double; always has a '.' or an
// exponent ("1.0", "0.1", "1e+20"), "inf", "-inf" or "nan".
std::string format_double(double d);

// For GoogleTest diagnostics.
inline void PrintTo(const Value& v, std::ostream* os) { *os << v.repr(); }

}  // namespace lntune::tmpl
