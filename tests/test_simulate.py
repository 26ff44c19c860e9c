"""iotuner simulate: contention on a Lustre platform, one OST's ceiling, platform files, the CLI's errors and
the simulated evaluator of iotuner tune. The workloads are the access patterns of real two-rank runs of
bench_two_phase (the simulator's answers are deterministic: no timing here)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from conftest import importorskip, kernel, mpi, run_job
from iotuner import native, run_report
from iotuner.simulate import engine
from iotuner.simulate import platform as platforms
from iotuner.simulate import workload as workloads
from iotuner.tune import objective as objectives

pytestmark = pytest.mark.skipif(
    not (native.programs_dir() / "iotuner-iosim").exists(), reason="iotuner-iosim not built (no SimGrid)"
)

KIB, MIB = 1024, 1 << 20
CB = {"mpiio.romio_cb_write": "enable", "mpiio.romio_cb_read": "enable"}


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, str]:
    """Run reports of bench_two_phase on 2 ranks: contiguous (8 calls of 1 MiB per rank) and strided (16 KiB
    blocks interleaved across the ranks, 64 per call)."""
    out = {}
    tmp = tmp_path_factory.mktemp("simulate")
    for name, (block, count, calls) in {"contiguous": (MIB, 8, 1), "strided": (16 * KIB, 512, 64)}.items():
        rep = tmp / f"{name}.json"
        res = run_job(
            [*mpi(2), kernel("bench_two_phase"), tmp / f"{name}.bin", block, count, name, "both", calls, "nocheck"],
            report=rep,
        )
        assert res.ok, res.stderr
        out[name] = str(rep)
    return out


def predict(rep: str, ranks: int, nodes: int, flat: dict, pf="lustre-template") -> engine.Result:
    return engine.simulate(workloads.load(rep, ranks), platforms.load(pf), nodes, flat)


def write_bw(res: engine.Result) -> float:
    """B/s of the write phases."""
    w = [p for p in res.phases if p.label.endswith("write")]
    return sum(p.bytes for p in w) / sum(p.seconds for p in w)


def test_more_aggregators_on_more_osts_write_faster_under_contention(reports):
    """256 ranks interleaving 16 KiB blocks: every aggregator's domain on one OST shared by all of them is
    bound by that OST; spreading stripes and aggregators over more OSTs divides the load."""
    times = {}
    for n in (1, 4, 16):
        res = predict(
            reports["strided"],
            256,
            8,
            {**CB, "mpiio.cb_nodes": n, "lustre.stripe_count": n, "lustre.stripe_size": "1M"},
        )
        assert res.aggregators == n and res.stripe_count == n
        times[n] = res.seconds
    assert times[1] > 2 * times[4] > 2 * 2 * times[16]
    # the same 16 aggregators squeezed onto one OST lose what the stripes gave
    one_ost = predict(reports["strided"], 256, 8, {**CB, "mpiio.cb_nodes": 16, "lustre.stripe_count": 1})
    assert one_ost.seconds > 4 * times[16]


def test_one_ost_saturates_and_stripes_lift_the_ceiling(reports):
    """Independent 1 MiB writes of many ranks to one OST reach that OST's bandwidth and no more, however many
    ranks write. With 16 stripes of 1 MiB, each call's pieces (rank r's at 8r MiB + c MiB) land on 2 OSTs only:
    twice one OST's bandwidth, not 16 times."""
    pf = platforms.load("lustre-template")
    ost = pf.storage["ost_write_bw"]
    indep = {"mpiio.romio_cb_write": "disable", "lustre.stripe_count": 1}
    small, large = (write_bw(predict(reports["contiguous"], n, n // 32, indep)) for n in (128, 512))
    for bw in (small, large):
        assert 0.8 * ost <= bw <= 1.001 * ost
    assert abs(large - small) <= 0.05 * small
    wide = write_bw(predict(reports["contiguous"], 512, 16, {**indep, "lustre.stripe_count": 16}))
    assert 1.6 * ost <= wide <= 2.001 * ost


def test_as_measured_the_workload_is_the_runs_own(reports):
    wl = workloads.load(reports["strided"], None)
    rep = run_report.load(reports["strided"])
    assert wl.ranks == wl.measured_ranks == 2
    assert [p.label for p in wl.phases] == ["phase 0 write", "phase 1 read"]
    assert wl.bytes == sum(p["bytes_written"] + p["bytes_read"] for p in rep.data_phases())
    assert all(p.measured_s and p.measured_s > 0 for p in wl.phases)
    # scaled weak: each rank keeps its bytes
    assert workloads.load(reports["strided"], 512).bytes == wl.bytes * 256


def test_platform_files_round_trip(tmp_path):
    for name in platforms.bundled():
        pf = platforms.load(name)
        again = platforms.from_json(json.loads(json.dumps(pf.to_json())), "copy")
        assert again.header(1024, 32, 4, MIB, True) == pf.header(1024, 32, 4, MIB, True)
        assert again.collectives.seconds("allreduce", 8, 1024) == pf.collectives.seconds("allreduce", 8, 1024)


def simulate_cli(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", "simulate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )


def one_line_error(r, *words):
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr


def test_cli_prints_each_document_side_by_side(reports, tmp_path):
    docs = []
    for name, mpiio in {
        "indep": {"romio_cb_write": "disable"},
        "wide": {"romio_cb_write": "enable", "cb_nodes": 16},
    }.items():
        (tmp_path / f"{name}.json").write_text(
            json.dumps({"version": 1, "mpiio": mpiio, "lustre": {"stripe_count": 16 if name == "wide" else 1}})
        )
        docs.append(tmp_path / f"{name}.json")
    r = simulate_cli(
        reports["strided"], "--ranks", 64, "--nodes", 4, "--platform", "lustre-template", "--config", *docs, "--json"
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [x["name"] for x in out["results"]] == ["as run", "indep", "wide"]
    assert out["ranks"] == 64 and out["nodes"] == 4
    by = {x["name"]: x for x in out["results"]}
    assert by["wide"]["stripe_count"] == 16 and by["indep"]["stripe_count"] == 1
    assert by["wide"]["seconds"] < by["indep"]["seconds"]
    text = simulate_cli(
        reports["strided"],
        "--ranks",
        64,
        "--nodes",
        4,
        "--platform",
        "lustre-template",
        "--config",
        *docs,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert text.returncode == 0, text.stderr
    assert "indep" in text.stdout and "wide" in text.stdout and "MiB/s" in text.stdout


def test_cli_names_bad_input_in_one_line(reports, tmp_path):
    one_line_error(simulate_cli(tmp_path / "none.json", "--platform", "lustre-template"), "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    one_line_error(simulate_cli(bad, "--platform", "lustre-template"), "bad.json", "not JSON")
    idle = json.loads(open(reports["contiguous"]).read())  # a run whose files moved no data
    del idle["access"]
    for ph in idle["phases"]:
        ph["bytes_written"] = ph["bytes_read"] = 0
    (tmp_path / "idle.json").write_text(json.dumps(idle))
    one_line_error(
        simulate_cli(tmp_path / "idle.json", "--platform", "lustre-template"), "idle.json", "no phase that moved data"
    )
    one_line_error(simulate_cli(reports["strided"], "--platform", bad), "bad.json")
    one_line_error(simulate_cli(reports["strided"], "--platform", "atlantis"), "atlantis", "lustre-template")
    half = tmp_path / "half.json"
    doc = platforms.load("lustre-template").to_json()
    del doc["storage"]["ost_write_GBps"]
    half.write_text(json.dumps(doc))
    one_line_error(simulate_cli(reports["strided"], "--platform", half), "ost_write_GBps")
    local = tmp_path / "local.json"
    doc = platforms.load("lustre-template").to_json()
    doc["storage"].update(kind="local", osts=1, oss=0)
    del doc["network"], doc["nodes"]["nic_GBps"]
    local.write_text(json.dumps(doc))
    one_line_error(simulate_cli(reports["strided"], "--platform", local, "--ranks", 64, "--nodes", 2), "one node")
    one_line_error(
        simulate_cli(reports["strided"], "--platform", "lustre-template", "--ranks", 4, "--nodes", 8), "--nodes 8"
    )
    one_line_error(simulate_cli(reports["strided"], "--platform", "lustre-template", "--config", bad), "bad.json")
    stripe = tmp_path / "stripe.json"
    stripe.write_text(json.dumps({"version": 1, "lustre": {"stripe_size": "lots"}}))
    r = simulate_cli(reports["strided"], "--platform", "lustre-template", "--ranks", 64, "--config", stripe)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "stripe" in r.stderr


def test_cli_says_how_to_get_the_engine_when_it_is_missing(reports, monkeypatch, capsys):
    from iotuner import cli

    def missing(name):
        raise native.NativeMissing(f"bundled program '{name}' not found")

    monkeypatch.setattr(native, "executable", missing)
    rc = cli.main(["simulate", reports["strided"], "--platform", "lustre-template", "--ranks", "64"])
    err = capsys.readouterr().err
    assert rc == 1 and "iotuner-iosim" in err and "libsimgrid-dev" in err and len(err.strip().splitlines()) == 1


def test_simulated_evaluator_is_deterministic_and_answers_only_for_what_it_models(reports):
    import random

    from iotuner.tune import simulated

    rec = simulated.spec("lustre-template", reports["strided"])
    obj = objectives.parse("io-time")
    a = simulated.SimulatedEvaluator(rec, obj, 64, 4)
    b = simulated.SimulatedEvaluator(json.loads(json.dumps(rec)), obj, 64, 4)
    points = [{**CB, "mpiio.cb_nodes": n, "lustre.stripe_count": n, "hdf5.alignment": "1M"} for n in (1, 8, 32)]
    first = [a.answer(p, random.Random(0)) for p in points]
    again = [b.answer(p, random.Random(7)) for p in points]
    assert [m.value for m in first] == [m.value for m in again]
    assert all(m.ok for m in first) and len({m.value for m in first}) == 3
    assert first[0].value > first[2].value  # io-time: one OST is slower than 32
    assert "hdf5.alignment" not in first[0].effective and first[0].effective["lustre.stripe_count"] == ["1"]


def test_simulated_evaluator_refuses_a_changed_report(reports, tmp_path):
    from iotuner.tune import simulated

    copy = tmp_path / "r.json"
    copy.write_text(open(reports["strided"]).read())
    rec = simulated.spec("lustre-template", str(copy))
    copy.write_text(copy.read_text() + " ")
    with pytest.raises(ValueError, match="changed since the study began"):
        simulated.SimulatedEvaluator(rec, None, 64, 2)


def test_tune_on_the_simulator_end_to_end(reports, tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--simulate",
            "lustre-template",
            "--simulate-report",
            reports["strided"],
            "--ranks",
            "64",
            "--nodes",
            "4",
            "--strategy",
            "random",
            "--trials",
            "4",
            "--out",
            str(tmp_path / "out"),
            "--study",
            "sim",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "best.json").exists()
    printed = " ".join(r.stdout.split())
    assert "simulated:" in printed and "at 64 ranks on 4 node(s) of platform lustre-template" in printed
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--simulate",
            "lustre-template",
            "--trials",
            "2",
            "--out",
            str(tmp_path / "o2"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    one_line_error(r, "--simulate-report")


def test_a_darshan_log_is_replayed_from_its_counters(tmp_path):
    """example.darshan (the darshan wheel's): VPIC-IO on 2,048 ranks, 8 collective writes of 128 MiB per rank
    to one file striped over 24 OSTs. Replayed at 8 ranks, each rank keeps its bytes, the run's own layout is
    the log's, and each layout's prediction stays under its OSTs' bandwidth. A log with only STDIO data is
    refused in one line."""
    darshan = importorskip("darshan", reason="PyDarshan reads Darshan logs")
    from pathlib import Path

    examples = Path(darshan.__file__).parent / "examples" / "example_logs"
    wl = workloads.load(str(examples / "example.darshan"), 8)
    assert wl.measured_ranks == 2048 and wl.ranks == 8
    [phase] = wl.phases
    assert phase.label.endswith("vpicio.hdf5 write") and phase.new_file and not phase.exact
    assert phase.pattern.ncalls == 8 and wl.bytes == 8 * 8 * 128 * MIB
    assert "rebuilt from Darshan's counters" in wl.notes[0]
    doc = tmp_path / "indep.json"
    doc.write_text(json.dumps({"version": 1, "mpiio": {"romio_cb_write": "disable"}, "lustre": {"stripe_count": 16}}))
    r = simulate_cli(
        examples / "example.darshan",
        "--ranks",
        8,
        "--nodes",
        2,
        "--platform",
        "lustre-template",
        "--config",
        doc,
        "--json",
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["measured_ranks"] == 2048 and out["notes"] == wl.notes
    ost = platforms.load("lustre-template").storage["ost_write_bw"]
    by = {x["name"]: x for x in out["results"]}
    assert by["as run"]["stripe_count"] == 24 and by["indep"]["stripe_count"] == 16
    for res in by.values():
        assert res["bytes"] == wl.bytes
        assert res["bytes"] / res["seconds"] <= res["stripe_count"] * ost * 1.001
    one_line_error(
        simulate_cli(examples / "noposix.darshan", "--platform", "lustre-template"), "no file with MPI-IO or POSIX data"
    )


def test_independent_and_file_per_process_logs_are_replayed(tmp_path):
    """The darshan wheel's IOR logs: ior_hdf5_example.darshan (4 ranks, independent MPI-IO to one HDF5 file on
    1 stripe) and sample-badost.darshan (2,048 ranks, IOR POSIX, a 256 MiB file per process). Independent calls
    take ROMIO's independent path, so collective buffering changes nothing while striping does; a file per
    process puts each rank's file on its own OSTs, where one shared file of one stripe has one."""
    darshan = importorskip("darshan", reason="PyDarshan reads Darshan logs")
    from pathlib import Path

    examples = Path(darshan.__file__).parent / "examples" / "example_logs"
    wl = workloads.load(str(examples / "ior_hdf5_example.darshan"), 16)
    assert [p.label.rsplit(" ", 1)[1] for p in wl.phases] == ["write", "read"]
    assert all(not p.collective and not p.per_process for p in wl.phases)
    assert wl.phases[0].run_settings == {"lustre.stripe_count": 1, "lustre.stripe_size": MIB}
    pf = platforms.load("lustre-template")
    as_run = engine.simulate(wl, pf, 4, {}, as_run=True)
    cb = engine.simulate(
        wl,
        pf,
        4,
        {"mpiio.romio_cb_write": "enable", "mpiio.romio_cb_read": "enable", "mpiio.cb_nodes": "4"},
        as_run=True,
    )
    striped = engine.simulate(wl, pf, 4, {"lustre.stripe_count": 8}, as_run=True)
    assert cb.seconds == pytest.approx(as_run.seconds, rel=1e-9)
    assert as_run.phases[0].targets_used == 1 and striped.phases[0].targets_used == 8
    assert striped.seconds < as_run.seconds / 2

    wl = workloads.load(str(examples / "sample-badost.darshan"), 64)
    [phase] = wl.phases
    assert phase.per_process and not phase.collective and wl.measured_ranks == 2048
    assert wl.bytes == 64 * 256 * MIB and phase.pattern.ncalls == 64
    own = engine.simulate(wl, pf, 4, {}, as_run=True)
    one_file = engine.simulate(
        dataclasses.replace(wl, phases=[dataclasses.replace(phase, per_process=False)]), pf, 4, {}, as_run=True
    )
    assert one_file.phases[0].targets_used == 1
    assert own.phases[0].targets_used == min(64, pf.storage["osts"])
    assert own.seconds < one_file.seconds / 8


def one_node(**changes) -> platforms.Platform:
    """lustre-template's numbers as a one-node local file system, with `changes`."""
    import dataclasses

    pf = platforms.load("lustre-template")
    return dataclasses.replace(
        pf, storage={**pf.storage, "kind": "local", "osts": 1, "oss": 0}, nic_bw=0.0, backbone_bw=0.0, **changes
    )


def phase_times(rep: str, ranks: int, flat: dict, pf) -> dict[str, float]:
    res = engine.simulate(workloads.load(rep, ranks), pf, 1, flat)
    return {p.label.rsplit(" ", 1)[1]: p.seconds for p in res.phases}


def test_an_aggregators_own_data_is_copied_at_the_measured_rate(reports):
    """At 1 rank collective buffering copies each call's 1 MiB into the collective buffer and out of it on
    reads; the independent path does not. The copy costs what the platform's curve of a message to oneself
    says at that size (a curve: the aggregator's buffer in the caches copies faster)."""
    curve = [(4096, 1e-6), (MIB, 100e-6), (16 * MIB, 3200e-6)]
    pf = one_node(self_copy=curve)
    assert pf.self_copy_seconds(MIB) == pytest.approx(100e-6)
    assert pf.self_copy_seconds(2 * MIB) == pytest.approx(100e-6 + 3100e-6 / 15)
    indep = phase_times(
        reports["contiguous"], 1, {"mpiio.romio_cb_write": "disable", "mpiio.romio_cb_read": "disable"}, pf
    )
    cb = phase_times(reports["contiguous"], 1, CB, pf)
    # 8 calls, each copying its 1 MiB and its 16-byte offset list; collectives are free at one rank
    for direction in ("write", "read"):
        assert cb[direction] - indep[direction] == pytest.approx(8 * (100e-6 + 1e-6), rel=1e-6)
    # without a curve: one core's copy rate
    plain = phase_times(reports["contiguous"], 1, CB, one_node())
    assert plain["write"] - indep["write"] == pytest.approx(8 * (MIB + 16) / one_node().copy_bw, rel=1e-3)


def test_each_collective_costs_what_it_costs_inside_an_application(reports):
    """The platform's in-situ difference (ranks arriving apart, measured by bench/simulate.py's calibration
    cells) is added to every collective of every call; with collective buffering disabled a call makes none.
    The count measured at or above the simulated one is used, else the largest; never below zero."""
    table = one_node()
    with_cost = one_node(in_situ={2: 1e-3, 8: -1.0})
    assert with_cost.collective_seconds("allreduce", 4, 2) == table.collective_seconds("allreduce", 4, 2) + 1e-3
    assert with_cost.collective_seconds("allreduce", 4, 4) == 0.0  # the 8-rank difference, floored at zero
    assert with_cost.collective_seconds("allreduce", 4, 1) == 0.0  # one rank synchronizes with nobody
    for flat, collectives in (
        (CB, 6),
        ({}, 2),
        ({"mpiio.romio_cb_write": "disable", "mpiio.romio_cb_read": "disable"}, 0),
    ):
        a = phase_times(reports["contiguous"], 2, flat, with_cost)
        b = phase_times(reports["contiguous"], 2, flat, table)
        assert a["write"] - b["write"] == pytest.approx(8 * collectives * 1e-3, abs=1e-9)


def test_the_measured_curves_survive_a_platform_file(tmp_path):
    pf = one_node(self_copy=[(4096, 1e-6), (MIB, 1e-4)], in_situ={2: 1e-3, 16: -2e-3})
    again = platforms.from_json(json.loads(json.dumps(pf.to_json())), "copy")
    assert [b for b, _ in again.self_copy] == [4096, MIB]
    assert [t for _, t in again.self_copy] == pytest.approx([1e-6, 1e-4])
    assert again.in_situ == pytest.approx(pf.in_situ)
    bad = pf.to_json()
    bad["nodes"]["self_copy_us_by_bytes"] = [[4096, 1]]
    with pytest.raises(platforms.PlatformError, match="self_copy_us_by_bytes"):
        platforms.from_json(bad, "bad")


def test_this_machine_is_derived_from_the_fastest_pass():
    """Interference from other work only adds time: of the calibration's passes the fastest is the
    operation's own cost (the validation's reference is the fastest run too)."""
    records = []
    for k, slow in enumerate((1.0, 3.0, 2.0)):
        for b in (1024, 4096, MIB, 4 * MIB):
            t = 2e-6 + b / 2e9  # 2 GB/s at best
            records.append({"op": "p2p", "nprocs": 2, "bytes": b, "seconds": t * slow, "pass": k})
            records.append({"op": "p2p", "nprocs": 1, "bytes": b, "seconds": b / 10e9 * slow, "pass": k})
            for op, w, first in (("pwrite", 1, 0), ("pwrite", 1, 1), ("pread", 1, 0)):
                records.append(
                    {
                        "op": op,
                        "nprocs": 2,
                        "writers": w,
                        "first": first,
                        "sync": 0,
                        "bytes": b,
                        "seconds": (1e-6 + b / 4e9) * slow,
                        "pass": k,
                    }
                )
        for op in platforms.COLLECTIVE_OPS:
            records.append({"op": op, "nprocs": 2, "bytes": 8, "seconds": 5e-6 * slow, "pass": k})
    pf = platforms.from_calibration(records, {}, cores=2)
    assert pf.copy_bw == pytest.approx(2e9, rel=0.01)  # the median pass would give 1 GB/s
    assert pf.write_copy_bw == pytest.approx(4e9, rel=0.01)
    assert pf.self_copy_seconds(MIB) == pytest.approx(MIB / 10e9)
    assert pf.collectives.seconds("allreduce", 8, 2) == pytest.approx(5e-6)


def test_reads_are_priced_as_first_reads_and_an_aggregators_own_data_cold_where_measured():
    """iotuner-microbench's first reads (pread with `first`: a region just written to a new file, read once) price
    a read's copy, and its cold copies (after the rank touched more memory than its caches hold) an aggregator's
    copy of its own data; the warm copy stays where it is the slower (the small sizes, where the exchange's own
    latency is the cost), and a calibration without them keeps the warm reads. A read again of a region read
    before (first 0) is not what a phase does, and a faster one does not lower the price."""
    records = []
    for b in (1024, 4096, MIB, 4 * MIB):
        records.append({"op": "p2p", "nprocs": 2, "bytes": b, "seconds": 2e-6 + b / 2e9})
        records.append({"op": "p2p", "nprocs": 1, "bytes": b, "seconds": 1e-6 + b / 10e9})
        for op, first in (("pwrite", 0), ("pwrite", 1), ("pread", 0)):
            records.append(
                {"op": op, "nprocs": 2, "writers": 1, "first": first, "sync": 0, "bytes": b, "seconds": 1e-6 + b / 8e9}
            )
    for op in platforms.COLLECTIVE_OPS:
        records.append({"op": op, "nprocs": 2, "bytes": 8, "seconds": 5e-6})
    warm = platforms.from_calibration(records, {}, cores=2)
    assert warm.read_copy_bw == pytest.approx(8e9, rel=0.01)
    kinds = (("pread", 1, 2e-6, 4e9), ("copy_cold", 0, 0, 5e9))  # op, first, latency, bandwidth
    newer = [
        {"op": op, "nprocs": 2, "writers": 1, "first": first, "sync": 0, "bytes": b, "seconds": lat + b / bw}
        for b in (4096, MIB, 4 * MIB)
        for op, first, lat, bw in kinds
    ]
    pf = platforms.from_calibration(records + newer, {}, cores=2)
    assert pf.read_copy_bw == pytest.approx(4e9, rel=0.01)
    assert pf.storage["read_overhead"] == pytest.approx(2e-6 + 4096 / 4e9)
    assert pf.write_copy_bw == pytest.approx(warm.write_copy_bw)
    assert pf.self_copy_seconds(MIB) == pytest.approx(MIB / 5e9)
    assert pf.self_copy_seconds(1024) == pytest.approx(warm.self_copy_seconds(1024))  # not measured cold
    assert pf.self_copy_seconds(4096) == pytest.approx(1e-6 + 4096 / 10e9)  # warm, with its latency, is slower


def test_the_hybrid_models_reads_tell_a_first_read_from_a_read_again():
    """pread's surrogate has `first` among its features: first reads recorded twice as slow as reads again do not
    blur the reads again that the hybrid model prices (cost without first), and are priced themselves."""
    from iotuner.perfmodel import calibration

    records = []
    for b in (4096, 65536, MIB, 4 * MIB):
        for w in (1, 2):
            for first, rate in ((0, 8e9), (1, 4e9)):
                records.append(
                    {
                        "op": "pread",
                        "nprocs": 2,
                        "writers": w,
                        "first": first,
                        "sync": 0,
                        "bytes": b,
                        "seconds": 1e-6 + b / rate,
                    }
                )
    sur = calibration.fit("pread", records, seed=0)
    X = lambda b, first: [calibration._features("pread", {"bytes": b, "writers": 1, "first": first})]
    again, first = 10 ** sur.model.predict(X(MIB, 0))[0], 10 ** sur.model.predict(X(MIB, 1))[0]
    assert again == pytest.approx(1e-6 + MIB / 8e9, rel=0.15)
    assert first == pytest.approx(1e-6 + MIB / 4e9, rel=0.15)


@pytest.mark.mpi
def test_microbench_measures_first_reads_and_cold_copies_too(tmp_path):
    """The storage group measures each size's reads again (first 0) and first reads (first 1: of a region just
    written to a new file), and its copies cold, per size and writer count; the file is gone afterwards."""
    import subprocess

    from conftest import kernel, mpi

    run = subprocess.run(
        mpi(2)
        + [
            kernel("iotuner-microbench"),
            "--ops",
            "storage",
            "--reps",
            "1",
            "--max-bytes",
            str(64 * 1024),
            "--dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    records = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    keys = lambda op, **m: {
        (r["writers"], r["bytes"]) for r in records if r["op"] == op and all(r[k] == v for k, v in m.items())
    }
    assert keys("pread", first=0) and keys("pread", first=1) == keys("pread", first=0) == keys("copy_cold")
    assert keys("pwrite", first=1) == keys("pread", first=0)
    assert not keys("pread_cold") and all(r["seconds"] > 0 for r in records)
    assert not list(tmp_path.iterdir())


def test_hopper_default_is_held_by_its_two_stripes_and_paper_004s_settings_lift_it():
    """VPIC-IO's layout (8 calls of 32 MiB per rank, one dataset per call) at 96 ranks on 4 nodes of the
    bundled hopper platform: ROMIO's default there (2 stripes, one aggregator per stripe) cannot beat two
    OSTs; paper 004's tuned settings (156 stripes of 32 MiB, an aggregator per rank) spread it over many, through
    the 78 aggregators ROMIO's Lustre driver keeps of the 96 asked for (the largest divisor of 156 not above 96)."""
    pf = platforms.load("hopper")
    phase = workloads.Phase("vpicio write", workloads.segmented("write", 8, 32 * MIB, 96), {}, {}, True, 0)
    wl = workloads.Workload("VPIC-IO", 96, 96, [phase])
    default = engine.simulate(wl, pf, 4, {})
    tuned = engine.simulate(
        wl,
        pf,
        4,
        {
            "lustre.stripe_count": 156,
            "lustre.stripe_size": "32M",
            "mpiio.cb_nodes": 96,
            "mpiio.cb_config_list": "*:24",
            "mpiio.cb_buffer_size": 32 * MIB,
            "mpiio.romio_cb_write": "enable",
        },
    )
    two_osts = 2 * pf.storage["ost_write_bw"]
    assert default.stripe_count == 2 and default.aggregators == 2
    assert default.bytes / default.seconds <= two_osts * 1.01
    assert tuned.aggregators == 78 and tuned.bytes / tuned.seconds > 10 * two_osts


def test_lustres_driver_spreads_every_round_of_a_write_over_the_osts():
    """256 ranks writing 4 MiB each per call (one region per rank), 16 aggregators, 4 MiB buffers, 64 stripes
    of 1 MiB on lustre-template. ROMIO's generic driver would give each aggregator a contiguous 64 MiB and all
    16 would write to the same 4 OSTs in each round: at most 4 OSTs' bandwidth. The Lustre driver gives stripe s
    to aggregator s mod 16, so each round reaches all 64 OSTs and only the nodes' links bind."""
    pf = platforms.load("lustre-template")
    phase = workloads.Phase("segmented write", workloads.segmented("write", 2, 4 * MIB, 256), {}, {}, True, 0)
    res = engine.simulate(
        workloads.Workload("segmented", 256, 256, [phase]),
        pf,
        8,
        {
            **CB,
            "mpiio.cb_nodes": 16,
            "mpiio.cb_config_list": "*:2",
            "mpiio.cb_buffer_size": 4 * MIB,
            "lustre.stripe_count": 64,
            "lustre.stripe_size": "1M",
        },
    )
    assert res.aggregators == 16
    assert res.bytes / res.seconds > 6 * pf.storage["ost_write_bw"]


def _rewritten(rep: str, tmp_path, name: str, **fields) -> str:
    """The report with every rank's summaries changed as the runtime writes them in another case."""
    doc = json.loads(open(rep).read())
    for entry in doc["access"]:
        for r in entry["ranks"]:
            for direction in ("write", "read"):
                if r.get(direction):
                    r[direction].update({k: (v(r[direction]) if callable(v) else v) for k, v in fields.items()})
    out = tmp_path / f"{name}.json"
    out.write_text(json.dumps(doc))
    return str(out)


def _disjoint(pattern) -> bool:
    """No byte of the file is written by two ranks in one call."""
    for k in range(pattern.ncalls):
        pieces = sorted(p for r in pattern.ranks if k < len(r.calls) for p in r.calls[k])
        if any(a[0] + a[1] > b[0] for a, b in zip(pieces, pieces[1:])):
            return False
    return True


def test_views_not_flattened_and_irregular_calls_scale_without_overlap(reports, tmp_path):
    """Two summaries without an exact shape, as the runtime writes them: calls through views it does not
    flatten (no offsets at all: darray filetypes, or more than 65,536 pieces) and calls whose
    sizes and spacing differ (no call size, step or stride). Both are rebuilt with every rank's bytes, no two
    ranks writing the same bytes (an overlap would let two-phase I/O merge them and predict more than the
    storage can take), at the measured rank count and at 64 ranks, with a note that says why."""
    unflat = _rewritten(
        reports["contiguous"],
        tmp_path,
        "unflat",
        offset=None,
        end=None,
        request_min=None,
        request_max=None,
        call_requests=None,
        call_step=None,
        request_stride=None,
        requests=0,
        unflattened_calls=lambda d: d["calls"],
    )
    irregular = _rewritten(
        reports["strided"],
        tmp_path,
        "irregular",
        call_bytes=None,
        call_requests=None,
        call_step=None,
        request_stride=None,
    )
    pf = platforms.load("lustre-template")
    ost = pf.storage["ost_write_bw"]
    for rep, why in ((unflat, "does not flatten"), (irregular, "irregular calls")):
        for ranks in (None, 64):
            wl = workloads.load(rep, ranks)
            n = ranks or 2
            assert wl.bytes == n * 2 * 8 * MIB  # 8 MiB a rank each way
            assert all(_disjoint(p.pattern) and not p.exact for p in wl.phases)
            assert any(why in note for note in wl.notes)
        res = engine.simulate(wl, pf, 4, {"lustre.stripe_count": 1, **CB})
        assert write_bw(res) <= ost * 1.001


def test_many_small_pieces_are_merged_to_what_the_simulator_takes(reports, monkeypatch):
    """16 KiB blocks interleaved across 256 ranks, 512 a rank each way: 131,072 requests a phase, twice what
    the simulator takes. Each rank's blocks merge 2 to 1, keeping every rank's bytes and no two ranks on the
    same bytes, with a note; and collective buffering's prediction moves by less than 10% from the unmerged
    one, since its rounds and messages hardly change."""
    wl = workloads.load(reports["strided"], 256)
    for p in wl.phases:
        assert sum(len(c) for r in p.pattern.ranks for c in r.calls) <= workloads.REQUEST_BUDGET
        assert _disjoint(p.pattern) and p.pattern.bytes == 256 * 8 * MIB
    assert any("merged 2 to one" in note for note in wl.notes)
    flat = {**CB, "mpiio.cb_nodes": "16", "lustre.stripe_count": 16}
    merged = engine.simulate(wl, platforms.load("lustre-template"), 8, flat)
    monkeypatch.setattr(workloads, "REQUEST_BUDGET", 1 << 20)
    whole = workloads.load(reports["strided"], 256)
    assert not any("merged" in note for note in whole.notes)
    exact = engine.simulate(whole, platforms.load("lustre-template"), 8, flat)
    assert merged.seconds == pytest.approx(exact.seconds, rel=0.10)


def test_too_many_requests_at_the_measured_scale_are_merged_or_averaged(reports, monkeypatch):
    """At the run's own rank count too: the simulator merges a phase's pieces past its budget (as at any
    scale), and the hybrid model, past the much larger number of requests it holds, rebuilds every rank from
    its average call instead of running out of memory. Both budgets are lowered here to the report's size."""
    from iotuner.perfmodel import pattern as patterns

    monkeypatch.setattr(workloads, "REQUEST_BUDGET", 512)  # the report: 2 ranks x 8 calls x 64 blocks each way
    wl = workloads.load(reports["strided"], None)
    for p in wl.phases:
        assert sum(len(c) for r in p.pattern.ranks for c in r.calls) == 512
        assert _disjoint(p.pattern) and p.pattern.bytes == 2 * 8 * MIB and p.measured_s
    assert sum("merged 2 to one" in note for note in wl.notes) == 2
    rep = run_report.load(reports["strided"])
    assert patterns.from_report(rep, 0, "write").exact
    monkeypatch.setattr(patterns, "PATTERN_LIMIT", 512)
    approx = patterns.from_report(rep, 0, "write")
    assert not approx.exact and approx.bytes == 2 * 8 * MIB and _disjoint(approx)


def test_phases_without_collective_calls_are_rebuilt_from_the_counters(tmp_path):
    """Runs whose ranks make no collective call among themselves have no access section for their phases:
    h5ior's independent transfers to one file, its file per process with collective calls on each rank's own
    communicator, and its file per process with independent ones (2 ranks, 4 calls of 1 MiB each way).
    The first is a shared file's independent calls (collective buffering changes nothing, striping does); the
    second keeps each rank's exact calls in its own file; the third is rebuilt from the counters. A file per
    process reaches an OST per rank where one shared file of one stripe reaches one, and every simulated rank
    keeps the bytes a rank moved."""
    pf = platforms.load("lustre-template")
    wl = {}
    for name, flags in {
        "shared": ["-m", "independent"],
        "own": ["-F"],
        "own-indep": ["-F", "-m", "independent"],
    }.items():
        rep = tmp_path / f"{name}.json"
        res = run_job(
            [*mpi(2), kernel("h5ior"), "-b", "4M", "-t", "1M", "-r", *flags, "-o", tmp_path / name], report=rep
        )
        assert res.ok, res.stderr
        assert not run_report.load(rep).access(0)
        measured = workloads.load(str(rep), None)
        assert measured.measured_ranks == 2 and all(p.measured_s for p in measured.phases)
        wl[name] = workloads.load(str(rep), 64)
    for name, w in wl.items():
        assert [p.label.rsplit(" ", 1)[1] for p in w.phases] == ["write", "read"]
        assert all(not p.collective and p.per_process == (name != "shared") for p in w.phases)
        for p in w.phases:  # a rank's data and HDF5's metadata, at MPI-IO
            assert 64 * 4 * MIB <= p.pattern.bytes <= 64 * 4 * MIB * 1.01
    assert all(p.exact and p.pattern.ncalls == 4 for p in wl["own"].phases)
    assert not any(p.exact for p in wl["own-indep"].phases + wl["shared"].phases)
    assert any("own communicator" in n for n in wl["own"].notes)
    assert any("rebuilt from the report's mpiio counters" in n for n in wl["shared"].notes)

    shared = wl["shared"]
    one = engine.simulate(shared, pf, 4, {"lustre.stripe_count": 1})
    cb = engine.simulate(shared, pf, 4, {"lustre.stripe_count": 1, **CB, "mpiio.cb_nodes": "4"})
    striped = engine.simulate(shared, pf, 4, {"lustre.stripe_count": 8})
    assert cb.seconds == pytest.approx(one.seconds, rel=1e-9) and cb.aggregators == 0
    assert one.phases[0].targets_used == 1 and striped.phases[0].targets_used == 8
    assert striped.seconds < one.seconds / 2
    for name in ("own", "own-indep"):
        own = engine.simulate(wl[name], pf, 4, {"lustre.stripe_count": 1})
        assert own.phases[0].targets_used == min(64, pf.storage["osts"])
        assert own.seconds < one.seconds / 8


def test_hdf5s_independent_transfers_can_be_simulated_as_collective_ones(tmp_path):
    """bandio's column bands (2 ranks, 8 H5Dwrite calls of 256 rows of 16 float64 a rank) with independent
    transfers have no access section; their phases are rebuilt as each H5Dwrite's pieces interleaved across
    the ranks, the MPI-IO call a piece the independent path makes. Collective-buffering hints change nothing
    there; hdf5.transfer_mode collective makes them the collective calls HDF5 would make, which predicts
    what the collective run's own access section predicts."""
    no_sieving = tmp_path / "no-sieving.json"
    no_sieving.write_text(
        json.dumps({"version": 1, "mpiio": {"romio_ds_write": "disable", "romio_ds_read": "disable"}})
    )
    wl = {}
    for mode in ("independent", "collective"):
        rep = tmp_path / f"{mode}.json"
        res = run_job(
            [
                *mpi(2),
                kernel("bandio"),
                "-n",
                "2K",
                "-c",
                "16",
                "-s",
                "256",
                "-g",
                "1",
                "-r",
                "-m",
                mode,
                "-o",
                tmp_path / mode,
            ],
            report=rep,
            config=no_sieving,
        )
        assert res.ok, res.stderr
        wl[mode] = workloads.load(str(rep), None)
    indep, coll = wl["independent"], wl["collective"]
    assert all(p.transfer and not p.collective for p in indep.phases) and all(p.collective for p in coll.phases)
    assert any(
        "HDF5's independent transfers, 8 dataset call(s) a rank of 256 piece(s) of 128 B" in n for n in indep.notes
    )
    for a, b in zip(indep.phases, coll.phases):  # the same requests, where the data starts aside
        shift = b.pattern.ranks[0].calls[0][0][0] - a.pattern.ranks[0].calls[0][0][0]
        assert [[[(o + shift, n) for o, n in c] for c in r.calls] for r in a.pattern.ranks] == [
            r.calls for r in b.pattern.ranks
        ]
    pf = one_node()
    as_run = engine.simulate(indep, pf, 1, {})
    cb = engine.simulate(indep, pf, 1, CB)
    switched = engine.simulate(indep, pf, 1, {"hdf5.transfer_mode": "collective"})
    own = engine.simulate(coll, pf, 1, {})
    assert cb.seconds == pytest.approx(as_run.seconds, rel=1e-9) and as_run.aggregators == 0
    assert switched.aggregators == own.aggregators >= 1
    assert switched.seconds == pytest.approx(own.seconds, rel=1e-6)
    assert switched.seconds != pytest.approx(as_run.seconds, rel=0.05)


def test_a_direction_without_collective_calls_beside_one_with_them_is_kept(reports, tmp_path):
    """A phase whose writes were collective and whose reads were not (one open, both): its access section has
    the writes only, and the reads are rebuilt from the phase's counters, not dropped. Made from the strided
    report by moving its read phase's counters into its write phase."""
    doc = json.loads(open(reports["strided"]).read())
    w, r = doc["phases"][0], doc["phases"][1]
    w["bytes_read"], w["mpiio"] = (
        r["bytes_read"],
        {**w["mpiio"], **{k: v for k, v in r["mpiio"].items() if "read" in k}},
    )
    r["bytes_read"] = 0
    doc["access"] = [e for e in doc["access"] if e["phase"] == 0]
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(doc))
    wl = workloads.load(str(mixed), None)
    assert [(p.label, p.collective) for p in wl.phases] == [("phase 0 write", True), ("phase 0 read", False)]
    assert wl.phases[1].pattern.bytes == doc["phases"][0]["mpiio"]["bytes_read"]


def test_a_run_under_ompio_is_simulated_as_romio_with_a_note(reports, tmp_path):
    """The simulator counts ROMIO's operations; a report of a run whose MPI-IO was Open MPI's OMPIO says so."""
    doc = json.loads(open(reports["strided"]).read())
    doc["run"]["mpi_io_component"] = "ompio"
    ompio = tmp_path / "ompio.json"
    ompio.write_text(json.dumps(doc))
    assert any("OMPIO" in n for n in workloads.load(str(ompio), 64).notes)
    assert not any("OMPIO" in n for n in workloads.load(reports["strided"], 64).notes)


def test_a_crashing_simulator_shows_its_own_message_in_full(reports, tmp_path, monkeypatch):
    """SimGrid dies with its cause first and a backtrace after it (SimGrid 4.0 without a network model): the
    error names the cause, not the backtrace's last line."""
    fake = tmp_path / "iosim"
    fake.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        "echo '[0.000000] [ker_platform/CRITICAL] Impossible to create link: backbone.' >&2\n"
        "echo 'Invalid network model: nullptr' >&2\n"
        "echo 'Backtrace (displayed in actor maestro):' >&2\n"
        "echo '  ->  #0 xbt_backtrace_display_current() at src/xbt/backtrace.cpp:30' >&2\n"
        "kill -ABRT $$\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(engine, "executable", lambda: str(fake))
    with pytest.raises(engine.SimulateError) as e:
        predict(reports["strided"], 64, 4, {})
    assert "Impossible to create link: backbone" in str(e.value) and "Invalid network model: nullptr" in str(e.value)
    assert "xbt_backtrace" not in str(e.value) and "exit -6" in str(e.value)


def test_a_nodes_lustre_client_rate_bounds_its_file_traffic_not_its_messages():
    """nodes.client_GBps: what one node moves to or from Lustre, whatever its NIC could carry. 48 ranks on 2
    nodes of hopper write 8 MiB each over 48 stripes, collectively, with every aggregator on node 0 (cb_nodes
    24, `*:24`): node 1's data reaches node 0 as messages and node 0 writes it all. A client rate of 0.25 GB/s
    holds the phase to it (node 0's writes); the same rate on the NIC instead would slow node 1's messages as
    well, so it takes longer still. A platform file keeps the field."""
    pf = platforms.load("hopper")
    phase = workloads.Phase("write", workloads.segmented("write", 1, 8 * MIB, 48), {}, {}, True, 0)
    wl = workloads.Workload("one call", 48, 48, [phase])
    flat = {
        **CB,
        "lustre.stripe_count": 48,
        "lustre.stripe_size": "1M",
        "mpiio.cb_nodes": 24,
        "mpiio.cb_config_list": "*:24",
        "mpiio.cb_buffer_size": 8 * MIB,
    }
    rate = 0.25e9
    free = engine.simulate(wl, pf, 2, flat)
    client = engine.simulate(wl, dataclasses.replace(pf, client_bw=rate), 2, flat)
    nic = engine.simulate(wl, dataclasses.replace(pf, nic_bw=rate), 2, flat)
    assert free.aggregators == 24
    assert free.bytes / free.seconds > 4 * rate  # without the client rate, node 0's NIC (5 GB/s) is far above it
    assert 0.8 * rate < client.bytes / client.seconds <= rate * 1.01
    assert nic.seconds > client.seconds * 1.2  # the same rate on the NIC also holds node 1's messages
    doc = dataclasses.replace(pf, client_bw=rate).to_json()
    assert doc["nodes"]["client_GBps"] == 0.25
    assert platforms.from_json(doc, "saved").client_bw == rate
    assert "client_GBps" not in pf.to_json()["nodes"]


@pytest.mark.slow
def test_paper_001s_hopper_scaling_at_4096_and_8192_cores_and_what_binds():
    """Paper 001's Table II on Hopper (VPIC-IO, the best configuration's GB/s), as `bench/simulate.py paper`
    sets it beside the simulator's: paper 004's tuned settings, the one unknown number (a node's rate as a
    Lustre client) fitted so that 512 cores give the paper's 3.0 GB/s, then held. At 8,192 cores the simulated
    bandwidth is within 25% of the paper's (measured -12%); at 4,096 it is 26% above (within 30%), and what holds
    it there is the NICs of the nodes whose ranks' data fills a round of the Lustre driver (156 consecutive
    ranks): twice their rate gives over 20% more. With the fitted rate on the NIC instead (the messages held to
    it as well) the two were -54% and -69%."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_simulate", Path(__file__).parents[1] / "bench" / "simulate.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from iotuner import settings

    stated = platforms.load("hopper")
    per_call = bench.PAPER_MIB_PER_CALL * MIB
    tuned = {n: settings.complete(bench.PAPER_004_TUNED, bench._nodes(n)) for n in (512, 4096, 8192)}
    paper = {n: bench.PAPER_001_HOPPER[n][0] for n in (512, 4096, 8192)}
    fitted = bench.fit_client(stated, 512, paper[512], per_call, tuned[512])
    assert 0 < fitted.client_bw < stated.nic_bw and fitted.nic_bw == stated.nic_bw
    at_8192 = bench._gbps(fitted, 8192, per_call, tuned[8192])
    assert abs(at_8192 / paper[8192] - 1) <= 0.25, at_8192
    at_4096 = bench._gbps(fitted, 4096, per_call, tuned[4096])
    assert abs(at_4096 / paper[4096] - 1) <= 0.30, at_4096
    faster_nic = dataclasses.replace(fitted, nic_bw=2 * fitted.nic_bw)
    assert bench._gbps(faster_nic, 4096, per_call, tuned[4096]) > 1.2 * at_4096
