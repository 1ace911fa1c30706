#include "generator/engine/lexer.hpp"

#include <algorithm>

namespace lntune::tmpl::detail {

SourceMap::SourceMap(std::string name, std::string_view source) : name_(std::move(name)) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') line_starts_.push_back(i + 1);
  }
}

Location SourceMap::locate(std::size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  auto line = static_cast<std::size_t>(it - line_starts_.begin());  // >= 1
  std::size_t column = offset - line_starts_[line - 1] + 1;
  return {name_, static_cast<int>(line), static_cast<int>(column)};
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(std::string_view source, const SourceMap& map) : src_(source), map_(map) {}

  std::vector<Token> run() {
    for (;;) {
      std::size_t open = find_opener(pos_);
      if (open == std::string_view::npos) {
        emit_text(pos_, src_.size(), '\0', '\0');
        break;
      }
      char type = src_[open + 1];
      char marker = open + 2 < src_.size() ? src_[open + 2] : '\0';
      if (marker != '-' && !(marker == '+' && type != '{')) marker = '\0';
      emit_text(pos_, open, type, marker);
      if (type == '#') {
        lex_comment(open);
      } else {
        lex_tag(open, type == '{', marker);
      }
    }
    emit(TokenKind::End, src_.size(), src_.size());
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(std::size_t offset, std::string message) const {
    throw TemplateError(map_.locate(offset), std::move(message));
  }

  Token& emit(TokenKind kind, std::size_t begin, std::size_t end) {
    Token t;
    t.kind = kind;
    t.text = src_.substr(begin, end - begin);
    t.offset = begin;
    out_.push_back(std::move(t));
    return out_.back();
  }

  std::size_t find_opener(std::size_t from) const {
    for (std::size_t i = src_.find('{', from); i != std::string_view::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string_view::npos;
  }

  // Emits the text [begin, end) that precedes a tag of the given type ('{',
  // '%', '#'; '\0' at the end of the source) after whitespace control.
  void emit_text(std::size_t begin, std::size_t end, char next_type, char next_marker) {
    std::size_t start = begin;
    if (strip_all_) {
      while (start < end && is_space(src_[start])) ++start;
    } else if (strip_newline_) {  // trim_blocks
      if (start < end && src_[start] == '\n') {
        ++start;
      } else if (end - start >= 2 && src_[start] == '\r' && src_[start + 1] == '\n') {
        start += 2;
      }
    }
    strip_all_ = strip_newline_ = false;

    if (next_marker == '-') {
      while (end > start && is_space(src_[end - 1])) --end;
    } else if ((next_type == '%' || next_type == '#') && next_marker != '+') {  // lstrip_blocks
      std::size_t j = end;
      while (j > start && (src_[j - 1] == ' ' || src_[j - 1] == '\t')) --j;
      if (j == 0 || src_[j - 1] == '\n') end = j;
    }
    if (end > start) emit(TokenKind::Text, start, end);
  }

  void lex_comment(std::size_t open) {
    std::size_t close = src_.find("#}", open + 2);
    if (close == std::string_view::npos) fail(open, "unterminated '{#' (expected '#}')");
    char marker = close > open + 2 ? src_[close - 1] : '\0';
    strip_all_ = marker == '-';
    strip_newline_ = marker != '+';
    pos_ = close + 2;
  }

  void lex_tag(std::size_t open, bool is_expr, char marker) {
    std::string_view closer = is_expr ? "}}" : "%}";
    std::string_view opener = is_expr ? "{{" : "{%";
    std::string unterminated =
        "unterminated '" + std::string(opener) + "' (expected '" + std::string(closer) + "')";
    if (src_.find(closer, open + 2) == std::string_view::npos) fail(open, unterminated);

    std::size_t p = open + 2 + (marker != '\0' ? 1 : 0);
    emit(is_expr ? TokenKind::ExprBegin : TokenKind::StmtBegin, open, p);
    for (;;) {
      while (p < src_.size() && is_space(src_[p])) ++p;
      if (p >= src_.size()) fail(open, unterminated);

      // A closing delimiter of either kind ends the tag; the parser checks
      // that it matches the opening one.
      char c = src_[p];
      char end_marker = '\0';
      std::size_t q = p;
      if ((c == '-' || c == '+') && q + 1 < src_.size()) {
        end_marker = c;
        ++q;
      }
      std::string_view two = src_.substr(q, 2);
      bool is_close = two == "}}" ? end_marker != '+' : two == "%}";
      if (is_close) {
        emit(two == "}}" ? TokenKind::ExprEnd : TokenKind::StmtEnd, p, q + 2);
        strip_all_ = end_marker == '-';
        strip_newline_ = two == "%}" && end_marker != '+';
        pos_ = q + 2;
        return;
      }

      if (is_name_start(c)) {
        std::size_t e = p;
        while (e < src_.size() && is_name_char(src_[e])) ++e;
        emit(TokenKind::Name, p, e);
        p = e;
      } else if (is_digit(c)) {
        p = lex_number(p);
      } else if (c == '"' || c == '\'') {
        p = lex_string(p);
      } else {
        p = lex_operator(p);
      }
    }
  }

  std::size_t lex_number(std::size_t p) {
    std::size_t e = p;
    bool is_float = false;
    while (e < src_.size() && is_digit(src_[e])) ++e;
    if (e + 1 < src_.size() && src_[e] == '.' && is_digit(src_[e + 1])) {
      is_float = true;
      ++e;
      while (e < src_.size() && is_digit(src_[e])) ++e;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      std::size_t x = e + 1;
      if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
      if (x < src_.size() && is_digit(src_[x])) {
        is_float = true;
        e = x;
        while (e < src_.size() && is_digit(src_[e])) ++e;
      }
    }
    emit(is_float ? TokenKind::Float : TokenKind::Int, p, e);
    return e;
  }

  std::size_t lex_string(std::size_t p) {
    char quote = src_[p];
    std::string value;
    std::size_t e = p + 1;
    for (;;) {
      if (e >= src_.size()) fail(p, "unterminated string literal");
      char c = src_[e];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++e;
        continue;
      }
      if (e + 1 >= src_.size()) fail(p, "unterminated string literal");
      switch (src_[e + 1]) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        default: fail(e, "unknown escape sequence '\\" + std::string(1, src_[e + 1]) + "'");
      }
      e += 2;
    }
    emit(TokenKind::String, p, e + 1).value = std::move(value);
    return e + 1;
  }

  std::size_t lex_operator(std::size_t p) {
    struct Op {
      std::string_view text;
      TokenKind kind;
    };
    static constexpr Op kOps[] = {
        {"//", TokenKind::SlashSlash}, {"==", TokenKind::Eq},     {"!=", TokenKind::Ne},
        {"<=", TokenKind::Le},         {">=", TokenKind::Ge},     {"+", TokenKind::Plus},
        {"-", TokenKind::Minus},       {"*", TokenKind::Star},    {"/", TokenKind::Slash},
        {"%", TokenKind::Percent},     {"~", TokenKind::Tilde},   {"<", TokenKind::Lt},
        {">", TokenKind::Gt},          {"=", TokenKind::Assign},  {"(", TokenKind::LParen},
        {")", TokenKind::RParen},      {"[", TokenKind::LBracket}, {"]", TokenKind::RBracket},
        {",", TokenKind::Comma},       {".", TokenKind::Dot},     {"|", TokenKind::Pipe},
    };
    for (const Op& op : kOps) {
      if (src_.substr(p, op.text.size()) == op.text) {
        emit(op.kind, p, p + op.text.size());
        return p + op.text.size();
      }
    }
    fail(p, "unexpected character '" + std::string(1, src_[p]) + "'");
  }

  std::string_view src_;
  const SourceMap& map_;
  std::vector<Token> out_;
  std::size_t pos_ = 0;
  bool strip_all_ = false;      // the previous tag ended with '-'
  bool strip_newline_ = false;  // the previous tag was a block or comment tag
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const SourceMap& map) {
  return Lexer(source, map).run();
}

}  // namespace lntune::tmpl::detail
