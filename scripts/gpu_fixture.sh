#!/usr/bin/env bash
# On the GPU machine: the exhaustive ground truth of the tuner's fixture
# space for the given scenes (400x400, 16 spp), one bench file per scene.
#   scripts/gpu_fixture.sh CONFIGS OUTDIR SCENE...
# CONFIGS: tests/fixtures/tuner/space.configs is the fixtures' space (336
# configs, one canonical config per line). FIXTURE_BENCH_ARGS adds bench
# options, e.g. "--timeout 2" where a few schedules take many seconds per
# render (cgg-logo's naiveMK): they become timeout results, as in a tune.
set -uo pipefail
configs=$1 outdir=$2; shift 2
mkdir -p "$outdir"
for s in "$@"; do
  ./bin/bench --scene "$s" --configs "$configs" --width 400 --height 400 --spp 16 \
      --max-time 1 --max-reps 20 ${FIXTURE_BENCH_ARGS:-} --quiet -o "$outdir/${s}_exhaustive.jsonl" > "$outdir/${s}_exhaustive.log" 2>&1
  echo "$s exhaustive: exit $? $(grep -c '"kind":"result"' "$outdir/${s}_exhaustive.jsonl") rows"
done
