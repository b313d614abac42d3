#!/usr/bin/env python3
"""Source comments state the contract and the why, never history: no commit
hash and no measured time or speedup in a comment. History and evidence go
to docs/decisions/<slug>.md, which a comment may link.

Reads the comments of every tracked source file (C, C++, CUDA, headers:
/* */ and //; Python: # and docstrings; shell, Makefile, *.mk: #) and fails,
naming file:line and the text, on

  - a commit hash: a word of 7 to 12 hexadecimal digits with at least one
    digit and one letter (so neither a plain number nor an English word);
  - a measured time: a decimal number with a time unit (N.N s, N.N ms,
    N.N seconds, a range N.N-N.N s); whole numbers are budgets and limits
    (a 90 s tune, at most 10 s), which are contracts, and pass;
  - a measured speedup: a decimal ratio with x (N.Nx, N.N-N.Nx).

A legitimate match (a constant of the contract that looks like one) goes
into ALLOW below, with the reason.

    scripts/check_comments.py [FILE ...]     (no files: every tracked source)
    scripts/check_comments.py --self-test

Exit 0 when clean, 1 naming each finding, 2 on bad usage.
"""
import ast
import io
import os
import re
import subprocess
import sys
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

C_LIKE = (".c", ".h", ".cc", ".cpp", ".cu", ".cu.in")
HASH_LIKE = (".py", ".sh", ".mk")

HASH = re.compile(r"(?<![0-9A-Za-z_])(?!0x)(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}(?![0-9A-Za-z_])")
TIME = re.compile(r"(?<![\w.])\d+\.\d+(?:\s?-\s?\d+(?:\.\d+)?)?\s?(?:ms|us|ns|s|sec|secs|seconds|minutes|min|h|hours)\b")
SPEEDUP = re.compile(r"(?<![\w.])\d+\.\d+(?:\s?-\s?\d+(?:\.\d+)?)?x\b")

# (path, text in the comment line): matches that are contracts, not history.
ALLOW = [
    ("base/parse.h", '"1.5h"'),                         # a duration the parser takes
    ("cli/scene_args.h", "scene, in 2.9 s\")"),          # the format of the load report line
    ("reference/cpu_render.h", '"1.234 s, 2.1e+06'),     # the format of the summary line
    ("tuner/tune.h", "best 1.2345 ms"),                  # the format of the progress line
    ("tests/test_compile_pool.c", "Compile time = 67.801 ms"),  # the ptxas line the test parses
    ("tests/test_harness_gpu.c", "/* about 0.5 s */"),   # half the clock rate's cycles: a computed spin
    ("tests/test_tuner_estimators.c", "over 1.25x slower"),  # the contender margin under test
    ("tests/test_tuner_estimators.c", "1.275x: out"),    # a time the test sets beyond the margin
]

# Comments in files other engineers own that still carry history, each to be
# rewritten to state its contract and link its decision (docs/decisions/);
# listed so that the check guards everything else meanwhile. An entry that
# matches nothing any more is reported, to be removed from this list.
PENDING = []


def comments_c(text):
    """[(line, comment text)] of C/C++/CUDA source: /* */ and // comments,
    string and character literals skipped."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k, part in enumerate(text[i:j].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def comments_hash(text):
    """[(line, comment text)] of shell and make files: from a # that starts
    a word to the end of the line (not inside quotes, not $# or ${#x})."""
    out = []
    for ln, s in enumerate(text.split("\n"), 1):
        quote = None
        for k, c in enumerate(s):
            if quote:
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#" and (k == 0 or s[k - 1] in " \t;") :
                out.append((ln, s[k:]))
                break
    return out


def comments_py(text):
    """[(line, comment text)] of Python: # comments and docstrings."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
        tree = ast.parse(text)
    except (tokenize.TokenError, SyntaxError) as e:
        raise ValueError("cannot parse: %s" % e)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                for k, part in enumerate(first.value.value.split("\n")):
                    out.append((first.lineno + k, part))
    return out


def comments(path, text):
    name = os.path.basename(path)
    if path.endswith(C_LIKE):
        return comments_c(text)
    if path.endswith(".py"):
        return comments_py(text)
    if path.endswith(HASH_LIKE) or name == "Makefile":
        return comments_hash(text)
    return []


def allowed(path, line, used=None):
    """Whether a comment line is on ALLOW or PENDING; notes the entry in used."""
    for entry in ALLOW + PENDING:
        if path == entry[0] and entry[1] in line:
            if used is not None:
                used.add(entry)
            return True
    return False


def findings(path, text, used=None):
    """['path:line: what: text'] for one file's comments."""
    out = []
    for ln, c in comments(path, text):
        if allowed(path, c, used):
            continue
        for what, rx in (("commit hash", HASH), ("measured time", TIME), ("measured speedup", SPEEDUP)):
            m = rx.search(c)
            if m:
                out.append("%s:%d: %s %r in a comment: %s" % (path, ln, what, m.group(0), c.strip()))
    return out


def tracked(root):
    """The tracked source files whose comments are checked."""
    try:
        files = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("check_comments: cannot list the tracked files (%s): run it in a git checkout, "
                         "or name the files" % e)
    return [f for f in files if (f.endswith(C_LIKE + HASH_LIKE) or os.path.basename(f) == "Makefile")
            and not f.startswith(("fuzz/corpus/", "fuzz/regressions/", "results/", "tests/fixtures/"))]


def self_test():
    cases = [
        ("a.c", "/* fixed at 3e30e82 */\nint x;\n", ["a.c:1: commit hash"]),
        ("a.c", "int y; // took 0.82 s on 2 cores\n", ["a.c:1: measured time"]),
        ("a.c", "/* first line\n * 1.3-1.8x slower\n */\n", ["a.c:2: measured speedup"]),
        ("a.c", 'const char *s = "3e30e82 0.5 s"; /* a 90 s budget, at most 10 s */\n', []),
        ("a.c", "/* deadbeef, 1234567, 0x1f2e3d4c and a decade */\n", []),
        ("a.py", '"""Made at b7d576d."""\nx = "0381a76"  # 8.6 s\n', ["a.py:2: measured time", "a.py:1: commit hash"]),
        ("a.sh", 'echo "#1 2.5 s" # 1.09x\n', ["a.sh:1: measured speedup"]),
        ("Makefile", "all: ; echo $# # the 94ec145 way\n", ["Makefile:1: commit hash"]),
    ]
    bad = 0
    for path, text, want in cases:
        got = findings(path, text)
        if len(got) != len(want) or not all(any(g.startswith(w) for g in got) for w in want):
            print("self-test: %s %r: got %s, want %s" % (path, text, got, want))
            bad += 1
    print("check_comments self-test: %d of %d cases failed" % (bad, len(cases)))
    return 1 if bad else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if any(a.startswith("-") for a in argv[1:]):
        print("usage: scripts/check_comments.py [FILE ...] | --self-test", file=sys.stderr)
        return 2
    files = argv[1:] or tracked(ROOT)
    out, used = [], set()
    for f in files:
        path = os.path.join(ROOT, f) if not os.path.isabs(f) else f
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            out += findings(os.path.relpath(path, ROOT), text, used)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            out.append("%s: %s" % (f, e))
    for line in out:
        print(line)
    if not argv[1:]:
        for p, t in PENDING:
            if (p, t) not in used:
                print("check_comments: note: PENDING entry %s %r matches no comment: remove it" % (p, t))
        left = sorted({p for p, _ in PENDING if (p, _) in used})
        if left:
            print("check_comments: note: history still pending in %s (docs/decisions/ has their decisions)"
                  % ", ".join(left))
    if out:
        print("check_comments: %d finding(s): comments state the contract; history and evidence go to "
              "docs/decisions/<slug>.md" % len(out))
        return 1
    print("check_comments: %d files, no commit hash or measured time in a comment" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
