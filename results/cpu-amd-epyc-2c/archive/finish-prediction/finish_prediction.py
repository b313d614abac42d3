#!/usr/bin/env python3
"""The finish of committed one-GPU tunes against the prediction of
tuner/finish.h, computed from the same tune's cache (issue 32: the budget
covers the finish). For each log given (a `bin/tune` log with a "wall time:"
line and its cache beside it, LOG with .log replaced by .jsonl.gz):

  - taken: the finish as it ran: the seconds from the search's start to the
    end (the log's wall time line) less the span of the cache's rows (from
    the first row's completion less its cost to the last row's completion;
    the rows' times have a resolution of one second, so taken is within
    about 2 s);
  - predicted: tuner/finish.h's formula on the cache's rows: the finalists
    (the log's table, a config taken twice by the search there twice) in 3
    rounds of (reps + 1) x time_ms plus the least overhead of any ok row,
    then naiveSK (the gate's reference variant: compiled) and
    regenerationSK-thread, each from its own row or the nearest row, with a
    compile (the mean compile_s of its schedule's rows) when not compiled;
  - measure_s: the same with each finalist's own measure_s instead (what
    the prediction does not use: it holds compile waits and estimators'
    first reference renders).

Then, over the caches of all LOGs, per schedule: the median of
measure_s - (reps + 1) x time_ms over the ok rows (what a measurement
costs beside its renders).

With --walk LOG [TOP ...]: the rows of that cache in the order they were
measured, and where the rule of tuner/tune.h (stop once the charged seconds,
the finish predicted and what the next row is expected to add reach the
budget) would have stopped that tune, for --top TOP (default 5): an
approximation, since the tune's stages (the first search's quarter, the
screenings) are not modelled, and the path after the stop is not.

Run from the repository root (no GPU needed):
  results/cpu-amd-epyc-2c/archive/finish-prediction/finish_prediction.py \\
      results/h200x4/archive/seeds-606c517/*-s*.log results/h200/archive/seeds-caplift-*/manix-s*.log \\
      results/h200x4/archive/scaling-def3fc7/*-1gpu.log \\
      --walk results/h200x4/archive/seeds-606c517/cloud-s1.log 5 2 1 \\
      > results/cpu-amd-epyc-2c/archive/finish-prediction/finish_prediction.txt"""
import datetime
import gzip
import json
import re
import sys

ROUNDS = 3
BUDGET = 90.0
NAIVE = "regen=none,reorder=none,kernels=single,maxrregcount=0,ppt=1,block=256,grid=0,threshold=0,sortkey=position,lookahead=1"
PRIOR = "regen=thread,reorder=none,kernels=single,maxrregcount=0,ppt=1,block=256,grid=0,threshold=0,sortkey=position,lookahead=1"
DEFAULTS = {"coop": "0", "flights": "sync", "paths": "sample", "majorant": "global", "density": "f32",
            "volume": "dense", "transmittance": "none"}


def fields(config):
    f = dict(DEFAULTS)
    f.update(kv.split("=", 1) for kv in config.split(","))
    return f


def distance(a, b):
    fa, fb = fields(a), fields(b)
    return sum(fa.get(k) != fb.get(k) for k in set(fa) | set(fb))


def rows_of(log):
    with gzip.open(log[:-4] + ".jsonl.gz", "rt") as f:
        return [r for r in map(json.loads, f) if r.get("kind") == "eval"]


def m(row, key):
    v = row.get("metrics", {}).get(key)
    return float(v) if v is not None else None


def has_renders(row):
    return row["status"] == "ok" and row.get("fidelity", 1) == 1 and (m(row, "reps") or 0) > 0 and \
        (m(row, "time_ms") or 0) > 0


def renders(row):
    return (m(row, "reps") + 1) * m(row, "time_ms") * 1e-3


def objective(row):
    t = m(row, "time_ms")
    if row["status"] != "ok" or not t or t <= 0:
        return float("inf")
    e = m(row, "equal_error_factor")
    return t * e if e and e > 0 else t


class Tracker:
    """tuner/finish.c's VptFinishTracker over cache rows."""

    def __init__(self, top_k):
        self.top_k, self.top, self.overhead = top_k, [], float("inf")
        self.renders_sum, self.renders_n = 0.0, 0
        self.near = {NAIVE: None, PRIOR: None}
        self.compile = {}

    def add(self, row):
        if row.get("fidelity", 1) == 1 and objective(row) < float("inf"):
            self.top = sorted(self.top + [row], key=lambda r: (objective(r), r["config"]))[:self.top_k]
        c = m(row, "compile_s") or 0
        if c > 0:
            self.compile.setdefault(row["schedule"], []).append(c)
            self.compile.setdefault("*", []).append(c)
        if not has_renders(row):
            return
        self.renders_sum += renders(row)
        self.renders_n += 1
        if m(row, "measure_s") is not None:
            self.overhead = min(self.overhead, m(row, "measure_s") - renders(row))
        for ref in self.near:
            d, n = distance(row["config"], ref), self.near[ref]
            if n is None or d < n[0] or (d == n[0] and renders(row) > renders(n[1])):
                self.near[ref] = (d, row)

    def predict(self, finalists=None):
        o = max(self.overhead, 0) if self.overhead < float("inf") else 0
        top = self.top if finalists is None else finalists
        fin = sum(ROUNDS * (renders(r) + o if has_renders(r) else m(r, "measure_s") or 0) for r in top)
        refs = 0.0
        for ref, sched, compiled in ((NAIVE, "naiveSK", True), (PRIOR, "regenerationSK-thread", False)):
            n = self.near[ref]
            if not top or n is None:
                continue
            refs += renders(n[1]) + o
            if n[0] > 0 and not compiled:
                c = self.compile.get(sched) or self.compile.get("*") or [0]
                refs += sum(c) / len(c)
        nxt = 0.0
        if len(top) < self.top_k and self.renders_n:
            nxt = ROUNDS * (self.renders_sum / self.renders_n + o)
        return fin, refs, nxt, o


def utc(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def check(log):
    text = open(log).read()
    wall = re.search(r"wall time: ([\d.]+) s: ([\d.]+) s to start.*?, ([\d.]+) s from the search", text)
    charged = re.search(r" ([\d.]+) s charged", text)
    if not wall or not charged or "side by side" in text:
        return
    table = text.split("finalists re-measured:")[1].split("against the references")[0]
    configs = re.findall(r"^\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)$", table, re.M)
    rows = rows_of(log)
    first = {}
    t = Tracker(len(configs))
    for r in rows:
        first.setdefault(r["config"], r)
        t.add(r)
    finalists = [first[c] for c in configs]
    fin, refs, _, o = t.predict(finalists)
    own = sum(ROUNDS * m(r, "measure_s") for r in finalists)
    span = max(utc(r["time"]) for r in rows) - min(utc(r["time"]) - r["cost_s"] for r in rows)
    taken = float(wall.group(3)) - span
    print("%-52s %6.1f s charged, %6.1f s wall; finish taken %5.1f s, predicted %5.1f s (finalists %5.1f s, "
          "references %4.1f s, overhead %.3f s); with measure_s %5.1f s" %
          (log, float(charged.group(1)), float(wall.group(1)), taken, fin + refs, fin, refs, o, own + refs))


def residuals(logs):
    by = {}
    for log in logs:
        if not re.search(r"wall time: ", open(log).read()):
            continue
        for r in rows_of(log):
            if has_renders(r) and m(r, "measure_s") is not None:
                by.setdefault(r["schedule"], []).append(m(r, "measure_s") - renders(r))
    for sched in sorted(by):
        v = sorted(by[sched])
        print("%-22s %5d ok rows: measure_s - (reps + 1) x time_ms, median %.3f s, 90th percentile %.3f s" %
              (sched, len(v), v[len(v) // 2], v[len(v) * 9 // 10]))


def walk(log, tops):
    rows = rows_of(log)
    for top in tops:
        t = Tracker(top)
        charged = 0.0
        stop = None
        for i, r in enumerate(rows):
            fin, refs, nxt, _ = t.predict()
            if charged + fin + refs + nxt >= BUDGET:
                stop = (i, charged, fin + refs)
                break
            charged += r["cost_s"]
            t.add(r)
        if stop is None:
            fin, refs, _, _ = t.predict()
            stop = (len(rows), charged, fin + refs)
        i, charged, finish = stop
        best = min((objective(r) for r in rows[:i]), default=float("inf"))
        print("%s, --top %d, %g s budget: stops after %d of %d rows at %.1f s charged, best %.2f ms; finish "
              "predicted %.1f s; %.1f s in all" % (log, top, BUDGET, i, len(rows), charged, best, finish,
                                                  charged + finish))


def main(argv):
    if "--walk" in argv:
        k = argv.index("--walk")
        logs, walk_log, tops = argv[:k], argv[k + 1], [int(x) for x in argv[k + 2:]] or [5]
    else:
        logs, walk_log, tops = argv, None, []
    for log in logs:
        check(log)
    residuals(logs)
    if walk_log:
        walk(walk_log, tops)


if __name__ == "__main__":
    main(sys.argv[1:])
