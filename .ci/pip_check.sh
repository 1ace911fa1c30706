#!/usr/bin/env bash
# CI: `pip install` of the package from a clean checkout (git archive HEAD) into a
# fresh virtual environment, then, from outside the source tree and without a GPU:
#   - `import lntune` works (and does not import torch);
#   - lntune.__version__ == lntune_version() of the bundled liblntune.so, which is
#     the one loaded (inside the venv), and equals CMakeLists.txt's project VERSION;
#   - `python -m lntune info` prints exactly what the bundled `lntune info` prints and
#     exits with its status (the CLI's: 0 when it could report; with no GPU it says
#     "no GPU: ..." with the reason, e.g. no CUDA driver).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
  echo "=== apt-get install python3-venv"
  apt-get install -y -qq python3-venv >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git -C "$repo" archive HEAD | tar -x -C "$work/src"
echo "=== pip install (scikit-build-core over CMake) into a fresh venv"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$py" -m pip install -q "$work/src"
cd "$work"  # outside the source tree; no PYTHONPATH, no LNTUNE_LIBRARY
unset PYTHONPATH LNTUNE_LIBRARY
want=$(python3 -c 'import re,sys; print(re.search(r"project\(\s*lntune\s+VERSION\s+([0-9][0-9.]*)", open(sys.argv[1]).read()).group(1))' "$repo/CMakeLists.txt")
"$py" - "$work/venv" "$want" <<'PY'
import os, sys
import lntune
assert "torch" not in sys.modules, "import lntune imported torch"
venv, want = sys.argv[1], sys.argv[2]
lib = lntune.library_path()
assert os.path.realpath(lib).startswith(os.path.realpath(venv)), "loaded %s, not the installed copy" % lib
assert lntune.__version__ == lntune.version() == want, (lntune.__version__, lntune.version(), want)
print("lntune %s from %s" % (lntune.__version__, lib))
PY
cli="$("$py" -c 'import lntune.__main__ as m; print(m.cli_path()[0] or "")')"
case "$cli" in "$work/venv/"*) ;; *) echo "the bundled CLI was not found (got '$cli')"; exit 1 ;; esac
set +e
"$py" -m lntune info >"$work/got.out" 2>"$work/got.err"; got=$?
"$cli" info >"$work/want.out" 2>"$work/want.err"; want_rc=$?
set -e
cat "$work/got.out" "$work/got.err"
echo "python -m lntune info: exit $got (lntune info: exit $want_rc)"
[ "$got" = "$want_rc" ] && cmp -s "$work/got.out" "$work/want.out" && cmp -s "$work/got.err" "$work/want.err" \
  || { echo "python -m lntune info differs from lntune info"; exit 1; }
if ! command -v nvidia-smi >/dev/null 2>&1; then
  grep -q "no GPU" "$work/got.out" "$work/got.err" || { echo "info does not say that there is no GPU"; exit 1; }
fi
echo "pip check passed"
