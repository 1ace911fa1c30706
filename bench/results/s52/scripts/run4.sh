#!/usr/bin/env bash
# Call 4 (session 52). Call 3 ran out of its 570 s inside the binding's
# norms pytest shards (gtest and test_lntune_torch.py had passed): those
# shards alone on s52d, then the tables (ext, train, grid: the grid step is
# the first GPU run of session 51's interleaved host-time loop), then
# call 2's two sweeps that did not run.
source bench/gpu_call.sh
use s52d
s pytest
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
ext
T=$(mktemp -d)
python3 -m pytest -q -p no:cacheprovider --collect-only tests/python/test_lntune_torch_norms.py 2>/dev/null | grep "::" > $T/ids.txt
split -n r/4 $T/ids.txt $T/shard_
for f in $T/shard_*; do timeout 250 python3 -m pytest -q -p no:cacheprovider $(cat $f) > $f.log 2>&1 & done
wait
cat $T/shard_*.log > $O/pytest_norms_s52d.log
tail -qn 1 $T/shard_*.log
s tables
STEP_SECONDS=150 TABLES="ext train grid" OUT=$O timeout 200 bash bench/gpu_tables.sh $D s52d
s sweeps
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=fp32 sw addrms12k_f32 40 fwd bf16 12288
LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_RESIDUAL=1 sw addln_m4k 40 fwd bf16 1024 2048 4096
s done
