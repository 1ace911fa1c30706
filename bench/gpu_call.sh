# Sourced first by a device call's script (bench/results/*/scripts/runN.sh,
# run from the repository root): strict mode, B (the carried builds,
# .devbuild), O (the folder that comes back: $OUT, else /tmp), s "step" (a
# timestamped header), use (a carried build) and sw (every config of one
# sweep), both below, the GPU's name and driver on stdout, and the cache off
# (the default heuristic unless a step asks for a cache). The per-call
# scripts copied these lines each time until session 34 (use and sw until
# session 43).
#   source bench/gpu_call.sh
set -uo pipefail
B=$PWD/.devbuild
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LNTUNE_CACHE=off
# sw TAG SECONDS ARGS...: every config of `lntune_sweep ARGS` ($S: the
# build's lntune_sweep, set by the script) into $O/sw_TAG.log, within
# SECONDS, then each shape's three fastest (bench/sweep_top.py).
sw() { local tag=$1 t=$2; shift 2; LNTUNE_SWEEP_EVERY=1 timeout $t $S "$@" > $O/sw_$tag.log 2>&1; echo "$tag rc=$?"; python3 bench/sweep_top.py $O/sw_$tag.log 3; }
# use NAME: the carried build $B/NAME as D (its binaries and liblntune.so
# on LD_LIBRARY_PATH) and S (its lntune_sweep).
use() { D=$B/$1; S=$D/lntune_sweep; export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D; }
