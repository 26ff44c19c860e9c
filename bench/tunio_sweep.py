#!/usr/bin/env python3
"""A random-sample sweep of a search space on a real application: what TunIO's
subset picker is pretrained on (paper 002, section III-C: "a simple parameter
sweep on some representative I/O kernels").

--points random points of the space (seeded, distinct) are measured
--repeats times each, every round in a new random order, with the default
settings run between every --default-every points, so drift and bursts of
load hit every point alike and the default's runs measure the noise. Each
point keeps its objective values and which of its knobs took effect unlike
the default (a knob the system drops, like striping on ROMIO's ufs driver,
never does).

The sweep saves after every run and, started again with the same arguments,
continues where it stopped. With --lock FILE it holds the timing lock for at
most --chunk seconds at a time and leaves it free for --pause seconds in
between, so others can run their benchmarks.

    bench/tunio_sweep.py --name vpicio --out bench/data/tunio-sweeps/vpicio.json \\
        --lock /tmp/iotuner-timing.lock -- vpicio -n 1M -r -o {scratch}

The file format ("iotuner-sample-sweep", version 1) is read by
iotuner.tune.strategies.tunio.pretrain.load_sweep.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from iotuner import native, settings
from iotuner.tune import launch
from iotuner.tune import objective as objectives
from iotuner.tune import space as spaces
from iotuner.tune.evaluate import JobEvaluator, reference_of
from iotuner.tune.store import signature
from iotuner.tune.strategies.tunio import pretrain
from iotuner.tune.trialdoc import effective_of, trial_doc

HERE = Path(__file__).resolve().parent
DEFAULT = -1  # the schedule's entry for a run of the default settings


def sample(space: spaces.SearchSpace, n: int, seed: int) -> list[tuple[int, ...]]:
    """n distinct random points, as value indices per dimension."""
    rng = random.Random(seed)
    n = min(n, space.size())
    seen: dict[tuple[int, ...], None] = {}
    while len(seen) < n:
        seen.setdefault(tuple(rng.randrange(len(d.values)) for d in space.dimensions), None)
    return list(seen)


def schedule(n_points: int, repeats: int, every: int, seed: int) -> list[int]:
    """The order of every run: point indices, DEFAULT for the default. Deterministic, so a resumed sweep
    continues the same order."""
    order = [DEFAULT]
    for r in range(repeats):
        points = list(range(n_points))
        random.Random(f"{seed}:{r}").shuffle(points)
        for i, p in enumerate(points):
            order.append(p)
            if (i + 1) % every == 0:
                order.append(DEFAULT)
    return order


class TimingLock:
    """Holds the shared timing lock for at most `chunk` seconds at a time."""

    def __init__(self, path: str | None, chunk: float, pause: float):
        self.path, self.chunk, self.pause = path, chunk, pause
        self.fd, self.since = None, 0.0

    def hold(self) -> None:
        if self.path is None:
            return
        if self.fd is not None and time.monotonic() - self.since > self.chunk:
            self.release()
            time.sleep(self.pause)
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.since = time.monotonic()

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--space", default=str(HERE / "data" / "tunio-pretrain-space.json"))
    ap.add_argument("--baseline", help="the default settings document (default: the application's own)")
    ap.add_argument("--name", required=True, help="what the sweep measures (the kernel)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--default-every", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--objective", default="perf")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--scratch", default="/dev/shm")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--lock", help="the timing lock file, held in chunks")
    ap.add_argument("--chunk", type=float, default=540.0, help="seconds the lock is held at a time")
    ap.add_argument("--pause", type=float, default=30.0, help="seconds it is left free between chunks")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    opts = ap.parse_args()
    command = opts.command[1:] if opts.command[:1] == ["--"] else opts.command
    if not command:
        ap.error("give the application after --, e.g. -- vpicio -n 1M -r -o {scratch}")
    if "/" not in command[0]:  # a bundled kernel by name
        command[0] = str(native.executable(command[0]))

    space = spaces.load(opts.space)
    obj = objectives.parse(opts.objective)
    baseline = settings.load(opts.baseline) if opts.baseline else {"version": 1}
    out = Path(opts.out)
    points = sample(space, opts.points, opts.seed)
    order = schedule(len(points), opts.repeats, opts.default_every, opts.seed)
    if out.exists():
        doc = json.loads(out.read_text())
        if doc["space"] != space.to_json() or doc["meta"]["seed"] != opts.seed or len(doc["points"]) != len(points):
            sys.exit(f"{out} is a different sweep (space, seed or points); give another --out")
    else:
        doc = {
            "format": pretrain.SWEEP_FORMAT,
            "version": pretrain.SWEEP_VERSION,
            "name": opts.name,
            "command": [Path(command[0]).name] + command[1:],
            "ranks": opts.ranks,
            "nodes": 1,
            "space": space.to_json(),
            "baseline": baseline,
            "objective": {"name": obj.name, "direction": obj.direction, "unit": obj.unit},
            "default": {"runs": [], "reference": None},
            "points": [
                {"values": [space.dimensions[i].values[j] for i, j in enumerate(p)], "runs": [], "took_effect": None}
                for p in points
            ],
            "meta": {
                "seed": opts.seed,
                "repeats": opts.repeats,
                "default_every": opts.default_every,
                "host": platform.node(),
                "python": platform.python_version(),
                "scratch": opts.scratch,
                "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "done": 0,
                "failures": 0,
            },
        }
    lock = TimingLock(opts.lock, opts.chunk, opts.pause)
    scratch = Path(tempfile.mkdtemp(prefix="tunio-sweep-", dir=opts.scratch))
    evaluator = JobEvaluator(command, launch.make("local", opts.ranks), obj, scratch, opts.timeout)
    start = time.monotonic()
    try:
        for step in range(doc["meta"]["done"], len(order)):
            lock.hold()
            entry = order[step]
            if entry == DEFAULT:
                flat, rec = {}, doc["default"]
            else:
                flat = settings.complete(
                    space.point_settings(dict(zip((d.name for d in space.dimensions), doc["points"][entry]["values"])))
                )
                rec = doc["points"][entry]
            run_doc = trial_doc(baseline, flat)
            m = evaluator.evaluate(run_doc, f"run-{step:05d}")
            if m.fault:
                sys.exit(m.fault)
            if not m.ok:
                doc["meta"]["failures"] += 1
                rec["error"] = (m.error or "failed")[-300:]
            else:
                rec["runs"].append(round(m.value, 4))
                if entry == DEFAULT and doc["default"]["reference"] is None:
                    doc["default"]["reference"] = reference_of(m)
                elif entry != DEFAULT and rec["took_effect"] is None and doc["default"]["reference"] is not None:
                    sig = signature(effective_of(m, run_doc), doc["default"]["reference"])
                    rec["took_effect"] = sorted(json.loads(sig))
            doc["meta"]["done"] = step + 1
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
            tmp.replace(out)
            if (step + 1) % 50 == 0:
                print(f"{opts.name}: {step + 1}/{len(order)} runs, {time.monotonic() - start:.0f}s", flush=True)
    finally:
        lock.release()
        shutil.rmtree(scratch, ignore_errors=True)
    doc["meta"]["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(
        f"{opts.name}: {len(order)} runs in {time.monotonic() - start:.0f}s, {doc['meta']['failures']} failed; "
        f"saved {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
