#!/usr/bin/env python3
"""Fuzz target for experiment specs (experiments/vptexp.py), which are read
by Python, so libFuzzer cannot drive them: this is a small mutation fuzzer
with the same command line and the same final stats as a libFuzzer target,
so that fuzz/run.sh runs it like the others.

    fuzz_experiment_spec.py [-max_total_time=S] [-artifact_prefix=DIR/]
                            [-seed=N] [-timeout=S] WORKDIR [SEED_DIR...]
    fuzz_experiment_spec.py --replay FILE_OR_DIR...

Each input is written as a .spec file (named after its 'name' line when it
has a usable one, so that validation gets past the name check) and read
with load_spec(); every scene's workloads, the static configs (with
describe_config and schedule_name) and the spec's config texts go through
the runner's code. Properties:
  - only SpecError or ConfigError may come out (anything else, a hang past
    -timeout seconds or a MemoryError under the 2 GiB address-space cap is a
    finding, saved as <artifact_prefix>crash-<sha1> or timeout-<sha1>);
  - a canonical config text is a fixed point of canonical(), and a config
    that static_configs() keeps passes check_config();
  - differential: every config text met (from 'configs', from expanded
    'space' lines and mutated on their own) gets the same answer from
    parse_config/check_config as from the C parser (vpt_config_parse,
    vpt_config_check), asked through build-fuzz/bin/config_answer when it
    exists (FUZZ_CONFIG_ANSWER overrides the path).
Feedback is the outcome: an input whose error message (numbers and paths
stripped), accepted-spec shape or config answer is new joins the corpus
(saved to WORKDIR). --replay runs the given inputs once each and exits 1 on
the first broken property; the unit tests use it on fuzz/corpus/ and
fuzz/regressions/.
"""
import hashlib
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "experiments"))
import vptexp  # noqa: E402

DICT = [b"name = ", b"title = ", b"kind = ", b"status = ", b"reason = ", b"scenes = ", b"configs = ",
        b"space = ", b"workload = ", b"workload.manix = ", b"cpu_workload = ", b"cpu_workload.bucky = ",
        b"sweep = ", b"configs_from = best:", b"strategies = ", b"seeds = ", b"metrics = ", b"command = ",
        b"budget = ", b"cpu_reference = yes", b"roofline = yes", b"output = ", b"bench", b"tune", b"profile",
        b"not_implemented", b"ready", b"width=", b"height=", b"spp=", b"seed=", b"max_depth=", b"rr_depth=",
        b"schedule=", b"regen=", b"reorder=", b"kernels=", b"maxrregcount=", b"ppt=", b"block=", b"grid=",
        b"threshold=", b"sortkey=", b"lookahead=", b"coop=", b"flights=", b"async", b"paths=", b"pixel", b"thread", b"warp", b"block",
        b"device", b"compact",
        b"morton", b"morton_delayed", b"multi", b"single", b"termination", b"position", b"naiveSK", b"naiveMK",
        b"regenerationSK", b"regenerationSK-warp", b"regenerationSK-block", b"streamingSK", b"streamingMK",
        b"streamingSK-morton", b"sortingSK", b"manix", b"bucky", b"smoke", b",", b";", b"=", b"#", b"\n", b" ",
        b".", b"-", b"+", b"0", b"1", b"32", b"256", b"1024", b"65536", b"-1", b"4294967296",
        b"99999999999999999999", b"\xff", b"\x00", b"\t", b"\r", b"_", b"1_0", b"\xd9\xa1"]
CONFIG_ANSWER = os.environ.get("FUZZ_CONFIG_ANSWER",
                               os.path.join(HERE, "..", os.environ.get("FUZZ_BUILD", "build-fuzz"), "bin",
                                            "config_answer"))
NAME_LINE = re.compile(rb"^[ \t]*name[ \t]*=[ \t]*([a-z0-9][a-z0-9_]{0,40})[ \t]*(#.*)?$", re.M)


def _lift_as_cap():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


class Finding(Exception):
    pass


class Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise Timeout()


# ------------------------------------------------------------ one input

def raise_site(e):
    """Which check rejected an input: the line of vptexp.py that raised."""
    tb, line = e.__traceback__, 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith("vptexp.py"):
            line = tb.tb_lineno
        tb = tb.tb_next
    return "%s@%d" % (type(e).__name__, line)


def config_signature(text):
    """Outcome class of a config text: the check that rejected it, or the
    schedule it is and the rule it breaks, if any."""
    try:
        c = vptexp.parse_config(text)
    except vptexp.ConfigError as e:
        return "cfg:" + raise_site(e)
    rule = vptexp.check_config(c)
    return "cfg:%s:%s" % (vptexp.schedule_name(c), re.sub(r"=[^ ,:]*|[0-9]+", "#", rule) if rule else "ok")


def python_answer(text):
    try:
        c = vptexp.parse_config(text)
    except vptexp.ConfigError:
        return "error"
    return "%s %s" % ("ok" if vptexp.check_config(c) is None else "invalid", vptexp.format_config(c))


def run_one(data, tmpdir, configs_out):
    """Runs one input; returns its outcome signature. Raises Finding."""
    m = NAME_LINE.search(data)
    stem = m.group(1).decode() if m else "fuzz"
    path = os.path.join(tmpdir, stem + ".spec")
    with open(path, "wb") as f:
        f.write(data)
    try:
        try:
            spec = vptexp.load_spec(path)
        finally:
            os.unlink(path)
        # the shape of an accepted spec: kind, flags, which lists are empty
        swept = False
        for s in spec.scenes:
            swept |= len(vptexp.workloads(spec, s)) > 1
            if spec.flag("cpu_reference"):
                vptexp.format_workload(vptexp.cpu_workload(spec, s))
        out, dropped = vptexp.static_configs(spec)
        for canon in out:
            if vptexp.canonical(canon) != canon:
                raise Finding("canonical form '%s' is not a fixed point" % canon)
            if vptexp.check_config(vptexp.parse_config(canon)) is not None:
                raise Finding("static_configs kept '%s', which breaks a rule" % canon)
            vptexp.describe_config(canon)
            vptexp.schedule_name(canon)
            configs_out.append(canon)
        return "ok:%s,%d,%d,%d,%d,%d" % (spec.kind, spec.implemented, spec.flag("cpu_reference"), swept, len(out) > 0,
                                          len(dropped) > 0)
    except (vptexp.SpecError, vptexp.ConfigError) as e:
        return "err:" + raise_site(e)
    finally:
        for text in spec_config_texts(data):
            configs_out.append(text)


def spec_config_texts(data):
    """The config texts of an input's 'configs' lines, as the runner splits
    them (even when the spec as a whole is rejected)."""
    texts = []
    for raw in data.split(b"\n"):
        line = raw.split(b"#", 1)[0].strip()
        if line.startswith(b"configs") and b"=" in line:
            for t in line.split(b"=", 1)[1].split():
                try:
                    texts.append(t.decode("utf-8"))
                except UnicodeDecodeError:
                    pass
    return texts


class Differential:
    """Batches config texts through the C parser and compares answers."""

    def __init__(self):
        self.path = CONFIG_ANSWER if os.access(CONFIG_ANSWER, os.X_OK) else None
        self.pending = []
        self.seen = set()
        self.checked = 0

    def add(self, text):
        if not self.path or "\n" in text or "\0" in text or "\r" in text or text in self.seen:
            return False
        if len(self.seen) > 200000:
            self.seen.clear()
        self.seen.add(text)
        self.pending.append(text)
        return True

    def flush(self):
        if not self.pending:
            return
        texts, self.pending = self.pending, []
        data = "".join(t + "\n" for t in texts).encode("utf-8", "surrogateescape")
        # the C side runs under ASan, which needs more address space than
        # this process allows itself
        r = subprocess.run([self.path], input=data, stdout=subprocess.PIPE, check=False, preexec_fn=_lift_as_cap)
        if r.returncode != 0:
            raise Finding("config_answer exited with %d" % r.returncode)
        answers = r.stdout.decode("utf-8", "replace").split("\n")[:-1]
        if len(answers) != len(texts):
            raise Finding("config_answer gave %d answers for %d texts" % (len(answers), len(texts)))
        for t, a in zip(texts, answers):
            p = python_answer(t)
            if p != a:
                raise Finding("config %r: C says %r, experiments/vptexp.py says %r" % (t, a, p))
        self.checked += len(texts)


# ------------------------------------------------------------ mutation

def mutate(data, corpus, rng):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        pos = rng.randint(0, len(b))
        if op == 0 and b:                       # flip a bit
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:                           # insert a random byte
            b[pos:pos] = bytes([rng.randrange(256)])
        elif op == 2 and b:                     # delete a range
            n = rng.randint(1, min(16, len(b)))
            i = rng.randrange(len(b))
            del b[i:i + n]
        elif op == 3 and b:                     # duplicate a range
            i = rng.randrange(len(b))
            n = rng.randint(1, min(64, len(b) - i))
            b[pos:pos] = b[i:i + n]
        elif op in (4, 5):                      # insert a token
            b[pos:pos] = rng.choice(DICT)
        elif op == 6:                           # replace a number
            nums = list(re.finditer(rb"-?[0-9]+", bytes(b)))
            if nums:
                mm = rng.choice(nums)
                b[mm.start():mm.end()] = rng.choice([b"0", b"-1", b"1", b"31", b"33", b"1025", b"2147483648",
                                                     b"99999999999999999999", b"+5", b"0032", b"1e3"])
        elif op == 7 and corpus:                # splice lines of another input
            other = rng.choice(corpus).split(b"\n")
            lines = bytes(b).split(b"\n")
            i = rng.randint(0, len(lines))
            lines[i:i] = other[rng.randrange(len(other)):][:rng.randint(1, 4)]
            b = bytearray(b"\n".join(lines))
        elif op == 8:                           # drop or repeat a line
            lines = bytes(b).split(b"\n")
            i = rng.randrange(len(lines))
            if rng.random() < 0.5:
                del lines[i]
            else:
                lines.insert(i, lines[i])
            b = bytearray(b"\n".join(lines))
    return bytes(b[:8192])


def mutate_config(text, rng):
    b = bytearray(text.encode("utf-8", "surrogateescape"))
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(5)
        pos = rng.randint(0, len(b))
        if op == 0 and b:
            del b[rng.randrange(len(b))]
        elif op == 1:
            b[pos:pos] = rng.choice(DICT)
        elif op == 2 and b:
            b[rng.randrange(len(b))] = rng.randrange(32, 127)
        elif op == 3:
            b[pos:pos] = rng.choice([b",", b"=", b"+", b"-", b"0", b"1", b"00", b"\x7f", b"\xe9"])
        else:
            nums = list(re.finditer(rb"[0-9]+", bytes(b)))
            if nums:
                mm = rng.choice(nums)
                b[mm.start():mm.end()] = str(rng.choice([0, 1, 23, 24, 32, 64, 100, 101, 255, 256, 1024,
                                                         1056, 2 ** 31, 2 ** 63, 10 ** 30])).encode()
    return b.decode("utf-8", "surrogateescape")


# ------------------------------------------------------------ driver

def read_inputs(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for fn in sorted(os.listdir(p)):
                fp = os.path.join(p, fn)
                if os.path.isfile(fp):
                    with open(fp, "rb") as f:
                        out.append((fp, f.read()))
        elif os.path.isfile(p):
            with open(p, "rb") as f:
                out.append((p, f.read()))
    return out


def guarded(data, tmpdir, configs, timeout):
    """run_one with a time limit; returns (signature, None) or (None, kind
    of finding and its description)."""
    signal.alarm(timeout)
    try:
        return run_one(data, tmpdir, configs), None
    except Timeout:
        return None, ("timeout", "no answer within %d s" % timeout)
    except Finding as e:
        return None, ("crash", str(e))
    except MemoryError:
        return None, ("crash", "MemoryError (more than the address-space cap)")
    except Exception:  # noqa: BLE001 -- any other exception is the finding
        return None, ("crash", traceback.format_exc())
    finally:
        signal.alarm(0)


def main(argv):
    opts, dirs, replay = {}, [], False
    for a in argv:
        if a == "--replay":
            replay = True
        elif a.startswith("-") and "=" in a:
            k, v = a[1:].split("=", 1)
            opts[k] = v
        else:
            dirs.append(a)
    total = float(opts.get("max_total_time", 20))
    timeout = int(opts.get("timeout", 20))
    prefix = opts.get("artifact_prefix", "./")
    seed = int(opts.get("seed", 0)) or int(time.time() * 1000) % 2 ** 31
    rng = random.Random(seed)
    signal.signal(signal.SIGALRM, _alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = 2 << 30
    if hard == resource.RLIM_INFINITY or hard > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    tmpdir = tempfile.mkdtemp(prefix="vptune-fuzz-spec-")
    diff = Differential()
    try:
        inputs = read_inputs(dirs if replay else dirs)
        if replay:
            for path, data in inputs:
                configs = []
                sig, bad = guarded(data, tmpdir, configs, timeout)
                for c in configs:
                    diff.add(c)
                try:
                    diff.flush()
                except Finding as e:
                    bad = ("crash", str(e))
                if bad:
                    print("FAILED: %s: %s: %s" % (path, bad[0], bad[1]))
                    return 1
            print("replayed %d inputs, %d config texts compared with the C parser%s"
                  % (len(inputs), diff.checked, "" if diff.path else " (no config_answer: not compared)"))
            return 0

        workdir = dirs[0] if dirs else None
        corpus, sigs = [], set()
        print("INFO: Seed: %d" % seed)
        print("INFO: differential config check: %s" % (diff.path or "off (no build-fuzz/bin/config_answer)"))
        t0 = time.time()
        runs, new_units, finding = 0, 0, None
        for path, data in inputs:
            configs = []
            sig, bad = guarded(data, tmpdir, configs, timeout)
            runs += 1
            if bad:
                finding = (bad, data)
                break
            for c in configs:
                diff.add(c)
            if sig not in sigs:
                sigs.add(sig)
            corpus.append(data)
        if not corpus and not finding:
            corpus.append(b"name = fuzz\n")
        print("#%d INITED cov: %d corp: %d" % (runs, len(sigs), len(corpus)))
        last_config = "naiveSK"
        while finding is None and time.time() - t0 < total:
            data = mutate(rng.choice(corpus), corpus, rng)
            configs = []
            sig, bad = guarded(data, tmpdir, configs, timeout)
            runs += 1
            if bad:
                finding = (bad, data)
                break
            if configs:
                last_config = rng.choice(configs)
            configs.append(mutate_config(last_config, rng))
            fresh = False
            for c in configs:
                if diff.add(c):
                    k = config_signature(c)
                    if k not in sigs:
                        sigs.add(k)
                        fresh = True
            if len(diff.pending) >= 2000:
                try:
                    diff.flush()
                except Finding as e:
                    finding = (("crash", str(e)), data)
                    break
            if sig not in sigs or fresh:
                sigs.add(sig)
                corpus.append(data)
                new_units += 1
                if workdir:
                    os.makedirs(workdir, exist_ok=True)
                    with open(os.path.join(workdir, hashlib.sha1(data).hexdigest()), "wb") as f:
                        f.write(data)
                print("#%d NEW cov: %d corp: %d exec/s: %d" % (runs, len(sigs), len(corpus),
                                                               runs / max(time.time() - t0, 1e-9)))
        if finding is None:
            try:
                diff.flush()
            except Exception as e:  # noqa: BLE001
                finding = (("crash", str(e)), b"")
        secs = time.time() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        if finding:
            (kind, why), data = finding
            name = "%s%s-%s" % (prefix, kind, hashlib.sha1(data).hexdigest())
            os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
            with open(name, "wb") as f:
                f.write(data)
            print("==ERROR: experiment spec fuzzer: %s\n%s" % (kind, why))
            print("Test unit written to %s" % name)
        print("Done %d runs in %d second(s)" % (runs, int(secs)))
        print("#%d DONE cov: %d ft: 0 corp: %d/%db" % (runs, len(sigs), len(corpus), sum(map(len, corpus))))
        print("stat::number_of_executed_units: %d" % runs)
        print("stat::average_exec_per_sec:     %d" % int(runs / max(secs, 1e-9)))
        print("stat::new_units_added:          %d" % new_units)
        print("stat::config_texts_compared:    %d" % diff.checked)
        print("stat::peak_rss_mb:              %d" % rss)
        return 1 if finding else 0
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
