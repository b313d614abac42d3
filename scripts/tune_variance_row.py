#!/usr/bin/env python3
"""One row of results/<gpu>/tune_variance.jsonl (kind "tune_variance", read by report/variance.py) from the log of
one default tune: the tune's rank-1 finalist (its re-measured time, spread, schedule and config), its evaluations
summed over its searches, its commit and GPU count, and the run's exit status and wall time.

  tune_variance_row.py LOG NAME SEED BUDGET EXIT T0 T1 GPU SCENE_ARGS CLOCKS [LOG_REF]

T0 and T1 are the run's start and end in seconds (the row's wall_s is their difference); GPU is nvidia-smi's
"name, uuid, driver"; CLOCKS its "max SM, application, default application" clocks; LOG_REF, when given, is
stored as the row's "log" (where the log is kept). scripts/gpu_variance.sh writes a row per seed as it runs;
a log kept in results/<gpu>/archive/ gives the same row afterwards."""
import json
import re
import sys

if len(sys.argv) not in (11, 12):
    sys.exit(__doc__)
log, name, seed, budget, rc, t0, t1, gpu, scene, clocks = sys.argv[1:11]
text = open(log, errors="replace").read()
row = {"kind": "tune_variance", "scene": name, "scene_args": scene, "seed": int(seed), "budget": budget,
       "exit": int(rc), "wall_s": round(float(t1) - float(t0), 1), "gpu": gpu,
       "clocks_sm_max_app_default_mhz": clocks, "clocks_locked": False}
if len(sys.argv) == 12:
    row["log"] = sys.argv[11]
m = re.search(r"measuring on (\d+) GPUs side by side", text)
row["gpus"] = int(m.group(1)) if m else 1
m = re.search(r"commit ([0-9a-f]+)\)", text)
row["commit"] = m.group(1) if m else None
# one line per search (the estimator stage searches twice)
runs = re.findall(r"^\w+: (\d+) evaluations \((\d+) from the cache\)", text, re.M)
row["evaluations"] = sum(int(a) for a, _ in runs) if runs else None
m = re.search(r"^finalists re-measured:\n.*\n\s+1\s+([0-9.]+)\s+([0-9.]+)\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)$", text, re.M)
if m:
    row.update(time_ms=float(m.group(1)), time_ms_spread=float(m.group(2)), schedule=m.group(3), config=m.group(4))
else:
    row.update(time_ms=None, reason="no finalist table in the log (exit %s): %s" % (rc, text.strip().splitlines()[-1:]))
print(json.dumps(row))
