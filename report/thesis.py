"""The thesis' tables (tab:t41 ... tab:t63: the thesis' numbers beside ours and
their ratio, from report/thesis_tables.json and the pool) and its
conclusions' evidence (Table tab:claims)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import camel, f_mrays, f_ratio, f_time, macro_name, metric, row_noise, tex, tt  # noqa: E402
import mitsuba3  # noqa: E402



def thesis_tables(ctx):
    for tid in sorted(ctx.thesis["tables"]):
        spec = ctx.spec_for_table(tid)
        T = ctx.thesis["tables"][tid]
        fname = "tab_t%s.tex" % tid.replace(".", "")
        ctx.begin()
        if spec is None:
            raise SystemExit("generate: no spec has thesis_table = %s" % tid)
        if not spec.implemented:
            ctx.out.write(fname, thesis_table_unimplemented(ctx, tid, T, spec))
            continue
        if any("tiles" in c for c in T["columns"]):
            ctx.out.write(fname, tiling_table(ctx, tid, T, spec))
            continue
        if tid == "6.1":
            extra, note = mitsuba3.rows_61(ctx)
            T = dict(T, rows=list(T["rows"]) + extra, mitsuba_note=note)
        text, _ = thesis_table(ctx, tid, T, spec)
        ctx.out.write(fname, text)


def lookup(ctx, ours, scene, spec, **workload):
    """Our row for a thesis row: ours is a config text or 'cpu'; workload
    overrides the spec's base workload (e.g. tiles=4)."""
    if ours is None:
        return None, None
    if ours == "cpu":
        return ctx.pool.cpu_ref(scene), "cpu"
    if ours.startswith("mitsuba:"):
        _, folder, side = ours.split(":")
        r = ctx.mitsuba.row(folder, scene)
        if r is None:
            return None, ours
        v = r.get(side, {}).get("mrays_per_s")
        ctx.touch([r])
        return {"status": "ok", "metrics": {"mrays_per_s": v}, "_file": "", "commit": r.get("commit")}, ours
    canon = vx.canonical(ours)
    wk = vx.workload_key(dict(vx.base_workload(spec, scene), **workload))
    return ctx.pool.result(scene, canon, wk), canon


def tiling_table(ctx, tid, T, spec):
    """Thesis 4.2: tile settings down, methods across (thesis time, ours,
    ratio), one column group per method; times of the whole image."""
    cols, rows = T["columns"], T["rows"]
    scene = cols[0]["scene"]
    sources, lines = set(), []
    head1, head2 = ["", ""], ["Tiles", "Paths per tile"]
    for R in rows:
        head1.append("\\multicolumn{3}{c}{%s}" % tex(R["method"]))
        head2 += ["thesis", "ours", "speedup"]
    body = []
    for c in cols:
        cells = [tex(c["key"]), tex(c.get("paths_per_tile", ""))]
        for R in rows:
            row, _ = lookup(ctx, R["ours"], scene, spec, tiles=c["tiles"])
            if row is not None:
                sources.add(os.path.basename(row["_file"]))
            tv = R["values"].get(c["key"])
            ov = our_value(ctx, row, "time_s")
            st = cell_status(ctx, row)
            cells += [tex(tv) if tv else "--", st or f_time(ov),
                      f_ratio(float(tv) / ov) if (ov and tv) else "--"]
            ctx.out.number(macro_name("tile", R["ours"], str(c["tiles"])), ov, f_time,
                           row_noise(row) if ov is not None else 0.0, "lower",
                           "tiling/%s/%d" % (R["ours"], c["tiles"]) if ov is not None else None, rows=[row])
        body.append(" & ".join(cells) + " \\\\")
    w = vx.base_workload(spec, scene)
    src = ", ".join(tt("results/%s/%s" % (ctx.gpu, x)) for x in sorted(sources)) or "none yet"
    caption = ("%s: thesis table %s beside vptune on the %s: time (s) to render the whole %dx%d image of %s at "
               "%d spp in (n,n) tiles, one launch per tile (multi-kernel schedules: one host loop per tile). "
               "Tiling keeps every path: the same image and counts as untiled. Ours at %s; from %s (spec %s). "
               "Speedup: thesis time / ours." % (tex(T["title"]), tid, tex(ctx.gpu_short), w["width"], w["height"],
                                          tex(scene), w["spp"], tex(vx.format_workload(w)), src, tt(spec.name)))
    if T.get("notes"):
        caption += " " + " ".join(tex(n) for n in T["notes"])
    lines += ["\\begin{table}[tbp]\\centering\\small",
              "\\caption{%s}\\label{tab:t%s}" % (caption, tid.replace(".", "")),
              "\\begin{tabular}{@{}lr%s@{}}" % ("rrr" * len(rows)), "\\toprule",
              " & ".join(head1) + " \\\\", " & ".join(head2) + " \\\\", "\\midrule"]
    lines += body
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def our_value(ctx, row, quantity):
    if row is None or row.get("status") != "ok":
        return None
    if quantity == "mrays_per_s":
        return metric(row, "mrays_per_s")
    if quantity == "time_s":
        t = metric(row, "time_ms")
        return t / 1000.0 if t is not None else None
    return None


def cell_status(ctx, row):
    if row is None:
        return "n/a"
    if row.get("status") != "ok":
        return "\\emph{%s}" % tex(row.get("status"))
    return None


def thesis_table(ctx, tid, T, spec):
    cols = T["columns"]
    scenes = []
    for c in cols:
        if c["scene"] not in scenes:
            scenes.append(c["scene"])
    info = {"scenes": {}, "spec": spec.name}
    sources = set()
    # values[(row index, column key)] = (thesis float or None, ours float or None, cell text)
    cells = {}
    for i, R in enumerate(T["rows"]):
        for c in cols:
            row, canon = lookup(ctx, R["ours"], c["scene"], spec)
            if row is not None and row["_file"]:
                sources.add(os.path.basename(row["_file"]))
            tv = R["values"].get(c["key"])
            ov = our_value(ctx, row, c["quantity"])
            cells[(i, c["key"])] = (float(tv) if tv else None, tv, ov, row)
    # winners per column (for bold)
    best_t, best_o = {}, {}
    for c in cols:
        if c["quantity"] != "mrays_per_s":
            continue
        def ours_gpu(i):  # vptune's GPU schedules only: not the CPU, not Mitsuba
            o = T["rows"][i]["ours"]
            return o != "cpu" and not (o or "").startswith("mitsuba:")
        tvals = [(cells[(i, c["key"])][0], i) for i in range(len(T["rows"]))
                 if cells[(i, c["key"])][0] is not None and ours_gpu(i)]
        ovals = [(cells[(i, c["key"])][2], i) for i in range(len(T["rows"]))
                 if cells[(i, c["key"])][2] is not None and ours_gpu(i)]
        if tvals:
            best_t[c["key"]] = max(tvals)[1]
        if ovals:
            best_o[c["key"]] = max(ovals)[1]
        info["scenes"][c["scene"]] = {
            "thesis_best": T["rows"][best_t[c["key"]]]["method"] if tvals else None,
            "ours_best": T["rows"][best_o[c["key"]]]["method"] if ovals else None,
            "ours_best_value": max(ovals)[0] if ovals else None,
            "thesis_best_value": max(tvals)[0] if tvals else None,
        }

    def fmt_t(i, key):
        ts = cells[(i, key)][1]
        if ts is None:
            return "--"
        return "\\textbf{%s}" % ts if best_t.get(key) == i else ts

    def fmt_o(i, key, q):
        tv, ts, ov, row = cells[(i, key)]
        st = cell_status(ctx, row)
        if T["rows"][i]["ours"] is None:
            return "--"
        if st:
            return st
        s = f_mrays(ov) if q == "mrays_per_s" else f_time(ov)
        return "\\textbf{%s}" % s if best_o.get(key) == i else s

    def fmt_r(i, key):
        tv, ts, ov, row = cells[(i, key)]
        if tv is None or ov is None or tv == 0:
            return "--"
        return f_ratio(ov / tv)

    lines = []
    single_scene = len(scenes) == 1
    unit_note = ("Mrays/s: millions of path extensions per second. " if any(c["quantity"] == "mrays_per_s"
                                                                           for c in cols) else "")
    w = vx.base_workload(spec, scenes[0])
    wl = vx.format_workload(w)
    src = ", ".join(tt("results/%s/%s" % (ctx.gpu, s)) for s in sorted(sources)) or "none yet"
    caption = ("%s: thesis table %s beside vptune on the %s. %sBold: the fastest GPU method of each column. "
               "Ours at %s; from %s (spec %s). Ratio: ours / thesis."
               % (tex(T["title"]), tid, tex(ctx.gpu_short), unit_note, tex(wl), src, tt(spec.name)))
    if any(v[3] is None and T["rows"][int(i)]["ours"] is not None for (i, _), v in cells.items()):
        caption += " n/a: not measured yet."
    if T.get("notes"):
        caption += " " + " ".join(tex(n) for n in T["notes"])
    if T.get("mitsuba_note"):
        caption += " " + T["mitsuba_note"]
    lines.append("\\begin{table}[tbp]\\centering\\small")
    lines.append("\\caption{%s}\\label{tab:t%s}" % (caption, tid.replace(".", "")))
    if single_scene and len(cols) > 1:
        # one scene, several quantities: methods down, quantities across
        spec_cols = "@{}ll" + "rrr" * sum(1 for c in cols if c["quantity"] == "mrays_per_s") + \
            "rr" * sum(1 for c in cols if c["quantity"] != "mrays_per_s") + "@{}"
        head1, head2 = ["", ""], ["Method (thesis)", "vptune config"]
        for c in cols:
            if c["quantity"] == "mrays_per_s":
                head1.append("\\multicolumn{3}{c}{Mrays/s}")
                head2 += ["thesis", "ours", "ratio"]
            else:
                head1.append("\\multicolumn{2}{c}{time (s)}")
                head2 += ["thesis", "ours"]
        lines += ["\\begin{tabular}{%s}" % spec_cols, "\\toprule", " & ".join(head1) + " \\\\",
                  " & ".join(head2) + " \\\\", "\\midrule"]
        for i, R in enumerate(T["rows"]):
            cfg = config_label(ctx, R["ours"])
            cells_txt = [tex(R["method"]), cfg]
            for c in cols:
                cells_txt += [fmt_t(i, c["key"]), fmt_o(i, c["key"], c["quantity"])]
                if c["quantity"] == "mrays_per_s":
                    cells_txt.append(fmt_r(i, c["key"]))
            lines.append(" & ".join(cells_txt) + " \\\\")
    else:
        lines += ["\\setlength{\\tabcolsep}{3pt}\\begin{tabular}{@{}lllrrr@{}}", "\\toprule",
                  "Scene & Method (thesis) & vptune config & Thesis & Ours & Ratio \\\\", "\\midrule"]
        for si, s in enumerate(scenes):
            if si:
                lines.append("\\addlinespace")
            for i, R in enumerate(T["rows"]):
                c = [c for c in cols if c["scene"] == s][0]
                lines.append("%s & %s & %s & %s & %s & %s \\\\" % (
                    tex(s) if i == 0 else "", tex(R["method"]), config_label(ctx, R["ours"]),
                    fmt_t(i, c["key"]), fmt_o(i, c["key"], c["quantity"]), fmt_r(i, c["key"])))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    info["cells"] = {("%d" % i, k): (v[0], v[2]) for (i, k), v in cells.items()}
    info["rows"] = T["rows"]
    info["cols"] = cols
    return "\n".join(lines) + "\n", info


def config_label(ctx, ours):
    if ours is None:
        return "--"
    if ours == "cpu":
        return "CPU reference"
    if ours.startswith("mitsuba:"):
        return "\\footnotesize " + tt("experiments/mitsuba")
    d = vx.describe_config(vx.canonical(ours))
    return "\\footnotesize " + tt(d)


def thesis_table_unimplemented(ctx, tid, T, spec):
    cols = T["columns"]
    lines = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{%s: thesis table %s (%s; %s). \\textbf{vptune does not implement this variant yet} "
             "(%s), so there are no measurements of ours; the spec %s is ready for when it does.}"
             "\\label{tab:t%s}" % (tex(T["title"]), tid, tex(T["workload"]), tex(T["unit"]),
                                   tex(spec.get("reason")), tt(spec.name), tid.replace(".", "")),
             "\\begin{tabular}{@{}l%s@{}}" % ("r" * len(cols)), "\\toprule",
             "Tiles & " + " & ".join(tex(c["key"]) for c in cols) + " \\\\",
             "Paths per tile & " + " & ".join(tex(c.get("paths_per_tile", "")) for c in cols) + " \\\\",
             "\\midrule"]
    for R in T["rows"]:
        lines.append(tex(R["method"]) + " (thesis) & " + " & ".join(
            tex(R["values"].get(c["key"]) or "--") for c in cols) + " \\\\")
    lines.append("\\midrule")
    lines.append("vptune & \\multicolumn{%d}{c}{\\emph{not implemented yet: no numbers}} \\\\" % len(cols))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def claims(ctx):
    """Table tab:claims: each conclusion of the thesis' chapters 4 and 6 and
    the measurements that decide it. The verdicts are argued in the prose
    (discussion.tex, \\verdict), not here; also the CPU reference's Mrays/s
    as numbers (\\mrCpuCggLogo)."""
    o = ctx.out
    THESIS_SCENES = ("cgg-logo", "ad", "artifix", "manix")

    def mr(scene, name, spec_name="roofline", extra=""):
        sp = ctx.specs[spec_name]
        r = ctx.pool.ok(scene, vx.canonical(name + extra), vx.workload_key(vx.base_workload(sp, scene)))
        return metric(r, "mrays_per_s")

    def ratios(name_a, name_b, fmt, scenes=THESIS_SCENES):
        """name_a / name_b per scene, '--' where one is missing."""
        out = []
        for s in scenes:
            a, b = mr(s, name_a), mr(s, name_b)
            out.append("%s %s" % (s, fmt % (a / b) if a and b else "--"))
        return ", ".join(out)

    def fastest(scene, names):
        vals = {n: mr(scene, n) for n in names}
        vals = {n: v for n, v in vals.items() if v is not None}
        return max(vals, key=vals.get) if vals else "--"

    rows = []
    a, b = mr("cgg-logo", "naiveSK"), mr("cgg-logo", "naiveMK")
    rows.append(("A single kernel beats a host-driven multi-kernel loop (naiveSK $>$ naiveMK)", "4.1",
                 "cgg-logo: %s vs %s Mrays/s" % (f_mrays(a) if a else "--", f_mrays(b) if b else "--")))
    rows.append(("Among regeneration levels, thread wins on the constant-density prints (cgg-logo, ad), warp on "
                 "the CT scans (artifix, manix)", "4.3", "fastest level: " + ", ".join(
                     "%s %s" % (s, fastest(s, ["regenerationSK-" + lv for lv in ("thread", "warp", "block")])
                                .replace("regenerationSK-", "")) for s in THESIS_SCENES)))
    ev = []
    for s in THESIS_SCENES:
        for lv in ("thread", "warp"):
            full = mr(s, "regenerationSK-" + lv, "t44_registers", ",maxrregcount=32")
            auto = mr(s, "regenerationSK-" + lv, "t44_registers")
            ev.append("%s %s %s" % (s, lv, "%.2f" % (full / auto) if full and auto else "--"))
    rows.append(("Bounding registers to reach full occupancy (maxrregcount=32) makes thread and warp "
                 "regeneration slower", "4.4", "Mrays/s at 32 registers / at the compiler's choice: " + ", ".join(ev)))
    rows.append(("Block compaction (streamingSK) beats device compaction (streamingMK)", "4.5",
                 "streamingSK / streamingMK: " + ratios("streamingSK", "streamingMK", "%.1f")))
    rows.append(("Compaction (streamingSK) beats warp regeneration", "4.5",
                 "streamingSK / warp: " + ratios("streamingSK", "regenerationSK-warp", "%.2f")))
    ev = []
    for s in THESIS_SCENES:
        a = mr(s, "streamingSK")
        b = max([x for x in (mr(s, "streamingSK-morton"), mr(s, "sortingSK")) if x is not None], default=None)
        ev.append("%s %s" % (s, "%.2f" % (b / a) if a and b else "--"))
    rows.append(("Morton sorting (streamingSK-morton, sortingSK) does not beat plain compaction", "4.6",
                 "faster sorting schedule / streamingSK: " + ", ".join(ev)))
    rows.append(("On the smoke plume, compaction (streamingSK) is the fastest", "6.2", "fastest of the table's "
                 "four: " + fastest("smoke", ("regenerationSK-thread", "regenerationSK-warp", "streamingSK",
                                             "sortingSK"))))
    rows.append(("On the small bucky grid, thread regeneration is the fastest", "6.3", "fastest of the table's four: "
                 + fastest("bucky", ("regenerationSK-thread", "streamingSK", "sortingSK", "naiveSK"))))
    ev = []
    for s in ("cgg-logo", "ad", "smoke"):
        cr = ctx.pool.cpu_ref(s)
        c = metric(cr, "mrays_per_s")
        o.number("mrCpu" + camel(s), c, f_mrays, rows=[cr])
        g = mr(s, "naiveSK")
        ev.append("%s %s" % (s, "%.0f$\\times$" % (g / c) if c and g else "--"))
    rows.append(("The GPU is much faster than the CPU, even with the naive kernel", "6.1",
                 "naiveSK / CPU reference: " + ", ".join(ev)))
    t = ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{The thesis' conclusions and the measurements on the %s (thesis workload) that decide them; "
         "Section~\\ref{sec:discussion} argues each verdict.}\\label{tab:claims}" % tex(ctx.gpu_short),
         "\\begin{tabular}{@{}p{0.40\\linewidth}cp{0.44\\linewidth}@{}}", "\\toprule",
         "Thesis' conclusion & Table & Evidence on \\gpuArch \\\\", "\\midrule"]
    t += ["%s & %s & \\footnotesize %s \\\\" % r for r in rows]
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("claims.tex", "\n".join(t) + "\n")
