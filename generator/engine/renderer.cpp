#include "generator/engine/renderer.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

namespace lntune::tmpl::detail {

namespace {

constexpr int kMaxIncludeDepth = 32;
constexpr int kMaxMacroDepth = 64;
// The combined depth of the renderer's recursion: nested bodies (if, for,
// macro, included template) and expressions, across includes and macro
// calls. Each of those is capped on its own (the parser caps one template's
// nesting at 200), but not their product: 60 nested ifs around a
// self-include used to overflow the stack. At this depth the renderer uses
// well under 1 MiB of stack, also under AddressSanitizer.
constexpr int kMaxRenderDepth = 500;
constexpr std::size_t kMaxRangeItems = 1'000'000;
// Resource caps, so that no template exhausts memory or runs for hours
// (kernel templates need a tiny fraction of each): every string (the output
// included) holds at most kMaxStringBytes, every list kMaxRangeItems, and a
// render takes at most kMaxRenderSteps steps (nodes, expressions and loop
// iterations; macros calling themselves twice would otherwise take 2^64).
constexpr std::size_t kMaxStringBytes = std::size_t{1} << 24;
constexpr std::int64_t kMaxRenderSteps = 5'000'000;


[[noreturn]] void fail(const Location& loc, std::string message) { throw TemplateError(loc, std::move(message)); }

void check_string(const std::string& s, const Location& loc) {
  if (s.size() > kMaxStringBytes)
    fail(loc, "string of " + std::to_string(s.size()) + " bytes is too large (limit " + std::to_string(kMaxStringBytes) + ")");
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// The printed form of a scalar; false for none, lists and dicts.
bool to_text(const Value& v, std::string& out) {
  switch (v.type()) {
    case Value::Type::String: out += v.as_string(); return true;
    case Value::Type::Int: out += std::to_string(v.as_int()); return true;
    case Value::Type::Double: out += format_double(v.as_double()); return true;
    case Value::Type::Bool: out += v.as_bool() ? "true" : "false"; return true;
    default: return false;
  }
}

std::string to_string(const Value& v, const Location& loc) {
  std::string out;
  if (!to_text(v, out)) fail(loc, std::string("cannot convert ") + v.type_name() + " to string");
  return out;
}

std::optional<int64_t> length_of(const Value& v) {
  if (v.is_string()) return static_cast<int64_t>(v.as_string().size());
  if (v.is_list()) return static_cast<int64_t>(v.as_list().size());
  if (v.is_dict()) return static_cast<int64_t>(v.as_dict().size());
  return std::nullopt;
}

// ---- arithmetic and comparison ----

const char* verb(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "subtract";
    case BinaryOp::Mul: return "multiply";
    case BinaryOp::Div: return "divide";
    case BinaryOp::FloorDiv: return "floor-divide";
    default: return "take the modulo of";
  }
}

[[noreturn]] void type_error(BinaryOp op, const Value& a, const Value& b, const Location& loc) {
  fail(loc, std::string("cannot ") + verb(op) + " " + a.type_name() + " and " + b.type_name());
}

Value int_arith(BinaryOp op, int64_t a, int64_t b, const Location& loc) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
    case BinaryOp::Add: overflow = __builtin_add_overflow(a, b, &r); break;
    case BinaryOp::Sub: overflow = __builtin_sub_overflow(a, b, &r); break;
    case BinaryOp::Mul: overflow = __builtin_mul_overflow(a, b, &r); break;
    case BinaryOp::Div:
      if (b == 0) fail(loc, "division by zero");
      return static_cast<double>(a) / static_cast<double>(b);
    case BinaryOp::FloorDiv:  // rounds toward negative infinity, like Python
      if (b == 0) fail(loc, "division by zero");
      if (a == std::numeric_limits<int64_t>::min() && b == -1) {
        overflow = true;
        break;
      }
      r = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --r;
      break;
    default:  // Mod: takes the sign of the divisor, like Python
      if (b == 0) fail(loc, "division by zero");
      if (b == -1) return int64_t{0};
      r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      break;
  }
  if (overflow) fail(loc, "integer overflow");
  return r;
}

Value double_arith(BinaryOp op, double a, double b, const Location& loc) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    default: break;
  }
  if (b == 0.0) fail(loc, "division by zero");
  if (op == BinaryOp::Div) return a / b;
  if (op == BinaryOp::FloorDiv) return std::floor(a / b);
  double r = std::fmod(a, b);
  if (r != 0.0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Value repeat(const std::string& s, int64_t n, const Location& loc) {
  if (n <= 0 || s.empty()) return std::string();
  if (static_cast<std::size_t>(n) > kMaxStringBytes / s.size()) fail(loc, "string repetition too large");
  std::string out;
  out.reserve(s.size() * static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) out += s;
  return out;
}

Value arith(BinaryOp op, const Value& a, const Value& b, const Location& loc) {
  if (a.is_int() && b.is_int()) return int_arith(op, a.as_int(), b.as_int(), loc);
  if (a.is_number() && b.is_number()) return double_arith(op, a.as_double(), b.as_double(), loc);
  if (op == BinaryOp::Add && a.is_string() && b.is_string()) {
    if (a.as_string().size() + b.as_string().size() > kMaxStringBytes) check_string(a.as_string() + b.as_string(), loc);
    return a.as_string() + b.as_string();
  }
  if (op == BinaryOp::Add && a.is_list() && b.is_list()) {
    if (a.as_list().size() + b.as_list().size() > kMaxRangeItems)
      fail(loc, "list of " + std::to_string(a.as_list().size() + b.as_list().size()) + " items is too large (limit " +
                    std::to_string(kMaxRangeItems) + ")");
    List out = a.as_list();
    out.insert(out.end(), b.as_list().begin(), b.as_list().end());
    return out;
  }
  if (op == BinaryOp::Mul && a.is_string() && b.is_int()) return repeat(a.as_string(), b.as_int(), loc);
  if (op == BinaryOp::Mul && a.is_int() && b.is_string()) return repeat(b.as_string(), a.as_int(), loc);
  type_error(op, a, b, loc);
}

// <0, 0, >0 for numbers and strings; anything else is an error.
int compare(const Value& a, const Value& b, const Location& loc) {
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
  if (a.is_number() && b.is_number()) {
    double x = a.as_double(), y = b.as_double();
    if (std::isnan(x) || std::isnan(y)) return 2;  // every ordering test is false
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) return a.as_string().compare(b.as_string());
  fail(loc, std::string("cannot compare ") + a.type_name() + " and " + b.type_name());
}

bool contains(const Value& container, const Value& item, const Location& loc) {
  if (container.is_list()) {
    for (const Value& v : container.as_list()) {
      if (v == item) return true;
    }
    return false;
  }
  if (container.is_string()) {
    if (!item.is_string()) fail(loc, std::string("cannot test whether ") + item.type_name() + " is in a string");
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_dict()) return item.is_string() && container.find(item.as_string()) != nullptr;
  fail(loc, std::string("cannot test membership in ") + container.type_name());
}

Value binary(BinaryOp op, const Value& a, const Value& b, const Location& loc) {
  switch (op) {
    case BinaryOp::Concat: {
      std::string joined = to_string(a, loc) + to_string(b, loc);
      check_string(joined, loc);
      return joined;
    }
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: {
      int c = compare(a, b, loc);
      return c < 0;
    }
    case BinaryOp::Le: {
      int c = compare(a, b, loc);
      return c <= 0;
    }
    case BinaryOp::Gt: {
      int c = compare(a, b, loc);
      return c > 0 && c != 2;
    }
    case BinaryOp::Ge: {
      int c = compare(a, b, loc);
      return c >= 0 && c != 2;
    }
    case BinaryOp::In: return contains(b, a, loc);
    case BinaryOp::NotIn: return !contains(b, a, loc);
    default: return arith(op, a, b, loc);
  }
}

// ---- the renderer ----

class Renderer {
 public:
  Renderer(const Dict& data, const Environment* env) : data_(data), env_(env) {}

  std::string run(const TemplateAst& ast) {
    current_ = &ast;
    frames_.emplace_back();
    std::string out;
    render_nodes(ast.body, out);
    return out;
  }

 private:
  // ---- statements ----

  // Counts one level of the renderer's recursion while alive.
  class Depth {
   public:
    Depth(Renderer& r, const Location& at) : r_(r) {
      r_.step(at);
      if (r_.depth_ >= kMaxRenderDepth) {
        fail(at, "template nesting too deep (more than " + std::to_string(kMaxRenderDepth) +
                     " levels of blocks, expressions, includes and macro calls)");
      }
      ++r_.depth_;
    }
    ~Depth() { --r_.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;

   private:
    Renderer& r_;
  };

  void step(const Location& at) {
    if (++steps_ > kMaxRenderSteps)
      fail(at, "template rendering takes too long (more than " + std::to_string(kMaxRenderSteps) + " steps)");
  }

  void render_nodes(const NodeList& nodes, std::string& out) {
    if (nodes.empty()) return;
    Depth depth(*this, nodes.front()->loc);
    for (const NodePtr& node : nodes) {
      step(node->loc);
      if (out.size() > kMaxStringBytes) check_string(out, node->loc);
      switch (node->kind) {
        case Node::Kind::Text: out += static_cast<const TextNode&>(*node).text; break;
        case Node::Kind::Output: {
          const auto& n = static_cast<const OutputNode&>(*node);
          Value v = eval(*n.expr);
          if (!to_text(v, out)) fail(n.loc, std::string("cannot print ") + v.type_name());
          break;
        }
        case Node::Kind::If: render_if(static_cast<const IfNode&>(*node), out); break;
        case Node::Kind::For: render_for(static_cast<const ForNode&>(*node), out); break;
        case Node::Kind::Set: {
          const auto& n = static_cast<const SetNode&>(*node);
          Value v = eval(*n.expr);
          frames_.back().insert_or_assign(n.name, std::move(v));
          break;
        }
        case Node::Kind::Include: render_include(static_cast<const IncludeNode&>(*node), out); break;
      }
    }
  }

  void render_if(const IfNode& node, std::string& out) {
    for (const IfNode::Branch& branch : node.branches) {
      if (eval(*branch.condition).truthy()) {
        render_nodes(branch.body, out);
        return;
      }
    }
    render_nodes(node.else_body, out);
  }

  // The body runs in a fresh scope per iteration: its {% set %}s do not leak.
  void render_for(const ForNode& node, std::string& out) {
    Value seq = eval(*node.iterable);
    List storage;
    const List* items = &storage;
    if (seq.is_list()) {
      items = &seq.as_list();
    } else if (seq.is_dict()) {
      for (const auto& entry : seq.as_dict()) storage.emplace_back(entry.first);
    } else if (seq.is_string()) {
      for (char c : seq.as_string()) storage.emplace_back(std::string(1, c));
    } else {
      fail(node.iterable->loc, std::string("cannot iterate over ") + seq.type_name());
    }
    if (items->empty()) {
      render_nodes(node.else_body, out);
      return;
    }
    auto length = static_cast<int64_t>(items->size());
    frames_.emplace_back();
    for (int64_t i = 0; i < length; ++i) {
      step(node.loc);
      Dict& frame = frames_.back();
      frame.clear();
      frame.insert_or_assign(node.var, (*items)[static_cast<std::size_t>(i)]);
      frame.insert_or_assign("loop", Dict{{"index", i + 1},
                                          {"index0", i},
                                          {"revindex", length - i},
                                          {"revindex0", length - i - 1},
                                          {"first", i == 0},
                                          {"last", i == length - 1},
                                          {"length", length}});
      render_nodes(node.body, out);
    }
    frames_.pop_back();
  }

  // The included template sees every variable visible here; its own
  // {% set %}s stay inside it.
  void render_include(const IncludeNode& node, std::string& out) {
    Value name = eval(*node.name);
    if (!name.is_string()) fail(node.loc, std::string("include expects a template name string, got ") + name.type_name());
    if (env_ == nullptr) fail(node.loc, "template " + quoted(name.as_string()) + " not found (no Environment)");
    if (!env_->contains(name.as_string())) fail(node.loc, "template " + quoted(name.as_string()) + " not found");
    if (include_depth_ >= kMaxIncludeDepth) {
      fail(node.loc, "include recursion too deep (more than " + std::to_string(kMaxIncludeDepth) + " levels)");
    }
    const TemplateAst* caller = current_;
    current_ = &TemplateAccess::ast(env_->get(name.as_string()));
    ++include_depth_;
    frames_.emplace_back();
    render_nodes(current_->body, out);
    frames_.pop_back();
    --include_depth_;
    current_ = caller;
  }

  // ---- expressions ----

  const Value* find_var(std::string_view name) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return &found->second;
    }
    auto found = data_.find(name);
    return found == data_.end() ? nullptr : &found->second;
  }

  // Variables, attributes and indexing. With soft set, a missing name, key or
  // attribute, or an index out of range, gives nullopt instead of an error
  // (for |default and `is defined`).
  std::optional<Value> access(const Expr& e, bool soft) {
    Depth depth(*this, e.loc);
    switch (e.kind) {
      case Expr::Kind::Var: {
        const auto& var = static_cast<const VarExpr&>(e);
        if (const Value* v = find_var(var.name)) return *v;
        if (soft) return std::nullopt;
        fail(e.loc, "undefined variable " + quoted(var.name));
      }
      case Expr::Kind::Attr: {
        const auto& attr = static_cast<const AttrExpr&>(e);
        std::optional<Value> object = access(*attr.object, soft);
        if (!object) return std::nullopt;
        if (!object->is_dict()) {
          if (soft) return std::nullopt;
          fail(e.loc, "cannot access attribute " + quoted(attr.name) + " of " + object->type_name());
        }
        if (const Value* v = object->find(attr.name)) return *v;
        if (soft) return std::nullopt;
        fail(e.loc, "undefined attribute " + quoted(attr.name));
      }
      case Expr::Kind::Index: {
        const auto& index = static_cast<const IndexExpr&>(e);
        std::optional<Value> object = access(*index.object, soft);
        if (!object) return std::nullopt;
        return subscript(*object, eval(*index.index), e.loc, soft);
      }
      default:
        return eval(e);
    }
  }

  static std::optional<Value> subscript(const Value& object, const Value& index, const Location& loc, bool soft) {
    if (object.is_dict()) {
      if (!index.is_string()) fail(loc, std::string("dict key must be string, got ") + index.type_name());
      if (const Value* v = object.find(index.as_string())) return *v;
      if (soft) return std::nullopt;
      fail(loc, "undefined key " + quoted(index.as_string()));
    }
    if (!object.is_list() && !object.is_string()) fail(loc, std::string("cannot index ") + object.type_name());
    if (!index.is_int()) fail(loc, std::string(object.type_name()) + " index must be int, got " + index.type_name());
    int64_t size = *length_of(object);
    int64_t i = index.as_int() < 0 ? index.as_int() + size : index.as_int();
    if (i < 0 || i >= size) {
      if (soft) return std::nullopt;
      fail(loc, "index " + std::to_string(index.as_int()) + " out of range for " + object.type_name() + " of length " +
                    std::to_string(size));
    }
    auto at = static_cast<std::size_t>(i);
    if (object.is_list()) return object.as_list()[at];
    return std::string(1, object.as_string()[at]);
  }

  Value eval(const Expr& e) {
    Depth depth(*this, e.loc);
    switch (e.kind) {
      case Expr::Kind::Literal: return static_cast<const LiteralExpr&>(e).value;
      case Expr::Kind::List: {
        List items;
        for (const ExprPtr& item : static_cast<const ListExpr&>(e).items) items.push_back(eval(*item));
        return items;
      }
      case Expr::Kind::Var:
      case Expr::Kind::Attr:
      case Expr::Kind::Index: return *access(e, false);
      case Expr::Kind::Unary: return eval_unary(static_cast<const UnaryExpr&>(e));
      case Expr::Kind::Binary: {
        const auto& b = static_cast<const BinaryExpr&>(e);
        Value left = eval(*b.left);
        if (b.op == BinaryOp::And) return left.truthy() ? eval(*b.right) : left;
        if (b.op == BinaryOp::Or) return left.truthy() ? left : eval(*b.right);
        return binary(b.op, left, eval(*b.right), e.loc);
      }
      case Expr::Kind::Cond: {
        const auto& c = static_cast<const CondExpr&>(e);
        return eval(*c.condition).truthy() ? eval(*c.then_expr) : eval(*c.else_expr);
      }
      case Expr::Kind::Call: return eval_call(static_cast<const CallExpr&>(e));
      case Expr::Kind::Filter: return eval_filter(static_cast<const FilterExpr&>(e));
      case Expr::Kind::Test: {
        const auto& t = static_cast<const TestExpr&>(e);
        std::optional<Value> v = access(*t.operand, true);
        bool result = t.test == Test::Defined ? v.has_value()
                      : t.test == Test::Undefined ? !v.has_value()
                                                  : v.has_value() && v->is_none();
        return result != t.negated;
      }
    }
    fail(e.loc, "internal error: unknown expression");
  }

  Value eval_unary(const UnaryExpr& e) {
    Value v = eval(*e.operand);
    if (e.op == UnaryOp::Not) return !v.truthy();
    if (v.is_double()) return e.op == UnaryOp::Neg ? -v.as_double() : v.as_double();
    if (!v.is_int()) fail(e.loc, std::string("cannot apply unary '") + (e.op == UnaryOp::Neg ? "-" : "+") + "' to " + v.type_name());
    if (e.op == UnaryOp::Pos) return v;
    if (v.as_int() == std::numeric_limits<int64_t>::min()) fail(e.loc, "integer overflow");
    return -v.as_int();
  }

  std::vector<Value> eval_args(const std::vector<ExprPtr>& args) {
    std::vector<Value> values;
    values.reserve(args.size());
    for (const ExprPtr& arg : args) values.push_back(eval(*arg));
    return values;
  }

  Value eval_call(const CallExpr& call) {
    auto macro = current_->macros.find(call.name);
    if (macro != current_->macros.end()) return call_macro(macro->second, call);
    std::size_t given = call.args.size();
    auto check_arity = [&](int min, int max) {
      if (given < static_cast<std::size_t>(min) || (max >= 0 && given > static_cast<std::size_t>(max))) {
        fail(call.loc, arity_message("function", call.name, min, max, given));
      }
    };
    if (call.name == "range") {
      check_arity(1, 3);
      return make_range(eval_args(call.args), call.loc);
    }
    if (call.name == "len") {
      check_arity(1, 1);
      Value v = eval(*call.args[0]);
      if (auto n = length_of(v)) return *n;
      fail(call.loc, std::string(v.type_name()) + " has no length");
    }
    if (call.name == "min" || call.name == "max") {
      check_arity(1, -1);
      return min_max(call.name == "min", eval_args(call.args), call);
    }
    if (find_var(call.name) != nullptr) fail(call.loc, quoted(call.name) + " is not a function");
    fail(call.loc, "undefined function " + quoted(call.name));
  }

  static Value make_range(const std::vector<Value>& args, const Location& loc) {
    for (const Value& a : args) {
      if (!a.is_int()) fail(loc, std::string("function 'range' expects int arguments, got ") + a.type_name());
    }
    int64_t start = args.size() == 1 ? 0 : args[0].as_int();
    int64_t stop = args.size() == 1 ? args[0].as_int() : args[1].as_int();
    int64_t step = args.size() == 3 ? args[2].as_int() : 1;
    if (step == 0) fail(loc, "range step must not be zero");
    // Item count, in unsigned arithmetic so that no difference overflows.
    uint64_t count = 0;
    if (step > 0 && start < stop) {
      count = (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) / static_cast<uint64_t>(step) + 1;
    } else if (step < 0 && start > stop) {
      count = (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) / (0 - static_cast<uint64_t>(step)) + 1;
    }
    if (count > kMaxRangeItems) {
      fail(loc, "range of " + std::to_string(count) + " items is too large (limit " + std::to_string(kMaxRangeItems) + ")");
    }
    List items;
    items.reserve(static_cast<std::size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      items.emplace_back(static_cast<int64_t>(static_cast<uint64_t>(start) + i * static_cast<uint64_t>(step)));
    }
    return items;
  }

  static Value min_max(bool is_min, std::vector<Value> args, const CallExpr& call) {
    if (args.size() == 1) {
      if (!args[0].is_list()) {
        fail(call.loc, "function " + quoted(call.name) + " expects a list or at least 2 arguments, got " +
                           args[0].type_name());
      }
      List items = args[0].as_list();
      if (items.empty()) fail(call.loc, "function " + quoted(call.name) + " got an empty list");
      args = std::move(items);
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < args.size(); ++i) {
      int c = compare(args[i], args[best], call.loc);
      if (c != 2 && (is_min ? c < 0 : c > 0)) best = i;
    }
    return args[best];
  }

  // A macro sees its parameters and the global data, not the caller's locals.
  Value call_macro(const Macro& macro, const CallExpr& call) {
    std::size_t given = call.args.size();
    auto required = static_cast<std::size_t>(std::count(macro.defaults.begin(), macro.defaults.end(), nullptr));
    if (given < required || given > macro.params.size()) {
      fail(call.loc, arity_message("macro", macro.name, static_cast<int>(required), static_cast<int>(macro.params.size()),
                                   given));
    }
    if (macro_depth_ >= kMaxMacroDepth) {
      fail(call.loc, "macro recursion too deep (more than " + std::to_string(kMaxMacroDepth) + " levels)");
    }
    std::vector<Value> values = eval_args(call.args);
    std::vector<Dict> caller_frames;
    caller_frames.swap(frames_);
    frames_.emplace_back();
    for (std::size_t i = 0; i < macro.params.size(); ++i) {
      Value v = i < given ? std::move(values[i]) : eval(*macro.defaults[i]);
      frames_.back().insert_or_assign(macro.params[i], std::move(v));
    }
    ++macro_depth_;
    std::string out;
    render_nodes(macro.body, out);
    --macro_depth_;
    frames_.swap(caller_frames);
    return out;
  }

  Value eval_filter(const FilterExpr& f) {
    if (f.filter == Filter::Default) {
      std::optional<Value> v = access(*f.input, true);
      return v ? std::move(*v) : eval(*f.args[0]);
    }
    Value v = eval(*f.input);
    switch (f.filter) {
      case Filter::Length:
        if (auto n = length_of(v)) return *n;
        fail(f.loc, std::string(v.type_name()) + " has no length");
      case Filter::Upper:
      case Filter::Lower: {
        const char* name = f.filter == Filter::Upper ? "upper" : "lower";
        if (!v.is_string()) fail(f.loc, std::string("filter '") + name + "' expects a string, got " + v.type_name());
        std::string s = v.as_string();
        for (char& c : s) {
          if (f.filter == Filter::Upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
          if (f.filter == Filter::Lower && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
        return s;
      }
      case Filter::Join: {
        if (!v.is_list()) fail(f.loc, std::string("filter 'join' expects a list, got ") + v.type_name());
        std::string separator;
        if (!f.args.empty()) {
          Value sep = eval(*f.args[0]);
          if (!sep.is_string()) fail(f.loc, std::string("filter 'join' expects a string separator, got ") + sep.type_name());
          separator = sep.as_string();
        }
        std::string out;
        bool first = true;
        for (const Value& item : v.as_list()) {
          if (!first) out += separator;
          first = false;
          out += to_string(item, f.loc);
          check_string(out, f.loc);
        }
        return out;
      }
      case Filter::Int: return to_int(v, f.loc);
      case Filter::String: return to_string(v, f.loc);
      default: break;
    }
    fail(f.loc, "internal error: unknown filter");
  }

  // |int: truncates doubles; parses strings ("12", " -3 ", "2.5"); errors on
  // anything that is not a number.
  static Value to_int(const Value& v, const Location& loc) {
    if (v.is_int()) return v;
    if (v.is_bool()) return int64_t{v.as_bool() ? 1 : 0};
    double d = 0;
    if (v.is_double()) {
      d = v.as_double();
    } else if (v.is_string()) {
      const std::string& s = v.as_string();
      const char* begin = s.c_str();
      char* end = nullptr;
      errno = 0;
      long long i = std::strtoll(begin, &end, 10);
      auto rest_blank = [&](const char* p) {
        while (*p == ' ' || *p == '\t' || *p == '\n') ++p;
        return *p == '\0';
      };
      if (end != begin && rest_blank(end) && errno == 0) return static_cast<int64_t>(i);
      d = std::strtod(begin, &end);
      if (end == begin || !rest_blank(end) || s.empty()) fail(loc, "cannot convert " + v.repr() + " to int");
    } else {
      fail(loc, std::string("cannot convert ") + v.type_name() + " to int");
    }
    if (!(d > -9223372036854775809.0 && d < 9223372036854775808.0)) {  // also rejects nan
      fail(loc, "cannot convert " + format_double(d) + " to int");
    }
    return static_cast<int64_t>(std::trunc(d));
  }

  const Dict& data_;
  const Environment* env_;
  std::vector<Dict> frames_;  // local scopes, innermost last; globals are data_
  const TemplateAst* current_ = nullptr;
  int include_depth_ = 0;
  int macro_depth_ = 0;
  int depth_ = 0;  // see kMaxRenderDepth
  std::int64_t steps_ = 0;  // see kMaxRenderSteps
};

}  // namespace

std::string render(const TemplateAst& ast, const Dict& data, const Environment* env) {
  return Renderer(data, env).run(ast);
}

}  // namespace lntune::tmpl::detail
