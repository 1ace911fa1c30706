"""Static check of python/lntune/csrc/torch_ext.cpp (plain Python, no torch):
every TORCH_CHECK* message is built from strings, never from a streamed
number.

Why: on the H100 machine (torch 2.11 and the host's g++), the extension that
torch.utils.cpp_extension builds carries its own copies of libstdc++'s
stream inserters, and streaming a number through c10::str's ostringstream
there segfaults (a null facet; bench/results/h100_2026-11-23c). Strings
stream safely; numbers go through std::to_string. A GPU-free test cannot
reproduce that build, so this one keeps the rule in the source.

    python3 tests/python/test_torch_ext_messages.py      # exit 0: clean; 1: a violation, named
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "python", "lntune", "csrc", "torch_ext.cpp")

# A message argument is safe when it is a string literal, or an expression
# whose value is a string or a C string: these calls and names.
SAFE_CALLS = ("std::to_string(", "std::string(", "py_list(", "py_dtype(", "c10::toString(", ".str()")
SAFE_NAMES = {"name", "function", "t_failure.message"}


def code_chars(s, start=0):
    """(index, char, depth) of every character of s from `start` outside
    string literals; depth counts the brackets opened since `start` (a
    closing bracket is reported at the depth it closes to)."""
    depth, i, in_str = 0, start, False
    while i < len(s):
        ch = s[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        else:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            yield i, ch, depth
        i += 1


def split_top(s, sep):
    """s split at `sep` outside strings and brackets."""
    out, last = [], 0
    for i, ch, depth in code_chars(s):
        if ch == sep and depth == 0:
            out.append(s[last:i])
            last = i + 1
    out.append(s[last:])
    return [p.strip() for p in out]


def macro_calls(text):
    """(line, argument list) of every TORCH_CHECK* call."""
    for m in re.finditer(r"\bTORCH_CHECK\w*\s*\(", text):
        end = next((i for i, ch, depth in code_chars(text, m.end()) if depth < 0), len(text))
        yield text.count("\n", 0, m.start()) + 1, split_top(text[m.end():end], ",")


def unsafe(arg):
    """The part of `arg` that may stream a number, or None when every part
    of the concatenation is a string."""
    for p in split_top(arg, "+"):
        if p.startswith('"') or p in SAFE_NAMES or any(c in p for c in SAFE_CALLS):
            continue
        return p
    return None


def violations(text):
    found = []
    for line, args in macro_calls(text):
        for arg in args[1:]:  # args[0] is the condition
            why = unsafe(arg)
            if why is not None:
                found.append("torch_ext.cpp:%d: message argument %r may stream a number (use std::to_string)"
                             % (line, why))
    return found


def self_test():
    """The checker itself: it must flag a number and pass strings."""
    bad = 'TORCH_CHECK(ok, "got ", eps);\nTORCH_CHECK_VALUE(a == b, "M = ", M, " rows");'
    good = ('TORCH_CHECK(ok, "got " + std::to_string(eps));\n'
            'TORCH_CHECK_TYPE(x, "on ", t.device().str(), " shape ", py_list(s), f(1, 2) == 3 ? "a" : "b");')
    assert len(violations(bad)) == 2, violations(bad)
    # The ternary of two literals is a string too, but the checker does not
    # parse it: keep messages simple enough for it (strings, calls above).
    assert len(violations(good)) == 1 and "f(1, 2)" in violations(good)[0], violations(good)


def main():
    self_test()
    with open(SOURCE) as f:
        text = f.read()
    calls = sum(1 for _ in macro_calls(text))
    if calls < 10:
        print("test_torch_ext_messages: found only %d TORCH_CHECK calls in %s; the parser is broken" % (calls, SOURCE))
        return 1
    found = violations(text)
    for v in found:
        print(v)
    print("test_torch_ext_messages: %d TORCH_CHECK calls, %d violations" % (calls, len(found)))
    return 1 if found else 0


def test_messages_carry_no_streamed_number():
    """The same check under pytest."""
    assert main() == 0


if __name__ == "__main__":
    sys.exit(main())
