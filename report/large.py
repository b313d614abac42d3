"""The report's large-volumes part (issue 17): the thesis' schedules, the
sorting variants and the estimators on one head at 128^3 to 1024^3, Nsight
Compute's hit rates behind them, and the tunes of 1024-wide volumes.
Tables, a figure and number macros only; the argument is prose in
report.tex, which cites the macros. The docs' tables of the same results
(docs/findings/large-volumes.md, scripts/readme_tables.py) are built from this module's tables too, so the
two never compute a number differently.

    large_schedules.jsonl   experiments/run large_schedules: the nine thesis
                            schedules, the sorting variants, u8 texels and
                            the majorant grid, the cranium-tuned config and
                            the roofline probes (f32 and u8) per size
    large_coherence.jsonl   experiments/run large_coherence: Nsight Compute
                            at head256 and head1024
    large/*-tune-<all|global>-<budget>-<commit>.jsonl
                            tune caches: every evaluation of a tune with
                            every estimator (all) or the thesis' (global)
    large/*-winners-*.jsonl the two winners re-measured in one bench session
    large/*-cell-sizes-*.jsonl, large/cranium-sizes-probe-*.jsonl
                            bench runs on the real CT (cranium.mhd, 1x, 2x
                            and 4x upsampled)

A table here is (header, [row]) where a row is a list of plain-text cells or
("section", title); to_latex() typesets it, readme_tables.py writes it as
Markdown.
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
sys.path.insert(0, HERE)
import vptexp as vx  # noqa: E402
from common import figure_env, gp_header, gp_str, macro_name, row_noise, tex  # noqa: E402

SIZES = ("head128", "head256", "head512", "head1024")
# The configuration tuned on the real 1024-wide CT (cranium.mhd upsampled
# 4x, the 4-minute tune), as large_schedules.spec lists it.
TUNED = ("regen=warp,reorder=none,kernels=single,maxrregcount=64,ppt=1,block=1024,grid=1,threshold=75,"
         "sortkey=position,lookahead=1,majorant=grid32,density=u8")
# (key, label, config) of the rows of the per-size table, in its order
CONFIGS = [
    ("thread", "regenerationSK-thread", "regenerationSK-thread"),
    ("compaction", "streamingSK (compaction)", "streamingSK"),
    ("morton", "streamingSK-morton", "streamingSK-morton"),
    ("sorting", "sortingSK", "sortingSK"),
    ("mortonTermination", "streamingSK-morton, sortkey=termination", "streamingSK-morton,sortkey=termination"),
    ("mortonBlock", "streamingSK-morton, block=1024", "streamingSK-morton,block=1024"),
    ("threadU", "regenerationSK-thread", "regenerationSK-thread,density=u8"),
    ("compactionU", "streamingSK", "streamingSK,density=u8"),
    ("mortonU", "streamingSK-morton", "streamingSK-morton,density=u8"),
    ("threadGrid", "regenerationSK-thread", "regenerationSK-thread,majorant=grid32,density=u8"),
    ("compactionGrid", "streamingSK", "streamingSK,majorant=grid32,density=u8"),
    ("mortonGrid", "streamingSK-morton", "streamingSK-morton,majorant=grid32,density=u8"),
    ("tuned", "regenerationSK-warp, maxrregcount=64, block=1024, grid=1, threshold=75, grid32, u8", TUNED),
]
CANON = {k: vx.canonical(c) for k, _, c in CONFIGS}
SECTIONS = {"thread": "f32 texels, global majorant (the thesis' estimator): ms",
            "threadU": "u8 texels, global majorant: ms",
            "threadGrid": "u8 texels, majorant=grid32: ms",
            "tuned": "the configuration tuned on the 1024-wide real CT (the cranium-tuned config): ms"}
# the Nsight Compute columns: (header, function of the metrics)
PROFILE = [
    ("L1 tex hit %", lambda m: m["l1tex__t_sector_pipe_tex_mem_texture_op_tex_hit_rate.pct"], "%.1f"),
    ("sectors per request", lambda m: m["l1tex__t_sectors_pipe_tex_mem_texture.sum"]
     / m["l1tex__t_requests_pipe_tex_mem_texture.sum"], "%.2f"),
    ("tex sectors (M)", lambda m: m["l1tex__t_sectors_pipe_tex_mem_texture.sum"] / 1e6, "%.0f"),
    ("L2 hit %", lambda m: m["lts__t_sector_hit_rate.pct"], "%.1f"),
    ("threads per instruction", lambda m: m["smsp__thread_inst_executed_per_inst_executed.ratio"], "%.1f"),
    ("warps active %", lambda m: m["sm__warps_active.avg.pct_of_peak_sustained_active"], "%.1f"),
]
PROFILED = ["thread", "compaction", "morton", "sorting", "threadGrid", "mortonGrid"]
TUNE_FILE = re.compile(r"(?P<stem>.+)-tune-(?P<set>all|global)-(?P<budget>\d+[sm])-(?P<commit>[0-9a-f]{7})\.jsonl$")
INPUTS = {"report: large volumes (issue 17)": ["{gpu}/large_schedules.jsonl", "{gpu}/large_coherence.jsonl",
                                               "{gpu}/large/*.jsonl"]}


def word(key):
    """A CONFIGS key as a macro word: threadGrid -> Thread-Grid (macro_name
    then capitalizes each part)."""
    return re.sub(r"([A-Z])", r"-\1", key)


def read_rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def estimator_of(config):
    m = re.search(r"majorant=(\w+)", config)
    d = re.search(r"density=(\w+)", config)
    return "%s:%s" % (m.group(1) if m else "global", d.group(1) if d else "f32")


def metric(r, name):
    v = (r or {}).get("metrics", {}).get(name)
    return v if isinstance(v, (int, float)) else None


def steps_per_ray(r):
    s, n = metric(r, "steps"), metric(r, "rays")
    return s / n if s is not None and n else None


def gsteps(r):
    """Woodcock steps per second of a result or eval row, in G."""
    s, t = metric(r, "steps"), metric(r, "time_ms")
    return s / t / 1e6 if s is not None and t else metric(r, "gsteps_per_s")


def fmt(x, f="%.2f", none="--"):
    return f % x if isinstance(x, (int, float)) else none


def budget_text(b):
    return b[:-1] + (" s" if b.endswith("s") else " min")


def rooflines(rows):
    """{(scene, rays, density, majorant): newest roofline row}; rows from
    before the formats (the grid probes) have no "density" ("majorant") and
    are f32 (global)."""
    return vx.newest_by(rows, lambda r: (r.get("scene"), r.get("rays"), r.get("density") or "f32",
                                         r.get("majorant") or "global")
                        if r.get("kind") == "roofline" else None)


def own_probe(coherent, estimator):
    """(Gsteps/s, "majorant:format" or "format") of the probe a config of
    estimator ("majorant:format") is measured against: the probe of its own
    majorant and format (bench --roofline measures it), else, for a grid
    config measured before the grid probes existed, the global probe of its
    format, named by its format alone as before. coherent(density, majorant)
    is a probe's Gsteps/s or None."""
    m, d = estimator.split(":")
    g = coherent(d, m)
    if g is not None or m == "global":
        return g, d if m == "global" else estimator
    return coherent(d, "global"), d


class Sizes:
    """The rows of large_schedules.jsonl: per size, each configuration's
    newest ok row and the roofline probes."""

    def __init__(self, rows):
        self.rows = [r for r in rows if r.get("kind") in ("result", "roofline")]
        self.results = vx.newest_by(rows, lambda r: (r.get("scene"), vx.row_config(r))
                                    if r.get("kind") == "result" else None)
        self.roof = rooflines(rows)
        self.used = []

    def get(self, scene, key=None, canon=None):
        r = self.results.get((scene, canon or CANON[key]))
        if r is not None and r.get("status") == "ok":
            self.used.append(r)
            return r
        return None

    def ms(self, scene, key):
        return metric(self.get(scene, key), "time_ms")

    def roofline(self, scene, rays, density="f32", majorant="global"):
        r = self.roof.get((scene, rays, density, majorant))
        if r is not None:
            self.used.append(r)
        return metric(r, "gsteps_per_s")

    def best_thesis(self, scene):
        """(schedule, row) of the fastest of the nine thesis schedules."""
        found = [(n, self.get(scene, canon=vx.canonical(n))) for n in vx.SCHEDULE_NAMES]
        found = [(n, r) for n, r in found if metric(r, "time_ms") is not None]
        return min(found, key=lambda nr: nr[1]["metrics"]["time_ms"]) if found else (None, None)

    def fastest(self, scene):
        rs = [r for (s, _), r in self.results.items() if s == scene and r.get("status") == "ok"
              and metric(r, "time_ms") is not None]
        r = min(rs, key=lambda r: r["metrics"]["time_ms"]) if rs else None
        if r is not None:
            self.used.append(r)
        return r

    def roofline_shares(self, scene, r):
        """(actual, equivalent) fractions of the coherent roofline for row r:
        its own Woodcock steps/s over the coherent probe of its estimator
        (own_probe); and the steps regenerationSK-thread takes with the global
        majorant and f32 texels (the thesis' estimator) per r's time, over
        the f32 coherent probe."""
        return shares(r, self.get(scene, "thread"), lambda d, m="global": self.roofline(scene, "coherent", d, m))


def shares(r, thread, coherent):
    """roofline_shares for row r, thread's steps, and coherent(density,
    majorant="global") the coherent probe's Gsteps/s of an estimator."""
    if r is None:
        return None, None
    own, roof = gsteps(r), own_probe(coherent, estimator_of(r["config"]))[0]
    actual = own / roof if own and roof else None
    steps, t, roof32 = metric(thread, "steps"), metric(r, "time_ms"), coherent("f32")
    equiv = steps / t / 1e6 / roof32 if steps and t and roof32 else None
    return actual, equiv


def pct(x):
    return fmt(100 * x if x is not None else None, "%.1f%%")


def ratio(a, b):
    return a / b if a and b else None


def sizes_table(sz):
    """Table (a): each configuration's ms per size, the probes, the ratios."""
    head = [""] + list(SIZES)
    rows = []

    def line(label, f):
        rows.append([label] + [f(s) for s in SIZES])
    line("f32 texture", lambda s: _bytes((sz.get(s, "thread") or {}).get("volume", {}).get("bytes")))
    line("steps/ray: global majorant / grid32", lambda s: "%s / %s" % (
        fmt(steps_per_ray(sz.get(s, "thread"))), fmt(steps_per_ray(sz.get(s, "threadGrid")))))
    for rays, label in (("random", "random rays"), ("camera", "camera tiles"), ("coherent", "one-voxel bundles")):
        line("roofline, %s: Gsteps/s f32 / u8" % label, lambda s, rays=rays: "%s / %s" % (
            fmt(sz.roofline(s, rays), "%.1f"), fmt(sz.roofline(s, rays, "u8"), "%.1f")))
    for key, label, _ in CONFIGS:
        if key in SECTIONS:
            rows.append(("section", SECTIONS[key]))
        line(label, lambda s, key=key: fmt(sz.ms(s, key)))
        if key == "thread":
            line("best of the nine thesis schedules (regenerationSK-...)", lambda s: "%s (%s)" % (
                fmt(metric(sz.best_thesis(s)[1], "time_ms")),
                re.sub(r"^regenerationSK-", "", sz.best_thesis(s)[0] or "--")))
    rows.append(("section", "ratios and shares"))
    for key, label in (("compaction", "streamingSK"), ("morton", "streamingSK-morton"),
                       ("mortonBlock", "streamingSK-morton, block=1024")):
        line("%s / regenerationSK-thread" % label, lambda s, key=key: fmt(ratio(sz.ms(s, key), sz.ms(s, "thread")),
                                                                       "%.2fx"))
    line("grid32,u8 / u8 alone (regenerationSK-thread)",
         lambda s: fmt(ratio(sz.ms(s, "threadGrid"), sz.ms(s, "threadU")), "%.2fx"))
    line("regenerationSK-thread / fastest measured", lambda s: fmt(ratio(sz.ms(s, "thread"),
                                                                         metric(sz.fastest(s), "time_ms")), "%.2fx"))
    line("cranium-tuned: its steps/s over the u8 coherent roofline",
         lambda s: pct(sz.roofline_shares(s, sz.get(s, "tuned"))[0]))
    line("cranium-tuned: global-majorant steps/s over the f32 coherent roofline",
         lambda s: pct(sz.roofline_shares(s, sz.get(s, "tuned"))[1]))
    return head, rows


def _bytes(n):
    if not isinstance(n, (int, float)):
        return "--"
    return "%.0f MB" % (n / 1e6) if n < 1e9 else "%.2f GB" % (n / 1e9)


def key_of(canon):
    for k, c in CANON.items():
        if c == canon:
            return k
    return None


def label_of(canon):
    k = key_of(canon)
    if k is None:
        return vx.describe_config(canon)
    label = dict((a, b) for a, b, _ in CONFIGS)[k]
    est = estimator_of(canon)
    return label if est == "global:f32" or k == "tuned" else "%s, %s" % (label, est)


def profiles(rows):
    """{(scene, canonical config): newest ok profile row}."""
    return vx.newest_by(rows, lambda r: (r.get("scene"), vx.row_config(r))
                        if r.get("kind") == "profile" and r.get("status") == "ok" else None)


def coherence_table(rows):
    """Table (b): Nsight Compute per size and configuration."""
    prof = profiles(rows)
    head = ["scene", "config"] + [h for h, _, _ in PROFILE]
    out, used = [], []
    for scene in SIZES:
        for key in PROFILED:
            r = prof.get((scene, CANON[key]))
            if r is None:
                continue
            used.append(r)
            cells = []
            for _, f, form in PROFILE:
                try:
                    cells.append(form % f(r["metrics"]))
                except (KeyError, TypeError, ZeroDivisionError):
                    cells.append("--")
            out.append([scene, label_of(CANON[key])] + cells)
    return head, out, used


def profile_metric(rows, scene, key, column):
    r = profiles(rows).get((scene, CANON[key]))
    f = dict((h, g) for h, g, _ in PROFILE)[column]
    try:
        return f(r["metrics"]) if r else None
    except (KeyError, TypeError, ZeroDivisionError):
        return None


class Tune:
    """One tune cache (vptune.tune/1): its header, its ok evaluations, the
    best of them, and the thesis default's evaluation in it."""

    def __init__(self, path, rows):
        m = TUNE_FILE.match(os.path.basename(path))
        self.path, self.set, self.budget = path, m.group("set"), m.group("budget")
        self.header = next((r for r in rows if r.get("kind") == "header"), {})
        self.scene, self.commit = self.header.get("scene"), self.header.get("commit")
        evals = [r for r in rows if r.get("kind") == "eval"]
        self.evaluations = len(evals)
        self.seconds = int(self.budget[:-1]) * (60 if self.budget.endswith("m") else 1)
        self.last = max((r.get("time") or "" for r in evals), default="")
        self.charged = sum(r.get("cost_s") or 0 for r in evals)
        ok = [r for r in evals if r.get("status") == "ok" and metric(r, "time_ms") is not None]
        self.best = min(ok, key=lambda r: r["metrics"]["time_ms"]) if ok else None
        thread = vx.canonical("regenerationSK-thread")
        self.thread = next((r for r in ok if vx.row_config(r) == thread), None)


def tunes(files):
    """[Tune] of the tune caches among files ({path: rows}), by volume,
    estimator set, commit."""
    out = [Tune(p, rs) for p, rs in files.items() if TUNE_FILE.match(os.path.basename(p))]
    return sorted(out, key=lambda t: (t.scene or "", t.set, t.commit or "", t.budget))


def global_tune(ts, t):
    """The thesis-estimator tune that t (a tune with every estimator) is
    compared with: the same volume, the same commit if there is one."""
    cands = [g for g in ts if g.set == "global" and g.scene == t.scene and g.best is not None]
    same = [g for g in cands if g.commit == t.commit]
    return (same or cands or [None])[0]


def main_tunes(ts):
    """{(volume, estimator set): the tune the prose cites}: the longest
    budget, then the newest."""
    out = {}
    for t in ts:
        if t.best is None:
            continue
        k = (t.scene, t.set)
        if k not in out or (t.seconds, t.last) > (out[k].seconds, out[k].last):
            out[k] = t
    return out


def tunes_table(ts):
    """Table (c), first part: each tune with every estimator against the
    thesis-estimator tune of the same volume."""
    head = ["volume", "tune (every estimator)", "best ms", "its estimator", "steps per ray", "evaluations",
            "global:f32 tune", "best ms", "ratio"]
    rows = []
    for t in ts:
        if t.set != "all" or t.best is None:
            continue
        g = global_tune(ts, t)
        rows.append([t.scene, "%s, %s" % (budget_text(t.budget), t.commit[:7]), fmt(metric(t.best, "time_ms")),
                     estimator_of(t.best["config"]), fmt(steps_per_ray(t.best)), str(t.evaluations),
                     "%s, %s, %d evaluations, %.0f s charged" % (budget_text(g.budget), g.commit[:7], g.evaluations,
                                                                 g.charged) if g else "--",
                     fmt(metric(g.best, "time_ms")) if g else "--",
                     fmt(ratio(metric(g.best, "time_ms"), metric(t.best, "time_ms")), "%.2fx") if g else "--"])
    return head, rows


def bench_rows(rows):
    return [r for r in rows if r.get("kind") == "result" and r.get("status") == "ok"]


def roofline_table(ts, sz, rooflines_by_scene):
    """Table (c), second part: the tuned configurations' share of the
    coherent roofline, both ways (see Sizes.roofline_shares)."""
    head = ["tuned config", "volume", "ms", "steps per ray", "its Gsteps/s", "coherent roofline, its format",
            "share", "global-majorant Gsteps/s", "coherent roofline, f32", "share"]
    rows, out = [], []
    cands = [("the cranium-tuned config (large_schedules)", "head1024", sz.get("head1024", "tuned"),
              sz.get("head1024", "thread"))]
    for t in ts:
        if t.set == "all" and t.best is not None:
            cands.append(("%s tune, %s" % (budget_text(t.budget), t.commit[:7]), t.scene, t.best,
                          t.thread or sz.get(t.scene, "thread")))
    for label, scene, r, thread in cands:
        if r is None:
            continue

        def coherent(d, m="global", scene=scene):
            return metric(rooflines_by_scene.get((scene, "coherent", d, m)), "gsteps_per_s")
        actual, equiv = shares(r, thread, coherent)
        roof, which = own_probe(coherent, estimator_of(r["config"]))
        steps, t = metric(thread, "steps"), metric(r, "time_ms")
        g_equiv = steps / t / 1e6 if steps and t else None
        rows.append([label, scene, fmt(metric(r, "time_ms")), fmt(steps_per_ray(r)), fmt(gsteps(r)),
                     "%s (%s)" % (fmt(roof, "%.1f"), which), pct(actual), fmt(g_equiv),
                     fmt(coherent("f32"), "%.1f"), pct(equiv)])
        out.append((label, scene, r, actual, equiv))
    return head, rows, out


def probe_table(rows):
    """The real CT at 1x, 2x, 4x: the schedule its thesis-estimator 90 s
    tune chose at 1x (estimators/cranium-winners.jsonl's global row) with
    each majorant and format, then the thesis schedules."""
    res = bench_rows(rows)
    scenes = sorted({r["scene"] for r in res}, key=lambda s: (len(s), s))
    by = {(r["scene"], r["config"]): r for r in res}
    head = ["config: ms (steps/ray)"] + scenes
    out, section = [], None
    for c in dict.fromkeys(r["config"] for r in res):
        name = vx.schedule_name(c)
        est = estimator_of(c)
        plain = re.sub(r",majorant=\w+|,density=\w+", "", c)
        if plain != vx.canonical(name):
            title = "%s (the global:f32 tune's winner at 1x) with each estimator" % vx.describe_config(plain)
            label = est
        else:
            title, label = "thesis schedules", "%s, %s" % (name, est)
        if title != section:
            out.append(("section", title))
            section = title
        out.append([label] + ["%s (%s)" % (fmt(metric(by[(s, c)], "time_ms")), fmt(steps_per_ray(by[(s, c)])))
                              if (s, c) in by else "--" for s in scenes])
    return head, out


def col(width):
    """A right-aligned column of the given width whose header may wrap."""
    return ">{\\raggedleft\\arraybackslash}p{%s}" % width


def lcol(width):
    """A left-aligned column of the given width, its text wrapped."""
    return ">{\\raggedright\\arraybackslash}p{%s}" % width


def to_latex(head, rows, spec=None):
    spec = spec or "@{}l" + "r" * (len(head) - 1) + "@{}"
    out = ["\\begin{tabular}{%s}" % spec, "\\toprule", " & ".join(tex(h) for h in head) + " \\\\", "\\midrule"]
    for r in rows:
        if isinstance(r, tuple):
            # a section title over the empty row, of no width: it never widens a column
            out.append("\\addlinespace\\multicolumn{1}{@{}l}{\\rlap{\\emph{%s}}}%s \\\\" % (tex(r[1]),
                                                                                  " &" * (len(head) - 1)))
        else:
            out.append(" & ".join(tex(c) for c in r) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(out)


def to_markdown(head, rows):
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        if isinstance(r, tuple):
            out.append("| **%s** |%s" % (r[1], " |" * (len(head) - 1)))
        else:
            out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)


def provenance(r):
    g = r.get("gpu") or {}
    return "%s (driver %s), NVRTC %s" % (g.get("name", "?"), g.get("driver") or r.get("driver", "?"),
                                         r.get("nvrtc", "?"))


# ------------------------------------------------------------ the report's part

def _table(ctx, name, label, caption, body, rows_used, size="\\small"):
    ctx.begin()
    ctx.touch(rows_used)
    ctx.out.write(name, "\\begin{table}[tbp]\\centering%s\n\\caption{%s}\\label{%s}\n%s\n\\end{table}\n"
                  % (size, caption, label, body))


def _missing(ctx, name, env, label, what):
    ctx.begin()
    ctx.out.write(name, "\\begin{%s}[tbp]\\centering\\caption{Not measured on this GPU: no results/%s/%s.}"
                  "\\label{%s}\\end{%s}\n" % (env, tex(ctx.gpu), tex(what), label, env))


def write(ctx):
    """Writes tab_large_sizes.tex, tab_large_coherence.tex,
    tab_large_tunes.tex, tab_large_cranium.tex and fig_large.{tex,gp,dat}
    into ctx.out, with the numbers the prose's verdicts cite:
    large<Size><Key>Ms for every size and configuration of CONFIGS
    (largeHeadOneZeroTwoFourMortonMs), large<Volume>TuneAllMs and
    large<Volume>TuneGlobalMs for the newest tunes of each 1024-wide volume,
    and plain macros for steps, ratios, shares and hit rates ("--" where this
    GPU has no such row)."""
    out = ctx.out
    base = os.path.join(ctx.root, "results", ctx.gpu)
    numbers, macros = {}, {}
    for s in SIZES:
        for k in CANON:
            numbers[macro_name("large", s, word(k), "ms")] = (None, 0.0)
        for k in ("StepsGlobal", "StepsGrid", "Speedup", "MortonRatio", "MortonBlockRatio", "CompactionRatio",
                  "GridRatio", "TunedActual", "TunedEquiv", "BestThesis", "BestThesisMs"):
            macros[macro_name("large", s) + k] = "--"
    for s in ("head256", "head1024"):
        for k in PROFILED:
            for suffix in ("LOne", "LTwo", "Tpi", "Spr", "Sectors"):
                macros[macro_name("largeCoh", s, word(k)) + suffix] = "--"
    for v in ("cranium.mhd@up4", "head1024", "cloud1024"):
        for st in ("all", "global"):
            numbers[macro_name("large", v, "tune", st, "ms")] = (None, 0.0)
        macros[macro_name("large", v, "tune", "ratio")] = "--"
        macros[macro_name("large", v, "tune", "budget")] = "--"
        macros[macro_name("large", v, "tune", "estimator")] = "--"
    for k in ("WinnersAllMs", "WinnersGlobalMs", "WinnersRatio", "CraniumTunedActual", "CraniumTunedEquiv",
              "HeadTunedRatioGlobal"):
        macros["large" + k] = "--"
    try:
        _write(ctx, base, numbers, macros)
    finally:
        for name, value in sorted(macros.items()):
            out.macro(name, value)
        for name, (value, noise, *rest) in sorted(numbers.items()):
            out.number(name, value, lambda x: "%.2f" % x, noise, "lower", rows=rest[0] if rest else None)


def _write(ctx, base, numbers, macros):
    rows = ctx.pool.by_file.get("large_schedules.jsonl", [])
    sz = Sizes(rows)
    if not sz.results:
        for name, env, label in (("tab_large_sizes.tex", "table", "tab:largesizes"),
                                 ("fig_large.tex", "figure", "fig:large")):
            _missing(ctx, name, env, label, "large_schedules.jsonl (experiments/run large_schedules)")
    else:
        for s in SIZES:
            for k in CANON:
                r = sz.get(s, k)
                if metric(r, "time_ms") is not None:
                    numbers[macro_name("large", s, word(k), "ms")] = (r["metrics"]["time_ms"], row_noise(r), [r])
            m = macro_name("large", s)
            macros[m + "StepsGlobal"] = fmt(steps_per_ray(sz.get(s, "thread")))
            macros[m + "StepsGrid"] = fmt(steps_per_ray(sz.get(s, "threadGrid")))
            macros[m + "Speedup"] = fmt(ratio(sz.ms(s, "thread"), metric(sz.fastest(s), "time_ms")))
            macros[m + "MortonRatio"] = fmt(ratio(sz.ms(s, "morton"), sz.ms(s, "thread")))
            macros[m + "MortonBlockRatio"] = fmt(ratio(sz.ms(s, "mortonBlock"), sz.ms(s, "thread")))
            macros[m + "CompactionRatio"] = fmt(ratio(sz.ms(s, "compaction"), sz.ms(s, "thread")))
            macros[m + "GridRatio"] = fmt(ratio(sz.ms(s, "threadGrid"), sz.ms(s, "threadU")))
            a, e = sz.roofline_shares(s, sz.get(s, "tuned"))
            macros[m + "TunedActual"] = fmt(100 * a if a else None, "%.1f")
            macros[m + "TunedEquiv"] = fmt(100 * e if e else None, "%.0f")
            name, best = sz.best_thesis(s)
            macros[m + "BestThesis"] = tex(name or "--")
            macros[m + "BestThesisMs"] = fmt(metric(best, "time_ms"))
        sz.used = []
        head, trows = sizes_table(sz)
        commits = sorted({r.get("commit") for r in sz.used})
        _table(ctx, "tab_large_sizes.tex", "tab:largesizes",
               "One head (\\texttt{head<N>}: the same content band-limited to each grid) at $128^3$ to $1024^3$, "
               "400$\\times$400, 100\\,spp: the roofline probes (Gsteps/s), each schedule's time (ms) with the "
               "thesis' estimator, with u8 texels and with a majorant grid of 32-voxel cells, and the "
               "configuration tuned on the real 1024-wide CT. Shares of the coherent roofline: the config's own "
               "Woodcock steps per second over the u8 probe's, and the steps the thesis' estimator takes "
               "(regenerationSK-thread, f32, global majorant) per the config's time over the f32 probe's. "
               "\\texttt{large\\_schedules.jsonl}, commit %s." % tex(", ".join(commits)),
               to_latex(head, trows, "@{}" + lcol("0.36\\linewidth") + col("2.2cm") * 4 + "@{}"), sz.used, "\\scriptsize")
        _figure(ctx, sz)
    # Nsight Compute
    prows = ctx.pool.by_file.get("large_coherence.jsonl", [])
    head, crows, used = coherence_table(prows)
    if not crows:
        _missing(ctx, "tab_large_coherence.tex", "table", "tab:largecoherence",
                 "large_coherence.jsonl (experiments/run large_coherence)")
    else:
        for s in ("head256", "head1024"):
            for k in PROFILED:
                m = macro_name("largeCoh", s, word(k))
                for suffix, header, f in (("LOne", "L1 tex hit %", "%.1f"), ("LTwo", "L2 hit %", "%.1f"),
                                       ("Tpi", "threads per instruction", "%.1f"), ("Spr", "sectors per request", "%.2f"),
                                       ("Sectors", "tex sectors (M)", "%.0f")):
                    macros[m + suffix] = fmt(profile_metric(prows, s, k, header), f)
        _table(ctx, "tab_large_coherence.tex", "tab:largecoherence",
               "Nsight Compute on one launch of \\texttt{vpt\\_render} (400$\\times$400, 16\\,spp): the L1 texture "
               "hit rate, texture sectors per request and in all, the L2 hit rate, active threads per executed "
               "instruction (of 32) and active warps. \\texttt{large\\_coherence.jsonl}.",
               to_latex(head, crows, "@{}l" + lcol("3.4cm") + col("1.3cm") * 6 + "@{}"), used, "\\scriptsize")
    # the tunes of 1024-wide volumes
    files = {p: read_rows(p) for p in sorted(glob.glob(os.path.join(base, "large", "*.jsonl")))}
    ts = tunes(files)
    if not ts:
        for name, label in (("tab_large_tunes.tex", "tab:largetunes"), ("tab_large_cranium.tex", "tab:largecranium")):
            _missing(ctx, name, "table", label, "large/ (scripts/gpu_estimator_tune.sh)")
        return
    bench = {p: rs for p, rs in files.items() if not TUNE_FILE.match(os.path.basename(p))}
    roofs = rooflines(rows + [r for rs in bench.values() for r in rs])
    head, trows = tunes_table(ts)
    sz.used = []
    rhead, rrows, shares_ = roofline_table(ts, sz, roofs)
    winners = [bench_rows(rs) for p, rs in bench.items() if "-winners-" in os.path.basename(p)]
    cells = [bench_rows(rs) for p, rs in bench.items() if "-cell-sizes-" in os.path.basename(p)]
    extra = []
    used = [t.header for t in ts]
    for w in winners:
        if len(w) == 2:
            used += w
            extra.append("%s, both winners re-measured in one session (commit %s): every estimator %s ms (%s), "
                         "global:f32 %s ms, %sx." % (w[0]["scene"], w[0]["commit"][:7], fmt(metric(w[0], "time_ms")),
                                                    estimator_of(w[0]["config"]), fmt(metric(w[1], "time_ms")),
                                                    fmt(ratio(metric(w[1], "time_ms"), metric(w[0], "time_ms")))))
            macros["largeWinnersAllMs"] = fmt(metric(w[0], "time_ms"))
            macros["largeWinnersGlobalMs"] = fmt(metric(w[1], "time_ms"))
            macros["largeWinnersRatio"] = fmt(ratio(metric(w[1], "time_ms"), metric(w[0], "time_ms")))
    for c in cells:
        used += c
        extra.append("Cell sizes on that winner's schedule (commit %s): %s." % (c[0]["commit"][:7], "; ".join(
            "%s %s ms (%s steps/ray)" % (estimator_of(r["config"]) + (", coop=4" if "coop=4" in r["config"] else ""),
                                         fmt(metric(r, "time_ms")), fmt(steps_per_ray(r))) for r in c)))
    for (scene, st), t in main_tunes(ts).items():
        numbers[macro_name("large", scene, "tune", st, "ms")] = (t.best["metrics"]["time_ms"], 0.0, [t.header])
        if st == "all":
            g = global_tune(ts, t)
            macros[macro_name("large", scene, "tune", "ratio")] = fmt(
                ratio(metric(g.best, "time_ms"), t.best["metrics"]["time_ms"]) if g else None)
            macros[macro_name("large", scene, "tune", "budget")] = tex(budget_text(t.budget))
            macros[macro_name("large", scene, "tune", "estimator")] = tex(estimator_of(t.best["config"]))
    for label, scene, r, a, e in shares_:
        if scene == "cranium.mhd@up4" and label.startswith("4 min"):
            macros["largeCraniumTunedActual"] = fmt(100 * a if a else None, "%.1f")
            macros["largeCraniumTunedEquiv"] = fmt(100 * e if e else None, "%.0f")
    g = [t for t in ts if t.set == "global" and t.scene == "head1024" and t.best is not None]
    if g and sz.get("head1024", "tuned"):
        macros["largeHeadTunedRatioGlobal"] = fmt(ratio(metric(g[-1].best, "time_ms"), sz.ms("head1024", "tuned")))
    commits = sorted({t.commit for t in ts})
    body = (to_latex(head, trows, "@{}" + lcol("2.3cm") + lcol("1.5cm") + col("0.9cm") + "l" + col("0.9cm")
                     + col("1.4cm") + lcol("3.8cm") + col("0.9cm") * 2 + "@{}") + "\n\n\\medskip\n"
            + to_latex(rhead, rrows, "@{}" + lcol("2.2cm") + lcol("2.3cm") + col("0.9cm") * 2 + col("1.1cm") + col("1.6cm") + col("0.9cm")
                       + col("1.7cm") + col("1.4cm") + col("0.9cm") + "@{}")
            + "\n\n\\medskip\\parbox{0.95\\linewidth}{\\raggedright %s}" % tex(" ".join(extra)))
    _table(ctx, "tab_large_tunes.tex", "tab:largetunes",
           "Tunes of 1024-wide volumes (400$\\times$400, 100\\,spp): the best ok evaluation of \\texttt{tune} with "
           "every estimator and with the thesis' (global majorant, f32) on the same volume; cranium.mhd@up4 is a "
           "real head CT (256$\\times$108$\\times$256) upsampled 4$\\times$ to 1024$\\times$432$\\times$1024. "
           "Below: the tuned configurations' share of the coherent roofline, their own steps and the thesis "
           "estimator's steps per their time. \\texttt{large/*.jsonl}, commits %s." % tex(", ".join(commits)),
           body, used + [r for r in sz.used], "\\scriptsize")
    probe = [rs for p, rs in bench.items() if "-sizes-probe-" in os.path.basename(p)]
    if probe:
        head, prows_ = probe_table(probe[0])
        _table(ctx, "tab_large_cranium.tex", "tab:largecranium",
               "The real head CT at its own size and upsampled 2$\\times$ and 4$\\times$: ms (steps per ray) of "
               "the schedule the thesis-estimator 90\\,s tune chose at 1$\\times$ (Table~\\ref{tab:esttunes}) with each "
               "majorant and format, and four thesis schedules. \\texttt{large/cranium-sizes-probe-*.jsonl}.",
               to_latex(head, prows_, "@{}lrrr@{}"), bench_rows(probe[0]), "\\scriptsize")
    else:
        _missing(ctx, "tab_large_cranium.tex", "table", "tab:largecranium", "large/cranium-sizes-probe-*.jsonl")


FIGURE = [("thread", "regenerationSK-thread", "#1b9e77", 1), ("compaction", "streamingSK", "#d95f02", 1),
          ("morton", "streamingSK-morton", "#7570b3", 1), ("sorting", "sortingSK", "#e7298a", 1),
          ("threadU", "regenerationSK-thread, u8", "#66a61e", 1),
          ("threadGrid", "regenerationSK-thread, grid32, u8", "#1f78b4", 1),
          ("tuned", "the cranium-tuned config", "#000000", 1)]


def _figure(ctx, sz):
    """fig_large: time against size, log-log; the roofline probes as the
    time the thesis estimator's steps would take at their rate."""
    sz.used = []
    cols = []
    for key, _, _, _ in FIGURE:
        cols.append([sz.ms(s, key) for s in SIZES])
    for rays in ("coherent", "random"):
        col = []
        for s in SIZES:
            steps, g = metric(sz.get(s, "thread"), "steps"), sz.roofline(s, rays)
            col.append(steps / g / 1e6 if steps and g else None)
        cols.append(col)
    names = [(k, l, c, 1) for k, l, c, _ in FIGURE] + [("roofCoherent", "coherent roofline", "#999999", 2),
                                                        ("roofRandom", "random-ray roofline", "#bbbbbb", 2)]
    lines = ["# size\t" + "\t".join(k for k, _, _, _ in names)]
    for i, s in enumerate(SIZES):
        lines.append("%d\t%s" % (int(re.sub(r"\D", "", s)), "\t".join(fmt(c[i], "%.4f", "NaN") for c in cols)))
    ctx.out.write("fig_large.dat", "\n".join(lines) + "\n")
    gp = gp_header("fig_large", h="3.0in")
    gp += ("set logscale xy 2\nset xtics (128, 256, 512, 1024)\nset xlabel 'head<N>: N^3 voxels'\n"
           "set ylabel 'ms per image (400x400, 100 spp)'\nset key outside right font ',7'\n"
           "set xrange [100:1300]\n")
    plots = []
    for j, (k, label, color, dash) in enumerate(names):
        if all(c is None for c in cols[j]):
            continue
        plots.append("'fig_large.dat' using 1:%d with linespoints lw 1.5 pt 7 ps 0.5 dt %d lc rgb '%s' title %s"
                     % (j + 2, dash, color, gp_str(label)))
    if not plots:
        ctx.begin()
        ctx.out.write("fig_large.tex", "\\begin{figure}[tbp]\\centering\\caption{Not measured on this GPU: no "
                      "times in large\\_schedules.jsonl.}\\label{fig:large}\\end{figure}\n")
        return
    gp += "plot " + ", ".join(plots) + "\n"
    ctx.out.figure("fig_large", gp)
    ctx.begin()
    ctx.touch(sz.used)
    ctx.out.write("fig_large.tex", figure_env(
        "fig_large", "Time per image against the volume's size (log-log; Table~\\ref{tab:largesizes}). The "
        "rooflines (dashed): the steps the thesis' estimator takes at each size, at the rate of the "
        "divergence-free step loop with one-voxel bundles and with random rays (f32).", "fig:large"))
