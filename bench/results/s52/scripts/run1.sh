#!/usr/bin/env bash
# Call 1 (session 52). Session 51's two waiting device calls:
# fwd-fused-12288-ln-1024.patch applied as s52b against main as s52a
# (a236b2d), logs in call1/patch, then sweeps-after-s51.sh on main, logs in
# call1/sweeps.
set -uo pipefail
base=${OUT:-/tmp}
mkdir -p $base/patch $base/sweeps
OUT=$base/patch bash bench/results/s52/scripts/run-fwd-fused-12288-ln-1024.sh s52a s52b
OUT=$base/sweeps bash bench/results/s52/scripts/sweeps-after-s51.sh s52a
