#!/usr/bin/env python3
"""report/check_report.py: checks a built report/report.pdf against results/.

    python3 report/check_report.py [--root DIR] [--gpu NAME]

Checks, each printed as PASS or FAIL with the reason:
  - report/report.pdf exists, is a PDF, and pdftotext reads it;
  - every \\input and \\includegraphics target of report/report.tex (and of
    the files it inputs, recursively) exists, and every \\ref has a \\label;
  - LaTeX's log reports no undefined reference and the text shows no '??';
  - the key numbers in the PDF's text equal those computed here, directly
    from the JSON rows (not through report/generate.py): for each scene, the
    fastest Mrays/s at the thesis workload and the roofline Gsteps/s with
    random and coherent rays, on the scene's line of the key-numbers table;
    the abstract's slowest and fastest scene rates; the GPU name and driver;
  - every number of report/thesis_tables.json appears in the PDF's text;
  - each experiments/mitsuba run (results/<gpu>/mitsuba.jsonl and
    results/cpu-*/mitsuba.jsonl) shows its scene's Mitsuba and vptune times
    and their ratio on one line of the Mitsuba table;
  - every \\verdict of report.tex and discussion.tex agrees with the numbers
    it cites (report/verdicts.py; --no-verdicts skips this);
  - the front page names the report's commit (the newest row's, recomputed
    here from the rows), and every generated float whose rows include another
    commit (generated/provenance.json) carries the \\othercommit mark;
  - sessions: every float whose rows span more than one session (GPU UUID,
    commit) carries \\mixedsessions{N}{S..} naming exactly those sessions, and
    every session a float uses is in the appendix's session table;
  - one session: when the report's folder names its session
    (results/<gpu>/report_session.json: scripts/gpu_report_session.sh), every
    thesis table (tab_t41 ... tab_t63) shows vptune rows of that session only
    (another renderer's rows, Mitsuba's in table 6.1, are told apart: they
    keep their mark) and every verdict's two numbers rest on rows of that
    session only; a failure names the float or verdict and its sessions.
    Without such a file the same findings are printed as WARN lines and do
    not fail: the session has not been measured yet;
  - spreads: every float that shows a tuned winner of a scene whose default
    tune was run with several seeds (results/<gpu>/tune_variance.jsonl, read
    here) shows that spread, recomputed here from the rows;
  - no commit hash in the prose: report.tex and discussion.tex, outside the
    preamble, captions, floats and the appendix, hold no hexadecimal commit
    and no macro that expands to one;
  - no overfull box wider than MAX_OVERFULL_PT points in LaTeX's log (a table
    past the margin is one).
Ends with "N passed, N failed"; exits 1 if any check failed.

    python3 report/check_report.py --verdicts-only   only the verdicts (no PDF needed)
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
sys.path.insert(0, HERE)
import verdicts  # noqa: E402

WK_KEYS = ("width", "height", "spp", "seed", "max_depth", "rr_depth")
MAX_OVERFULL_PT = 10.0   # the referee's limit: a box this much past the margin shows in print


class Checker:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, why=""):
        if ok:
            self.passed += 1
            print("PASS  %s" % what)
        else:
            self.failed += 1
            print("FAIL  %s%s" % (what, (": " + why) if why else ""))
        return ok


def strip_comments(text):
    return "\n".join(re.sub(r"(?<!\\)%.*", "", line) for line in text.splitlines())


def tex_files(report_dir, main):
    """report.tex and every file it \\inputs, recursively: (path, text)."""
    seen, order, missing = set(), [], []
    stack = [main]
    while stack:
        name = stack.pop()
        path = os.path.join(report_dir, name if name.endswith(".tex") else name + ".tex")
        if path in seen:
            continue
        seen.add(path)
        if not os.path.exists(path):
            missing.append(name)
            continue
        with open(path, encoding="utf-8") as f:
            text = strip_comments(f.read())
        order.append((path, text))
        for m in re.finditer(r"\\input\{([^}]+)\}", text):
            stack.append(m.group(1))
    return order, missing


def rows_of_file(path):
    rows = []
    with open(path, "rb") as f:
        data = f.read()
    for raw in data.split(b"\n")[:-1]:   # a last line without newline is incomplete
        try:
            r = json.loads(raw)
        except ValueError:
            continue
        if isinstance(r, dict):
            rows.append(r)
    return rows


def report_session(results_dir):
    """[(GPU UUID, commit)] of the sessions results_dir/report_session.json
    names, first named first (report/pool.py reads it the same way); None
    without the file."""
    path = os.path.join(results_dir, "report_session.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        s = json.load(f)
    keys = [(x.get("uuid"), x.get("commit")) for x in s.get("sessions") or []]
    return keys or [(s.get("uuid"), s.get("commit"))]


def rows_of(results_dir):
    rows = []
    for fn in sorted(os.listdir(results_dir)):
        if fn.endswith(".jsonl"):
            rows.extend(rows_of_file(os.path.join(results_dir, fn)))
    return rows


def f_sec(x):
    """As report/generate.py formats a render time."""
    return "%.1f ms" % (1e3 * x) if x < 1.0 else "%.2f s" % x


def newest(rows, key):
    """{key: row}: the newest row per key; a row of a named session (ranked
    "_session" by session_first: the first named highest) over any row of a
    later-named or unnamed one."""
    out = {}
    for r in rows:
        k = key(r)
        if k is None:
            continue
        if k not in out or (r.get("_session", 0), r.get("time") or "") >= (out[k].get("_session", 0),
                                                                         out[k].get("time") or ""):
            out[k] = r
    return out


def session_first(rows, keys):
    """rows, each of a named session (keys: [(GPU UUID, commit)], first
    first) ranked "_session": len(keys) for the first, 1 for the last."""
    out = []
    for r in rows:
        g = r.get("gpu")
        uuid = g.get("uuid") if isinstance(g, dict) else None
        if uuid is None and isinstance(r.get("host_gpu"), dict):
            uuid = r["host_gpu"].get("uuid")
        k = (uuid, r.get("commit"))
        out.append(dict(r, _session=len(keys) - keys.index(k)) if k in keys else r)
    return out


def overfull_boxes(logtext, limit=MAX_OVERFULL_PT):
    """[(points, where)] of LaTeX's overfull boxes wider (or taller) than
    limit; where: the last file opened before it and the source lines."""
    out = []
    for m in re.finditer(r"Overfull \\[hv]box \(([0-9.]+)pt too (?:wide|high)\)([^\n]*)", logtext):
        pt = float(m.group(1))
        if pt <= limit:
            continue
        opened = re.findall(r"\((\./[^\s()]+\.tex)", logtext[:m.start()])
        lines = re.search(r"lines? ([0-9-]+)", m.group(2))
        out.append((pt, "%s%s" % (opened[-1][2:] if opened else "?", (" lines " + lines.group(1)) if lines else "")))
    return out


def prose_of(text):
    """The prose of a .tex source: comments, the preamble, float
    environments, captions and everything after \\appendix removed."""
    text = strip_comments(text)
    if "\\begin{document}" in text:
        text = text.split("\\begin{document}", 1)[1]
    text = text.split("\\appendix", 1)[0]
    text = re.sub(r"\\begin\{(table|figure|longtable)\*?\}.*?\\end\{\1\*?\}", " ", text, flags=re.S)
    out, i = [], 0
    for m in re.finditer(r"\\caption\{", text):   # captions: to their closing brace
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def prose_hashes(prose, macros, commits):
    """Commit hashes in prose: hexadecimal words of 7 to 40 characters with a
    digit and a letter, and macros whose value is (or starts with) a commit
    of commits (macros: {name: value})."""
    found = [w for w in re.findall(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])", prose)
             if re.search(r"[0-9]", w) and re.search(r"[a-f]", w)]
    short = {c[:7] for c in commits if c and c != "?"}
    for name in re.findall(r"\\([A-Za-z]+)", prose):
        v = macros.get(name)
        if v is not None and any(t[:7] in short for t in re.findall(r"[0-9a-f]{7,40}", v)):
            found.append("\\" + name)
    return sorted(set(found))


def session_marks(pv, gendir):
    """Problems with the session marks: floats of several sessions without
    \\mixedsessions, marks that name other sessions, sessions missing from
    the session table."""
    ids = {(x["uuid"], x["commit"]): x["id"] for x in pv.get("sessions", [])}
    bad = []
    for name, p in sorted(pv["floats"].items()):
        sess = [tuple(x) for x in p.get("sessions", [])]
        missing = [x for x in sess if x not in ids]
        if missing:
            bad.append("%s: sessions not in the session table: %s" % (name, ", ".join("/".join(x) for x in missing)))
            continue
        with open(os.path.join(gendir, name), encoding="utf-8") as f:
            body = f.read()
        marks = re.findall(r"\\mixedsessions\{(\d+)\}\{([^}]*)\}", body)
        if len(sess) <= 1:
            if marks:
                bad.append("%s: marked, but its rows are of one session" % name)
            continue
        want = sorted(ids[x] for x in sess)
        if len(marks) < body.count("\\caption{"):
            bad.append("%s: rows of %d sessions (%s), no \\mixedsessions mark" % (name, len(sess), ", ".join(want)))
        for n, listed in marks:
            got = sorted(x.strip() for x in listed.split(","))
            if int(n) != len(sess) or got != want:
                bad.append("%s: mark names %s, its rows are of %s" % (name, ", ".join(got), ", ".join(want)))
    return bad


THESIS_FLOAT = re.compile(r"tab_t\d+\.tex$")


def one_session(pv, numbers, found, keys):
    """Findings of the one-session rule: [message] for each thesis table
    whose vptune rows span more than one session or one not in keys (the
    named sessions; None: no session named), and each verdict whose two
    numbers do, and [note] for the thesis tables that keep a mark for
    another renderer's rows."""
    def off(sessions):
        return len(sessions) > 1 or keys is not None and not sessions <= set(keys)
    bad, notes = [], []
    def name(k):
        return "%s at %s" % k
    for f, p in sorted(pv.get("floats", {}).items()):
        if not THESIS_FLOAT.match(f):
            continue
        other = {tuple(x) for x in p.get("other_tool_sessions", [])}
        ours = {tuple(x) for x in p.get("sessions", [])} - other
        if off(ours):
            bad.append("%s: vptune rows of %s" % (f, "; ".join(name(k) for k in sorted(ours))))
        if other and p.get("mark"):
            notes.append("%s keeps %s for another renderer's rows (%s)" % (f, p["mark"].split("}")[0] + "}",
                                                                         "; ".join(name(k) for k in sorted(other))))
    for v in found:
        source, line, a, word, b, ma, mb = v
        if word not in verdicts.WORDS or ma not in numbers or mb not in numbers:
            continue
        if numbers[ma]["value"] is None or numbers[mb]["value"] is None:
            continue
        s = verdicts.sessions_of(v, numbers)
        where = "%s:%d (%s %s %s)" % (source, line, a, word, b)
        # both numbers of a section built from another GPU's folder (generate.py,
        # section_inputs): one session of that folder, since the named ones have no such rows
        elsewhere = numbers[ma].get("folder") is not None and numbers[ma].get("folder") == numbers[mb].get("folder")
        if s is None:
            bad.append("%s: \\%s or \\%s records no sessions" % (where, ma, mb))
        elif len(s) > 1 if elsewhere else off(s):
            bad.append("%s: rows of %s" % (where, "; ".join(name(k) for k in sorted(s))))
    return bad, notes


def seed_spreads(path):
    """{scene: spread text} of the scenes with two or more finished seeds in a
    tune_variance.jsonl, formatted as report/variance.py's spread_text."""
    import variance
    by = {}
    for r in rows_of_file(path) if os.path.exists(path) else []:
        if r.get("kind") == "tune_variance" and r.get("exit") == 0 and isinstance(r.get("time_ms"), (int, float)):
            by.setdefault(r.get("scene"), []).append(r)
    return {s: variance.spread_text(s, rs) for s, rs in by.items() if len(rs) >= 2}


def missing_spreads(pv, gendir, spreads_of):
    """Floats that show a tuned winner of a scene with seed runs but not
    that scene's spread; spreads_of(folder): the seed spreads of a float's
    results folder (None: the report's own)."""
    bad = []
    for name, p in sorted(pv["floats"].items()):
        with open(os.path.join(gendir, name), encoding="utf-8") as f:
            body = f.read()
        spreads = spreads_of(p.get("folder"))
        for scene in p.get("tuned", []):
            if scene in spreads and spreads[scene] not in body:
                bad.append("%s: %s without its seed spread '%s'" % (name, scene, spreads[scene]))
    return bad


def norm(text):
    return re.sub(r"\s+", " ", text)


def main(argv):
    ap = argparse.ArgumentParser(prog="report/check_report.py")
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--gpu", default=os.environ.get("REPORT_GPU") or None)
    ap.add_argument("--no-verdicts", action="store_true", help="skip the verdicts (synthetic numbers)")
    ap.add_argument("--verdicts-only", action="store_true", help="check only the verdicts")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    rdir = os.path.join(root, "report")
    c = Checker()
    if not args.no_verdicts:
        results, nodata = verdicts.check_report(rdir)
        for ok, msg in results:
            c.check(ok, "verdict " + msg)
        for msg in nodata:
            print("SKIP  verdict %s" % msg)
    if args.verdicts_only:
        print("%d passed, %d failed" % (c.passed, c.failed))
        return 0 if c.failed == 0 else 1

    pdf = os.path.join(rdir, "report.pdf")
    ok = os.path.exists(pdf)
    if ok:
        with open(pdf, "rb") as f:
            ok = f.read(5) == b"%PDF-"
    c.check(ok, "report/report.pdf exists and is a PDF")
    text = layout = ""
    if ok:
        try:
            text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True, check=True).stdout
            layout = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, text=True,
                                    check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            c.check(False, "pdftotext reads the PDF", str(e))
    c.check(bool(text.strip()), "the PDF has text")

    # -- references
    files, missing = tex_files(rdir, "report.tex")
    c.check(not missing, "every \\input target exists (%d files)" % len(files), "missing: " + ", ".join(missing))
    graphics, labels, refs = [], set(), set()
    for path, t in files:
        for m in re.finditer(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", t):
            graphics.append(m.group(1))
        labels.update(re.findall(r"\\label\{([^}]+)\}", t))
        refs.update(re.findall(r"\\ref\{([^}]+)\}", t))
    bad = [g for g in graphics if not os.path.exists(os.path.join(rdir, g))]
    c.check(graphics and not bad, "every \\includegraphics target exists (%d)" % len(graphics),
            "missing: " + ", ".join(bad) if bad else "no figures")
    unresolved = sorted(refs - labels)
    c.check(not unresolved, "every \\ref has its \\label (%d refs)" % len(refs), ", ".join(unresolved))
    log = os.path.join(rdir, "report.log")
    logtext = open(log, encoding="latin-1").read() if os.path.exists(log) else ""
    undefined = re.findall(r"(?:Reference|Citation) `[^']*' on page \d+ undefined|There were undefined references",
                           logtext)
    c.check(bool(logtext) and not undefined, "LaTeX log: no undefined references or citations",
            "; ".join(undefined[:5]) if logtext else "no report/report.log")
    c.check("??" not in text, "no '??' in the text")

    # -- key numbers, straight from the JSON rows
    gpu = args.gpu
    vals_path = os.path.join(rdir, "generated", "values.json")
    if gpu is None and os.path.exists(vals_path):
        with open(vals_path) as f:
            gpu = json.load(f).get("gpu_dir")
    resdir = os.path.join(root, "results", gpu or "")
    if not c.check(gpu and os.path.isdir(resdir), "results folder of the report (%s)" % gpu):
        print("%d passed, %d failed" % (c.passed, c.failed))
        return 1
    rows = rows_of(resdir)
    skey = report_session(resdir)
    if skey is not None:
        # the report's session's rows win each key over other sessions' (report/pool.py): the
        # rows of the other sessions drop out of the key numbers' lookups where the session has one
        rows = session_first(rows, skey)
    roof_spec = vx.load_spec(os.path.join(root, "experiments", "roofline.spec"))
    results = newest(rows, lambda r: (r["scene"], vx.row_config(r), tuple(r.get("workload", {}).get(k) for k in WK_KEYS))
                     if r.get("kind") == "result" else None)
    roofs = newest(rows, lambda r: (r["scene"], r["rays"]) if r.get("kind") == "roofline"
                   and r.get("majorant", "global") == "global" else None)
    lines = layout.splitlines()
    best_all = []
    for scene in roof_spec.scenes:
        w = vx.base_workload(roof_spec, scene)
        wk = tuple(w[k] for k in WK_KEYS)
        cands = [r["metrics"]["mrays_per_s"] for (s, cfg, k), r in results.items()
                 if s == scene and k == wk and r.get("status") == "ok"
                 and isinstance(r.get("metrics", {}).get("mrays_per_s"), (int, float))]
        want = []
        if cands:
            best = "%.1f" % max(cands)
            want.append(best)
            best_all.append((max(cands), scene, best))
        for rays in ("random", "coherent"):
            r = roofs.get((scene, rays))
            if r is not None:
                want.append("%.2f" % r["metrics"]["gsteps_per_s"])
        if not want:
            continue
        hit = [ln for ln in lines if ln.strip().startswith(scene + " ") and all(
            re.search(r"(?<![\d.])%s(?![\d])" % re.escape(x), ln) for x in want)]
        c.check(bool(hit), "key numbers of %s in the PDF: %s" % (scene, " ".join(want)),
                "no line of the PDF text starts with '%s' and holds them all" % scene)
    if best_all:
        lo, hi = min(best_all), max(best_all)
        flat = norm(text)
        phrase = "between %s Mrays/s (%s) and %s Mrays/s (%s)" % (lo[2], lo[1], hi[2], hi[1])
        c.check(phrase in flat, "abstract: '%s'" % phrase, "not in the PDF text")
    prov = [r for r in rows if r.get("kind") in ("result", "roofline") and isinstance(r.get("gpu"), dict)]
    if skey is not None:
        prov = [r for r in prov if r.get("_session")] or prov
    prov.sort(key=lambda r: r.get("time") or "")
    if prov:
        g = prov[-1]["gpu"]
        flat = norm(text)
        c.check(g.get("name", "?") in flat, "GPU name '%s' in the PDF" % g.get("name"))
        c.check(str(g.get("driver", "?")) in flat, "driver '%s' in the PDF" % g.get("driver"))
        commit = prov[-1].get("commit", "?")
        first_page = norm(text.split("\f", 1)[0])
        c.check("commit %s" % commit in first_page, "front page names the results' commit %s" % commit,
                "not on page 1 of the PDF text")
    # -- floats holding rows of another commit are marked
    ppath = os.path.join(rdir, "generated", "provenance.json")
    if c.check(os.path.exists(ppath), "generated/provenance.json exists"):
        with open(ppath) as f:
            pv = json.load(f)
        unmarked = []
        for name, p in sorted(pv["floats"].items()):
            if any(x != pv["commit"] for x in p["commits"]):
                with open(os.path.join(rdir, "generated", name), encoding="utf-8") as f:
                    body = f.read()
                if body.count("\\othercommit{") < body.count("\\caption{"):
                    unmarked.append(name)
        c.check(not unmarked, "every float with rows of another commit than %s is marked" % pv["commit"],
                "unmarked: " + ", ".join(unmarked))
        if prov:
            c.check(pv["commit"] == prov[-1].get("commit"), "the report's commit is the newest row's (%s)"
                    % prov[-1].get("commit"), "generated/provenance.json says %s" % pv["commit"])
        gendir = os.path.join(rdir, "generated")
        mixed = sum(1 for p in pv["floats"].values() if len(p.get("sessions", [])) > 1)
        bad = session_marks(pv, gendir)
        c.check(not bad, "sessions: the %d floats mixing sessions are marked, over %d sessions in the table"
                % (mixed, len(pv.get("sessions", []))), "; ".join(bad[:5]))
        sess = report_session(resdir)
        found, numbers = verdicts.load(rdir)
        bad, notes = one_session(pv, numbers or {}, found, sess)
        if sess is not None:
            c.check(not bad, "one session: each thesis table's vptune rows and each verdict's numbers are of one "
                    "of the report's sessions (%s; results/%s/report_session.json)"
                    % ("; ".join("%s at %s" % k for k in sess), gpu),
                    "; ".join(bad[:8]) + (" (and %d more)" % (len(bad) - 8) if len(bad) > 8 else ""))
        else:
            for msg in bad:
                print("WARN  one session: %s" % msg)
            print("WARN  one session: results/%s/report_session.json names no session; %d thesis tables or "
                  "verdicts span sessions (not failed until a session is named)" % (gpu, len(bad)))
        for msg in notes:
            print("NOTE  one session: %s" % msg)
        memo = {}

        def spreads_of(folder):
            if folder not in memo:
                d = resdir if folder is None else os.path.join(root, "results", folder)
                memo[folder] = seed_spreads(os.path.join(d, "tune_variance.jsonl"))
            return memo[folder]
        bad = missing_spreads(pv, gendir, spreads_of)
        seeded = [(p, set(p.get("tuned", [])) & set(spreads_of(p.get("folder")))) for p in pv["floats"].values()]
        scenes = sorted({"%s (%s)" % (s, p.get("folder") or gpu) for p, ss in seeded for s in ss})
        c.check(not bad, "spreads: the %d floats showing a tuned winner of %s show its seed spread"
                % (sum(1 for _, ss in seeded if ss), ", ".join(scenes) or "no scene with seeds"), "; ".join(bad[:5]))
        macros = {}
        mpath = os.path.join(gendir, "macros.tex")
        if os.path.exists(mpath):
            with open(mpath, encoding="utf-8") as f:
                for m in re.finditer(r"\\newcommand\{\\([A-Za-z]+)\}\{(.*)\}$", f.read(), flags=re.M):
                    macros[m.group(1)] = m.group(2)
        commits = {r.get("commit") for r in rows if r.get("commit")}
        for name in ("report.tex", "discussion.tex"):
            with open(os.path.join(rdir, name), encoding="utf-8") as f:
                found = prose_hashes(prose_of(f.read()), macros, commits)
            c.check(not found, "no commit hash in the prose of report/%s" % name, ", ".join(found))
    big = overfull_boxes(logtext)
    c.check(bool(logtext) and not big, "LaTeX log: no overfull box over %g pt" % MAX_OVERFULL_PT,
            "; ".join("%.1f pt in %s" % b for b in big[:8]) if logtext else "no report/report.log")

    # -- experiments/mitsuba: each run's times and ratio on its scene's line
    for path in sorted(glob.glob(os.path.join(root, "results", "*", "mitsuba.jsonl"))):
        folder = os.path.basename(os.path.dirname(path))
        if folder != gpu and not folder.startswith("cpu-"):
            continue
        mrows = newest([r for r in rows_of_file(path) if r.get("kind") == "mitsuba_compare"],
                       lambda r: (r.get("scene"), r.get("control")))
        for (scene, control), r in sorted(mrows.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
            if r.get("status") != "ok" or control:
                continue
            tm, tv = r["mitsuba"]["time"]["median_s"], r["vptune"]["time"]["median_s"]
            want = [f_sec(tm), f_sec(tv), "%.1f" % (tm / tv)]
            # the OT1 fonts typeset an escaped underscore as a space: pdftotext reads disney_cloud as "disney cloud"
            names = {scene + " ", scene.replace("_", " ") + " "}
            hit = [ln for ln in lines if any(ln.strip().startswith(n) for n in names) and all(w in ln for w in want)]
            c.check(bool(hit), "Mitsuba run of %s (%s) in the PDF: %s" % (scene, folder, ", ".join(want)),
                    "no line of the PDF text starts with '%s' and holds them all" % scene)

    # -- the thesis' numbers
    with open(os.path.join(rdir, "thesis_tables.json"), encoding="utf-8") as f:
        thesis = json.load(f)
    tokens = set(re.findall(r"[0-9]+(?:\.[0-9]+)?", text))
    missing = []
    n = 0
    for tid, T in thesis["tables"].items():
        for R in T["rows"]:
            for v in R["values"].values():
                if v is None:
                    continue
                n += 1
                if v not in tokens:
                    missing.append("%s:%s" % (tid, v))
    c.check(not missing, "all %d thesis numbers appear in the PDF" % n, "missing: " + ", ".join(missing[:20]))

    print("%d passed, %d failed" % (c.passed, c.failed))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
