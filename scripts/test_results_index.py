#!/usr/bin/env python3
"""Tests of scripts/results_index.py: the committed tree passes its check,
and each rule fails on a scratch copy of the repository broken in one way
(never on results/ itself).

    python3 scripts/test_results_index.py      (run by make test)
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import results_index as ri  # noqa: E402


def copy_repo(dst):
    """The parts of the repository the check reads."""
    for d in ("results", "scripts", "report", "experiments", "docs", "tests"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(dst, d),
                        ignore=shutil.ignore_patterns("generated", "*.pdf", "fixtures", "__pycache__"))
    shutil.copy(os.path.join(ROOT, "README.md"), dst)


def problems_with(root, words):
    return [p for p in ri.check(root) if all(w in p for w in words)]


class ResultsIndexTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="vpt-results-index-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base)

    def setUp(self):
        self.root = os.path.join(self.base, self.id().split(".")[-1])
        copy_repo(self.root)

    def manifest(self):
        return ri.load_manifest(os.path.join(self.root, "results", "manifest.json"))

    def write_manifest(self, m):
        with open(os.path.join(self.root, "results", "manifest.json"), "w") as f:
            json.dump(m, f, indent=0)

    def test_committed_tree_passes(self):
        self.assertEqual(ri.check(ROOT), [])

    def test_unlisted_and_unread_files_fail(self):
        with open(os.path.join(self.root, "results", "h100", "stray.jsonl"), "w") as f:
            f.write('{"kind":"result","commit":"abc1234","gpu":{"name":"NVIDIA H100 80GB HBM3"}}\n')
        self.assertTrue(problems_with(self.root, ["h100/stray.jsonl", "not in results/manifest.json"]))
        m = self.manifest()
        m["h100/stray.jsonl"] = {"what": "a stray run", "command": "bench", "commit": "abc1234"}
        self.write_manifest(m)
        self.assertTrue(problems_with(self.root, ["h100/stray.jsonl", "read by nothing"]))
        self.assertFalse(problems_with(self.root, ["h100/stray.jsonl", "not in results/manifest.json"]))

    def test_report_session_collect(self):
        """scripts/report_session_collect.py on a TEST FIXTURE (made-up rows of
        two cards at one commit, packed as the device call returns them):
        the files land in results/<gpu>/, the index stays in order, the
        sessions are named; rows of two commits are refused."""
        import subprocess
        import tarfile
        gpu = {"name": "NVIDIA H200", "uuid": "GPU-fixture-a"}
        out = os.path.join(self.root, "device-out")
        # part2's file lands new, as on a folder no session has measured yet
        tiling = os.path.join(self.root, "results", "h200", "t42_tiling.jsonl")
        if os.path.exists(tiling):
            os.unlink(tiling)
            m = self.manifest()
            m.pop("h200/t42_tiling.jsonl", None)
            self.write_manifest(m)
        for part, uuid, name in (("part1", "GPU-fixture-a", "thesis_schedules"), ("part2", "GPU-fixture-b",
                                                                                 "t42_tiling")):
            w = os.path.join(self.root, "work-" + part)
            os.makedirs(os.path.join(w, "results", "h200"))
            row = {"kind": "result", "schema": "vptune.result/1", "commit": "fixture0commit",
                   "gpu": dict(gpu, uuid=uuid), "time": "2026-01-0%sT00:00:00Z" % part[-1], "scene": "manix",
                   "config": "naiveSK", "status": "ok", "workload": {"width": 4}, "metrics": {"time_ms": 1.0}}
            with open(os.path.join(w, "results", "h200", name + ".jsonl"), "w") as f:
                f.write(json.dumps(row) + "\n")
            with open(os.path.join(w, "results", "h200", "report_session.json"), "w") as f:
                json.dump({"uuid": uuid, "commit": "fixture0commit", "parts": [part]}, f)
            with open(os.path.join(w, "machine.txt"), "w") as f:
                f.write("== part %s date: 2026-01-01T00:00:00Z\nname: NVIDIA H200\nuuid: %s\n"
                        "clocks.max.sm: 1980 MHz\nclocks locked: no\n" % (part, uuid))
            os.makedirs(out, exist_ok=True)
            with tarfile.open(os.path.join(out, "report-session-%s.tar.gz" % part), "w:gz") as tf:
                tf.add(w, arcname=".")
        collect = [sys.executable, os.path.join(self.root, "scripts", "report_session_collect.py"), out,
                   "--root", self.root]
        p = subprocess.run(collect, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("landed on different cards", p.stderr)
        self.assertEqual(ri.check(self.root), [])
        tables = subprocess.run([sys.executable, os.path.join(self.root, "scripts", "readme_tables.py"), "--check"],
                                capture_output=True, text=True, cwd=self.root)
        self.assertEqual(tables.returncode, 0, tables.stdout + tables.stderr)
        with open(os.path.join(self.root, "results", "h200", "report_session.json")) as f:
            sess = json.load(f)
        self.assertEqual([(x["uuid"], x["commit"]) for x in sess["sessions"]],
                         [("GPU-fixture-a", "fixture0commit"), ("GPU-fixture-b", "fixture0commit")])
        self.assertEqual(self.manifest()["h200/t42_tiling.jsonl"]["commit"], "fixture0commit")
        with open(os.path.join(self.root, "results", "h200", "machines.txt")) as f:
            self.assertIn("NVIDIA H200, GPU-fixture-b", f.read())
        p = subprocess.run(collect, capture_output=True, text=True)   # again: nothing appended twice
        self.assertIn("t42_tiling.jsonl: 0 rows appended", p.stdout)
        # a second commit in the rows: refused
        w = os.path.join(self.root, "work-part2")
        with open(os.path.join(w, "results", "h200", "t42_tiling.jsonl"), "a") as f:
            f.write(json.dumps({"kind": "result", "commit": "other0commit", "gpu": gpu, "time": "x"}) + "\n")
        p = subprocess.run(collect[:2] + [w, "--root", self.root, "--dry-run"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("expected one clean commit", p.stderr)

    def test_manifest_line_without_file_fails(self):
        os.unlink(os.path.join(self.root, "results", "h100", "transfer.jsonl"))
        self.assertTrue(problems_with(self.root, ["h100/transfer.jsonl names no file"]))

    def test_wrong_commit_fails(self):
        m = self.manifest()
        m["h100/transfer.jsonl"]["commit"] = "0000000"
        self.write_manifest(m)
        self.assertTrue(problems_with(self.root, ["h100/transfer.jsonl says commit 0000000"]))

    def test_row_of_another_gpu_fails(self):
        path = os.path.join(self.root, "results", "h200", "thesis_schedules.jsonl")
        with open(path) as f:
            row = json.loads(f.readline())
        row["gpu"]["name"] = "NVIDIA H100 80GB HBM3"
        with open(path, "a") as f:
            f.write(json.dumps(row) + "\n")
        self.assertTrue(problems_with(self.root, ["h200/thesis_schedules.jsonl", "whose folder is h100/"]))

    def test_table_mixing_commits_silently_fails(self):
        # the estimator tunes table reads one file per scene: one of them at
        # a commit the table's text does not name
        path = os.path.join(self.root, "results", "h100", "estimators", "smoke-winners.jsonl")
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        for r in rows:
            r["commit"] = "1234567abcde"
        with open(path, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))
        m = self.manifest()
        m["h100/estimators/smoke-winners.jsonl"]["commit"] = "1234567abcde"
        self.write_manifest(m)
        self.assertTrue(problems_with(self.root, ["table estimator_tunes (h100) in docs/findings/estimators.md", "does not name 1234567abcde"]))

    def test_readme_table_shows_a_files_newest_commit(self):
        rt = ri.load_module("readme_tables", os.path.join(ROOT, "scripts", "readme_tables.py"))
        path = os.path.join(self.root, "two.jsonl")
        with open(path, "w") as f:
            for commit, t in (("old", "2026-01-01T00:00:00Z"), ("new", "2026-02-01T00:00:00Z"), ("old", "2026-01-02T00:00:00Z")):
                f.write(json.dumps({"kind": "result", "commit": commit, "time": t}) + "\n")
            f.write(json.dumps({"kind": "run", "commit": "old"}) + "\n")
        self.assertEqual([r["commit"] for r in rt.rows(path)], ["new", "old"])
        self.assertEqual([r["kind"] for r in rt.rows(path)], ["result", "run"])

    def test_docs_page_tables_are_generated_and_checked(self):
        # a block on any page under docs/ (here a new nested one) is filled
        # from results/, and a hand edit inside it is caught by the check
        rt = ri.load_module("readme_tables_scratch", os.path.join(self.root, "scripts", "readme_tables.py"))
        rt.ROOT = self.root
        page = os.path.join(self.root, "docs", "findings", "deeper", "skip.md")
        os.makedirs(os.path.dirname(page))
        with open(page, "w") as f:
            f.write("# a page\n\n<!-- BEGIN estimator_skip -->\ntyped by hand\n<!-- END estimator_skip -->\n")
        self.assertIn("docs/findings/deeper/skip.md", rt.pages(self.root))
        changed, _ = rt.stale("h100", self.root)
        self.assertIn("docs/findings/deeper/skip.md", changed)
        filled = changed["docs/findings/deeper/skip.md"]
        self.assertIn("results/h100/estimators/skip.jsonl", filled)
        self.assertNotIn("typed by hand", filled)
        with open(page, "w") as f:
            f.write(filled)
        changed, _ = rt.stale("h100", self.root)
        self.assertNotIn("docs/findings/deeper/skip.md", changed)
        row = next(line for line in filled.splitlines() if line.startswith("| manix"))
        with open(page, "w") as f:
            f.write(filled.replace(row, row.replace("|", "| 1", 2).replace("| 1", "|", 1)))
        changed, _ = rt.stale("h100", self.root)
        self.assertIn("docs/findings/deeper/skip.md", changed)

    def test_untraceable_best_fails(self):
        path = os.path.join(self.root, "results", "h100", "best", "ad.json")
        with open(path) as f:
            best = json.load(f)
        best["config"] = "naiveSK-not-in-the-cache"
        with open(path, "w") as f:
            json.dump(best, f)
        self.assertTrue(problems_with(self.root, ["h100/best/ad.json", "not an ok evaluation"]))

    def test_uncited_archive_entry_fails(self):
        d = os.path.join(self.root, "results", "h100", "archive")
        with open(os.path.join(d, "one-off.log"), "w") as f:
            f.write("a log nobody cites\n")
        self.assertTrue(problems_with(self.root, ["h100/archive/one-off.log", "cited by nothing"]))

    def test_stale_index_fails(self):
        with open(os.path.join(self.root, "results", "README.md"), "a") as f:
            f.write("hand edit\n")
        self.assertTrue(problems_with(self.root, ["results/README.md differs"]))

    def test_declared_readme_input_missing_fails(self):
        os.unlink(os.path.join(self.root, "results", "h200", "best_vs_roofline.jsonl"))
        self.assertTrue(problems_with(self.root, ["table roofline (h200) in docs/findings/thesis-schedules.md", "matches no file"]))


if __name__ == "__main__":
    unittest.main(verbosity=1)
