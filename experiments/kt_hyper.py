#!/usr/bin/env python3
"""Kernel Tuner with hyperparameters tuned on the training scenes, leave one
scene out, and Kernel Tuner from vptune's start (issue 31, deliverable 4;
issue 34). Run by `experiments/kernel_tuner --tune-hyper`, which makes the
virtual environment; the selection and the standard errors are plain Python
(tested by experiments/test_experiments.py).

    kt_hyper.py --fixtures DIR --out OUT --python VENV/bin/python
                [--compile-model M --compile-threads P] [--jobs J]
                [--select-seeds 5] [--eval-seeds 20]

Phases, every run scored alone by bin/tune-score --sequences (one run's
score per seed, by time and by evaluations; vptune's scorer and replay
clock, the compile model given):
  grid     every strategy of GRID at each of its points (the first is Kernel
           Tuner's defaults) on every scene, seeds 101..100+select-seeds;
  loo      for each held-out scene: each strategy's point with the best mean
           score by time over the OTHER scenes' grid runs ("train_score"),
           then run on the held-out scene with seeds 201..200+eval-seeds
           (seeds not used in the selection); "KT best (tuned)" is the
           strategy whose chosen point has the best training score, chosen
           on the training scenes too;
  start    each strategy of START_STRATEGIES at its defaults with x0 =
           vptune's prior (the first config `bin/tune --strategy local`
           evaluates on the scene: the thesis' regenerationSK-thread's
           nearest recorded member), seeds 1..eval-seeds, and whether its
           first evaluation was that config;
  hindsight the strategy the committed default-hyperparameter run
           (results/cpu-*/kernel_tuner_sampled/kt_scores.jsonl, or kernel_tuner/
           for the 336-config spaces, or --hindsight FILE)
           found best by time on each scene, again at its defaults, seeds
           1..eval-seeds: the same runs as then, now with per-seed scores;
  vptune   bin/tune-score --leave-one-out one seed at a time (--first-seed
           s --seeds 1, s = 1..eval-seeds): the local search from the
           thesis' prior and from `tune`'s starts (thesis + transfer prior
           fitted on the other scenes), with per-seed scores.
Output: OUT/kt_tuned.jsonl, rows of kind "kt_tuned_score": "mode" (grid,
tuned_loo, same_start, default_hindsight, vptune_loo; no_start lists the
strategies not given the start and why; error, a run that failed), "scene",
"tuner", "strategy", "label" (the grid point, or vptune's start), "options",
"seeds" (the list), "score_seconds"/"score_evals"/"within_2pct_at_90s" (the
mean over the seeds of the per-seed rows of bin/tune-score) and their
standard errors "se_seconds"/"se_evals"/"se_within_2pct_at_90s";
tuned_loo adds "train_scenes", "train_score_seconds" and "kt_best_tuned";
same_start "x0" and "x0_first"; default_hindsight the committed 20-seed
scores it reproduces; "commit" is bin/tune-score's.
"""
import argparse
import concurrent.futures
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile

# Each strategy's grid: (label, strategy_options); the first point is Kernel
# Tuner 1.5.0's defaults. At most four points each, one option moved at a
# time from the defaults (their _options in kernel_tuner/strategies/*.py).
# Six of the 18 strategies that ran at their defaults: those with a main
# hyperparameter and runs of about a second or less on this machine (pso,
# bayes_opt, nsga2/3, firefly_algorithm, basinhopping take several; mls is
# greedy_mls without restarts, random_sample has no search to tune).
GRID = {
    "genetic_algorithm": [("ga", {}), ("ga:pop10", {"popsize": 10}), ("ga:pop50", {"popsize": 50}),
                          ("ga:uniform", {"method": "uniform"})],
    "diff_evo": [("de", {}), ("de:pop4", {"popsize": 4}), ("de:F0.5CR0.9", {"F": 0.5, "CR": 0.9}),
                 ("de:rand1bin", {"method": "rand1bin"})],
    "simulated_annealing": [("sa", {}), ("sa:T1", {"T": 1.0}), ("sa:T0.01", {"T": 0.01}),
                            ("sa:alpha0.99", {"alpha": 0.99})],
    "greedy_mls": [("gmls", {}), ("gmls:adjacent", {"neighbor": "adjacent"}), ("gmls:norestart", {"restart": False})],
    "dual_annealing": [("da", {}), ("da:L-BFGS-B", {"method": "L-BFGS-B"}), ("da:Powell", {"method": "Powell"})],
    "minimize": [("min", {}), ("min:COBYLA", {"method": "COBYLA"}), ("min:Powell", {"method": "Powell"}),
                 ("min:Nelder-Mead", {"method": "Nelder-Mead"})],
}
# Strategies whose Kernel Tuner 1.5.0 code reads x0 (get_start_pos /
# get_bounds_x0_eps); whether the first evaluation was x0 is measured.
START_STRATEGIES = ["genetic_algorithm", "diff_evo", "simulated_annealing", "minimize", "dual_annealing",
                    "greedy_mls", "mls", "ordered_greedy_mls"]
# The others, and why they cannot take it (from their source).
NO_START = {
    "random_sample": "rejects x0 (unsupported option)",
    "bayes_opt": "rejects x0 (unsupported option)",
    "nsga2": "rejects x0 (pymoo_minimize: unsupported option)",
    "nsga3": "rejects x0 (pymoo_minimize: unsupported option)",
    "adaptive_tabu_greywolf": "raises on x0 (not supported)",
    "hybrid_vndx": "raises on x0 (not supported)",
    "pso": "reads x0; not run here (5 s a run on this machine)",
    "firefly_algorithm": "reads x0; not run here (the time)",
    "basinhopping": "reads x0; not run here (the time)",
}


def mean_se(xs):
    """Mean and standard error of the mean (sample standard deviation /
    sqrt(n)); the error is nan for fewer than two values."""
    n = len(xs)
    if n == 0:
        return float("nan"), float("nan")
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(var / n)


def loo_select(train, scenes, order=None):
    """Leave-one-scene-out choice. train[strategy][label][scene] = mean score
    (by time) of that strategy at that grid point on that scene. For each
    held-out scene h: each strategy's label with the best mean over the
    scenes other than h (ties: the earlier label in order[strategy], else
    sorted), and the best strategy: the one whose chosen label's training
    mean is highest (ties: sorted name). Returns {h: {"choice": {strategy:
    (label, train_mean)}, "best": (strategy, label, train_mean)}}."""
    out = {}
    for h in scenes:
        others = [s for s in scenes if s != h]
        choice = {}
        for strat in sorted(train):
            labels = (order or {}).get(strat) or sorted(train[strat])
            best = None
            for lab in labels:
                vals = [train[strat][lab][s] for s in others if s in train[strat].get(lab, {})]
                if len(vals) != len(others):
                    continue  # a point that did not run on every training scene is not chosen
                m = sum(vals) / len(vals)
                if best is None or m > best[1]:
                    best = (lab, m)
            if best:
                choice[strat] = best
        top = None
        for strat in sorted(choice):
            if top is None or choice[strat][1] > top[2]:
                top = (strat, choice[strat][0], choice[strat][1])
        out[h] = {"choice": choice, "best": top}
    return out


# ---- running ---------------------------------------------------------------


def scenes_of(fixtures):
    out = {}
    for f in sorted(os.listdir(fixtures)):
        if f.endswith("_sampled.jsonl.gz"):
            out[f[: -len("_sampled.jsonl.gz")]] = os.path.join(fixtures, f)
        elif f.endswith("_exhaustive.jsonl"):
            out[f[: -len("_exhaustive.jsonl")]] = os.path.join(fixtures, f)
    return out


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("kt_hyper: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    return r


def kt_runs(a, work, tag, plans, x0=False):
    """plans: {scene: [plan entries]}; runs them (a.jobs scenes at a time)
    and returns the path of the sequences written."""
    outs = []

    def one(scene):
        plan_path = os.path.join(work, "%s_%s.plan.json" % (tag, scene))
        with open(plan_path, "w") as f:
            json.dump(plans[scene], f)
        out = os.path.join(work, "%s_%s.seq.jsonl" % (tag, scene))
        open(out, "w").close()
        cmd = [a.python, os.path.join(HERE, "kernel_tuner_hyper.py"), "--t4", os.path.join(work, scene + ".t4.json"),
               "--scene", scene, "--plan", plan_path, "--out", out]
        if x0:
            cmd += ["--x0-t4", os.path.join(work, scene + ".prior.t4.json")]
        sh(cmd)
        return out

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        outs = list(ex.map(one, [s for s in plans if plans[s]]))
    merged = os.path.join(work, tag + ".seq.jsonl")
    with open(merged, "w") as m:
        for o in outs:
            with open(o) as f:
                m.write(f.read())
    return merged


def score_runs(a, work, seq_path):
    """Scores every run alone; returns ({(scene, label): {seed: row}},
    errors, x0_first {(scene, label): [bools]})."""
    good = os.path.join(work, os.path.basename(seq_path) + ".ok")
    errors, x0_first = [], {}
    with open(seq_path) as f, open(good, "w") as g:
        for line in f:
            r = json.loads(line)
            label = r["strategy"].rsplit("#", 1)[0]
            if "x0_first" in r:
                x0_first.setdefault((r["scene"], label), []).append(r["x0_first"])
            if r.get("error") or not r["configs"]:
                errors.append((r["scene"], r["strategy"], r.get("error", "no configs")))
                continue
            g.write(line)
    js = os.path.join(work, os.path.basename(seq_path) + ".scores.jsonl")
    sh([BIN_SCORE, "--fixtures", a.fixtures, *a.compile, "--sequences", good, "--json", js])
    out = {}
    with open(js) as f:
        for line in f:
            r = json.loads(line)
            label, seed = r["strategy"].rsplit("#", 1)
            out.setdefault((r["scene"], label), {})[int(seed)] = r
    return out, errors, x0_first


def summarize(rows):
    """Mean and standard error of the per-seed rows' scores."""
    out = {"seeds": sorted(rows)}
    for k in ("score_seconds", "score_evals", "within_2pct_at_90s"):
        m, se = mean_se([rows[s][k] for s in sorted(rows)])
        out[k] = m
        out["se_" + k[len("score_"):] if k.startswith("score_") else "se_" + k] = se
    return out


HERE = os.path.dirname(os.path.abspath(__file__))
BIN_SCORE = os.path.join(HERE, "..", "bin", "tune-score")
BIN_TUNE = os.path.join(HERE, "..", "bin", "tune")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default="tests/fixtures/tuner/sampled")
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--compile-model", default="")
    ap.add_argument("--compile-threads", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--select-seeds", type=int, default=5)
    ap.add_argument("--eval-seeds", type=int, default=20)
    ap.add_argument("--hindsight", default="")
    ap.add_argument("--phases", default="grid,loo,start,hindsight,vptune")
    ap.add_argument("--strategies", default="", help="a subset of GRID's strategies")
    ap.add_argument("--vptune-from", default="", help="the vptune phase's per-seed files (DIR/loo_s<seed>.jsonl) "
                    "made before by the same command, instead of running it")
    ap.add_argument("--append", action="store_true", help="append to OUT/kt_tuned.jsonl")
    a = ap.parse_args()
    a.compile = []
    if a.compile_model:
        a.compile += ["--compile-model", a.compile_model]
    if a.compile_threads:
        a.compile += ["--compile-threads", a.compile_threads]
    phases = set(a.phases.split(","))
    grid = {k: v for k, v in GRID.items() if not a.strategies or k in a.strategies.split(",")}
    scenes = scenes_of(a.fixtures)
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kt-hyper-")
    for s, path in scenes.items():
        if phases == {"vptune"}:
            break
        sh([BIN_TUNE, "--replay", path, "--strategy", "exhaustive", "--estimators", "global", "--budget",
            "1000000evals", "--no-save", "--quiet", "--t4", os.path.join(work, s + ".t4.json")])
        sh([BIN_TUNE, "--replay", path, "--strategy", "local", "--estimators", "global", "--budget", "1evals",
            "--seed", "1", "--no-save", "--quiet", "--t4", os.path.join(work, s + ".prior.t4.json")])
    rows = []
    version = sh([BIN_SCORE, "--version"]).stdout.split("\n")[0]
    common = {"kind": "kt_tuned_score", "tuner": "kernel_tuner 1.5.0", "fixtures": a.fixtures,
              "commit": version.split("commit ")[-1].strip()}
    sel_seeds = list(range(101, 101 + a.select_seeds))
    ev_seeds = list(range(201, 201 + a.eval_seeds))
    base_seeds = list(range(1, 1 + a.eval_seeds))
    labels = {lab: (strat, opts) for strat, pts in grid.items() for lab, opts in pts}
    all_errors = []

    if "grid" in phases or "loo" in phases:
        plans = {s: [{"label": lab, "strategy": strat, "options": opts, "seeds": sel_seeds}
                     for strat, pts in grid.items() for lab, opts in pts] for s in scenes}
        sc, err, _ = score_runs(a, work, kt_runs(a, work, "grid", plans))
        all_errors += err
        train = {}
        for strat, pts in grid.items():
            for lab, _ in pts:
                for s in scenes:
                    r = sc.get((s, lab))
                    if r and len(r) == len(sel_seeds):
                        train.setdefault(strat, {}).setdefault(lab, {})[s] = summarize(r)["score_seconds"]
                    if r:
                        rows.append(dict(common, mode="grid", scene=s, strategy=strat, label=lab, options=labels[lab][1],
                                         **summarize(r)))
        order = {strat: [lab for lab, _ in pts] for strat, pts in grid.items()}
        sel = loo_select(train, list(scenes), order)
        if "loo" in phases:
            plans = {h: [{"label": lab, "strategy": strat, "options": labels[lab][1], "seeds": ev_seeds}
                         for strat, (lab, _m) in sel[h]["choice"].items()] for h in scenes}
            sc, err, _ = score_runs(a, work, kt_runs(a, work, "loo", plans))
            all_errors += err
            for h in scenes:
                best = sel[h]["best"]
                for strat, (lab, m) in sel[h]["choice"].items():
                    r = sc.get((h, lab))
                    if not r:
                        continue
                    rows.append(dict(common, mode="tuned_loo", scene=h, strategy=strat, label=lab,
                                     options=labels[lab][1], train_scenes=[s for s in scenes if s != h],
                                     train_score_seconds=m, kt_best_tuned=bool(best and best[0] == strat),
                                     **summarize(r)))
    if "start" in phases:
        plans = {s: [{"label": "x0:" + strat, "strategy": strat, "options": {}, "seeds": base_seeds,
                      "x0": True} for strat in START_STRATEGIES] for s in scenes}
        sc, err, x0f = score_runs(a, work, kt_runs(a, work, "start", plans, x0=True))
        all_errors += err
        for s in scenes:
            with open(os.path.join(work, s + ".prior.t4.json")) as f:
                prior = json.load(f)["results"][0]["configuration"]
            for strat in START_STRATEGIES:
                lab = "x0:" + strat
                r = sc.get((s, lab))
                if not r:
                    continue
                f0 = x0f.get((s, lab), [])
                rows.append(dict(common, mode="same_start", scene=s, strategy=strat, label=lab, options={},
                                 x0=prior, x0_first=sum(f0) / len(f0) if f0 else 0.0, **summarize(r)))
        rows.append(dict(common, mode="no_start", scene="-", strategies=NO_START))
    if "hindsight" in phases:
        hfile = a.hindsight or default_hindsight(a.fixtures)
        best = {}
        with open(hfile) as f:
            for line in f:
                r = json.loads(line)
                if r.get("strategy") == "brute_force" or r.get("scene") not in scenes:
                    continue
                if r["scene"] not in best or r["score_seconds"] > best[r["scene"]]["score_seconds"]:
                    best[r["scene"]] = r
        plans = {s: [{"label": "default:" + best[s]["strategy"], "strategy": best[s]["strategy"], "options": {},
                      "seeds": base_seeds}] for s in scenes if s in best}
        sc, err, _ = score_runs(a, work, kt_runs(a, work, "hindsight", plans))
        all_errors += err
        for s in plans:
            r = sc.get((s, plans[s][0]["label"]))
            if r:
                rows.append(dict(common, mode="default_hindsight", scene=s, strategy=best[s]["strategy"],
                                 label=plans[s][0]["label"], options={}, committed_score_seconds=best[s]["score_seconds"],
                                 committed_score_evals=best[s]["score_evals"], **summarize(r)))
    if "vptune" in phases:
        per = {}
        for seed in base_seeds:
            if a.vptune_from:
                collect_vptune(os.path.join(a.vptune_from, "loo_s%d.jsonl" % seed), seed, per)
                continue
            js = os.path.join(work, "vptune_%d.jsonl" % seed)
            sh([BIN_SCORE, "--fixtures", a.fixtures, *a.compile, "--leave-one-out", "--seeds", "1", "--first-seed",
                str(seed), "--json", js])
            collect_vptune(js, seed, per)
        rows += vptune_rows(per, common)
    for sc_, strat, e in all_errors:
        rows.append(dict(common, mode="error", scene=sc_, strategy=strat, error=e))
    with open(os.path.join(a.out, "kt_tuned.jsonl"), "a" if a.append else "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    import shutil
    shutil.rmtree(work, ignore_errors=True)  # the runs' orders: their scores are the rows
    print("kt_hyper: %d rows in %s (%d runs failed)" % (len(rows), os.path.join(a.out, "kt_tuned.jsonl"),
                                                         len(all_errors)))


def default_hindsight(fixtures):
    """The committed default-hyperparameter run of experiments/kernel_tuner on
    the same fixture set: the last results/cpu-*/kernel_tuner_sampled/ (for
    the sampled spaces) or kernel_tuner/ kt_scores.jsonl."""
    import glob
    which = "kernel_tuner_sampled" if "sampled" in fixtures else "kernel_tuner"
    found = sorted(glob.glob(os.path.join(HERE, "..", "results", "cpu-*", which, "kt_scores.jsonl")))
    if not found:
        sys.exit("kt_hyper: no results/cpu-*/%s/kt_scores.jsonl: run experiments/kernel_tuner first, or give "
                 "--hindsight FILE" % which)
    return found[-1]


def collect_vptune(js, seed, per):
    with open(js) as f:
        for line in f:
            r = json.loads(line)
            if r.get("strategy") == "local" and r.get("start") in ("thesis", "thesis+transfer"):
                per.setdefault((r["scene"], r["start"]), {})[seed] = r


def vptune_rows(per, common):
    rows = []
    for (scene, start), r in sorted(per.items()):
        rows.append(dict(common, tuner="vptune", mode="vptune_loo", scene=scene, strategy="local", label=start,
                         options={}, **summarize(r)))
    return rows


if __name__ == "__main__":
    main()
