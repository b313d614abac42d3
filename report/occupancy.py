"""Occupancy, registers, compaction and coherence: occupancy and SIMD
efficiency against speed (Figures fig:occupancy, fig:simd, Table tab:corr),
the register sweep (fig:registers), compaction against path depth
(fig:depth) and the sorting schedules' texture coherence (tab:coherence)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import (SCENES, SCHEDULE_COLORS, SCHEDULE_WORDS, camel, f_mrays, f_pct, figure_env, gp_header,
                    gp_str, metric, not_run_note, row_noise, spearman, spelled, tex)  # noqa: E402



def space_rows(ctx):
    """{scene: [ok rows]} of the occupancy sweep at its workload, or of
    the nine schedules at the thesis workload when the sweep has not run."""
    spec = ctx.specs.get("occupancy")
    out, source = {}, "occupancy"
    for s in SCENES:
        rows = []
        if spec is not None and s in spec.scenes:
            for w in vx.workloads(spec, s):
                rows += [r for r in ctx.pool.at_workload(s, vx.workload_key(w)) if r.get("status") == "ok"]
        out[s] = rows
    if not any(out.values()):
        source = "thesis"
        for s in SCENES:
            out[s] = [r for r in ctx.schedule_rows(s).values() if r is not None and r.get("status") == "ok"]
    return out, source


def scatter_figure(ctx, name, xmetrics, xlabel, caption, label):
    o = ctx.out
    data, source = space_rows(ctx)
    if not any(data.values()):
        o.write(name + ".tex", not_run_note(["occupancy"], ctx.gpu, "The occupancy sweep", "figure", label,
                                            caption))
        return {}
    blocks = []
    corr = {}
    empty = set()
    ncol = len(xmetrics)
    for s in SCENES:
        rows = [r for r in data[s] if metric(r, "mrays_per_s") is not None]
        if not rows:
            empty.add(s)
        b = ["# %s: %s\tmrays_per_s\tcolor\tschedule" % (s, "\t".join(m for m, _ in xmetrics))]
        for r in rows:
            xs = [metric(r, m) for m, _ in xmetrics]
            sched = vx.schedule_name(r["config"])
            k = vx.SCHEDULE_NAMES.index(sched) if sched in vx.SCHEDULE_NAMES else None
            color = int(SCHEDULE_COLORS[k][1:], 16) if k is not None else 0
            b.append("\t".join("%.6g" % (100 * x) if x is not None else "NaN" for x in xs) +
                     "\t%.6g\t%d\t%s" % (metric(r, "mrays_per_s"), color, gp_str(sched)))
        if len(b) == 1:
            b.append("\t".join("NaN" for _ in xmetrics) + "\tNaN\t0\t\"none\"")
        blocks.append("\n".join(b))
        for m, _ in xmetrics:
            pairs = [(metric(r, m), metric(r, "mrays_per_s")) for r in rows if metric(r, m) is not None]
            corr[(s, m)] = (spearman([p[0] for p in pairs], [p[1] for p in pairs]), len(pairs))
    o.write(name + ".dat", "\n\n\n".join(blocks) + "\n")
    gp = gp_header(name, h="3.7in")
    gp += ("set logscale y\nset xrange [0:105]\nset xlabel %s\nset ylabel 'Mrays/s'\n"
           "set key at screen 0.995,0.93 right top vertical font ',7' samplen 1 spacing 1.1 box\n"
           "set multiplot layout 2,3 margins 0.07,0.80,0.09,0.95 spacing 0.07,0.12\n" % gp_str(xlabel))
    types = ("pt 6 ps 0.45", "pt 7 ps 0.4") if ncol == 2 else ("pt 7 ps 0.4",)
    for i, s in enumerate(SCENES):
        gp += "set title %s\n" % gp_str(s)
        if i == 2:
            gp += "set key\n"
        else:
            gp += "unset key\n"
        plots = ["'%s.dat' index %d using %d:%d:%d notitle with points %s lc rgb variable"
                 % (name, i, k + 1, ncol + 1, ncol + 2, types[k]) for k in range(ncol)]
        if i == 2:
            plots += ["keyentry with points pt 7 ps 0.6 lc rgb '%s' title %s" % (SCHEDULE_COLORS[k], gp_str(n))
                      for k, n in enumerate(vx.SCHEDULE_NAMES)]
            if ncol == 2:
                plots += ["keyentry with points %s lc rgb '#000000' title %s" % (types[k], gp_str(lab))
                          for k, (m, lab) in enumerate(xmetrics)]
        if s in empty:
            # no point for this scene yet: an empty panel that says so
            # (gnuplot refuses a plot whose points are all undefined)
            plots[:ncol] = ["1 notitle with lines lc rgb '#ffffff'"]
            gp += "set label 99 'no data' at graph 0.5,0.5 center\n"
        gp += "plot " + ", ".join(plots) + "\n"
        if s in empty:
            gp += "unset label 99\n"
    gp += "unset multiplot\n"
    o.figure(name, gp)
    src = ("every ok point of the occupancy sweep (experiment \\texttt{occupancy}, %s)"
           % tex(vx.format_workload(vx.base_workload(ctx.specs["occupancy"], "manix")))
           if source == "occupancy" else
           "the nine thesis schedules at the thesis workload only (the occupancy sweep has not run yet)")
    o.write(name + ".tex", figure_env(name, caption + " Points: " + src + ".", label))
    return {"corr": corr, "source": source}


def fig_occupancy(ctx):
    info = scatter_figure(ctx, 
        "fig_occupancy", (("occupancy_theoretical", "theoretical"), ("occupancy_achieved", "achieved")),
        "occupancy (%)", "Occupancy against speed on each scene: theoretical occupancy (open circles) from "
        "the occupancy calculator, achieved occupancy (filled) measured by the harness; colour: schedule.",
        "fig:occupancy")
    simd = scatter_figure(ctx, 
        "fig_simd", (("simd_efficiency", "SIMD efficiency"),), "SIMD efficiency (%)",
        "SIMD efficiency (active lanes per warp per path extension) against speed on each scene; colour: "
        "schedule.", "fig:simd")
    o = ctx.out
    if not info:
        o.write("corr.tex", not_run_note(["occupancy"], ctx.gpu, "The occupancy sweep", "table", "tab:corr",
                                         "Rank correlation of occupancy and SIMD efficiency with speed"))
        return
    lines = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{Spearman rank correlation between Mrays/s and each metric over the points of "
             "Figures~\\ref{fig:occupancy} and~\\ref{fig:simd} (n: points). Near +1: faster points have more "
             "of it; near 0: it does not order speed.}\\label{tab:corr}",
             "\\begin{tabular}{@{}lrrrr@{}}", "\\toprule",
             "Scene & theoretical occ. & achieved occ. & SIMD eff. & n \\\\", "\\midrule"]
    largest = None
    for s in SCENES:
        vals = []
        n = 0
        for m, src in (("occupancy_theoretical", info), ("occupancy_achieved", info),
                       ("simd_efficiency", simd)):
            c, n2 = src["corr"].get((s, m), (None, 0))
            n = max(n, n2)
            vals.append("%+.2f" % c if c is not None else "--")
            if c is not None:
                o.macro("corr" + camel(m) + camel(s), "%+.2f" % c)
                largest = abs(c) if largest is None else max(largest, abs(c))
        lines.append("%s & %s & %d \\\\" % (tex(s), " & ".join(vals), n))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("corr.tex", "\n".join(lines) + "\n")
    # the largest |rho| of the table: what the abstract may claim for these metrics
    o.macro("corrMaxAbs", "%.2f" % largest if largest is not None else "--")
    o.macro("occupancySource", "the occupancy sweep" if info["source"] == "occupancy"
            else "the nine thesis schedules (the occupancy sweep has not run yet)")


def fig_registers(ctx):
    o = ctx.out
    spec = ctx.specs.get("t44_registers")
    configs, _ = vx.static_configs(spec)
    regs = sorted({vx.parse_config(c)["maxrregcount"] for c in configs})
    scheds = []
    for c in configs:
        n = vx.schedule_name(c)
        if n not in scheds:
            scheds.append(n)
    blocks, have = [], False
    for s in spec.scenes:
        wk = vx.workload_key(vx.base_workload(spec, s))
        b = ["# %s: maxrregcount\t%s" % (s, "\t".join(scheds))]
        for reg in regs:
            vals = []
            for n in scheds:
                c = dict(vx.parse_config(n), maxrregcount=reg)
                r = ctx.pool.ok(s, vx.format_config(c), wk)
                m = metric(r, "mrays_per_s")
                have |= m is not None and reg != 0
                vals.append("%.6g" % m if m is not None else "NaN")
                o.number("mrRegs" + camel(s) + SCHEDULE_WORDS[n] + ("Auto" if reg == 0 else spelled(reg)), m,
                         f_mrays, row_noise(r) if m else 0.0, rows=[r])
            b.append("%s\t%s" % (gp_str("auto" if reg == 0 else reg), "\t".join(vals)))
        blocks.append("\n".join(b))
    if not have:
        o.write("fig_registers.tex", not_run_note(["t44_registers"], ctx.gpu, "The register sweep", "figure",
                                               "fig:registers", "Register budget against Mrays/s"))
        return
    o.write("fig_registers.dat", "\n\n\n".join(blocks) + "\n")
    gp = gp_header("fig_registers", h="2.4in")
    gp += ("set ylabel 'Mrays/s'\nset xlabel 'maxrregcount'\nset key below font ',7'\nset yrange [0:*]\n"
           "set xtics font ',6' rotate by -45\n"
           "set multiplot layout 1,%d\n" % len(spec.scenes))
    for i, s in enumerate(spec.scenes):
        gp += "set title %s\n" % gp_str(s)
        plots = ["'fig_registers.dat' index %d using 0:%d:xtic(1) title %s with points pt 7 ps 0.6 "
                 "lc rgb '%s'" % (i, k + 2, gp_str(n) if i == 0 else "''", SCHEDULE_COLORS[k])
                 for k, n in enumerate(scheds)]
        gp += "plot " + ", ".join(plots) + "\n"
    gp += "unset multiplot\n"
    o.figure("fig_registers", gp)
    o.write("fig_registers.tex", figure_env(
        "fig_registers", "Register budget (maxrregcount; auto: the compiler's choice) against Mrays/s for "
        "thread and warp regeneration (experiment \\texttt{t44\\_registers}). 32 registers give full "
        "occupancy.", "fig:registers"))


def fig_depth(ctx):
    """Figure fig:depth, and each schedule's Mrays/s at each maximum depth
    as a number (\\mrDepthManixStreamingSKOneZeroZero: depth 100)."""
    o = ctx.out
    spec = ctx.specs.get("compaction_depth")
    configs, _ = vx.static_configs(spec)
    blocks, have = [], False
    for s in spec.scenes:
        ws = vx.workloads(spec, s)
        b = ["# %s: max_depth\t%s" % (s, "\t".join(vx.schedule_name(c) for c in configs))]
        for w in ws:
            vals = []
            for c in configs:
                r = ctx.pool.ok(s, c, vx.workload_key(w))
                m = metric(r, "mrays_per_s")
                have |= m is not None
                vals.append("%.6g" % m if m is not None else "NaN")
                o.number("mrDepth" + camel(s) + SCHEDULE_WORDS[vx.schedule_name(c)] + spelled(w["max_depth"]), m,
                         f_mrays, row_noise(r) if m else 0.0, rows=[r])
            b.append("%d\t%s" % (w["max_depth"], "\t".join(vals)))
        blocks.append("\n".join(b))
    if not have:
        o.write("fig_depth.tex", not_run_note(["compaction_depth"], ctx.gpu, "Compaction against depth",
                                           "figure", "fig:depth", "Mrays/s against the maximum path depth"))
        return
    o.write("fig_depth.dat", "\n\n\n".join(blocks) + "\n")
    gp = gp_header("fig_depth", h="2.4in")
    gp += ("set logscale x\nset logscale y\nset xlabel 'maximum path depth'\nset ylabel 'Mrays/s'\n"
           "set key below font ',7'\nset multiplot layout 1,%d\n" % len(spec.scenes))
    for i, s in enumerate(spec.scenes):
        gp += "set title %s\n" % gp_str(s)
        plots = ["'fig_depth.dat' index %d using 1:%d title %s with linespoints lw 1.5 pt 7 ps 0.4 lc rgb '%s'"
                 % (i, k + 2, gp_str(vx.schedule_name(c)) if i == 0 else "''", SCHEDULE_COLORS[k])
                 for k, c in enumerate(configs)]
        gp += "plot " + ", ".join(plots) + "\n"
    gp += "unset multiplot\n"
    o.figure("fig_depth", gp)
    o.write("fig_depth.tex", figure_env(
        "fig_depth", "Mrays/s against the maximum path depth, with and without compaction (experiment "
        "\\texttt{compaction\\_depth}, %s)." % tex(vx.format_workload(vx.base_workload(spec, spec.scenes[0]))),
        "fig:depth"))


def coherence(ctx):
    o = ctx.out
    spec = ctx.specs.get("sorting_coherence")
    configs, _ = vx.static_configs(spec)
    prof = spec.get("metrics")

    def find(*parts):
        return next((m for m in prof if all(p in m for p in parts)), None)
    hit = find("l1tex__", "texture", "hit_rate")
    sectors = find("l1tex__t_sectors_pipe_tex_mem_texture")
    reqs = find("l1tex__t_requests_pipe_tex_mem_texture")
    l2 = find("lts__", "hit_rate")
    tpi = find("thread_inst_executed_per_inst_executed")
    wocc = find("warps_active")
    lines = ["\\begin{table}[tbp]\\centering\\footnotesize",
             "\\caption{SIMD efficiency (harness) at the thesis workload, and texture coherence read by Nsight "
             "Compute from one render (experiment \\texttt{sorting\\_coherence}, %s): L1 texture hit rate, "
             "sectors per texture request (lower: more coherent), L2 hit rate, active threads per warp "
             "instruction (of 32), and achieved occupancy by Nsight Compute beside the harness' own "
             "measurement.}\\label{tab:coherence}"
             % tex(vx.format_workload(vx.base_workload(spec, spec.scenes[0]))),
             "\\begin{tabular}{@{}llrrrrrrrr@{}}", "\\toprule",
             "Scene & Schedule & Mrays/s & SIMD & tex hit & sect./ & L2 hit & thr./ & \\multicolumn{2}{c}{occupancy \\%} "
             "\\\\", " & & & \\% & \\% & req. & \\% & instr. & harness & ncu \\\\",
             "\\midrule"]
    have_prof = False
    for si, s in enumerate(spec.scenes):
        if si:
            lines.append("\\addlinespace")
        wkp = vx.workload_key(vx.base_workload(spec, s))
        for i, c in enumerate(configs):
            r = ctx.pool.ok(s, c, ctx.thesis_wk(s))
            p = ctx.pool.profile(s, c, wkp)
            pm = p.get("metrics", {}) if p else {}
            have_prof |= bool(pm)

            def g(k, fmt):
                v = pm.get(k) if k else None
                return fmt % v if isinstance(v, (int, float)) else "--"
            spr = "--"
            if pm.get(sectors) and pm.get(reqs):
                spr = "%.2f" % (pm[sectors] / pm[reqs])
            lines.append("%s & %s & %s & %s & %s & %s & %s & %s & %s & %s \\\\" % (
                tex(s) if i == 0 else "", tex(vx.schedule_name(c)),
                f_mrays(metric(r, "mrays_per_s")) if metric(r, "mrays_per_s") else "--",
                f_pct(metric(r, "simd_efficiency")) if metric(r, "simd_efficiency") is not None else "--",
                g(hit, "%.1f"), spr, g(l2, "%.1f"), g(tpi, "%.1f"),
                f_pct(metric(r, "occupancy_achieved")) if metric(r, "occupancy_achieved") is not None else "--",
                g(wocc, "%.0f")))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    # Morton sorting against plain block compaction: the texture hit rate
    # and the threads per instruction it changes (discussion).
    deltas, tdeltas = [], []
    for sc in spec.scenes:
        wkp = vx.workload_key(vx.base_workload(spec, sc))
        pc = ctx.pool.profile(sc, vx.canonical("streamingSK"), wkp)
        pmo = ctx.pool.profile(sc, vx.canonical("streamingSK-morton"), wkp)
        a = b = ta = tb = None
        if pc and pmo and hit and tpi:
            a, b = pc["metrics"].get(hit), pmo["metrics"].get(hit)
            ta, tb = pc["metrics"].get(tpi), pmo["metrics"].get(tpi)
        C = camel(sc)
        one = lambda x: "%.1f" % x  # noqa: E731
        # every scene's numbers exist ("--" when not profiled): the prose may cite them
        o.number("cohHitCompact" + C, a, one, key="coherence_hit_compact/" + sc if a is not None else None,
                 rows=[pc])
        o.number("cohHitMorton" + C, b, one, key="coherence_hit_morton/" + sc if b is not None else None,
                 rows=[pmo])
        o.number("cohThreadsCompact" + C, ta, one, rows=[pc])
        o.number("cohThreadsMorton" + C, tb, one, rows=[pmo])
        if None in (a, b, ta, tb):
            continue
        deltas.append(b - a)
        tdeltas.append(tb - ta)
    o.macro("cohHitDeltaMin", "%+.1f" % min(deltas) if deltas else "--")
    o.macro("cohHitDeltaMax", "%+.1f" % max(deltas) if deltas else "--")
    o.macro("cohThreadsDeltaMin", "%+.1f" % min(tdeltas) if deltas else "--")
    o.macro("cohThreadsDeltaMax", "%+.1f" % max(tdeltas) if deltas else "--")
    o.macro("cohScenes", str(len(deltas)))
    note = "" if have_prof else not_run_note(["sorting_coherence"], ctx.gpu,
                                             "Texture coherence (Nsight Compute)")
    o.write("tab_coherence.tex", "\n".join(lines) + "\n" + note)
