#!/usr/bin/env bash
# On the GPU machine: the default tune's spread over seeds (issue 21,
# deliverable 5). Each seed runs `bin/tune` exactly as a user would (the
# default strategy, estimators and 90 s budget) with its own fresh
# evaluation cache and its own empty cubin cache, so no run starts from
# another's work and every run pays its compiles as a first tune does.
#   scripts/gpu_variance.sh OUTDIR NAME SEEDS [SCENE OPTIONS...]
#   scripts/gpu_variance.sh out manix "1 2 3 4 5"                      (--scene manix)
#   scripts/gpu_variance.sh out cranium "1 2 3 4 5" --volume .ct/cranium.mhd --like manix
# Writes OUTDIR/NAME_seedS.log (the tune's report) and appends one JSON line
# per finished seed to OUTDIR/tune_variance.jsonl (kind "tune_variance":
# the winner's re-measured time and config, evaluations, GPU, commit),
# as it goes, so a run cut short keeps the seeds it finished.
# BUDGET (default 90s) is the tune's --budget. One copy per GPU may run side
# by side (CUDA_VISIBLE_DEVICES=1 scripts/gpu_variance.sh ...): each row names
# its GPU; a scene option `--gpus all` makes each seed a tune on every GPU
# (the row's "gpus").
set -uo pipefail
out=${1:?usage: gpu_variance.sh OUTDIR NAME SEEDS [SCENE OPTIONS...]}
name=${2:?usage: gpu_variance.sh OUTDIR NAME SEEDS [SCENE OPTIONS...]}
seeds=${3:?usage: gpu_variance.sh OUTDIR NAME SEEDS [SCENE OPTIONS...]}
shift 3
scene=("$@")
[ ${#scene[@]} -gt 0 ] || scene=(--scene "$name")
budget=${BUDGET:-90s}
mkdir -p "$out"
# the GPU this run measures on: the first of CUDA_VISIBLE_DEVICES when set
# (several copies of this script run side by side, one per GPU), with its
# clocks: the maximum and application SM clocks, and whether they are locked
sel=${CUDA_VISIBLE_DEVICES:-0}
sel=${sel%%,*}
gpu=$(nvidia-smi -i "$sel" --query-gpu=name,uuid,driver_version --format=csv,noheader 2>/dev/null | head -1)
clocks=$(nvidia-smi -i "$sel" --query-gpu=clocks.max.sm,clocks.applications.graphics,clocks.default_applications.graphics \
  --format=csv,noheader 2>/dev/null | head -1)
for s in $seeds; do
  log=$out/${name}_seed$s.log
  cubin=$(mktemp -d /tmp/vptune-variance-cubin.XXXXXX)
  t0=$(date +%s.%N)
  VPT_CACHE_DIR=$cubin ./bin/tune "${scene[@]}" --seed "$s" --budget "$budget" --cache "$out/${name}_seed$s.cache.jsonl" \
      --no-save --quiet > "$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  rm -rf "$cubin"
  python3 scripts/tune_variance_row.py "$log" "$name" "$s" "$budget" "$rc" "$t0" "$t1" "$gpu" "${scene[*]}" "$clocks" \
      >> "$out/tune_variance.jsonl"
  tail -1 "$out/tune_variance.jsonl"
done
