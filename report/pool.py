"""The pool: the rows of results/<gpu>/ the report's tables look up, and
the context every part shares (the specs, the thesis' numbers, the GPU
folder, the output, and what one part hands the next).

The pool is every experiment's output (experiments/*.spec: output) and the
tuned configurations beside the roofline (best_vs_roofline.jsonl); nothing
else under results/<gpu>/ is pooled. A measurement is identified by (scene,
canonical config, workload) for results, (scene, rays) for roofline rows,
(scene, workload) for CPU reference rows and (scene, config, workload) for
profiles; when a key was measured more than once, the newest row (by its
'time') counts. Tables and figures look rows up by the workload their
experiment's spec states, so rows of different workloads are never mixed.

The report's sessions: results/<gpu>/report_session.json (written by
scripts/report_session_collect.py from scripts/gpu_report_session.sh's
output) names the sessions (GPU UUID, commit) of one such run: one, or one
per device call when its calls landed on different cards. When it exists, a
key measured in a named session takes that session's row (the first named
session's where two measured it), whatever the time of other sessions' rows;
a key they lack falls back to the newest row of any session, and a float
showing such a row carries its \\mixedsessions mark as before. Without it,
newest wins.
"""

import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import Out, tex  # noqa: E402
import mitsuba3  # noqa: E402


def inputs(specs):
    """The pool's files, relative to results/ ({gpu}: the report's GPU
    folder): every experiment's output and the tuned configurations beside
    the roofline."""
    outputs = sorted({sp.output for sp in specs.values() if sp.pooled})
    return {POOL_EXPERIMENTS: ["{gpu}/%s.jsonl" % o for o in outputs],
            POOL_TUNED: ["{gpu}/best_vs_roofline.jsonl"],
            POOL_SESSION: ["{gpu}/" + SESSION_FILE]}


POOL_EXPERIMENTS = "report: thesis tables, figures and key numbers (the experiments' outputs)"
POOL_TUNED = "report: key numbers (tuned configs beside the roofline)"
POOL_SESSION = "report: the session its thesis tables and verdicts are built from"
SESSION_FILE = "report_session.json"


def report_session(results_dir, gpu):
    """results/<gpu>/report_session.json as a dict with "keys" added: the
    named sessions, [(GPU UUID, commit)] in the file's order ("sessions";
    a file of one session may name it as "uuid" and "commit"); None when the
    folder names no session. Exits naming the file when it names none."""
    path = os.path.join(results_dir, gpu, SESSION_FILE)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        s = json.load(f)
    keys = [(x.get("uuid"), x.get("commit")) for x in s.get("sessions") or []]
    if not keys and s.get("uuid") and s.get("commit"):
        keys = [(s["uuid"], s["commit"])]
    if not keys or not all(u and c for u, c in keys):
        raise SystemExit("report: %s names no session (GPU UUID and commit)" % path)
    s["keys"] = keys
    s.setdefault("last", max((x.get("last") or "" for x in s.get("sessions") or []), default=""))
    return s


def session_gpu(results_dir, dirs):
    """The GPU folder whose report_session.json names the newest session
    (by its rows' last time); None when no folder has one."""
    named = []
    for d in dirs:
        s = report_session(results_dir, d)
        if s is not None:
            named.append((s.get("last") or "", d))
    return max(named)[1] if named else None


def prefer_session(rows, keyfn, keys):
    """{key: row}: newest_by over rows, then, for each key a named session
    (keys, first named first) measured, that session's newest row instead."""
    best = vx.newest_by(rows, keyfn)
    for k in reversed(keys or []):
        best.update(vx.newest_by([r for r in rows if session_of(r) == k], keyfn))
    return best


def all_inputs(specs):
    """{reader label: [pattern relative to results/]} of every part that
    reads results: the pool, the front matter, Mitsuba, the estimators,
    the large volumes."""
    import estimators
    import front
    import large
    import tuner_compare
    import variance
    out = dict(inputs(specs))
    for part in (front, mitsuba3, estimators, large, tuner_compare, variance):
        out.update(part.INPUTS)
    return out


def files_read(root, gpu, specs):
    """The existing files the report reads for gpu, relative to results/."""
    out = []
    for patterns in all_inputs(specs).values():
        for p in patterns:
            out += sorted(os.path.relpath(f, os.path.join(root, "results"))
                          for f in glob.glob(os.path.join(root, "results", p.format(gpu=gpu))))
    return list(dict.fromkeys(out))


def session_of(r):
    """A row's measurement session: (GPU UUID, commit). Rows name the GPU as
    a dict with "uuid" (bench) or as nvidia-smi's "name, uuid, driver"
    text (scripts' tune rows); a CPU reference row that names the GPU of
    its host ("host_gpu", experiments/run) belongs to that GPU's session;
    another CPU row (Mitsuba on a CPU, an older CPU reference) has the UUID "-"; a GPU row that does not record its GPU (Nsight
    Compute profiles) has "?", as has a row without a commit."""
    g = r.get("gpu")
    uuid = None
    if g is None and r.get("kind") == "cpu_reference" and isinstance(r.get("host_gpu"), dict):
        g = r["host_gpu"]   # measured on the host of that GPU, in the same experiments/run call
    if isinstance(g, dict):
        uuid = g.get("uuid")
    elif isinstance(g, str):
        m = re.search(r"GPU-[0-9a-fA-F-]+", g)
        uuid = m.group(0) if m else None
    if uuid is None:
        uuid = "-" if r.get("kind") in ("cpu_reference", "mitsuba_compare") else "?"
    return (uuid, r.get("commit") or "?")


def note_session(sessions, r):
    """Counts row r in its session's record: rows, first and last time."""
    k = session_of(r)
    rec = sessions.setdefault(k, {"rows": 0, "first": None, "last": None, "gpu": None})
    rec["rows"] += 1
    t = r.get("time")
    if isinstance(t, str):
        rec["first"] = t if rec["first"] is None or t < rec["first"] else rec["first"]
        rec["last"] = t if rec["last"] is None or t > rec["last"] else rec["last"]
    g = r.get("gpu")
    if rec["gpu"] is None and g:
        rec["gpu"] = g.get("name") if isinstance(g, dict) else str(g).split(",")[0]


class Pool:
    def __init__(self, results_dir, gpu, specs):
        self.gpu = gpu
        self.dir = os.path.join(results_dir, gpu)
        self.session = report_session(results_dir, gpu)
        key = self.session["keys"] if self.session else None
        self.files = sorted(os.path.basename(p.format(gpu=gpu)) for ps in inputs(specs).values() for p in ps
                            if p.endswith(".jsonl") and os.path.exists(os.path.join(results_dir, p.format(gpu=gpu))))
        self.rows = []
        self.warnings = []
        self.by_file = {}
        for f in self.files:
            rows = vx.read_rows(os.path.join(self.dir, f), self.warnings.append)
            self.by_file[f] = rows
            self.rows.extend(rows)
        self.results = prefer_session(self.rows, vx.result_key, key)
        # the global-majorant probes (rows without "majorant" are global):
        # a grid probe (bench --roofline of grid configs) never stands in
        self.roofline = prefer_session(self.rows, lambda r: (r.get("scene"), r.get("rays"))
                                       if r.get("kind") == "roofline" and r.get("majorant", "global") == "global"
                                       else None, key)
        self.cpu = prefer_session(self.rows, lambda r: (r.get("scene"), vx.workload_key(r.get("workload", {})))
                                  if r.get("kind") == "cpu_reference" and r.get("status") == "ok" else None, key)
        self.profiles = prefer_session(self.rows, lambda r: (r.get("scene"), r.get("config"),
                                                            vx.workload_key(r.get("workload", {})))
                                       if r.get("kind") == "profile" and r.get("status") == "ok" else None, key)
        self.touched = set()
        self.other_tool = set()   # sessions of another renderer's rows (Mitsuba) among touched
        self.tuned = set()
        self.sessions = {}

    def use(self, r):
        """Records that a table or figure shows row r: its session (GPU UUID
        and commit; the float is marked when its rows span more than one,
        or when the commit is not the report's)."""
        if r is not None:
            self.touched.add(session_of(r))
            if r.get("kind") == "mitsuba_compare":
                self.other_tool.add(session_of(r))
            note_session(self.sessions, r)
        return r

    def result(self, scene, canon, wk):
        return self.use(self.results.get((scene, canon, wk)))

    def ok(self, scene, canon, wk):
        r = self.result(scene, canon, wk)
        return r if r is not None and r.get("status") == "ok" else None

    def at_workload(self, scene, wk):
        """Newest result rows of scene at workload wk."""
        return [self.use(r) for (s, c, k), r in self.results.items() if s == scene and k == wk]

    def roof(self, scene, rays):
        return self.use(self.roofline.get((scene, rays)))

    def cpu_ref(self, scene):
        rows = [r for (s, wk), r in self.cpu.items() if s == scene]
        rows.sort(key=vx.row_time)
        return self.use(rows[-1]) if rows else None

    def profile(self, scene, canon, wk):
        return self.use(self.profiles.get((scene, canon, wk)))

    def file_rows(self, name):
        """Every row of one pool file (the tuner's runs), all shown; a run's
        session is its header's (its evaluations record none)."""
        rows = self.by_file.get(name, [])
        for r in rows:
            if r.get("kind") not in ("run", "eval"):
                self.use(r)
        return rows

    def provenance(self):
        """GPU facts of the newest result or roofline row (of the report's
        session when results/<gpu>/report_session.json names one)."""
        rows = [r for r in self.rows if r.get("kind") in ("result", "roofline") and isinstance(r.get("gpu"), dict)]
        if self.session is not None:
            rows = [r for r in rows if session_of(r) in self.session["keys"]] or rows
        rows.sort(key=vx.row_time)
        return rows[-1] if rows else None


class Context:
    """What the parts share: read-only inputs, and results one part leaves
    for a later one (best, gpu_short)."""

    def __init__(self, root, gpu, out, shared_out=None):
        """The context of the report's folder gpu, writing into out; with
        shared_out (the report's Out), the context of another folder whose
        parts write into the same report (bind() before each of them)."""
        self.root = root
        self.specs = vx.load_specs(os.path.join(root, "experiments"))
        with open(os.path.join(HERE, "thesis_tables.json"), encoding="utf-8") as f:
            self.thesis = json.load(f)
        self.pool = Pool(os.path.join(root, "results"), gpu, self.specs)
        self.mitsuba = mitsuba3.MitsubaRuns(os.path.join(root, "results"), gpu)
        self.gpu = gpu
        self.main = shared_out is None
        self.out = Out(out) if self.main else shared_out
        self.roof_spec = self.specs.get("roofline")
        # The report's commit: that of its newest measurement (a `make
        # experiments` at one commit makes it every row's); floats holding
        # rows of another commit are marked (common.Out).
        newest = self.pool.provenance()
        self.commit = newest.get("commit") if newest else None
        self.gpu_name = ((newest or {}).get("gpu") or {}).get("name") or gpu
        if self.main:
            self.out.commit = self.commit
        self.seed_spreads = {}
        self.seed_spread_pct = {}
        self.transfer_others, self.transfer_default = {}, {}
        self.gpu_short = "?"
        self.best = {}
        if self.main:
            self.bind()

    def bind(self):
        """The floats written from now on are of this context's folder: their
        provenance is its pool's rows, their spread notes its tunes'; a
        folder other than the report's is named in each caption and in each
        number (check_report.py holds such a verdict to one session)."""
        o = self.out
        o.source = lambda: set(self.pool.touched)
        o.tuned_source = lambda: set(self.pool.tuned)
        o.session_key = session_of
        o.other_tool_source = lambda: set(self.pool.other_tool)
        o.spreads = self.seed_spreads
        o.folder = None if self.main else self.gpu
        o.folder_note = None if self.main else (
            "Measured on %s (\\texttt{results/%s/}): the report's own GPU has no such rows yet." %
            (tex(self.gpu_name), tex(self.gpu)))

    def begin(self):
        """A new float (or part) starts: forget the rows looked up so far."""
        self.pool.touched.clear()
        self.pool.other_tool.clear()
        self.pool.tuned.clear()

    def tuned_shown(self, scene):
        """The float being written shows a tuned winner of scene: its caption
        gets the seed spread of that scene's tunes (report/variance.py)."""
        self.pool.tuned.add(scene)

    def touch(self, rows):
        """Rows a part read itself (Mitsuba, estimators) that a float shows."""
        for r in rows:
            self.pool.use(r)

    def thesis_wk(self, scene):
        """The thesis workload of scene, as the roofline experiment states it."""
        return vx.workload_key(vx.base_workload(self.roof_spec, scene))

    def spec_for_table(self, tid):
        for s in self.specs.values():
            if s.get("thesis_table") == tid:
                return s
        return None

    def best_of(self, spec):
        """{scene: row} of the best configs spec's configs_from names."""
        best = {}
        for dep in (self.specs[n] for n in vx.dependencies(spec)):
            wanted = {s: [vx.workload_key(w) for w in vx.workloads(dep, s)] for s in dep.scenes}
            rows = [r for (s, c, k), r in self.pool.results.items() if k in wanted.get(s, [])]
            best.update(vx.best_configs(rows, scenes=dep.scenes))
        for r in best.values():
            self.pool.use(r)
        return best

    def display_order(self):
        """Thesis tables by number, then the new experiments in run order."""
        t = sorted((n for n in self.specs if self.specs[n].get("thesis_table")),
                   key=lambda n: [int(x) for x in self.specs[n].get("thesis_table").split(".")])
        return t + [n for n in vx.run_order(self.specs) if n not in t]

    def schedule_rows(self, scene):
        wk = self.thesis_wk(scene)
        out = {}
        for name in vx.SCHEDULE_NAMES:
            out[name] = self.pool.result(scene, vx.canonical(name), wk)
        return out
