// lntune::tmpl — tokens produced by the lexer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lntune::tmpl::detail {

enum class TokenKind {
  Text,       // literal template text, whitespace control already applied
  ExprBegin,  // {{  {{-
  ExprEnd,    // }}  -}}
  StmtBegin,  // {%  {%-  {%+
  StmtEnd,    // %}  -%}  +%}
  Name,       // identifiers and keywords (and, or, not, in, is, if, else, true, ...)
  Int,
  Float,
  String,     // value holds the unescaped contents
  Plus, Minus, Star, Slash, SlashSlash, Percent, Tilde,
  Eq, Ne, Lt, Le, Gt, Ge, Assign,
  LParen, RParen, LBracket, RBracket, Comma, Dot, Pipe,
  End,        // end of the source
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;  // the token as written in the source (Text: the kept text)
  std::size_t offset = 0; // byte offset of the token in the source
  std::string value;      // String: the unescaped literal

  bool is_name(std::string_view name) const { return kind == TokenKind::Name && text == name; }
};

}  // namespace lntune::tmpl::detail
