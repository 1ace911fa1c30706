#!/usr/bin/env bash
# Session 25, GPU call 2 (issue 13) on nvidia-h100-x1 (the two-GPU machine was no longer lent): why NVRTC compiles
# run 0.79 s each in the two-GPU tune (0.18 s on one thread here). The probe
# compiles 60 flattened instances of the default grid with threads of one
# process, separate processes, and other allocators; then the one-GPU cold
# tune under jemalloc and mimalloc, and step 3's sample with its traces.
set -uo pipefail
D=$PWD/.devbuild/s25
P=$D/probe
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
probe() { python3 bench/results/h200x2_2026-11-24/scripts/compile_probe.py $P/src "$@"; }
lscpu | grep -E "Model name|Thread|Core|Socket|MHz" | head -6
s() { echo "=== $1 ($(date +%T))"; }
s probe
probe threads 1 16
probe threads 8 96

probe threads 14 210

probe procs 14 210
LD_PRELOAD=$P/lib/libjemalloc.so.2 probe threads 14 210
LD_PRELOAD=$P/lib/libmimalloc.so.2.0 probe threads 14 210
LD_PRELOAD=$P/lib/libtcmalloc_minimal.so.4.5.10 probe threads 14 210
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=268435456 probe threads 14 210
for a in glibc jemalloc mimalloc; do
  s "cold tune on 1 GPU, $a"
  pre=""; [ $a = jemalloc ] && pre=$P/lib/libjemalloc.so.2; [ $a = mimalloc ] && pre=$P/lib/libmimalloc.so.2.0
  rm -f /tmp/d.db*
  t0=$(date +%s.%N)
  LD_PRELOAD=$pre $D/lntune tune --db /tmp/d.db --budget 150 > /tmp/dual_$a.log 2>&1
  t1=$(date +%s.%N)
  echo "wall $(python3 -c "print(f'{$t1-$t0:.1f}')") s"
  grep -E "^compilations|^gpu [0-9]|^843 keys|^wall" /tmp/dual_$a.log
done
s "step 3 with traces"
OUT=/tmp/ts STEPS="3" TOTAL_S=200 bash bench/tune_scale.sh $D > $O/step3.log 2>&1
tail -3 $O/step3.log
gzip -c /tmp/ts/sample_pruned.trace > $O/sample_pruned.trace.gz; gzip -c /tmp/ts/sample_full.trace > $O/sample_full.trace.gz
cp /tmp/ts/compare.txt $O/compare.txt
s done
