#!/usr/bin/env bash
# On the GPU machine: each scene's tuned configuration (results/<gpu>/best/)
# and the thesis default, measured in one run with the roofline probe of the
# same scene and GPU (issue 3's targets compare them "in the same run").
#   scripts/gpu_best_vs_roofline.sh OUT.jsonl [SCENE...]
set -uo pipefail
out=$1; shift
scenes=${*:-cgg-logo ad artifix manix smoke bucky}
# this GPU's results folder, named as vpt_gpu_dirname names it (VPT_GPU_DIR
# overrides): not the first results/*/best, which picked h100 on an H200
gpu=${VPT_GPU_DIR:-$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | python3 -c "
import re, sys
n = re.sub('^NVIDIA ', '', sys.stdin.read().strip())
print('h100' if n.startswith('H100') else re.sub('[^a-z0-9]+', '-', n.lower()).strip('-'))")}
for s in $scenes; do
  best=results/$gpu/best/$s.json
  [ -f "$best" ] || { echo "$s: no $best"; continue; }
  cfg=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['config'])" "$best")
  ./bin/bench --scene "$s" --roofline --config "$cfg" --config regenerationSK-thread --max-time 3 --quiet -o "$out" \
    | grep -E "roofline|Mrays"
done
