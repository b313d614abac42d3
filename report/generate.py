#!/usr/bin/env python3
"""report/generate.py: turn results/ into the report's generated LaTeX and
gnuplot inputs. Python 3 standard library only; needs no GPU.

    python3 report/generate.py [--root DIR] [--gpu NAME] [--out DIR]

Reads
  results/<gpu>/*.jsonl        every row of every file: the pool (below)
  experiments/*.spec           what each experiment measures, at which workload
  report/thesis_tables.json    the thesis' published numbers (transcribed)
  docs/images/<scene>.png      rendered scenes (a marked placeholder if absent)
  results/<gpu>/mitsuba.jsonl, results/cpu-*/mitsuba.jsonl
                               experiments/mitsuba: Mitsuba 3 beside vptune, on
                               the report's GPU and on CPU machines (rows of
                               table 6.1 and the Mitsuba table, when present)
and writes into report/generated/ (gitignored):
  macros.tex                   every number the prose uses, as \\newcommand
  *.tex                        tables, figure environments, generated prose
  fig_*.gp, fig_*.dat          gnuplot scripts and their data (build.sh runs them)
  values.json                  the key numbers, machine-readable

The pool. Rows of all files of one GPU folder are pooled; a measurement is
identified by (scene, canonical config, workload) for results, (scene, rays)
for roofline rows, (scene, workload) for CPU reference rows and (scene,
config, workload) for profiles. When a key was measured more than once, the
newest row (by its 'time') counts. Tables and figures look rows up by the
workload their experiment's spec states, so rows of different workloads are
never mixed.

Formatting (check_report.py relies on it): Mrays/s with one decimal, Gsteps/s
with two, percentages without decimals, ratios with one decimal.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
import estimators as report_estimators  # noqa: E402

SCENES = ("cgg-logo", "ad", "artifix", "manix", "smoke", "bucky")
SCENE_INFO = {
    # name: (grid, what it is). Facts of scenes/scene_builtin.c.
    "cgg-logo": ("100x100x100", "solid unit cube, density 100, logo printed 10 voxels deep (3D printing)"),
    "ad": ("320x320x100", "slab, density 100, advertisement printed 10 voxels deep (3D printing)"),
    "artifix": ("128x87x128", "CT torso with the thesis' CT transfer (stand-in for OsiriX ARTIFIX)"),
    "manix": ("128x115x128", "CT head and neck with the thesis' CT transfer (stand-in for OsiriX MANIX)"),
    "smoke": ("128x128x50", "smoke plume, density scale 800, no boundary (stand-in for Mitsuba's smoke.vol)"),
    "bucky": ("32x32x32", "C60 buckyball density up to 40, green/red/blue transfer (stand-in for the volvis.org file)"),
}
SCHEDULE_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
                   "#1f78b4")
SCENE_COLORS = ("#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628")
STRATEGY_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d")


# ------------------------------------------------------------ formatting

def f_mrays(x):
    return "%.1f" % x


def f_gsteps(x):
    return "%.2f" % x


def f_pct(x):
    return "%.0f" % (100.0 * x)


def pct_or(x, dash="--"):
    return f_pct(x) if isinstance(x, (int, float)) else dash


def f_ratio(x):
    return "%.1f" % x


def f_time(x):
    return "%.3f" % x


def f_sec(x):
    """A render time: milliseconds below a second."""
    return "%.1f ms" % (1e3 * x) if x < 1.0 else "%.2f s" % x


def tex(s):
    """Escapes text for LaTeX."""
    s = str(s)
    out = []
    for ch in s:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch == "~":
            out.append("\\textasciitilde{}")
        elif ch == "^":
            out.append("\\textasciicircum{}")
        elif ch == "\\":
            out.append("\\textbackslash{}")
        else:
            out.append(ch)
    return "".join(out)


def tt(s):
    return "\\texttt{%s}" % tex(s)


def camel(scene):
    return "".join(p.capitalize() for p in re.split(r"[^A-Za-z0-9]+", scene) if p)


def macro_name(*parts):
    name = "".join(camel(p) if i else p for i, p in enumerate(parts))
    if not re.fullmatch(r"[A-Za-z]+", name):
        # digits cannot be in a macro name: spell them
        digits = "Zero One Two Three Four Five Six Seven Eight Nine".split()
        name = re.sub(r"[0-9]", lambda m: digits[int(m.group())], name)
        name = re.sub(r"[^A-Za-z]", "", name)
    return name


def gp_str(s):
    return '"%s"' % str(s).replace("\\", "\\\\").replace('"', '\\"')


def spearman(xs, ys):
    """Spearman's rank correlation (average ranks for ties), or None."""
    n = len(xs)
    if n < 3:
        return None

    def ranks(v):
        order = sorted(range(n), key=lambda i: v[i])
        r = [0.0] * n
        i = 0
        while i < n:
            j = i
            while j + 1 < n and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


# ------------------------------------------------------------ the pool

def inputs(specs):
    """What the report reads, by part, relative to results/ ({gpu}: the
    report's GPU folder). The pool is every experiment's output and the
    tuned configs beside the roofline; nothing else under results/<gpu>/ is
    read. scripts/results_index.py counts these as the files' readers."""
    outputs = sorted({sp.output for sp in specs.values()})
    return {
        "report: thesis tables, figures and key numbers (the experiments' outputs)":
            ["{gpu}/%s.jsonl" % o for o in outputs],
        "report: key numbers (tuned configs beside the roofline)": ["{gpu}/best_vs_roofline.jsonl"],
        "report: setup table (memory, clock)": ["{gpu}/machines.txt"],
        "report: table 6.1 and the Mitsuba table": ["{gpu}/mitsuba.jsonl", "cpu-*/mitsuba.jsonl"],
        "report: estimators": ["{gpu}/estimators/table.jsonl", "{gpu}/estimators/*-winners.jsonl"],
    }


POOL_PARTS = ("report: thesis tables, figures and key numbers (the experiments' outputs)",
              "report: key numbers (tuned configs beside the roofline)")


class Pool:
    def __init__(self, results_dir, gpu, specs):
        self.gpu = gpu
        self.dir = os.path.join(results_dir, gpu)
        declared = inputs(specs)
        self.files = sorted(os.path.basename(p.format(gpu=gpu)) for part in POOL_PARTS for p in declared[part]
                            if os.path.exists(os.path.join(results_dir, p.format(gpu=gpu))))
        self.rows = []
        self.warnings = []
        self.by_file = {}
        for f in self.files:
            rows = vx.read_rows(os.path.join(self.dir, f), self.warnings.append)
            self.by_file[f] = rows
            self.rows.extend(rows)
        self.results = vx.newest_by(self.rows, vx.result_key)
        self.roofline = vx.newest_by(self.rows, lambda r: (r.get("scene"), r.get("rays"))
                                     if r.get("kind") == "roofline" else None)
        self.cpu = vx.newest_by(self.rows, lambda r: (r.get("scene"), vx.workload_key(r.get("workload", {})))
                                if r.get("kind") == "cpu_reference" and r.get("status") == "ok" else None)
        self.profiles = vx.newest_by(self.rows, lambda r: (r.get("scene"), r.get("config"),
                                                          vx.workload_key(r.get("workload", {})))
                                     if r.get("kind") == "profile" and r.get("status") == "ok" else None)
        self.used_files = set()

    def result(self, scene, canon, wk):
        r = self.results.get((scene, canon, wk))
        if r is not None:
            self.used_files.add(os.path.basename(r["_file"]))
        return r

    def ok(self, scene, canon, wk):
        r = self.result(scene, canon, wk)
        return r if r is not None and r.get("status") == "ok" else None

    def at_workload(self, scene, wk):
        """Newest result rows of scene at workload wk."""
        out = [r for (s, c, k), r in self.results.items() if s == scene and k == wk]
        for r in out:
            self.used_files.add(os.path.basename(r["_file"]))
        return out

    def roof(self, scene, rays):
        r = self.roofline.get((scene, rays))
        if r is not None:
            self.used_files.add(os.path.basename(r["_file"]))
        return r

    def cpu_ref(self, scene):
        rows = [r for (s, wk), r in self.cpu.items() if s == scene]
        rows.sort(key=vx.row_time)
        if rows:
            self.used_files.add(os.path.basename(rows[-1]["_file"]))
        return rows[-1] if rows else None

    def provenance(self):
        """GPU facts of the newest result or roofline row."""
        rows = [r for r in self.rows if r.get("kind") in ("result", "roofline") and isinstance(r.get("gpu"), dict)]
        rows.sort(key=vx.row_time)
        return rows[-1] if rows else None


def metric(r, name):
    if r is None:
        return None
    v = r.get("metrics", {}).get(name)
    return v if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)) else None


# ------------------------------------------------------------ output helpers

class Out:
    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        for f in os.listdir(directory):
            p = os.path.join(directory, f)
            if os.path.isfile(p):
                os.unlink(p)
        self.macros = []
        self.values = {}
        self.figures = []

    def write(self, name, text):
        with open(os.path.join(self.dir, name), "w", encoding="utf-8") as f:
            f.write(text)

    def macro(self, name, value, key=None):
        assert re.fullmatch(r"[A-Za-z]+", name), name
        self.macros.append("\\newcommand{\\%s}{%s}" % (name, value))
        if key is not None:
            self.values[key] = value

    def figure(self, name, script):
        self.write(name + ".gp", script)
        self.figures.append(name)


def note_box(text):
    return ("\\begin{center}\\fbox{\\parbox{0.92\\linewidth}{\\small %s}}\\end{center}\n" % text)


def not_run_note(spec_names, gpu, what, env=None, label=None, caption=None):
    """A visible 'not measured yet' box; inside a figure or table
    environment with its caption and label when env is given, so that
    every reference the prose makes still resolves."""
    cmds = ", ".join("\\texttt{experiments/run %s}" % tex(n) for n in spec_names)
    box = note_box("\\textbf{No results yet.} %s: \\texttt{results/%s/} holds no rows for it. Run %s on a GPU "
                   "and rebuild the report." % (what, tex(gpu), cmds))
    if env is None:
        return box
    return ("\\begin{%s}[htbp]\n\\centering\n%s\\caption{%s (not measured yet).}\\label{%s}\n\\end{%s}\n"
            % (env, box, caption, label, env))


def figure_env(name, caption, label, width="\\linewidth"):
    return ("\\begin{figure}[tbp]\n\\centering\n\\includegraphics[width=%s]{generated/%s.pdf}\n"
            "\\caption{%s}\\label{%s}\n\\end{figure}\n" % (width, name, caption, label))


def gp_header(name, w="6.5in", h="3.2in"):
    return ("set terminal pdfcairo size %s,%s font \",8\" enhanced\nset output '%s.pdf'\n"
            "set datafile separator '\\t'\nset key noautotitle\nset grid ytics lc rgb '#dddddd'\n" % (w, h, name))


# ------------------------------------------------------------ Mitsuba 3

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


# ------------------------------------------------------------ report pieces

class Report:
    def __init__(self, root, gpu, out):
        self.root = root
        self.specs = vx.load_specs(os.path.join(root, "experiments"))
        with open(os.path.join(HERE, "thesis_tables.json"), encoding="utf-8") as f:
            self.thesis = json.load(f)
        self.pool = Pool(os.path.join(root, "results"), gpu, self.specs)
        self.mitsuba = MitsubaRuns(os.path.join(root, "results"), gpu)
        self.gpu = gpu
        self.out = Out(out)
        self.roof_spec = self.specs.get("roofline")

    # -- workloads

    def thesis_wk(self, scene):
        """The thesis workload of scene, as the roofline experiment states it."""
        return vx.workload_key(vx.base_workload(self.roof_spec, scene))

    def spec_for_table(self, tid):
        for s in self.specs.values():
            if s.get("thesis_table") == tid:
                return s
        return None

    # -- setup

    def setup(self):
        p = self.pool.provenance()
        o = self.out
        hw = self.thesis["hardware"]
        if p is None:
            raise SystemExit("generate: results/%s holds no result or roofline row" % self.gpu)
        g = p["gpu"]
        cuda = g.get("cuda_driver_version")
        cuda_s = "%d.%d" % (cuda // 1000, (cuda % 1000) // 10) if isinstance(cuda, int) else str(cuda)
        commits = sorted({r.get("commit") for r in self.pool.rows if r.get("commit") and r.get("kind") != "run"})
        hosts = sorted({r.get("host") for r in self.pool.rows if r.get("host") and r.get("kind") != "run"})
        times = sorted(vx.row_time(r) for r in self.pool.rows if vx.row_time(r))
        n_res = sum(1 for r in self.pool.rows if r.get("kind") == "result")
        n_ok = sum(1 for r in self.pool.results.values() if r.get("status") == "ok")
        n_keys = len(self.pool.results)
        arch = architecture(g.get("cc", ""))
        machine = self.machine_facts(g.get("uuid"))
        o.macro("gpuName", tex(g.get("name", "?")), "gpu_name")
        o.macro("gpuArch", tex(arch))
        o.macro("gpuDir", tex(self.gpu))
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
        base, exceptions = workload_summary(self.roof_spec)
        o.macro("thesisWorkload", tex(base))
        o.macro("thesisWorkloadExceptions", tex("; ".join(exceptions)) if exceptions else "none")
        o.macro("thesisWorkloadFull", tex(base + ("" if not exceptions else "; " + "; ".join(exceptions))))
        o.macro("thesisGpu", tex(hw["gpu"]))
        o.macro("thesisSMs", str(hw["sm_count"]))
        self.gpu_short = g.get("name", "?")
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
            ("GPU UUID", "\\scriptsize " + tex(g.get("uuid", "?")), "--"),
            ("Host", tex(", ".join(hosts) or "?"), tex(hw["cpu"])),
            ("vptune commit(s)", ", ".join(tt(c) for c in commits), "--"),
            ("Measured", "%s to %s" % (tex(times[0][:10]), tex(times[-1][:10])) if times else "?", "--"),
            ("Result rows (distinct measurements, of them ok)", "%d (%d, %d)" % (n_res, n_keys, n_ok), "--"),
        ]
        t = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{Test machines: ours (from the provenance of every result row) and the thesis' "
             "(as printed in its section 4 and appendix).}\\label{tab:setup}",
             "\\begin{tabular}{@{}lp{0.36\\linewidth}p{0.3\\linewidth}@{}}", "\\toprule",
             " & \\textbf{vptune (this report)} & \\textbf{thesis} \\\\", "\\midrule"]
        t += ["%s & %s & %s \\\\" % r for r in rows]
        t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        o.write("setup.tex", "\n".join(t) + "\n")

    def machine_facts(self, uuid):
        """Memory and maximum SM clock from results/<gpu>/machines.txt (the
        nvidia-smi CSVs that scripts/gpu_session.sh records, one per
        machine), for the GPU with this UUID; {} when there is none."""
        out = {}
        for f in ["machines.txt"]:
            if not os.path.exists(os.path.join(self.pool.dir, f)):
                continue
            with open(os.path.join(self.pool.dir, f), encoding="utf-8", errors="replace") as fh:
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

    def scenes_figure(self):
        parts = ["\\begin{figure}[tbp]\\centering"]
        for i, s in enumerate(SCENES):
            img = os.path.join(self.root, "docs", "images", s + ".png")
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
        self.out.write("scenes.tex", "\n".join(parts) + "\n")
        rows = ["%s & %s & %s \\\\" % (tex(s), tex(SCENE_INFO[s][0]), tex(SCENE_INFO[s][1])) for s in SCENES]
        self.out.write("scene_table.tex", "\n".join(
            ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{Scenes (built in; \\texttt{bin/render --help} lists them).}\\label{tab:scenes}",
             "\\begin{tabular}{@{}llp{0.62\\linewidth}@{}}", "\\toprule",
             "Scene & Grid & Content \\\\", "\\midrule"] + rows + ["\\bottomrule", "\\end{tabular}", "\\end{table}"])
            + "\n")

    # -- experiments overview

    def coverage(self, spec):
        """(present, expected) measurements of a bench spec in the pool."""
        if spec.kind != "bench" or not spec.implemented:
            return None
        configs, _ = vx.static_configs(spec)
        present = expected = 0
        for s in spec.scenes:
            cs = list(configs)
            if spec.get("configs_from"):
                cs += [r["config"] for r in self.best_of(spec).values() if r["config"] not in cs]
            for w in vx.workloads(spec, s):
                wk = vx.workload_key(w)
                for c in cs:
                    expected += 1
                    if self.pool.results.get((s, c, wk)) is not None:
                        present += 1
            if spec.flag("cpu_reference"):
                expected += 1
                if (s, vx.workload_key(vx.cpu_workload(spec, s))) in self.pool.cpu:
                    present += 1
        return present, expected

    def best_of(self, spec):
        """{scene: row} of the best configs spec's configs_from names."""
        best = {}
        for src in spec.get("configs_from", []):
            dep = self.specs[src.split(":", 1)[1]]
            wanted = {s: [vx.workload_key(w) for w in vx.workloads(dep, s)] for s in dep.scenes}
            rows = [r for (s, c, k), r in self.pool.results.items() if k in wanted.get(s, [])]
            best.update(vx.best_configs(rows, scenes=dep.scenes))
        return best

    def display_order(self):
        """Thesis tables by number, then the new experiments in run order."""
        t = sorted((n for n in self.specs if self.specs[n].get("thesis_table")),
                   key=lambda n: [int(x) for x in self.specs[n].get("thesis_table").split(".")])
        return t + [n for n in vx.run_order(self.specs) if n not in t]

    def experiments_table(self):
        lines = ["\\begin{table}[tbp]\\centering\\footnotesize",
                 "\\caption{The experiments (\\texttt{experiments/*.spec}) and how much of each the committed "
                 "results hold. A measurement is one (scene, configuration, workload); failed ones count as "
                 "present.}\\label{tab:experiments}",
                 "\\begin{tabular}{@{}lp{0.40\\linewidth}lr@{}}", "\\toprule",
                 "Experiment & What & Output & Present \\\\", "\\midrule"]
        for name in self.display_order():
            sp = self.specs[name]
            if not sp.implemented:
                state = "not implemented"
            elif sp.kind == "bench":
                pe = self.coverage(sp)
                state = "%d/%d" % pe
            elif sp.kind == "tune":
                n = sum(1 for r in self.pool.by_file.get(sp.output + ".jsonl", []) if r.get("kind") == "header")
                state = "%d/%d runs" % (n, len(sp.scenes) * len(sp.get("strategies")) * len(sp.get("seeds")))
            else:
                configs, _ = vx.static_configs(sp)
                exp = len(configs) * sum(len(vx.workloads(sp, s)) for s in sp.scenes)
                n = sum(1 for (s, c, k) in self.pool.profiles if s in sp.scenes and c in configs)
                state = "%d/%d" % (min(n, exp), exp)
            lines.append("%s & %s & %s & %s \\\\" % (tt(name), tex(sp.get("title")), tt(sp.output), state))
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        self.out.write("experiments.tex", "\n".join(lines) + "\n")

    # -- thesis tables

    def thesis_tables(self):
        summary = {}
        for tid in sorted(self.thesis["tables"]):
            spec = self.spec_for_table(tid)
            T = self.thesis["tables"][tid]
            fname = "tab_t%s.tex" % tid.replace(".", "")
            if spec is None:
                raise SystemExit("generate: no spec has thesis_table = %s" % tid)
            if not spec.implemented:
                self.out.write(fname, self.thesis_table_unimplemented(tid, T, spec))
                continue
            if any("tiles" in c for c in T["columns"]):
                self.out.write(fname, self.tiling_table(tid, T, spec))
                continue
            if tid == "6.1":
                extra, note = self.mitsuba_rows_61()
                T = dict(T, rows=list(T["rows"]) + extra, mitsuba_note=note)
            text, info = self.thesis_table(tid, T, spec)
            self.out.write(fname, text)
            summary[tid] = info
        self.table_summary = summary

    def lookup(self, ours, scene, spec, **workload):
        """Our row for a thesis row: ours is a config text or 'cpu'; workload
        overrides the spec's base workload (e.g. tiles=4)."""
        if ours is None:
            return None, None
        if ours == "cpu":
            return self.pool.cpu_ref(scene), "cpu"
        if ours.startswith("mitsuba:"):
            _, folder, side = ours.split(":")
            r = self.mitsuba.row(folder, scene)
            if r is None:
                return None, ours
            v = r.get(side, {}).get("mrays_per_s")
            return {"status": "ok", "metrics": {"mrays_per_s": v}, "_file": ""}, ours
        canon = vx.canonical(ours)
        wk = vx.workload_key(dict(vx.base_workload(spec, scene), **workload))
        return self.pool.result(scene, canon, wk), canon

    def tiling_table(self, tid, T, spec):
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
                row, _ = self.lookup(R["ours"], scene, spec, tiles=c["tiles"])
                if row is not None:
                    sources.add(os.path.basename(row["_file"]))
                tv = R["values"].get(c["key"])
                ov = self.our_value(row, "time_s")
                st = self.cell_status(row)
                cells += [tex(tv) if tv else "--", st or f_time(ov),
                          f_ratio(float(tv) / ov) if (ov and tv) else "--"]
                if ov is not None:
                    self.out.macro(macro_name("tile", R["ours"], str(c["tiles"])), f_time(ov),
                                   "tiling/%s/%d" % (R["ours"], c["tiles"]))
            body.append(" & ".join(cells) + " \\\\")
        w = vx.base_workload(spec, scene)
        src = ", ".join(tt("results/%s/%s" % (self.gpu, x)) for x in sorted(sources)) or "none yet"
        caption = ("%s: thesis table %s beside vptune on the %s: time (s) to render the whole %dx%d image of %s at "
                   "%d spp in (n,n) tiles, one launch per tile (multi-kernel schedules: one host loop per tile). "
                   "Tiling keeps every path: the same image and counts as untiled. Ours at %s; from %s (spec %s). "
                   "Speedup: thesis time / ours." % (tex(T["title"]), tid, tex(self.gpu_short), w["width"], w["height"],
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

    def our_value(self, row, quantity):
        if row is None or row.get("status") != "ok":
            return None
        if quantity == "mrays_per_s":
            return metric(row, "mrays_per_s")
        if quantity == "time_s":
            t = metric(row, "time_ms")
            return t / 1000.0 if t is not None else None
        return None

    def cell_status(self, row):
        if row is None:
            return "n/a"
        if row.get("status") != "ok":
            return "\\emph{%s}" % tex(row.get("status"))
        return None

    def thesis_table(self, tid, T, spec):
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
                row, canon = self.lookup(R["ours"], c["scene"], spec)
                if row is not None and row["_file"]:
                    sources.add(os.path.basename(row["_file"]))
                tv = R["values"].get(c["key"])
                ov = self.our_value(row, c["quantity"])
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
            tv, ts = cells[(i, key)][0], cells[(i, key)][1]
            if ts is None:
                return "--"
            return "\\textbf{%s}" % ts if best_t.get(key) == i else ts

        def fmt_o(i, key, q):
            tv, ts, ov, row = cells[(i, key)]
            st = self.cell_status(row)
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
        src = ", ".join(tt("results/%s/%s" % (self.gpu, s)) for s in sorted(sources)) or "none yet"
        caption = ("%s: thesis table %s beside vptune on the %s. %sBold: the fastest GPU method of each column. "
                   "Ours at %s; from %s (spec %s). Ratio: ours / thesis."
                   % (tex(T["title"]), tid, tex(self.gpu_short), unit_note, tex(wl), src, tt(spec.name)))
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
                cfg = self.config_label(R["ours"])
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
                        tex(s) if i == 0 else "", tex(R["method"]), self.config_label(R["ours"]),
                        fmt_t(i, c["key"]), fmt_o(i, c["key"], c["quantity"]), fmt_r(i, c["key"])))
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        info["cells"] = {("%d" % i, k): (v[0], v[2]) for (i, k), v in cells.items()}
        info["rows"] = T["rows"]
        info["cols"] = cols
        return "\n".join(lines) + "\n", info

    def config_label(self, ours):
        if ours is None:
            return "--"
        if ours == "cpu":
            return "CPU reference"
        if ours.startswith("mitsuba:"):
            return "\\footnotesize " + tt("experiments/mitsuba")
        d = vx.describe_config(vx.canonical(ours))
        return "\\footnotesize " + tt(d)

    def thesis_table_unimplemented(self, tid, T, spec):
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

    # -- Mitsuba 3

    def mitsuba_rows_61(self):
        """Rows for table 6.1 from experiments/mitsuba (none without
        results), and a caption sentence."""
        rows, files = [], []
        for folder, newest in self.mitsuba.folders:
            oks = [r for (sc, ctl), r in newest.items() if ctl is None and r.get("status") == "ok"]
            if not oks:
                continue
            files.append(tt("results/%s/mitsuba.jsonl" % folder))
            variant = oks[0].get("mitsuba", {}).get("variant", "?")
            where = self.mitsuba.machine(folder)
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

    def mitsuba_table(self):
        """Table tab:mitsuba: every experiments/mitsuba row, per machine."""
        label, cap = "tab:mitsuba", "Mitsuba 3 beside vptune on the same scenes (experiments/mitsuba)"
        if not self.mitsuba.any_ok():
            self.out.write("tab_mitsuba.tex", not_run_note(["mitsuba"], self.gpu, "The Mitsuba 3 comparison",
                                                          env="table", label=label, caption=cap)
                           .replace("experiments/run mitsuba", "experiments/mitsuba"))
            self.out.macro("mitsubaRuns", "0")
            return
        lines = ["\\begin{table}[tbp]\\centering\\footnotesize"]
        body = []
        n = 0
        notes = set()
        for folder, newest in self.mitsuba.folders:
            items = sorted(newest.items(), key=lambda kv: (kv[0][1] is not None, SCENES.index(kv[0][0])
                                                           if kv[0][0] in SCENES else 99, kv[0][1] or ""))
            body.append("\\midrule\\multicolumn{10}{@{}l}{\\textbf{%s} (%s)} \\\\"
                        % (tex(self.mitsuba.machine(folder)), tt("results/%s/mitsuba.jsonl" % folder)))
            for (scene, control), r in items:
                name = tex(scene) + (" (%s boundary)" % tex(control) if control else "")
                if r.get("status") != "ok":
                    body.append("%s & \\multicolumn{9}{l}{\\emph{%s}: %s} \\\\"
                                % (name, tex(r.get("status")), tex((r.get("reason") or "")[:70])))
                    continue
                n += 1
                w, c, m, v = r["workload"], r["compare"], r["mitsuba"], r["vptune"]
                notes.add("%s: Mitsuba %s %s, drjit %s; vptune %s" % (
                    self.mitsuba.machine(folder), tex(m.get("variant", "?")),
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
        self.out.write("tab_mitsuba.tex", "\n".join(lines) + "\n")
        self.out.macro("mitsubaRuns", str(n))

    # -- per-scene key numbers

    def key_numbers(self):
        o = self.out
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
        self.best = {}
        speedups = []
        for s in SCENES:
            wk = self.thesis_wk(s)
            rows = [r for r in self.pool.at_workload(s, wk) if r.get("status") == "ok"
                    and metric(r, "mrays_per_s") is not None]
            best = max(rows, key=lambda r: (metric(r, "mrays_per_s"), r["config"])) if rows else None
            rr, rc = self.pool.roof(s, "random"), self.pool.roof(s, "coherent")
            gr, gc = metric(rr, "gsteps_per_s"), metric(rc, "gsteps_per_s")
            gm = metric(self.pool.roof(s, "camera"), "gsteps_per_s")
            C = camel(s)
            self.best[s] = best
            o.macro("roofCamera" + C, f_gsteps(gm) if gm else "--", "roofline_camera/" + s)
            if best is None:
                lines.append("%s & \\multicolumn{4}{c}{no measurement} & %s & %s & %s & -- & -- \\\\" % (
                    tex(s), f_gsteps(gr) if gr else "--", f_gsteps(gm) if gm else "--", f_gsteps(gc) if gc else "--"))
                continue
            m = metric(best, "mrays_per_s")
            occ, simd = metric(best, "occupancy_achieved"), metric(best, "simd_efficiency")
            gs = metric(best, "gsteps_per_s")
            frac = gs / gr if gs and gr else None
            o.macro("bestMrays" + C, f_mrays(m), "best_mrays/" + s)
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
        for tid, T in self.thesis["tables"].items():
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
                if self.best.get(s) is not None:
                    sp = metric(self.best[s], "mrays_per_s") / tb[0]
                    speedups.append((sp, s))
                    o.macro("speedupOverThesis" + C, "%.0f" % sp)
        if speedups:
            lo, hi = min(speedups), max(speedups)
            o.macro("minSpeedup", "%.0f" % lo[0])
            o.macro("minSpeedupScene", tex(lo[1]))
            o.macro("maxSpeedup", "%.0f" % hi[0])
            o.macro("maxSpeedupScene", tex(hi[1]))
            o.macro("numSpeedupScenes", str(len(speedups)))
        ok_best = [(metric(r, "mrays_per_s"), s) for s, r in self.best.items() if r is not None]
        if ok_best:
            o.macro("fastestSceneMrays", f_mrays(max(ok_best)[0]))
            o.macro("fastestScene", tex(max(ok_best)[1]))
            o.macro("slowestSceneMrays", f_mrays(min(ok_best)[0]))
            o.macro("slowestScene", tex(min(ok_best)[1]))
        self.thesis_best = thesis_best

    # -- figures over the nine schedules

    def schedule_rows(self, scene):
        wk = self.thesis_wk(scene)
        out = {}
        for name in vx.SCHEDULE_NAMES:
            out[name] = self.pool.result(scene, vx.canonical(name), wk)
        return out

    def fig_schedules(self):
        o = self.out
        lines = ["# schedule\t" + "\t".join(SCENES)]
        have = False
        for name in vx.SCHEDULE_NAMES:
            vals = []
            for s in SCENES:
                r = self.schedule_rows(s)[name]
                m = metric(r, "mrays_per_s") if r is not None and r.get("status") == "ok" else None
                have |= m is not None
                vals.append("%.6g" % m if m is not None else "NaN")
            lines.append("%s\t%s" % (gp_str(name), "\t".join(vals)))
        if not have:
            o.write("fig_schedules.tex", not_run_note(["roofline"], self.gpu, "The nine thesis schedules", "figure",
                                                   "fig:schedules", "Mrays/s of the nine thesis schedules"))
            return
        o.write("fig_schedules.dat", "\n".join(lines) + "\n")
        gp = gp_header("fig_schedules", h="3.0in")
        gp += ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
               "set boxwidth 0.9\nset logscale y\nset yrange [1:*]\nset ylabel 'Mrays/s (log)'\n"
               "set xtics rotate by -30 left nomirror\nset key top left horizontal font ',7'\n"
               "set format y '10^{%L}'\n")
        plots = ["'fig_schedules.dat' using %d:xtic(1) title %s lc rgb '%s'" % (i + 2, gp_str(s), SCENE_COLORS[i])
                 for i, s in enumerate(SCENES)]
        gp += "plot " + ", \\\n     ".join(plots) + "\n"
        o.figure("fig_schedules", gp)
        o.write("fig_schedules.tex", figure_env(
            "fig_schedules", "Mrays/s of the nine thesis schedules on each scene at the thesis workload "
            "(log scale; thesis settings: block 256, compiler's register choice). Missing bars: not measured "
            "or failed.", "fig:schedules"))

    def fig_roofline(self):
        o = self.out
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
                r = self.schedule_rows(s)[name]
                g = metric(r, "gsteps_per_s") if r is not None and r.get("status") == "ok" else None
                rr, rc = metric(self.pool.roof(s, "random"), "gsteps_per_s"), \
                    metric(self.pool.roof(s, "coherent"), "gsteps_per_s")
                fr = g / rr if g and rr else None
                fc = g / rc if g and rc else None
                have |= fr is not None
                vals += ["%.6g" % fr if fr else "NaN", "%.6g" % fc if fc else "NaN"]
                cells.append(("%.1f" if fr >= 0.01 else "%.2f") % (100 * fr) if fr else "--")
            lines.append("%s\t%s" % (gp_str(name), "\t".join(vals)))
            table.append("%s & %s \\\\" % (tex(name), " & ".join(cells)))
        table += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        if not have:
            o.write("fig_roofline.tex", not_run_note(["roofline"], self.gpu, "The roofline", "figure",
                                                  "fig:roofline", "Roofline fractions"))
            o.write("tab_roofline.tex", not_run_note(["roofline"], self.gpu, "The roofline", "table",
                                                  "tab:roofline", "Roofline fractions"))
            return
        o.write("tab_roofline.tex", "\n".join(table) + "\n")
        o.write("fig_roofline.dat", "\n".join(lines) + "\n")
        gp = gp_header("fig_roofline", h="4.2in")
        gp += ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
               "set logscale y\nset format y '%g'\nset yrange [0.0001:1.5]\n"
               "set xtics rotate by -30 left nomirror font ',7'\nset key top left horizontal font ',7'\n"
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

    # -- occupancy and SIMD efficiency against speed

    def space_rows(self):
        """{scene: [ok rows]} of the occupancy sweep at its workload, or of
        the nine schedules at the thesis workload when the sweep has not run."""
        spec = self.specs.get("occupancy")
        out, source = {}, "occupancy"
        for s in SCENES:
            rows = []
            if spec is not None and s in spec.scenes:
                for w in vx.workloads(spec, s):
                    rows += [r for r in self.pool.at_workload(s, vx.workload_key(w)) if r.get("status") == "ok"]
            out[s] = rows
        if not any(out.values()):
            source = "thesis"
            for s in SCENES:
                out[s] = [r for r in self.schedule_rows(s).values() if r is not None and r.get("status") == "ok"]
        return out, source

    def scatter_figure(self, name, xmetrics, xlabel, caption, label):
        o = self.out
        data, source = self.space_rows()
        if not any(data.values()):
            o.write(name + ".tex", not_run_note(["occupancy"], self.gpu, "The occupancy sweep", "figure", label,
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
        gp = gp_header(name, h="4.6in")
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
               % tex(vx.format_workload(vx.base_workload(self.specs["occupancy"], "manix")))
               if source == "occupancy" else
               "the nine thesis schedules at the thesis workload only (the occupancy sweep has not run yet)")
        o.write(name + ".tex", figure_env(name, caption + " Points: " + src + ".", label))
        return {"corr": corr, "source": source}

    def fig_occupancy(self):
        info = self.scatter_figure(
            "fig_occupancy", (("occupancy_theoretical", "theoretical"), ("occupancy_achieved", "achieved")),
            "occupancy (%)", "Occupancy against speed on each scene: theoretical occupancy (open circles) from "
            "the occupancy calculator, achieved occupancy (filled) measured by the harness; colour: schedule.",
            "fig:occupancy")
        simd = self.scatter_figure(
            "fig_simd", (("simd_efficiency", "SIMD efficiency"),), "SIMD efficiency (%)",
            "SIMD efficiency (active lanes per warp per path extension) against speed on each scene; colour: "
            "schedule.", "fig:simd")
        o = self.out
        if not info:
            o.write("corr.tex", not_run_note(["occupancy"], self.gpu, "The occupancy sweep", "table", "tab:corr",
                                             "Rank correlation of occupancy and SIMD efficiency with speed"))
            return
        lines = ["\\begin{table}[tbp]\\centering\\small",
                 "\\caption{Spearman rank correlation between Mrays/s and each metric over the points of "
                 "Figures~\\ref{fig:occupancy} and~\\ref{fig:simd} (n: points). Near +1: faster points have more "
                 "of it; near 0: it does not order speed.}\\label{tab:corr}",
                 "\\begin{tabular}{@{}lrrrr@{}}", "\\toprule",
                 "Scene & theoretical occ. & achieved occ. & SIMD eff. & n \\\\", "\\midrule"]
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
            lines.append("%s & %s & %d \\\\" % (tex(s), " & ".join(vals), n))
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        o.write("corr.tex", "\n".join(lines) + "\n")
        o.macro("occupancySource", "the occupancy sweep" if info["source"] == "occupancy"
                else "the nine thesis schedules (the occupancy sweep has not run yet)")

    # -- registers (thesis table 4.4's sweep)

    def fig_registers(self):
        o = self.out
        spec = self.specs.get("t44_registers")
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
                    r = self.pool.ok(s, vx.format_config(c), wk)
                    m = metric(r, "mrays_per_s")
                    have |= m is not None and reg != 0
                    vals.append("%.6g" % m if m is not None else "NaN")
                b.append("%s\t%s" % (gp_str("auto" if reg == 0 else reg), "\t".join(vals)))
            blocks.append("\n".join(b))
        if not have:
            o.write("fig_registers.tex", not_run_note(["t44_registers"], self.gpu, "The register sweep", "figure",
                                                   "fig:registers", "Register budget against Mrays/s"))
            return
        o.write("fig_registers.dat", "\n\n\n".join(blocks) + "\n")
        gp = gp_header("fig_registers", h="2.4in")
        gp += ("set ylabel 'Mrays/s'\nset xlabel 'maxrregcount'\nset key top right font ',7'\nset yrange [0:*]\n"
               "set xtics font ',6' rotate by -45\n"
               "set multiplot layout 1,%d\n" % len(spec.scenes))
        for i, s in enumerate(spec.scenes):
            gp += "set title %s\n" % gp_str(s)
            plots = ["'fig_registers.dat' index %d using 0:%d:xtic(1) title %s with linespoints lw 1.5 pt 7 ps 0.4 "
                     "lc rgb '%s'" % (i, k + 2, gp_str(n) if i == 0 else "''", SCHEDULE_COLORS[k])
                     for k, n in enumerate(scheds)]
            gp += "plot " + ", ".join(plots) + "\n"
        gp += "unset multiplot\n"
        o.figure("fig_registers", gp)
        o.write("fig_registers.tex", figure_env(
            "fig_registers", "Register budget (maxrregcount; auto: the compiler's choice) against Mrays/s for "
            "thread and warp regeneration (experiment \\texttt{t44\\_registers}). 32 registers give full "
            "occupancy.", "fig:registers"))

    # -- compaction against depth

    def fig_depth(self):
        o = self.out
        spec = self.specs.get("compaction_depth")
        configs, _ = vx.static_configs(spec)
        blocks, have = [], False
        sentences = []
        for s in spec.scenes:
            ws = vx.workloads(spec, s)
            b = ["# %s: max_depth\t%s" % (s, "\t".join(vx.schedule_name(c) for c in configs))]
            series = {c: [] for c in configs}
            for w in ws:
                vals = []
                for c in configs:
                    r = self.pool.ok(s, c, vx.workload_key(w))
                    m = metric(r, "mrays_per_s")
                    have |= m is not None
                    series[c].append((w["max_depth"], m))
                    vals.append("%.6g" % m if m is not None else "NaN")
                b.append("%d\t%s" % (w["max_depth"], "\t".join(vals)))
            blocks.append("\n".join(b))
            comp = [c for c in configs if vx.parse_config(c)["reorder"] == "compact"
                    and vx.parse_config(c)["kernels"] == "single"]
            base = [c for c in configs if vx.schedule_name(c) == "naiveSK"]
            if comp and base:
                cross = None
                for (d, a), (_, b2) in zip(series[comp[0]], series[base[0]]):
                    if a is not None and b2 is not None and a > b2:
                        cross = d
                        break
                measured = any(a is not None for _, a in series[comp[0]])
                if measured:
                    sentences.append("On %s, streamingSK %s." % (
                        tex(s), "outruns naiveSK from maximum depth %d on" % cross if cross is not None
                        else "does not outrun naiveSK at any measured maximum depth"))
        if not have:
            o.write("fig_depth.tex", not_run_note(["compaction_depth"], self.gpu, "Compaction against depth",
                                               "figure", "fig:depth", "Mrays/s against the maximum path depth"))
            o.write("depth_text.tex", "")
            return
        o.write("fig_depth.dat", "\n\n\n".join(blocks) + "\n")
        gp = gp_header("fig_depth", h="2.4in")
        gp += ("set logscale x\nset logscale y\nset xlabel 'maximum path depth'\nset ylabel 'Mrays/s'\n"
               "set key bottom right font ',7'\nset multiplot layout 1,%d\n" % len(spec.scenes))
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
        o.write("depth_text.tex", " ".join(sentences) + "\n")

    # -- tuner convergence

    def tuner(self):
        o = self.out
        spec = self.specs.get("tuner_convergence")
        rows = self.pool.by_file.get(spec.output + ".jsonl", [])
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
            o.write("fig_tuner.tex", not_run_note(["tuner_convergence"], self.gpu, "Tuner convergence", "figure",
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
               "set key bottom right font ',7'\nset multiplot layout 1,%d\n" % len(scenes))
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

    # -- best configuration per scene and transfer

    def transfer(self):
        o = self.out
        spec = self.specs.get("transfer")
        occ = self.specs.get("occupancy")
        best = self.best_of(spec)
        if not best:
            o.write("tab_best.tex", not_run_note(["occupancy", "transfer"], self.gpu,
                                                 "The best configuration of each scene", "table", "tab:best",
                                                 "Best configuration per scene"))
            o.write("tab_transfer.tex", not_run_note(["occupancy", "transfer"], self.gpu,
                                                     "The cross-scene transfer matrix", "table", "tab:transfer",
                                                     "Cross-scene transfer"))
            return
        lines = ["\\begin{table}[tbp]\\centering\\small",
                 "\\caption{Each scene's fastest configuration over the occupancy sweep (%s), re-measured at the "
                 "thesis workload (experiment \\texttt{transfer}), against the fastest of the nine thesis schedules "
                 "at that workload.}\\label{tab:best}" % tex(vx.format_workload(vx.base_workload(occ, "manix"))),
                 "\\begin{tabular}{@{}llrrr@{}}", "\\toprule",
                 "Scene & Best configuration & sweep Mrays/s & thesis-workload Mrays/s & vs best thesis schedule \\\\",
                 "\\midrule"]
        for s in SCENES:
            r = best.get(s)
            if r is None:
                lines.append("%s & \\multicolumn{4}{c}{no sweep point} \\\\" % tex(s))
                continue
            wk = vx.workload_key(vx.base_workload(spec, s))
            full = self.pool.ok(s, r["config"], wk)
            sched = [x for x in self.schedule_rows(s).values() if x is not None and x.get("status") == "ok"]
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
            own[b] = metric(self.pool.ok(b, best[b]["config"], wk), "mrays_per_s") if b in best else None
        for a in src + ["regenerationSK-thread"]:
            cfg = best[a]["config"] if a in best else vx.canonical(a)
            cells = []
            for b in dst:
                wk = vx.workload_key(vx.base_workload(spec, b))
                v = metric(self.pool.ok(b, cfg, wk), "mrays_per_s")
                if v is not None and own.get(b):
                    have = True
                    cells.append("%.0f" % (100 * v / own[b]))
                else:
                    cells.append("--")
            if a == "regenerationSK-thread":
                m.append("\\midrule")
            m.append("%s & %s \\\\" % (tex(a), " & ".join(cells)))
        m += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        o.write("tab_transfer.tex", "\n".join(m) + "\n" if have else
                not_run_note(["transfer"], self.gpu, "The cross-scene transfer matrix", "table", "tab:transfer",
                             "Cross-scene transfer"))

    # -- SIMD efficiency and texture coherence of the sorting schedules

    def coherence(self):
        o = self.out
        spec = self.specs.get("sorting_coherence")
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
                r = self.pool.ok(s, c, self.thesis_wk(s))
                p = self.pool.profiles.get((s, c, wkp))
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
            pc = self.pool.profiles.get((sc, vx.canonical("streamingSK"), wkp))
            pmo = self.pool.profiles.get((sc, vx.canonical("streamingSK-morton"), wkp))
            if not (pc and pmo and hit and tpi):
                continue
            a, b = pc["metrics"].get(hit), pmo["metrics"].get(hit)
            ta, tb = pc["metrics"].get(tpi), pmo["metrics"].get(tpi)
            if None in (a, b, ta, tb):
                continue
            deltas.append(b - a)
            tdeltas.append(tb - ta)
            C = camel(sc)
            o.macro("cohHitCompact" + C, "%.1f" % a, "coherence_hit_compact/" + sc)
            o.macro("cohHitMorton" + C, "%.1f" % b, "coherence_hit_morton/" + sc)
            o.macro("cohThreadsCompact" + C, "%.1f" % ta)
            o.macro("cohThreadsMorton" + C, "%.1f" % tb)
        if deltas:
            o.macro("cohHitDeltaMin", "%+.1f" % min(deltas))
            o.macro("cohHitDeltaMax", "%+.1f" % max(deltas))
            o.macro("cohThreadsDeltaMin", "%+.1f" % min(tdeltas))
            o.macro("cohThreadsDeltaMax", "%+.1f" % max(tdeltas))
            o.macro("cohScenes", str(len(deltas)))
        note = "" if have_prof else not_run_note(["sorting_coherence"], self.gpu,
                                                 "Texture coherence (Nsight Compute)")
        o.write("tab_coherence.tex", "\n".join(lines) + "\n" + note)

    # -- the thesis' conclusions, tested

    def claims(self):
        o = self.out
        S = self.table_summary

        def mr(scene, name, spec_name="roofline", extra=""):
            sp = self.specs[spec_name]
            r = self.pool.ok(scene, vx.canonical(name + extra), vx.workload_key(vx.base_workload(sp, scene)))
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
            c = self.pool.cpu_ref(s)
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
             % tex(self.gpu_short),
             "\\begin{tabular}{@{}p{0.38\\linewidth}cp{0.33\\linewidth}l@{}}", "\\toprule",
             "Thesis' conclusion & Table & Evidence on \\gpuArch & Verdict \\\\", "\\midrule"]
        t += ["%s & %s & \\footnotesize %s & %s \\\\" % r for r in rows]
        t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        o.write("claims.tex", "\n".join(t) + "\n")

    # -- generated prose

    def discussion(self):
        o = self.out
        paras = []
        for s in SCENES:
            b = self.best.get(s)
            if b is None:
                paras.append("\\paragraph{%s.} No measurement at the thesis workload yet." % tex(s))
                continue
            sched = {n: r for n, r in self.schedule_rows(s).items() if r is not None and r.get("status") == "ok"
                     and (metric(r, "mrays_per_s") or 0) > 0}
            ranked = sorted(sched.items(), key=lambda kv: -metric(kv[1], "mrays_per_s"))
            C = camel(s)
            txt = ("\\paragraph{%s.} The fastest configuration measured is %s at \\bestMrays%s{} Mrays/s "
                   "(achieved occupancy \\bestOcc%s\\%%, SIMD efficiency \\bestSimd%s\\%%, "
                   "\\bestRoofFrac%s\\%% of the random-ray step loop)." % (tex(s), tt(vx.describe_config(b["config"])),
                                                                         C, C, C, C))
            if len(ranked) >= 2:
                (n1, r1), (n2, r2) = ranked[0], ranked[1]
                txt += (" Among the nine thesis schedules %s leads with %s Mrays/s, %.2f$\\times$ the runner-up %s "
                        "(%s Mrays/s); its achieved occupancy is %s\\%% against %s\\%%, its SIMD efficiency %s\\%% "
                        "against %s\\%%." % (
                            tex(n1), f_mrays(metric(r1, "mrays_per_s")),
                            metric(r1, "mrays_per_s") / metric(r2, "mrays_per_s"), tex(n2),
                            f_mrays(metric(r2, "mrays_per_s")), pct_or(metric(r1, "occupancy_achieved")),
                            pct_or(metric(r2, "occupancy_achieved")), pct_or(metric(r1, "simd_efficiency")),
                            pct_or(metric(r2, "simd_efficiency"))))
                slow = ranked[-1]
                txt += " The slowest is %s (%s Mrays/s)." % (tex(slow[0]), f_mrays(metric(slow[1], "mrays_per_s")))
            if s in self.thesis_best:
                tb = self.thesis_best[s]
                theirs = self.method_to_ours(tb[1], tb[2])
                same = bool(ranked) and theirs is not None and ranked[0][0] == vx.schedule_name(theirs)
                txt += (" The thesis' fastest here was %s, at %g Mrays/s (table %s)%s." % (
                    tex(tb[1]), tb[0], tb[2], ", the same schedule" if same else ", a different schedule"))
            paras.append(txt)
        o.write("discussion_auto.tex", "\n\n".join(paras) + "\n")

    def method_to_ours(self, method, tid):
        for R in self.thesis["tables"][tid]["rows"]:
            if R["method"] == method:
                return R["ours"] if R["ours"] not in (None, "cpu") else None
        return None

    # -- appendix

    def appendix(self):
        o = self.out
        lines = ["\\begin{verbatim}"]
        lines.append("# build (no GPU needed), then run the experiments on a GPU machine")
        lines.append("make -j")
        lines.append("experiments/run --list")
        lines.append("make experiments            # = experiments/run all")
        for name in vx.run_order(self.specs):
            sp = self.specs[name]
            lines.append("experiments/run %-18s# %s%s" % (name, sp.get("title"),
                                                          "" if sp.implemented else " [not implemented]"))
        lines.append("")
        lines.append("# scene images for Figure 1 (GPU)")
        for s in SCENES:
            lines.append("bin/render --scene %s --config regenerationSK-thread -o docs/images/%s.png" % (s, s))
        lines.append("")
        lines.append("# this report (no GPU)")
        lines.append("make report                 # report/report.pdf")
        lines.append("python3 report/check_report.py")
        lines.append("\\end{verbatim}")
        o.write("appendix_commands.tex", "\n".join(lines) + "\n")
        # what each bench experiment runs, as bench command lines
        lines = []
        for name in self.display_order():
            sp = self.specs[name]
            lines.append("\\paragraph{%s} %s.%s" % (tt(name), tex(sp.get("title")),
                                                     "" if sp.implemented else " \\emph{Not implemented: %s.}"
                                                     % tex(sp.get("reason"))))
            body = []
            if sp.kind == "bench":
                configs, dropped = vx.static_configs(sp)
                groups = {}
                for s in sp.scenes:
                    ws = vx.workloads(sp, s)
                    w = ws[0]
                    args = "--width %d --height %d --spp %d --seed %d" % (w["width"], w["height"], w["spp"], w["seed"])
                    for axis in sp.get("sweep", []):
                        k, vals = axis.split("=", 1)
                        flag = dict(vx_flags()).get(k, "--" + k)
                        args = re.sub(r"%s \\S+" % re.escape(flag), "", args).strip()
                        args += " %s D" % flag
                        body_sweep = "# D in %s" % vals.replace(",", " ")
                        groups.setdefault(("sweep", body_sweep), None)
                    groups.setdefault(args, []).append(s)
                for args, scenes in groups.items():
                    if isinstance(args, tuple):
                        continue
                    scene = scenes[0] if len(scenes) == 1 else "S"
                    body.append("bin/bench --scene %s %s%s --configs FILE %s -o results/%s/%s.jsonl" % (
                        scene, args, " --roofline" if sp.flag("roofline") else "", sp.get("bench_args", ""),
                        self.gpu, sp.output))
                    if len(scenes) > 1:
                        body.append("# S in %s" % " ".join(scenes))
                for k in groups:
                    if isinstance(k, tuple):
                        body.append(k[1])
                if sp.get("configs"):
                    body.append("# configs: " + " ".join(sp.get("configs")))
                for sl in sp.get("space", []):
                    body.append("# space:")
                    for axis in sl.split(";"):
                        body.append("#   " + axis.strip().replace(",", ", "))
                for src in sp.get("configs_from", []):
                    body.append("# configs_from: " + src + " (each scene's fastest ok point)")
                body.append("# %d configs per scene and workload%s" % (
                    len(configs), "; %d generated combinations break a rule and are left out" % len(dropped)
                    if dropped else ""))
                if sp.flag("cpu_reference"):
                    for s in sp.scenes:
                        w = vx.cpu_workload(sp, s)
                        body.append("bin/render --cpu --scene %s --width %d --height %d --spp %d --seed %d -o X.pfm"
                                    % (s, w["width"], w["height"], w["spp"], w["seed"]))
            elif sp.kind == "tune":
                body.append("# for each scene, strategy and seed:")
                body.append(sp.get("command"))
                body.append("# scenes: %s; strategies: %s; seeds: %s; budget: %s" % (
                    " ".join(sp.scenes), " ".join(sp.get("strategies")), " ".join(sp.get("seeds")),
                    sp.get("budget", "")))
            elif sp.kind == "profile":
                body.append("# for each scene and config:")
                body.append("ncu --csv --metrics M,... --kernel-name %s %s bin/render --scene S --config C -o X.pfm"
                            % (sp.get("kernel", "vpt_render"), sp.get("ncu_args", "")))
                body.append("# metrics: " + " ".join(sp.get("metrics")))
            lines.append("\\begin{verbatim}\n%s\n\\end{verbatim}" % "\n".join(_wrap(b) for b in body))
        o.write("appendix_specs.tex", "\n".join(lines) + "\n")
        # the data files
        rows = []
        for f in self.pool.files:
            fr = self.pool.by_file[f]
            kinds = {}
            for r in fr:
                kinds[r.get("kind")] = kinds.get(r.get("kind"), 0) + 1
            commits = sorted({r.get("commit") for r in fr if r.get("commit") and r.get("kind") != "run"})
            times = sorted(vx.row_time(r) for r in fr if vx.row_time(r))
            rows.append("%s & %s & %s & %s \\\\" % (
                tt(f), ", ".join("%d %s" % (n, tex(k)) for k, n in sorted(kinds.items(), key=str)),
                ", ".join(tt(c) for c in commits) or "--",
                tex("%s..%s" % (times[0][:16], times[-1][:16])) if times else "--"))
        o.write("appendix_data.tex", "\n".join(
            ["\\begin{table}[htbp]\\centering\\footnotesize",
             "\\caption{The result files of \\texttt{results/%s/} this report reads (rows by kind; commits; "
             "time span, UTC).}\\label{tab:data}" % tex(self.gpu),
             "\\begin{tabular}{@{}lp{0.3\\linewidth}p{0.2\\linewidth}l@{}}", "\\toprule",
             "File & Rows & Commits & Measured \\\\", "\\midrule"] + rows +
            ["\\bottomrule", "\\end{tabular}", "\\end{table}"]) + "\n")
        notes = []
        for tid in sorted(self.thesis["tables"]):
            T = self.thesis["tables"][tid]
            src = T["source"] if T["source"].endswith(".") else T["source"] + "."
            notes.append("\\item Table %s (%s): %s%s" % (tid, tex(T["title"]), tex(src),
                                                         (" " + " ".join(tex(n) for n in T["notes"]))
                                                         if T.get("notes") else ""))
        o.write("appendix_thesis.tex", "\\begin{itemize}\\small\n" + "\n".join(notes) + "\n\\end{itemize}\n")

    def run(self):
        self.setup()
        self.scenes_figure()
        self.experiments_table()
        self.thesis_tables()
        self.mitsuba_table()
        self.key_numbers()
        self.fig_schedules()
        self.fig_roofline()
        self.fig_occupancy()
        self.fig_registers()
        self.fig_depth()
        self.tuner()
        for f in report_estimators.write(self.out, os.path.join(self.root, "results"), self.gpu, figure_env, gp_header):
            self.pool.used_files.add(f)
        self.transfer()
        self.coherence()
        self.claims()
        self.discussion()
        self.appendix()
        self.out.macro("numFigures", str(len(self.out.figures)))
        used = sorted(self.pool.used_files)
        self.out.macro("resultFiles", ", ".join(tt("results/%s/%s" % (self.gpu, f)) for f in used) or "none")
        self.out.write("macros.tex", "%% generated by report/generate.py from results/%s; do not edit\n" % self.gpu
                       + "\n".join(self.out.macros) + "\n")
        self.out.values["gpu_dir"] = self.gpu
        with open(os.path.join(self.out.dir, "values.json"), "w") as f:
            json.dump(self.out.values, f, indent=1, sort_keys=True)
        with open(os.path.join(self.out.dir, "figures.txt"), "w") as f:
            f.write("".join(n + "\n" for n in self.out.figures))
        for w in self.pool.warnings:
            print("generate: warning: %s" % w, file=sys.stderr)


def architecture(cc):
    """NVIDIA's architecture name of a compute capability ("9.0" -> Hopper)."""
    names = {"3": "Kepler", "5": "Maxwell", "6": "Pascal", "7.0": "Volta", "7.2": "Volta", "7.5": "Turing",
             "8.0": "Ampere", "8.6": "Ampere", "8.7": "Ampere", "8.9": "Ada Lovelace", "9": "Hopper",
             "10": "Blackwell", "11": "Blackwell", "12": "Blackwell"}
    cc = str(cc)
    return names.get(cc) or names.get(cc.split(".")[0]) or ("compute capability " + cc)


def vx_flags():
    return [(k, f) for k, f in (("width", "--width"), ("height", "--height"), ("spp", "--spp"), ("seed", "--seed"),
                                ("max_depth", "--max-depth"), ("rr_depth", "--rr"))]


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


def _wrap(line, width=100):
    """Breaks long command lines for verbatim, shell style."""
    if len(line) <= width:
        return line
    out, cur = [], ""
    for word in line.split(" "):
        if cur and len(cur) + 1 + len(word) > width - 2:
            out.append(cur + " \\")
            cur = "    " + word
        else:
            cur = (cur + " " + word) if cur else word
    out.append(cur)
    return "\n".join(out)


def pick_gpu(results_dir, wanted):
    dirs = vx.gpu_dirs(results_dir)
    if wanted:
        if wanted not in dirs:
            raise SystemExit("generate: results/%s has no .jsonl file (have: %s)" % (wanted, ", ".join(dirs) or "none"))
        return wanted
    if not dirs:
        raise SystemExit("generate: no results/<gpu>/*.jsonl under %s" % results_dir)

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
    Report(root, gpu, out).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
