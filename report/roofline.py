"""The roofline part: each scene's fastest configuration against the
divergence-free step loop (Table tab:key and the key-number macros), the
nine schedules (Figure fig:schedules) and their roofline fractions
(Figure fig:roofline, Table tab:roofline)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import (SCENES, SCENE_COLORS, SCHEDULE_WORDS, camel, f_gsteps, f_mrays, f_pct, figure_env, gp_header,
                    gp_str, metric, not_run_note, row_noise, tex, tt)  # noqa: E402


def fastest(ctx, scene):
    """The fastest ok row of scene at the thesis workload (ctx.best's rows)."""
    rows = [r for r in ctx.pool.at_workload(scene, ctx.thesis_wk(scene)) if r.get("status") == "ok"
            and metric(r, "mrays_per_s") is not None]
    return max(rows, key=lambda r: (metric(r, "mrays_per_s"), r["config"])) if rows else None


def key_numbers(ctx):
    o = ctx.out
    lines = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{Key numbers per scene at the thesis workload (\\thesisWorkloadFull): "
             "the fastest configuration measured, its Mrays/s, achieved occupancy and SIMD efficiency, and the "
             "divergence-free step loop (roofline) with random rays, camera tiles (a warp is an 8x4 pixel tile "
             "of primary rays, each lane with its own distances) and one-voxel bundles (a warp shares direction "
             "and distances: no unbiased tracer reaches it). Fractions: the fastest configuration's Gsteps/s over "
             "the random-ray and the camera-tile loop's.}\\label{tab:key}",
             "\\begin{tabular}{@{}l>{\\raggedright\\arraybackslash}p{0.26\\textwidth}rrrrrrrr@{}}", "\\toprule",
             "Scene & Fastest configuration & Mrays/s & Occ. & SIMD & \\multicolumn{3}{c}{Roofline Gsteps/s} "
             "& \\multicolumn{2}{c}{Fraction \\%} \\\\",
             " & & & \\% & \\% & random & camera & bundle & random & camera \\\\", "\\midrule"]
    ctx.best = {}
    speedups = []
    for s in SCENES:
        best = fastest(ctx, s)
        rr, rc = ctx.pool.roof(s, "random"), ctx.pool.roof(s, "coherent")
        gr, gc = metric(rr, "gsteps_per_s"), metric(rc, "gsteps_per_s")
        gm = metric(ctx.pool.roof(s, "camera"), "gsteps_per_s")
        C = camel(s)
        ctx.best[s] = best
        if best is not None:
            ctx.tuned_shown(s)
        o.macro("roofCamera" + C, f_gsteps(gm) if gm else "--", "roofline_camera/" + s)
        if best is None:
            o.number("bestMrays" + C, None, f_mrays, key="best_mrays/" + s)
            lines.append("%s & \\multicolumn{4}{c}{no measurement} & %s & %s & %s & -- & -- \\\\" % (
                tex(s), f_gsteps(gr) if gr else "--", f_gsteps(gm) if gm else "--", f_gsteps(gc) if gc else "--"))
            continue
        m = metric(best, "mrays_per_s")
        occ, simd = metric(best, "occupancy_achieved"), metric(best, "simd_efficiency")
        gs = metric(best, "gsteps_per_s")
        frac = gs / gr if gs and gr else None
        o.number("bestMrays" + C, m, f_mrays, row_noise(best), key="best_mrays/" + s, rows=[best])
        o.macro("bestSchedule" + C, tex(best.get("schedule") or vx.schedule_name(best["config"])))
        o.macro("bestConfig" + C, tt(vx.describe_config(best["config"])))
        o.macro("bestOcc" + C, f_pct(occ) if occ is not None else "--")
        o.macro("bestSimd" + C, f_pct(simd) if simd is not None else "--")
        o.macro("roofRandom" + C, f_gsteps(gr) if gr else "--", "roofline_random/" + s)
        o.macro("roofCoherent" + C, f_gsteps(gc) if gc else "--", "roofline_coherent/" + s)
        o.macro("bestRoofFrac" + C, f_pct(frac) if frac else "--")
        fcam = gs / gm if gs and gm else None
        o.macro("bestCameraFrac" + C, f_pct(fcam) if fcam else "--", "best_camera_frac/" + s)
        lines.append("%s & \\footnotesize %s & %s & %s & %s & %s & %s & %s & %s & %s \\\\" % (
            tex(s), tt(vx.describe_config(best["config"])), f_mrays(m),
            f_pct(occ) if occ is not None else "--", f_pct(simd) if simd is not None else "--",
            f_gsteps(gr) if gr else "--", f_gsteps(gm) if gm else "--", f_gsteps(gc) if gc else "--",
            f_pct(frac) if frac else "--", f_pct(fcam) if fcam else "--"))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("keynumbers.tex", "\n".join(lines) + "\n")
    # Fastest per scene against the thesis' fastest on the same scene.
    thesis_best = {}
    for tid, T in ctx.thesis["tables"].items():
        for R in T["rows"]:
            if R["ours"] in (None, "cpu"):
                continue
            for c in T["columns"]:
                v = R["values"].get(c["key"])
                if c["quantity"] == "mrays_per_s" and v:
                    if float(v) > thesis_best.get(c["scene"], (0, ""))[0]:
                        thesis_best[c["scene"]] = (float(v), R["method"], tid)
    for s in SCENES:
        if s in thesis_best:
            tb = thesis_best[s]
            C = camel(s)
            o.macro("thesisBestMrays" + C, "%g" % tb[0])
            o.macro("thesisBestMethod" + C, tex(tb[1]))
            if ctx.best.get(s) is not None:
                sp = metric(ctx.best[s], "mrays_per_s") / tb[0]
                speedups.append((sp, s))
                o.macro("speedupOverThesis" + C, "%.0f" % sp)
    if speedups:
        lo, hi = min(speedups), max(speedups)
        o.macro("minSpeedup", "%.0f" % lo[0])
        o.macro("minSpeedupScene", tex(lo[1]))
        o.macro("maxSpeedup", "%.0f" % hi[0])
        o.macro("maxSpeedupScene", tex(hi[1]))
        o.macro("numSpeedupScenes", str(len(speedups)))
    ok_best = [(metric(r, "mrays_per_s"), s) for s, r in ctx.best.items() if r is not None]
    if ok_best:
        o.macro("fastestSceneMrays", f_mrays(max(ok_best)[0]))
        o.macro("fastestScene", tex(max(ok_best)[1]))
        o.macro("slowestSceneMrays", f_mrays(min(ok_best)[0]))
        o.macro("slowestScene", tex(min(ok_best)[1]))


def fig_schedules(ctx):
    o = ctx.out
    lines = ["# schedule\t" + "\t".join(SCENES)]
    have = False
    for name in vx.SCHEDULE_NAMES:
        vals = []
        for s in SCENES:
            r = ctx.schedule_rows(s)[name]
            m = metric(r, "mrays_per_s") if r is not None and r.get("status") == "ok" else None
            have |= m is not None
            vals.append("%.6g" % m if m is not None else "NaN")
            o.number("mr" + camel(s) + SCHEDULE_WORDS[name], m, f_mrays, row_noise(r) if m else 0.0, rows=[r])
            simd = metric(r, "simd_efficiency") if m is not None else None
            o.number("simd" + camel(s) + SCHEDULE_WORDS[name], simd, f_pct, rows=[r])
        lines.append("%s\t%s" % (gp_str(name), "\t".join(vals)))
    if not have:
        o.write("fig_schedules.tex", not_run_note(["roofline"], ctx.gpu, "The nine thesis schedules", "figure",
                                               "fig:schedules", "Mrays/s of the nine thesis schedules"))
        return
    o.write("fig_schedules.dat", "\n".join(lines) + "\n")
    gp = gp_header("fig_schedules", h="3.0in")
    gp += ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
           "set boxwidth 0.9\nset logscale y\nset yrange [1:*]\nset ylabel 'Mrays/s (log)'\n"
           "set xtics rotate by -30 left nomirror\nset key outside top center horizontal font ',7'\n"
           "set format y '10^{%L}'\n")
    plots = ["'fig_schedules.dat' using %d:xtic(1) title %s lc rgb '%s'" % (i + 2, gp_str(s), SCENE_COLORS[i])
             for i, s in enumerate(SCENES)]
    gp += "plot " + ", \\\n     ".join(plots) + "\n"
    o.figure("fig_schedules", gp)
    o.write("fig_schedules.tex", figure_env(
        "fig_schedules", "Mrays/s of the nine thesis schedules on each scene at the thesis workload "
        "(log scale; thesis settings: block 256, compiler's register choice). Missing bars: not measured "
        "or failed.", "fig:schedules"))


def fig_roofline(ctx):
    o = ctx.out
    lines = ["# schedule\t" + "\t".join("%s_random\t%s_coherent" % (s, s) for s in SCENES)]
    table = ["\\begin{table}[tbp]\\centering\\footnotesize",
             "\\caption{Each schedule's Gsteps/s (Woodcock steps, null collisions included) as a percentage of "
             "the divergence-free step loop with random rays on the same scene and GPU; the loop's own rates "
             "are in Table~\\ref{tab:key}.}\\label{tab:roofline}",
             "\\begin{tabular}{@{}l%s@{}}" % ("r" * len(SCENES)), "\\toprule",
             "Schedule & " + " & ".join(tex(s) for s in SCENES) + " \\\\", "\\midrule"]
    have = False
    for name in vx.SCHEDULE_NAMES:
        vals, cells = [], []
        for s in SCENES:
            r = ctx.schedule_rows(s)[name]
            g = metric(r, "gsteps_per_s") if r is not None and r.get("status") == "ok" else None
            rr, rc = metric(ctx.pool.roof(s, "random"), "gsteps_per_s"), \
                metric(ctx.pool.roof(s, "coherent"), "gsteps_per_s")
            fr = g / rr if g and rr else None
            fc = g / rc if g and rc else None
            have |= fr is not None
            vals += ["%.6g" % fr if fr else "NaN", "%.6g" % fc if fc else "NaN"]
            cells.append(("%.1f" if fr >= 0.01 else "%.2f") % (100 * fr) if fr else "--")
        lines.append("%s\t%s" % (gp_str(name), "\t".join(vals)))
        table.append("%s & %s \\\\" % (tex(name), " & ".join(cells)))
    table += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    if not have:
        o.write("fig_roofline.tex", not_run_note(["roofline"], ctx.gpu, "The roofline", "figure",
                                              "fig:roofline", "Roofline fractions"))
        o.write("tab_roofline.tex", not_run_note(["roofline"], ctx.gpu, "The roofline", "table",
                                              "tab:roofline", "Roofline fractions"))
        return
    o.write("tab_roofline.tex", "\n".join(table) + "\n")
    o.write("fig_roofline.dat", "\n".join(lines) + "\n")
    gp = gp_header("fig_roofline", h="4.2in")
    gp += ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
           "set logscale y\nset format y '%g'\nset yrange [0.0001:1.5]\n"
           "set xtics rotate by -30 left nomirror font ',7'\nset key outside top center horizontal font ',7'\n"
           "set multiplot layout 2,1\n")
    for k, label in ((0, "random"), (1, "coherent")):
        gp += "set ylabel 'fraction of the %s-ray loop'\n" % label
        plots = ["'fig_roofline.dat' using %d:xtic(1) title %s lc rgb '%s'"
                 % (2 + 2 * i + k, gp_str(s) if k == 0 else "''", SCENE_COLORS[i]) for i, s in enumerate(SCENES)]
        gp += "plot " + ", \\\n     ".join(plots) + "\n"
        if k == 0:
            gp += "unset key\n"
    gp += "unset multiplot\n"
    o.figure("fig_roofline", gp)
    o.write("fig_roofline.tex", figure_env(
        "fig_roofline", "Roofline fractions: each schedule's Gsteps/s divided by the divergence-free Woodcock "
        "step loop's over the same texture, with random rays (top) and warp-coherent rays (bottom); log scale.",
        "fig:roofline"))
