"""The thesis' tables (tab:t41 ... tab:t63: the thesis' numbers beside ours and
their ratio, from report/thesis_tables.json and the pool) and its
conclusions' evidence (Table tab:claims)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import f_mrays, f_ratio, f_time, macro_name, metric, tex, tt  # noqa: E402
import mitsuba3  # noqa: E402



def thesis_tables(ctx):
    summary = {}
    for tid in sorted(ctx.thesis["tables"]):
        spec = ctx.spec_for_table(tid)
        T = ctx.thesis["tables"][tid]
        fname = "tab_t%s.tex" % tid.replace(".", "")
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
        text, info = thesis_table(ctx, tid, T, spec)
        ctx.out.write(fname, text)
        summary[tid] = info
    ctx.table_summary = summary


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
        return {"status": "ok", "metrics": {"mrays_per_s": v}, "_file": ""}, ours
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
            if ov is not None:
                ctx.out.macro(macro_name("tile", R["ours"], str(c["tiles"])), f_time(ov),
                               "tiling/%s/%d" % (R["ours"], c["tiles"]))
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
        lines += ["\\begin{tabular}{@{}lllrrr@{}}", "\\toprule",
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
    o = ctx.out

    def mr(scene, name, spec_name="roofline", extra=""):
        sp = ctx.specs[spec_name]
        r = ctx.pool.ok(scene, vx.canonical(name + extra), vx.workload_key(vx.base_workload(sp, scene)))
        return metric(r, "mrays_per_s")

    rows = []

    def verdict(ok):
        return "no data" if ok is None else ("holds" if ok else "does not hold")

    def add(key, claim, where, evidence, ok):
        rows.append((claim, where, evidence, verdict(ok)))
        o.macro("claim" + key, verdict(ok))

    # 4.1: single kernel beats multi kernel
    a, b = mr("cgg-logo", "naiveSK"), mr("cgg-logo", "naiveMK")
    add("SingleKernel", "A single kernel beats a host-driven multi-kernel loop (naiveSK $>$ naiveMK)",
        "4.1", "cgg-logo: %s vs %s Mrays/s" % (f_mrays(a) if a else "--", f_mrays(b) if b else "--"),
        None if a is None or b is None else a > b)
    # 4.3: thread regeneration best on constant density, warp on CT scans
    ev, ok = [], True
    for s, want in (("cgg-logo", "thread"), ("ad", "thread"), ("artifix", "warp"), ("manix", "warp")):
        vals = {lv: mr(s, "regenerationSK-" + lv) for lv in ("thread", "warp", "block")}
        if any(v is None for v in vals.values()):
            ok = None
            break
        win = max(vals, key=vals.get)
        ev.append("%s: %s" % (s, win))
        ok = ok and win == want
    add("RegenLevel", "Among regeneration levels, thread wins on the constant-density prints (cgg-logo, ad), "
        "warp on the CT scans (artifix, manix)", "4.3", "winners: " + ", ".join(ev) if ev else "--", ok)
    # 4.4: bounding registers for full occupancy is slower
    ev, ok = [], True
    for s in ("cgg-logo", "ad", "artifix", "manix"):
        for lv in ("thread", "warp"):
            full = mr(s, "regenerationSK-" + lv, "t44_registers", ",maxrregcount=32")
            auto = mr(s, "regenerationSK-" + lv, "t44_registers")
            if full is None or auto is None:
                ok = None
                break
            ev.append("%.2f" % (full / auto))
            ok = ok and full < auto
        if ok is None:
            break
    add("Registers", "Bounding registers to reach full occupancy (maxrregcount=32) makes thread and warp "
        "regeneration slower", "4.4", ("speed ratio 32/auto: " + ", ".join(ev)) if ok is not None else "--", ok)
    def beats(name_a, name_b, fmt):
        """Ratios a/b on the thesis' four scenes and whether a beats b on
        all of them (None: a measurement is missing)."""
        ev, ok = [], True
        for s in ("cgg-logo", "ad", "artifix", "manix"):
            a, b = mr(s, name_a), mr(s, name_b)
            if a is None or b is None:
                return ev, None
            ev.append(fmt % (a / b))
            ok = ok and a > b
        return ev, ok

    # 4.5: block compaction beats device compaction
    ev, ok = beats("streamingSK", "streamingMK", "%.1f")
    add("BlockCompaction", "Block compaction (streamingSK) beats device compaction (streamingMK)", "4.5",
        ("streamingSK/streamingMK: " + ", ".join(ev)) if ok is not None else "--", ok)
    ev, ok = beats("streamingSK", "regenerationSK-warp", "%.2f")
    add("CompactionVsWarp", "Compaction (streamingSK) beats warp regeneration", "4.5",
        ("streamingSK/warp: " + ", ".join(ev)) if ok is not None else "--", ok)
    # 4.6: sorting does not pay
    ev, ok = [], True
    for s in ("cgg-logo", "ad", "artifix", "manix"):
        a = mr(s, "streamingSK")
        b = max([x for x in (mr(s, "streamingSK-morton"), mr(s, "sortingSK")) if x is not None], default=None)
        if a is None or b is None:
            ok = None
            break
        ev.append("%.2f" % (b / a))
        ok = ok and b <= a
    add("Sorting", "Morton sorting (streamingSK-morton, sortingSK) does not beat plain compaction", "4.6",
        ("best sorting/streamingSK: " + ", ".join(ev)) if ok is not None else "--", ok)
    # 6.2: streamingSK fastest on smoke among the table's GPU rows
    vals = {n: mr("smoke", n) for n in ("regenerationSK-thread", "regenerationSK-warp", "streamingSK",
                                         "sortingSK")}
    ok = None if any(v is None for v in vals.values()) else max(vals, key=vals.get) == "streamingSK"
    add("Smoke", "On the smoke plume, compaction (streamingSK) is the fastest", "6.2",
        ("fastest: %s" % max(vals, key=vals.get)) if ok is not None else "--", ok)
    # 6.3: thread regeneration fastest on bucky
    vals = {n: mr("bucky", n) for n in ("regenerationSK-thread", "streamingSK", "sortingSK", "naiveSK")}
    ok = None if any(v is None for v in vals.values()) else max(vals, key=vals.get) == "regenerationSK-thread"
    add("Bucky", "On the small bucky grid, thread regeneration is the fastest", "6.3",
        ("fastest: %s" % max(vals, key=vals.get)) if ok is not None else "--", ok)
    # 6.1: the GPU beats the CPU, even naive
    ev, ok = [], True
    for s in ("cgg-logo", "ad"):
        c = ctx.pool.cpu_ref(s)
        g = mr(s, "naiveSK")
        if c is None or g is None or metric(c, "mrays_per_s") is None:
            ok = None
            break
        ev.append("%s: %.0f$\\times$" % (s, g / metric(c, "mrays_per_s")))
        ok = ok and g > metric(c, "mrays_per_s")
    add("GpuVsCpu", "The GPU is much faster than the CPU, even with the naive kernel", "6.1",
        ("naiveSK over CPU reference: " + ", ".join(ev)) if ok is not None else "--", ok)
    holds = sum(1 for r in rows if r[3] == "holds")
    fails = sum(1 for r in rows if r[3] == "does not hold")
    nodata = sum(1 for r in rows if r[3] == "no data")
    o.macro("claimsTotal", str(len(rows)))
    o.macro("claimsHold", str(holds))
    o.macro("claimsFail", str(fails))
    o.macro("claimsNoData", str(nodata))
    t = ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{The thesis' conclusions tested on the %s at the thesis workload. Verdicts are computed "
         "from the results; ``no data'': an experiment it needs has not run yet.}\\label{tab:claims}"
         % tex(ctx.gpu_short),
         "\\begin{tabular}{@{}p{0.38\\linewidth}cp{0.33\\linewidth}l@{}}", "\\toprule",
         "Thesis' conclusion & Table & Evidence on \\gpuArch & Verdict \\\\", "\\midrule"]
    t += ["%s & %s & \\footnotesize %s & %s \\\\" % r for r in rows]
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("claims.tex", "\n".join(t) + "\n")


def method_to_ours(ctx, method, tid):
    for R in ctx.thesis["tables"][tid]["rows"]:
        if R["method"] == method:
            return R["ours"] if R["ours"] not in (None, "cpu") else None
    return None
