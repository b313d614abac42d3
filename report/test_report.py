#!/usr/bin/env python3
"""Tests of the report pipeline on SYNTHETIC results (made up here, in a
scratch copy of the repository; never written to results/): every
experiment, including those with no committed results yet (occupancy sweep,
register sweep, compaction against depth, tuner convergence, transfer,
Nsight Compute profiles, CPU reference), gets rows, so that each optional
section of the report is generated and typeset once before real data
arrives. Then check_report.py must pass on the result, and must fail once a
result changes after the PDF was built. The synthetic numbers are random, so
the prose's verdicts are not checked on them (REPORT_VERDICTS=off,
--no-verdicts); instead the verdict checker has unit tests, and a build
whose prose states a verdict the numbers contradict must fail.

    python3 report/test_report.py            (needs gnuplot and pdflatex for the
                                              build tests; they skip without)
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import vptexp as vx  # noqa: E402

GPU = {"name": "Synthetic Test GPU", "uuid": "GPU-00000000-test", "sm_count": 7, "cc": "9.0", "driver": "1.2.3",
       "cuda_driver_version": 13000}


def fake(*key):
    """A deterministic pseudo-random number in [0, 1) for key."""
    return (zlib.crc32(repr(key).encode()) % 100003) / 100003.0


def png(path, w=8, h=8):
    rows = b"".join(b"\x00" + b"".join(bytes([(x * 30) % 256, (y * 30) % 256, 128]) for x in range(w))
                    for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(data)


def result(scene, canon, w, t="2026-01-01T00:00:00Z"):
    m = 10 + 1000 * fake(scene, canon, vx.workload_key(w))
    return {"gpu": GPU, "nvrtc": "13.0", "commit": "synthetic", "host": "test", "kind": "result",
            "schema": "vptune.result/1", "time": t, "scene": scene, "workload": w, "config": canon,
            "schedule": vx.schedule_name(canon), "status": "ok", "reason": "",
            "metrics": {"time_ms": 100.0 / m, "mrays_per_s": m, "gsteps_per_s": m / 100,
                        "occupancy_theoretical": 0.25 + 0.5 * fake(canon, "t"),
                        "occupancy_achieved": 0.2 + 0.5 * fake(scene, canon, "a"),
                        "simd_efficiency": fake(scene, canon, "s"), "registers": 64}}


def mitsuba_row(scene, control, backend):
    """A row as experiments/mitsuba writes it."""
    tm, tv = 0.5 + fake(scene, backend), 0.01 + 0.01 * fake(scene, "v", backend)
    row = {"kind": "mitsuba_compare", "schema": "vptune.mitsuba/1", "time": "2026-01-01T00:00:00Z", "status": "ok",
           "reason": "", "scene": scene, "control": control, "commit": "synthetic",
           "workload": {"width": 64, "height": 64, "spp": 16, "seed": 1, "max_depth": 0, "rr_depth": -1},
           "renders_per_side": 6,
           "machine": {"cpu": {"model": "Test CPU", "threads": 2}},
           "mitsuba": {"variant": "cuda_ad_rgb" if backend == "gpu" else "llvm_ad_rgb",
                       "versions": {"mitsuba": "3.9.1", "drjit": "1.5.0", "python": "3.12.0"},
                       "time": {"median_s": tm}, "mrays_per_s": 100.0 * fake(scene, "m", backend)},
           "vptune": {"backend": backend, "time": {"median_s": tv}, "mrays_per_s": 1000.0 * fake(scene, "vr", backend)},
           "compare": {"fraction_failed": 0.01, "block_chi2_p": 0.5, "image_mean": {"rel_diff": 1e-4, "p": 0.5}},
           "agree": True, "time_to_equal_error_ratio": tm / tv}
    if backend == "gpu":
        row["gpu"] = GPU
    if scene == "bucky":
        row.update(status="failed", reason="synthetic failure")
    return row


def make_root(base):
    """A scratch repository: the real specs and report sources, synthetic results."""
    root = os.path.join(base, "repo")
    os.makedirs(os.path.join(root, "experiments"))
    for f in os.listdir(os.path.join(ROOT, "experiments")):
        if f.endswith(".spec") or f == "vptexp.py":
            shutil.copy(os.path.join(ROOT, "experiments", f), os.path.join(root, "experiments"))
    os.makedirs(os.path.join(root, "report"))
    for f in os.listdir(HERE):
        if f.endswith((".py", ".tex", ".sh", ".json")):
            shutil.copy(os.path.join(HERE, f), os.path.join(root, "report"))
    os.makedirs(os.path.join(root, "docs", "images"))
    for s in ("manix", "bucky"):      # the others stay placeholders
        png(os.path.join(root, "docs", "images", s + ".png"))
    specs = vx.load_specs(os.path.join(root, "experiments"))
    out = os.path.join(root, "results", "testgpu")
    os.makedirs(out)
    files = {}

    def add(name, row):
        files.setdefault(name, []).append(row)

    for name in vx.run_order(specs):
        sp = specs[name]
        if not sp.implemented:
            continue
        if sp.kind == "bench":
            configs, _ = vx.static_configs(sp)
            for dep in (specs[n] for n in vx.dependencies(sp)):
                rows = files.get(dep.output, [])
                for r in vx.best_configs(rows, scenes=dep.scenes).values():
                    if r["config"] not in configs:
                        configs.append(r["config"])
            for s in sp.scenes:
                for w in vx.workloads(sp, s):
                    for c in configs:
                        add(sp.output, result(s, c, w))
                if sp.flag("roofline"):
                    for rays, g in (("random", 50.0), ("coherent", 400.0)):
                        add(sp.output, {"gpu": GPU, "commit": "synthetic", "kind": "roofline", "time":
                                        "2026-01-01T00:00:00Z", "scene": s, "rays": rays,
                                        "workload": vx.base_workload(sp, s),
                                        "metrics": {"gsteps_per_s": g + fake(s, rays), "time_ms": 1.0}})
                if sp.flag("cpu_reference"):
                    add(sp.output, {"kind": "cpu_reference", "commit": "synthetic", "time": "2026-01-01T00:00:00Z",
                                    "scene": s, "workload": vx.cpu_workload(sp, s), "status": "ok",
                                    "metrics": {"mrays_per_s": 2.5, "time_ms": 1000.0}})
        elif sp.kind == "profile":
            configs, _ = vx.static_configs(sp)
            for s in sp.scenes:
                for c in configs:
                    add(sp.output, {"kind": "profile", "commit": "synthetic", "time": "2026-01-01T00:00:00Z",
                                    "scene": s, "config": c, "workload": vx.base_workload(sp, s), "status": "ok",
                                    "metrics": {m: 1 + 99 * fake(s, c, m) for m in sp.get("metrics")}})
        elif sp.kind == "tune":
            for s in sp.scenes:
                for st in sp.get("strategies"):
                    for seed in sp.get("seeds"):
                        add(sp.output, {"kind": "header", "schema": "vptune.tune/1", "scene": s,
                                        "experiment": name, "strategy": st, "seed": seed, "commit": "synthetic"})
                        for i in range(30):
                            add(sp.output, {"kind": "eval", "config": vx.canonical("naiveSK"), "fidelity": 1,
                                            "status": "ok", "cost_s": 1.0,
                                            "metrics": {"time_ms": 1 + 10 * fake(s, st, seed, i)}})
    # degenerate rows, newer than the rest: a failed variant, a row without
    # occupancy or SIMD metrics, and an incomplete last line (a crash mid-write)
    w = vx.base_workload(specs["roofline"], "ad")
    bad = result("ad", vx.canonical("streamingMK"), w, t="2026-02-01T00:00:00Z")
    bad.update(status="launch_limits", reason="too many registers", metrics={})
    add("thesis_schedules", bad)
    thin = result("smoke", vx.canonical("naiveSK"), vx.base_workload(specs["roofline"], "smoke"),
                  t="2026-02-01T00:00:00Z")
    for k in ("occupancy_achieved", "occupancy_theoretical", "simd_efficiency"):
        del thin["metrics"][k]
    add("thesis_schedules", thin)
    # experiments/mitsuba: a GPU run (cgg-logo, ad and a control) and a CPU machine's
    for folder, backend in (("testgpu", "gpu"), ("cpu-test-2c", "cpu")):
        os.makedirs(os.path.join(root, "results", folder), exist_ok=True)
        with open(os.path.join(root, "results", folder, "mitsuba.jsonl"), "w") as f:
            for scene, control in (("cgg-logo", None), ("ad", None), ("manix", "smooth"), ("bucky", None)):
                f.write(json.dumps(mitsuba_row(scene, control, backend)) + "\n")
    # two tune caches of one 1024-wide volume (scripts/gpu_estimator_tune.sh): every estimator, the thesis'
    thread, grid = vx.canonical("regenerationSK-thread"), vx.canonical("regenerationSK-warp,majorant=grid32,density=u8")
    for est, evals in (("all", ((thread, 80.0, 1000), (grid, 20.0, 150))),
                       ("global", ((thread, 80.0, 1000), (vx.canonical("regenerationSK-warp"), 79.0, 1000)))):
        add("large/head1024-tune-%s-45s-abcdef0" % est, {"kind": "header", "schema": "vptune.tune/1",
                                                          "scene": "head1024", "commit": "synthetic"})
        for config, ms, steps in evals:
            add("large/head1024-tune-%s-45s-abcdef0" % est, {
                "kind": "eval", "config": config, "fidelity": 1, "status": "ok", "cost_s": 1.0,
                "time": "2026-01-01T00:00:00Z", "metrics": {"time_ms": ms, "steps": steps, "rays": 100}})
    # the default tune run once per seed (scripts/gpu_variance.sh): manix's winners spread
    for seed in (1, 2, 3):
        add("tune_variance", {"kind": "tune_variance", "scene": "manix", "seed": seed, "budget": "90s", "exit": 0,
                              "gpu": "Synthetic Test GPU, GPU-00000000-test, 1.2.3", "commit": "synthetic",
                              "evaluations": 200 + seed, "time_ms": 7.0 + 0.01 * seed,
                              "schedule": "regenerationSK-warp", "config": vx.canonical("regenerationSK-warp")})
    for name, rows in files.items():
        os.makedirs(os.path.dirname(os.path.join(out, name + ".jsonl")), exist_ok=True)
        with open(os.path.join(out, name + ".jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
            if name == "thesis_schedules":
                f.write('{"kind": "result", "scene": "manix", "config": "naiveSK", "metr')
    return root


def have_tools():
    return all(shutil.which(t) for t in ("gnuplot", "pdflatex", "pdftotext"))


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="vpt-report-test-")
        cls.root = make_root(cls.base)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base)

    def generate(self):
        p = subprocess.run([sys.executable, os.path.join(self.root, "report", "generate.py"), "--root", self.root],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return os.path.join(self.root, "report", "generated")

    def test_generate_fills_every_section(self):
        gen = self.generate()
        for f in ("fig_occupancy.tex", "fig_simd.tex", "fig_registers.tex", "fig_depth.tex", "fig_tuner.tex",
                  "tab_best.tex", "tab_transfer.tex", "tab_coherence.tex", "corr.tex", "tab_tuner.tex"):
            with open(os.path.join(gen, f)) as fh:
                self.assertNotIn("No results yet", fh.read(), f)
        with open(os.path.join(gen, "figures.txt")) as fh:
            figs = fh.read().split()
        self.assertEqual(set(figs), {"fig_schedules", "fig_roofline", "fig_occupancy", "fig_simd", "fig_registers",
                                     "fig_depth", "fig_tuner", "fig_estimators", "fig_large"})
        with open(os.path.join(gen, "macros.tex")) as fh:
            macros = fh.read()
        self.assertIn("\\newcommand{\\gpuName}{Synthetic Test GPU}", macros)
        # the evidence table shows no number where the variant failed (the launch_limits row)
        with open(os.path.join(gen, "claims.tex")) as fh:
            self.assertIn("ad --", fh.read())
        self.assertNotIn("claimsHold", macros)
        with open(os.path.join(gen, "numbers.json")) as fh:
            numbers = json.load(fh)
        self.assertIsNone(numbers["mrAdStreamingMK"]["value"])
        self.assertEqual(numbers["mrManixThread"]["better"], "higher")
        self.assertEqual(numbers["tileNaiveskOne"]["better"], "lower")
        # the large-volume part: its tables from large_schedules and large_coherence, no tune caches here
        self.assertIsNotNone(numbers["largeHeadOneZeroTwoFourMortonMs"]["value"])
        self.assertEqual(numbers["largeHeadOneZeroTwoFourMortonMs"]["better"], "lower")
        self.assertIsNone(numbers["largeCraniumMhdUpFourTuneAllMs"]["value"])
        # the best ok evaluation of each tune, and their ratio
        self.assertEqual(numbers["largeHeadOneZeroTwoFourTuneAllMs"]["value"], 20.0)
        self.assertEqual(numbers["largeHeadOneZeroTwoFourTuneGlobalMs"]["value"], 79.0)
        self.assertIn("\\newcommand{\\largeHeadOneZeroTwoFourTuneRatio}{3.95}", macros)
        self.assertIn("\\newcommand{\\largeHeadOneZeroTwoFourTuneEstimator}{grid32:u8}", macros)
        for f, measured in (("tab_large_sizes.tex", True), ("tab_large_coherence.tex", True),
                            ("tab_large_tunes.tex", True), ("tab_large_cranium.tex", False)):
            with open(os.path.join(gen, f)) as fh:
                self.assertEqual("Not measured on this GPU" not in fh.read(), measured, f)
        with open(os.path.join(gen, "tab_t42.tex")) as fh:
            t42 = fh.read()
        # tiling is implemented: the thesis' times beside ours, from the tiled rows
        self.assertIn("61.27", t42)
        self.assertIn("t42\\_tiling.jsonl", t42)
        self.assertNotIn("n/a", t42)
        self.assertNotIn("not implemented", t42)
        with open(os.path.join(gen, "tab_t45.tex")) as fh:
            self.assertIn("\\emph{launch\\_limits}", fh.read())
        with open(os.path.join(gen, "scenes.tex")) as fh:
            t = fh.read()
        self.assertIn("docs/images/manix.png", t)
        self.assertIn("image not rendered yet", t)

    def test_mitsuba_rows(self):
        gen = self.generate()
        with open(os.path.join(gen, "tab_t61.tex")) as fh:
            t61 = fh.read()
        self.assertIn("Mitsuba 3 (cuda\\_ad\\_rgb) on", t61)
        self.assertIn("Mitsuba 3 (llvm\\_ad\\_rgb) on Test CPU, 2 threads", t61)
        self.assertIn("vptune CPU reference on Test CPU, 2 threads", t61)
        self.assertIn("results/cpu-test-2c/mitsuba.jsonl", t61)
        with open(os.path.join(self.root, "results", "testgpu", "mitsuba.jsonl")) as fh:
            rows = [json.loads(line) for line in fh]
        want = "%.1f" % rows[0]["mitsuba"]["mrays_per_s"]   # cgg-logo's Mitsuba Mrays/s
        self.assertIn(want, t61)
        with open(os.path.join(gen, "tab_mitsuba.tex")) as fh:
            tm = fh.read()
        self.assertIn("\\label{tab:mitsuba}", tm)
        self.assertIn("manix (smooth boundary)", tm)
        self.assertIn("\\emph{failed}", tm)
        self.assertNotIn("No results yet", tm)

    def test_values_match_rows(self):
        gen = self.generate()
        with open(os.path.join(gen, "values.json")) as fh:
            values = json.load(fh)
        rows = vx.read_rows(os.path.join(self.root, "results", "testgpu", "thesis_schedules.jsonl"))
        spec = vx.load_spec(os.path.join(self.root, "experiments", "roofline.spec"))
        wk = vx.workload_key(vx.base_workload(spec, "manix"))
        best = max(r["metrics"]["mrays_per_s"] for r in rows if r.get("kind") == "result"
                   and r["scene"] == "manix" and vx.workload_key(r["workload"]) == wk)
        others = []
        for f in os.listdir(os.path.join(self.root, "results", "testgpu")):
            if not f.endswith(".jsonl"):
                continue
            for r in vx.read_rows(os.path.join(self.root, "results", "testgpu", f)):
                if r.get("kind") == "result" and r["scene"] == "manix" and vx.workload_key(r["workload"]) == wk:
                    others.append(r["metrics"]["mrays_per_s"])
        self.assertEqual(values["best_mrays/manix"], "%.1f" % max([best] + others))

    @unittest.skipUnless(have_tools(), "gnuplot, pdflatex or pdftotext missing")
    def test_build_and_check(self):
        p = subprocess.run(["sh", os.path.join(self.root, "report", "build.sh")], capture_output=True, text=True,
                           env=dict(os.environ, REPORT_VERDICTS="off"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        check = [sys.executable, os.path.join(self.root, "report", "check_report.py"), "--root", self.root,
                 "--no-verdicts"]
        p = subprocess.run(check, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout.strip().splitlines()[-1], r"^\d+ passed, 0 failed$")
        # a result that changes after the PDF was built must be caught
        path = os.path.join(self.root, "results", "testgpu", "thesis_schedules.jsonl")
        rows = vx.read_rows(path)
        r = {k: v for k, v in rows[-1].items() if not k.startswith("_")}
        r["time"] = "2027-01-01T00:00:00Z"
        r["metrics"] = dict(r["metrics"], mrays_per_s=123456.7)
        vx.append_row(path, r)   # cuts off the incomplete last line first
        p = subprocess.run(check, capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("FAIL  key numbers of %s" % r["scene"], p.stdout)


class VerdictTest(unittest.TestCase):
    """report/verdicts.py: the parser, the rule, and the build that stops."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, HERE)
        import verdicts
        cls.v = verdicts

    def num(self, value, noise=0.0, better="higher"):
        return {"value": value, "noise": noise, "better": better, "text": "--" if value is None else str(value)}

    def test_parse(self):
        text = ("A sentence \\verdict[ms]{the \\texttt{grid}}{wins}{B}{\\a}{\\b} and\n"
                "% \\verdict{commented}{wins}{out}{\\a}{\\b}\n\\verdict{C}{ties}\n{D}{\\c}{\\d}, \\verdict{broken}{wins}")
        found = self.v.find(text, "x.tex")
        self.assertEqual(found[0], ("x.tex", 1, "the \\texttt{grid}", "wins", "B", "a", "b"))
        self.assertEqual(found[1][1:], (3, "C", "ties", "D", "c", "d"))
        self.assertIsNone(found[2][3])
        self.assertEqual(len(found), 3)

    def test_rule(self):
        n = self.num
        self.assertEqual(self.v.decide(n(103.0), n(100.0))[0], "wins")
        self.assertEqual(self.v.decide(n(101.0), n(100.0))[0], "ties")           # inside the floor
        self.assertEqual(self.v.decide(n(103.0, 0.02), n(100.0, 0.02))[0], "ties")   # inside the noise
        self.assertEqual(self.v.decide(n(97.0), n(100.0))[0], "loses")
        self.assertEqual(self.v.decide(n(8.0, better="lower"), n(10.0, better="lower"))[0], "wins")

    def test_check(self):
        numbers = {"a": self.num(200.0), "b": self.num(100.0), "t": self.num(1.0, better="lower"),
                   "m": self.num(None)}
        found = [("x", 1, "A", "wins", "B", "a", "b"), ("x", 2, "A", "loses", "B", "a", "b"),
                 ("x", 3, "A", "wins", "B", "a", "zz"), ("x", 4, "A", "wins", "B", "a", "t"),
                 ("x", 5, "A", "wins", "B", "a", "m"), ("x", 6, "A", "beats", "B", "a", "b")]
        results, nodata = self.v.check(found, numbers)
        self.assertEqual([ok for ok, _ in results], [True, False, False, False, False])
        self.assertIn("the numbers say wins", results[1][1])
        self.assertIn("\\zz is not a generated number", results[2][1])
        self.assertIn("opposite directions", results[3][1])
        self.assertEqual(len(nodata), 1)

    @unittest.skipUnless(have_tools(), "gnuplot, pdflatex or pdftotext missing")
    def test_build_stops_on_a_wrong_verdict(self):
        base = tempfile.mkdtemp(prefix="vpt-report-verdict-")
        try:
            root = make_root(base)
            gen = subprocess.run([sys.executable, os.path.join(root, "report", "generate.py"), "--root", root],
                                 capture_output=True, text=True)
            self.assertEqual(gen.returncode, 0, gen.stderr)
            with open(os.path.join(root, "report", "generated", "numbers.json")) as fh:
                numbers = json.load(fh)
            a, b = numbers["mrManixThread"], numbers["mrManixNaiveSK"]
            truth = self.v.decide(a, b)[0]
            wrong = "loses" if truth != "loses" else "wins"
            # report.tex's own verdicts cite random numbers here: out of the way
            with open(os.path.join(root, "report", "report.tex")) as fh:
                tex = fh.read()
            with open(os.path.join(root, "report", "report.tex"), "w") as fh:
                fh.write(tex.replace("\\verdict[", "\\relax[").replace("\\verdict{", "\\relax{"))
            with open(os.path.join(root, "report", "discussion.tex"), "w") as fh:
                # the evidence table stays: the session table refers to it
                fh.write("\\verdict{thread}{%s}{naive}{\\mrManixThread}{\\mrManixNaiveSK}\n"
                         "\\input{generated/claims.tex}\n" % truth)
            p = subprocess.run(["sh", os.path.join(root, "report", "build.sh")], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(root, "report", "discussion.tex"), "w") as fh:
                fh.write("\\verdict{thread}{%s}{naive}{\\mrManixThread}{\\mrManixNaiveSK}\n"
                         "\\input{generated/claims.tex}\n" % wrong)
            p = subprocess.run(["sh", os.path.join(root, "report", "build.sh")], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("disagrees with the numbers", p.stderr)
            self.assertIn("the numbers say %s" % truth, p.stderr)
        finally:
            shutil.rmtree(base)


class RuleTest(unittest.TestCase):
    """check_report.py's rules for sessions, spreads, commit hashes in prose
    and overfull boxes: each passes on a good case and fails on a bad one."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, HERE)
        import check_report
        cls.c = check_report

    def test_overfull(self):
        log = ("(./report.tex (./generated/tab_best.tex\nOverfull \\hbox (114.0pt too wide) in paragraph at lines "
               "3--15\n) (./discussion.tex\nOverfull \\hbox (7.7pt too wide) in paragraph at lines 5--6\n"
               "Overfull \\vbox (12.5pt too high) detected at line 40\n")
        big = self.c.overfull_boxes(log)
        self.assertEqual([round(p, 1) for p, _ in big], [114.0, 12.5])
        self.assertEqual(big[0][1], "generated/tab_best.tex lines 3--15")
        self.assertEqual(self.c.overfull_boxes(log.replace("114.0pt", "9.9pt").replace("12.5pt", "3pt")), [])

    def test_commit_hash_in_prose(self):
        tex = ("\\documentclass{article}\\date{commit 1aab097fe8cd}\\begin{document}\nThe winner (commit "
               "\\texttt{%s}) beats it.\n%% commit 0381a76249ed in a comment\n\\begin{table}\\caption{Rows of "
               "0381a76 only}\\end{table}\nA figure \\includegraphics{x}\\caption{of commit e5696f2be942}.\n"
               "Deadbeef is a word, 1234567 a number.\n\\appendix commit 2b06eb7f1345\n\\end{document}")
        prose = self.c.prose_of(tex % "\\depCommit")
        self.assertNotIn("1aab097", prose)       # the preamble (title page) may name the report's commit
        self.assertNotIn("0381a76", prose)       # captions and floats hold provenance
        self.assertNotIn("e5696f2", prose)
        self.assertNotIn("2b06eb7", prose)       # so does the appendix
        macros = {"depCommit": "0381a76", "mrManix": "7105.9"}
        self.assertEqual(self.c.prose_hashes(prose, macros, {"0381a76249ed"}), ["\\depCommit"])
        self.assertEqual(self.c.prose_hashes(self.c.prose_of(tex % "3b5ac86"), macros, set()), ["3b5ac86"])
        self.assertEqual(self.c.prose_hashes(self.c.prose_of(tex % "results/h100/async/"), macros,
                                             {"0381a76249ed"}), [])

    def write(self, d, name, text):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

    def test_session_marks(self):
        d = tempfile.mkdtemp(prefix="vpt-report-rule-")
        try:
            pv = {"commit": "c2", "sessions": [{"id": "S1", "uuid": "GPU-a", "commit": "c1"},
                                               {"id": "S2", "uuid": "GPU-b", "commit": "c2"}],
                  "floats": {"mixed.tex": {"commits": ["c1", "c2"], "sessions": [["GPU-a", "c1"], ["GPU-b", "c2"]]},
                             "one.tex": {"commits": ["c2"], "sessions": [["GPU-b", "c2"]]}}}
            self.write(d, "mixed.tex", "\\caption{\\mixedsessions{2}{S1, S2}\\othercommit{c1}Mixed.}")
            self.write(d, "one.tex", "\\caption{One.}")
            self.assertEqual(self.c.session_marks(pv, d), [])
            self.write(d, "mixed.tex", "\\caption{\\othercommit{c1}Mixed.}")
            self.assertIn("no \\mixedsessions mark", self.c.session_marks(pv, d)[0])
            self.write(d, "mixed.tex", "\\caption{\\mixedsessions{2}{S1, S3}Mixed.}")
            self.assertIn("mark names S1, S3", self.c.session_marks(pv, d)[0])
            self.write(d, "mixed.tex", "\\caption{\\mixedsessions{2}{S1, S2}Mixed.}")
            pv["floats"]["one.tex"]["sessions"].append(["GPU-z", "c9"])
            self.assertIn("not in the session table", self.c.session_marks(pv, d)[0])
        finally:
            shutil.rmtree(d)

    def test_spreads(self):
        d = tempfile.mkdtemp(prefix="vpt-report-rule-")
        try:
            rows = [{"kind": "tune_variance", "scene": "manix", "seed": k, "exit": 0, "time_ms": t}
                    for k, t in ((1, 7.75), (2, 7.7472), (3, 7.7527))]
            rows.append({"kind": "tune_variance", "scene": "smoke", "seed": 1, "exit": 0, "time_ms": 3.0})
            rows.append({"kind": "tune_variance", "scene": "manix", "seed": 4, "exit": 1, "time_ms": 1.0})
            with open(os.path.join(d, "tune_variance.jsonl"), "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in rows))
            spreads = self.c.seed_spreads(os.path.join(d, "tune_variance.jsonl"))
            self.assertEqual(sorted(spreads), ["manix"])          # one seed has no spread; a failed run none
            self.assertIn("7.747--7.753", spreads["manix"])
            pv = {"floats": {"key.tex": {"tuned": ["manix", "smoke"]}, "other.tex": {}}}
            self.write(d, "key.tex", "\\caption{Seed spread: %s.}" % spreads["manix"])
            self.write(d, "other.tex", "\\caption{No winner.}")
            own = {None: spreads, "h100": {"manix": "manix 7.000--7.100\\,ms over 2 seeds (1.4\\%)"}}
            self.assertEqual(self.c.missing_spreads(pv, d, own.get), [])
            self.write(d, "key.tex", "\\caption{A tuned winner.}")
            self.assertIn("key.tex: manix without its seed spread", self.c.missing_spreads(pv, d, own.get)[0])
            # a float of another results folder carries that folder's spread, not the report's
            pv["floats"]["key.tex"]["folder"] = "h100"
            self.write(d, "key.tex", "\\caption{Seed spread: %s.}" % spreads["manix"])
            self.assertIn("manix 7.000--7.100", self.c.missing_spreads(pv, d, own.get)[0])
            self.write(d, "key.tex", "\\caption{Seed spread: %s.}" % own["h100"]["manix"])
            self.assertEqual(self.c.missing_spreads(pv, d, own.get), [])
        finally:
            shutil.rmtree(d)


class CommitMarkTest(unittest.TestCase):
    """Rows of another commit than the report's are marked in every float
    that shows them, and check_report.py fails when a mark is missing."""

    @unittest.skipUnless(have_tools(), "gnuplot, pdflatex or pdftotext missing")
    def test_marks(self):
        base = tempfile.mkdtemp(prefix="vpt-report-commit-")
        try:
            root = make_root(base)
            # a newer row of another commit: it becomes the report's commit,
            # and every float of the older rows is marked
            path = os.path.join(root, "results", "testgpu", "thesis_schedules.jsonl")
            spec = vx.load_spec(os.path.join(root, "experiments", "roofline.spec"))
            r = result("manix", vx.canonical("naiveSK"), vx.base_workload(spec, "manix"), t="2027-06-01T00:00:00Z")
            r["commit"] = "newer0commit"
            vx.append_row(path, r)
            p = subprocess.run(["sh", os.path.join(root, "report", "build.sh")], capture_output=True, text=True,
                               env=dict(os.environ, REPORT_VERDICTS="off"))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            gen = os.path.join(root, "report", "generated")
            with open(os.path.join(gen, "tab_t43.tex")) as fh:
                self.assertIn("\\othercommit{synthetic}", fh.read())
            with open(os.path.join(gen, "provenance.json")) as fh:
                self.assertEqual(json.load(fh)["commit"], "newer0commit")
            check = [sys.executable, os.path.join(root, "report", "check_report.py"), "--root", root,
                     "--no-verdicts"]
            p = subprocess.run(check, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertIn("PASS  front page names the results' commit newer0commit", p.stdout)
            # two sessions now (one GPU at two commits): the table of both is marked with both
            with open(os.path.join(gen, "tab_t43.tex")) as fh:
                t = fh.read()
            mark = re.search(r"\\mixedsessions\{2\}\{(S\d+, S\d+)\}", t)
            self.assertIsNotNone(mark, t[:400])
            with open(os.path.join(gen, "keynumbers.tex")) as fh:
                self.assertIn("manix 7.010--7.030\\,ms over 3 seeds", fh.read())
            with open(os.path.join(gen, "tab_t43.tex"), "w") as fh:
                fh.write(t.replace("\\othercommit{synthetic}", "").replace(mark.group(0), ""))
            p = subprocess.run(check, capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn("unmarked: tab_t43.tex", p.stdout)
            self.assertIn("FAIL  sessions: ", p.stdout)
            self.assertIn("tab_t43.tex: rows of 2 sessions (%s), no \\mixedsessions mark" % mark.group(1), p.stdout)
        finally:
            shutil.rmtree(base)


class SessionTest(unittest.TestCase):
    """One session per table (pool.py's report session, noise.py's floor,
    verdicts.py's cross-session list, check_report.py's one-session rule),
    on a TEST FIXTURE: synthetic rows of two made-up sessions in a scratch
    copy of the repository."""

    OLD = dict(GPU, uuid="GPU-00000000-test-old")

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, HERE)
        import check_report
        import noise
        import pool
        import verdicts
        cls.check_report, cls.noise, cls.pool, cls.v = check_report, noise, pool, verdicts

    def row(self, uuid, commit, t, ms, scene="manix", config="naiveSK"):
        return {"kind": "result", "gpu": dict(GPU, uuid=uuid), "commit": commit, "time": t, "scene": scene,
                "config": vx.canonical(config), "status": "ok",
                "workload": {"width": 4, "height": 4, "spp": 1, "seed": 1}, "metrics": {"time_ms": ms}}

    def test_prefer_session(self):
        key = ("GPU-a", "c1")
        old = self.row("GPU-a", "c1", "2026-01-01T00:00:00Z", 1.0)
        newer = self.row("GPU-b", "c1", "2026-02-01T00:00:00Z", 2.0)
        only_b = self.row("GPU-b", "c1", "2026-02-01T00:00:00Z", 3.0, config="regenerationSK-thread")
        rows = [old, newer, only_b]
        self.assertIs(self.pool.prefer_session(rows, vx.result_key, None)[vx.result_key(old)], newer)
        got = self.pool.prefer_session(rows, vx.result_key, [key])
        self.assertIs(got[vx.result_key(old)], old)             # the session's row, though older
        self.assertIs(got[vx.result_key(only_b)], only_b)       # a key it lacks: the newest row
        got = self.pool.prefer_session(rows, vx.result_key, [key, ("GPU-b", "c1")])
        self.assertIs(got[vx.result_key(old)], old)             # two named: the first named wins
        self.assertIs(got[vx.result_key(only_b)], only_b)
        cpu = {"kind": "cpu_reference", "commit": "c1", "host_gpu": dict(GPU, uuid="GPU-a")}
        self.assertEqual(self.pool.session_of(cpu), key)
        self.assertEqual(self.pool.session_of(dict(cpu, host_gpu=None)), ("-", "c1"))

    def test_session_names_the_folder(self):
        d = tempfile.mkdtemp(prefix="vpt-report-session-")
        try:
            for folder, n in (("big", 3), ("small", 1)):
                os.makedirs(os.path.join(d, folder))
                with open(os.path.join(d, folder, "x.jsonl"), "w") as f:
                    for i in range(n):
                        f.write(json.dumps(self.row("GPU-a", "c1", "2026-01-01T00:00:00Z", 1.0 + i)) + "\n")
            import generate
            self.assertEqual(generate.pick_gpu(d, None), "big")
            with open(os.path.join(d, "small", "report_session.json"), "w") as f:
                json.dump({"uuid": "GPU-a", "commit": "c1", "last": "2026-01-01T00:00:00Z"}, f)
            self.assertEqual(generate.pick_gpu(d, None), "small")
            self.assertEqual(generate.pick_gpu(d, "big"), "big")     # REPORT_GPU still decides
            with open(os.path.join(d, "small", "report_session.json"), "w") as f:
                json.dump({"uuids": ["GPU-a", "GPU-b"], "commit": None}, f)
            with self.assertRaises(SystemExit):
                self.pool.report_session(d, "small")
        finally:
            shutil.rmtree(d)

    def test_noise_floor(self):
        d = tempfile.mkdtemp(prefix="vpt-report-noise-")
        try:
            os.makedirs(os.path.join(d, "gpuA"))
            os.makedirs(os.path.join(d, "gpuB"))
            rows = [self.row("GPU-a", "c1", "2026-01-01T00:00:00Z", 1.00),
                    self.row("GPU-b", "c1", "2026-01-01T00:00:00Z", 1.05),      # same commit, another card: 5%
                    self.row("GPU-c", "c2", "2026-01-01T00:00:00Z", 2.00),      # another commit: not pooled
                    self.row("GPU-d", "c1-dirty", "2026-01-01T00:00:00Z", 9.0),  # a modified build: left out
                    self.row("GPU-e", "c1-dirty", "2026-01-01T00:00:00Z", 1.0)]
            with open(os.path.join(d, "gpuA", "x.jsonl"), "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in rows))
            f = self.noise.floor(d, "gpuA", 0.02)
            self.assertAlmostEqual(f["floor"], 0.05)
            self.assertEqual((f["folder"], f["groups"]), ("gpuA", 1))
            # a folder without repeated sessions borrows the largest spread measured anywhere
            g = self.noise.floor(d, "gpuB", 0.02)
            self.assertAlmostEqual(g["floor"], 0.05)
            self.assertEqual(g["folder"], "gpuA")
            # never below the in-session floor
            self.assertAlmostEqual(self.noise.floor(d, "gpuA", 0.08)["floor"], 0.08)
            self.assertIsNone(self.noise.floor(os.path.join(d, "gpuB"), "gpuB", 0.02)["measured"])
        finally:
            shutil.rmtree(d)

    def test_verdict_sessions(self):
        def n(v, sessions):
            return {"value": v, "noise": 0.0, "better": "higher", "text": str(v), "sessions": sessions}
        numbers = {"a": n(110.0, [["GPU-a", "c1"]]), "b": n(100.0, [["GPU-a", "c1"]]),
                   "c": n(100.0, [["GPU-b", "c1"]]), "d": {"value": 1.0, "noise": 0, "better": "higher", "text": "1"}}
        found = [("x", 1, "A", "wins", "B", "a", "b"), ("x", 2, "A", "wins", "C", "a", "c"),
                 ("x", 3, "A", "wins", "D", "a", "d")]
        crossed = self.v.cross_session(found, numbers)
        self.assertEqual(len(crossed), 2)
        self.assertIn("span 2 sessions", crossed[0])
        self.assertIn("records no sessions", crossed[1])
        # the floor decides: 10% wins over a 5% floor, ties under a 12% one
        self.assertEqual(self.v.decide(numbers["a"], numbers["b"], 0.05)[0], "wins")
        self.assertEqual(self.v.decide(numbers["a"], numbers["b"], 0.12)[0], "ties")
        results, _ = self.v.check(found[:1], numbers, 0.12)
        self.assertFalse(results[0][0])

    def generate(self, root):
        p = subprocess.run([sys.executable, os.path.join(root, "report", "generate.py"), "--root", root],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        gen = os.path.join(root, "report", "generated")
        with open(os.path.join(gen, "provenance.json")) as f:
            pv = json.load(f)
        with open(os.path.join(gen, "numbers.json")) as f:
            numbers = json.load(f)
        return pv, numbers

    def test_one_session_rule(self):
        base = tempfile.mkdtemp(prefix="vpt-report-one-session-")
        try:
            root = make_root(base)
            res = os.path.join(root, "results", "testgpu")
            path = os.path.join(res, "thesis_schedules.jsonl")
            rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in vx.read_rows(path)]
            for r in rows:   # the fixture's CPU reference ran beside its GPU (experiments/run's host_gpu)
                if r.get("kind") == "cpu_reference":
                    r["host_gpu"] = GPU
            spec = vx.load_spec(os.path.join(root, "experiments", "t43_regeneration.spec"))
            block = vx.canonical("regenerationSK-block")   # a key of no other experiment's file
            # an older session's rows, newer than the session's: newest-wins would mix table 4.3
            old = []
            for s in spec.scenes:
                r = result(s, block, vx.base_workload(spec, s), t="2027-01-01T00:00:00Z")
                r["gpu"] = self.OLD
                old.append(r)
            with open(path, "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in rows + old))
            key = (GPU["uuid"], "synthetic")
            pv, numbers = self.generate(root)
            t43 = pv["floats"]["tab_t43.tex"]
            self.assertIn("mark", t43)
            bad, _ = self.check_report.one_session(pv, numbers, [], None)
            self.assertTrue(any(b.startswith("tab_t43.tex") for b in bad), bad)
            # the session named: its rows win every key it measured, and the tables are of it alone
            with open(os.path.join(res, "report_session.json"), "w") as f:
                json.dump({"uuid": key[0], "commit": key[1], "last": "2026-02-01T00:00:00Z"}, f)
            pv, numbers = self.generate(root)
            self.assertNotIn("mark", pv["floats"]["tab_t43.tex"])
            self.assertEqual(pv["floats"]["tab_t43.tex"]["sessions"], [list(key)])
            bad, notes = self.check_report.one_session(pv, numbers, [], [key])
            self.assertEqual([b for b in bad if b.startswith("tab_t")], [])
            self.assertTrue(any(x.startswith("tab_t61.tex keeps") for x in notes), notes)   # Mitsuba's rows
            found = [("x", 1, "block", "wins", "naive", "mrManixBlock", "mrManixNaiveSK")]
            self.assertEqual(numbers["mrManixBlock"]["sessions"], [list(key)])
            self.assertEqual(self.check_report.one_session(pv, numbers, found, [key])[0], [])
            # a key the session lacks falls back to the other session's row: the table keeps its
            # mark, and the rule names it and the verdict that cites it
            with open(path, "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in rows + old
                                if not (r.get("gpu") == GPU and r.get("kind") == "result" and r["scene"] == "manix"
                                        and r["config"] == block)))
            pv, numbers = self.generate(root)
            self.assertIn("mark", pv["floats"]["tab_t43.tex"])
            bad, _ = self.check_report.one_session(pv, numbers, found, [key])
            self.assertTrue(any(b.startswith("tab_t43.tex: vptune rows of") for b in bad), bad)
            self.assertTrue(any(b.startswith("x:1 (block wins naive): rows of") for b in bad), bad)
        finally:
            shutil.rmtree(base)

    def test_a_section_the_folder_lacks_comes_from_another(self):
        """The seed spreads exist only in another GPU's folder: their table is
        built from there and says so, the thesis tables stay the session's,
        and a verdict within that section is held to one of its sessions."""
        base = tempfile.mkdtemp(prefix="vpt-report-folders-")
        try:
            root = make_root(base)
            res = os.path.join(root, "results", "testgpu")
            other = os.path.join(root, "results", "othergpu")
            os.makedirs(other)
            rows = vx.read_rows(os.path.join(res, "tune_variance.jsonl"))
            os.unlink(os.path.join(res, "tune_variance.jsonl"))
            with open(os.path.join(other, "tune_variance.jsonl"), "w") as f:
                f.write("".join(json.dumps(dict({k: v for k, v in r.items() if not k.startswith("_")},
                                                gpu="Other GPU, GPU-00000000-00ff, 1.2.3")) + "\n"
                                for r in rows))
            key = (GPU["uuid"], "synthetic")
            with open(os.path.join(res, "report_session.json"), "w") as f:
                json.dump({"uuid": key[0], "commit": key[1], "last": "2026-02-01T00:00:00Z"}, f)
            pv, numbers = self.generate(root)
            var = pv["floats"]["tab_tune_variance.tex"]
            self.assertEqual(var.get("folder"), "othergpu")
            self.assertEqual(var["sessions"], [["GPU-00000000-00ff", "synthetic"]])
            with open(os.path.join(root, "report", "generated", "tab_tune_variance.tex")) as f:
                self.assertIn("results/othergpu/", f.read())
            self.assertNotIn("folder", pv["floats"]["tab_t43.tex"])
            self.assertEqual(pv["floats"]["tab_t43.tex"]["sessions"], [list(key)])
            elsewhere = ["GPU-00000000-00ff", "synthetic"]

            def n(folder, *sessions):
                d = {"value": 1.0, "noise": 0.0, "better": "higher", "sessions": [list(x) for x in sessions]}
                return dict(d, folder=folder) if folder else d
            found = [("x", 1, "a", "wins", "b", "a", "b")]

            def verdict_findings(numbers):
                return [b for b in self.check_report.one_session(pv, numbers, found, [key])[0] if b.startswith("x:")]
            ok = {"a": n("othergpu", elsewhere), "b": n("othergpu", elsewhere)}
            self.assertEqual(verdict_findings(ok), [])
            self.assertTrue(verdict_findings(dict(ok, b=n("othergpu", elsewhere, key))))    # two sessions
            self.assertTrue(verdict_findings({"a": n(None, elsewhere), "b": n(None, elsewhere)}))   # not named
        finally:
            shutil.rmtree(base)


if __name__ == "__main__":
    unittest.main(verbosity=1)
