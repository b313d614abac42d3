#!/usr/bin/env python3
"""Simulated lanes: the default 90 s tune (`bin/tune --replay FIXTURE --gpus
0,..,N-1`) on a recorded space for 1, 2, 4, 8 and 16 simulated GPUs, local
search (the default) and random search, seeds 1..S (optional arguments:
LANES, STRATEGIES, BUDGET seconds), one JSON line per run:
commit, fixture, strategy, seed, lanes, budget, evaluations, charged wall
seconds (tuner/search.h: the GPUs side by side, idle waits included),
winner time, and throughput = optimum / winner (the thr. columns of
bin/tune-score). Run from the repository root after make:
  results/cpu-amd-epyc-2c/archive/lanes_scaling/lanes_scaling.py tests/fixtures/tuner/sampled/manix_sampled.jsonl.gz 20 \
      > results/cpu-amd-epyc-2c/archive/lanes_scaling/lanes_scaling.jsonl
  results/cpu-amd-epyc-2c/archive/lanes_scaling/lanes_scaling.py tests/fixtures/tuner/sampled/manix_sampled.jsonl.gz 20 \
      1,2,4,8,16 local,random 30 >> results/cpu-amd-epyc-2c/archive/lanes_scaling/lanes_scaling.jsonl"""
import gzip
import json
import re
import subprocess
import sys


def optimum(path):
    op = gzip.open if path.endswith(".gz") else open
    best = float("inf")
    with op(path, "rt") as f:
        for line in f:
            r = json.loads(line)
            if r.get("status") == "ok" and r.get("kind", "result") == "result":
                best = min(best, r["metrics"]["time_ms"])
    return best


def main():
    fixture, seeds = sys.argv[1], int(sys.argv[2])
    lanes = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "1,2,4,8,16").split(",")]
    strategies = (sys.argv[4] if len(sys.argv) > 4 else "local,random").split(",")
    budget = sys.argv[5] if len(sys.argv) > 5 else "90"
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    opt = optimum(fixture)
    for st in strategies:
        for n in lanes:
            for seed in range(1, seeds + 1):
                cmd = ["bin/tune", "--replay", fixture, "--strategy", st, "--budget", budget, "--seed", str(seed),
                       "--quiet", "--no-save", "--gpus", ",".join(str(i) for i in range(n))]
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit("%s: %s" % (" ".join(cmd), out.stdout + out.stderr))
                m = re.search(r"^%s: (\d+) evaluations \((\d+) from the cache\), ([0-9.]+) s charged" % st,
                              out.stdout, re.M)
                w = re.search(r"^\s+1\s+([0-9.]+)\s", out.stdout, re.M)
                print(json.dumps({
                    "kind": "lanes_scaling", "commit": commit + ("-dirty" if dirty else ""), "fixture": fixture,
                    "strategy": st, "seed": seed, "lanes": n, "budget_s": float(budget), "evaluations": int(m.group(1)),
                    "charged_s": float(m.group(3)), "winner_ms": float(w.group(1)), "optimum_ms": opt,
                    "throughput": opt / float(w.group(1)),
                    "command": " ".join(cmd)}), flush=True)


main()
