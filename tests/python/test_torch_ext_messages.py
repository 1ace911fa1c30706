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


def macro_calls(text):
    """(line, argument list) of every TORCH_CHECK* call, arguments split at
    top-level commas (strings, parentheses, brackets and braces respected)."""
    for m in re.finditer(r"\bTORCH_CHECK\w*\s*\(", text):
        i, depth, args, cur, in_str = m.end(), 1, [], [], False
        while i < len(text) and depth:
            ch = text[i]
            if in_str:
                cur.append(ch)
                if ch == "\\":
                    cur.append(text[i + 1])
                    i += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
                cur.append(ch)
            elif ch in "([{":
                depth += 1
                cur.append(ch)
            elif ch in ")]}":
                depth -= 1
                if depth:
                    cur.append(ch)
            elif ch == "," and depth == 1:
                args.append("".join(cur).strip())
                cur = []
            else:
                cur.append(ch)
            i += 1
        args.append("".join(cur).strip())
        yield text.count("\n", 0, m.start()) + 1, args


def unsafe(arg):
    """Why `arg` may stream a number, or None when it is a string."""
    # A concatenation is safe when each of its parts is.
    parts = [p.strip() for p in split_plus(arg)]
    for p in parts:
        if p.startswith('"') or p in SAFE_NAMES or any(c in p for c in SAFE_CALLS):
            continue
        return p
    return None


def split_plus(arg):
    """arg split at top-level '+' (outside strings and brackets)."""
    out, cur, depth, in_str, i = [], [], 0, False, 0
    while i < len(arg):
        ch = arg[i]
        if in_str:
            cur.append(ch)
            if ch == "\\":
                cur.append(arg[i + 1])
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            cur.append(ch)
        elif ch == "+" and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


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
