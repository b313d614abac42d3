"""The report's front matter: the machines (Table tab:setup, the GPU macros),
the scenes (Table tab:scenes, Figure fig:scenes) and the experiments with
the share of their measurements the results hold (Table tab:experiments)."""

import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
from common import SCENES, SCENE_INFO, tex, tt  # noqa: E402
from pool import session_of  # noqa: E402

INPUTS = {"report: setup table (memory, clock)": ["{gpu}/machines.txt"]}

def setup(ctx):
    p = ctx.pool.provenance()
    o = ctx.out
    hw = ctx.thesis["hardware"]
    if p is None:
        raise SystemExit("generate: results/%s holds no result or roofline row" % ctx.gpu)
    g = p["gpu"]
    cuda = g.get("cuda_driver_version")
    cuda_s = "%d.%d" % (cuda // 1000, (cuda % 1000) // 10) if isinstance(cuda, int) else str(cuda)
    commits = sorted({r.get("commit") for r in ctx.pool.rows if r.get("commit") and r.get("kind") != "run"})
    uuids = {session_of(r)[0] for r in ctx.pool.rows} - {"-", "?"}
    hosts = sorted({r.get("host") for r in ctx.pool.rows if r.get("host") and r.get("kind") != "run"})
    times = sorted(vx.row_time(r) for r in ctx.pool.rows if vx.row_time(r))
    n_res = sum(1 for r in ctx.pool.rows if r.get("kind") == "result")
    n_ok = sum(1 for r in ctx.pool.results.values() if r.get("status") == "ok")
    n_keys = len(ctx.pool.results)
    arch = architecture(g.get("cc", ""))
    machine = machine_facts(ctx, g.get("uuid"))
    o.macro("gpuName", tex(g.get("name", "?")), "gpu_name")
    o.macro("gpuArch", tex(arch))
    o.macro("gpuDir", tex(ctx.gpu))
    o.macro("gpuSMs", str(g.get("sm_count", "?")), "sm_count")
    o.macro("gpuCC", tex(g.get("cc", "?")))
    o.macro("gpuDriver", tex(g.get("driver", "?")), "driver")
    o.macro("cudaVersion", tex(cuda_s), "cuda_driver_version")
    o.macro("nvrtcVersion", tex(p.get("nvrtc", "?")), "nvrtc")
    o.macro("commitList", ", ".join(tt(c) for c in commits) or "?")
    o.macro("numResultRows", str(n_res), "result_rows")
    o.macro("numMeasurements", str(n_keys), "measurements")
    o.macro("numOkMeasurements", str(n_ok), "ok_measurements")
    o.macro("firstMeasured", tex(times[0][:10] if times else "?"))
    o.macro("lastMeasured", tex(times[-1][:10] if times else "?"))
    if times and times[0][:10] != times[-1][:10]:
        o.macro("measuredSpan", "from %s to %s" % (tex(times[0][:10]), tex(times[-1][:10])))
    else:
        o.macro("measuredSpan", "on %s" % tex(times[0][:10] if times else "?"))
    base, exceptions = workload_summary(ctx.roof_spec)
    o.macro("thesisWorkload", tex(base))
    o.macro("thesisWorkloadExceptions", tex("; ".join(exceptions)) if exceptions else "none")
    o.macro("thesisWorkloadFull", tex(base + ("" if not exceptions else "; " + "; ".join(exceptions))))
    o.macro("thesisGpu", tex(hw["gpu"]))
    o.macro("thesisSMs", str(hw["sm_count"]))
    ctx.gpu_short = g.get("name", "?")
    rows = [
        ("GPU", tex(g.get("name", "?")), tex(hw["gpu"])),
        ("Architecture, compute capability", "%s, %s" % (tex(arch), tex(g.get("cc", "?"))),
         "%s, %s" % (hw["architecture"], hw["cc"])),
        ("Streaming multiprocessors", str(g.get("sm_count", "?")), str(hw["sm_count"])),
        ("Memory", tex(machine.get("memory", "--")), "%d MB" % hw["memory_mb"]),
        ("Maximum SM clock", tex(machine.get("clock", "--")), "%d MHz" % hw["clock_mhz"]),
        ("Driver", tex(g.get("driver", "?")), "--"),
        ("CUDA (driver API version)", tex(cuda_s), "--"),
        ("NVRTC", tex(p.get("nvrtc", "?")), "-- (nvcc, offline)"),
        ("GPUs", "%d of this model (UUIDs with their sessions in Table~\\ref{tab:sessions})" % len(uuids), "1"),
        ("Host", tex(", ".join(hosts) or "?"), tex(hw["cpu"])),
        ("vptune commits", "%d (Table~\\ref{tab:sessions})" % len(commits), "--"),
        ("Measured", "%s to %s" % (tex(times[0][:10]), tex(times[-1][:10])) if times else "?", "--"),
        ("Result rows (distinct measurements, of them ok)", "%d (%d, %d)" % (n_res, n_keys, n_ok), "--"),
    ]
    t = ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{Test machines: ours (from the provenance of every result row) and the thesis' "
         "(as printed in its section 4 and appendix).}\\label{tab:setup}",
         "\\begin{tabular}{@{}>{\\raggedright\\arraybackslash}p{0.3\\linewidth}>{\\raggedright\\arraybackslash}p{0.32\\linewidth}>{\\raggedright\\arraybackslash}p{0.3\\linewidth}@{}}", "\\toprule",
         " & \\textbf{vptune (this report)} & \\textbf{thesis} \\\\", "\\midrule"]
    t += ["%s & %s & %s \\\\" % r for r in rows]
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    o.write("setup.tex", "\n".join(t) + "\n")


def machine_facts(ctx, uuid):
    """Memory and maximum SM clock from results/<gpu>/machines.txt (the
    nvidia-smi CSVs that scripts/gpu_session.sh records, one per
    machine), for the GPU with this UUID; {} when there is none."""
    out = {}
    # the report's folder first, then the others (a section may be of another GPU's)
    own = os.path.join(ctx.pool.dir, "machines.txt")
    for path in [own] + (sorted(glob.glob(os.path.join(ctx.root, "results", "*", "machines.txt"))) if uuid else []):
        if not os.path.exists(path) or out:
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        for i, line in enumerate(lines):
            if "uuid" not in line or "name" not in line:
                continue
            head = [h.strip() for h in line.split(",")]
            for data in lines[i + 1:]:
                vals = [v.strip() for v in data.split(",")]
                if len(vals) != len(head) or (uuid and uuid not in vals):
                    continue
                rec = dict(zip(head, vals))
                for k, v in rec.items():
                    if k.startswith("memory.total"):
                        out["memory"] = v + (" MiB" if "MiB" in k and not v.endswith("MiB") else "")
                    elif k.startswith("clocks.max.sm"):
                        out["clock"] = v + (" MHz" if "MHz" in k and not v.endswith("MHz") else "")
    return out


def scenes_figure(ctx):
    parts = ["\\begin{figure}[tbp]\\centering"]
    for i, s in enumerate(SCENES):
        img = os.path.join(ctx.root, "docs", "images", s + ".png")
        if os.path.exists(img):
            body = "\\includegraphics[width=\\linewidth]{../docs/images/%s.png}" % s
        else:
            body = ("\\fbox{\\parbox[c][0.85\\linewidth][c]{0.85\\linewidth}{\\centering\\small "
                    "image not rendered yet\\\\[2pt]\\scriptsize(docs/images/%s.png)}}" % tex(s))
        parts.append("\\begin{minipage}[t]{0.31\\linewidth}\\centering %s\\\\[1pt]\\small %s\\\\"
                     "\\scriptsize %s\\end{minipage}%s" % (body, tex(s), tex(SCENE_INFO[s][0]),
                                                            "\\hfill" if i % 3 != 2 else "\\\\[6pt]"))
    parts.append("\\caption{The six scenes, rendered by vptune on the GPU "
                 "(\\texttt{docs/images/}). All are procedural stand-ins for the thesis' "
                 "volumes (Section~\\ref{sec:setup}).}\\label{fig:scenes}")
    parts.append("\\end{figure}")
    ctx.out.write("scenes.tex", "\n".join(parts) + "\n")
    rows = ["%s & %s & %s \\\\" % (tex(s), tex(SCENE_INFO[s][0]), tex(SCENE_INFO[s][1])) for s in SCENES]
    ctx.out.write("scene_table.tex", "\n".join(
        ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{Scenes (built in; \\texttt{bin/render --help} lists them).}\\label{tab:scenes}",
         "\\begin{tabular}{@{}llp{0.62\\linewidth}@{}}", "\\toprule",
         "Scene & Grid & Content \\\\", "\\midrule"] + rows + ["\\bottomrule", "\\end{tabular}", "\\end{table}"])
        + "\n")


def coverage(ctx, spec):
    """(present, expected) measurements of a bench spec in the pool."""
    if spec.kind != "bench" or not spec.implemented:
        return None
    configs, _ = vx.static_configs(spec)
    present = expected = 0
    for s in spec.scenes:
        cs = list(configs)
        if spec.get("configs_from"):
            cs += [r["config"] for r in ctx.best_of(spec).values() if r["config"] not in cs]
        for w in vx.workloads(spec, s):
            wk = vx.workload_key(w)
            for c in cs:
                expected += 1
                if ctx.pool.results.get((s, c, wk)) is not None:
                    present += 1
        if spec.flag("cpu_reference"):
            expected += 1
            if (s, vx.workload_key(vx.cpu_workload(spec, s))) in ctx.pool.cpu:
                present += 1
    return present, expected


def experiments_table(ctx):
    lines = ["\\begin{table}[tbp]\\centering\\footnotesize",
             "\\caption{The experiments (\\texttt{experiments/*.spec}) and how much of each the committed "
             "results hold. A measurement is one (scene, configuration, workload); failed ones count as "
             "present.}\\label{tab:experiments}",
             "\\begin{tabular}{@{}lp{0.40\\linewidth}lr@{}}", "\\toprule",
             "Experiment & What & Output & Present \\\\", "\\midrule"]
    for name in ctx.display_order():
        sp = ctx.specs[name]
        if not sp.implemented:
            state = "not implemented"
        elif sp.kind == "bench":
            pe = coverage(ctx, sp)
            state = "%d/%d" % pe
        elif sp.kind == "tune":
            n = sum(1 for r in ctx.pool.by_file.get(sp.output + ".jsonl", []) if r.get("kind") == "header")
            state = "%d/%d runs" % (n, len(sp.scenes) * len(sp.get("strategies")) * len(sp.get("seeds")))
        else:
            configs, _ = vx.static_configs(sp)
            exp = len(configs) * sum(len(vx.workloads(sp, s)) for s in sp.scenes)
            n = sum(1 for (s, c, k) in ctx.pool.profiles if s in sp.scenes and c in configs)
            state = "%d/%d" % (min(n, exp), exp)
        lines.append("%s & %s & %s & %s \\\\" % (tt(name), tex(sp.get("title")), tt(sp.output), state))
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    ctx.out.write("experiments.tex", "\n".join(lines) + "\n")


def architecture(cc):
    """NVIDIA's architecture name of a compute capability ("9.0" -> Hopper)."""
    names = {"3": "Kepler", "5": "Maxwell", "6": "Pascal", "7.0": "Volta", "7.2": "Volta", "7.5": "Turing",
             "8.0": "Ampere", "8.6": "Ampere", "8.7": "Ampere", "8.9": "Ada Lovelace", "9": "Hopper",
             "10": "Blackwell", "11": "Blackwell", "12": "Blackwell"}
    cc = str(cc)
    return names.get(cc) or names.get(cc.split(".")[0]) or ("compute capability " + cc)



def workload_summary(spec):
    """(the workload most of spec's scenes share, ['scene: difference', ...])."""
    ws = {s: vx.base_workload(spec, s) for s in spec.scenes}
    keys = [vx.workload_key(w) for w in ws.values()]
    common = max(set(keys), key=keys.count)
    base = next(w for w in ws.values() if vx.workload_key(w) == common)
    exc = []
    for sc, w in ws.items():
        if vx.workload_key(w) != common:
            diff = []
            for k in vx.WORKLOAD_KEYS:
                if w[k] != base[k]:
                    diff.append({"spp": "%d spp" % w[k], "width": "width %d" % w[k], "height": "height %d" % w[k],
                                 "seed": "seed %d" % w[k], "max_depth": "max depth %d" % w[k],
                                 "rr_depth": "RR from %d" % w[k]}[k])
            exc.append("%s: %s" % (sc, ", ".join(diff)))
    return vx.format_workload(base), exc

