#!/usr/bin/env bash
# On the GPU machine: each scene's tuned configuration (results/<gpu>/best/)
# and the thesis default, measured in one run with the roofline probe of the
# same scene and GPU (issue 3's targets compare them "in the same run").
#   scripts/gpu_best_vs_roofline.sh OUT.jsonl [SCENE...]
set -uo pipefail
out=$1; shift
scenes=${*:-cgg-logo ad artifix manix smoke bucky}
gpu=$(ls -d results/*/best 2>/dev/null | head -1 | cut -d/ -f2)
for s in $scenes; do
  best=results/$gpu/best/$s.json
  [ -f "$best" ] || { echo "$s: no $best"; continue; }
  cfg=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['config'])" "$best")
  ./bin/bench --scene "$s" --roofline --config "$cfg" --config regenerationSK-thread --max-time 3 --quiet -o "$out" \
    | grep -E "roofline|Mrays"
done
