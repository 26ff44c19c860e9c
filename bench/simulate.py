#!/usr/bin/env python3
"""`iotuner simulate` against this machine.

  measure   time the validation matrix (bench_two_phase: 1, 2, 4, 8, 16 ranks x contiguous and strided x the
            settings below, a write phase then a read phase per run, every cell in several rounds, each round
            in a new random order) under the shared timing lock, in chunks; the runs and each case's access
            pattern go to bench/data/simulate-validation.json (resumable: a stopped measurement continues)
  platform  calibrate this machine (iotuner calibrate on 2 ranks, then the collectives and exchanges on 4, 8 and
            16 ranks) and write the platform the simulator derives from it: bench/data/simulate-here.json (the
            records: bench/data/simulate-calibration.json.gz; --derive derives again without measuring;
            --derive --add-newer measures, at 2 ranks, what iotuner-microbench measures beyond the recorded
            calibration, the first reads and the cold copies, into the records first)
  table     simulate every cell from the recorded patterns on the recorded platform and print the error table
            (no measuring: regenerates docs/results.md's validation table)
  strategies  search strategies on the simulator (iotuner tune --simulate): VPIC-IO's write phase (a 2-rank run's
            report, bench/data/simulate-vpicio.json) at 1,024 ranks on 32 nodes of lustre-template; evaluations
            until a point within --target (99%) of the space's best predicted bandwidth (every point simulated once)
  paper     paper 001's VPIC-IO scaling on Hopper (Table II: the default's and the best bandwidth at 512 to 8,192
            cores) beside the simulator's on the `hopper` platform, with paper 004's tuned settings; every
            assumption is printed with the table

Every run uses MPIR_CVAR_NOLOCAL=1 (docs/machine.md: MPICH's shared-memory paths and hierarchical collectives
off, what the many-rank tests use) and writes to /dev/shm; the measured phase time is the slowest rank's time
inside its blocking MPI-IO calls (the report's mpiio.write_time_s / read_time_s).
"""

from __future__ import annotations

import argparse
import fcntl
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "simulate-validation.json"
PLATFORM = HERE / "data" / "simulate-here.json"
RECORDS = HERE / "data" / "simulate-calibration.json.gz"
LOCK = "/tmp/iotuner-timing.lock"
KIB, MIB = 1024, 1024 * 1024
ENV = {"MPIR_CVAR_NOLOCAL": "1"}
RANKS = (1, 2, 4, 8, 16)
# bench_two_phase's arguments: block, blocks per rank, blocks per collective call (8 MiB per rank, 8 calls)
PATTERNS = {"contiguous": (MIB, 8, 1), "strided": (16 * KIB, 512, 64)}
# calibration cells, measured in the same rounds but never in the table: 8 collective calls of 4 KiB per rank
# (contiguous), whose time beyond the modelled operations is the platform's cost of one call (calls.py)
CALIBRATION = {"tiny": ("contiguous", 4 * KIB, 8, 1)}
CALIBRATION_SETTINGS = ("default", "cb 1 aggr")
# romio_cb_write and romio_cb_read alike; cb_nodes with the cb_config_list that allows it on one node
SETTINGS = {
    "default": {},
    "cb 1 aggr": {"romio_cb_write": "enable", "romio_cb_read": "enable"},
    "cb 2 aggr 4M": {
        "romio_cb_write": "enable",
        "romio_cb_read": "enable",
        "cb_nodes": "2",
        "cb_config_list": "*:2",
        "cb_buffer_size": "4194304",
    },
    "cb 4 aggr 1M": {
        "romio_cb_write": "enable",
        "romio_cb_read": "enable",
        "cb_nodes": "4",
        "cb_config_list": "*:4",
        "cb_buffer_size": "1048576",
    },
    "cb 2 aggr 256K": {
        "romio_cb_write": "enable",
        "romio_cb_read": "enable",
        "cb_nodes": "2",
        "cb_config_list": "*:2",
        "cb_buffer_size": "262144",
    },
    "independent": {"romio_cb_write": "disable", "romio_cb_read": "disable"},
    "independent, no sieving": {
        "romio_cb_write": "disable",
        "romio_cb_read": "disable",
        "romio_ds_write": "disable",
        "romio_ds_read": "disable",
    },
}


def newer(r: dict) -> bool:
    """iotuner-microbench's records that calibrations before 2026-11-27 lack: the first read of a region just
    written, and the copy of data no longer in the caches."""
    return r["op"] in ("copy_cold", "pread_cold") or (r["op"] == "pread" and bool(r.get("first")))


class Lock:
    """The shared timing lock, held at most `chunk` seconds at a time (then left free for `pause` seconds)."""

    def __init__(self, chunk: float, pause: float):
        self.chunk, self.pause, self.f, self.since = chunk, pause, None, 0.0

    def hold(self) -> None:
        if self.f and time.monotonic() - self.since > self.chunk:
            self.release()
            time.sleep(self.pause)
        if not self.f:
            self.f = open(LOCK, "w")
            fcntl.flock(self.f, fcntl.LOCK_EX)
            self.since = time.monotonic()

    def release(self) -> None:
        if self.f:
            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()
            self.f = None


def load_data(path: Path) -> dict:
    if path.exists():  # a measurement kept gzipped (bench/data/simulate-validation-2026-11-27.json.gz) reads too
        raw = path.read_bytes()
        return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    return {
        "format": "iotuner-simulate-validation",
        "version": 1,
        "kernel": "bench_two_phase",
        "dir": "/dev/shm",
        "env": ENV,
        "patterns": {k: list(v) for k, v in PATTERNS.items()},
        "calibration": {k: list(v) for k, v in CALIBRATION.items()},
        "settings": SETTINGS,
        "machine": {"cores": os.cpu_count(), "host": os.uname().nodename},
        "cases": [],
        "runs": [],
    }


def save(data: dict, path: Path) -> None:
    if path.suffix == ".gz":
        raise SystemExit(f"bench/simulate: {path} is kept gzipped; measure into a .json file and gzip it after")
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")
    tmp.replace(path)


def trimmed_report(rep: dict) -> dict:
    """What the simulator reads of a run report: its access section and the phases' identity and hints."""
    keep = (
        "file",
        "created",
        "group_size",
        "application_settings",
        "settings",
        "mpi_hints",
        "bytes_written",
        "bytes_read",
        "mpiio",
    )
    return {"access": rep.get("access", []), "phases": [{k: p[k] for k in keep if k in p} for p in rep["phases"]]}


def one_run(ranks: int, pattern: str, setting: str, scratch: Path) -> tuple[float, float, dict]:
    from iotuner import native, runner

    kind, block, count, per_call = CALIBRATION[pattern] if pattern in CALIBRATION else (pattern, *PATTERNS[pattern])
    doc = scratch / "settings.json"
    doc.write_text(json.dumps({"version": 1, "mpiio": SETTINGS[setting]}))
    data = Path("/dev/shm") / f"iotuner-simulate-{os.getpid()}.bin"
    data.unlink(missing_ok=True)
    res = runner.run(
        [
            "mpiexec.mpich",
            "-n",
            str(ranks),
            str(native.executable("bench_two_phase")),
            str(data),
            str(block),
            str(count),
            kind,
            "both",
            str(per_call),
            "nocheck",
        ],
        config=doc,
        report=scratch / "report.json",
        capture=True,
        timeout=600,
        env=ENV,
    )
    data.unlink(missing_ok=True)
    if not res.ok:
        raise SystemExit(f"bench/simulate: the run failed ({ranks} ranks, {pattern}, {setting}): {res.stderr[-500:]}")
    phases = res.report.data_phases()
    w = next(p for p in phases if p["bytes_written"])
    r = next(p for p in phases if p["bytes_read"])
    return w["mpiio"]["write_time_s"], r["mpiio"]["read_time_s"], res.report.data


def measure(opts) -> None:
    data = load_data(opts.data)
    done = {(r["ranks"], r["pattern"], r["setting"], r["round"]) for r in data["runs"]}
    took: dict[tuple, float] = {}  # a cell's fastest recorded run, write and read phases together
    for r in data["runs"]:
        key = (r["ranks"], r["pattern"], r["setting"])
        took[key] = min(took.get(key, float("inf")), r["write_s"] + r["read_s"])
    cells = [(n, p, s) for n in opts.ranks for p in PATTERNS for s in SETTINGS]
    cells += [(n, p, s) for n in opts.ranks for p in CALIBRATION for s in CALIBRATION_SETTINGS]
    todo = []
    for k in range(opts.rounds):
        order = list(cells)
        random.Random(k).shuffle(order)
        order.sort(key=lambda c: c[0])  # one rank count at a time: its cells interleaved within the round
        todo += [
            (k, *c)
            for c in order
            if (c[0], c[1], c[2], k) not in done and not (k >= opts.long_rounds and took.get(c, 0) > opts.long_s)
        ]
    print(f"bench/simulate measure: {len(todo)} runs to go ({len(data['runs'])} recorded)", flush=True)
    lock = Lock(opts.chunk, opts.pause)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="iotuner-simulate-") as tmp:
        try:
            for i, (k, n, p, s) in enumerate(todo):
                lock.hold()
                if not any(r["pass"] == k for r in data.setdefault("calibration_runs", [])):
                    data["calibration_runs"] += microbench(2, k)
                    save(data, opts.data)
                    print(f"  round {k}: the two-rank micro-benchmarks", flush=True)
                t0 = time.monotonic()
                w, r, rep = one_run(n, p, s, Path(tmp))
                data["runs"].append(
                    {
                        "ranks": n,
                        "pattern": p,
                        "setting": s,
                        "round": k,
                        "write_s": w,
                        "read_s": r,
                        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    }
                )
                if not any(c["ranks"] == n and c["pattern"] == p for c in data["cases"]):
                    data["cases"].append({"ranks": n, "pattern": p, "report": trimmed_report(rep)})
                save(data, opts.data)
                print(
                    f"  [{i + 1}/{len(todo)}] round {k} {n:2d} ranks {p:10s} {s:24s} write {w * 1e3:8.2f} ms  "
                    f"read {r * 1e3:8.2f} ms  ({time.monotonic() - t0:.1f} s)",
                    flush=True,
                )
        finally:
            lock.release()
    print(f"bench/simulate measure: done in {time.monotonic() - started:.0f} s")


def microbench(ranks: int, k: int, max_bytes: str | None = None, lock: bool = False) -> list[dict]:
    """One pass of iotuner-microbench (pass k) on `ranks` ranks in /dev/shm, as the validation runs (lock: take
    the timing lock for it; the measurement's own rounds hold it already)."""
    from iotuner import native

    cmd = (
        (["flock", LOCK] if lock else [])
        + [
            "mpiexec.mpich",
            "-n",
            str(ranks),
            str(native.executable("iotuner-microbench")),
            "--dir",
            "/dev/shm",
            "--reps",
            "5",
        ]
        + (["--max-bytes", max_bytes] if max_bytes else [])
    )
    out = subprocess.run(
        cmd, check=True, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=3600
    ).stdout
    return [dict(json.loads(line), **{"pass": k}) for line in out.splitlines() if line.startswith("{")]


def platform(opts) -> None:
    """Calibrates this machine (or, with --derive, reads the recorded calibration) and writes the platform
    derived from it; the calibration's records are kept in bench/data/simulate-calibration.json.gz."""
    from iotuner.simulate import platform as platforms

    if opts.derive:
        doc = json.loads(gzip.decompress(opts.records.read_bytes()))
        records, meta = doc["records"], doc["meta"]
        if opts.add_newer:  # a calibration recorded before iotuner-microbench measured them
            records = [r for r in records if not newer(r)]
            for k in range(opts.passes):
                records += [r for r in microbench(2, k, lock=True) if newer(r)]
            meta = {k: v for k, v in meta.items() if k != "cold"}
            meta["newer"] = (
                f"first reads and cold copies measured {time.strftime('%Y-%m-%d', time.gmtime())}, "
                f"{opts.passes} passes on 2 ranks"
            )
            opts.records.write_bytes(
                gzip.compress((json.dumps({**doc, "meta": meta, "records": records}) + "\n").encode())
            )
            print(f"bench/simulate platform: added the first reads and the cold copies to {opts.records}")
    else:
        records, meta = calibrate(opts)
        opts.records.write_bytes(
            gzip.compress(
                (
                    json.dumps(
                        {"format": "iotuner-simulate-calibration", "version": 1, "meta": meta, "records": records}
                    )
                    + "\n"
                ).encode()
            )
        )
        print(f"bench/simulate platform: wrote {opts.records}")
    data = load_data(opts.data) if opts.data.exists() else {}
    if data.get("calibration_runs"):  # two ranks measured in the validation's own rounds: drift-free
        rounds = {(r["op"], r.get("first", 0)) for r in data["calibration_runs"]}
        records = [
            r
            for r in records
            if (r["op"], r.get("first", 0)) not in rounds or (r["op"] not in ("pwrite", "pread") and r["nprocs"] > 2)
        ]
        records += data["calibration_runs"]
        meta = {**meta, "ranks": meta.get("ranks", "") + "; 2 ranks in every round of the validation"}
    pf = platforms.from_calibration(records, meta, cores=meta.get("cores") or os.cpu_count())
    if data:
        pf.in_situ = in_situ(data, pf)
    opts.platform.write_text(json.dumps(pf.to_json(), indent=1) + "\n")
    print(f"bench/simulate platform: wrote {opts.platform}")


def calibrate(opts) -> tuple[list[dict], dict]:
    """The calibration's records and what it was: iotuner calibrate on 2 ranks, then the collectives and
    exchanges on up to --upto ranks, every pass under the timing lock."""
    from iotuner.perfmodel import calibration

    records: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="iotuner-simulate-") as tmp:
        cal = Path(tmp) / "calibration.json"
        env = {**os.environ, **ENV}
        subprocess.run(
            [
                "flock",
                LOCK,
                sys.executable,
                "-m",
                "iotuner",
                "calibrate",
                "--ranks",
                "2",
                "--dir",
                "/dev/shm",
                "--passes",
                str(opts.passes),
                "--output",
                str(cal),
            ],
            check=True,
            env=env,
        )
        two, meta = calibration.measurements(cal)
        records += two
        # the collectives and exchanges of 3-UPTO ranks sharing the cores (the ranks outside the communicator
        # measured sleep); small messages only (ROMIO's collectives send 4-8 bytes), storage at 4 KiB is dropped
        for k in range(opts.passes if opts.upto > 2 else 0):
            got = microbench(opts.upto, k, "4096", lock=True)
            records += [r for r in got if r["op"] not in ("pwrite", "pread") and r["nprocs"] > 2]
            print(f"  {opts.upto} ranks, pass {k + 1}: {len(got)} measurements", flush=True)
    return records, {
        **meta,
        "ranks": f"2 (storage), 2-{max(2, opts.upto)} (collectives, exchanges)",
        "cores": os.cpu_count(),
        "env": ENV,
    }


# ---- the error table ----


def cells(data: dict) -> dict[tuple, dict]:
    """(ranks, pattern, setting) -> measured write and read medians and their runs."""
    out: dict[tuple, dict] = {}
    for r in data["runs"]:
        c = out.setdefault((r["ranks"], r["pattern"], r["setting"]), {"write": [], "read": []})
        c["write"].append(r["write_s"])
        c["read"].append(r["read_s"])
    return out


def predictions(data: dict, pf, calibration: bool = False) -> dict[tuple, tuple[float, float]]:
    """(ranks, pattern, setting) -> simulated (write, read) seconds, from each case's recorded pattern: the
    validation's cells, or (calibration) the calibration cells."""
    from iotuner import run_report
    from iotuner.simulate import engine, workload

    out = {}
    for case in data["cases"]:
        key = (case["ranks"], case["pattern"])
        if (key[1] in CALIBRATION) != calibration:
            continue
        wl = workload.from_report(run_report.Report(case["report"]), None, f"{key}")
        names = CALIBRATION_SETTINGS if calibration else data["settings"]
        for name in names:
            hints = data["settings"][name]
            flat = {f"mpiio.{k}": v for k, v in hints.items()}
            res = engine.simulate(wl, pf, 1, flat, name)
            w = sum(p.seconds for p in res.phases if p.label.endswith("write"))
            r = sum(p.seconds for p in res.phases if p.label.endswith("read"))
            out[(*key, name)] = (w, r)
    return out


def in_situ(data: dict, pf) -> dict[int, float]:
    """ranks -> seconds each collective costs inside the application beyond the micro-benchmark's: from the
    calibration cells, their fastest runs' time beyond their simulation on the platform without it, over
    the collectives they make (both settings and directions pooled)."""
    from iotuner import run_report
    from iotuner.simulate import engine, trace, workload

    measured = cells(data)
    excess: dict[int, float] = {}
    count: dict[int, int] = {}
    for case in data["cases"]:
        n, p = case["ranks"], case["pattern"]
        if p not in CALIBRATION or n < 2:
            continue
        wl = workload.from_report(run_report.Report(case["report"]), None, f"{n} ranks {p}")
        for name in CALIBRATION_SETTINGS:
            if (n, p, name) not in measured:
                continue
            flat = {f"mpiio.{k}": v for k, v in data["settings"][name].items()}
            res = engine.simulate(wl, pf, 1, flat, name)
            for ph, got in zip(wl.phases, res.phases):
                direction = ph.pattern.direction
                text, _ = trace.engine_input(pf, n, 1, [ph], flat)
                count[n] = count.get(n, 0) + sum(line.startswith("C ") for line in text.splitlines())
                excess[n] = excess.get(n, 0.0) + min(measured[(n, p, name)][direction]) - got.seconds
    return {n: excess[n] / count[n] for n in sorted(excess) if count[n]}


def errors(data: dict, pf) -> list[dict]:
    """Every cell and direction: measured median, simulated, relative error of the simulated time."""
    measured = cells(data)
    rows = []
    for key, (w, r) in predictions(data, pf).items():
        m = measured.get(key)
        if not m:
            continue
        for direction, sim in (("write", w), ("read", r)):
            med, low = statistics.median(m[direction]), min(m[direction])
            # interference from other work on the shared cores only adds time: the fastest run is the phase's own
            rows.append(
                {
                    "ranks": key[0],
                    "pattern": key[1],
                    "setting": key[2],
                    "direction": direction,
                    "measured_s": low,
                    "median_s": med,
                    "runs": len(m[direction]),
                    "spread": (max(m[direction]) - low) / low if low > 0 else 0.0,
                    "simulated_s": sim,
                    "error": (sim - low) / low,
                    "error_median": (sim - med) / med,
                }
            )
    return rows


def table(opts) -> None:
    from iotuner.simulate import platform as platforms

    data = load_data(opts.data)
    pf = platforms.load(str(opts.platform))
    rows = errors(data, pf)
    if not rows:
        raise SystemExit("bench/simulate table: nothing measured yet (run bench/simulate.py measure)")
    print(
        f"validation: {len(rows)} cells (ranks x pattern x setting x direction), measured / simulated ms "
        f"(error), measured: the fastest of "
        f"{min(r['runs'] for r in rows)}-{max(r['runs'] for r in rows)} runs, platform {pf.name} "
        f"({opts.platform.name})\n"
    )
    print("| ranks | pattern | direction | " + " | ".join(data["settings"]) + " | median abs. error |")
    print("|---|---|---|" + "---|" * len(data["settings"]) + "---|")
    for n in sorted({r["ranks"] for r in rows}):
        for p in data["patterns"]:
            for d in ("write", "read"):
                sel = {r["setting"]: r for r in rows if (r["ranks"], r["pattern"], r["direction"]) == (n, p, d)}
                if not sel:
                    continue
                cellsx = [
                    f"{sel[s]['measured_s'] * 1e3:.1f} / {sel[s]['simulated_s'] * 1e3:.1f} ({sel[s]['error']:+.0%})"
                    if s in sel
                    else "-"
                    for s in data["settings"]
                ]
                med = statistics.median(abs(r["error"]) for r in sel.values())
                print(f"| {n} | {p} | {d} | " + " | ".join(cellsx) + f" | {med:.0%} |")
    errs = [abs(r["error"]) for r in rows]
    print(
        f"\nmedian absolute error {statistics.median(errs):.1%} over {len(rows)} cells; 90th percentile "
        f"{sorted(errs)[int(0.9 * len(errs))]:.0%}; within 25%: {sum(e <= 0.25 for e in errs)} of {len(errs)} "
        f"(against the median run instead of the fastest: median absolute error "
        f"{statistics.median(abs(r['error_median']) for r in rows):.1%})"
    )
    for n in sorted({r["ranks"] for r in rows}):
        sub = [r for r in rows if r["ranks"] == n]
        errs_n = [abs(r["error"]) for r in sub]
        print(
            f"  {n:2d} ranks: median {statistics.median(errs_n):.0%} over {len(sub)} cells, "
            f"{sum(e <= 0.25 for e in errs_n)} within 25%; against the median run "
            f"{statistics.median(abs(r['error_median']) for r in sub):.0%}"
        )
    worst = sorted(rows, key=lambda r: -abs(r["error"]))[: opts.worst]
    print("\nworst cells:")
    for r in worst:
        print(
            f"  {r['ranks']:2d} ranks {r['pattern']:10s} {r['direction']:5s} {r['setting']:24s} measured "
            f"{r['measured_s'] * 1e3:8.2f} ms (slowest run +{r['spread']:.0%})  "
            f"simulated {r['simulated_s'] * 1e3:8.2f} ms "
            f"({r['error']:+.0%})"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("measure", help="time the validation matrix (under the timing lock)")
    m.add_argument("--ranks", type=int, nargs="+", default=list(RANKS))
    m.add_argument("--rounds", type=int, default=3)
    m.add_argument("--chunk", type=float, default=540, help="seconds the timing lock is held at a time")
    m.add_argument("--pause", type=float, default=30, help="seconds it is left free between chunks")
    m.add_argument(
        "--long-s",
        type=float,
        default=60,
        help="a cell whose fastest run took longer than this (its phases, seconds) ...",
    )
    m.add_argument("--long-rounds", type=int, default=3, help="... is measured in this many rounds only")
    pl = sub.add_parser("platform", help="calibrate this machine and write its platform")
    pl.add_argument("--passes", type=int, default=4)
    pl.add_argument(
        "--derive",
        action="store_true",
        help="measure nothing: derive the platform from the recorded calibration (--records)",
    )
    pl.add_argument("--records", type=Path, default=RECORDS)
    pl.add_argument(
        "--add-newer",
        action="store_true",
        help="with --derive: measure the first reads and the cold copies at 2 ranks (--passes passes) "
        "into the records first",
    )
    pl.add_argument(
        "--upto",
        type=int,
        default=max(RANKS),
        help="also measure collectives and exchanges on 3 to UPTO ranks (2: only the two-rank calibration)",
    )
    t = sub.add_parser("table", help="the error table from the recorded measurements")
    t.add_argument("--worst", type=int, default=12)
    st = sub.add_parser("strategies", help="search strategies on the simulator at 1,024 ranks (or --sim-ranks)")
    st.add_argument("--seeds", type=int, default=10)
    st.add_argument("--budget", type=int, default=40)
    st.add_argument("--strategies", nargs="+", default=["random", "grid", "bayes", "ga"])
    st.add_argument("--sim-ranks", type=int, default=1024)
    st.add_argument("--sim-nodes", type=int, default=32)
    st.add_argument("--platform-name", default="lustre-template")
    st.add_argument("--target", type=float, default=0.99, help="fraction of the best predicted bandwidth to reach")
    pa = sub.add_parser("paper", help="paper 001's VPIC-IO scaling on Hopper, simulated")
    pa.add_argument("--cores", type=int, nargs="+", default=sorted(PAPER_001_HOPPER))
    pa.add_argument(
        "--mib-per-call",
        type=float,
        default=PAPER_MIB_PER_CALL,
        help="bytes each rank writes per variable, MiB (the paper's: 32)",
    )
    pa.add_argument(
        "--what-binds",
        action="store_true",
        help="also simulate the tuned case with the NIC, the client rate and the OSTs each twice as fast",
    )
    for p in (m, pl, t):
        p.add_argument("--data", type=Path, default=DATA)
        p.add_argument("--platform", type=Path, default=PLATFORM)
    opts = ap.parse_args()
    if getattr(opts, "add_newer", False) and not opts.derive:
        ap.error("--add-newer adds to a recorded calibration: use it with --derive")
    return {"measure": measure, "platform": platform, "table": table, "strategies": strategies, "paper": paper}[
        opts.what
    ](opts) or 0


VPICIO = HERE / "data" / "simulate-vpicio.json"
# stripes and aggregators where they matter, at 1,024 ranks on 32 nodes
SCALE_SPACE = {
    "name": "lustre-scale",
    "dimensions": [
        {"knob": "lustre.stripe_count", "values": [1, 4, 16, 64]},
        {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]},
        {"knob": "mpiio.cb_nodes", "values": [1, 4, 16, 32, 64]},
        {"knob": "mpiio.cb_buffer_size", "values": [1048576, 4194304, 16777216]},
    ],
}


def strategies(opts) -> None:
    """Strategies compared on the simulator at scale (module doc)."""
    sys.path.insert(0, str(HERE))
    import itertools

    from iotuner import settings
    from iotuner.tune import objective as objectives
    from iotuner.tune import simulated
    from iotuner.tune import space as spaces
    from strategies import cell, evaluations_until, uniform_against

    if not VPICIO.exists():
        raise SystemExit(f"bench/simulate strategies: {VPICIO} missing (the report of a 2-rank run of vpicio -n 256K)")
    sp = spaces.from_json(SCALE_SPACE)
    obj = objectives.parse("write-bw")
    with tempfile.TemporaryDirectory(prefix="iotuner-simulate-") as tmp:
        rep = Path(tmp) / "vpicio.json"
        rep.write_text(VPICIO.read_text())
        rec = simulated.spec(opts.platform_name, str(rep))
        ev = simulated.SimulatedEvaluator(rec, obj, opts.sim_ranks, opts.sim_nodes)  # one cache for every study
        t0 = time.monotonic()
        values = {}
        for combo in itertools.product(*(d["values"] for d in SCALE_SPACE["dimensions"])):
            flat = settings.complete({d["knob"]: v for d, v in zip(SCALE_SPACE["dimensions"], combo)}, opts.sim_nodes)
            values[combo] = ev.value(flat)
        best = max(values.values())
        print(
            f"space {sp.name}: {len(values)} points, {len(ev._cache)} distinct predictions, simulated in "
            f"{time.monotonic() - t0:.0f} s; best {best:,.0f} MiB/s, worst {min(values.values()):,.0f} MiB/s; "
            f"{sum(v >= opts.target * best for v in values.values())} points within {opts.target:.0%} of the best"
        )
        print(
            f"evaluations until a point within {opts.target:.0%} of the best (median over {opts.seeds} seeds, "
            f"budget {opts.budget}):"
        )
        results = {}
        for strategy in opts.strategies:
            counts = [
                evaluations_until(
                    sp,
                    ev,
                    lambda v: v is not None and v >= opts.target * best,
                    strategy,
                    seed,
                    opts.budget,
                    {"version": 1},
                    {"simulate": rec, "ranks": opts.sim_ranks, "nodes": opts.sim_nodes},
                )
                for seed in range(opts.seeds)
            ]
            results[strategy] = counts
            print(
                f"  {strategy:10s} {cell(counts, opts.budget):>14s}   per seed: "
                f"{' '.join('-' if c is None else str(c) for c in counts)}",
                flush=True,
            )
        uniform_against(results, len(values), sum(v >= opts.target * best for v in values.values()))


# Paper 001 (Behzad et al., Cluster'15), Table II, Hopper: VPIC-IO's bandwidth in GB/s, the best configuration
# found and the default, by cores. VPIC-IO writes 8 variables of 8M particles per rank: 8 collective calls of
# 32 MiB per rank, one dataset per call.
PAPER_001_HOPPER = {512: (3.00, 0.39), 1024: (5.09, 0.32), 2048: (8.18, 0.40), 4096: (12.57, 0.34), 8192: (18.93, 0.20)}
PAPER_MIB_PER_CALL = 32
PAPER_CORES_PER_NODE = 24
# Paper 004 (H5Tuner/H5Evolve slides), VPIC-IO on 2,048 cores of Hopper: the tuned settings (alignment is
# HDF5's and not simulated)
PAPER_004_TUNED = {
    "lustre.stripe_count": 156,
    "lustre.stripe_size": "32M",
    "mpiio.cb_nodes": 512,
    "mpiio.cb_buffer_size": 32 * MIB,
    "mpiio.romio_cb_write": "enable",
}


def _nodes(ranks: int) -> int:
    return -(-ranks // PAPER_CORES_PER_NODE)


def _vpicio(n: int, per_call: int):
    from iotuner.simulate import workload as workloads

    phase = workloads.Phase("vpicio write", workloads.segmented("write", 8, per_call, n), {}, {}, True, 0)
    return workloads.Workload("VPIC-IO (paper 001)", n, n, [phase])


def _gbps(pf, n: int, per_call: int, flat: dict) -> float:
    from iotuner.simulate import engine

    res = engine.simulate(_vpicio(n, per_call), pf, _nodes(n), flat, timeout=3600)
    return res.bytes / 1e9 / res.seconds


def fit_client(stated, cores: int, target: float, per_call: int, flat: dict):
    """The platform with a node's rate as a Lustre client (client_bw) set so that VPIC-IO under `flat` at `cores`
    gives `target` GB/s; the NIC, which also carries the messages, stays as stated. Bandwidth grows with the
    client rate while it binds, so a few proportional steps reach 2%."""
    import dataclasses

    fitted = dataclasses.replace(stated, client_bw=stated.nic_bw)
    for _ in range(8):
        got = _gbps(fitted, cores, per_call, flat)
        if abs(got / target - 1) < 0.02:
            break
        fitted = dataclasses.replace(fitted, client_bw=fitted.client_bw * target / got)
    return fitted


def paper(opts) -> None:
    """Paper 001's scaling of VPIC-IO on Hopper beside the simulator's (module doc): on the platform as the
    papers state it, then with the one number they do not state and that decides the tuned case, a node's
    rate as a Lustre client (below its NIC's, which also carries the two-phase messages), fitted at the smallest
    scale and held for the others. --what-binds: the tuned case again with the NIC, the client rate and the
    OSTs each twice as fast, to show which of them binds at each scale."""
    import dataclasses

    from iotuner import settings
    from iotuner.simulate import platform as platforms

    stated = platforms.load("hopper")
    per_call = int(opts.mib_per_call * MIB)
    tuned = {n: settings.complete(PAPER_004_TUNED, _nodes(n)) for n in opts.cores}
    print(
        f"VPIC-IO on platform hopper: 8 collective writes of {opts.mib_per_call:g} MiB per rank, one dataset "
        f"per call, {PAPER_CORES_PER_NODE} ranks per node; default: the platform's layout ({stated.stripe_count} "
        f"stripes of {stated.stripe_size // MIB} MiB) and Cray MPICH's aggregators (one per stripe); tuned: paper "
        f"004's VPIC-IO settings at 2,048 cores (156 stripes of 32 MiB, cb_nodes 512 capped at the ranks, "
        f"32 MiB buffers; its HDF5 alignment is not simulated)"
    )
    fitted, known = stated, [n for n in opts.cores if n in PAPER_001_HOPPER]
    if known:
        small = min(known)
        target = PAPER_001_HOPPER[small][0]
        fitted = fit_client(stated, small, target, per_call, tuned[small])
        print(
            f"fitted: a node's rate as a Lustre client {fitted.client_bw / 1e9:.3f} GB/s (its NIC stays "
            f"{stated.nic_bw / 1e9:g} GB/s for messages), so that the tuned case at {small} cores gives the "
            f"paper's {target} GB/s"
        )
    print()
    print(
        "| cores | nodes | paper: default / best GB/s (speedup) | simulated, as stated: default / tuned GB/s "
        "(speedup) | simulated, client rate fitted: default / tuned GB/s (speedup); tuned against the paper |"
        + (" tuned with 2x NIC / 2x client / 2x OSTs |" if opts.what_binds else "")
    )
    print("|---|---|---|---|---|" + ("---|" if opts.what_binds else ""))
    for n in opts.cores:
        t0 = time.monotonic()
        row = []
        for pf in (stated, fitted):
            d, t = _gbps(pf, n, per_call, {}), _gbps(pf, n, per_call, tuned[n])
            row.append((d, t))
        pb, pd = PAPER_001_HOPPER.get(n, (None, None))
        paper_cell = f"{pd:.2f} / {pb:.2f} ({pb / pd:.1f}x)" if pd else "-"
        (sd, st), (fd, ft) = row
        against = f"; {ft / pb - 1:+.0%}" if pb else ""
        binds = ""
        if opts.what_binds:
            st_ = fitted.storage
            faster = (
                dataclasses.replace(fitted, nic_bw=2 * fitted.nic_bw),
                dataclasses.replace(fitted, client_bw=2 * fitted.client_bw),
                dataclasses.replace(fitted, storage={**st_, "ost_write_bw": 2 * st_["ost_write_bw"]}),
            )
            binds = " " + " / ".join(f"{_gbps(pf, n, per_call, tuned[n]):.2f}" for pf in faster) + " |"
        print(
            f"| {n:,} | {_nodes(n)} | {paper_cell} | {sd:.2f} / {st:.2f} ({st / sd:.1f}x) | "
            f"{fd:.2f} / {ft:.2f} ({ft / fd:.1f}x){against} |{binds}",
            flush=True,
        )
        print(f"  ({time.monotonic() - t0:.0f} s to simulate)", file=sys.stderr, flush=True)
    print("\nthe platform's assumptions (python/iotuner/simulate/platforms/hopper.json):")
    for a in stated.assumptions:
        print(f"  - {a}")


if __name__ == "__main__":
    sys.exit(main())
