#!/usr/bin/env bash
# The estimators on the GPU (issue 16), in one call on the lent machine (the
# binaries are built here and carried as bin/): records the machine, runs
# the estimator GPU test, then measures every (majorant, density) pair with
# a few schedules on the given scenes at the thesis workload.
#   scripts/gpu_estimators.sh OUTDIR [SCENE...]     (default scene: manix)
# Writes OUTDIR/machine.txt, OUTDIR/gpu-estimator-test.log and
# OUTDIR/estimators.jsonl (bench rows: time, rays, steps, status per config).
set -uo pipefail
out=${1:?usage: gpu_estimators.sh OUTDIR [SCENE...]}
shift
scenes=("${@:-manix}")
mkdir -p "$out"
export VPT_CACHE_DIR=${VPT_CACHE_DIR:-/tmp/vptune-cubin}
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv
  echo "nvcc: $(nvcc --version | tail -1)"
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
if [ -z "${SKIP_TEST:-}" ]; then
  ./bin/vptune-tests -v gpu_every_estimator 2>&1 | tee "$out/gpu-estimator-test.log" | tail -25
fi
cfgs=$out/estimator-configs.txt
: > "$cfgs"
for sched in ${SCHEDULES:-regenerationSK-thread regenerationSK-warp,block=1024,grid=1,threshold=50,lookahead=4,coop=4 regenerationSK-warp,block=256,lookahead=4,coop=8}; do
  for m in ${MAJORANTS:-global grid4 grid8 grid16 grid32}; do
    for d in ${DENSITIES:-f32 f16 u16 u8}; do echo "$sched,majorant=$m,density=$d" >> "$cfgs"; done
  done
done
for s in "${scenes[@]}"; do
  ./bin/bench --scene "$s" --configs "$cfgs" --max-time ${MAX_TIME:-2} -o "$out/estimators.jsonl" --quiet 2>&1 | tail -3
done
python3 - "$out/estimators.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("%-8s %-60s %9s %7s %9s %s" % ("scene", "config", "ms", "st/ray", "Mrays/s", "status"))
for r in rows:
    cfg = r.get("config", "")
    short = cfg.replace("reorder=none,kernels=single,", "").replace("sortkey=position,", "")
    m = r.get("metrics", r)
    ms = m.get("time_ms", {}).get("median") if isinstance(m.get("time_ms"), dict) else m.get("time_ms")
    rays, steps = m.get("rays") or 0, m.get("steps") or 0
    print("%-8s %-60s %9s %7s %9s %s" % (r.get("scene", "?"), short[-60:], ("%.3f" % ms) if ms else "-",
          ("%.2f" % (steps / rays)) if rays else "-", ("%.0f" % m["mrays_per_s"]) if m.get("mrays_per_s") else "-",
          r.get("status") + ("" if r.get("status") == "ok" else ": " + (r.get("reason") or "")[:150])))
PY
