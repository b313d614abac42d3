"""The seed spread of tuned winners: the default 90 s tune run once per seed
(results/<gpu>/tune_variance.jsonl, scripts/gpu_variance.sh), each with a
fresh evaluation cache, its winner re-measured. Writes Table tab:tunevariance
and, for every float that shows a tuned winner of a scene with seeds
(ctx.tuned_shown), the spread in that float's caption (common.Out.write), so
that no tuned winner is shown without the spread of the tune that found it.

spread_text() is the one formatting of a spread; check_report.py recomputes
it from the rows and looks for it in each such float."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import macro_name, tex  # noqa: E402

FILE = "tune_variance.jsonl"
INPUTS = {"report: the seed spread of tuned winners": ["{gpu}/" + FILE]}


def seed_rows(path):
    """{scene: [row]} of the seeds that finished with a re-measured winner."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("kind") == "tune_variance" and r.get("exit") == 0 \
                    and isinstance(r.get("time_ms"), (int, float)):
                out.setdefault(r.get("scene"), []).append(r)
    for rs in out.values():
        rs.sort(key=lambda r: r.get("seed", 0))
    return out


def spread_text(scene, rows):
    """The spread as every float shows it: '<scene> <min>--<max> ms over <n>
    seeds (<spread>%)'."""
    t = [r["time_ms"] for r in rows]
    return "%s %.3f--%.3f\\,ms over %d seeds (%.1f\\%%)" % (tex(scene), min(t), max(t), len(t),
                                                          100.0 * (max(t) / min(t) - 1.0))


def spreads_of_rows(rows):
    """{scene: spread_text} of the scenes of rows (seed_rows) tuned with at
    least two seeds: what a float showing such a scene's tuned winner
    carries in its caption."""
    return {s: spread_text(s, rs) for s, rs in rows.items() if len(rs) >= 2}


def folder_spreads(folder_dir):
    """spreads_of_rows of folder_dir/tune_variance.jsonl (another results
    folder whose floats the report shows)."""
    return spreads_of_rows(seed_rows(os.path.join(folder_dir, FILE)))


def write(ctx):
    rows = seed_rows(os.path.join(ctx.pool.dir, FILE))
    ctx.seed_spreads = spreads_of_rows(rows)
    ctx.seed_spread_pct = {s: "%.1f" % (100.0 * (max(r["time_ms"] for r in rs) / min(r["time_ms"] for r in rs) - 1.0))
                           for s, rs in rows.items() if len(rs) >= 2}
    ctx.out.spreads = ctx.seed_spreads
    if not rows:
        ctx.out.write("tab_tune_variance.tex", "\\begin{table}[tbp]\\centering\\caption{Not measured on this GPU: "
                      "no results/%s/%s (scripts/gpu\\_variance.sh).}\\label{tab:tunevariance}\\end{table}\n"
                      % (tex(ctx.gpu), tex(FILE)))
        return
    t = ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{The default tune (local search from the thesis' and the transfer prior, every estimator) run "
         "once per seed, each with a fresh evaluation cache, its winner measured again: the spread a tuned winner "
         "of these scenes carries wherever it is shown (\\texttt{results/%s/%s}).}\\label{tab:tunevariance}"
         % (tex(ctx.gpu), tex(FILE)),
         "\\begin{tabular}{@{}lrrrrrl@{}}", "\\toprule",
         "scene & budget & seeds & winner ms (min--max) & spread & evaluations & winning schedules \\\\",
         "\\midrule"]
    for scene in sorted(rows):
        rs = rows[scene]
        ctx.touch(rs)
        tm = [r["time_ms"] for r in rs]
        ev = [r.get("evaluations") for r in rs if isinstance(r.get("evaluations"), int)]
        scheds = sorted({r.get("schedule") or vx.schedule_name(r["config"]) for r in rs})
        configs = {r["config"] for r in rs}
        t.append("%s & %s & %d & %.3f--%.3f & %.1f\\%% & %s & %s (%d configurations) \\\\" % (
            tex(scene), tex(rs[0].get("budget", "?")), len(rs), min(tm), max(tm), 100.0 * (max(tm) / min(tm) - 1.0),
            "%d--%d" % (min(ev), max(ev)) if ev else "--", ", ".join(tex(s) for s in scheds), len(configs)))
        ctx.out.macro(macro_name("seedSpread", scene), "%.1f" % (100.0 * (max(tm) / min(tm) - 1.0)))
        ctx.out.macro(macro_name("seedCount", scene), str(len(rs)))
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    ctx.out.write("tab_tune_variance.tex", "\n".join(t) + "\n")
