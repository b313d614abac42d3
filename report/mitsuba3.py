"""The Mitsuba 3 comparison (experiments/mitsuba): its rows for thesis
table 6.1 and the Mitsuba table (tab:mitsuba), from results/<gpu>/mitsuba.jsonl
(the report's GPU) and results/cpu-*/mitsuba.jsonl (CPU machines)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import SCENES, f_sec, not_run_note, tex, tt  # noqa: E402

INPUTS = {"report: table 6.1 and the Mitsuba table": ["{gpu}/mitsuba.jsonl", "cpu-*/mitsuba.jsonl"]}


class MitsubaRuns:
    """experiments/mitsuba's rows: results/<gpu>/mitsuba.jsonl (the
    report's GPU) and results/cpu-*/mitsuba.jsonl (CPU machines). For each
    (folder, scene, control) the newest row counts."""

    def __init__(self, results_dir, gpu):
        self.folders = []
        for d in [gpu] + sorted(n for n in os.listdir(results_dir) if n.startswith("cpu-")):
            path = os.path.join(results_dir, d, "mitsuba.jsonl")
            if not os.path.exists(path):
                continue
            rows = [r for r in vx.read_rows(path) if r.get("kind") == "mitsuba_compare"]
            newest = vx.newest_by(rows, lambda r: (r.get("scene"), r.get("control")))
            if newest:
                self.folders.append((d, newest))

    def row(self, folder, scene, control=None):
        for d, newest in self.folders:
            if d == folder:
                r = newest.get((scene, control))
                return r if r is not None and r.get("status") == "ok" else None
        return None

    def any_ok(self):
        return any(r.get("status") == "ok" for _, n in self.folders for r in n.values())

    def machine(self, folder):
        """'NVIDIA H100 80GB HBM3' or 'AMD EPYC, 2 threads' from a folder's rows."""
        for d, newest in self.folders:
            if d != folder:
                continue
            for r in sorted(newest.values(), key=vx.row_time, reverse=True):
                if r.get("status") != "ok":
                    continue
                if isinstance(r.get("gpu"), dict) and r["gpu"].get("name"):
                    return r["gpu"]["name"]
                cpu = r.get("machine", {}).get("cpu", {})
                return "%s, %s threads" % (cpu.get("model", "?"), cpu.get("threads", "?"))
        return folder




def rows_61(ctx):
    """Rows for table 6.1 from experiments/mitsuba (none without
    results), and a caption sentence."""
    rows, files = [], []
    for folder, newest in ctx.mitsuba.folders:
        oks = [r for (sc, ctl), r in newest.items() if ctl is None and r.get("status") == "ok"]
        if not oks:
            continue
        files.append(tt("results/%s/mitsuba.jsonl" % folder))
        variant = oks[0].get("mitsuba", {}).get("variant", "?")
        where = ctx.mitsuba.machine(folder)
        rows.append({"method": "Mitsuba 3 (%s) on %s" % (variant, where), "ours": "mitsuba:%s:mitsuba" % folder,
                     "values": {}})
        if oks[0].get("vptune", {}).get("backend") == "cpu":
            rows.append({"method": "vptune CPU reference on %s" % where, "ours": "mitsuba:%s:vptune" % folder,
                         "values": {}})
    if not rows:
        return [], ""
    note = ("Mitsuba 3 rows: %s (experiments/mitsuba; Table~\\ref{tab:mitsuba} gives their workloads and "
            "whether the images agree); Mitsuba counts no path extensions, so its Mrays/s is vptune's "
            "extension count of the same workload over Mitsuba's render time." % ", ".join(files))
    return rows, note


def table(ctx):
    """Table tab:mitsuba: every experiments/mitsuba row, per machine."""
    label, cap = "tab:mitsuba", "Mitsuba 3 beside vptune on the same scenes (experiments/mitsuba)"
    if not ctx.mitsuba.any_ok():
        ctx.out.write("tab_mitsuba.tex", not_run_note(["mitsuba"], ctx.gpu, "The Mitsuba 3 comparison",
                                                      env="table", label=label, caption=cap)
                       .replace("experiments/run mitsuba", "experiments/mitsuba"))
        ctx.out.macro("mitsubaRuns", "0")
        return
    lines = ["\\begin{table}[tbp]\\centering\\footnotesize"]
    body = []
    n = 0
    notes = set()
    for folder, newest in ctx.mitsuba.folders:
        items = sorted(newest.items(), key=lambda kv: (kv[0][1] is not None, SCENES.index(kv[0][0])
                                                       if kv[0][0] in SCENES else 99, kv[0][1] or ""))
        body.append("\\midrule\\multicolumn{10}{@{}l}{\\textbf{%s} (%s)} \\\\"
                    % (tex(ctx.mitsuba.machine(folder)), tt("results/%s/mitsuba.jsonl" % folder)))
        ctx.touch([r for _, r in items])
        for (scene, control), r in items:
            name = tex(scene) + (" (%s boundary)" % tex(control) if control else "")
            if r.get("status") != "ok":
                body.append("%s & \\multicolumn{9}{l}{\\emph{%s}: %s} \\\\"
                            % (name, tex(r.get("status")), tex((r.get("reason") or "")[:70])))
                continue
            n += 1
            w, c, m, v = r["workload"], r["compare"], r["mitsuba"], r["vptune"]
            notes.add("%s: Mitsuba %s %s, drjit %s; vptune %s" % (
                ctx.mitsuba.machine(folder), tex(m.get("variant", "?")),
                tex(m.get("versions", {}).get("mitsuba", "?")), tex(m.get("versions", {}).get("drjit", "?")),
                "GPU, per-scene config" if v.get("backend") == "gpu" else "CPU reference"))
            body.append("%s & %dx%d, %d & %d & %s & %s & %.1f & %.1f & %s & %s & %s \\\\" % (
                name, w["width"], w["height"], w["spp"], r["renders_per_side"],
                f_sec(m["time"]["median_s"]), f_sec(v["time"]["median_s"]),
                m["time"]["median_s"] / v["time"]["median_s"], 100 * c["fraction_failed"],
                "%.2g" % c["block_chi2_p"],
                "%+.2f\\%% (%.2g)" % (100 * c["image_mean"]["rel_diff"], c["image_mean"]["p"]),
                "%.1f" % r["time_to_equal_error_ratio"] if r.get("time_to_equal_error_ratio") else "--"))
    lines.append("\\caption{%s. Per scene: workload (W x H, spp), independent renders per side (K), median "
                 "render time of Mitsuba (warm-up and JIT excluded, synchronized) and of vptune (GPU: CUDA "
                 "events, CPU: render time), their ratio; per-pixel luminance t tests failing at 1\\%% "
                 "(expected about 1\\%%), the p-value of the chi-square over 4x4-pixel blocks, the "
                 "image-mean difference Mitsuba $-$ vptune (its t-test p), and the time Mitsuba needs for "
                 "vptune's error (relMSE $\\times$ time). Both rough dielectrics mask with the separable "
                 "Smith G (vptune's rows before its commit 'physics: separable Smith masking' used the "
                 "height-correlated form, 0.1\\%% brighter on the GGX scenes); the rows with a smooth "
                 "boundary (both renderers) compare the rest. %s.}\\label{%s}" % (cap, "; ".join(sorted(notes)), label))
    lines += ["\\begin{tabular}{@{}lrrrrrrrrr@{}}", "\\toprule",
              "Scene & workload & K & Mitsuba & vptune & ratio & fail \\% & block $p$ & mean diff ($p$) & "
              "equal error \\\\"]
    lines += body
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    ctx.out.write("tab_mitsuba.tex", "\n".join(lines) + "\n")
    ctx.out.macro("mitsubaRuns", str(n))
