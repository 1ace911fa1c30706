#!/usr/bin/env bash
# Crash consistency of `lntune merge` and `lntune export` (issue 14): each
# is killed with SIGKILL at KILLS (default 50) random moments while it writes
# a large cache (9000 records, 120 CUBIN-sized blobs, ~18 MB). After every
# kill there must be no output file or a complete, valid one (opened
# read-only: schema, allowlist, quick_check, exact counts), no temporary
# file left in the directory, and the inputs byte-identical.
# usage: crash_consistency.sh LNTUNE CACHE_TOOL [KILLS]
set -euo pipefail
lntune=$1 tool=$2 kills=${3:-50}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lntune_crash.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$tool" fill a.db 4500 40 150000 1
"$tool" fill b.db 4500 40 150000 2
sha256sum a.db b.db > inputs.sha256
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# The two writers (even rounds merge, odd ones export), and what a complete
# output holds.
merge=("$lntune" merge a.db b.db -o out.db)
export=("$lntune" export --db a.db --all-kernels -o out.db)
run_cmd() { if [ $(( $1 % 2 )) -eq 0 ]; then "${merge[@]}"; else "${export[@]}"; fi; }
expect() { if [ $(( $1 % 2 )) -eq 0 ]; then echo "9000 80"; else echo "4500 40"; fi; }

# How long each takes uninterrupted here; kills fall in [0, 1.3 x that].
t0=$(now_ms); run_cmd 0 >/dev/null; t1=$(now_ms); "$tool" check out.db $(expect 0); rm -f out.db
run_cmd 1 >/dev/null; t2=$(now_ms); "$tool" check out.db $(expect 1); rm -f out.db
span=( $(( (t1 - t0) * 13 / 10 + 1 )) $(( (t2 - t1) * 13 / 10 + 1 )) )
echo "uninterrupted: merge $((t1 - t0)) ms, export $((t2 - t1)) ms"

ok=0 absent=0 complete=0
for ((i = 0; i < kills; i++)); do
  delay_ms=$(( RANDOM * 32768 + RANDOM ))
  delay_ms=$(( delay_ms % ${span[$((i % 2))]} ))
  # Started directly (not through a function's subshell), so that $! is
  # lntune itself.
  if [ $((i % 2)) -eq 0 ]; then "${merge[@]}" >/dev/null 2>&1 & else "${export[@]}" >/dev/null 2>&1 & fi
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  good=1
  if [ -e out.db ]; then
    if "$tool" check out.db $(expect $i); then complete=$((complete + 1)); else good=0; fi
  else
    absent=$((absent + 1))
  fi
  extra=$(ls -A | grep -vxE 'a\.db|b\.db|a\.db-(wal|shm)|b\.db-(wal|shm)|inputs\.sha256|out\.db' || true)
  if [ -n "$extra" ]; then echo "kill $i after ${delay_ms} ms left: $extra" >&2; good=0; fi
  if ! sha256sum --quiet -c inputs.sha256; then echo "kill $i: inputs changed" >&2; good=0; fi
  [ $good = 1 ] && ok=$((ok + 1)) || echo "kill $i after ${delay_ms} ms: FAILED" >&2
  rm -f out.db
done
echo "crash consistency: $ok of $kills kills left no output or a complete file ($absent none, $complete complete); inputs unchanged"
[ "$ok" -eq "$kills" ]
