#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang, ASan + UBSan) in
# build-fuzz and runs each for FUZZ_SECONDS (default 60) from its committed
# seed corpus (new inputs go to build-fuzz/corpus, not into the repository).
# Fails on any crash, sanitizer report, leak, timeout (-timeout) or memory
# blow-up (-rss_limit_mb); the input that did it is left in
# build-fuzz/artifacts. FUZZERS picks a subset, e.g. FUZZERS="engine cache".
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
secs=${FUZZ_SECONDS:-60}
fuzzers=${FUZZERS:-engine cache cli_list}
build=${FUZZ_BUILD_DIR:-build-fuzz}

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
install() { DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$@" >/dev/null; }
command -v clang++ >/dev/null || install clang
# -fsanitize=fuzzer needs clang's runtime (libclang_rt.fuzzer, in Debian's
# libclang-rt-<version>-dev; older releases ship it in libclang-common-*-dev).
probe=$(mktemp -d)
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' > "$probe/p.cpp"
if ! clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  v=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  install "libclang-rt-$v-dev" || install "libfuzzer-$v-dev"
fi
rm -rf "$probe"

cmake -S tests/fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$build" --target $(for f in $fuzzers; do printf 'fuzz_%s ' "$f"; done)

mkdir -p "$build/artifacts"
status=0
for f in $fuzzers; do
  mkdir -p "$build/corpus/$f"
  echo "=== fuzz_$f for ${secs}s"
  max_len=8192
  [ "$f" = cache ] && max_len=65536
  if ! ASAN_OPTIONS=detect_leaks=1 "$build/fuzz_$f" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
      -max_len=$max_len -print_final_stats=1 -artifact_prefix="$build/artifacts/$f-" \
      "$build/corpus/$f" "tests/fuzz/corpus/$f" 2>"$build/fuzz_$f.log"; then
    tail -60 "$build/fuzz_$f.log"
    echo "fuzz_$f FAILED: see $build/fuzz_$f.log and $build/artifacts/" >&2
    status=1
  else
    grep -E 'stat::number_of_executed_units|stat::new_units_added' "$build/fuzz_$f.log" || true
  fi
done
exit $status
