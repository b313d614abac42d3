#!/usr/bin/env python3
"""Kernel Tuner's strategies in its simulation mode on a vptune recorded space
(run by experiments/kernel_tuner inside its virtual environment; not useful
alone).

    kernel_tuner_simulate.py --t4 SCENE.t4.json --scene SCENE --seeds 20 \\
        --max-fevals 200 --out sequences.jsonl [--strategies a,b,...]

The T4 file is vptune's export of the recorded space (bin/tune --replay
FIXTURE --strategy exhaustive --t4 FILE: one result per recorded config).
It becomes a Kernel Tuner cache file (its simulation mode's only input): the
T4 "configuration" keys are the tunable parameters (each with the values the
space takes), each config one cache entry keyed as Kernel Tuner keys them
(the values joined by commas) with its time in ms, and compile_time,
verification_time (0) and benchmark_time in ms from the T4 times; a config
that failed (T4 invalidity other than "correct") is stored as Kernel Tuner
stores failures (the objective set to "CompilationFailedConfig" for compile,
else "RuntimeFailedConfig"). kernel_tuner.tune_cache then infers the search
space from the cache: its restriction admits the recorded configs that did
not fail (so Kernel Tuner never proposes a failing config, where vptune's
strategies pay for the failures they meet; an advantage to Kernel Tuner).

Each strategy runs once per seed (random, numpy.random seeded with it),
with strategy_options max_fevals, its other options at Kernel Tuner's
defaults; the configs it evaluated are written in the order of their first
evaluation (a repeat costs nothing in Kernel Tuner: its cache answers it),
one JSON line per run, in the format of tuner/sequences.h, for bin/tune-score --sequences to
score with vptune's scorer. Each strategy runs in a child process; a
strategy that raises, or one of whose runs takes more than --run-limit
seconds of this machine's time (default 30: far more than most strategies
need for one run over a 336-config space), is stopped, reported on
stderr with the reason and skipped (none of its runs are written); the
summary line says which and why.
"""
import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import warnings

import multiprocessing
import queue as queue_module

import numpy as np
import kernel_tuner
from kernel_tuner.interface import strategy_map

KEYS_ORDER = None


def config_text(cfg):
    """vptune's config text of a T4/Kernel Tuner parameter dict (every key is a
    config field of codegen/config.h; the parser canonicalizes it)."""
    return ",".join("%s=%s" % (k, cfg[k]) for k in KEYS_ORDER)


def t4_to_cache(t4, path):
    global KEYS_ORDER
    results = t4["results"]
    keys = list(results[0]["configuration"].keys())
    KEYS_ORDER = keys
    values = {k: [] for k in keys}
    for r in results:
        for k in keys:
            v = r["configuration"][k]
            if v not in values[k]:
                values[k].append(v)
    for k in keys:
        values[k].sort(key=lambda v: (isinstance(v, str), v))
    cache = {}
    for r in results:
        c = r["configuration"]
        key = ",".join(str(c[k]) for k in keys)
        entry = dict(c)
        t = r["times"]
        entry["compile_time"] = float(t.get("compilation_time", 0.0))
        entry["verification_time"] = 0.0
        entry["benchmark_time"] = float(t.get("benchmark", 0.0))
        if r["invalidity"] == "correct":
            ms = [m["value"] for m in r["measurements"] if m["name"] == "time"][0]
            entry["time"] = float(ms)
            entry["times"] = [float(ms)]
        else:
            entry["time"] = "CompilationFailedConfig" if r["invalidity"] == "compile" else "RuntimeFailedConfig"
        cache[key] = entry
    doc = {"device_name": "vptune-recording", "kernel_name": "vptune", "problem_size": [1],
           "tune_params_keys": keys, "tune_params": values, "objective": "time", "cache": cache}
    with open(path, "w") as f:
        json.dump(doc, f)
    product = 1
    for k in keys:
        product *= len(values[k])
    if product > BUILD_LIMIT:
        use_recorded_space(doc)
    return len(cache)


# Above this many members of the Cartesian product of the parameters' values,
# the space is given to Kernel Tuner already built (see use_recorded_space).
BUILD_LIMIT = 1000000


def use_recorded_space(doc):
    """Kernel Tuner builds its search space by solving its restriction over the
    Cartesian product of the parameters' values. A recorded sample of vptune's
    full space (tests/fixtures/tuner/sampled/: ~2,600 configs of 14
    parameters, a product of ~10^8) takes python-constraint minutes per run,
    so every strategy hit the run limit before its first evaluation. Kernel
    Tuner's Searchspace has a documented way to skip that construction
    (from_cache: the members are the cache's configs, exactly the set the
    inferred restriction admits); tune_kernel does not expose it, so the
    class it instantiates is replaced by one that passes the cache. Used only
    above BUILD_LIMIT, so the 336-config spaces are built as before."""
    import kernel_tuner.interface as ki
    from kernel_tuner.searchspace import Searchspace

    class RecordedSpace(Searchspace):
        def __init__(self, tune_params, restrictions, max_threads, **options):
            super().__init__(None, None, None, from_cache=doc, **options)
            self.max_threads = max_threads

    ki.Searchspace = RecordedSpace


def run(cache_path, strategy, seed, max_fevals):
    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # brute_force takes no options: it evaluates the whole space
        options = {} if strategy == "brute_force" else {"max_fevals": max_fevals}
        results, _env = kernel_tuner.tune_cache(cache_path, strategy=strategy, strategy_options=options,
                                                quiet=True, verbose=False)
    # each config at its first evaluation: a repeat is answered from Kernel
    # Tuner's cache at no cost, and the scorer counts first evaluations only
    order, seen = [], set()
    for r in results:
        if r is None:
            continue
        t = config_text(r)
        if t not in seen:
            seen.add(t)
            order.append(t)
    return order


def worker(cache_path, keys, strategy, seeds, max_fevals, queue):
    """One strategy's runs in a child process, each run's order (or its
    error) put on the queue as it ends."""
    global KEYS_ORDER
    KEYS_ORDER = keys
    for seed in range(1, seeds + 1):
        try:
            queue.put(("ok", seed, run(cache_path, strategy, seed, max_fevals)))
        except Exception as e:  # reported by the parent, not hidden
            msg = str(e).splitlines()[0][:200] if str(e) else ""
            queue.put(("error", seed, "%s: %s" % (type(e).__name__, msg)))
            return


def run_strategy(cache_path, strategy, seeds, max_fevals, limit_s):
    """The runs of one strategy, or raises RuntimeError with the reason: a
    run that raised, or one that took more than limit_s seconds (the child
    is then terminated)."""
    queue = multiprocessing.Queue()
    p = multiprocessing.Process(target=worker, args=(cache_path, KEYS_ORDER, strategy, seeds, max_fevals, queue))
    p.start()
    orders = []
    try:
        for _ in range(seeds):
            try:
                status, seed, value = queue.get(timeout=limit_s)
            except queue_module.Empty:
                raise RuntimeError("RunTimeout: a run took more than %d s of this machine's time (--run-limit)"
                                   % limit_s)
            if status == "error":
                raise RuntimeError(value)
            orders.append((seed, value))
    finally:
        if p.is_alive():
            p.terminate()
        p.join()
    return orders


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t4", required=True)
    ap.add_argument("--scene", required=True)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--max-fevals", type=int, default=200)
    ap.add_argument("--out", required=True)
    ap.add_argument("--strategies", default="")
    ap.add_argument("--run-limit", type=int, default=30)
    a = ap.parse_args()
    with open(a.t4) as f:
        t4 = json.load(f)
    tmp = tempfile.mkdtemp(prefix="kt-cache-")
    cache_path = os.path.join(tmp, "%s.json" % a.scene)
    n = t4_to_cache(t4, cache_path)
    strategies = [s for s in a.strategies.split(",") if s] or sorted(strategy_map.keys())
    tuner = "kernel_tuner %s" % kernel_tuner.__version__
    failed = {}
    with open(a.out, "a") as out:
        for s in strategies:
            t0 = time.time()
            try:
                orders = run_strategy(cache_path, s, a.seeds, min(a.max_fevals, n), a.run_limit)
            except RuntimeError as e:
                failed[s] = str(e)
                print("kernel_tuner_simulate: %s on %s: %s" % (s, a.scene, failed[s]), file=sys.stderr)
                continue
            lines = [json.dumps({"kind": "sequence", "scene": a.scene, "tuner": tuner, "strategy": s, "seed": seed,
                                 "configs": order}) for seed, order in orders]
            out.write("".join(l + "\n" for l in lines))
            out.flush()
            print("%s %s: %d runs, %.1f s" % (a.scene, s, len(lines), time.time() - t0), file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"kind": "kt_summary", "scene": a.scene, "tuner": tuner, "configs": n,
                      "strategies": [s for s in strategies if s not in failed], "failed": failed}))


if __name__ == "__main__":
    main()
