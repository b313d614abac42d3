#!/usr/bin/env bash
# The estimators' payoff on one scene (issue 16), in one call on the GPU:
# the default tune with every estimator against the same tune restricted to
# the thesis' estimator (global majorant, f32), each with its own cache, then
# both winners measured again side by side in one bench session (and the
# roofline probe), so their times compare on the same GPU and run.
#   scripts/gpu_estimator_tune.sh OUTDIR BUDGET SCENE-ARGS...
#   e.g. scripts/gpu_estimator_tune.sh $OUT/manix 90s --scene manix
#        scripts/gpu_estimator_tune.sh $OUT/head 90s --volume data/ct/head.mhd --like manix
# Writes OUTDIR/tune-{all,global}.log, OUTDIR/winners.jsonl (bench rows of
# both winners) and OUTDIR/caches.tar.gz (both tunes' caches).
# TUNES chooses the tunes, in the order of the winners' rows (default
# "all global"): all (every estimator, the whole schedule space), global
# (the thesis' estimator only), sync (every estimator, flights=sync only:
# what asynchronous flights add), e.g. TUNES="all sync".
set -uo pipefail
out=${1:?usage: gpu_estimator_tune.sh OUTDIR BUDGET SCENE-ARGS...}
budget=${2:?budget}
shift 2
mkdir -p "$out"
export VPT_CACHE_DIR=${VPT_CACHE_DIR:-/tmp/vptune-cubin}
tunes=${TUNES:-all global}
for t in $tunes; do
  case "$t" in
    all) args=(--estimators all) ;;
    global) args=(--estimators global) ;;
    sync) args=(--estimators all --space flights=sync) ;;
    *) echo "gpu_estimator_tune.sh: unknown tune '$t' in TUNES (all, global, sync)" >&2; exit 2 ;;
  esac
  ./bin/tune "$@" --budget "$budget" "${args[@]}" --cache "$out/tune-$t.jsonl" --no-save --quiet \
    > "$out/tune-$t.log" 2>&1
  echo "== tune ${args[*]}: exit $?"
  grep -E "^tuning|estimators screened|evaluations|^   1 " "$out/tune-$t.log" | cut -c1-220
done
: > "$out/winners.txt"
for t in $tunes; do
  awk '/^rank +time_ms/{f=1;next} f&&/^ +1 /{print $NF; exit}' "$out/tune-$t.log" >> "$out/winners.txt"
done
cat "$out/winners.txt"
./bin/bench "$@" --configs "$out/winners.txt" --roofline --max-time 4 -o "$out/winners.jsonl" --quiet 2>&1 | tail -8
caches=()
for t in $tunes; do caches+=("tune-$t.jsonl"); done
tar -C "$out" -czf "$out/caches.tar.gz" "${caches[@]}" && (cd "$out" && rm -f "${caches[@]}" winners.txt)
