#!/usr/bin/env bash
# On the GPU machine: a recorded ground-truth space of one scene (issue 21,
# deliverable 1), at one commit on one GPU, resumable.
#   scripts/gpu_ground_truth.sh OUTDIR NAME [SCENE OPTIONS...]
#   scripts/gpu_ground_truth.sh out manix                  (--scene manix)
#   scripts/gpu_ground_truth.sh out cranium --volume cranium.mhd --like manix   (a real head CT:
#                                   the one of the estimator tables in docs/findings/estimators.md, made by scripts/fetch_ct.sh)
# Phases (each skips what OUTDIR already holds, so the same command resumes
# after a kill or in the next session, on the same GPU and commit):
#   1. sample      bin/tune-space sample $N --seed $SEED: a stratified random
#                  sample of the full space (schedules x estimators; the
#                  strata are in tools/tune-space.c), measured by bench at
#                  $WORKLOAD into OUTDIR/NAME_sampled.jsonl;
#   2. neighbours  up to $ROUNDS rounds of bin/tune-space neighbours --top
#                  $TOP: every unmeasured neighbour (tuner/space.c's moves and
#                  the other estimators) of the $TOP fastest, until the $TOP
#                  fastest are local optima with their whole neighbourhood
#                  measured; appended to the same file;
#   3. verify      the $VERIFY_TOP fastest and $VERIFY_RANDOM others drawn at
#                  random, measured again at $VERIFY_WORKLOAD (the 336-config
#                  fixtures' workload) into OUTDIR/NAME_verify.jsonl;
#                  bin/tune-space correlate writes Spearman's rho between the
#                  two workloads and the top-20 overlap to
#                  OUTDIR/NAME_correlation.txt;
#   4. compress    NAME_sampled.jsonl.gz and NAME_verify.jsonl.gz (gzip -9 -n;
#                  the replay reads gzip), the recording command and machine in
#                  NAME_recording.txt. Commit those with
#                  cp OUTDIR/NAME_{sampled,verify}.jsonl.gz OUTDIR/NAME_recording.txt
#                     OUTDIR/NAME_correlation.txt tests/fixtures/tuner/sampled/
# $WORKLOAD is 400x400 at 4 spp (a screening workload) by default: once its
# kernel is compiled a config's cost is its renders, and 640,000 paths still
# keep 2.4 per resident thread of an H100, so persistent kernels
# regenerate as at the full workload; phase 3 measures how far the ranking
# holds. The GPU host's compile pool (VPT_COMPILE_JOBS, default cores - 1
# processes) compiles ahead while the GPU measures; a precompiled cache of
# the sample is too large to carry. The kernel source does not depend on the
# scene: keep VPT_CACHE_DIR and record the scenes on one machine so they
# share the compiles. Why, with the measurements:
# docs/decisions/ground-truth-workload.md. The device tool keeps /tmp of a
# warm machine between calls but not the repository's ignored folders, so
# carry OUTDIR back in.
set -uo pipefail
out=${1:?usage: gpu_ground_truth.sh OUTDIR NAME [SCENE OPTIONS...]}
name=${2:?usage: gpu_ground_truth.sh OUTDIR NAME [SCENE OPTIONS...]}
shift 2
scene=("$@")
[ ${#scene[@]} -gt 0 ] || scene=(--scene "$name")
N=${N:-2000} SEED=${SEED:-21} TOP=${TOP:-5} ROUNDS=${ROUNDS:-4}
WORKLOAD=${WORKLOAD:---width 400 --height 400 --spp 4}
VERIFY_WORKLOAD=${VERIFY_WORKLOAD:---width 400 --height 400 --spp 16}
VERIFY_TOP=${VERIFY_TOP:-40} VERIFY_RANDOM=${VERIFY_RANDOM:-60}
# the harness' usual repetitions (1% CI half-width, 5..20 runs), at most 1 s of
# measuring per config, as the 336-config fixtures were recorded
BENCH_ARGS=${BENCH_ARGS:---max-time 1 --max-reps 20}
export VPT_CACHE_DIR=${VPT_CACHE_DIR:-/tmp/vptune-cubin}
mkdir -p "$out"
rec=$out/${name}_sampled.jsonl ver=$out/${name}_verify.jsonl todo=$out/${name}_todo.configs

commit=$(./bin/bench --version | sed -n 's/.*commit \([^ ]*\).*/\1/p')
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -1)
# A recording is one GPU and one commit: refuse to append rows of another.
for f in "$rec" "$ver"; do
  [ -s "$f" ] || continue
  head -1 "$f" | grep -qF "\"commit\":\"$commit\"" ||
    { echo "gpu_ground_truth: $f was recorded at another commit than $commit; use another OUTDIR" >&2; exit 2; }
  [ -z "$uuid" ] || head -1 "$f" | grep -qF "\"uuid\":\"$uuid\"" ||
    { echo "gpu_ground_truth: $f was recorded on another GPU than $uuid; use another OUTDIR" >&2; exit 2; }
done
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv 2>&1
  echo "commit: $commit"
  echo "command: scripts/gpu_ground_truth.sh $out $name ${scene[*]}"
  echo "env: N=$N SEED=$SEED TOP=$TOP ROUNDS=$ROUNDS WORKLOAD='$WORKLOAD' VERIFY_WORKLOAD='$VERIFY_WORKLOAD'" \
       "VERIFY_TOP=$VERIFY_TOP VERIFY_RANDOM=$VERIFY_RANDOM BENCH_ARGS='$BENCH_ARGS'"
} >> "$out/${name}_recording.txt"

# bench the configs of $todo at the workload $1 into $2; prints the cost
measure() {
  local workload=$1 file=$2 label=$3 n t0 t1
  n=$(grep -c . "$todo" || true)
  [ "$n" -gt 0 ] || { echo "$label: nothing left to measure"; return 0; }
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  ./bin/bench "${scene[@]}" --configs "$todo" $workload $BENCH_ARGS --quiet -o "$file" > "$out/${name}_bench.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  awk -v n="$n" -v a="$t0" -v b="$t1" -v l="$label" -v rc="$rc" \
      'BEGIN { printf "%s: %d configs in %.0f s (%.3f s per config, compiles included), bench exit %d\n", l, n, b - a, (b - a) / n, rc }' |
      tee -a "$out/${name}_recording.txt"
  [ "$rc" -eq 0 ] || { tail -5 "$out/${name}_bench.log" >&2; exit 1; }
}

ex=(); [ -s "$rec" ] && ex=(--exclude "$rec")
./bin/tune-space sample "$N" --seed "$SEED" "${ex[@]}" > "$todo" || exit 1
measure "$WORKLOAD" "$rec" "sample"
for ((r = 1; r <= ROUNDS; r++)); do
  ./bin/tune-space neighbours "$rec" --top "$TOP" > "$todo" || exit 1
  if [ ! -s "$todo" ]; then echo "neighbours: the $TOP fastest are local optima, every neighbour measured"; break; fi
  measure "$WORKLOAD" "$rec" "neighbours round $r"
done
ex=(); [ -s "$ver" ] && ex=(--exclude "$ver")
./bin/tune-space pick "$rec" --top "$VERIFY_TOP" --random "$VERIFY_RANDOM" --seed "$SEED" "${ex[@]}" > "$todo" || exit 1
measure "$VERIFY_WORKLOAD" "$ver" "verify"
./bin/tune-space correlate "$rec" "$ver" --top 20 | tee "$out/${name}_correlation.txt"
gzip -9 -n -c "$rec" > "$rec.gz" && gzip -9 -n -c "$ver" > "$ver.gz"
echo "rows: $(grep -c '"kind":"result"' "$rec") in $rec.gz ($(wc -c < "$rec.gz") bytes), $(grep -c '"kind":"result"' "$ver") in $ver.gz" |
  tee -a "$out/${name}_recording.txt"
rm -f "$todo"
