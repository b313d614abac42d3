"""The report's tuner part (issue 21): vptune's tuner with nothing fitted on
the scene it is scored on (leave one scene out), beside Kernel Tuner's
strategies in its simulation mode on the same recorded spaces, both scored
by one scorer (tuner/score.h: 0 = random search, 1 = the optimum). Reads
results/cpu-*/kernel_tuner/ (experiments/kernel_tuner: a simulation on
recorded GPU data, run on a CPU machine) and nothing else; the prose is in
report.tex. One module per part of the report: generate.py calls
`write(out, results_dir, gpu, figure_env, gp_header)`; scripts/readme_tables.py
calls `load` and `summary` for the README's table.

    kt_scores.jsonl       Kernel Tuner's runs scored (bin/tune-score --sequences)
    kt_summary.jsonl      per scene, the strategies that ran and why others did not
    vptune_loo.jsonl      vptune's candidates, leave one scene out
                          (bin/tune-score --leave-one-out)
    vptune_noprior.jsonl  local search from random starts (--no-prior)
    machine.txt           where and with which packages it ran
"""
import glob
import json
import os

SCENES = ["cgg-logo", "ad", "artifix", "manix", "smoke", "bucky"]

INPUTS = {"report: the tuner beside Kernel Tuner": ["cpu-*/kernel_tuner/*.jsonl", "cpu-*/kernel_tuner/machine.txt"]}


def _rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def find(results_dir):
    """The experiment's folder: the last results/cpu-*/kernel_tuner/ by name
    that holds kt_scores.jsonl, or None."""
    dirs = sorted(d for d in glob.glob(os.path.join(results_dir, "cpu-*", "kernel_tuner"))
                  if os.path.exists(os.path.join(d, "kt_scores.jsonl")))
    return dirs[-1] if dirs else None


def load(results_dir):
    """(folder, rows of kt_scores.jsonl + vptune_loo.jsonl + kt_summary.jsonl,
    machine.txt lines) or None when the experiment has not run."""
    d = find(results_dir)
    if not d:
        return None
    rows = []
    for name in ("kt_scores.jsonl", "vptune_loo.jsonl", "kt_summary.jsonl"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            rows += _rows(p)
    machine = []
    p = os.path.join(d, "machine.txt")
    if os.path.exists(p):
        machine = [l.rstrip("\n") for l in open(p)]
    return d, rows, machine


# Exhaustive search is no search strategy: vptune's own scores leave it out
# (bin/tune-score scores "all but exhaustive"), and so does Kernel Tuner's best.
EXHAUSTIVE = "brute_force"


def failures(rows):
    """{strategy: {scene: reason}} of the Kernel Tuner strategies that did not
    run (kt_summary.jsonl), and the number of strategies Kernel Tuner has."""
    out, names = {}, set()
    for r in rows:
        if r.get("kind") != "kt_summary":
            continue
        names |= set(r["strategies"]) | set(r["failed"])
        for s, why in r["failed"].items():
            out.setdefault(s, {})[r["scene"]] = why
    return out, len(names)


def summary(rows):
    """Per scene (in SCENES order, then any other): the default (local search
    from the thesis' prior), the candidate chosen on the other scenes, local
    search with the transfer prior only and with no prior, and Kernel Tuner's
    best strategy but exhaustive search by the time score and by the
    evaluation score."""
    out = []
    rows = [r for r in rows if r.get("kind") == "tuner_score"]
    scenes = [s for s in SCENES if any(r["scene"] == s for r in rows)]
    scenes += sorted({r["scene"] for r in rows} - set(scenes))
    for s in scenes:
        loo = [r for r in rows if r["scene"] == s and r["mode"] == "leave_one_out"]
        kt = [r for r in rows if r["scene"] == s and r["mode"] == "sequence" and r["strategy"] != EXHAUSTIVE]

        def pick(strategy, start):
            m = [r for r in loo if r["strategy"] == strategy and r["start"] == start]
            return m[0] if m else None
        chosen = [r for r in loo if r["selected"]]
        out.append({
            "scene": s,
            "default": pick("local", "thesis"),
            "chosen": chosen[0] if chosen else None,
            "transfer": pick("local", "transfer"),
            "noprior": pick("local", "none"),
            "kt_time": max(kt, key=lambda r: r["score_seconds"]) if kt else None,
            "kt_evals": max(kt, key=lambda r: r["score_evals"]) if kt else None,
            "kt": sorted(kt, key=lambda r: -r["score_seconds"]),
        })
    return out


def label(r):
    """'local, thesis + transfer' style name of a vptune row."""
    start = {"thesis": "thesis prior", "none": "no prior", "transfer": "transfer",
             "thesis+transfer": "thesis + transfer"}.get(r["start"], r["start"])
    return "%s, %s" % (r["strategy"], start)


def _tex(s):
    return s.replace("_", "\\_").replace("%", "\\%")


def part(ctx):
    """The report's part (generate.py): write() into ctx.out."""
    from common import figure_env, gp_header
    write(ctx.out, os.path.join(ctx.root, "results"), ctx.gpu, figure_env, gp_header)


def write(out, results_dir, gpu, figure_env, gp_header):
    """Writes tab_tuner_compare.tex and fig_tuner_compare.{tex,gp,dat} into
    out, and macros tcMinMargin (the least time-score margin of the default
    over Kernel Tuner's best), tcKtBest, tcSeeds. Returns the result files
    read (relative to results/)."""
    macros = {"tcMinMargin": "--", "tcMinMarginEvals": "--", "tcSeeds": "--", "tcMachine": "--"}
    used = []
    try:
        _write(out, results_dir, used, macros, figure_env, gp_header)
    finally:
        for name, value in macros.items():
            out.macro(name, value)
    return used


def _write(out, results_dir, used, macros, figure_env, gp_header):
    loaded = load(results_dir)
    if not loaded:
        for name, env, label_ in (("tab_tuner_compare.tex", "table", "tab:tunercompare"),
                                  ("fig_tuner_compare.tex", "figure", "fig:tunercompare")):
            out.write(name, "\\begin{%s}[tbp]\\centering\\caption{Not run yet: no results/cpu-*/kernel\\_tuner/ "
                      "(experiments/kernel\\_tuner).}\\label{%s}\\end{%s}\n" % (env, label_, env))
        return
    d, rows, machine = loaded
    rel = os.path.relpath(d, results_dir)
    used += [os.path.join(rel, n) for n in ("kt_scores.jsonl", "vptune_loo.jsonl")]
    summ = summary(rows)
    seeds = sorted({r["seeds"] for r in rows if "seeds" in r})
    macros["tcSeeds"] = ", ".join(str(s) for s in seeds)
    macros["tcMachine"] = _tex(rel)
    margins = [x["default"]["score_seconds"] - x["kt_time"]["score_seconds"] for x in summ
               if x["default"] and x["kt_time"]]
    margins_e = [x["default"]["score_evals"] - x["kt_evals"]["score_evals"] for x in summ
                 if x["default"] and x["kt_evals"]]
    if margins:
        macros["tcMinMargin"] = "%+.2f" % min(margins)
    if margins_e:
        macros["tcMinMarginEvals"] = "%+.2f" % min(margins_e)
    t = ["\\begin{table}[tbp]\\centering\\scriptsize",
         "\\caption{Leave one scene out, and Kernel Tuner (%s) in simulation mode on the same recorded spaces, "
         "scored by one scorer (0 = random search, 1 = the optimum; by time, and by evaluations in brackets; %s "
         "seeds). ``default'': vptune's local search from the thesis' prior (not fitted on any scene); "
         "``chosen'': the candidate chosen on the other scenes; ``2\\%%'': seeds whose 90\\,s run ends within "
         "2\\%% of the optimum. Results in \\texttt{%s}.}\\label{tab:tunercompare}"
         % (_tex(_kt_version(rows)), macros["tcSeeds"], _tex(rel)),
         "\\begin{tabular}{lrrlrrlrr}", "\\toprule",
         "scene & default & 2\\% & chosen & score & no prior & KT best (time) & score & margin \\\\", "\\midrule"]
    dat = []
    for i, x in enumerate(summ):
        dflt, ch, npr, kt = x["default"], x["chosen"], x["noprior"], x["kt_time"]
        if not (dflt and ch and npr and kt):
            continue
        t.append("%s & %+.2f (%+.2f) & %.0f\\%% & %s & %+.2f & %+.2f & %s & %+.2f (%+.2f) & %+.2f \\\\" % (
            x["scene"], dflt["score_seconds"], dflt["score_evals"], 100 * dflt["within_2pct_at_90s"],
            _tex(label(ch)), ch["score_seconds"], npr["score_seconds"], _tex(kt["strategy"]),
            kt["score_seconds"], kt["score_evals"], dflt["score_seconds"] - kt["score_seconds"]))
        dat.append("%d\t%s\t%.4f\t%.4f\t%.4f\t%.4f" % (i, x["scene"], dflt["score_seconds"], ch["score_seconds"],
                                                      npr["score_seconds"], kt["score_seconds"]))
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    out.write("tab_tuner_compare.tex", "\n".join(t) + "\n")
    out.write("fig_tuner_compare.dat", "\n".join(dat) + "\n")
    gp = gp_header("fig_tuner_compare", h="2.4in")
    gp += ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.9 noborder\n"
           "set ylabel 'score by time (0 = random search, 1 = optimum)'\nset yrange [-1:1.05]\n"
           "set key bottom left font ',7'\nset xtics nomirror\n")
    series = [(3, "vptune default (thesis prior)", "#1b9e77"), (4, "vptune, chosen leaving the scene out", "#7570b3"),
              (5, "vptune local, no prior", "#66a61e"), (6, "Kernel Tuner, best strategy", "#d95f02")]
    gp += "plot " + ", ".join("'fig_tuner_compare.dat' using %d:xtic(2) title '%s' lc rgb '%s'" % (c, n, col)
                              for c, n, col in series) + "\n"
    out.figure("fig_tuner_compare", gp)
    out.write("fig_tuner_compare.tex", figure_env(
        "fig_tuner_compare", "Time-axis scores per scene (Table~\\ref{tab:tunercompare}): vptune's default, the "
        "candidate chosen without the scene, local search without a prior, and Kernel Tuner's best strategy on that "
        "scene (chosen in hindsight, in its favour; exhaustive search left out on both sides).", "fig:tunercompare"))


def _kt_version(rows):
    v = sorted({r["tuner"] for r in rows if r.get("mode") == "sequence"})
    return ", ".join(v) if v else "Kernel Tuner"
