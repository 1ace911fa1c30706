#include "generator/engine/parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "generator/engine/lexer.hpp"

namespace lntune::tmpl::detail {

namespace {

constexpr int kMaxNesting = 200;  // blocks and expression levels, against stack overflow

struct FilterInfo {
  std::string_view name;
  Filter filter;
  int min_args;
  int max_args;
};
constexpr FilterInfo kFilters[] = {
    {"length", Filter::Length, 0, 0}, {"upper", Filter::Upper, 0, 0},     {"lower", Filter::Lower, 0, 0},
    {"join", Filter::Join, 0, 1},     {"default", Filter::Default, 1, 1}, {"int", Filter::Int, 0, 0},
    {"string", Filter::String, 0, 0},
};

bool is_reserved(std::string_view name) {
  static constexpr std::string_view kReserved[] = {"true", "false", "True", "False", "none", "None", "and",
                                                   "or",   "not",   "in",   "is",    "if",   "else"};
  return std::find(std::begin(kReserved), std::end(kReserved), name) != std::end(kReserved);
}

bool is_block_keyword(std::string_view name) {
  static constexpr std::string_view kKeywords[] = {"elif", "else", "endif", "endfor", "endmacro"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

// An open block, for error messages.
struct Block {
  std::string_view name;  // "if", "for", "macro"
  Location open;          // its opening '{%'
};

class Parser {
 public:
  Parser(std::string name, std::string_view source)
      : map_(name, source), tokens_(tokenize(source, map_)), ast_(std::make_shared<TemplateAst>()) {
    ast_->name = std::move(name);
  }

  std::shared_ptr<const TemplateAst> run() {
    std::string_view terminator;
    ast_->body = parse_body(nullptr, {}, terminator);
    return ast_;
  }

 private:
  // ---- token helpers ----

  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  Location loc(const Token& t) const { return map_.locate(t.offset); }

  [[noreturn]] void fail(const Token& t, std::string message) const {
    throw TemplateError(loc(t), std::move(message));
  }

  static std::string describe(const Token& t) {
    if (t.kind == TokenKind::End) return "end of template";
    if (t.kind == TokenKind::Text) return "text";
    return "'" + std::string(t.text) + "'";
  }

  void expect(TokenKind kind, std::string_view spelling) {
    if (peek().kind != kind) fail(peek(), "expected '" + std::string(spelling) + "', got " + describe(peek()));
    next();
  }
  void expect_stmt_end() { expect(TokenKind::StmtEnd, "%}"); }

  const Token& expect_identifier(const char* what) {
    const Token& t = peek();
    if (t.kind != TokenKind::Name || is_reserved(t.text)) fail(t, std::string("expected ") + what + ", got " + describe(t));
    return next();
  }

  // Bounds the depth of the tree, and so the recursion of the parser, the
  // renderer and the tree's destructor. Every nested block, parenthesis,
  // operand of a chain (a + b + c), filter or subscript counts one level
  // until the function that entered it returns.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) {}
    Nesting(Parser& p, const Token& at) : p_(p) { enter(at); }
    ~Nesting() { p_.depth_ -= entered_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

    void enter(const Token& at) {
      ++entered_;
      if (++p_.depth_ > kMaxNesting) p_.fail(at, "template nested too deeply");
    }

   private:
    Parser& p_;
    int entered_ = 0;
  };

  // A name that set or for may bind: not a keyword, and not 'loop'.
  const Token& expect_assignable(const char* what) {
    if (peek().is_name("loop")) fail(peek(), "cannot assign to 'loop'");
    return expect_identifier(what);
  }

  // ---- statements ----

  // Parses nodes up to a block tag named in terminators (returned in
  // terminator, with the position just after its name) or the end of the
  // source (only at the top level, block == nullptr).
  NodeList parse_body(const Block* block, std::initializer_list<std::string_view> terminators,
                      std::string_view& terminator) {
    NodeList body;
    for (;;) {
      const Token& t = peek();
      switch (t.kind) {
        case TokenKind::End:
          if (block != nullptr) {
            std::string end = "end" + std::string(block->name);
            throw TemplateError(block->open, "unclosed '" + std::string(block->name) + "' block (expected '" + end + "')");
          }
          return body;
        case TokenKind::Text:
          body.push_back(std::make_unique<TextNode>(loc(t), std::string(t.text)));
          next();
          break;
        case TokenKind::ExprBegin: {
          next();
          Location at = loc(peek());
          ExprPtr e = parse_expression();
          expect(TokenKind::ExprEnd, "}}");
          body.push_back(std::make_unique<OutputNode>(std::move(at), std::move(e)));
          break;
        }
        case TokenKind::StmtBegin: {
          const Token& begin = next();
          const Token& keyword = peek();
          if (keyword.kind != TokenKind::Name) fail(keyword, "expected tag name, got " + describe(keyword));
          if (std::find(terminators.begin(), terminators.end(), keyword.text) != terminators.end()) {
            terminator = keyword.text;
            next();
            return body;
          }
          if (NodePtr node = parse_statement(begin, keyword, block)) body.push_back(std::move(node));
          break;
        }
        default:
          fail(t, "unexpected " + describe(t));
      }
    }
  }

  // Parses the tag whose name is keyword; null for a macro definition, which
  // is stored in the template's macro table instead.
  NodePtr parse_statement(const Token& begin, const Token& keyword, const Block* block) {
    std::string_view name = keyword.text;
    if (name == "if") return parse_if(begin);
    if (name == "for") return parse_for(begin);
    if (name == "set") return parse_set(begin);
    if (name == "include") return parse_include();
    if (name == "macro") {
      if (block != nullptr) fail(keyword, "macros must be defined at the top level");
      parse_macro(begin);
      return nullptr;
    }
    if (is_block_keyword(name)) {
      if (block == nullptr) fail(keyword, "unexpected '" + std::string(name) + "' outside of any block");
      fail(keyword, "unexpected '" + std::string(name) + "' in '" + std::string(block->name) + "' block (expected 'end" +
                        std::string(block->name) + "')");
    }
    fail(keyword, "unknown tag '" + std::string(name) + "'");
  }

  NodePtr parse_if(const Token& begin) {
    Nesting nesting(*this, begin);
    Block block{"if", loc(begin)};
    auto node = std::make_unique<IfNode>(block.open);
    next();  // if
    ExprPtr condition = parse_expression();
    expect_stmt_end();
    std::string_view terminator;
    for (;;) {
      NodeList body = parse_body(&block, {"elif", "else", "endif"}, terminator);
      node->branches.push_back({std::move(condition), std::move(body)});
      if (terminator != "elif") break;
      condition = parse_expression();
      expect_stmt_end();
    }
    if (terminator == "else") {
      expect_stmt_end();
      node->else_body = parse_body(&block, {"endif"}, terminator);
    }
    expect_stmt_end();
    return node;
  }

  NodePtr parse_for(const Token& begin) {
    Nesting nesting(*this, begin);
    Block block{"for", loc(begin)};
    auto node = std::make_unique<ForNode>(block.open);
    next();  // for
    node->var = std::string(expect_assignable("loop variable name").text);
    if (!peek().is_name("in")) fail(peek(), "expected 'in', got " + describe(peek()));
    next();
    node->iterable = parse_or();
    expect_stmt_end();
    std::string_view terminator;
    node->body = parse_body(&block, {"else", "endfor"}, terminator);
    if (terminator == "else") {
      expect_stmt_end();
      node->else_body = parse_body(&block, {"endfor"}, terminator);
    }
    expect_stmt_end();
    return node;
  }

  NodePtr parse_set(const Token& begin) {
    next();  // set
    std::string name(expect_assignable("variable name").text);
    expect(TokenKind::Assign, "=");
    ExprPtr value = parse_expression();
    expect_stmt_end();
    return std::make_unique<SetNode>(loc(begin), std::move(name), std::move(value));
  }

  NodePtr parse_include() {
    next();  // include
    Location at = loc(peek());
    ExprPtr name = parse_expression();
    expect_stmt_end();
    return std::make_unique<IncludeNode>(std::move(at), std::move(name));
  }

  void parse_macro(const Token& begin) {
    Nesting nesting(*this, begin);
    Block block{"macro", loc(begin)};
    next();  // macro
    const Token& name_token = expect_identifier("macro name");
    Macro macro;
    macro.name = std::string(name_token.text);
    macro.loc = loc(name_token);
    expect(TokenKind::LParen, "(");
    while (peek().kind != TokenKind::RParen) {
      const Token& param = expect_identifier("parameter name");
      if (std::find(macro.params.begin(), macro.params.end(), param.text) != macro.params.end()) {
        fail(param, "duplicate parameter '" + std::string(param.text) + "'");
      }
      macro.params.emplace_back(param.text);
      if (peek().kind == TokenKind::Assign) {
        next();
        macro.defaults.push_back(parse_expression());
      } else if (!macro.defaults.empty() && macro.defaults.back() != nullptr) {
        fail(param, "parameter '" + std::string(param.text) + "' without a default follows one with a default");
      } else {
        macro.defaults.push_back(nullptr);
      }
      if (peek().kind != TokenKind::Comma) break;
      next();
    }
    expect(TokenKind::RParen, ")");
    expect_stmt_end();
    std::string_view terminator;
    macro.body = parse_body(&block, {"endmacro"}, terminator);
    expect_stmt_end();
    if (ast_->macros.count(macro.name) != 0) fail(name_token, "macro '" + macro.name + "' is already defined");
    std::string key = macro.name;
    ast_->macros.emplace(std::move(key), std::move(macro));
  }

  // ---- expressions, loosest binding first ----

  ExprPtr parse_expression() {
    Nesting nesting(*this, peek());
    ExprPtr e = parse_or();
    if (!peek().is_name("if")) return e;
    Location at = loc(next());
    ExprPtr condition = parse_or();
    if (!peek().is_name("else")) fail(peek(), "expected 'else', got " + describe(peek()));
    next();
    ExprPtr otherwise = parse_expression();
    return std::make_unique<CondExpr>(std::move(at), std::move(condition), std::move(e), std::move(otherwise));
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    Nesting nesting(*this);
    while (peek().is_name("or")) {
      nesting.enter(peek());
      Location at = loc(next());
      left = std::make_unique<BinaryExpr>(std::move(at), BinaryOp::Or, std::move(left), parse_and());
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    Nesting nesting(*this);
    while (peek().is_name("and")) {
      nesting.enter(peek());
      Location at = loc(next());
      left = std::make_unique<BinaryExpr>(std::move(at), BinaryOp::And, std::move(left), parse_not());
    }
    return left;
  }

  ExprPtr parse_not() {
    if (!peek().is_name("not")) return parse_compare();
    Nesting nesting(*this, peek());
    Location at = loc(next());
    return std::make_unique<UnaryExpr>(std::move(at), UnaryOp::Not, parse_not());
  }

  // The comparison operator at the current token, with its length in tokens.
  bool compare_op(BinaryOp& op, int& length) const {
    length = 1;
    switch (peek().kind) {
      case TokenKind::Eq: op = BinaryOp::Eq; return true;
      case TokenKind::Ne: op = BinaryOp::Ne; return true;
      case TokenKind::Lt: op = BinaryOp::Lt; return true;
      case TokenKind::Le: op = BinaryOp::Le; return true;
      case TokenKind::Gt: op = BinaryOp::Gt; return true;
      case TokenKind::Ge: op = BinaryOp::Ge; return true;
      default: break;
    }
    if (peek().is_name("in")) {
      op = BinaryOp::In;
      return true;
    }
    if (peek().is_name("not") && peek(1).is_name("in")) {
      op = BinaryOp::NotIn;
      length = 2;
      return true;
    }
    return false;
  }

  ExprPtr parse_compare() {
    ExprPtr left = parse_math1();
    BinaryOp op{};
    int length = 0;
    if (!compare_op(op, length)) return left;
    Location at = loc(peek());
    for (int i = 0; i < length; ++i) next();
    ExprPtr right = parse_math1();
    if (compare_op(op, length)) fail(peek(), "chained comparisons are not supported");
    return std::make_unique<BinaryExpr>(std::move(at), op, std::move(left), std::move(right));
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    Nesting nesting(*this);
    while (peek().kind == TokenKind::Plus || peek().kind == TokenKind::Minus) {
      nesting.enter(peek());
      BinaryOp op = peek().kind == TokenKind::Plus ? BinaryOp::Add : BinaryOp::Sub;
      Location at = loc(next());
      left = std::make_unique<BinaryExpr>(std::move(at), op, std::move(left), parse_concat());
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    Nesting nesting(*this);
    while (peek().kind == TokenKind::Tilde) {
      nesting.enter(peek());
      Location at = loc(next());
      left = std::make_unique<BinaryExpr>(std::move(at), BinaryOp::Concat, std::move(left), parse_math2());
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_unary(true);
    Nesting nesting(*this);
    for (;;) {
      BinaryOp op{};
      switch (peek().kind) {
        case TokenKind::Star: op = BinaryOp::Mul; break;
        case TokenKind::Slash: op = BinaryOp::Div; break;
        case TokenKind::SlashSlash: op = BinaryOp::FloorDiv; break;
        case TokenKind::Percent: op = BinaryOp::Mod; break;
        default: return left;
      }
      nesting.enter(peek());
      Location at = loc(next());
      left = std::make_unique<BinaryExpr>(std::move(at), op, std::move(left), parse_unary(true));
    }
  }

  // As in Jinja, filters bind tighter than binary operators but looser than
  // unary minus: -x|abs is (-x)|abs.
  ExprPtr parse_unary(bool with_filters) {
    Nesting nesting(*this, peek());
    ExprPtr e;
    if (peek().kind == TokenKind::Minus || peek().kind == TokenKind::Plus) {
      UnaryOp op = peek().kind == TokenKind::Minus ? UnaryOp::Neg : UnaryOp::Pos;
      Location at = loc(next());
      e = std::make_unique<UnaryExpr>(std::move(at), op, parse_unary(false));
    } else {
      e = parse_postfix(parse_primary());
    }
    return with_filters ? parse_filters(std::move(e)) : std::move(e);
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Name: {
        if (t.text == "true" || t.text == "True") return literal(next(), true);
        if (t.text == "false" || t.text == "False") return literal(next(), false);
        if (t.text == "none" || t.text == "None") return literal(next(), Value());
        if (is_reserved(t.text)) break;
        next();
        if (peek().kind != TokenKind::LParen) return std::make_unique<VarExpr>(loc(t), std::string(t.text));
        auto call = std::make_unique<CallExpr>(loc(t), std::string(t.text));
        call->args = parse_args();
        return call;
      }
      case TokenKind::Int: {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
        if (ec != std::errc() || end != t.text.data() + t.text.size()) {
          fail(t, "integer literal " + std::string(t.text) + " is out of range");
        }
        return literal(next(), v);
      }
      case TokenKind::Float:
        return literal(next(), std::strtod(std::string(t.text).c_str(), nullptr));
      case TokenKind::String:
        return literal(next(), t.value);
      case TokenKind::LParen: {
        next();
        ExprPtr e = parse_expression();
        expect(TokenKind::RParen, ")");
        return e;
      }
      case TokenKind::LBracket: {
        auto list = std::make_unique<ListExpr>(loc(next()));
        while (peek().kind != TokenKind::RBracket) {
          list->items.push_back(parse_expression());
          if (peek().kind != TokenKind::Comma) break;
          next();
        }
        expect(TokenKind::RBracket, "]");
        return list;
      }
      default:
        break;
    }
    fail(t, "expected expression, got " + describe(t));
  }

  ExprPtr literal(const Token& t, Value v) { return std::make_unique<LiteralExpr>(loc(t), std::move(v)); }

  // '(' [expr {',' expr} [',']] ')'
  std::vector<ExprPtr> parse_args() {
    expect(TokenKind::LParen, "(");
    std::vector<ExprPtr> args;
    while (peek().kind != TokenKind::RParen) {
      args.push_back(parse_expression());
      if (peek().kind != TokenKind::Comma) break;
      next();
    }
    expect(TokenKind::RParen, ")");
    return args;
  }

  ExprPtr parse_postfix(ExprPtr e) {
    Nesting nesting(*this);
    for (;;) {
      const Token& t = peek();
      if (t.kind == TokenKind::Dot || t.kind == TokenKind::LBracket) nesting.enter(t);
      if (t.kind == TokenKind::Dot) {
        next();
        const Token& name = peek();
        if (name.kind != TokenKind::Name) fail(name, "expected attribute name, got " + describe(name));
        next();
        e = std::make_unique<AttrExpr>(loc(name), std::move(e), std::string(name.text));
      } else if (t.kind == TokenKind::LBracket) {
        Location at = loc(next());
        ExprPtr index = parse_expression();
        expect(TokenKind::RBracket, "]");
        e = std::make_unique<IndexExpr>(std::move(at), std::move(e), std::move(index));
      } else if (t.kind == TokenKind::LParen) {
        fail(t, "only functions and macros can be called, by name");
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_filters(ExprPtr e) {
    Nesting nesting(*this);
    for (;;) {
      if (peek().kind == TokenKind::Pipe || peek().is_name("is")) nesting.enter(peek());
      if (peek().kind == TokenKind::Pipe) {
        next();
        const Token& name = peek();
        if (name.kind != TokenKind::Name) fail(name, "expected filter name, got " + describe(name));
        auto info = std::find_if(std::begin(kFilters), std::end(kFilters),
                                 [&](const FilterInfo& f) { return f.name == name.text; });
        if (info == std::end(kFilters)) fail(name, "unknown filter '" + std::string(name.text) + "'");
        next();
        auto filter = std::make_unique<FilterExpr>(loc(name), info->filter, std::move(e));
        if (peek().kind == TokenKind::LParen) filter->args = parse_args();
        auto given = filter->args.size();
        if (given < static_cast<std::size_t>(info->min_args) || given > static_cast<std::size_t>(info->max_args)) {
          fail(name, arity_message("filter", info->name, info->min_args, info->max_args, given));
        }
        e = std::move(filter);
      } else if (peek().is_name("is")) {
        next();
        bool negated = peek().is_name("not");
        if (negated) next();
        const Token& name = peek();
        Test test{};
        if (name.is_name("defined")) {
          test = Test::Defined;
        } else if (name.is_name("undefined")) {
          test = Test::Undefined;
        } else if (name.is_name("none") || name.is_name("None")) {
          test = Test::None;
        } else {
          fail(name, name.kind == TokenKind::Name ? "unknown test '" + std::string(name.text) + "'"
                                                  : "expected test name, got " + describe(name));
        }
        next();
        e = std::make_unique<TestExpr>(loc(name), test, negated, std::move(e));
      } else {
        return e;
      }
    }
  }

  SourceMap map_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::shared_ptr<TemplateAst> ast_;
};

}  // namespace

std::shared_ptr<const TemplateAst> parse_template(std::string name, std::string_view source) {
  return Parser(std::move(name), source).run();
}

}  // namespace lntune::tmpl::detail
