"""The report's verdicts, checked against the numbers they cite.

The prose states a comparison as

    \\verdict[unit]{A}{wins|loses|ties}{B}{\\numberA}{\\numberB}

which typesets "A beats B (x against y unit)", "A loses to B (...)" or "A
ties within noise with B (...)". \\numberA and \\numberB are macros of
generated/numbers.json (written by the report's parts through Out.number):
each a measured value, its relative noise (the half-width of its 95%
confidence interval over the time) and which way is better (higher for a
rate, lower for a time). check() recomputes every verdict:

    A's advantage  d = a/b - 1 (higher is better) or b/a - 1 (lower)
    margin         m = max(floor, noise(a) + noise(b))
    wins: d > m;   loses: d < -m;   ties: |d| <= m

and fails on each verdict whose stated word disagrees, on a cited macro that
is not a generated number, and on two numbers that are better in opposite
directions. A verdict whose number was not measured on this GPU ("--") is
not a disagreement: it typesets "not measured" and is listed as no data.

The floor: repeated measurements differ by more than one measurement's
confidence interval says, and more between two cards than within one
session. The floor is the spread between sessions that results/ records
(report/noise.py: the same commit and config measured on two cards of one
GPU model), written by generate.py to generated/noise.json, and never below
IN_SESSION_FLOOR, the spread of repeated measurements within one session
with room (docs/decisions/report-noise-floor.md). It does not cover a
change of commit, which the commit marks (\\othercommit) flag instead.

A verdict should compare rows of one session: numbers.json gives each
number's sessions (common.Out.number), and cross_session() lists the
verdicts whose two numbers span more than one; check_report.py fails on
them when the report's folder names its session (results/<gpu>/report_session.json).

    python3 report/verdicts.py [--root DIR]   exit 1 on a disagreement
"""
import json
import os
import re
import sys

IN_SESSION_FLOOR = 0.02
NOISE_FLOOR = IN_SESSION_FLOOR   # the floor when no generated/noise.json says otherwise
WORDS = ("wins", "loses", "ties")
# The hand-written sources that may state verdicts.
SOURCES = ("report.tex", "discussion.tex")


def _args(text, pos, n):
    """n brace-balanced arguments starting at text[pos]: ([arg], end)."""
    out = []
    for _ in range(n):
        while pos < len(text) and text[pos] in " \t\n":
            pos += 1
        if pos >= len(text) or text[pos] != "{":
            return None, pos
        depth, start = 0, pos
        while pos < len(text):
            c = text[pos]
            if c == "\\":
                pos += 2
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            pos += 1
        if depth != 0:
            return None, pos
        out.append(text[start + 1:pos])
        pos += 1
    return out, pos


def find(text, source="?"):
    """[(source, line, a, word, b, macroA, macroB)] of the \\verdict calls in
    text (comments ignored); malformed calls come back with word None."""
    text = "\n".join(re.sub(r"(?<!\\)%.*", "", line) for line in text.split("\n"))
    out = []
    for m in re.finditer(r"\\verdict(?![A-Za-z])", text):
        if text[:m.start()].rstrip().endswith("\\newcommand{") or text[m.end():m.end() + 1] == "}":
            continue   # the definition
        line = text.count("\n", 0, m.start()) + 1
        pos = m.end()
        opt = re.match(r"\s*\[[^\]]*\]", text[pos:])   # [unit]
        if opt:
            pos += opt.end()
        args, _ = _args(text, pos, 5)
        if args is None:
            out.append((source, line, None, None, None, None, None))
            continue
        a, word, b, ma, mb = (x.strip() for x in args)
        macro = re.compile(r"\\([A-Za-z]+)")
        ka, kb = macro.fullmatch(ma), macro.fullmatch(mb)
        out.append((source, line, a, word, b, ka.group(1) if ka else ma, kb.group(1) if kb else mb))
    return out


def decide(a, b, floor=None):
    """(word, advantage, margin) for numbers a and b (numbers.json entries);
    floor: the noise floor (default NOISE_FLOOR)."""
    if a["better"] == "higher":
        d = a["value"] / b["value"] - 1
    else:
        d = b["value"] / a["value"] - 1
    m = max(NOISE_FLOOR if floor is None else floor, (a.get("noise") or 0) + (b.get("noise") or 0))
    return ("wins" if d > m else "loses" if d < -m else "ties"), d, m


def check(verdicts, numbers, floor=None):
    """([(ok, message)] per verdict, [no-data message]); ok False: the build fails."""
    results, nodata = [], []
    for source, line, a, word, b, ma, mb in verdicts:
        where = "%s:%d" % (source, line)
        if word is None:
            results.append((False, "%s: \\verdict needs {A}{wins|loses|ties}{B}{\\numberA}{\\numberB}" % where))
            continue
        if word not in WORDS:
            results.append((False, "%s: verdict '%s' is not one of %s" % (where, word, ", ".join(WORDS))))
            continue
        missing = [x for x in (ma, mb) if x not in numbers]
        if missing:
            results.append((False, "%s: \\%s is not a generated number (numbers.json; a part emits it with "
                                   "Out.number)" % (where, missing[0])))
            continue
        na, nb = numbers[ma], numbers[mb]
        if na["better"] != nb["better"]:
            results.append((False, "%s: \\%s and \\%s are better in opposite directions" % (where, ma, mb)))
            continue
        if na["value"] is None or nb["value"] is None:
            nodata.append("%s: %s %s %s: not measured (\\%s = %s, \\%s = %s)" % (
                where, a, word, b, ma, na["text"], mb, nb["text"]))
            continue
        got, d, m = decide(na, nb, floor)
        msg = "%s: %s %s %s (\\%s = %s, \\%s = %s: %+.1f%%, noise margin %.1f%%)" % (
            where, a, word, b, ma, na["text"], mb, nb["text"], 100 * d, 100 * m)
        results.append((got == word, msg if got == word else msg + ": the numbers say " + got))
    return results, nodata


def sessions_of(verdict, numbers):
    """The sessions ((GPU UUID, commit) pairs) of the rows behind the
    verdict's two numbers; None when either number does not record them."""
    _, _, _, _, _, ma, mb = verdict
    out = set()
    for m in (ma, mb):
        s = (numbers.get(m) or {}).get("sessions")
        if s is None:
            return None
        out |= {tuple(x) for x in s}
    return out


def cross_session(verdicts, numbers):
    """[message] per verdict whose two numbers rest on rows of more than one
    session (or on numbers that do not record their sessions)."""
    out = []
    for v in verdicts:
        source, line, a, word, b, ma, mb = v
        if word not in WORDS or ma not in numbers or mb not in numbers:
            continue
        if numbers[ma]["value"] is None or numbers[mb]["value"] is None:
            continue
        s = sessions_of(v, numbers)
        if s is None:
            out.append("%s:%d: %s %s %s: \\%s or \\%s records no sessions" % (source, line, a, word, b, ma, mb))
        elif len(s) > 1:
            out.append("%s:%d: %s %s %s: \\%s and \\%s span %d sessions (%s)" % (
                source, line, a, word, b, ma, mb, len(s), "; ".join("%s at %s" % k for k in sorted(s))))
    return out


def load_floor(report_dir):
    """The noise floor generate.py measured (generated/noise.json), else NOISE_FLOOR."""
    path = os.path.join(report_dir, "generated", "noise.json")
    if not os.path.exists(path):
        return NOISE_FLOOR
    with open(path, encoding="utf-8") as f:
        return json.load(f)["floor"]


def load(report_dir):
    """(the \\verdict calls of the report's sources, generated/numbers.json);
    numbers None when the generator has not run."""
    found = []
    for name in SOURCES:
        with open(os.path.join(report_dir, name), encoding="utf-8") as f:
            found += find(f.read(), "report/" + name)
    path = os.path.join(report_dir, "generated", "numbers.json")
    if not os.path.exists(path):
        return found, None
    with open(path, encoding="utf-8") as f:
        return found, json.load(f)


def check_report(report_dir):
    """check() over the report's sources and its generated numbers."""
    found, numbers = load(report_dir)
    if numbers is None:
        return [(False, "%s/generated/numbers.json is missing: run report/generate.py first" % report_dir)], []
    return check(found, numbers, load_floor(report_dir))


def flags(verdicts, numbers, floor=None):
    """generated/verdicts.tex: for each verdict its numbers contradict, a
    definition \\verdict typesets beside it ("the numbers say ..."), so that
    a report built anyway (REPORT_VERDICTS=off) shows the disagreement."""
    out = ["% generated by report/verdicts.py: the verdicts the numbers contradict"]
    for source, line, a, word, b, ma, mb in verdicts:
        if word not in WORDS or ma not in numbers or mb not in numbers:
            continue
        na, nb = numbers[ma], numbers[mb]
        if na["value"] is None or nb["value"] is None or na["better"] != nb["better"]:
            continue
        got = decide(na, nb, floor)[0]
        if got != word:
            out.append("\\expandafter\\def\\csname verdictsays@\\string\\%s@\\string\\%s@%s\\endcsname{%s}"
                       % (ma, mb, word, got))
    return "\n".join(out) + "\n"


def main(argv):
    root = argv[argv.index("--root") + 1] if "--root" in argv else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    rdir = os.path.join(root, "report")
    results, nodata = check_report(rdir)
    found, numbers = load(rdir)
    if numbers is not None:
        with open(os.path.join(rdir, "generated", "verdicts.tex"), "w", encoding="utf-8") as f:
            f.write(flags(found, numbers, load_floor(rdir)))
    for ok, msg in results:
        print("%s  verdict %s" % ("PASS" if ok else "FAIL", msg))
    for msg in nodata:
        print("SKIP  verdict %s" % msg)
    crossed = cross_session(found, numbers) if numbers is not None else []
    for msg in crossed:
        print("CROSS verdict %s" % msg)
    print("verdicts: noise floor %.1f%% (generated/noise.json), %d verdicts across sessions" % (
        100 * load_floor(rdir), len(crossed)))
    failed = sum(1 for ok, _ in results if not ok)
    print("verdicts: %d agree with their numbers, %d disagree, %d without data" % (
        len(results) - failed, failed, len(nodata)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
