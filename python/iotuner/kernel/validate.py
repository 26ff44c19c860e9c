"""Self-validation: run the application and its kernel under the runtime and compare
what their run reports say, phase by phase: bytes written and read, I/O
calls, and the time of one evaluation."""

from __future__ import annotations

import glob
import json
import shlex
import shutil
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import native, runner

SCRATCH = "{scratch}"


@dataclass
class Launch:
    kind: str = "local"  # local: mpiexec -n RANKS; none: the command as given
    ranks: int = 2
    mpiexec: str = "mpiexec.mpich"

    def wrap(self, app: list[str]) -> list[str]:
        if self.kind != "local":
            return list(app)
        return [*shlex.split(self.mpiexec), "-n", str(self.ranks), *app]  # a launcher with options of its own

    def as_dict(self) -> dict:
        return {"kind": self.kind, "ranks": self.ranks, "mpiexec": self.mpiexec}


@dataclass
class Run:
    role: str
    ok: bool
    elapsed: float
    phases: dict[tuple, dict]  # by phase_key
    console_lines: int
    error: str | None = None
    loops: dict[int, dict] = field(default_factory=dict)
    opened_in: dict[tuple[str, int], int] = field(default_factory=dict)
    opened_as: dict[tuple, tuple[str, int]] = field(default_factory=dict)  # phase key -> (file, occurrence)


def phase_key(p: dict, file: str) -> tuple[str, str, int, str]:
    """What matches a phase of two runs, as the runtime matched the ranks' records (docs/report.md):
    a file written one per process by several ranks by its name pattern and step, any other phase by its
    file and occurrence. (kind, name, index, matched_by)."""
    if p.get("grouped_by") == "step":
        return (p["kind"], native.core().identity(file), int(p.get("step") or 0), "step")
    return (p["kind"], file, p.get("occurrence", 0), "occurrence")


def _phase_counts(p: dict) -> dict:
    level = p.get("data_level") or "posix"
    part = p.get(level, {}) if isinstance(p.get(level), dict) else {}
    if level == "hdf5":
        calls = part.get("dataset_writes", 0) + part.get("dataset_reads", 0)
    else:
        calls = part.get("write_calls", 0) + part.get("read_calls", 0)
    posix = p.get("posix", {}) or {}
    return {
        "written": p.get("bytes_written", 0),
        "read": p.get("bytes_read", 0),
        "calls": calls,
        "level": level,
        "posix_calls": posix.get("write_calls", 0) + posix.get("read_calls", 0),
    }


def _normal(path: str, scratch: Path, prefix: str | None) -> str:
    if prefix:
        pre = str(Path(prefix)).rstrip("/")
        if path.startswith(pre + "/"):
            path = path[len(pre) :]
    s = str(scratch)
    if path == s or path.startswith(s + "/"):
        path = SCRATCH + path[len(s) :]
    return path


def run_once(
    role: str,
    index: int,
    command: list[str],
    launch: Launch,
    workdir: Path,
    cwd: Path | None,
    timeout: float | None,
    prefix: str | None = None,
    env_extra: dict[str, str] | None = None,
) -> Run:
    scratch = workdir / f"{role}-{index}"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    env = None
    stats_dir = workdir / f"{role}-{index}.iotk"  # beside the run's directory: the application owns that one
    if env_extra is not None:
        import os

        if stats_dir.exists():
            shutil.rmtree(stats_dir)
        stats_dir.mkdir()
        env = dict(os.environ, IOTUNER_KERNEL_STATS=str(stats_dir), **env_extra)
    argv = [a.replace(SCRATCH, str(scratch)) for a in command]
    report = workdir / f"{role}-{index}.report.json"
    try:
        r = runner.run(launch.wrap(argv), report=report, capture=True, timeout=timeout, cwd=cwd, env=env)
    except OSError as e:
        return Run(role, False, 0.0, {}, 0, f"cannot start {argv[0]}: {e.strerror or e}")
    (workdir / f"{role}-{index}.out").write_text((r.stdout or "") + (r.stderr or ""))
    console = len((r.stdout or "").splitlines()) + len((r.stderr or "").splitlines())
    error = None
    if r.timed_out:
        error = f"timed out after {timeout:.0f} s"
    elif r.returncode != 0:
        tail = (r.stderr or r.stdout or "").strip().splitlines()[-2:]
        error = f"exited with status {r.returncode}" + (f": {' / '.join(tail)}" if tail else "")
    elif r.report is None:
        error = r.report_error or "no run report"
    phases: dict[tuple, dict] = {}
    opened_as: dict[tuple, tuple[str, int]] = {}
    if r.report is not None:
        for p in r.report.phases:
            file = _normal(p["file"], scratch, prefix)
            key = phase_key(p, file)
            phases[key] = _phase_counts(p)
            opened_as[key] = (file, p.get("occurrence", 0))
    run = Run(role, error is None, r.elapsed, phases, console, error, opened_as=opened_as)
    if env_extra is not None:
        run.loops, run.opened_in = _loop_stats(stats_dir, scratch, prefix)
    if prefix:
        _remove_mirror(Path(prefix), scratch)
    return run


def _remove_mirror(prefix: Path, scratch: Path) -> None:
    """Removes what the kernel wrote under the path prefix for this run's directory (often in
    /dev/shm), and the directories left empty, up to the prefix."""
    mirror = prefix / str(scratch).lstrip("/")
    shutil.rmtree(mirror, ignore_errors=True)
    d = mirror.parent
    while d != prefix and prefix in d.parents:
        try:
            d.rmdir()
        except OSError:
            break
        d = d.parent


def _loop_stats(d: Path, scratch: Path, prefix: str | None) -> tuple[dict[int, dict], dict[tuple[str, int], int]]:
    """Per reduced loop: entries, trips and iterations run (all processes); and per (file,
    occurrence) the reduced loop that was running when a process opened it (0: none)."""
    loops: dict[int, dict] = {}
    opened: dict[tuple[str, int], int] = {}
    for path in sorted(glob.glob(str(d / "loops.*.json"))):
        try:
            doc = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError):
            continue
        for loop in doc.get("loops", []):
            agg = loops.setdefault(int(loop["id"]), {"entries": 0, "reduced_entries": 0, "trips": 0, "run": 0})
            for k in agg:
                agg[k] += int(loop.get(k, 0))
        seen: dict[str, int] = {}
        for file, loop_id in doc.get("opens", []):
            f = _normal(file, scratch, prefix)
            occ = seen.get(f, 0)
            seen[f] = occ + 1
            opened.setdefault((f, occ), int(loop_id))
    return loops, opened


def loop_scale(loops: dict[int, dict]) -> float:
    """Iterations the application runs per iteration the kernel ran, over the reduced loops."""
    trips = sum(v["trips"] for v in loops.values())
    ran = sum(v["run"] for v in loops.values())
    return trips / ran if ran else 1.0


def _pct(kernel: float, app: float) -> float | None:
    if app == 0:
        return 0.0 if kernel == 0 else None
    return abs(kernel - app) / app * 100.0


_MEASURES = ("written", "read", "calls", "posix_calls")


def dropped_logs(app: Run, kernel: Run) -> set[tuple]:
    """The application's files written through stdio alone that the kernel has not: its logging (fprintf to a
    file), which a kernel drops as it drops console output; not compared, as console lines are not."""
    return {key for key, p in app.phases.items() if p["level"] == "stdio" and key not in kernel.phases}


def compare(app: Run, kernel: Run, tolerance: float) -> dict:
    """Per-phase and total figures; 'match' says whether bytes agree within tolerance (a fraction)."""
    phases, mismatches, logs = [], [], dropped_logs(app, kernel)
    for key in sorted(set(app.phases) | set(kernel.phases), key=lambda k: (k[1], k[2], k[0], k[3])):
        a, k = app.phases.get(key), kernel.phases.get(key)
        kind, name, index, matched_by = key
        phases.append(
            {"kind": kind, "file": name, "occurrence": index, "matched_by": matched_by, "app": a, "kernel": k}
        )
        if key in logs:
            phases[-1]["dropped"] = "written through stdio by the application only: its logging"
            continue
        if a is None or k is None:
            mismatches.append(
                f"{name} ({matched_by} {index}, {kind}): only the "
                f"{'kernel' if a is None else 'application'} has this phase"
            )
            continue
        for what in ("written", "read"):
            if abs(k[what] - a[what]) > tolerance * a[what]:
                mismatches.append(
                    f"{name} ({matched_by} {index}): bytes {what} application {a[what]}, kernel {k[what]}"
                )
    totals = {}
    for what in _MEASURES:
        sa = sum(p[what] for key, p in app.phases.items() if key not in logs)
        sk = sum(p[what] for p in kernel.phases.values())
        totals[what] = {"app": sa, "kernel": sk, "error_pct": _pct(sk, sa)}
    return {"match": not mismatches, "mismatches": mismatches, "phases": phases, "totals": totals}


def predict(app: Run, reduced: Run) -> dict:
    """The paper's Fig. 8c for a reduced kernel: each phase's figures times the factor of the
    reduced loop that opened it (trips / iterations run), against the application's."""
    factors = {lid: (v["trips"] / v["run"] if v["run"] else 1.0) for lid, v in reduced.loops.items()}
    out: dict = {"loop_factors": {str(k): v for k, v in factors.items()}}
    logs = dropped_logs(app, reduced)
    for what in _MEASURES:
        sa = sum(p[what] for key, p in app.phases.items() if key not in logs)
        sk = sum(p[what] for p in reduced.phases.values())
        pred = sum(
            p[what] * factors.get(reduced.opened_in.get(reduced.opened_as.get(key, key[1:3]), 0), 1.0)
            for key, p in reduced.phases.items()
        )
        out[what] = {"app": sa, "kernel": sk, "predicted": pred, "error_pct": _pct(pred, sa)}
    return out


def validate(
    app_cmd: list[str],
    kernel_cmd: list[str],
    launch: Launch,
    workdir: Path,
    cwd: Path | None,
    *,
    repeats: int = 1,
    tolerance: float = 1e-4,
    loop_fraction: float = 1.0,
    prefix: str | None = None,
    timeout: float | None = None,
    progress: Callable[[str], None] = lambda s: None,
) -> dict:
    """Runs the application and the kernel alternately `repeats` times. The kernel must match the
    application's bytes per phase; with loop reduction that is checked on the kernel run whole
    (fraction 1 at run time), and the reduced kernel gives the time, the scale and the prediction error.
    The first runs give the comparison; the speedup is the median of the pairs' ratios (each pair an
    application run and the kernel run right after it, so a burst of load hits both alike), with the
    range of those ratios, and speedup_min the ratio of the fastest runs (noise only adds time)."""
    workdir.mkdir(parents=True, exist_ok=True)
    reduced = loop_fraction < 1.0
    apps, fulls, reds = [], [], []
    for i in range(repeats):
        progress(f"running the application ({i + 1}/{repeats})")
        a = run_once("app", i, app_cmd, launch, workdir, cwd, timeout)
        apps.append(a)
        if not a.ok:
            return {
                "ran": True,
                "ok": False,
                "reason": f"the application run failed ({a.error}): nothing to validate against",
                "app": _times(apps),
            }
        k_timeout = 3 * a.elapsed + 60 if timeout is None else timeout
        progress(f"running the kernel{' whole' if reduced else ''} ({i + 1}/{repeats})")
        k = run_once(
            "kernel-whole" if reduced else "kernel",
            i,
            kernel_cmd,
            launch,
            workdir,
            cwd,
            k_timeout,
            prefix,
            {"IOTUNER_KERNEL_LOOP_FRACTION": "1"},
        )
        fulls.append(k)
        if not k.ok:
            return {
                "ran": True,
                "ok": False,
                "reason": f"the kernel run failed: {k.error}",
                "app": _times(apps),
                "kernel": _times(fulls),
            }
        if reduced:
            progress(f"running the kernel reduced to {loop_fraction:g} of its loops ({i + 1}/{repeats})")
            r = run_once("kernel", i, kernel_cmd, launch, workdir, cwd, k_timeout, prefix, {})
            reds.append(r)
            if not r.ok:
                return {
                    "ran": True,
                    "ok": False,
                    "reason": f"the reduced kernel run failed: {r.error}",
                    "app": _times(apps),
                    "kernel": _times(reds),
                }
    cmp = compare(apps[0], fulls[0], tolerance)
    used = reds if reduced else fulls
    ta, tk = _times(apps), _times(used)
    out = {
        "ran": True,
        "ok": cmp["match"],
        "tolerance_pct": tolerance * 100,
        "scale": 1.0,
        "app": ta,
        "kernel": tk,
        **_paired_speedup(apps, used),
        "speedup_min": ta["min_s"] / tk["min_s"] if tk["min_s"] else None,
        "console_lines": {"app": apps[0].console_lines, "kernel": used[0].console_lines},
        **cmp,
    }
    if reduced:
        whole = _times(fulls)
        pred = predict(apps[0], reds[0])
        kernel_bytes = pred["written"]["kernel"] + pred["read"]["kernel"]
        app_bytes = pred["written"]["app"] + pred["read"]["app"]
        out["scale"] = app_bytes / kernel_bytes if kernel_bytes else 1.0
        out["reduction"] = {
            "loop_fraction": loop_fraction,
            "loop_scale": loop_scale(reds[0].loops),
            "loops_run": {str(k): v for k, v in reds[0].loops.items()},
            "prediction": pred,
            "kernel_whole": whole,
            "speedup_whole": ta["median_s"] / whole["median_s"] if whole["median_s"] else None,
        }
    if not cmp["match"]:
        shown = "; ".join(cmp["mismatches"][:3])
        more = len(cmp["mismatches"]) - 3
        out["reason"] = (
            "the kernel's I/O differs from the application's: " + shown + (f" (and {more} more)" if more > 0 else "")
        )
    return out


def _times(runs: list[Run]) -> dict:
    ts = [r.elapsed for r in runs]
    return {"elapsed_s": ts, "median_s": statistics.median(ts) if ts else None, "min_s": min(ts) if ts else None}


def _paired_speedup(apps: list, kernels: list) -> dict:
    """The speed-up of the kernel over the application from interleaved pairs of runs: the median of the
    pairs' ratios, and their range (speedup_pairs; one pair gives no spread at all)."""
    ratios = [a.elapsed / k.elapsed for a, k in zip(apps, kernels) if k.elapsed > 0]
    if not ratios:
        return {"speedup": None, "speedup_pairs": []}
    return {"speedup": statistics.median(ratios), "speedup_pairs": ratios}
