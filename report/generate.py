#!/usr/bin/env python3
"""report/generate.py: turn results/ into the report's generated LaTeX and
gnuplot inputs. Python 3 standard library only; needs no GPU.

    python3 report/generate.py [--root DIR] [--gpu NAME] [--out DIR]

One module per part of the report, each emitting tables, figures and number
macros into report/generated/ (gitignored), nothing else:

  front.py       the machines, the scenes, the experiments     (setup.tex, scenes.tex, experiments.tex)
  thesis.py      the thesis' tables beside ours, the evidence of its conclusions
  mitsuba3.py    Mitsuba 3 beside vptune (table 6.1's rows, tab_mitsuba.tex)
  roofline.py    key numbers per scene, the schedules against the step-loop roofline
  occupancy.py   occupancy, SIMD efficiency, registers, compaction depth, texture coherence
  tuner.py       tuner convergence, best configuration per scene and its transfer
  tuner_compare.py  the tuner left one scene out, beside Kernel Tuner
  estimators.py  majorant grids and density formats
  large.py       large volumes (issue 17): the schedules and estimators at 128^3 to 1024^3, tunes at 1024
  variance.py    the seed spread of tuned winners (tab_tune_variance.tex; each float showing one gets its spread)
  sessions.py    the measurement sessions (GPU UUID, commit) every float's rows come from (tab_sessions.tex)
  appendix.py    commands, specs, the data files read, the thesis' sources
  pool.py        the rows they look up (results/<gpu>/, see its docstring) and the shared context
  common.py      formatting, LaTeX, the output folder

Each part that reads results declares them in INPUTS (the pool: inputs());
inputs() below collects them, and scripts/results_index.py counts them as the
files' readers. Written: macros.tex (every number the prose uses, as
\\newcommand), the parts' *.tex, fig_*.gp and fig_*.dat (build.sh runs
gnuplot on figures.txt), values.json (key numbers, machine-readable),
numbers.json (each number a \\verdict may cite: value, noise, which way is
better, the sessions of its rows; verdicts.py checks the prose against it),
noise.json (the noise floor between sessions the verdicts use, noise.py) and provenance.json (the
report's commit; each float's commits and sessions, its session mark, the
scenes whose tuned winners it shows; the sessions: a float holding rows of
another commit is marked \\othercommit, one holding rows of several sessions
\\mixedsessions).
"""

import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
import appendix  # noqa: E402
import estimators as report_estimators  # noqa: E402
import front  # noqa: E402
import large  # noqa: E402
import mitsuba3  # noqa: E402
import noise  # noqa: E402
import occupancy  # noqa: E402
import pool  # noqa: E402
import roofline  # noqa: E402
import sessions  # noqa: E402
import thesis  # noqa: E402
import tuner_compare  # noqa: E402
import tuner  # noqa: E402
import variance  # noqa: E402
import verdicts  # noqa: E402
from common import tex  # noqa: E402


def inputs(specs):
    """{reader label: [pattern relative to results/, {gpu}: the report's GPU
    folder]} of every part that reads results (scripts/results_index.py)."""
    return pool.all_inputs(specs)


def section_inputs(specs):
    """{part: [pattern relative to results/]} of the parts that may be built
    from another GPU's folder: each reads only its own files, so when the
    report's folder has none of them, the folder that has the most stands
    in and every float and number of the part names it (pool.Context.bind).
    tuner.transfer and tuner.gains read the same files, so one folder
    serves both, and gains then takes that folder's fastest rows too."""
    def spec_files(*names):
        return ["{gpu}/%s.jsonl" % specs[n].output for n in names if n in specs]
    tuned = spec_files("transfer", "occupancy")
    return {variance.write: [p for ps in variance.INPUTS.values() for p in ps],
            tuner.tuner: spec_files("tuner_convergence"),
            large.write: [p for ps in large.INPUTS.values() for p in ps],
            tuner.transfer: tuned, tuner.gains: tuned}


def folder_for(results_dir, patterns, gpu, dirs):
    """gpu when it holds any file of patterns, else the folder of dirs that
    holds the most (gpu when none does)."""
    def count(d):
        return sum(len(glob.glob(os.path.join(results_dir, p.format(gpu=d)))) for p in patterns)
    if not patterns or count(gpu):
        return gpu
    have = sorted(((count(d), d) for d in dirs if d != gpu), reverse=True)
    return have[0][1] if have and have[0][0] else gpu


def run(root, gpu, out_dir):
    ctx = pool.Context(root, gpu, out_dir)
    parts = [variance.write, front.setup, front.scenes_figure, front.experiments_table, thesis.thesis_tables,
             mitsuba3.table,
             roofline.key_numbers, roofline.fig_schedules, roofline.fig_roofline, occupancy.fig_occupancy,
             occupancy.fig_registers, occupancy.fig_depth, tuner.tuner, report_estimators.write,
             large.write, tuner.transfer, tuner_compare.part, tuner.gains,
             occupancy.coherence, thesis.claims, appendix.appendix]
    results_dir = os.path.join(root, "results")
    dirs = vx.gpu_dirs(results_dir)
    inputs_of = section_inputs(ctx.specs)
    folder = {part: folder_for(results_dir, inputs_of.get(part, []), gpu, dirs) for part in parts}
    ctx.folders = [gpu] + sorted({d for d in folder.values() if d != gpu})   # the appendix lists their files
    others = {}
    for part in parts:
        d = folder[part]
        c = ctx
        if d != gpu:
            if d not in others:
                others[d] = pool.Context(root, d, out_dir, shared_out=ctx.out)
                others[d].seed_spreads = variance.folder_spreads(others[d].pool.dir)   # its own tunes' spreads
            c = others[d]
            if part is tuner.gains:
                c.best = {s: roofline.fastest(c, s) for s in roofline.SCENES}
        c.bind()
        c.begin()
        part(c)
        ctx.bind()
    for c in others.values():   # the sessions table numbers every session a float shows
        for k, rec in c.pool.sessions.items():
            ctx.pool.sessions.setdefault(k, rec)
    o = ctx.out
    ctx.begin()
    sessions.write(ctx)
    o.macro("numFigures", str(len(o.figures)))
    o.macro("resultsCommit", tex(ctx.commit or "?"), "results_commit")
    other = sorted(f for f, p in o.provenance.items() if any(c != ctx.commit for c in p["commits"]))
    o.macro("numOtherCommitFloats", str(len(other)))
    o.macro("numMixedSessionFloats", str(len(o.marked)))
    nf = noise.floor(os.path.join(root, "results"), gpu, verdicts.IN_SESSION_FLOOR)
    o.macro("noiseFloorPct", "%.1f" % (100 * nf["floor"]))
    o.macro("noiseInSessionPct", "%.0f" % (100 * verdicts.IN_SESSION_FLOOR))
    o.macro("noiseFloorGroups", str(nf["groups"]))
    o.macro("noiseFloorFolder", tex(nf["folder"] or "--"))
    with open(os.path.join(o.dir, "noise.json"), "w") as f:
        json.dump(nf, f, indent=1, sort_keys=True, default=str)
    o.write("macros.tex", "%% generated by report/generate.py from results/%s; do not edit\n" % gpu
            + "\n".join(o.macros) + "\n")
    o.values["gpu_dir"] = gpu
    with open(os.path.join(o.dir, "values.json"), "w") as f:
        json.dump(o.values, f, indent=1, sort_keys=True)
    o.write("verdicts.tex", "% report/verdicts.py writes the verdicts the numbers contradict here\n")
    with open(os.path.join(o.dir, "numbers.json"), "w") as f:
        json.dump(o.numbers, f, indent=1, sort_keys=True)
    with open(os.path.join(o.dir, "provenance.json"), "w") as f:
        json.dump({"commit": ctx.commit, "floats": o.provenance, "sessions": ctx.session_table},
                  f, indent=1, sort_keys=True)
    with open(os.path.join(o.dir, "figures.txt"), "w") as f:
        f.write("".join(n + "\n" for n in o.figures))
    for w in ctx.pool.warnings:
        print("generate: warning: %s" % w, file=sys.stderr)


def pick_gpu(results_dir, wanted):
    """The report's GPU folder: wanted (REPORT_GPU) if given; else the
    folder whose report_session.json names the newest session (report/README.md,
    "One session per table"); else the folder with the most result rows."""
    dirs = vx.gpu_dirs(results_dir)
    if wanted:
        if wanted not in dirs:
            raise SystemExit("generate: results/%s has no .jsonl file (have: %s)" % (wanted, ", ".join(dirs) or "none"))
        return wanted
    if not dirs:
        raise SystemExit("generate: no results/<gpu>/*.jsonl under %s" % results_dir)
    named = pool.session_gpu(results_dir, dirs)
    if named:
        return named   # the folder whose report_session.json names the newest session

    def count(d):
        n = 0
        for f in os.listdir(os.path.join(results_dir, d)):
            if f.endswith(".jsonl"):
                n += sum(1 for r in vx.read_rows(os.path.join(results_dir, d, f)) if r.get("kind") == "result")
        return n
    return max(dirs, key=lambda d: (count(d), d))


def main(argv):
    ap = argparse.ArgumentParser(prog="report/generate.py")
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--gpu", default=os.environ.get("REPORT_GPU") or None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    gpu = pick_gpu(os.path.join(root, "results"), args.gpu)
    out = args.out or os.path.join(root, "report", "generated")
    others = [d for d in vx.gpu_dirs(os.path.join(root, "results")) if d != gpu]
    print("generate: results/%s%s -> %s" % (gpu, " (also present: %s; REPORT_GPU=NAME picks one)" % ", ".join(others)
                                              if others else "", os.path.relpath(out, root)))
    run(root, gpu, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

