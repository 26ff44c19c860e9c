#!/usr/bin/env python3
"""Exhaustive interleaved sweep of a search space on a real application.

Every point of the space is measured --repeats times: each round visits all
points in a new random order, and the default settings (the baseline) run
between every --default-every points, so drift and bursts of load hit every
point alike and the default's runs measure the noise. Then the --refine-top
best points get --refine-repeats more rounds, interleaved with the default,
so the best is judged on more than a few runs.

The recording (JSON, gzip-compressed when the name ends in .gz) holds per
point its settings and every measured write and read time, plus the
default's runs, the machine, the date and the command, a run report of the
default and the machine's calibration (what the hybrid and auto strategies
predict from). `iotuner tune --replay FILE` tunes it;
python/iotuner/tune/replay.py describes the format.

The sweep is resumable: it saves after every few runs and, started again
with the same arguments, continues where it stopped. With --lock FILE it
holds the timing lock for at most --chunk at a time and leaves it free for
--pause between chunks, so others can run their benchmarks.

A recording made before recordings carried the model's input gets it with
--model-input: one run of the default (not added to its runs) for the report,
and this machine's calibration.

At the end (or with --analyse, without running anything) it prints the
analysis: the noise, the best point, which of its knobs it needs, and what
each single-knob change from the baseline reaches.

    bench/sweep.py --space bandio --baseline bench/data/bandio-baseline.json \\
        --out bench/data/bandio-sweep.json.gz --lock /tmp/iotuner-timing.lock \\
        -- bandio -n 64K -c 16 -s 8K -g 1 -r -o {scratch}
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import itertools
import json
import os
import platform
import random
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from scipy import stats

from iotuner import settings
from iotuner.perfmodel import calibration
from iotuner.tune import launch, replay
from iotuner.tune import objective as objectives
from iotuner.tune import space as spaces
from iotuner.tune.evaluate import JobEvaluator

SAVE_EVERY = 25  # runs between saves
QUIET = 0.25  # cores other processes may use during a run that counts as quiet
MIB = 1024.0 * 1024.0


# ---- the schedule


def schedule(
    rec: replay.Recording, seed: int, repeats: int, every: int, refine: list[int], refine_repeats: int
) -> list[int]:
    """The order of all runs: point indices, -1 for the default. Deterministic, so a resumed sweep
    continues the same order."""
    order: list[int] = [-1]
    rounds = [list(range(len(rec.points)))] * repeats + [list(refine)] * (refine_repeats if refine else 0)
    for r, points in enumerate(rounds):
        points = list(points)
        random.Random(f"{seed}:{r}").shuffle(points)
        for i, p in enumerate(points):
            order.append(p)
            if (i + 1) % every == 0:
                order.append(-1)
        order.append(-1)
    return order


def machine(scratch: Path) -> dict:
    def first_line(cmd: list[str]) -> str | None:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
        return out.splitlines()[0] if out else None

    fs = None
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
        best = max((m for m in mounts if str(scratch.resolve()).startswith(m[1])), key=lambda m: len(m[1]))
        fs = f"{best[2]} on {best[1]}"
    except (OSError, ValueError):
        pass
    return {
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "mpi": first_line(["mpichversion"]) or first_line(["mpiexec", "--version"]),
        "hdf5": first_line(["pkg-config", "--modversion", "hdf5-mpich"]),
        "scratch": fs,
        "python": platform.python_version(),
    }


class CpuMeter:
    """How much CPU other processes used while a run ran, in cores: the machine's busy time from
    /proc/stat, less this process's and its finished children's (the job's) own."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self):
        self.ok = Path("/proc/stat").exists()

    def _now(self) -> tuple[float, float, float]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        busy = sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)  # all but idle and iowait
        mine = sum(
            resource.getrusage(who)[0] + resource.getrusage(who)[1]
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return time.monotonic(), busy / self.TICK, mine

    def start(self) -> None:
        self.t0 = self._now() if self.ok else None

    def stop(self) -> float | None:
        if self.t0 is None:
            return None
        t1 = self._now()
        wall = t1[0] - self.t0[0]
        return max(0.0, (t1[1] - self.t0[1]) - (t1[2] - self.t0[2])) / wall if wall > 0 else None


class Lock:
    """The shared timing lock (flock(2), as flock(1) takes it), held for one chunk of runs."""

    def __init__(self, path: str | None):
        self.path, self.fd = path, None

    def __enter__(self):
        if self.path:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            waited = time.monotonic()
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            waited = time.monotonic() - waited
            if waited > 1:
                print(f"  (waited {waited:.0f}s for the timing lock)", flush=True)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def scratch_dir(opts):
    """A fresh directory for the runs, removed afterwards."""
    return tempfile.TemporaryDirectory(prefix="iotuner-sweep-", dir=Path(opts.scratch or tempfile.gettempdir()))


def evaluator(opts, rec: replay.Recording, obj: objectives.Objective, scratch: str) -> JobEvaluator:
    """Runs the recording's application on --ranks local ranks, in `scratch`."""
    return JobEvaluator(
        rec.runnable_command(), launch.make("local", opts.ranks, opts.mpiexec), obj, Path(scratch), opts.timeout
    )


def run_sweep(opts, rec: replay.Recording, out: Path) -> bool:
    """Runs what is left of the schedule, chunk by chunk; True when the sweep is complete."""
    obj = objectives.parse(rec.meta["schedule"]["objective"])
    sched = rec.meta["schedule"]
    with scratch_dir(opts) as scratch:
        ev = evaluator(opts, rec, obj, scratch)
        chunks = 0
        while True:
            order = schedule(
                rec,
                sched["seed"],
                sched["repeats"],
                sched["default_every"],
                sched["refine"] or [],
                sched["refine_repeats"],
            )
            if sched["done"] >= len(order):
                if sched["refine"] is not None or not sched["refine_top"]:
                    return True
                sched["refine"] = refine_points(rec, obj, sched["refine_top"])  # the main rounds are over
                rec.save(out)
                continue
            if chunks == opts.max_chunks:
                print(f"  stopped after {chunks} chunk(s); run again to continue", flush=True)
                return False
            chunks += 1
            first = sched["done"]
            with Lock(opts.lock):
                chunk_start = time.monotonic()  # the chunk's time counts from holding the lock
                while sched["done"] < len(order) and (
                    time.monotonic() - chunk_start < opts.chunk or sched["done"] == first
                ):
                    index = order[sched["done"]]
                    measure(ev, rec, rec.default if index < 0 else rec.points[index], index, sched["done"])
                    sched["done"] += 1
                    if sched["done"] % SAVE_EVERY == 0:
                        rec.meta["updated"] = now()
                        rec.save(out)
                rec.meta["updated"] = now()
                rec.save(out)
            measured = sum(1 for _ in rec.measured())
            print(
                f"  {sched['done']}/{len(order)} runs, {measured}/{len(rec.points)} points measured "
                f"({time.monotonic() - chunk_start:.0f}s chunk)",
                flush=True,
            )
            if sched["done"] < len(order):
                print(f"  the lock is free for {opts.pause:.0f}s", flush=True)
                time.sleep(opts.pause)


def measure(ev: JobEvaluator, rec: replay.Recording, point: replay.RecordedPoint, index: int, n: int) -> None:
    label = f"sweep-{n:06d}"
    doc = settings.from_flat(rec.flat_of(point))
    meter = CpuMeter()
    meter.start()
    m = ev.evaluate(doc, label)
    others = meter.stop()
    run = None
    if m.ok:
        d = m.details
        bw, br = d.get("bytes_written") or 0, d.get("bytes_read") or 0
        if rec.bytes_written is None:
            rec.bytes_written, rec.bytes_read = bw, br
        if (bw, br) != (rec.bytes_written, rec.bytes_read):
            m.ok, m.error = False, f"moved {bw} / {br} bytes, other runs {rec.bytes_written} / {rec.bytes_read}"
        else:
            run = (bw / MIB / d["write_mib_s"] if bw else 0.0, br / MIB / d["read_mib_s"] if br else 0.0)
            if others is not None:
                run += (others,)
    if index < 0 and not m.ok and not rec.default.runs:
        sys.exit(f"sweep: the application fails with the baseline settings: {m.error}")
    if point is rec.default and m.ok and rec.report is None:
        rec.report = portable(m.report, rec, ev)  # the default's access pattern, for the strategies that model it
    rec.add_run(point, m, run)


def portable(report: dict | None, rec: replay.Recording, ev: JobEvaluator) -> dict | None:
    """The report without this machine's paths: the scratch directory as {scratch}, a bundled kernel's
    executable as its name (as the recording's command has them)."""
    if report is None:
        return None
    # the scratch directory, also where a name's numbers are folded to # (a phase's identity)
    folded = "".join(
        r"(?:\d+|#)" if part.isdigit() else re.escape(part) for part in re.split(r"(\d+)", str(ev.scratch)) if part
    )
    text = re.sub(folded, "{scratch}", json.dumps(report))
    exe = rec.runnable_command()[0]
    if exe != rec.command[0]:
        text = text.replace(json.dumps(exe)[1:-1], rec.command[0])
    return json.loads(text)


def model_input(opts, out: Path) -> int:
    """Adds a run report of the default and the calibration to a recording that lacks them."""
    rec = replay.load(out)
    added = []
    if rec.report is None:
        with scratch_dir(opts) as scratch, Lock(opts.lock):
            ev = evaluator(opts, rec, objectives.parse(rec.meta["schedule"]["objective"]), scratch)
            m = ev.evaluate(settings.from_flat(rec.flat_of(rec.default)), "model-input")
        if not m.ok or not m.report:
            sys.exit(f"sweep: the default's run wrote no report: {m.error}")
        rec.report = portable(m.report, rec, ev)
        added.append("a run report of one more run of the default")
    if rec.calibration is None:
        try:
            rec.calibration = json.loads(Path(opts.calibration or calibration.default_path()).read_text())
            added.append("the calibration")
        except FileNotFoundError as e:
            print(f"no calibration added: {e.filename} does not exist (`iotuner calibrate` makes it)")
    if added:
        rec.meta.setdefault("notes", []).append(
            f"{now()}: --model-input added {' and '.join(added)}; the runs are as recorded"
        )
        rec.save(out)
    print(f"{out}: {'added ' + ' and '.join(added) if added else 'has a report and a calibration already'}")
    return 0


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# ---- analysis


def best_points(rec: replay.Recording, obj: objectives.Objective, k: int) -> list[int]:
    meds = [(rec.median(p, obj), i) for i, p in enumerate(rec.points) if p.runs]
    meds.sort(key=lambda t: obj.key(t[0]), reverse=True)
    return [i for _, i in meds[:k]]


def baseline_values(rec: replay.Recording) -> tuple | None:
    """The point whose settings are the baseline's: per dimension the value the baseline sets, or
    for a knob it leaves unset, None or the value in effect in the default's runs (read back, as
    MPI-IO hints are; else the library's documented default). An application may set HDF5 knobs
    itself (bandio asks for collective transfers): a baseline that names them avoids the guess."""
    base = settings.flatten(rec.baseline)
    seen = rec.default.effective or {}

    def same(knob, value) -> bool:
        if knob in base:
            return base[knob] == value
        if knob in seen:
            return seen[knob] == settings.as_text(value)
        default = spaces.library_default(knob)
        return default is not None and settings.flatten(settings.from_flat({knob: default}))[knob] == value

    out = []
    for d in rec.space.dimensions:
        for v in d.values:
            mine = settings.flatten(settings.from_flat(settings.complete(d.settings_of(v), rec.nodes)))
            if (v is None and not d.knobs() & base.keys()) or (mine and all(same(k, x) for k, x in mine.items())):
                out.append(v)
                break
        else:
            return None
    return tuple(out)


def analyse(rec: replay.Recording, obj: objectives.Objective, boot: int = 2000, seed: int = 0) -> dict:
    """The numbers the sweep is recorded for; also printed by `report`."""
    dims = rec.space.dimensions
    by_values = {tuple(json.dumps(v) for v in p.values): i for i, p in enumerate(rec.points)}
    meds = {i: rec.median(p, obj) for i, p in enumerate(rec.points) if p.runs}
    best = max(meds, key=lambda i: obj.key(meds[i]))
    default_runs = [rec.value(r, obj) for r in rec.default.runs]
    base_vals = baseline_values(rec)
    base_idx = by_values.get(tuple(json.dumps(v) for v in base_vals)) if base_vals is not None else None

    def idx_with(values: tuple) -> int | None:
        return by_values.get(tuple(json.dumps(v) for v in values))

    out: dict = {
        "objective": obj.name,
        "points": len(rec.points),
        "measured": len(meds),
        "runs": sum(len(p.runs) for p in rec.points),
        "failures": sum(p.failures for p in rec.points),
        "best": best,
        "best_median": meds[best],
        "default_median": statistics.median(default_runs),
        "default_runs": len(default_runs),
        "baseline_point": base_idx,
    }
    # noise: the default's spread, each point's spread, and how well two halves of the runs agree
    dm = statistics.median(default_runs)
    out["default_cv"] = 1.4826 * statistics.median(abs(v - dm) for v in default_runs) / dm
    cvs = []
    for p in rec.points:
        vals = [rec.value(r, obj) for r in p.runs]
        if len(vals) >= 3:
            m = statistics.median(vals)
            cvs.append(1.4826 * statistics.median(abs(v - m) for v in vals) / m)
    out["point_cv_median"] = statistics.median(cvs) if cvs else None
    halves = [
        (
            obj.key(statistics.median(rec.value(r, obj) for r in p.runs[0::2])),
            obj.key(statistics.median(rec.value(r, obj) for r in p.runs[1::2])),
        )
        for p in rec.points
        if len(p.runs) >= 2
    ]
    if len(halves) > 2:
        a, b = np.array(halves).T
        out["halves_rank_correlation"] = float(np.corrcoef(np.argsort(np.argsort(a)), np.argsort(np.argsort(b)))[0, 1])
    third = max(1, len(default_runs) // 3)
    out["default_drift"] = statistics.median(default_runs[-third:]) / statistics.median(default_runs[:third])

    if base_idx is None:
        out["note"] = "the baseline is not a point of the space: no single-knob table"
        return out
    best_vals = rec.points[best].values
    changed = [j for j in range(len(dims)) if json.dumps(best_vals[j]) != json.dumps(base_vals[j])]
    out["baseline_median"] = meds.get(base_idx)
    out["best_changes"] = {dims[j].name: best_vals[j] for j in changed}
    # leave one out: the best point with one of its changes undone
    out["leave_one_out"] = []
    for j in changed:
        vals = list(best_vals)
        vals[j] = base_vals[j]
        i = idx_with(tuple(vals))
        out["leave_one_out"].append(
            {"dimension": dims[j].name, "back_to": base_vals[j], "point": i, "median": meds.get(i)}
        )
    # single-knob changes from the baseline
    singles = []
    for j, d in enumerate(dims):
        for v in d.values:
            if json.dumps(v) == json.dumps(base_vals[j]):
                continue
            vals = list(base_vals)
            vals[j] = v
            i = idx_with(tuple(vals))
            if i in meds:
                singles.append({"dimension": d.name, "value": v, "point": i, "median": meds[i]})
    out["singles"] = singles
    pairs = []
    for j1, j2 in itertools.combinations(range(len(dims)), 2):
        for v1 in dims[j1].values:
            for v2 in dims[j2].values:
                if json.dumps(v1) == json.dumps(base_vals[j1]) or json.dumps(v2) == json.dumps(base_vals[j2]):
                    continue
                vals = list(base_vals)
                vals[j1], vals[j2] = v1, v2
                i = idx_with(tuple(vals))
                if i in meds:
                    pairs.append((meds[i], i, dims[j1].name, v1, dims[j2].name, v2))
    if pairs:
        m, i, n1, v1, n2, v2 = max(pairs, key=lambda t: obj.key(t[0]))
        out["best_pair"] = {"point": i, "median": m, "changes": {n1: v1, n2: v2}}
    # bootstrap: resample every point's runs; how the best single change compares with the best point
    rng = np.random.default_rng(seed)
    single_idx = [s["point"] for s in singles]
    cand = sorted(set(single_idx) | {best} | set(best_points(rec, obj, 20)))
    runs = {i: np.array([rec.value(r, obj) for r in rec.points[i].runs]) for i in cand}
    ratios = []
    for _ in range(boot):
        med = {i: float(np.median(rng.choice(runs[i], size=len(runs[i])))) for i in cand}
        top = max((med[i] for i in cand), key=obj.key)
        ratios.append(obj.gain(max((med[i] for i in single_idx), key=obj.key), top))
    out["single_over_best"] = obj.gain(max((s["median"] for s in singles), key=obj.key), meds[best])
    if ratios:
        out["single_over_best_ci"] = [float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))]
    return out


def refine_points(rec: replay.Recording, obj: objectives.Objective, k: int) -> list[int]:
    """The points measured again after the main rounds: the k best, and those the analysis compares
    (the point that is the baseline, its single-knob changes, the best point with one change undone)."""
    a = analyse(rec, obj, boot=0)
    extra = (
        [a.get("baseline_point")]
        + [s["point"] for s in a.get("singles", [])]
        + [x["point"] for x in a.get("leave_one_out", [])]
    )
    out = best_points(rec, obj, k)
    return out + sorted({i for i in extra if i is not None} - set(out))


def quiet(rec: replay.Recording, limit: float) -> replay.Recording:
    """The recording with only the runs during which other processes used at most `limit` cores."""

    def keep(p: replay.RecordedPoint) -> replay.RecordedPoint:
        return replay.RecordedPoint(
            p.values, [r for r in p.runs if len(r) > 2 and r[2] <= limit], p.failures, p.error, p.effective
        )

    out = copy.copy(rec)
    out.default, out.points, out._index = keep(rec.default), [keep(p) for p in rec.points], None
    return out


def load_effect(rec: replay.Recording, obj: objectives.Objective, limit: float) -> str | None:
    """How the default's runs depend on the other processes' CPU use."""
    runs = [r for r in rec.default.runs if len(r) > 2]
    if len(runs) < 10:
        return None
    vals, load = [rec.value(r, obj) for r in runs], [r[2] for r in runs]
    rho = stats.spearmanr(load, vals).statistic
    calm = [v for v, x in zip(vals, load) if x <= limit]
    busy = [v for v, x in zip(vals, load) if x > limit]
    text = f"the default's runs against the CPU other processes used meanwhile: rank correlation {rho:.2f}"
    if calm and busy:
        text += (
            f"; median {fmt(statistics.median(calm), obj)} at most {limit:g} cores ({len(calm)} runs), "
            f"{fmt(statistics.median(busy), obj)} above ({len(busy)} runs)"
        )
    return text


def fmt(v, obj) -> str:
    if v is None:
        return "-"
    return f"{v * 1000:.1f} ms" if obj.unit == "s" else f"{v:,.0f} {obj.unit}"


def report(rec: replay.Recording, obj: objectives.Objective) -> dict:
    a = analyse(rec, obj)
    dims = rec.space.dimensions
    print(
        f"\nsweep of space {rec.space.name} ({a['points']} points, {a['measured']} measured; {a['runs']} runs, "
        f"{a['failures']} failed; default {a['default_runs']} runs), objective {obj.name}"
    )
    print(f"  command: {' '.join(rec.command)}")
    point_cv = f"{a['point_cv_median']:.0%}" if a["point_cv_median"] is not None else "-"
    print(
        f"  noise: the default's runs {fmt(a['default_median'], obj)} median, robust CV {a['default_cv']:.0%}, "
        f"last third / first third {a['default_drift']:.2f}; median robust CV of a point's runs {point_cv}"
    )
    if "halves_rank_correlation" in a:
        print(
            f"  repeatability: rank correlation of the points' medians over odd and even runs "
            f"{a['halves_rank_correlation']:.2f}"
        )
    b = a["best_median"]
    effect = load_effect(rec, obj, QUIET)
    if effect:
        print(f"  {effect}")
    gain = obj.gain(b, a["default_median"])
    print(f"  best point: {fmt(b, obj)} ({gain:.2f}x the default's runs)")
    if "note" in a:
        print(f"  {a['note']}")
        return a
    print(
        f"  the point that is the baseline: {fmt(a['baseline_median'], obj)}; the best changes "
        + ", ".join(f"{k}={json.dumps(v)}" for k, v in a["best_changes"].items())
    )
    print("  the best point with one of its changes undone:")
    for x in a["leave_one_out"]:
        m = x["median"]
        print(
            f"    {x['dimension']:28s} back to {json.dumps(x['back_to']):14s} "
            + (f"{fmt(m, obj):>10s}  {obj.gain(m, b):6.0%} of the best" if m else "not measured")
        )
    print("  single-knob changes from the baseline (gain over the default's runs; share of the best point's speed):")
    base_m = a["default_median"]
    for s in sorted(a["singles"], key=lambda s: obj.key(s["median"]), reverse=True):
        print(
            f"    {s['dimension']:28s} = {json.dumps(s['value']):16s} {fmt(s['median'], obj):>10s}  "
            f"{obj.gain(s['median'], base_m):5.2f}x  {obj.gain(s['median'], b):6.0%}"
        )
    if "best_pair" in a:
        p = a["best_pair"]
        print(
            f"  best two-knob change: {', '.join(f'{k}={json.dumps(v)}' for k, v in p['changes'].items())}: "
            f"{fmt(p['median'], obj)}, {obj.gain(p['median'], b):.0%} of the best"
        )
    lo, hi = a.get("single_over_best_ci", (float("nan"), float("nan")))
    print(
        f"  the best single-knob change reaches {a['single_over_best']:.0%} of the best point's speed "
        f"(bootstrap 95% interval {lo:.0%}-{hi:.0%})"
    )

    q = quiet(rec, QUIET)
    share = sum(len(p.runs) for p in q.points) / max(1, sum(len(p.runs) for p in rec.points))
    if share > 0.05 and q.default.runs:
        qa = analyse(q, obj, boot=500)
        loo = ", ".join(
            f"{x['dimension']} {obj.gain(x['median'], qa['best_median']):.0%}"
            for x in qa.get("leave_one_out", [])
            if x["median"] is not None
        )
        if "single_over_best" in qa:
            lo, hi = qa.get("single_over_best_ci", (float("nan"), float("nan")))
            print(
                f"  on quiet runs only (other processes at most {QUIET:g} cores: {share:.0%} of the runs): best "
                f"{fmt(qa['best_median'], obj)}; the best single-knob change reaches {qa['single_over_best']:.0%} "
                f"of it ({lo:.0%}-{hi:.0%}); one change undone: {loo}"
            )
    top = best_points(rec, obj, 5)
    print("  top points:")
    for i in top:
        p = rec.points[i]
        ch = {d.name: v for d, v, bv in zip(dims, p.values, baseline_values(rec)) if json.dumps(v) != json.dumps(bv)}
        print(
            f"    {fmt(rec.median(p, obj), obj):>10s} ({len(p.runs)} runs)  "
            + " ".join(f"{k}={json.dumps(v)}" for k, v in ch.items())
        )
    return a


# ---- command line


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--space", required=True, metavar="NAME|FILE", help="search space (as iotuner tune --space)")
    ap.add_argument("--baseline", metavar="FILE", help="settings every run has under its point (default none)")
    ap.add_argument(
        "--out", required=True, metavar="FILE", help="the recording (.json or .json.gz); resumed when it exists"
    )
    ap.add_argument("--objective", default="io-time", help="for the refinement and the analysis (default io-time)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds over every point (default 3)")
    ap.add_argument(
        "--default-every",
        type=int,
        default=20,
        metavar="K",
        help="a run of the default after every K points (default 20)",
    )
    ap.add_argument(
        "--refine-top",
        type=int,
        default=30,
        metavar="K",
        help="best points measured again, with those the analysis compares (default 30; 0: none)",
    )
    ap.add_argument("--refine-repeats", type=int, default=6, metavar="R", help="their extra rounds (default 6)")
    ap.add_argument("--seed", type=int, default=0, help="of the random orders (default 0)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--scratch", metavar="DIR", help="where runs write (default: the temporary directory)")
    ap.add_argument("--timeout", type=float, default=120, metavar="S", help="seconds per run (default 120)")
    ap.add_argument("--lock", metavar="FILE", help="hold this flock only while a chunk runs")
    ap.add_argument("--chunk", type=float, default=540, metavar="S", help="seconds per chunk (default 540)")
    ap.add_argument("--pause", type=float, default=20, metavar="S", help="seconds between chunks (default 20)")
    ap.add_argument("--max-chunks", type=int, metavar="N", help="stop after N chunks (run again to continue)")
    ap.add_argument("--analyse", action="store_true", help="only print the analysis of --out")
    ap.add_argument(
        "--model-input",
        action="store_true",
        help="only add what the hybrid and auto strategies predict from to --out, when it lacks it: a "
        "run report of one more run of the default (not added to its runs) and the calibration",
    )
    ap.add_argument(
        "--calibration",
        metavar="FILE",
        help="keep this calibration (`iotuner calibrate` on the machine the sweep runs on) in the "
        "recording, for the strategies that price the default's operations (default: this "
        "machine's calibration file, when there is one)",
    )
    ap.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- APP ARGS",
        help="the application (a bundled kernel's name or a path); {scratch} is each run's directory",
    )
    opts = ap.parse_args()
    out = Path(opts.out)
    obj = objectives.parse(opts.objective)
    if opts.analyse:
        report(replay.load(out), obj)
        return 0
    if opts.model_input:
        return model_input(opts, out)
    command = opts.command[1:] if opts.command and opts.command[0] == "--" else opts.command
    if not command:
        ap.error("give the application after --")
    space = spaces.load(opts.space)
    baseline = settings.load(opts.baseline) if opts.baseline else {"version": 1}
    fresh = replay.Recording.new(space, baseline, command, 1)
    if out.exists():
        rec = replay.load(out)
        same = (rec.space.to_json() == fresh.space.to_json(), rec.baseline == fresh.baseline, rec.command == command)
        if not all(same):
            what = [w for w, s in zip(("space", "baseline", "command"), same) if not s]
            sys.exit(f"sweep: {out} records another {' and '.join(what)}; give another --out")
        print(f"resuming {out}: {rec.meta['schedule']['done']} runs done")
    else:
        rec = fresh
        try:
            rec.calibration = json.loads(Path(opts.calibration or calibration.default_path()).read_text())
        except FileNotFoundError:
            if opts.calibration:
                raise
        scratch = Path(opts.scratch or tempfile.gettempdir())
        rec.meta = {
            "created": now(),
            "machine": machine(scratch),
            "scratch": str(scratch),
            "launcher": f"{opts.mpiexec} -n {opts.ranks}",
            "sweep_command": " ".join(shlex.quote(a) for a in sys.argv),
            "schedule": {
                "seed": opts.seed,
                "repeats": opts.repeats,
                "default_every": opts.default_every,
                "refine_top": opts.refine_top,
                "refine_repeats": opts.refine_repeats,
                "objective": opts.objective,
                "done": 0,
                "refine": None,
            },
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        rec.save(out)
    total = len(schedule(rec, opts.seed, opts.repeats, opts.default_every, [], 0))
    print(
        f"sweep of {space.name}: {len(rec.points)} points x {opts.repeats} + the default every "
        f"{opts.default_every}: {total} runs, then {opts.refine_top} best x {opts.refine_repeats}",
        flush=True,
    )
    start = time.time()
    if opts.objective != rec.meta["schedule"]["objective"]:
        sys.exit(
            f"sweep: {out} refines by {rec.meta['schedule']['objective']}; --objective only applies to "
            f"--analyse of a finished sweep"
        )
    if not run_sweep(opts, rec, out):
        return 0
    print(f"complete ({time.time() - start:.0f}s in this session)")
    report(rec, obj)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (
        spaces.SpaceError,
        settings.SettingsError,
        objectives.ObjectiveError,
        launch.LaunchError,
        replay.ReplayError,
    ) as e:
        sys.exit(f"sweep: {e}")
