// lntune::tmpl — the syntax tree of a parsed template. Built once by the
// parser, then only read (by any number of renderers at once).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "generator/engine/error.hpp"
#include "generator/engine/value.hpp"

namespace lntune::tmpl::detail {

// ---- expressions -----------------------------------------------------------

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Concat, Eq, Ne, Lt, Le, Gt, Ge, In, NotIn, And, Or };
enum class UnaryOp { Neg, Pos, Not };
enum class Filter { Length, Upper, Lower, Join, Default, Int, String };
enum class Test { Defined, Undefined, None };

struct Expr {
  enum class Kind { Literal, List, Var, Attr, Index, Unary, Binary, Cond, Call, Filter, Test };
  Expr(Kind k, Location l) : kind(k), loc(std::move(l)) {}
  virtual ~Expr() = default;
  Kind kind;
  Location loc;  // the offending token for errors raised by this node
};
using ExprPtr = std::unique_ptr<Expr>;

struct LiteralExpr : Expr {
  LiteralExpr(Location l, Value v) : Expr(Kind::Literal, std::move(l)), value(std::move(v)) {}
  Value value;
};

struct ListExpr : Expr {
  explicit ListExpr(Location l) : Expr(Kind::List, std::move(l)) {}
  std::vector<ExprPtr> items;
};

struct VarExpr : Expr {
  VarExpr(Location l, std::string n) : Expr(Kind::Var, std::move(l)), name(std::move(n)) {}
  std::string name;
};

struct AttrExpr : Expr {  // object.name (loc: the name)
  AttrExpr(Location l, ExprPtr o, std::string n)
      : Expr(Kind::Attr, std::move(l)), object(std::move(o)), name(std::move(n)) {}
  ExprPtr object;
  std::string name;
};

struct IndexExpr : Expr {  // object[index] (loc: the '[')
  IndexExpr(Location l, ExprPtr o, ExprPtr i)
      : Expr(Kind::Index, std::move(l)), object(std::move(o)), index(std::move(i)) {}
  ExprPtr object;
  ExprPtr index;
};

struct UnaryExpr : Expr {
  UnaryExpr(Location l, UnaryOp o, ExprPtr e) : Expr(Kind::Unary, std::move(l)), op(o), operand(std::move(e)) {}
  UnaryOp op;
  ExprPtr operand;
};

struct BinaryExpr : Expr {  // loc: the operator
  BinaryExpr(Location l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(Kind::Binary, std::move(l)), op(o), left(std::move(a)), right(std::move(b)) {}
  BinaryOp op;
  ExprPtr left;
  ExprPtr right;
};

struct CondExpr : Expr {  // then_expr if condition else else_expr
  CondExpr(Location l, ExprPtr c, ExprPtr t, ExprPtr e)
      : Expr(Kind::Cond, std::move(l)), condition(std::move(c)), then_expr(std::move(t)), else_expr(std::move(e)) {}
  ExprPtr condition;
  ExprPtr then_expr;
  ExprPtr else_expr;
};

struct CallExpr : Expr {  // name(args...): a builtin function or a macro
  CallExpr(Location l, std::string n) : Expr(Kind::Call, std::move(l)), name(std::move(n)) {}
  std::string name;
  std::vector<ExprPtr> args;
};

struct FilterExpr : Expr {  // input|filter(args...) (loc: the filter name)
  FilterExpr(Location l, Filter f, ExprPtr in) : Expr(Kind::Filter, std::move(l)), filter(f), input(std::move(in)) {}
  Filter filter;
  ExprPtr input;
  std::vector<ExprPtr> args;
};

struct TestExpr : Expr {  // operand is [not] test
  TestExpr(Location l, Test t, bool neg, ExprPtr e)
      : Expr(Kind::Test, std::move(l)), test(t), negated(neg), operand(std::move(e)) {}
  Test test;
  bool negated;
  ExprPtr operand;
};

// ---- statements ------------------------------------------------------------

struct Node {
  enum class Kind { Text, Output, If, For, Set, Include };
  Node(Kind k, Location l) : kind(k), loc(std::move(l)) {}
  virtual ~Node() = default;
  Kind kind;
  Location loc;
};
using NodePtr = std::unique_ptr<Node>;
using NodeList = std::vector<NodePtr>;

struct TextNode : Node {
  TextNode(Location l, std::string t) : Node(Kind::Text, std::move(l)), text(std::move(t)) {}
  std::string text;
};

struct OutputNode : Node {  // {{ expr }} (loc: the start of expr)
  OutputNode(Location l, ExprPtr e) : Node(Kind::Output, std::move(l)), expr(std::move(e)) {}
  ExprPtr expr;
};

struct IfNode : Node {
  explicit IfNode(Location l) : Node(Kind::If, std::move(l)) {}
  struct Branch {
    ExprPtr condition;
    NodeList body;
  };
  std::vector<Branch> branches;  // if, then each elif
  NodeList else_body;
};

struct ForNode : Node {
  explicit ForNode(Location l) : Node(Kind::For, std::move(l)) {}
  std::string var;
  ExprPtr iterable;
  NodeList body;
  NodeList else_body;  // rendered when the sequence is empty
};

struct SetNode : Node {
  SetNode(Location l, std::string n, ExprPtr e) : Node(Kind::Set, std::move(l)), name(std::move(n)), expr(std::move(e)) {}
  std::string name;
  ExprPtr expr;
};

struct IncludeNode : Node {
  IncludeNode(Location l, ExprPtr e) : Node(Kind::Include, std::move(l)), name(std::move(e)) {}
  ExprPtr name;
};

struct Macro {
  std::string name;
  Location loc;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // one per param; null where there is none
  NodeList body;
};

struct TemplateAst {
  std::string name;
  NodeList body;
  std::map<std::string, Macro, std::less<>> macros;
};

}  // namespace lntune::tmpl::detail

namespace lntune::tmpl::detail {

// "<what> '<name>' expects <...>, got <given>", e.g.
// "function 'range' expects 1 to 3 arguments, got 0". max < 0: no upper bound.
inline std::string arity_message(const char* what, std::string_view name, int min, int max, std::size_t given) {
  auto args = [](int n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); };
  std::string expects;
  if (min == max) {
    expects = min == 0 ? "no arguments" : args(min);
  } else if (max < 0) {
    expects = "at least " + args(min);
  } else if (min == 0) {
    expects = "at most " + args(max);
  } else {
    expects = std::to_string(min) + " to " + args(max);
  }
  return std::string(what) + " '" + std::string(name) + "' expects " + expects + ", got " + std::to_string(given);
}

}  // namespace lntune::tmpl::detail
