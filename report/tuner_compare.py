"""The report's tuner part (issue 21): vptune's tuner with nothing fitted on
the scene it is scored on (leave one scene out), beside Kernel Tuner's
strategies in its simulation mode on the same recorded spaces, both scored
by one scorer (tuner/score.h: 0 = random search, 1 = the optimum). Reads
results/cpu-*/kernel_tuner/ (experiments/kernel_tuner on the six 336-config
spaces) and results/cpu-*/kernel_tuner_sampled/ (the same on the samples of
the full space, tests/fixtures/tuner/sampled/): a simulation on recorded GPU
data, run on a CPU machine, and nothing else; the prose is in
report.tex. One module per part of the report: generate.py calls
`write(out, results_dir, gpu, figure_env, gp_header)`; scripts/readme_tables.py
calls `load` and `summary` for the table in docs/findings/tuner.md.

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

# the experiment's two folders: the 336-config spaces, the full space's samples
SETS = ("kernel_tuner", "kernel_tuner_sampled")

INPUTS = {"report: the tuner beside Kernel Tuner": ["cpu-*/%s/%s" % (d, f) for d in SETS
                                                     for f in ("*.jsonl", "machine.txt")]}


def _rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def find(results_dir, which="kernel_tuner"):
    """The experiment's folder: the last results/cpu-*/<which>/ by name
    that holds kt_scores.jsonl, or None."""
    dirs = sorted(d for d in glob.glob(os.path.join(results_dir, "cpu-*", which))
                  if os.path.exists(os.path.join(d, "kt_scores.jsonl")))
    return dirs[-1] if dirs else None


def load(results_dir, which="kernel_tuner"):
    """(folder, rows of kt_scores.jsonl + vptune_loo.jsonl + kt_summary.jsonl,
    machine.txt lines) or None when the experiment has not run."""
    d = find(results_dir, which)
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
            "gpu_default": pick("local", "thesis+transfer"),
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


# (folder, file suffix, macro prefix, what the spaces are)
PARTS = (("kernel_tuner", "", "tc", "the six recorded 336-configuration spaces"),
         ("kernel_tuner_sampled", "_sampled", "tcs",
          "the recorded samples of the full space (about 2,600 configurations of every dimension each)"))


def write(out, results_dir, gpu, figure_env, gp_header):
    """Writes, for each of PARTS, tab_tuner_compare<sfx>.tex and
    fig_tuner_compare<sfx>.{tex,gp,dat} into out, and macros <p>MinMargin and
    <p>MinMarginEvals (the least margin of the default over Kernel Tuner's
    best, by time and by evaluations), <p>MinMarginGpu and
    <p>MinMarginGpuEvals (the same for tune's GPU default, thesis + transfer
    prior fitted without the scene), <p>Seeds,
    <p>Machine. Returns the result files read (relative to results/)."""
    used = []
    for which, sfx, pre, what in PARTS:
        macros = {pre + k: "--" for k in ("MinMargin", "MinMarginEvals", "MinMarginGpu", "MinMarginGpuEvals", "Seeds",
                                          "Machine")}
        try:
            _write(out, results_dir, used, macros, pre, which, sfx, what, figure_env, gp_header)
        finally:
            for name, value in macros.items():
                out.macro(name, value)
    macros = {"tct" + k: "--" for k in ("MinMargin", "MinMarginHindsight", "Seeds", "Machine", "SameStartGap",
                                        "SameStartN")}
    try:
        _write_tuned(out, results_dir, used, macros)
    finally:
        for name, value in macros.items():
            out.macro(name, value)
    return used


def _write(out, results_dir, used, macros, pre, which, sfx, what, figure_env, gp_header):
    label_sfx = sfx.replace("_", "")
    loaded = load(results_dir, which)
    if not loaded:
        for name, env, label_ in (("tab_tuner_compare%s.tex" % sfx, "table", "tab:tunercompare" + label_sfx),
                                  ("fig_tuner_compare%s.tex" % sfx, "figure", "fig:tunercompare" + label_sfx)):
            out.write(name, "\\begin{%s}[tbp]\\centering\\caption{Not run yet: no results/cpu-*/%s/ "
                      "(experiments/kernel\\_tuner).}\\label{%s}\\end{%s}\n" % (env, _tex(which), label_, env))
        return
    d, rows, machine = loaded
    rel = os.path.relpath(d, results_dir)
    used += [os.path.join(rel, n) for n in ("kt_scores.jsonl", "vptune_loo.jsonl")]
    summ = summary(rows)
    seeds = sorted({r["seeds"] for r in rows if "seeds" in r})
    macros[pre + "Seeds"] = ", ".join(str(s) for s in seeds)
    macros[pre + "Machine"] = _tex(rel)
    for key, field, score in (("MinMargin", "default", "score_seconds"), ("MinMarginEvals", "default", "score_evals"),
                              ("MinMarginGpu", "gpu_default", "score_seconds"),
                              ("MinMarginGpuEvals", "gpu_default", "score_evals")):
        best = "kt_time" if score == "score_seconds" else "kt_evals"
        m = [x[field][score] - x[best][score] for x in summ if x[field] and x[best]]
        if m:
            macros[pre + key] = "%+.2f" % min(m)
    # where the margin comes from: local search without a prior against
    # Kernel Tuner's best by time, and the scenes where the default is behind
    # Kernel Tuner's best by evaluations (the prose names them)
    m = [x["noprior"]["score_seconds"] - x["kt_time"]["score_seconds"] for x in summ if x["noprior"] and x["kt_time"]]
    if m:
        macros[pre + "NoPriorMinMargin"] = "%+.2f" % min(m)
    for key, field in (("EvalsBehind", "default"), ("EvalsBehindGpu", "gpu_default")):
        behind = [x["scene"] for x in summ if x[field] and x["kt_evals"]
                  and x[field]["score_evals"] < x["kt_evals"]["score_evals"]]
        macros[pre + key] = _tex(", ".join(behind)) if behind else "none"
    t = ["\\begin{table}[tbp]\\centering\\scriptsize",
         "\\caption{Leave one scene out on %s, and Kernel Tuner (%s) in simulation mode on the same spaces, "
         "scored by one scorer (0 = random search, 1 = the optimum; by time, and by evaluations in brackets; %s "
         "seeds). ``thesis'': local search from the thesis' prior (not fitted on any scene); ``tune'': local "
         "search from the thesis' and the transfer prior, the other scenes' winners (\\texttt{tune}'s starts "
         "on a GPU), fitted without the scene, over schedules and estimators as one space (the replay has no "
         "estimator stage); ``2\\%%'': seeds whose 90\\,s run ends within "
         "2\\%% of the optimum; margin: ``tune'' minus Kernel Tuner's best by time. Results in \\texttt{%s}.}"
         "\\label{tab:tunercompare%s}" % (what, _tex(_kt_version(rows)), macros[pre + "Seeds"], _tex(rel), label_sfx),
         "\\begin{tabular}{lrrrrrlrr}", "\\toprule",
         "scene & thesis & 2\\% & tune & 2\\% & no prior & KT best (time) & score & margin \\\\", "\\midrule"]
    dat = []
    for i, x in enumerate(summ):
        dflt, gd, npr, kt = x["default"], x["gpu_default"], x["noprior"], x["kt_time"]
        if not (dflt and gd and npr and kt):
            continue
        t.append("%s & %+.2f (%+.2f) & %.0f\\%% & %+.2f (%+.2f) & %.0f\\%% & %+.2f & %s & %+.2f (%+.2f) & %+.2f \\\\" % (
            x["scene"], dflt["score_seconds"], dflt["score_evals"], 100 * dflt["within_2pct_at_90s"],
            gd["score_seconds"], gd["score_evals"], 100 * gd["within_2pct_at_90s"], npr["score_seconds"],
            _tex(kt["strategy"]), kt["score_seconds"], kt["score_evals"], gd["score_seconds"] - kt["score_seconds"]))
        dat.append("%d\t%s\t%.4f\t%.4f\t%.4f\t%.4f" % (i, x["scene"], dflt["score_seconds"], gd["score_seconds"],
                                                      npr["score_seconds"], kt["score_seconds"]))
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    out.write("tab_tuner_compare%s.tex" % sfx, "\n".join(t) + "\n")
    fig = "fig_tuner_compare" + sfx
    out.write(fig + ".dat", "\n".join(dat) + "\n")
    gp = gp_header(fig, h="2.4in")
    gp += ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.9 noborder\n"
           "set ylabel 'score by time (0 = random search, 1 = optimum)'\nset yrange [-1:1.05]\n"
           "set key outside top center horizontal font ',7'\nset xtics nomirror\n")
    series = [(3, "vptune, thesis prior", "#1b9e77"), (4, "vptune, thesis + transfer prior (scene left out)",
                                                          "#7570b3"),
              (5, "vptune local, no prior", "#66a61e"), (6, "Kernel Tuner, best strategy", "#d95f02")]
    gp += "plot " + ", ".join("'%s.dat' using %d:xtic(2) title '%s' lc rgb '%s'" % (fig, c, n, col)
                              for c, n, col in series) + "\n"
    out.figure(fig, gp)
    out.write(fig + ".tex", figure_env(
        fig, "Time-axis scores per scene on %s (Table~\\ref{tab:tunercompare%s}): vptune from the thesis' prior, "
        "vptune from \\texttt{tune}'s starts on a GPU (the transfer prior fitted without the scene), local search "
        "without a prior, and Kernel Tuner's best strategy on that scene (chosen in hindsight, in its favour; "
        "exhaustive search left out on both sides)." % (what, label_sfx), "fig:tunercompare" + label_sfx))


def _kt_version(rows):
    v = sorted({r["tuner"] for r in rows if r.get("mode") == "sequence"})
    return ", ".join(v) if v else "Kernel Tuner"


# ---- Kernel Tuner with tuned hyperparameters (results/cpu-*/kernel_tuner_tuned/) ----

TUNED = "kernel_tuner_tuned"
INPUTS["report: the tuner beside Kernel Tuner"] += ["cpu-*/%s/%s" % (TUNED, f) for f in ("kt_tuned.jsonl",
                                                                                         "machine.txt")]


def load_tuned(results_dir):
    """(folder, rows of kt_tuned.jsonl, machine.txt lines) of the last
    results/cpu-*/kernel_tuner_tuned/ (experiments/kernel_tuner --tune-hyper),
    or None."""
    dirs = sorted(d for d in glob.glob(os.path.join(results_dir, "cpu-*", TUNED))
                  if os.path.exists(os.path.join(d, "kt_tuned.jsonl")))
    if not dirs:
        return None
    d = dirs[-1]
    p = os.path.join(d, "machine.txt")
    machine = [l.rstrip("\n") for l in open(p)] if os.path.exists(p) else []
    return d, _rows(os.path.join(d, "kt_tuned.jsonl")), machine


def tuned_summary(rows):
    """Per held-out scene: vptune's two rows ("thesis+transfer", "thesis"),
    Kernel Tuner's best default strategy in hindsight, the tuned best
    (chosen on the other scenes), every strategy's tuned choice, and the
    same-start rows; each with mean and standard error over its seeds."""
    scenes = sorted({r["scene"] for r in rows if r.get("mode") == "tuned_loo"})
    out = []
    for s in scenes:
        def get(mode, **kw):
            return [r for r in rows if r.get("mode") == mode and r["scene"] == s
                    and all(r.get(k) == v for k, v in kw.items())]
        tuned = get("tuned_loo")
        best = [r for r in tuned if r.get("kt_best_tuned")]
        vt, vth, hs = get("vptune_loo", label="thesis+transfer"), get("vptune_loo", label="thesis"), \
            get("default_hindsight")
        out.append({"scene": s, "tune": vt[0] if vt else None, "thesis": vth[0] if vth else None,
                    "hindsight": hs[0] if hs else None, "tuned_best": best[0] if best else None,
                    "tuned": sorted(tuned, key=lambda r: r["strategy"]),
                    "start": sorted(get("same_start"), key=lambda r: r["strategy"])})
    return out


def pm(r, key="seconds"):
    """'+0.51 +- 0.03' of a row's score (seconds or evals) and its standard error."""
    return "%+.2f ± %.2f" % (r["score_" + key], r["se_" + key])


def _write_tuned(out, results_dir, used, macros):
    """tab_tuner_compare_tuned.tex: vptune beside Kernel Tuner at its default
    hyperparameters (best strategy in hindsight) and tuned leave one scene
    out, with standard errors; macros tctMinMargin (least margin of tune
    over KT tuned, by time), tctMinMarginHindsight (over KT default in
    hindsight), tctSameStartGap (the largest time-score gap between a Kernel
    Tuner strategy given vptune's start and vptune's local search from it,
    the thesis' prior alone), tctSameStartN (how many strategies took the
    start), tctSeeds, tctMachine."""
    loaded = load_tuned(results_dir)
    if not loaded:
        out.write("tab_tuner_compare_tuned.tex", "\\begin{table}[tbp]\\centering\\caption{Not run yet: no "
                  "results/cpu-*/kernel\\_tuner\\_tuned/ (experiments/kernel\\_tuner --tune-hyper).}"
                  "\\label{tab:tunercomparetuned}\\end{table}\n")
        return
    d, rows, _machine = loaded
    rel = os.path.relpath(d, results_dir)
    used.append(os.path.join(rel, "kt_tuned.jsonl"))
    summ = [y for y in tuned_summary(rows) if y["tune"] and y["hindsight"] and y["tuned_best"]]
    macros["tctMachine"] = _tex(rel)
    macros["tctSeeds"] = ", ".join(str(n) for n in sorted({len(y["tune"]["seeds"]) for y in summ}))
    if summ:
        macros["tctMinMargin"] = "%+.2f" % min(y["tune"]["score_seconds"] - y["tuned_best"]["score_seconds"]
                                              for y in summ)
        macros["tctMinMarginHindsight"] = "%+.2f" % min(y["tune"]["score_seconds"] - y["hindsight"]["score_seconds"]
                                                       for y in summ)

    gaps = [abs(r["score_seconds"] - y["thesis"]["score_seconds"]) for y in summ if y["thesis"] for r in y["start"]]
    if gaps:
        macros["tctSameStartGap"] = "%.2f" % max(gaps)
        macros["tctSameStartN"] = str(len({r["strategy"] for y in summ for r in y["start"]}))

    def c(r, key="seconds"):
        return "$%+.2f \\pm %.2f$" % (r["score_" + key], r["se_" + key])
    t = ["\\begin{table}[tbp]\\centering\\scriptsize",
         "\\caption{The samples of the full space, each scene left out, on one clock (the recordings' compile and "
         "measurement times for both tuners): time scores, mean $\\pm$ standard error over %s seeds. ``tune'': "
         "vptune's local search from the thesis' and the transfer prior (fitted without the scene); ``KT default'': "
         "Kernel Tuner's best strategy at its default hyperparameters, picked in hindsight; ``KT tuned'': the "
         "strategy and hyperparameters chosen on the other three scenes, run with new seeds. Results in "
         "\\texttt{%s}.}\\label{tab:tunercomparetuned}" % (macros["tctSeeds"], _tex(rel)),
         "\\begin{tabular}{lrlrlrr}", "\\toprule",
         "scene & tune & KT default (hindsight) & score & KT tuned & score & tune $-$ KT tuned \\\\", "\\midrule"]
    for y in summ:
        tu, h, b = y["tune"], y["hindsight"], y["tuned_best"]
        se = (tu["se_seconds"] ** 2 + b["se_seconds"] ** 2) ** 0.5
        t.append("%s & %s & %s & %s & %s & %s & $%+.2f \\pm %.2f$ \\\\" % (
            y["scene"], c(tu), _tex(h["strategy"]), c(h), _tex(b["label"]), c(b),
            tu["score_seconds"] - b["score_seconds"], se))
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    out.write("tab_tuner_compare_tuned.tex", "\n".join(t) + "\n")
