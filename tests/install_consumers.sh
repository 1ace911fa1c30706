#!/usr/bin/env bash
# The installed package, as a user gets it: `cmake --install BUILD --prefix`,
# then the example consumers (examples/cpp_consumer, examples/c_consumer)
# built against the prefix with find_package(lntune), the C one also with
# pkg-config, then run.
#   bash tests/install_consumers.sh BUILD_DIR WORK_DIR [--require-gpu]
# With a GPU the consumers must succeed. Without one they must fail cleanly:
# exit 77 with the reason (the C++ consumer prints lntune's own message). With
# --require-gpu (the ctest "gpu" test) a machine without a GPU skips (exit 77)
# before doing anything. Used by .ci/install_check.sh (CI, no GPU).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: install_consumers.sh BUILD_DIR WORK_DIR [--require-gpu]}" && pwd)
work=${2:?usage: install_consumers.sh BUILD_DIR WORK_DIR [--require-gpu]}
require_gpu=${3:-}
export PATH=/usr/local/cuda/bin:$PATH

fail() { echo "FAIL: $*" >&2; exit 1; }
# Runs a command, capturing its exit code (set -e would stop at a non-zero one).
run() { set +e; "$@" >"$work/out.txt" 2>"$work/err.txt"; code=$?; set -e; }

info=$("$build/tuner/lntune" info 2>&1 || true)
gpu=0
grep -q '^gpu ' <<<"$info" && gpu=1
if [ "$require_gpu" = --require-gpu ] && [ "$gpu" = 0 ]; then
  echo "SKIPPED: running the consumers needs a GPU: $(grep -m1 '^no GPU' <<<"$info" || echo 'lntune info lists none')"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
version=$(sed -n 's/^#define LNTUNE_VERSION "\(.*\)"$/\1/p' "$build/include/lntune/version.h")
abi=$(sed -n 's/^#define LNTUNE_ABI_VERSION \([0-9]*\)$/\1/p' "$build/include/lntune/version.h")
[ -n "$version" ] && [ -n "$abi" ] || fail "no version in $build/include/lntune/version.h"

echo "== cmake --install $build --prefix $prefix (lntune $version)"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(dirname "$(find "$prefix" -name "liblntune.so.$version" | head -1)")
[ -d "$libdir" ] || fail "liblntune.so.$version not installed"
for f in include/lntune/lntune.h include/lntune/lntune.hpp include/lntune/types.hpp include/lntune/export.h \
         include/lntune/version.h bin/lntune; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
for f in liblntune.so liblntune.so.$abi cmake/lntune/lntuneConfig.cmake cmake/lntune/lntuneConfigVersion.cmake \
         cmake/lntune/lntuneTargets.cmake pkgconfig/lntune.pc; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
[ "$(readlink "$libdir/liblntune.so.$abi")" = "liblntune.so.$version" ] || fail "liblntune.so.$abi does not point to liblntune.so.$version"
if [ -n "$(find "$prefix" -name '*.a')" ]; then fail "static libraries were installed: $(find "$prefix" -name '*.a')"; fi
grep -q 'lntune_runtime\|lntune_generator\|lntune_cache\|lntune_tuner' "$libdir"/cmake/lntune/*.cmake &&
  fail "the CMake package names an internal static library"
[ "$("$prefix/bin/lntune" --version)" = "lntune $version" ] || fail "installed lntune --version: $("$prefix/bin/lntune" --version)"
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"

echo "== find_package(lntune): examples/cpp_consumer, examples/c_consumer"
for c in cpp_consumer c_consumer; do
  cmake -S "$src/examples/$c" -B "$work/$c" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/$c.configure.log" || { cat "$work/$c.configure.log"; fail "configuring $c"; }
  cmake --build "$work/$c" >"$work/$c.build.log" || { cat "$work/$c.build.log"; fail "building $c"; }
  # It runs against the installed library, not the build tree's.
  # (ldd's output is captured first: under pipefail, `ldd | grep -q` fails
  # whenever grep exits before ldd has written everything.)
  deps=$(ldd "$work/$c/$c")
  grep -q "liblntune.so.$abi => $libdir/" <<<"$deps" ||
    fail "$c does not load liblntune.so.$abi from $libdir: $(grep lntune <<<"$deps")"
  echo "built $c"
done
grep -q "lntune::cli: $prefix/bin/lntune" "$work/cpp_consumer.configure.log" ||
  fail "lntune::cli is not the installed CLI: $(grep 'lntune::cli' "$work/cpp_consumer.configure.log")"

echo "== pkg-config lntune"
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion lntune)" = "$version" ] || fail "pkg-config --modversion lntune: $(pkg-config --modversion lntune)"
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
cudalib=$cuda/lib64
[ -d "$cudalib" ] || cudalib=$cuda/lib
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror "$src/examples/c_consumer/main.c" -o "$work/c_consumer_pc" \
  $(pkg-config --cflags --libs lntune) -I"$cuda/include" -L"$cudalib" -lcudart -lm \
  -Wl,-rpath,"$libdir" -Wl,-rpath,"$cudalib" || fail "building the C consumer with pkg-config"
echo "built c_consumer with $(pkg-config --cflags --libs lntune)"

echo "== running the consumers ($([ $gpu = 1 ] && echo 'GPU' || echo 'no GPU: they must say so and exit 77'))"
for exe in "$work/cpp_consumer/cpp_consumer" "$work/c_consumer/c_consumer" "$work/c_consumer_pc"; do
  run env LNTUNE_CACHE="$work/user.db" "$exe"
  name=$(basename "$exe")
  if [ "$gpu" = 1 ]; then
    [ "$code" = 0 ] || fail "$name exited $code: $(cat "$work/err.txt")"
    grep -q '^ok: ' "$work/out.txt" || fail "$name: $(cat "$work/out.txt")"
    echo "$name: $(tail -1 "$work/out.txt")"
  else
    [ "$code" = 77 ] || fail "$name exited $code, not 77, without a GPU: $(cat "$work/err.txt")"
    if [ "$name" = cpp_consumer ]; then
      grep -Eq '^lntune: no (CUDA driver|usable CUDA device)' "$work/err.txt" ||
        fail "$name did not print lntune's no-GPU message: $(cat "$work/err.txt")"
    else
      grep -q 'no usable GPU' "$work/err.txt" || fail "$name did not say there is no GPU: $(cat "$work/err.txt")"
    fi
    echo "$name: exit $code: $(head -1 "$work/err.txt")"
  fi
done
echo "ok: installed lntune $version works from $prefix (find_package and pkg-config)"
