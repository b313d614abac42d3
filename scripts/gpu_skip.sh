#!/usr/bin/env bash
# Empty-space skipping (majorant=skip, issue 16) beside the thesis' global
# majorant and the majorant grid, in one bench session per scene on the lent
# GPU: three schedules (the thesis-size CT winners' and the sparse cloud's)
# x the estimators global:f32, global:u8, grid8:u8, grid32:u8, skip:u8,
# skip:f32, at the thesis workload, with the roofline probes of each
# (majorant, format) the configs use (bench --roofline), so every config's
# share of its roofline is against its own estimator's probe.
#   scripts/gpu_skip.sh OUTDIR [SCENE-SPEC...]
# A SCENE-SPEC is a name:bench-scene-options pair, e.g.
#   manix:--scene manix   cranium:--volume .ct/cranium.mhd --like manix
# (default: manix, artifix, cranium, cranium-up4, head512, cloud512; the
# cranium ones need scripts/fetch_ct.sh's .ct/cranium.mhd carried along).
# Writes OUTDIR/machine.txt, OUTDIR/skip.jsonl (bench rows of every scene,
# "scene_label" added) and OUTDIR/NAME.log.
set -uo pipefail
out=${1:?usage: gpu_skip.sh OUTDIR [NAME:SCENE-OPTIONS...]}
shift
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=("manix:--scene manix" "artifix:--scene artifix"
  "cranium:--volume .ct/cranium.mhd --like manix" "cranium-up4:--volume .ct/cranium.mhd --like manix --upsample 4"
  "head512:--scene head512" "cloud512:--scene cloud512")
mkdir -p "$out"
export VPT_CACHE_DIR=${VPT_CACHE_DIR:-/tmp/vptune-cubin}
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv
} > "$out/machine.txt" 2>&1
cfgs=$out/skip-configs.txt
: > "$cfgs"
for sched in \
  regen=warp,reorder=none,kernels=single,maxrregcount=0,ppt=1,block=64,grid=0,threshold=50,sortkey=position,lookahead=4,coop=4 \
  regen=warp,reorder=none,kernels=single,maxrregcount=168,ppt=1,block=64,grid=0,threshold=0,sortkey=position,lookahead=1 \
  regen=warp,reorder=none,kernels=single,maxrregcount=168,ppt=1,block=64,grid=0,threshold=0,sortkey=position,lookahead=2; do
  for e in global:f32 global:u8 grid8:u8 grid32:u8 skip:u8 skip:f32; do
    echo "$sched,majorant=${e%%:*},density=${e##*:}" >> "$cfgs"
  done
done
for spec in "${specs[@]}"; do
  name=${spec%%:*}
  read -r -a opts <<< "${spec#*:}"
  ./bin/bench "${opts[@]}" --configs "$cfgs" --roofline --max-time ${MAX_TIME:-2} -o "$out/$name.jsonl" \
      > "$out/$name.log" 2>&1
  echo "$name: exit $?"
  python3 - "$out/$name.jsonl" "$name" >> "$out/skip.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r["scene_label"] = sys.argv[2]
    print(json.dumps(r))
PY
  rm -f "$out/$name.jsonl"
  grep -E " ms |roofline" "$out/$name.log" | sed 's/reorder=none,kernels=single,//' | cut -c1-170
done
