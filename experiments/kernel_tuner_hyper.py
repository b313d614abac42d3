#!/usr/bin/env python3
"""Kernel Tuner's strategies with given hyperparameters and, where they take
one, a given start (run by experiments/kt_hyper.py inside the virtual
environment experiments/kernel_tuner makes; not useful alone).

    kernel_tuner_hyper.py --t4 SCENE.t4.json --scene SCENE --plan PLAN.json \\
        --out sequences.jsonl [--x0-t4 PRIOR.t4.json] [--max-fevals 200]

PLAN is a JSON list of runs to make: {"label": L, "strategy": S, "options":
{...}, "seeds": [...], "x0": true|false}. Each (label, seed) is one run of
Kernel Tuner's strategy S in its simulation mode on the scene's cache (built
as kernel_tuner_simulate.py builds it), with strategy_options = options plus
max_fevals (and x0, the first config of the PRIOR T4 file, where "x0" is
true: vptune's prior, the thesis' regenerationSK-thread as `tune` picks its
nearest recorded member). Each run is written as one line of
tuner/sequences.h with "strategy" = "L#seed" (so that bin/tune-score
--sequences scores every run alone: its score is linear in the runs', so the
mean of the per-run scores is the score of the runs together), and
"x0_first": whether the run's first evaluation was x0 (false for a strategy
that ignores x0). A run that raises or takes more than --run-limit seconds
is written with "error" and no configs, and kt_hyper.py reports it."""
import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import warnings

import numpy as np
import kernel_tuner

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_tuner_simulate as sim  # noqa: E402


class RunTimeout(Exception):
    pass


def _alarm(_sig, _frame):
    raise RunTimeout("a run took more than --run-limit seconds")


def one_run(cache_path, strategy, options, seed):
    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _env = kernel_tuner.tune_cache(cache_path, strategy=strategy, strategy_options=dict(options),
                                                quiet=True, verbose=False)
    order, seen = [], set()
    for r in results:
        if r is None:
            continue
        t = sim.config_text(r)
        if t not in seen:
            seen.add(t)
            order.append(t)
    return order


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t4", required=True)
    ap.add_argument("--scene", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--x0-t4", default="")
    ap.add_argument("--max-fevals", type=int, default=200)
    ap.add_argument("--run-limit", type=int, default=60)
    a = ap.parse_args()
    with open(a.t4) as f:
        t4 = json.load(f)
    with open(a.plan) as f:
        plan = json.load(f)
    tmp = tempfile.mkdtemp(prefix="kt-hyper-")
    cache_path = os.path.join(tmp, "%s.json" % a.scene)
    n = sim.t4_to_cache(t4, cache_path)
    x0 = x0_text = None
    if a.x0_t4:
        with open(a.x0_t4) as f:
            c = json.load(f)["results"][0]["configuration"]
        x0 = [c[k] for k in sim.KEYS_ORDER]
        x0_text = sim.config_text(c)
    tuner = "kernel_tuner %s" % kernel_tuner.__version__
    signal.signal(signal.SIGALRM, _alarm)
    with open(a.out, "a") as out:
        for p in plan:
            for seed in p["seeds"]:
                options = dict(p.get("options", {}))
                options["max_fevals"] = min(a.max_fevals, n)
                if p.get("x0"):
                    if x0 is None:
                        sys.exit("kernel_tuner_hyper: the plan asks for x0 and no --x0-t4 was given")
                    options["x0"] = x0
                row = {"kind": "sequence", "scene": a.scene, "tuner": tuner, "strategy": "%s#%d" % (p["label"], seed),
                       "seed": seed, "configs": []}
                signal.alarm(a.run_limit)
                try:
                    row["configs"] = one_run(cache_path, p["strategy"], options, seed)
                except Exception as e:  # reported by kt_hyper.py, not hidden
                    msg = str(e).splitlines()[0][:200] if str(e) else ""
                    row["error"] = "%s: %s" % (type(e).__name__, msg)
                finally:
                    signal.alarm(0)
                if p.get("x0"):
                    row["x0_first"] = bool(row["configs"]) and row["configs"][0] == x0_text
                out.write(json.dumps(row) + "\n")
                out.flush()
            print("%s %s: %d runs" % (a.scene, p["label"], len(p["seeds"])), file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
