"""The tuner part: convergence per strategy (Figure fig:tuner, Table tab:tuner),
each scene's best configuration and its transfer to the other scenes
(Tables tab:best, tab:transfer)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
import statistics
from common import (SCENES, STRATEGY_COLORS, camel, f_mrays, figure_env, gp_header, gp_str, metric, not_run_note,
                    tex, tt)  # noqa: E402



def tuner(ctx):
    o = ctx.out
    spec = ctx.specs.get("tuner_convergence")
    rows = ctx.pool.file_rows(spec.output + ".jsonl")
    runs = []
    cur = None
    for r in rows:
        if r.get("kind") == "header":
            cur = {"scene": r.get("scene"), "strategy": r.get("strategy"), "seed": r.get("seed"), "evals": []}
            runs.append(cur)
        elif r.get("kind") == "eval" and cur is not None:
            cur["evals"].append(r)
    runs = [r for r in runs if r["evals"] and r["strategy"]]
    if not runs:
        o.write("fig_tuner.tex", not_run_note(["tuner_convergence"], ctx.gpu, "Tuner convergence", "figure",
                                           "fig:tuner", "Tuner convergence per strategy"))
        o.write("tab_tuner.tex", "")
        return
    scenes = [s for s in spec.scenes if any(r["scene"] == s for r in runs)]
    strategies = [s for s in spec.get("strategies") if any(r["strategy"] == s for r in runs)]
    blocks = []
    table = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{Tuner convergence: per scene and strategy, the median over seeds of the evaluations "
             "needed to come within 5\\% of the best time any run found, and of the quality reached at the end "
             "(best time found / own best time).}\\label{tab:tuner}",
             "\\begin{tabular}{@{}ll%s@{}}" % ("r" * 2), "\\toprule",
             "Scene & Strategy & evals to 5\\% & final quality \\\\", "\\midrule"]
    for s in scenes:
        srun = [r for r in runs if r["scene"] == s]
        best = None
        for r in srun:
            for e in r["evals"]:
                t = metric(e, "time_ms")
                if e.get("status") == "ok" and e.get("fidelity", 1) == 1 and t:
                    best = t if best is None else min(best, t)
        if best is None:
            continue
        b = ["# %s: evaluation\t%s" % (s, "\t".join(strategies))]
        curves = {}
        for st in strategies:
            per_seed = []
            for r in (x for x in srun if x["strategy"] == st):
                bsf, curve = None, []
                for e in r["evals"]:
                    t = metric(e, "time_ms")
                    if e.get("status") == "ok" and e.get("fidelity", 1) == 1 and t:
                        bsf = t if bsf is None else min(bsf, t)
                    curve.append(best / bsf if bsf else 0.0)
                per_seed.append(curve)
            curves[st] = per_seed
            reach = [next((i + 1 for i, q in enumerate(c) if q >= 1 / 1.05), None) for c in per_seed]
            reach_ok = [x for x in reach if x is not None]
            final = [c[-1] for c in per_seed if c]
            table.append("%s & %s & %s & %s \\\\" % (
                tex(s) if st == strategies[0] else "", tex(st),
                "%g" % statistics.median(reach_ok) if len(reach_ok) * 2 > len(reach) else "not reached",
                "%.3f" % statistics.median(final) if final else "--"))
        n = max((len(c) for cs in curves.values() for c in cs), default=0)
        for i in range(n):
            vals = []
            for st in strategies:
                qs = [c[i] if i < len(c) else c[-1] for c in curves[st] if c]
                vals.append("%.6g" % statistics.median(qs) if qs else "NaN")
            b.append("%d\t%s" % (i + 1, "\t".join(vals)))
        blocks.append("\n".join(b))
        table.append("\\addlinespace")
    table += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("tab_tuner.tex", "\n".join(table) + "\n")
    o.write("fig_tuner.dat", "\n\n\n".join(blocks) + "\n")
    gp = gp_header("fig_tuner", h="2.6in")
    gp += ("set xlabel 'evaluations'\nset ylabel 'best time found / own best so far'\nset yrange [0:1.05]\n"
           "set key below font ',7'\nset multiplot layout 1,%d\n" % len(scenes))
    for i, s in enumerate(scenes):
        gp += "set title %s\n" % gp_str(s)
        plots = ["'fig_tuner.dat' index %d using 1:%d title %s with lines lw 1.5 lc rgb '%s'"
                 % (i, k + 2, gp_str(st) if i == 0 else "''", STRATEGY_COLORS[k % len(STRATEGY_COLORS)])
                 for k, st in enumerate(strategies)]
        gp += "plot " + ", ".join(plots) + "\n"
    gp += "unset multiplot\n"
    o.figure("fig_tuner", gp)
    o.write("fig_tuner.tex", figure_env(
        "fig_tuner", "Tuner convergence per strategy: the median over seeds of the best time any run found "
        "divided by the strategy's own best so far (1: it has found the best).", "fig:tuner"))


def transfer(ctx):
    o = ctx.out
    ctx.transfer_others, ctx.transfer_default = {}, {}
    spec = ctx.specs.get("transfer")
    occ = ctx.specs.get("occupancy")
    best = ctx.best_of(spec)
    if not best:
        o.write("tab_best.tex", not_run_note(["occupancy", "transfer"], ctx.gpu,
                                             "The best configuration of each scene", "table", "tab:best",
                                             "Best configuration per scene"))
        o.write("tab_transfer.tex", not_run_note(["occupancy", "transfer"], ctx.gpu,
                                                 "The cross-scene transfer matrix", "table", "tab:transfer",
                                                 "Cross-scene transfer"))
        return
    lines = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{Each scene's fastest configuration over the occupancy sweep (%s), re-measured at the "
             "thesis workload (experiment \\texttt{transfer}), against the fastest of the nine thesis schedules "
             "at that workload.}\\label{tab:best}" % tex(vx.format_workload(vx.base_workload(occ, "manix"))),
             "\\begin{tabular}{@{}l>{\\raggedright\\arraybackslash}p{0.4\\linewidth}rrr@{}}", "\\toprule",
             "Scene & Best configuration & sweep & thesis workload & vs best thesis \\\\",
             " & & Mrays/s & Mrays/s & schedule \\\\",
             "\\midrule"]
    for s in SCENES:
        r = best.get(s)
        if r is None:
            lines.append("%s & \\multicolumn{4}{c}{no sweep point} \\\\" % tex(s))
            continue
        ctx.tuned_shown(s)
        wk = vx.workload_key(vx.base_workload(spec, s))
        full = ctx.pool.ok(s, r["config"], wk)
        sched = [x for x in ctx.schedule_rows(s).values() if x is not None and x.get("status") == "ok"]
        ts = max((metric(x, "mrays_per_s") for x in sched), default=None)
        fm = metric(full, "mrays_per_s")
        lines.append("%s & \\footnotesize %s & %s & %s & %s \\\\" % (
            tex(s), tt(vx.describe_config(r["config"])), f_mrays(metric(r, "mrays_per_s")),
            f_mrays(fm) if fm else "--", "%.2f$\\times$" % (fm / ts) if fm and ts else "--"))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("tab_best.tex", "\n".join(lines) + "\n")
    # transfer matrix: rows tuned on A, columns run on B, % of B's own best
    src = [s for s in SCENES if s in best]
    dst = [s for s in SCENES if s in spec.scenes]
    have = False
    m = ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{Cross-scene transfer: the configuration tuned on the row's scene run on the column's scene, "
         "as a percentage of the column scene's own tuned configuration (thesis workload). Last row: the "
         "thesis' default, regenerationSK (thread).}\\label{tab:transfer}",
         "\\begin{tabular}{@{}l%s@{}}" % ("r" * len(dst)), "\\toprule",
         "tuned on $\\downarrow$ run on $\\rightarrow$ & " + " & ".join(tex(s) for s in dst) + " \\\\",
         "\\midrule"]
    own = {}
    for b in dst:
        wk = vx.workload_key(vx.base_workload(spec, b))
        own[b] = metric(ctx.pool.ok(b, best[b]["config"], wk), "mrays_per_s") if b in best else None
    others = {}   # b: the best share another scene's winner reaches on b
    for a in src + ["regenerationSK-thread"]:
        cfg = best[a]["config"] if a in best else vx.canonical(a)
        cells = []
        for b in dst:
            wk = vx.workload_key(vx.base_workload(spec, b))
            v = metric(ctx.pool.ok(b, cfg, wk), "mrays_per_s")
            if v is not None and own.get(b):
                have = True
                cells.append("%.0f" % (100 * v / own[b]))
                if a == "regenerationSK-thread":
                    o.macro("transferDefault" + camel(b), "%.0f" % (100 * v / own[b]))
                    ctx.transfer_default[b] = v / own[b]
                elif a != b:
                    others[b] = max(others.get(b, 0.0), v / own[b])
            else:
                cells.append("--")
        if a == "regenerationSK-thread":
            m.append("\\midrule")
        m.append("%s & %s \\\\" % (tex(a), " & ".join(cells)))
    for b, share in others.items():
        o.macro("transferOthers" + camel(b), "%.0f" % (100 * share))
    ctx.transfer_others = others
    m += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("tab_transfer.tex", "\n".join(m) + "\n" if have else
            not_run_note(["transfer"], ctx.gpu, "The cross-scene transfer matrix", "table", "tab:transfer",
                         "Cross-scene transfer"))


def gains(ctx):
    """tab_gains.tex: the tuner's gain per scene in sample (the fastest
    configuration measured at the thesis workload over the thesis' default,
    thread regeneration), in transfer (another scene's winner and the default,
    as shares of the scene's own winner), left out (the scores of
    Table tab:tunercompare: the scene's prior and strategy fitted without it),
    and the seed spread of its default tune where there is one. Runs after
    key_numbers, transfer and tuner_compare."""
    import tuner_compare
    loaded = tuner_compare.load(os.path.join(ctx.root, "results"), "kernel_tuner")
    loo = {x["scene"]: x for x in tuner_compare.summary(loaded[1])} if loaded else {}
    lines = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{What the tuner gains on each scene, in sample and out of sample. In sample: the fastest "
             "configuration measured on the scene (Table~\\ref{tab:key}) over the thesis' default, thread "
             "regeneration, at the thesis workload. Transfer: the best winner of another scene, and the default, as "
             "a share of the scene's own winner (Table~\\ref{tab:transfer}; above 100: the own winner, chosen on the "
             "sweep's smaller workload, is not the fastest at this one). Left out: the score by time (0 = "
             "random search, 1 = the optimum) of local search from the thesis' prior and from \\texttt{tune}'s "
             "starts fitted without the scene, and of Kernel Tuner's best strategy in hindsight, on the recorded "
             "spaces (Table~\\ref{tab:tunercompare}). Seeds: the spread of the default tune's winner over seeds "
             "(Table~\\ref{tab:tunevariance}).}\\label{tab:gains}",
             "\\begin{tabular}{@{}lrrrrrrl@{}}", "\\toprule",
             " & in sample & \\multicolumn{2}{c}{transfer (\\% of own)} & \\multicolumn{3}{c}{left out (score)} & \\\\",
             "scene & tuned / default & other scene & default & thesis prior & tune & KT best & seeds \\\\",
             "\\midrule"]
    for s in SCENES:
        best = ctx.best.get(s)
        thread = ctx.pool.ok(s, vx.canonical("regenerationSK-thread"), ctx.thesis_wk(s))
        ratio = (metric(best, "mrays_per_s") / metric(thread, "mrays_per_s")
                 if metric(best, "mrays_per_s") and metric(thread, "mrays_per_s") else None)
        if best is not None:
            ctx.touch([best])
            ctx.tuned_shown(s)
        x = loo.get(s, {})

        def score(r):
            return "%+.2f" % r["score_seconds"] if r else "--"
        other, dflt = ctx.transfer_others.get(s), ctx.transfer_default.get(s)
        lines.append("%s & %s & %s & %s & %s & %s & %s & %s \\\\" % (
            tex(s), "%.2f$\\times$" % ratio if ratio else "--", "%.0f" % (100 * other) if other else "--",
            "%.0f" % (100 * dflt) if dflt else "--", score(x.get("default")), score(x.get("gpu_default")),
            score(x.get("kt_time")), "%s\\%%" % ctx.seed_spread_pct[s] if s in ctx.seed_spread_pct else "--"))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    ctx.out.write("tab_gains.tex", "\n".join(lines) + "\n")
