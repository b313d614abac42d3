#!/usr/bin/env python3
"""Unit tests of experiments/vptexp.py and experiments/run (no GPU, no build
needed: the runner's GPU-facing paths are exercised through --dry-run with
--gpu and --commit given). Run: python3 experiments/test_experiments.py
(tests/test_experiments.c runs it as part of `make test`)."""

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import vptexp as vx  # noqa: E402

RUN = os.path.join(HERE, "run")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def result_row(scene, config, status="ok", commit="abc", time="2026-01-01T00:00:00Z", mrays=1.0, **wl):
    w = {"width": 64, "height": 32, "spp": 4, "seed": 1, "max_depth": 0, "rr_depth": -1}
    w.update(wl)
    return {"kind": "result", "schema": "vptune.result/1", "commit": commit, "time": time, "scene": scene,
            "workload": w, "config": vx.canonical(config), "schedule": vx.schedule_name(config), "status": status,
            "reason": "", "metrics": {"mrays_per_s": mrays}}


class ConfigTest(unittest.TestCase):
    def test_thesis_names_canonical(self):
        self.assertEqual(vx.canonical("naiveSK"), "regen=none,reorder=none,kernels=single,maxrregcount=0,ppt=1,"
                                                  "block=256,grid=0,threshold=0,sortkey=position,lookahead=1")
        self.assertEqual(vx.canonical("streamingSK,block=128"),
                         "regen=block,reorder=compact,kernels=single,maxrregcount=0,ppt=1,block=128,grid=0,"
                         "threshold=100,sortkey=position,lookahead=1")
        self.assertEqual(vx.canonical("regenerationSK"), vx.canonical("regenerationSK-thread"))
        for name in vx.SCHEDULE_NAMES:
            c = vx.parse_config(name)
            self.assertIsNone(vx.check_config(c), name)
            self.assertEqual(vx.schedule_name(c), name)

    def test_errors(self):
        for bad in ("", "block=33", "foo=1", "block=256,naiveSK", "block=256,block=64", "ppt=3", "naive SK",
                    "maxrregcount=23", "block=0x100"):
            with self.assertRaises(vx.ConfigError, msg=bad):
                vx.parse_config(bad)

    def test_rules(self):
        self.assertIn("register file", vx.check_config(vx.parse_config("naiveSK,block=1024,maxrregcount=128")))
        self.assertIn("regen=block", vx.check_config(vx.parse_config("regen=warp,reorder=compact")))
        self.assertIsNone(vx.check_config(vx.parse_config("naiveSK,block=1024,maxrregcount=64")))

    def test_describe(self):
        self.assertEqual(vx.describe_config(vx.canonical("streamingSK,maxrregcount=64")),
                         "streamingSK, maxrregcount=64")
        self.assertEqual(vx.describe_config(vx.canonical("sortingSK")), "sortingSK")


class SpecTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def spec(self, name, text):
        p = os.path.join(self.dir, name + ".spec")
        write(p, text)
        return p

    def test_all_committed_specs_load(self):
        specs = vx.load_specs(HERE)
        self.assertGreaterEqual(len(specs), 15)
        tables = {s.get("thesis_table") for s in specs.values()}
        for t in ("4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "6.1", "6.2", "6.3"):
            self.assertIn(t, tables)
        for s in specs.values():
            for sc in s.scenes:
                for w in vx.workloads(s, sc):
                    self.assertEqual(set(w), set(vx.WORKLOAD_KEYS))
        order = vx.run_order(specs)
        self.assertLess(order.index("occupancy"), order.index("transfer"))

    def test_space_product_and_dropped(self):
        p = self.spec("x", "name = x\ntitle = X\nscenes = manix\nworkload = width=8 height=8 spp=1 seed=1\n"
                           "space = schedule=naiveSK,streamingSK; block=512,1024; maxrregcount=0,128\n")
        configs, dropped = vx.static_configs(vx.load_spec(p))
        self.assertEqual(len(configs) + len(dropped), 8)
        self.assertEqual(len(dropped), 2)   # 128 registers x 1024 threads, for both schedules
        self.assertTrue(all("register file" in why for _, why in dropped))

    def test_sweep_and_overrides(self):
        p = self.spec("y", "name = y\ntitle = Y\nscenes = manix bucky\nconfigs = naiveSK\n"
                           "workload = width=8 height=8 spp=1 seed=1\nworkload.bucky = spp=3\nsweep = max_depth=1,2\n")
        s = vx.load_spec(p)
        self.assertEqual([w["max_depth"] for w in vx.workloads(s, "manix")], [1, 2])
        self.assertEqual(vx.workloads(s, "bucky")[0]["spp"], 3)
        self.assertEqual(vx.workloads(s, "manix")[0]["rr_depth"], -1)

    def test_bad_specs(self):
        cases = {
            "unknown key": "name = a\ntitle = A\nscenes = manix\nconfigs = naiveSK\nworkload = width=1 height=1 "
                           "spp=1 seed=1\ncolour = red\n",
            "differs from the file name": "name = b\ntitle = A\nscenes = manix\nconfigs = naiveSK\n"
                                          "workload = width=1 height=1 spp=1 seed=1\n",
            "lacks spp": "name = a\ntitle = A\nscenes = manix\nconfigs = naiveSK\nworkload = width=1 height=1 seed=1\n",
            "breaks a rule": "name = a\ntitle = A\nscenes = manix\nconfigs = regen=warp,reorder=compact\n"
                             "workload = width=1 height=1 spp=1 seed=1\n",
            "needs a 'reason'": "name = a\ntitle = A\nstatus = not_implemented\nscenes = manix\nconfigs = naiveSK\n"
                                "workload = width=1 height=1 spp=1 seed=1\n",
            "not in 'scenes'": "name = a\ntitle = A\nscenes = manix\nconfigs = naiveSK\n"
                               "workload = width=1 height=1 spp=1 seed=1\nworkload.bucky = spp=2\n",
        }
        for why, text in cases.items():
            p = self.spec("a", text)
            with self.assertRaises(vx.SpecError, msg=why) as cm:
                vx.load_spec(p)
            self.assertIn(why, str(cm.exception))


class RowsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "r", "x.jsonl")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_truncated_last_line_is_skipped_then_cut(self):
        os.makedirs(os.path.dirname(self.path))
        with open(self.path, "w") as f:
            f.write(json.dumps({"kind": "result", "a": 1}) + "\n" + '{"kind": "resu')
        notes = []
        rows = vx.read_rows(self.path, notes.append)
        self.assertEqual(len(rows), 1)
        self.assertTrue(notes)
        stderr = sys.stderr
        sys.stderr = io.StringIO()
        try:
            vx.append_row(self.path, {"kind": "run", "b": 2})
        finally:
            sys.stderr = stderr
        rows = vx.read_rows(self.path)
        self.assertEqual([r.get("a", r.get("b")) for r in rows], [1, 2])
        with open(self.path) as f:
            self.assertTrue(f.read().endswith("\n"))

    def test_old_config_text_is_canonicalized(self):
        # rows written before 'lookahead' existed name the same kernel
        old = ("regen=block,reorder=compact,kernels=single,maxrregcount=0,ppt=1,block=256,grid=0,threshold=100,"
               "sortkey=position")
        write(self.path, json.dumps({"kind": "result", "config": old}) + "\n")
        self.assertEqual(vx.read_rows(self.path)[0]["config"], vx.canonical("streamingSK"))

    def test_garbage_line_skipped(self):
        write(self.path, '{"a":1}\nnot json\n[1,2]\n{"a":2}\n')
        notes = []
        self.assertEqual([r["a"] for r in vx.read_rows(self.path, notes.append)], [1, 2])
        self.assertEqual(len(notes), 2)

    def test_newest_and_best(self):
        rows = [result_row("manix", "naiveSK", mrays=5, time="2026-01-01T00:00:00Z"),
                result_row("manix", "naiveSK", mrays=3, time="2026-01-02T00:00:00Z"),
                result_row("manix", "streamingSK", mrays=4),
                result_row("manix", "sortingSK", mrays=9, status="invalid_output"),
                result_row("bucky", "naiveSK", mrays=1)]
        best = vx.best_configs(rows)
        self.assertEqual(best["manix"]["config"], vx.canonical("streamingSK"))   # newest naiveSK row is 3
        self.assertEqual(best["bucky"]["metrics"]["mrays_per_s"], 1)


class RunnerTest(unittest.TestCase):
    """experiments/run in a scratch repository: specs, results, no GPU."""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.root, "experiments"))
        write(os.path.join(self.root, "experiments", "small.spec"),
              "name = small\ntitle = Small\nscenes = manix bucky\nconfigs = naiveSK streamingSK\n"
              "workload = width=64 height=32 spp=4 seed=1\nroofline = yes\n")
        write(os.path.join(self.root, "experiments", "later.spec"),
              "name = later\ntitle = Later\nscenes = manix\nconfigs_from = best:small\n"
              "workload = width=64 height=32 spp=4 seed=1\n")
        write(os.path.join(self.root, "experiments", "tiles.spec"),
              "name = tiles\ntitle = Tiles\nstatus = not_implemented\nreason = no tiles\nscenes = manix\n"
              "configs = naiveSK\nworkload = width=64 height=32 spp=4 seed=1\n")
        self.out = os.path.join(self.root, "results", "h100", "small.jsonl")

    def tearDown(self):
        shutil.rmtree(self.root)

    def run_(self, *args):
        p = subprocess.run([sys.executable, RUN, "--root", self.root, "--bin", os.path.join(self.root, "bin")]
                           + list(args), capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def test_list(self):
        rc, out, err = self.run_("--list")
        self.assertEqual(rc, 0, err)
        self.assertIn("small", out)
        self.assertIn("not implemented", out)
        self.assertLess(out.index("small"), out.index("later"))

    def test_unknown_and_unimplemented(self):
        self.assertEqual(self.run_("nosuch")[0], 2)
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "abc", "tiles")
        self.assertEqual(rc, 1)
        self.assertIn("not implemented", err)

    def test_dry_run_resumes(self):
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "abc", "small")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.count("bin/bench --scene"), 2)
        self.assertIn("--roofline", out)
        for r in (result_row("manix", "naiveSK"), result_row("manix", "streamingSK", status="compile"),
                  {"kind": "roofline", "commit": "abc", "scene": "manix", "rays": "random"},
                  {"kind": "roofline", "commit": "abc", "scene": "manix", "rays": "coherent"},
                  result_row("bucky", "naiveSK", status="runtime"),
                  result_row("bucky", "streamingSK", spp=8)):
            vx.append_row(self.out, r)
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "abc", "small")
        self.assertEqual(rc, 0, err)
        self.assertIn("manix, 64x32, 4 spp, seed 1: all 2 configs done", out)
        # bucky: the runtime failure is retried, the other workload does not count
        self.assertIn("bucky, 64x32, 4 spp, seed 1: 2 of 2 configs pending, roofline", out)
        self.assertEqual(out.count("bin/bench --scene"), 1)
        # another commit: nothing counts, unless --any-commit
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "def", "small")
        self.assertEqual(out.count("bin/bench --scene"), 2)
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "def", "--any-commit", "small")
        self.assertEqual(out.count("bin/bench --scene"), 1)

    def test_configs_from_best(self):
        vx.append_row(self.out, result_row("manix", "streamingSK", mrays=7))
        vx.append_row(self.out, result_row("manix", "naiveSK", mrays=2))
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "abc", "later")
        self.assertEqual(rc, 0, err)
        self.assertIn("      streamingSK\n", out)
        self.assertNotIn("      naiveSK\n", out)

    def test_configs_from_tuned(self):
        write(os.path.join(self.root, "experiments", "tunedvs.spec"),
              "name = tunedvs\ntitle = Tuned\nscenes = manix bucky\nconfigs_from = tuned\nconfigs = naiveSK\n"
              "workload = width=64 height=32 spp=4 seed=1\n")
        write(os.path.join(self.root, "results", "h200", "best", "manix.json"),
              json.dumps({"config": "regenerationSK-warp,threshold=50", "scene": "manix"}))
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "abc", "tunedvs")
        self.assertEqual(rc, 0, err)
        self.assertIn("manix: no results/h100/best/manix.json; measuring h200's tuned config", out)
        self.assertIn("      regenerationSK-warp, threshold=50\n", out)
        self.assertIn("bucky: no saved tune in any results/*/best/", out)
        write(os.path.join(self.root, "results", "h100", "best", "manix.json"),
              json.dumps({"config": "streamingSK", "scene": "manix"}))
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "abc", "tunedvs")
        self.assertIn("      streamingSK\n", out)
        self.assertNotIn("regenerationSK-warp", out)

    def test_output_folder_and_pool(self):
        write(os.path.join(self.root, "experiments", "est.spec"),
              "name = est\ntitle = E\nscenes = manix\nconfigs = naiveSK\noutput = est/table\npool = no\n"
              "workload = width=64 height=32 spp=4 seed=1\n")
        specs = vx.load_specs(os.path.join(self.root, "experiments"))
        self.assertFalse(specs["est"].pooled)
        self.assertTrue(specs["small"].pooled)
        rc, out, err = self.run_("--dry-run", "--gpu", "h100", "--commit", "abc", "est")
        self.assertIn("-o %s" % os.path.join(self.root, "results", "h100", "est", "table.jsonl"), out)
        for bad in ("output = ../x", "output = a/b/c", "pool = maybe"):
            write(os.path.join(self.root, "experiments", "est.spec"),
                  "name = est\ntitle = E\nscenes = manix\nconfigs = naiveSK\n%s\n"
                  "workload = width=64 height=32 spp=4 seed=1\n" % bad)
            with self.assertRaises(vx.SpecError, msg=bad):
                vx.load_specs(os.path.join(self.root, "experiments"))

    def test_deadline_stops_a_running_tool_and_resumes(self):
        # a bench that writes one row, then hangs in a child process
        bench = os.path.join(self.root, "bin", "bench")
        write(bench, "#!/bin/sh\nout=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\nmkdir -p \"$(dirname \"$out\")\"\n"
                     "echo '{\"kind\":\"roofline\",\"commit\":\"abc\",\"scene\":\"manix\",\"rays\":\"random\"}' >> \"$out\"\n"
                     "sleep 60 &\necho $! > \"$PIDFILE\"\nwait\n")
        os.chmod(bench, 0o755)
        pidfile = os.path.join(self.root, "child.pid")
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, RUN, "--root", self.root, "--bin", os.path.join(self.root, "bin"),
                            "--gpu", "h100", "--commit", "abc", "--deadline", "2", "small"],
                           capture_output=True, text=True, env=dict(os.environ, PIDFILE=pidfile))
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertIn("stopped at the deadline", p.stderr)
        with open(pidfile) as f:
            child = int(f.read())
        for _ in range(50):     # the hanging child went with its group
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            self.fail("the tool's child %d survived the deadline" % child)
        self.assertEqual(len([r for r in vx.read_rows(self.out) if r.get("kind") == "roofline"]), 1)
        # nothing starts once the deadline has passed
        p = subprocess.run([sys.executable, RUN, "--root", self.root, "--bin", os.path.join(self.root, "bin"),
                            "--gpu", "h100", "--commit", "abc", "--deadline", "0", "small"],
                           capture_output=True, text=True, env=dict(os.environ, PIDFILE=pidfile))
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertNotIn("$ ", p.stdout)

    def test_parts_cover_every_experiment(self):
        """experiments.mk's parts run every implemented experiment of this
        checkout, each in one part (occupancy and estimators: one part per
        group of scenes, together every scene of the spec)."""
        with open(os.path.join(HERE, "experiments.mk")) as f:
            text = f.read().replace("\\\n", " ")
        parts = {m.group(1): m.group(2).split() for m in re.finditer(r"^PART_(\w+)\s*:=\s*(.*)$", text, re.M)}
        listed = re.search(r"^EXPERIMENT_PARTS\s*:=\s*(.*)$", text, re.M).group(1).split()
        self.assertEqual(sorted(listed), sorted(parts))
        specs = vx.load_specs(HERE)
        covered = {}
        for words in parts.values():
            scenes = [words[i + 1] for i, w in enumerate(words) if w == "--scene"]
            for w in words:
                if w in specs:
                    covered.setdefault(w, []).extend(scenes or specs[w].scenes)
        for name, sp in specs.items():
            if sp.implemented:
                self.assertIn(name, covered, "experiment %s is in no part" % name)
                self.assertEqual(sorted(covered[name]), sorted(sp.scenes), name)

    def test_missing_bench_is_an_error_outside_dry_run(self):
        rc, out, err = self.run_("small")
        self.assertEqual(rc, 1)
        self.assertIn("bench", err)


@unittest.skipUnless(os.access(os.path.join(ROOT, "bin", "render"), os.X_OK), "bin/render not built")
class CpuReferenceTest(unittest.TestCase):
    """The CPU reference path for real: bin/render --cpu needs no GPU."""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        write(os.path.join(self.root, "experiments", "cpu.spec"),
              "name = cpu\ntitle = CPU\nscenes = bucky\nconfigs = naiveSK\n"
              "workload = width=16 height=8 spp=2 seed=1\ncpu_reference = yes\ncpu_workload = spp=1\n"
              "cpu_args = --threads 2\n")
        self.out = os.path.join(self.root, "results", "g", "cpu.jsonl")
        # the GPU part is already measured, so only the CPU part runs
        vx.append_row(self.out, result_row("bucky", "naiveSK", width=16, height=8, spp=2))

    def tearDown(self):
        shutil.rmtree(self.root)

    def test_cpu_row_and_resume(self):
        cmd = [sys.executable, RUN, "--root", self.root, "--bin", os.path.join(ROOT, "bin"), "--gpu", "g",
               "--commit", "abc", "cpu"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = [r for r in vx.read_rows(self.out) if r.get("kind") == "cpu_reference"]
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual(r["scene"], "bucky")
        self.assertEqual(r["commit"], "abc")
        self.assertEqual(r["workload"]["spp"], 1)
        self.assertGreater(r["metrics"]["mrays_per_s"], 0)
        self.assertGreater(r["metrics"]["time_ms"], 0)
        p = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("CPU reference at 16x8, 1 spp, seed 1 done", p.stdout)
        self.assertEqual(len([r for r in vx.read_rows(self.out) if r.get("kind") == "cpu_reference"]), 1)


class NcuCsvTest(unittest.TestCase):
    def test_parse(self):
        sys.path.insert(0, HERE)
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.SourceFileLoader("vpt_run", RUN)
        spec = importlib.util.spec_from_loader("vpt_run", loader)
        run = importlib.util.module_from_spec(spec)
        loader.exec_module(run)
        text = ('==PROF== Connected to process 42\n'
                '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
                '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
                '"0","42","render","127.0.0.1","vpt_render","1","7","(256, 1, 1)","(528, 1, 1)","0","9.0",'
                '"Command line profiler metrics","l1tex__t_sectors_pipe_tex_mem_texture.sum","sector","1,234,567"\n'
                '"0","42","render","127.0.0.1","vpt_render","1","7","(256, 1, 1)","(528, 1, 1)","0","9.0",'
                '"Command line profiler metrics","lts__t_sector_hit_rate.pct","%","87.5"\n')
        vals, kernels, launches = run.parse_ncu_csv(text, ["l1tex__t_sectors_pipe_tex_mem_texture.sum",
                                                            "lts__t_sector_hit_rate.pct"])
        self.assertEqual(vals["l1tex__t_sectors_pipe_tex_mem_texture.sum"], 1234567.0)
        self.assertEqual(vals["lts__t_sector_hit_rate.pct"], 87.5)
        self.assertEqual(kernels, ["vpt_render"])
        self.assertEqual(launches, 1)


class KtHyperTest(unittest.TestCase):
    """experiments/kt_hyper.py's leave-one-scene-out choice and standard
    error, on a synthetic score table (a unit-test fixture, not a result)."""

    def setUp(self):
        import kt_hyper
        self.kh = kt_hyper

    def test_mean_se(self):
        m, se = self.kh.mean_se([1.0, 2.0, 3.0, 4.0])
        self.assertAlmostEqual(m, 2.5)
        # sample sd sqrt(5/3), over sqrt(4)
        self.assertAlmostEqual(se, (5.0 / 3.0) ** 0.5 / 2.0)
        m, se = self.kh.mean_se([0.7])
        self.assertAlmostEqual(m, 0.7)
        self.assertTrue(se != se)  # nan: one value has no error
        m, se = self.kh.mean_se([0.2, 0.2, 0.2])
        self.assertAlmostEqual(se, 0.0)

    def test_loo_select(self):
        # fixture: two strategies, scenes a, b, c. "x:2" is best on a and b
        # but worst on c; "y:1" is moderate everywhere.
        train = {"x": {"x:1": {"a": 0.1, "b": 0.1, "c": 0.5},
                       "x:2": {"a": 0.9, "b": 0.8, "c": -1.0}},
                 "y": {"y:1": {"a": 0.4, "b": 0.4, "c": 0.4}}}
        sel = self.kh.loo_select(train, ["a", "b", "c"], {"x": ["x:1", "x:2"], "y": ["y:1"]})
        # held out c: chosen on a and b only, so x:2 (its c score unseen)
        self.assertEqual(sel["c"]["choice"]["x"][0], "x:2")
        self.assertAlmostEqual(sel["c"]["choice"]["x"][1], 0.85)
        self.assertEqual(sel["c"]["best"][:2], ("x", "x:2"))
        # held out a: on b and c x:1 (0.3) beats x:2 (-0.1); y (0.4) beats both
        self.assertEqual(sel["a"]["choice"]["x"][0], "x:1")
        self.assertEqual(sel["a"]["best"][:2], ("y", "y:1"))
        self.assertAlmostEqual(sel["a"]["best"][2], 0.4)

    def test_loo_ties_and_missing(self):
        # a tie goes to the earlier grid point (the defaults come first); a
        # point that did not run on every training scene is not chosen
        train = {"x": {"x:1": {"a": 0.5, "b": 0.5, "c": 0.5},
                       "x:2": {"a": 0.5, "b": 0.5, "c": 0.5},
                       "x:3": {"a": 9.0, "b": 9.0}}}
        sel = self.kh.loo_select(train, ["a", "b", "c"], {"x": ["x:1", "x:2", "x:3"]})
        self.assertEqual(sel["c"]["choice"]["x"][0], "x:3")   # ran on a and b: eligible
        self.assertEqual(sel["a"]["choice"]["x"][0], "x:1")   # x:3 missing c; tie -> x:1

    def test_summarize(self):
        rows = {s: {"score_seconds": v, "score_evals": 2 * v, "within_2pct_at_90s": 1.0}
                for s, v in zip((1, 2, 3), (0.1, 0.2, 0.3))}
        out = self.kh.summarize(rows)
        self.assertEqual(out["seeds"], [1, 2, 3])
        self.assertAlmostEqual(out["score_seconds"], 0.2)
        self.assertAlmostEqual(out["se_seconds"], 0.1 / 3 ** 0.5)
        self.assertAlmostEqual(out["se_evals"], 0.2 / 3 ** 0.5)
        self.assertEqual(out["se_within_2pct_at_90s"], 0.0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
