#!/usr/bin/env python3
"""The index of results/: what each file measures, the command that made it,
its commit and GPU, and what reads it. results/manifest.json holds the first
three (one line per file); the readers are not typed there but collected from
the readers' own declarations, so the index cannot claim a reader that does
not read:

  scripts/readme_tables.py   INPUTS, for the blocks that exist in README.md
                             and the docs/ pages
  report/generate.py         inputs(specs), for every GPU folder
  tests/*.c                  a "results/<gpu>/..." string literal naming a file
  results/manifest.json      "from": an entry made from another file; the
                             check below opens both and traces the one to the
                             other (a best/<scene>.json's config is an ok
                             evaluation of its tune cache, at its commit)

    scripts/results_index.py           rewrite results/README.md
    scripts/results_index.py --check   exit 1, naming each problem, when:
      - a file under results/<folder>/ outside archive/ has no manifest
        line, or a manifest line no file;
      - a file is read by nothing;
      - a declared reader input matches no file (docs blocks only: the
        report's parts are optional and say so in the PDF);
      - a manifest commit differs from the commits in the file's rows, or a
        row's GPU belongs to another folder;
      - a docs table reads rows of several commits and does not name
        each of them;
      - an archive/ entry is cited by nothing (README, docs, report, notes);
      - results/README.md is not what this script writes.

Adding a results file: one line in results/manifest.json, and the reader's
declaration (a pattern in one of the places above) in the same commit.
"""
import fnmatch
import glob
import importlib.util
import json
import os
import re
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "results")
MANIFEST = os.path.join(RESULTS, "manifest.json")
INDEX = os.path.join(RESULTS, "README.md")
# Known GPU names and their folders; others are a slug of the name
# (harness/provenance.c, vpt_gpu_dirname).
GPU_DIRS = {"NVIDIA H100 80GB HBM3": "h100", "NVIDIA H100 SXM5 80GB": "h100", "NVIDIA H200": "h200"}
TEST_PATH = re.compile(r'"results/([A-Za-z0-9_.@/-]+)"')


def gpu_dirname(name):
    if name in GPU_DIRS:
        return GPU_DIRS[name]
    s = re.sub(r"^NVIDIA ", "", name, flags=re.I)
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.dont_write_bytecode = True
    spec.loader.exec_module(mod)
    return mod


def load_manifest(path=MANIFEST):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def folders(root=ROOT):
    """results/<folder>/ names (GPU and CPU machines)."""
    base = os.path.join(root, "results")
    return sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))


def data_files(root=ROOT):
    """Every file under results/<folder>/ outside archive/, relative to results/."""
    base = os.path.join(root, "results")
    out = []
    for d in folders(root):
        for dirpath, dirnames, filenames in os.walk(os.path.join(base, d)):
            rel = os.path.relpath(dirpath, base)
            if rel.split(os.sep)[1:2] == ["archive"]:
                dirnames[:] = []
                continue
            dirnames[:] = [n for n in dirnames if not (rel == d and n == "archive")]
            out += [os.path.join(rel, f).replace(os.sep, "/") for f in filenames]
    return sorted(out)


def archive_entries(root=ROOT):
    """results/<folder>/archive/<entry> (files and folders), relative to results/."""
    base = os.path.join(root, "results")
    return sorted("%s/archive/%s" % (d, e) for d in folders(root)
                  if os.path.isdir(os.path.join(base, d, "archive"))
                  for e in os.listdir(os.path.join(base, d, "archive")))


# ------------------------------------------------------------ the file's rows

def json_rows(data):
    out = []
    for line in data.splitlines():
        line = line.strip()
        if line:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict):
                out.append(r)
    return out


def file_rows(path):
    """The JSON rows a results file holds: lines of .jsonl, the object of a
    .json, the lines of each member of a .tar.gz; [] for text."""
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            return json_rows(f.read())
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            return [json.load(f)]
    if path.endswith(".tar.gz"):
        rows = []
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.isfile():
                    rows += json_rows(t.extractfile(m).read().decode("utf-8"))
        return rows
    return []


def commits_of(rows):
    return sorted({r["commit"] for r in rows if isinstance(r.get("commit"), str) and r.get("kind") != "run"})


def machine_of(rows):
    """GPU names (or the CPU model) the rows were measured on."""
    names = set()
    for r in rows:
        g = r.get("gpu")
        if isinstance(g, dict) and g.get("name"):
            names.add(g["name"])
        elif r.get("gpu_dir") and not g:
            names.add("a GPU of folder %s (the row names only that)" % r["gpu_dir"])
        elif isinstance(r.get("machine"), dict) and not g:
            cpu = r["machine"].get("cpu", {})
            names.add("%s, %s threads (CPU)" % (cpu.get("model", "?"), cpu.get("threads", "?")))
    return sorted(names)


# ------------------------------------------------------------ the readers

def readme_readers(root=ROOT):
    """{results-relative path: [label]} of the generated blocks of README.md
    and the docs/ pages (scripts/readme_tables.py fills them), the blocks'
    own [(name, gpu, [paths], label, patterns, rows of path)], and
    {label: the text of the page the block is in}."""
    rt = load_module("readme_tables", os.path.join(root, "scripts", "readme_tables.py"))
    rt.ROOT = root
    uses = []
    for page in rt.pages(root):
        with open(os.path.join(root, page), encoding="utf-8") as f:
            text = f.read()
        uses += [(n, g or rt.DEFAULT_GPU, page, text) for n, g in rt.blocks(text)]
    uses.append(("estimators.svg", rt.DEFAULT_GPU, "docs/images/estimators.svg", ""))
    out, blocks, texts = {}, [], {}
    for name, gpu, page, text in uses:
        paths = [os.path.relpath(p, os.path.join(root, "results")).replace(os.sep, "/") for p in rt.inputs(name, gpu)]
        label = ("figure docs/images/estimators.svg" if name == "estimators.svg"
                 else "table %s (%s) in %s" % (name, gpu, page))
        for p in paths:
            out.setdefault(p, []).append(label)
        blocks.append((name, gpu, paths, label, rt.INPUTS[name], rt.rows))
        texts[label] = text
    return out, blocks, texts


def report_readers(root=ROOT):
    """{path: [label]} of the report's parts, for every results folder."""
    sys.path.insert(0, os.path.join(root, "experiments"))
    sys.path.insert(0, os.path.join(root, "report"))
    gen = load_module("report_generate", os.path.join(root, "report", "generate.py"))
    specs = gen.vx.load_specs(os.path.join(root, "experiments"))
    out = {}
    for label, patterns in gen.inputs(specs).items():
        for pat in patterns:
            for d in folders(root):
                for p in glob.glob(os.path.join(root, "results", pat.format(gpu=d))):
                    rel = os.path.relpath(p, os.path.join(root, "results")).replace(os.sep, "/")
                    out.setdefault(rel, [])
                    if label not in out[rel]:
                        out[rel].append(label)
    return out


def test_readers(root=ROOT):
    """{path: [label]}: tests/*.c naming a results file that exists."""
    out = {}
    for src in sorted(glob.glob(os.path.join(root, "tests", "*.c"))):
        with open(src, encoding="utf-8") as f:
            text = f.read()
        for m in TEST_PATH.finditer(text):
            if os.path.isfile(os.path.join(root, "results", m.group(1))):
                out.setdefault(m.group(1), []).append("test %s" % os.path.relpath(src, root))
    return out


def trace(entry, source, root=ROOT):
    """Checks that results file entry was made from source; '' or why not.
    A best/<scene>.json: its config is an ok evaluation of the tune cache
    source, at the cache's commit and scene. Winners of two tunes (rows 1
    and 2 of a .jsonl) from a .tar.gz of the two caches: each winner is an
    ok evaluation of its cache, in the order the archive holds them."""
    e, s = os.path.join(root, "results", entry), os.path.join(root, "results", source)
    if not os.path.exists(s):
        return "its source %s does not exist" % source
    if entry.endswith(".json") and source.endswith(".jsonl"):
        best = file_rows(e)[0]
        rows = file_rows(s)
        head = rows[0] if rows else {}
        if head.get("commit") != best.get("commit") or head.get("scene") != best.get("scene"):
            return "%s is a tune of %s at %s, not of %s at %s" % (source, head.get("scene"), head.get("commit"),
                                                                 best.get("scene"), best.get("commit"))
        if not any(r.get("kind") == "eval" and r.get("status") == "ok" and r.get("config") == best.get("config")
                   for r in rows):
            return "its config is not an ok evaluation of %s" % source
        return ""
    if entry.endswith(".jsonl") and source.endswith(".tar.gz"):
        winners = [r for r in file_rows(e) if r.get("kind") == "result"]
        with tarfile.open(s) as t:
            caches = [json_rows(t.extractfile(m).read().decode("utf-8")) for m in t.getmembers() if m.isfile()]
        if len(winners) != len(caches):
            return "%d winners but %d tune caches in %s" % (len(winners), len(caches), source)
        for w, c in zip(winners, caches):
            if not c or c[0].get("commit") != w.get("commit"):
                return "a cache of %s is not at the winner's commit %s" % (source, w.get("commit"))
            if not any(r.get("kind") == "eval" and r.get("status") == "ok" and r.get("config") == w.get("config")
                       for r in c):
                return "winner %s is not an ok evaluation of its cache in %s" % (w.get("config"), source)
        return ""
    return "no rule traces a %s to a %s" % (os.path.splitext(entry)[1], os.path.splitext(source)[1])


def readers(manifest, root=ROOT):
    """{path: [label]} from every declaration, and the docs' generated blocks."""
    out = {}
    readme, blocks, _ = readme_readers(root)
    for part in (readme, report_readers(root), test_readers(root)):
        for p, labels in part.items():
            out.setdefault(p, []).extend(labels)
    for entry, rec in manifest.items():
        for src in rec.get("from", []):
            out.setdefault(src, []).append("test results_index: traces %s to it" % entry)
    return out, blocks


# ------------------------------------------------------------ the check

def citations(root=ROOT):
    """The text of everything that may cite an archive entry."""
    texts = []
    for pat in ("README.md", "docs/**/*.md", "report/*.tex", "experiments/README.md", "results/*/archive/**/*.md"):
        for p in glob.glob(os.path.join(root, pat), recursive=True):
            with open(p, encoding="utf-8") as f:
                texts.append((os.path.relpath(p, root), f.read()))
    return texts


ARCHIVE_PATH = re.compile(r"[A-Za-z0-9_.@*-]+/archive/[A-Za-z0-9_./@*-]*")


def cited_by(entry, cites, root=ROOT):
    """The files (not inside entry itself) whose text names entry or a file
    in it: a path such as results/h100/archive/cheaper_steps/ab0_* (a glob,
    or a prefix) that matches the entry or one of its files."""
    base = os.path.join(root, "results")
    paths = [entry]
    if os.path.isdir(os.path.join(base, entry)):
        for dirpath, _, filenames in os.walk(os.path.join(base, entry)):
            paths += [os.path.relpath(os.path.join(dirpath, f), base).replace(os.sep, "/") for f in filenames]
    out = set()
    for p, text in cites:
        if p.startswith("results/" + entry):
            continue
        for m in ARCHIVE_PATH.finditer(text):
            t = m.group(0).rstrip("/.")
            t = t[len("results/"):] if t.startswith("results/") else t
            if any(fnmatch.fnmatchcase(x, t) or x.startswith(t + "/") for x in paths):
                out.add(p)
                break
    return sorted(out)


def check(root=ROOT):
    """[problem] (empty when results/ is in order)."""
    problems = []
    manifest = load_manifest(os.path.join(root, "results", "manifest.json"))
    files = data_files(root)
    for f in files:
        if f not in manifest:
            problems.append("results/%s: not in results/manifest.json (add a line: what, command, commit)" % f)
    for f in manifest:
        if f not in files:
            problems.append("results/manifest.json: %s names no file under results/ (outside archive/)" % f)
    found, blocks = readers(manifest, root)
    for f in files:
        if f in manifest and not found.get(f):
            problems.append("results/%s: read by nothing (no docs table, report part, test or manifest 'from' "
                            "declares it): move it to results/%s/archive/ if a note cites it, else delete it"
                            % (f, f.split("/")[0]))
    for name, gpu, paths, label, patterns, _ in blocks:
        for pat in patterns:
            if not glob.glob(os.path.join(root, "results", pat.format(gpu=gpu))):
                problems.append("%s: declares %s, which matches no file" % (label, pat.format(gpu=gpu)))
    for f in files:
        if f not in manifest:
            continue
        rec = manifest[f]
        rows = file_rows(os.path.join(root, "results", f))
        cs = commits_of(rows)
        want = rec.get("commit")
        want = sorted(want) if isinstance(want, list) else ([want] if want else [])
        if rows and cs != want:
            problems.append("results/manifest.json: %s says commit %s, its rows say %s"
                            % (f, ", ".join(want) or "none", ", ".join(cs) or "none"))
        folder = f.split("/")[0]
        for name in machine_of(rows):
            named = re.match(r"a GPU of folder (\S+) ", name)
            if named and named.group(1) != folder:
                problems.append("results/%s: a row of GPU folder %s" % (f, named.group(1)))
            elif not named and not folder.startswith("cpu-") and not name.endswith("(CPU)") and \
                    gpu_dirname(name) != folder:
                problems.append("results/%s: a row measured on %s, whose folder is %s/" % (f, name, gpu_dirname(name)))
        for src in rec.get("from", []):
            why = trace(f, src, root)
            if why:
                problems.append("results/%s: not made from %s: %s" % (f, src, why))
    # a docs table over rows of several commits names each of them (the
    # rows it shows: readme_tables.rows keeps a file's newest commit)
    _, _, texts = readme_readers(root)
    for name, gpu, paths, label, _, shown in blocks:
        if name == "estimators.svg":
            continue
        body = block_text(texts[label], name, gpu)
        cs = sorted({c for p in paths if p.endswith(".jsonl") for c in commits_of(shown(os.path.join(root, "results", p)))})
        missing = [c for c in cs if c[:7] not in body]
        if len(cs) > 1 and missing:
            problems.append("%s: its rows come from commits %s and it does not name %s"
                            % (label, ", ".join(cs), ", ".join(missing)))
    cites = citations(root)
    for e in archive_entries(root):
        if not cited_by(e, cites, root):
            problems.append("results/%s: in archive/ but cited by nothing (README, docs, report, notes): delete it "
                            "(git history keeps it)" % e)
    with open(os.path.join(root, "results", "README.md"), encoding="utf-8") as fh:
        if fh.read() != render(manifest, found, root):
            problems.append("results/README.md differs from results/manifest.json and the readers: run "
                            "scripts/results_index.py")
    return problems


def block_text(text, name, gpu):
    begin = "<!-- BEGIN %s" % name
    for m in re.finditer(re.escape(begin) + r"(?: (\w+))? -->", text):
        if (m.group(1) or "h100") == gpu:
            return text[m.end():text.index("<!-- END", m.end())]
    return ""


# ------------------------------------------------------------ results/README.md

def render(manifest, found, root=ROOT):
    def cell(s):
        return str(s).replace("|", "\\|")
    lines = ["# results/", "",
             "Measurements, one folder per GPU model (`h100`, `h200`, as `bench` names them) or CPU",
             "machine (`cpu-<model>-<n>c`). Every file outside `archive/` is read by a table of the",
             "documentation (`docs/findings/`), a report part or a test; `archive/` keeps one-off runs",
             "and A/B diaries that a note or a docs page cites. This table is generated by `scripts/results_index.py` from",
             "`results/manifest.json` (what, command, commit: one line per file) and from the readers'",
             "own declarations (`scripts/readme_tables.py` INPUTS, `report/generate.py` inputs(), the",
             "tests' literal paths, and `from`: a file traced to the one it was made from);",
             "`make test` runs `scripts/results_index.py --check`, which fails on a file that nothing",
             "reads, a manifest line whose commit the rows contradict, or a docs table that mixes",
             "commits without naming them.",
             "",
             "To add a results file: copy it here, add its line to `results/manifest.json`, declare it",
             "in its reader, run `scripts/results_index.py`.",
             "",
             "| file | what it measures | command | commit | measured on | read by |",
             "|---|---|---|---|---|---|"]
    for f, rec in manifest.items():
        path = os.path.join(root, "results", f)
        rows = file_rows(path) if os.path.exists(path) else []
        commit = rec.get("commit")
        commit = ", ".join(commit) if isinstance(commit, list) else (commit or "--")
        on = ", ".join(machine_of(rows)) or "%s (no rows)" % f.split("/")[0]
        lines.append("| `%s` | %s%s | `%s` | %s | %s | %s |" % (
            f, cell(rec["what"]), "; from " + ", ".join("`%s`" % s for s in rec["from"]) if rec.get("from") else "",
            cell(rec["command"]), commit, cell(on), "; ".join(cell(x) for x in sorted(set(found.get(f, [])))) or
            "**nothing**"))
    lines += ["", "## archive/", "",
              "| entry | cited by |", "|---|---|"]
    cites = citations(root)
    for e in archive_entries(root):
        by = cited_by(e, cites, root)
        lines.append("| `%s` | %s |" % (e, ", ".join("`%s`" % p for p in by) or "**nothing**"))
    return "\n".join(lines) + "\n"


def main(argv):
    manifest = load_manifest()
    if "--check" in argv:
        problems = check()
        for p in problems:
            print("results_index: " + p)
        if problems:
            print("results_index: %d problem(s)" % len(problems))
            return 1
        print("results_index: %d files, each read; %d archive entries, each cited" % (
            len(manifest), len(archive_entries())))
        return 0
    found, _ = readers(manifest)
    text = render(manifest, found)
    with open(INDEX + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(INDEX + ".tmp", INDEX)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
