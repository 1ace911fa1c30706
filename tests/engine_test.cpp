// Tests for lntune::tmpl, the Jinja-like template engine (generator/engine/).
// Most cases are tables of (template, expected output or error) rendered
// against one shared data dict; expected outputs were cross-checked against
// Jinja2 (trim_blocks, lstrip_blocks, keep_trailing_newline) where the
// semantics coincide.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "generator/engine/template.hpp"

namespace {

using lntune::tmpl::Dict;
using lntune::tmpl::Environment;
using lntune::tmpl::List;
using lntune::tmpl::Template;
using lntune::tmpl::TemplateError;
using lntune::tmpl::Value;

const Dict& data() {
  static const Dict d{
      {"n", 3},
      {"xs", List{1, 2, 3}},
      {"s", "abc"},
      {"f", 2.5},
      {"yes", true},
      {"no", false},
      {"empty", List{}},
      {"nothing", Value()},
      {"names", List{"a", "b"}},
      {"d", Dict{{"a", 1}, {"inner", Dict{{"c", "deep"}}}}},
      {"big", std::numeric_limits<int64_t>::max()},
      {"small", std::numeric_limits<int64_t>::min()},
  };
  return d;
}

std::string render(std::string_view source, const Dict& d = data()) { return Template::parse("t", source).render(d); }

// what() of the TemplateError that parsing or rendering raises.
std::string error_of(std::string_view source, const Dict& d = data()) {
  try {
    std::string out = render(source, d);
    return "<no error; rendered '" + out + "'>";
  } catch (const TemplateError& e) {
    return e.what();
  }
}

struct Case {
  const char* source;
  const char* expected;
};

void check_renders(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    try {
      EXPECT_EQ(render(c.source), c.expected);
    } catch (const TemplateError& e) {
      ADD_FAILURE() << "unexpected error: " << e.what();
    }
  }
}

void check_errors(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    EXPECT_EQ(error_of(c.source), c.expected);
  }
}

// ---- Value -----------------------------------------------------------------

TEST(Value, ImplicitConstruction) {
  EXPECT_TRUE(Value().is_none());
  EXPECT_TRUE(Value(nullptr).is_none());
  EXPECT_TRUE(Value(true).is_bool());
  EXPECT_TRUE(Value(7).is_int());
  EXPECT_TRUE(Value(int64_t{7}).is_int());
  EXPECT_TRUE(Value(std::size_t{7}).is_int());
  EXPECT_TRUE(Value(7u).is_int());
  EXPECT_TRUE(Value(1.5).is_double());
  EXPECT_TRUE(Value(1.5f).is_double());
  EXPECT_TRUE(Value("text").is_string());  // const char* is a string, not a bool
  EXPECT_TRUE(Value(std::string("text")).is_string());
  EXPECT_TRUE(Value(std::string_view("text")).is_string());
  EXPECT_TRUE(Value(List{1, "a"}).is_list());
  EXPECT_TRUE(Value(Dict{{"k", 1}}).is_dict());

  Dict d{{"name", "k"}, {"flag", false}, {"n", 4}, {"x", 0.5}, {"items", List{1, 2}}};
  EXPECT_TRUE(d.at("name").is_string());
  EXPECT_TRUE(d.at("flag").is_bool());
  EXPECT_THROW(Value(std::numeric_limits<uint64_t>::max()), std::out_of_range);
}

TEST(Value, Accessors) {
  EXPECT_EQ(Value(42).as_int(), 42);
  EXPECT_EQ(Value(42).as_double(), 42.0);  // ints convert
  EXPECT_EQ(Value(0.25).as_double(), 0.25);
  EXPECT_EQ(Value("s").as_string(), "s");
  EXPECT_TRUE(Value(true).as_bool());
  EXPECT_EQ(Value(List{1, 2}).as_list().size(), 2u);
  EXPECT_EQ(Value(Dict{{"a", 1}}).as_dict().at("a"), Value(1));
  EXPECT_TRUE(Value(42).is_number());
  EXPECT_TRUE(Value(4.2).is_number());
  EXPECT_EQ(Value(3).type(), Value::Type::Int);
  EXPECT_STREQ(Value(List{}).type_name(), "list");

  Value dict = Dict{{"a", 1}};
  ASSERT_NE(dict.find("a"), nullptr);
  EXPECT_EQ(*dict.find("a"), Value(1));
  EXPECT_EQ(dict.find("b"), nullptr);
  EXPECT_EQ(Value(1).find("a"), nullptr);

  EXPECT_THROW(Value("s").as_int(), std::invalid_argument);
  EXPECT_THROW(Value(1).as_string(), std::invalid_argument);
  EXPECT_THROW(Value(1).as_bool(), std::invalid_argument);
  EXPECT_THROW(Value().as_list(), std::invalid_argument);
  EXPECT_THROW(Value(1.0).as_int(), std::invalid_argument);
}

TEST(Value, Truthiness) {
  EXPECT_FALSE(Value().truthy());
  EXPECT_FALSE(Value(false).truthy());
  EXPECT_FALSE(Value(0).truthy());
  EXPECT_FALSE(Value(0.0).truthy());
  EXPECT_FALSE(Value("").truthy());
  EXPECT_FALSE(Value(List{}).truthy());
  EXPECT_FALSE(Value(Dict{}).truthy());
  EXPECT_TRUE(Value(true).truthy());
  EXPECT_TRUE(Value(-1).truthy());
  EXPECT_TRUE(Value(0.5).truthy());
  EXPECT_TRUE(Value("0").truthy());
  EXPECT_TRUE(Value(List{Value()}).truthy());
  EXPECT_TRUE(Value(Dict{{"k", Value()}}).truthy());
}

TEST(Value, EqualityAndRepr) {
  EXPECT_EQ(Value(1), Value(1.0));
  EXPECT_NE(Value(1), Value("1"));
  EXPECT_NE(Value(1), Value(true));
  EXPECT_EQ(Value(List{1, "a"}), Value(List{1.0, "a"}));
  EXPECT_NE(Value(List{1}), Value(List{1, 2}));
  EXPECT_EQ(Value(Dict{{"a", List{}}}), Value(Dict{{"a", List{}}}));
  EXPECT_EQ(Value(), Value());

  EXPECT_EQ(Value().repr(), "none");
  EXPECT_EQ(Value(false).repr(), "false");
  EXPECT_EQ(Value(-5).repr(), "-5");
  EXPECT_EQ(Value(2.0).repr(), "2.0");
  EXPECT_EQ(Value("it's\n").repr(), "'it\\'s\\n'");
  EXPECT_EQ(Value(List{1, "a", List{}}).repr(), "[1, 'a', []]");
  EXPECT_EQ(Value(Dict{{"b", 2}, {"a", 1}}).repr(), "{'a': 1, 'b': 2}");
}

TEST(Value, FormatDouble) {
  using lntune::tmpl::format_double;
  EXPECT_EQ(format_double(1.0), "1.0");
  EXPECT_EQ(format_double(-0.0), "-0.0");
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_double(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(format_double(1e20), "1e+20");
  EXPECT_EQ(format_double(1.5e-7), "1.5e-07");
  EXPECT_EQ(format_double(123456.0), "123456.0");
  EXPECT_EQ(format_double(2000.0), "2000.0");
  EXPECT_EQ(format_double(1e15), "1000000000000000.0");
  EXPECT_EQ(format_double(1e16), "1e+16");
  EXPECT_EQ(format_double(0.0001), "0.0001");
  EXPECT_EQ(format_double(0.00001), "1e-05");
  EXPECT_EQ(format_double(-2.5), "-2.5");
  EXPECT_EQ(format_double(9.995), "9.995");
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "inf");
  for (double d : {0.1, 1.0 / 3, 2.0 / 3, 1e-300, 6.02214076e23, 3.141592653589793}) {
    EXPECT_EQ(std::stod(format_double(d)), d);  // round-trips
  }
}

// ---- expressions -----------------------------------------------------------

TEST(Render, Literals) {
  check_renders({
      {"{{ 42 }}", "42"},
      {"{{ -7 }}", "-7"},
      {"{{ 1.5 }}", "1.5"},
      {"{{ 1.0 }}", "1.0"},
      {"{{ 2e3 }}", "2000.0"},
      {"{{ 1e20 }}", "1e+20"},
      {"{{ 0.1 }}", "0.1"},
      {"{{ 'single' }}", "single"},
      {"{{ \"double\" }}", "double"},
      {"{{ 'it\\'s' }}", "it's"},
      {"{{ \"q\\\"q\" }}", "q\"q"},
      {"{{ \"a\\tb\" }}", "a\tb"},
      {"{{ 'line\\n' }}", "line\n"},
      {"{{ 'back\\\\slash' }}", "back\\slash"},
      {"{{ '{{ not a tag }}' }}", "{{ not a tag }}"},
      {"{{ true }} {{ True }} {{ false }} {{ False }}", "true true false false"},
      {"{{ none is none }} {{ None is none }}", "true true"},
      {"{{ [1, 2, 3]|length }}", "3"},
      {"{{ []|length }}", "0"},
      {"{{ [1, 'a', [2],]|length }}", "3"},
      {"{{ [1, 'a', [2]][2][0] }}", "2"},
  });
}

TEST(Render, Arithmetic) {
  check_renders({
      {"{{ 1 + 2 * 3 }}", "7"},
      {"{{ (1 + 2) * 3 }}", "9"},
      {"{{ 10 - 2 - 3 }}", "5"},
      {"{{ 2 - -3 }}", "5"},
      {"{{ -n }} {{ +n }} {{ -f }}", "-3 3 -2.5"},
      {"{{ 7 / 2 }}", "3.5"},
      {"{{ 6 / 3 }}", "2.0"},
      {"{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 // -2 }} {{ -7 // -2 }}", "3 -4 -4 3"},
      {"{{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ -7 % -3 }}", "1 2 -2 -1"},
      {"{{ 7.5 // 2 }} {{ -7.5 % 2 }}", "3.0 0.5"},
      {"{{ 1 + 2.5 }} {{ 2 * 1.5 }} {{ 3 - 0.5 }} {{ f * 2 }}", "3.5 3.0 2.5 5.0"},
      {"{{ 2 * 3 % 4 }}", "2"},
      {"{{ 'a' + 'b' }}", "ab"},
      {"{{ ([1] + [2, 3])|join(',') }}", "1,2,3"},
      {"{{ 'ab' * 3 }}{{ 2 * 'c' }}{{ 'x' * 0 }}", "abababcc"},
      {"{{ 'x' ~ 1 ~ 2.5 ~ '-' ~ s }}", "x12.5-abc"},
      {"{{ 'a' ~ 1 * 2 }}", "a2"},
      {"{{ big }} {{ small }}", "9223372036854775807 -9223372036854775808"},
      {"{{ big - 1 + 1 }}", "9223372036854775807"},
  });
}

TEST(Render, ComparisonsAndLogic) {
  check_renders({
      {"{{ 1 < 2 }} {{ 2 <= 2 }} {{ 3 > 4 }} {{ 3 >= 4 }}", "true true false false"},
      {"{{ 1 == 1.0 }} {{ 1 != 2 }} {{ 'a' == 1 }} {{ 1.5 < 2 }}", "true true false true"},
      {"{{ 'abc' < 'abd' }} {{ s == 'abc' }}", "true true"},
      {"{{ [1, 2] == [1, 2] }} {{ d == d }} {{ nothing == none }}", "true true true"},
      {"{{ 2 in xs }} {{ 5 in xs }} {{ 5 not in xs }}", "true false true"},
      {"{{ 'bc' in s }} {{ 'x' in s }} {{ 'a' in d }} {{ 'z' in d }}", "true false true false"},
      {"{{ yes and no }} {{ yes or no }} {{ not no }}", "false true true"},
      {"{{ no or 'fallback' }} {{ 0 or 5 }} {{ 1 and 'x' }} {{ '' and 1 }}", "fallback 5 x "},
      {"{{ not 1 == 2 }} {{ not yes or yes }}", "true true"},
      {"{{ yes or undefined_name }} {{ no and undefined_name }}", "true false"},
      {"{{ 1 + 1 == 2 and 3 > 2 }}", "true"},
      {"{{ 'a' if yes else 'b' }}", "a"},
      {"{{ 'a' if no else 'b' if yes else 'c' }}", "b"},
      {"{{ n is defined }} {{ zz is defined }} {{ zz is not defined }} {{ zz is undefined }}",
       "true false true true"},
      {"{{ nothing is none }} {{ n is not none }} {{ zz is none }}", "true true false"},
      {"{{ d.a is defined }} {{ d.q is defined }} {{ xs[7] is defined }}", "true false false"},
  });
}

TEST(Render, AccessAndIndexing) {
  check_renders({
      {"{{ s[0] }}{{ s[-1] }}", "ac"},
      {"{{ xs[1] }} {{ xs[-3] }} {{ xs[n - 1] }}", "2 1 3"},
      {"{{ d['a'] }} {{ d.a }}", "1 1"},
      {"{{ d.inner.c }} {{ d['inner']['c'] }} {{ d.inner['c'] }}", "deep deep deep"},
      {"{{ names[0] ~ names[1] }}", "ab"},
  });
}

TEST(Render, Filters) {
  check_renders({
      {"{{ xs|length }} {{ s|length }} {{ d|length }}", "3 3 2"},
      {"{{ s|upper }} {{ 'MiXed 1'|lower }} {{ s|upper|lower }}", "ABC mixed 1 abc"},
      {"{{ xs|join(', ') }}", "1, 2, 3"},
      {"{{ names|join }}", "ab"},
      {"{{ [1.5, 'z', 2]|join('-') }}", "1.5-z-2"},
      {"{{ missing|default(7) }} {{ n|default(7) }}", "7 3"},
      {"{{ d.zz|default('dz') }} {{ xs[10]|default('oob') }} {{ missing.x|default(1) }}", "dz oob 1"},
      {"{{ '42'|int + 1 }} {{ 3.9|int }} {{ -3.9|int }} {{ ' 7 '|int }} {{ '2.5'|int }}", "43 3 -3 7 2"},
      {"{{ 42|string ~ 'x' }} {{ (42|string)|length }} {{ 1.0|string }}", "42x 2 1.0"},
      {"{{ xs|length * 2 }}", "6"},
      {"{{ -f|string }}", "-2.5"},
  });
}

TEST(Render, Functions) {
  check_renders({
      {"{{ range(3)|join(',') }}", "0,1,2"},
      {"{{ range(1, 4)|join(',') }}", "1,2,3"},
      {"{{ range(0, 10, 3)|join(',') }}", "0,3,6,9"},
      {"{{ range(5, 0, -2)|join(',') }}", "5,3,1"},
      {"{{ range(-2, 2)|join(',') }}", "-2,-1,0,1"},
      {"{{ range(0)|length }} {{ range(3, 1)|length }} {{ range(1, 3, -1)|length }}", "0 0 0"},
      {"{{ len(xs) }} {{ len('hello') }} {{ len(d) }}", "3 5 2"},
      {"{{ min(3, 1) }} {{ max(3, 1) }} {{ min(2.5, 3) }} {{ max('a', 'b') }}", "1 3 2.5 b"},
      {"{{ min(4, 2, 8) }} {{ max(xs) }} {{ min([5, 4]) }}", "2 3 4"},
  });
}

// ---- statements --------------------------------------------------------------

TEST(Render, IfAndFor) {
  check_renders({
      {"{% if yes %}Y{% endif %}", "Y"},
      {"{% if no %}Y{% else %}N{% endif %}", "N"},
      {"{% if n == 1 %}one{% elif n == 3 %}three{% else %}other{% endif %}", "three"},
      {"{% if n == 1 %}one{% elif n == 2 %}two{% endif %}", ""},
      {"{% if '' %}a{% elif 0.0 %}b{% elif nothing %}c{% elif d %}d{% endif %}", "d"},
      {"{% if no %}{{ undefined_name }}{% endif %}ok", "ok"},
      {"{% for x in xs %}{{ x }},{% endfor %}", "1,2,3,"},
      {"{% for x in xs %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.length }} {% endfor %}", "1/0/3 2/1/3 3/2/3 "},
      {"{% for x in xs %}{{ loop.revindex }}{{ loop.revindex0 }}{% endfor %}", "322110"},
      {"{% for x in xs %}{% if loop.first %}[{% endif %}{{ x }}{% if loop.last %}]{% else %},{% endif %}{% endfor %}",
       "[1,2,3]"},
      {"{% for i in range(2) %}{% for j in range(2) %}{{ i }}{{ j }}{{ loop.index }} {% endfor %}{% endfor %}",
       "001 012 101 112 "},
      {"{% for i in range(2) %}{% for j in xs %}{% endfor %}{{ loop.index }}{% endfor %}", "12"},
      {"{% for x in empty %}x{% else %}empty{% endfor %}", "empty"},
      {"{% for x in xs %}{{ x }}{% else %}empty{% endfor %}", "123"},
      {"{% for k in d %}{{ k }};{% endfor %}", "a;inner;"},
      {"{% for c in s %}{{ c }}.{% endfor %}", "a.b.c."},
      {"{% for i in range(3, 0, -1) %}{{ i }}{% endfor %}", "321"},
      {"{% for x in [1, 2] + [3] %}{{ x }}{% endfor %}", "123"},
      {"{% for row in [[1, 2], [3]] %}{% for v in row %}{{ v }}{% endfor %};{% endfor %}", "12;3;"},
  });
}

TEST(Render, SetAndScoping) {
  check_renders({
      {"{% set x = 5 %}{{ x * 2 }}", "10"},
      {"{% set n = 10 %}{{ n }}", "10"},  // shadows the data
      {"{% set xs = xs + [4] %}{{ xs|join }}", "1234"},
      {"{% set x = 1 %}{% for i in xs %}{% set x = i %}{{ x }}{% endfor %}{{ x }}", "1231"},
      {"{% for i in xs %}{% set y = i %}{% endfor %}{{ y|default('not leaked') }}", "not leaked"},
      {"{% if yes %}{% set x = 2 %}{% endif %}{{ x }}", "2"},  // if does not open a scope
      {"{% for x in xs %}{% endfor %}{{ x|default('x gone') }}", "x gone"},
  });
}

TEST(Render, Macros) {
  check_renders({
      {"{% macro add(a, b) %}{{ a + b }}{% endmacro %}{{ add(1, 2) }}", "3"},
      {"{% macro greet(name, punct='!') %}hi {{ name }}{{ punct }}{% endmacro %}{{ greet('x') }} {{ greet('y', '?') }}",
       "hi x! hi y?"},
      {"{% macro m(a, b=a * 2) %}{{ b }}{% endmacro %}{{ m(4) }}", "8"},
      {"{% macro m() %}{{ n }}{% endmacro %}{{ m() }}", "3"},  // sees the data
      {"{% macro m() %}{{ i|default('no') }}{% endmacro %}{% for i in xs %}{{ m() }}{% endfor %}", "nonono"},
      {"{% macro fact(k) %}{{ 1 if k <= 1 else k * fact(k - 1)|int }}{% endmacro %}{{ fact(5) }}", "120"},
      {"{{ later() }}{% macro later() %}x{% endmacro %}", "x"},  // macros are hoisted
      {"{% macro m(x) %}{% set x = x + 1 %}{{ x }}{% endmacro %}{% set x = 10 %}{{ m(1) }}{{ x }}", "210"},
      {"{% macro line(x) %}\n  int {{ x }};\n{% endmacro %}\n{{ line('a') }}{{ line('b') }}", "  int a;\n  int b;\n"},
  });
}

// ---- whitespace control ----------------------------------------------------------

TEST(Render, Whitespace) {
  check_renders({
      {"a\n{% if yes %}\nb\n{% endif %}\nc", "a\nb\nc"},
      {"  {% if yes %}\n  x\n  {% endif %}\n", "  x\n"},
      {"a  {% if yes %}b{% endif %}", "a  b"},            // lstrip only when alone on the line
      {"{{ n }}  {% if yes %}b{% endif %}", "3  b"},
      {"x\n  {{ n }}\ny", "x\n  3\ny"},                     // expressions are not trimmed
      {"{% for x in xs %}\n{{ x }}\n{% endfor %}\n", "1\n2\n3\n"},
      {"{% for x in xs %}\n  {{ x }},\n{% endfor %}\n", "  1,\n  2,\n  3,\n"},
      {"a {{- ' b' -}} c", "a bc"},
      {"a\n\n  {{- n -}}  \n\nb", "a3b"},
      {"a {%- if yes -%} b {%- endif -%} c", "abc"},
      {"a\n  {%- if yes %}\nb{% endif %}", "ab"},
      {"a\n{# comment #}\nb", "a\nb"},
      {"a {#- c -#} b", "ab"},
      {"  {# c #}\nb", "b"},
      {"{% if yes %}  \nx{% endif %}", "  \nx"},           // only a newline right after the tag goes
      {"  {%+ if yes %}x{% endif %}", "  x"},              // '+' keeps the indentation
      {"{% if yes +%}\nx{% endif %}", "\nx"},              // '+' keeps the newline
      {"\t {% if yes %}x{% endif %}", "x"},
      {"line\n\t  {% set z = 1 %}\nnext", "line\nnext"},
      {"{% if yes %}a{% endif %}\n{% if yes %}b{% endif %}\n", "ab"},
      {"{% if yes %}\r\nb{% endif %}", "b"},
      {"end\n", "end\n"},                                  // the trailing newline stays
  });
}

TEST(Render, CudaKernel) {
  const char* source = R"(// generated kernel: {{ name }}
#include <cuda_fp16.h>

{# one thread per output element #}
__global__ void {{ name }}(const {{ dtype }}* __restrict__ in, {{ dtype }}* __restrict__ out, int n) {
  const int i = blockIdx.x * {{ block }} + threadIdx.x;
  if (i >= n) return;
  {{ dtype }} acc = 0;
  {% for u in range(unroll) %}
  {% if u == 0 %}
  // unrolled {{ unroll }}x
  {% endif %}
  acc += in[i * {{ unroll }} + {{ u }}]{% if scale != 1.0 %} * {{ scale }}f{% endif %};
  {% endfor %}
  {% if activation == "relu" %}
  acc = acc > 0 ? acc : 0;
  {% elif activation == "clamp" %}
  {% for bound in [lo, hi] %}
  acc = {{ "fmaxf" if loop.first else "fminf" }}(acc, {{ bound }});
  {% endfor %}
  {% endif %}
  out[i] = acc;
}
)";
  Template t = Template::parse("kernel.cu.j2", source);
  Dict params{{"name", "scale_sum"}, {"dtype", "float"}, {"block", 128}, {"unroll", 2},
              {"scale", 0.5},        {"activation", "clamp"}, {"lo", -1.0}, {"hi", 1.0}};
  EXPECT_EQ(t.render(params), R"(// generated kernel: scale_sum
#include <cuda_fp16.h>

__global__ void scale_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= n) return;
  float acc = 0;
  // unrolled 2x
  acc += in[i * 2 + 0] * 0.5f;
  acc += in[i * 2 + 1] * 0.5f;
  acc = fmaxf(acc, -1.0);
  acc = fminf(acc, 1.0);
  out[i] = acc;
}
)");
  Dict relu{{"name", "k"}, {"dtype", "half"}, {"block", 256}, {"unroll", 1}, {"scale", 1.0}, {"activation", "relu"}};
  EXPECT_EQ(t.render(relu), R"(// generated kernel: k
#include <cuda_fp16.h>

__global__ void k(const half* __restrict__ in, half* __restrict__ out, int n) {
  const int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  half acc = 0;
  // unrolled 1x
  acc += in[i * 1 + 0];
  acc = acc > 0 ? acc : 0;
  out[i] = acc;
}
)");
}

// ---- errors ----------------------------------------------------------------

TEST(Errors, Syntax) {
  check_errors({
      {"{{ foo", "t:1:1: unterminated '{{' (expected '}}')"},
      {"abc\n  {% if x", "t:2:3: unterminated '{%' (expected '%}')"},
      {"ok {# never closed", "t:1:4: unterminated '{#' (expected '#}')"},
      {"{{ 'abc }}", "t:1:4: unterminated string literal"},
      {"{{ 'a\\q' }}", "t:1:6: unknown escape sequence '\\q'"},
      {"{{ a @ b }}", "t:1:6: unexpected character '@'"},
      {"{% if x %}", "t:1:1: unclosed 'if' block (expected 'endif')"},
      {"x\n  {% for i in xs %}{{ i }}", "t:2:3: unclosed 'for' block (expected 'endfor')"},
      {"{% macro m() %}", "t:1:1: unclosed 'macro' block (expected 'endmacro')"},
      {"{% if a %}{% for x in xs %}{% endif %}", "t:1:31: unexpected 'endif' in 'for' block (expected 'endfor')"},
      {"a\n{% for x in xs %}\n{% if x %}\n{% endfor %}", "t:4:4: unexpected 'endfor' in 'if' block (expected 'endif')"},
      {"{% endfor %}", "t:1:4: unexpected 'endfor' outside of any block"},
      {"text {% else %}", "t:1:9: unexpected 'else' outside of any block"},
      {"{% endif %}", "t:1:4: unexpected 'endif' outside of any block"},
      {"{% for x in xs %}{% elif y %}{% endfor %}", "t:1:21: unexpected 'elif' in 'for' block (expected 'endfor')"},
      {"{% if x %}{% else %}{% else %}{% endif %}", "t:1:24: unexpected 'else' in 'if' block (expected 'endif')"},
      {"{% frobnicate %}", "t:1:4: unknown tag 'frobnicate'"},
      {"{% %}", "t:1:4: expected tag name, got '%}'"},
      {"{% if %}{% endif %}", "t:1:7: expected expression, got '%}'"},
      {"{{ }}", "t:1:4: expected expression, got '}}'"},
      {"{{ in }}", "t:1:4: expected expression, got 'in'"},
      {"{% for x ins xs %}{% endfor %}", "t:1:10: expected 'in', got 'ins'"},
      {"{% for in xs %}{% endfor %}", "t:1:8: expected loop variable name, got 'in'"},
      {"{{ 1 2 }}", "t:1:6: expected '}}', got '2'"},
      {"{{ x %}", "t:1:1: unterminated '{{' (expected '}}')"},
      {"{{ x %}{{ y }}", "t:1:6: expected '}}', got '%}'"},
      {"{% if x }}{% endif %}", "t:1:9: expected '%}', got '}}'"},
      {"{% set x = 1 2 %}", "t:1:14: expected '%}', got '2'"},
      {"{% set = 1 %}", "t:1:8: expected variable name, got '='"},
      {"{% set x 1 %}", "t:1:10: expected '=', got '1'"},
      {"{% set true = 1 %}", "t:1:8: expected variable name, got 'true'"},
      {"{% for x in xs %}{% set loop = 0 %}{% endfor %}", "t:1:25: cannot assign to 'loop'"},
      {"{% for loop in xs %}{% endfor %}", "t:1:8: cannot assign to 'loop'"},
      {"{{ (1 + 2 }}", "t:1:11: expected ')', got '}}'"},
      {"{{ [1, 2 }}", "t:1:10: expected ']', got '}}'"},
      {"{{ x[1 }}", "t:1:8: expected ']', got '}}'"},
      {"{{ x. }}", "t:1:7: expected attribute name, got '}}'"},
      {"{{ x|nope }}", "t:1:6: unknown filter 'nope'"},
      {"{{ x| }}", "t:1:7: expected filter name, got '}}'"},
      {"{{ x|join(1, 2) }}", "t:1:6: filter 'join' expects at most 1 argument, got 2"},
      {"{{ x|default }}", "t:1:6: filter 'default' expects 1 argument, got 0"},
      {"{{ x|upper(1) }}", "t:1:6: filter 'upper' expects no arguments, got 1"},
      {"{{ x is odd }}", "t:1:9: unknown test 'odd'"},
      {"{{ 1 < 2 < 3 }}", "t:1:10: chained comparisons are not supported"},
      {"{{ 99999999999999999999 }}", "t:1:4: integer literal 99999999999999999999 is out of range"},
      {"{{ (x)(1) }}", "t:1:7: only functions and macros can be called, by name"},
      {"{{ 'a' if x }}", "t:1:13: expected 'else', got '}}'"},
      {"{% macro m(a, a) %}{% endmacro %}", "t:1:15: duplicate parameter 'a'"},
      {"{% macro m(a=1, b) %}{% endmacro %}", "t:1:17: parameter 'b' without a default follows one with a default"},
      {"{% macro m() %}{% endmacro %}{% macro m() %}{% endmacro %}", "t:1:39: macro 'm' is already defined"},
      {"{% if x %}{% macro m() %}{% endmacro %}{% endif %}", "t:1:14: macros must be defined at the top level"},
  });
  std::string deep = "{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}";
  EXPECT_EQ(error_of(deep), "t:1:104: template nested too deeply");
  std::string long_chain = "{{ 1";
  for (int i = 0; i < 300; ++i) long_chain += " + 1";
  EXPECT_EQ(error_of(long_chain + " }}"), "t:1:800: template nested too deeply");
  std::string ok_chain = "{{ 1";
  for (int i = 0; i < 150; ++i) ok_chain += " + 1";
  EXPECT_EQ(render(ok_chain + " }}"), "151");
  std::string deep_blocks;
  for (int i = 0; i < 300; ++i) deep_blocks += "{% if yes %}";
  EXPECT_EQ(error_of(deep_blocks), "t:1:2383: template nested too deeply");
}

TEST(Errors, Render) {
  check_errors({
      {"line1\nline2\n  {{ foo }}", "t:3:6: undefined variable 'foo'"},
      {"{% for x in nope %}{% endfor %}", "t:1:13: undefined variable 'nope'"},
      {"{{ d.zz }}", "t:1:6: undefined attribute 'zz'"},
      {"{{ d.inner.zz }}", "t:1:12: undefined attribute 'zz'"},
      {"{{ d['zz'] }}", "t:1:5: undefined key 'zz'"},
      {"{{ n.x }}", "t:1:6: cannot access attribute 'x' of int"},
      {"{{ xs[3] }}", "t:1:6: index 3 out of range for list of length 3"},
      {"{{ xs[-4] }}", "t:1:6: index -4 out of range for list of length 3"},
      {"{{ s[5] }}", "t:1:5: index 5 out of range for string of length 3"},
      {"{{ xs['a'] }}", "t:1:6: list index must be int, got string"},
      {"{{ d[1] }}", "t:1:5: dict key must be string, got int"},
      {"{{ n[0] }}", "t:1:5: cannot index int"},
      {"{{ 1 / 0 }}", "t:1:6: division by zero"},
      {"{{ 1 // 0 }}", "t:1:6: division by zero"},
      {"{{ 1 % 0 }}", "t:1:6: division by zero"},
      {"{{ 1.5 / 0 }}", "t:1:8: division by zero"},
      {"{{ 1 % 0.0 }}", "t:1:6: division by zero"},
      {"{{ 1 + 'a' }}", "t:1:6: cannot add int and string"},
      {"{{ 1 + 2 ~ 3 }}", "t:1:6: cannot add int and string"},  // '~' binds tighter than '+', as in Jinja
      {"{{ 'a' - 1 }}", "t:1:8: cannot subtract string and int"},
      {"{{ xs * 2 }}", "t:1:7: cannot multiply list and int"},
      {"{{ 's' / 2 }}", "t:1:8: cannot divide string and int"},
      {"{{ 's' // 2 }}", "t:1:8: cannot floor-divide string and int"},
      {"{{ 's' % 2 }}", "t:1:8: cannot take the modulo of string and int"},
      {"{{ yes + 1 }}", "t:1:8: cannot add bool and int"},
      {"{{ -s }}", "t:1:4: cannot apply unary '-' to string"},
      {"{{ 1 < 'a' }}", "t:1:6: cannot compare int and string"},
      {"{{ xs < xs }}", "t:1:7: cannot compare list and list"},
      {"{{ 1 in 5 }}", "t:1:6: cannot test membership in int"},
      {"{{ 1 in s }}", "t:1:6: cannot test whether int is in a string"},
      {"{{ big + 1 }}", "t:1:8: integer overflow"},
      {"{{ small - 1 }}", "t:1:10: integer overflow"},
      {"{{ big * 2 }}", "t:1:8: integer overflow"},
      {"{{ -small }}", "t:1:4: integer overflow"},
      {"{{ small // -1 }}", "t:1:10: integer overflow"},
      {"{{ nothing }}", "t:1:4: cannot print none"},
      {"x {{ xs }}", "t:1:6: cannot print list"},
      {"{{ d }}", "t:1:4: cannot print dict"},
      {"{{ 'a' ~ xs }}", "t:1:8: cannot convert list to string"},
      {"{{ n(1) }}", "t:1:4: 'n' is not a function"},
      {"{{ nope(1) }}", "t:1:4: undefined function 'nope'"},
      {"{{ range() }}", "t:1:4: function 'range' expects 1 to 3 arguments, got 0"},
      {"{{ range(1, 2, 3, 4) }}", "t:1:4: function 'range' expects 1 to 3 arguments, got 4"},
      {"{{ range(1, 5, 0)|length }}", "t:1:4: range step must not be zero"},
      {"{{ range('a')|length }}", "t:1:4: function 'range' expects int arguments, got string"},
      {"{{ range(10000000)|length }}", "t:1:4: range of 10000000 items is too large (limit 1000000)"},
      {"{{ len(1) }}", "t:1:4: int has no length"},
      {"{{ len() }}", "t:1:4: function 'len' expects 1 argument, got 0"},
      {"{{ min() }}", "t:1:4: function 'min' expects at least 1 argument, got 0"},
      {"{{ max(1) }}", "t:1:4: function 'max' expects a list or at least 2 arguments, got int"},
      {"{{ min(empty) }}", "t:1:4: function 'min' got an empty list"},
      {"{{ min(1, 'a') }}", "t:1:4: cannot compare string and int"},
      {"{{ n|length }}", "t:1:6: int has no length"},
      {"{{ n|upper }}", "t:1:6: filter 'upper' expects a string, got int"},
      {"{{ n|join }}", "t:1:6: filter 'join' expects a list, got int"},
      {"{{ xs|join(1) }}", "t:1:7: filter 'join' expects a string separator, got int"},
      {"{{ [xs]|join }}", "t:1:9: cannot convert list to string"},
      {"{{ 'abc'|int }}", "t:1:10: cannot convert 'abc' to int"},
      {"{{ ''|int }}", "t:1:7: cannot convert '' to int"},
      {"{{ xs|int }}", "t:1:7: cannot convert list to int"},
      {"{{ 1e30|int }}", "t:1:9: cannot convert 1e+30 to int"},
      {"{{ nothing|string }}", "t:1:12: cannot convert none to string"},
      {"{{ nothing|default(1) }}", "t:1:4: cannot print none"},  // none is defined
      {"{% for x in n %}{% endfor %}", "t:1:13: cannot iterate over int"},
      {"{% macro m(a) %}{% endmacro %}{{ m() }}", "t:1:34: macro 'm' expects 1 argument, got 0"},
      {"{% macro m(a, b=1) %}{% endmacro %}{{ m(1, 2, 3) }}", "t:1:39: macro 'm' expects 1 to 2 arguments, got 3"},
      {"{% macro m() %}{{ nope }}{% endmacro %}{{ m() }}", "t:1:19: undefined variable 'nope'"},
      {"{% macro r() %}{{ r() }}{% endmacro %}{{ r() }}", "t:1:19: macro recursion too deep (more than 64 levels)"},
      {"{% include 'x' %}", "t:1:12: template 'x' not found (no Environment)"},
      {"{% include 5 %}", "t:1:12: include expects a template name string, got int"},
      {"{% set x = 1 %}{% for i in xs %}{% set z = 2 %}{% endfor %}{{ z }}", "t:1:63: undefined variable 'z'"},
  });
}

TEST(Errors, ExposeLocationAndMessage) {
  try {
    Template::parse("kernel.cu.j2", "int x;\n{% if a %}\n  {{ a +* 1 }}\n{% endif %}\n").render({{"a", 1}});
    FAIL() << "expected a TemplateError";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.location().name, "kernel.cu.j2");
    EXPECT_EQ(e.location().line, 3);
    EXPECT_EQ(e.location().column, 9);
    EXPECT_EQ(e.message(), "expected expression, got '*'");
    EXPECT_STREQ(e.what(), "kernel.cu.j2:3:9: expected expression, got '*'");
  }
  // Errors are std::runtime_errors.
  EXPECT_THROW(Template::parse("t", "{{ 1 / 0 }}").render({}), std::runtime_error);
}

// ---- Environment and include -----------------------------------------------

TEST(Environment, Include) {
  Environment env;
  env.add("header", "// {{ title }}\n");
  env.add("item", "[{{ x }}]");
  env.add("sets", "{% set leaked = 1 %}{{ leaked }}");
  env.add("main", "{% include 'header' %}\nint x = {{ n }};\n");
  env.add("loop", "{% for x in xs %}\n  {% include 'item' %}\n{% endfor %}\n");
  env.add("scoped", "{% include 'sets' %}{{ leaked|default(' no') }}");
  env.add("dynamic", "{% set which = 'it' ~ 'em' %}{% set x = 'd' %}{% include which %}");
  env.add("nested", "<{% include 'loop' %}>");

  Dict d{{"title", "T"}, {"n", 3}, {"xs", List{1, 2}}};
  EXPECT_TRUE(env.contains("main"));
  EXPECT_FALSE(env.contains("nope"));
  EXPECT_EQ(env.render("main", d), "// T\nint x = 3;\n");
  EXPECT_EQ(env.render("loop", d), "[1][2]");
  EXPECT_EQ(env.render("scoped", d), "1 no");
  EXPECT_EQ(env.render("dynamic", d), "[d]");
  EXPECT_EQ(env.render("nested", d), "<[1][2]>");
  EXPECT_EQ(env.get("main").render(d, env), "// T\nint x = 3;\n");
  EXPECT_EQ(env.get("item").name(), "item");

  env.add("item", "({{ x }})");  // replaces
  EXPECT_EQ(env.render("loop", d), "(1)(2)");
}

TEST(Environment, Errors) {
  Environment env;
  env.add("missing", "a\n{% include 'nope' %}");
  env.add("a", "{% include 'b' %}");
  env.add("b", "{% include 'a' %}");
  env.add("self", "x{% include 'self' %}");
  env.add("bad_inner", "{{ 1 + 'a' }}");
  env.add("outer", "{% include 'bad_inner' %}");

  auto error = [&](std::string_view name) {
    try {
      env.render(name, {});
    } catch (const TemplateError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(error("missing"), "missing:2:12: template 'nope' not found");
  EXPECT_EQ(error("a"), "a:1:12: include recursion too deep (more than 32 levels)");
  EXPECT_EQ(error("self"), "self:1:13: include recursion too deep (more than 32 levels)");
  EXPECT_EQ(error("outer"), "bad_inner:1:6: cannot add int and string");

  try {
    env.get("nope");
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "lntune::tmpl::Environment: no template named 'nope'");
  }
  EXPECT_THROW(env.render("nope", {}), std::out_of_range);

  try {
    env.add("broken", "ok\n{% if %}");
    FAIL() << "expected a TemplateError";
  } catch (const TemplateError& e) {
    EXPECT_STREQ(e.what(), "broken:2:7: expected expression, got '%}'");
  }
  EXPECT_FALSE(env.contains("broken"));
}

// The combined depth of nesting, includes and macro recursion is capped, so
// that no input overflows the stack (issue 14). Each cap alone held, their
// product did not: 60 nested ifs around a self-include crashed the renderer.
TEST(Environment, CombinedDepthIsCapped) {
  auto nest = [](int levels, const std::string& inner) {
    std::string t;
    for (int i = 0; i < levels; ++i) t += "{% if true %}";
    t += inner;
    for (int i = 0; i < levels; ++i) t += "{% endif %}";
    return t;
  };
  Environment env;
  env.add("n", nest(60, "{% include 'n' %}"));
  env.add("m", "{% macro m(k) %}" + nest(150, "{{ m(k + 1) }}") + "{% endmacro %}{{ m(0) }}");
  env.add("mi", "{% macro m() %}" + nest(40, "{% include 'mi' %}{{ m() }}") + "{% endmacro %}{{ m() }}");
  std::string deep_expr = "{{ ";
  for (int i = 0; i < 50; ++i) deep_expr += "(1 ~ ";
  deep_expr += "e()" + std::string(50, ')') + " }}";
  env.add("e", "{% macro e() %}" + deep_expr + "{% endmacro %}" + deep_expr);
  auto error = [&](std::string_view name) {
    try {
      env.render(name, {});
    } catch (const TemplateError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  const std::string msg = "template nesting too deep (more than 500 levels of blocks, expressions, includes and macro calls)";
  EXPECT_EQ(error("n"), "n:1:150: " + msg);
  EXPECT_EQ(error("m"), "m:1:556: " + msg);
  EXPECT_EQ(error("mi"), "mi:1:334: " + msg);
  EXPECT_EQ(error("e"), "e:1:170: " + msg);
  // Deep but legitimate: two templates of 150 nested blocks, one including
  // the other, render.
  env.add("inner", nest(150, "x"));
  env.add("outer", nest(150, "{% include 'inner' %}"));
  EXPECT_EQ(env.render("outer", {}), "x");
  // A render that failed this way leaves the template usable.
  EXPECT_EQ(env.render("outer", {}), "x");
}

// ---- parse once, render many -------------------------------------------------

TEST(Template, RendersManyTimesWithDifferentData) {
  Template t = Template::parse("t", "{% for i in range(n) %}{{ i * k }}{% if not loop.last %},{% endif %}{% endfor %}");
  EXPECT_EQ(t.name(), "t");
  EXPECT_EQ(t.render({{"n", 3}, {"k", 2}}), "0,2,4");
  EXPECT_EQ(t.render({{"n", 2}, {"k", 0.5}}), "0.0,0.5");
  EXPECT_EQ(t.render({{"n", 0}, {"k", 1}}), "");
  Template copy = t;  // copies share the parsed tree
  EXPECT_EQ(copy.render({{"n", 1}, {"k", 1}}), "0");
}

TEST(Template, ConcurrentRendering) {
  Template t = Template::parse("concurrent", R"({% macro cell(i, j) %}{{ i * j }}{% endmacro %}
{% for i in range(rows) %}
{% set row = [] %}
{% for j in range(cols) %}
{{ cell(i, j) }}{% if not loop.last %} {% endif %}
{% endfor %}

{% endfor %}
{{ tag|upper }}
)");
  auto data_for = [](int id) {
    return Dict{{"rows", 6}, {"cols", 5}, {"tag", "thread" + std::to_string(id % 2)}};
  };
  std::vector<std::string> expected{t.render(data_for(0)), t.render(data_for(1))};
  ASSERT_EQ(expected[0], "0 0 0 0 0\n0 1 2 3 4\n0 2 4 6 8\n0 3 6 9 12\n0 4 8 12 16\n0 5 10 15 20\nTHREAD0\n");

  constexpr int kThreads = 8;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id) {
    threads.emplace_back([&, id] {
      Dict d = data_for(id);
      for (int k = 0; k < 200; ++k) {
        if (t.render(d) != expected[static_cast<std::size_t>(id % 2)]) ++mismatches[static_cast<std::size_t>(id)];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int id = 0; id < kThreads; ++id) EXPECT_EQ(mismatches[static_cast<std::size_t>(id)], 0) << "thread " << id;
}

}  // namespace
