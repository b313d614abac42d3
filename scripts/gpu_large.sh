#!/usr/bin/env bash
# Issue 17 on one GPU, in one call of at most ~9 minutes: the thesis'
# question at four sizes of one head, the estimators' payoff on the 1024^3
# head and cloud, and Nsight Compute's hit rates at 1024^3. Every stage has
# its own time limit, so a slow one cannot keep the later ones from running;
# everything lands in OUTDIR/large.tar.gz (the device returns few files).
#   scripts/gpu_large.sh OUTDIR [TUNE_BUDGET]       (default budget 45s)
# Stages (each resumable: run the script again and finished work is kept):
#   1. experiments/run large_schedules  (results/<gpu>/large_schedules.jsonl)
#   2. gpu_estimator_tune.sh on head1024 and on cloud1024 (tune with every
#      estimator against the thesis' estimator, winners side by side)
#   3. ncu of three schedules on head1024 (large_coherence, one scene)
set -uo pipefail
out=${1:?usage: gpu_large.sh OUTDIR [TUNE_BUDGET]}
budget=${2:-45s}
work=/tmp/vptune-large
mkdir -p "$out" "$work/results"
export VPT_CACHE_DIR=${VPT_CACHE_DIR:-/tmp/vptune-cubin}
stage() { local limit=$1; shift; echo "== $* (limit ${limit}s)"; timeout -k 10 "$limit" "$@"; echo "== exit $?"; }
stage 180 python3 experiments/run --results "$work/results" --deadline 170 large_schedules
for s in head1024 cloud1024; do
  stage 150 scripts/gpu_estimator_tune.sh "$work/$s" "$budget" --scene "$s"
done
stage 75 python3 experiments/run --results "$work/results" --deadline 65 --scene head1024 large_coherence
tar -C "$work" -czf "$out/large.tar.gz" . && echo "wrote $out/large.tar.gz"
