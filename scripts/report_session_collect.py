#!/usr/bin/env python3
"""Copies one report session (scripts/gpu_report_session.sh's output) into
results/<gpu>/ and brings results/manifest.json and results/README.md along.

    scripts/report_session_collect.py OUT [OUT...] [--root DIR] [--dry-run]

OUT: each call's output: a folder holding report-session-PART.tar.gz
archives (the device call's returned files), an archive itself, or an
unpacked WORK folder.
Contract:
  - the rows must name one GPU folder, one clean commit and, each, their GPU
    (else exit 1, nothing written); they name one GPU UUID when both parts
    ran on one card, else each card is a session of its own (a warning says
    so; report/check_report.py then checks that no thesis table or verdict
    mixes them);
  - every .jsonl under OUT/results/<gpu>/ is appended to the same path under
    results/<gpu>/ (a line already there is not appended twice): the older
    sessions' rows stay, since the report's cross-session noise floor is
    measured from them (report/noise.py), and the report's pool prefers the
    named session's rows (report/pool.py);
  - results/<gpu>/report_session.json is replaced by the sessions found in
    the rows (GPU UUID, commit, first and last row time, rows; the first
    measured first) and the parts run: from then on the report is built
    from them (report/README.md, "One session per table");
  - the GPU's nvidia-smi facts (each OUT/machine.txt, its last part's) are
    appended to results/<gpu>/machines.txt in the CSV form report/front.py
    reads (maximum SM clock, application clocks, whether they are locked);
  - each copied file's manifest line gets the commits its rows now hold; a
    new file gets a line whose "what" is the other GPU folders' line for the
    same path (else the experiment's name) and whose command is the script's;
  - then scripts/readme_tables.py rewrites the documentation's measured
    tables that read these files (docs/findings/: their prose is not
    rewritten: read it against the new numbers) and scripts/results_index.py
    rewrites results/README.md.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMAND = "scripts/gpu_report_session.sh part1 part2 (one GPU session; scripts/report_session_collect.py copies it)"
MACHINE_KEYS = ["name", "uuid", "driver_version", "memory.total", "clocks.max.sm",
                "clocks.applications.graphics", "clocks.default_applications.graphics", "clocks locked"]


# What the session's files that no experiment spec makes hold (the command
# that makes each is in scripts/gpu_report_session.sh).
WHAT = {
    "report_session.json": "the report's session: the GPU UUID, commit and clocks of the one session the report's "
                           "thesis tables and verdicts are built from (report/README.md, 'One session per table')",
    "machines.txt": "nvidia-smi facts (memory, maximum SM clock, application clocks, whether they are locked) of the "
                    "GPUs the rows name",
    "estimators/manix-depths.jsonl": "manix: the configs of the committed manix-depths table measured again whole "
                                     "(with the roofline probes) and cut after the first flight (--max-depth 2, 3)",
    "async/smoke-winners.jsonl": "smoke: the two committed winners (every estimator, flights=sync only) measured "
                                 "again side by side with the roofline probes",
}


def experiment_titles(root):
    """{output path relative to results/<gpu>/: "title (experiment NAME)"} of the specs."""
    sys.path.insert(0, os.path.join(root, "experiments"))
    import vptexp as vx
    out = {}
    for name, sp in vx.load_specs(os.path.join(root, "experiments")).items():
        rel = sp.output + ".jsonl"
        out[rel] = (out[rel] + "; " if rel in out else "") + "%s (experiment %s)" % (sp.get("title") or name, name)
    return out


def rows_of(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def commits_of(rows):
    return sorted({r["commit"] for r in rows if isinstance(r.get("commit"), str) and r.get("kind") != "run"})


def machine_block(machine_txt):
    """The last part's facts of OUT/machine.txt as a machines.txt block:
    a date line, a CSV header with units and one data line."""
    facts, date = {}, None
    with open(machine_txt, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== part "):
                facts = {}
                date = line.split("date: ", 1)[-1]
            elif ": " in line and line.split(": ", 1)[0] in MACHINE_KEYS:
                k, v = line.split(": ", 1)
                facts[k] = v.replace(",", ";").strip()
    if not facts.get("uuid", "").startswith("GPU-"):
        return None
    head, vals = [], []
    for k in MACHINE_KEYS:
        v = facts.get(k, "?")
        unit = v.split()[-1] if v.split() and v.split()[-1] in ("MHz", "MiB") else None
        head.append("%s [%s]" % (k, unit) if unit else k)
        vals.append(v)
    return "date: %s\n%s\n%s\nsource: scripts/gpu_report_session.sh\n" % (date, ", ".join(head), ", ".join(vals))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="+", help="the $OUT of each scripts/gpu_report_session.sh call")
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="vpt-collect-")
    try:
        return collect(a, unpack(a.out, tmp))
    finally:
        shutil.rmtree(tmp)


def unpack(outs, tmp):
    """[folder] holding results/<gpu>/: each OUT's report-session-*.tar.gz
    unpacked into tmp (an archive may also be named itself); a folder
    without archives is taken as it is."""
    out = []
    for o in outs:
        archives = [o] if o.endswith(".tar.gz") else sorted(glob.glob(os.path.join(o, "report-session-*.tar.gz")))
        if not archives:
            out.append(o)
        for t in archives:
            d = os.path.join(tmp, str(len(out)))
            os.makedirs(d)
            with tarfile.open(t) as tf:
                try:
                    tf.extractall(d, filter="data")
                except TypeError:   # a Python without extraction filters
                    tf.extractall(d)
            out.append(d)
    return out


def collect(a, srcs_in):
    """Copies the folders' sessions (see the module's docstring)."""
    gpus = sorted({os.path.basename(os.path.dirname(p)) for d in srcs_in
                   for p in glob.glob(os.path.join(d, "results", "*", "report_session.json"))})
    if len(gpus) != 1:
        print("collect: the outputs name GPU folders %s: expected one" % (gpus or "none"), file=sys.stderr)
        return 1
    gpu = gpus[0]
    srcs = [(d, os.path.join(d, "results", gpu)) for d in srcs_in if os.path.isdir(os.path.join(d, "results", gpu))]
    # the sessions, from the rows themselves: (uuid, commit) -> first, last, rows
    found = {}
    for _, src in srcs:
        for p in glob.glob(os.path.join(src, "**", "*.jsonl"), recursive=True):
            for r in rows_of(p):
                if r.get("kind") not in ("result", "roofline", "profile", "cpu_reference"):
                    continue
                g = r.get("gpu") if isinstance(r.get("gpu"), dict) else r.get("host_gpu")
                k = ((g or {}).get("uuid") if isinstance(g, dict) else None, r.get("commit"))
                rec = found.setdefault(k, {"uuid": k[0], "commit": k[1], "first": None, "last": None, "rows": 0,
                                           "name": (g or {}).get("name") if isinstance(g, dict) else None})
                rec["rows"] += 1
                t = r.get("time")
                if isinstance(t, str):
                    rec["first"] = min(x for x in (rec["first"], t) if x)
                    rec["last"] = max(x for x in (rec["last"], t) if x)
    commits = sorted({c for _, c in found})
    if len(commits) != 1 or not commits[0] or commits[0].endswith("-dirty") or any(u is None for u, _ in found):
        print("collect: the rows name commits %s and GPUs %s: expected one clean commit and rows that name "
              "their GPU" % (commits, sorted(str(u) for u, _ in found)), file=sys.stderr)
        return 1
    sessions = sorted(found.values(), key=lambda x: x["first"] or "")
    if len(sessions) > 1:
        print("collect: warning: the rows come from %d GPUs (%s): the device calls landed on different cards; "
              "report/check_report.py checks that no thesis table or verdict mixes them"
              % (len(sessions), ", ".join(x["uuid"] for x in sessions)), file=sys.stderr)
    parts = []
    for d, src in srcs:
        p = os.path.join(src, "report_session.json")
        with open(p, encoding="utf-8") as f:
            parts += json.load(f).get("parts") or []
    sess = {"schema": "vptune.session/2", "gpu_dir": gpu, "commit": commits[0], "sessions": sessions,
            "parts": list(dict.fromkeys(parts)), "last": max(x["last"] or "" for x in sessions)}
    dest = os.path.join(a.root, "results", gpu)
    mpath = os.path.join(a.root, "results", "manifest.json")
    with open(mpath, encoding="utf-8") as f:
        manifest = json.load(f)
    titles = experiment_titles(a.root)
    copied = []
    for p, src in sorted((p, src) for _, src in srcs
                         for p in glob.glob(os.path.join(src, "**", "*.jsonl"), recursive=True)):
        rel = os.path.relpath(p, src)
        if rel.endswith(".d") or "/" in rel and rel.split("/")[0].endswith(".d"):
            continue   # a tuner run's working cache (experiments/run), not a results file
        target = os.path.join(dest, rel)
        have = set()
        if os.path.exists(target):
            with open(target, encoding="utf-8") as f:
                have = {line.rstrip("\n") for line in f}
        with open(p, encoding="utf-8") as f:
            new = [line.rstrip("\n") for line in f if line.strip() and line.rstrip("\n") not in have]
        print("collect: results/%s/%s: %d rows appended" % (gpu, rel, len(new)))
        if rel not in copied:
            copied.append(rel)
        if a.dry_run or not new:
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in new))
    blocks = [machine_block(os.path.join(out, "machine.txt")) for out, _ in srcs
              if os.path.exists(os.path.join(out, "machine.txt"))]
    block = "".join("\n" + b for b in dict.fromkeys(b for b in blocks if b))
    if not a.dry_run:
        with open(os.path.join(dest, "report_session.json"), "w", encoding="utf-8") as f:
            json.dump(sess, f, indent=1)
            f.write("\n")
        if block:
            with open(os.path.join(dest, "machines.txt"), "a", encoding="utf-8") as f:
                f.write(block)
    for rel in copied + ["report_session.json"] + (["machines.txt"] if block else []):
        key = "%s/%s" % (gpu, rel)
        target = os.path.join(dest, rel)
        rec = manifest.get(key)
        if rec is None:
            rec = manifest[key] = {"what": WHAT.get(rel) or titles.get(rel) or rel, "command": COMMAND,
                                   "commit": None}
        elif COMMAND not in rec["command"]:
            rec["command"] += "; then " + COMMAND
        if rel.endswith(".jsonl") and os.path.exists(target):
            cs = commits_of(rows_of(target))
            rec["commit"] = cs[0] if len(cs) == 1 else cs
        elif rel == "report_session.json":
            rec["commit"] = sess["commit"]
    if a.dry_run:
        print("collect: dry run, nothing written")
        return 0
    with open(mpath, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    rc = subprocess.call([sys.executable, os.path.join(a.root, "scripts", "readme_tables.py")], cwd=a.root)
    rc = subprocess.call([sys.executable, os.path.join(a.root, "scripts", "results_index.py")], cwd=a.root) or rc
    print("collect: session%s %s at %s copied into results/%s/ (rebuild: make report)" % (
        "s" if len(sessions) > 1 else "", ", ".join(x["uuid"] for x in sessions), sess["commit"], gpu))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
