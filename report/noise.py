"""The noise floor between sessions: how much one measurement moves when the
same build measures it again on another card of the same GPU model.

Definition. Over every results/<folder>/**/*.jsonl (archive/ included: its
repeated runs are evidence too), take the bench rows (kinds result and
roofline, status ok) that name their GPU's UUID, at a clean commit (a
"-dirty" build is not the same code as its commit). Group them by GPU
folder (the GPU model, as bench names it), commit, scene, configuration
(the canonical config; for a probe its rays, majorant and texel format) and
workload. Within a group, each session (GPU UUID) contributes its newest
row's time. A group measured in two or more sessions has the spread

    max(time) / min(time) - 1

and a folder's cross-session spread is the largest spread of its groups.
The floor a verdict uses (floor()) is that of the report's folder; of all
folders together when the report's has no group measured in two sessions
(the spread of another model is the only measurement there is); never
below the in-session floor (verdicts.IN_SESSION_FLOOR).

Different commits are not pooled: a change of commit can change the code,
and the commit marks (\\othercommit) flag it instead.
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402


def _key(r):
    """The measurement a bench row is of, or None."""
    if r.get("kind") not in ("result", "roofline") or r.get("status", "ok") != "ok":
        return None
    g = r.get("gpu")
    c = r.get("commit")
    if not isinstance(g, dict) or not g.get("uuid") or not isinstance(c, str) or c.endswith("-dirty"):
        return None
    t = (r.get("metrics") or {}).get("time_ms")
    if not isinstance(t, (int, float)) or t <= 0:
        return None
    try:
        what = vx.canonical(r["config"]) if r.get("kind") == "result" else \
            ("probe", r.get("rays"), r.get("majorant", "global"), r.get("density", "f32"))
        wk = vx.workload_key(r.get("workload") or {})
    except (KeyError, vx.SpecError, TypeError, ValueError):
        return None
    return (c, r.get("scene"), r.get("volume", {}).get("source") if isinstance(r.get("volume"), dict) else None,
            what, wk)


def spreads(results_dir):
    """{folder: [(spread, group, {uuid: time_ms})]} of the groups measured in
    two or more sessions, largest spread first."""
    times = {}
    for path in glob.glob(os.path.join(results_dir, "*", "**", "*.jsonl"), recursive=True):
        folder = os.path.relpath(path, results_dir).split(os.sep)[0]
        for r in vx.read_rows(path, lambda _msg: None):
            k = _key(r)
            if k is None:
                continue
            per = times.setdefault((folder, k), {})
            u = r["gpu"]["uuid"]
            if u not in per or vx.row_time(r) >= per[u][0]:
                per[u] = (vx.row_time(r), r["metrics"]["time_ms"])
    out = {}
    for (folder, k), per in times.items():
        if len(per) < 2:
            continue
        ts = [t for _, t in per.values()]
        out.setdefault(folder, []).append((max(ts) / min(ts) - 1, k, {u: t for u, (_, t) in per.items()}))
    for v in out.values():
        v.sort(key=lambda x: -x[0])
    return out


def floor(results_dir, gpu, in_session):
    """{"floor": the floor verdicts use, "measured": the cross-session
    spread it rests on (None: no group measured in two sessions anywhere),
    "folder": where that spread was measured, "groups": how many groups
    were measured in two or more sessions there, "worst": the group of the
    largest spread (commit, scene, what, workload as text), "in_session":
    in_session}."""
    sp = spreads(results_dir)
    where = gpu if sp.get(gpu) else None
    groups = sp.get(gpu) or sorted((x for v in sp.values() for x in v), key=lambda x: -x[0])
    if where is None and groups:
        where = next(f for f, v in sp.items() if groups[0] in v)
    measured = groups[0][0] if groups else None
    worst = None
    if groups:
        c, scene, vol, what, _ = groups[0][1]
        worst = {"commit": c, "scene": scene or vol, "what": what if isinstance(what, str) else " ".join(
            str(x) for x in what), "times_ms": groups[0][2]}
    return {"floor": max(in_session, measured or 0.0), "measured": measured, "folder": where,
            "groups": len(groups) if where == gpu else len(sp.get(where, [])) if where else 0,
            "worst": worst, "in_session": in_session}


if __name__ == "__main__":
    import json
    root = os.path.dirname(HERE)
    for folder, v in sorted(spreads(os.path.join(root, "results")).items()):
        print("%s: %d groups in two or more sessions; largest %.4f (%s)" % (folder, len(v), v[0][0], v[0][1][:4]))
    print(json.dumps(floor(os.path.join(root, "results"), sys.argv[1] if len(sys.argv) > 1 else "h100", 0.02),
                     indent=1, default=str))
