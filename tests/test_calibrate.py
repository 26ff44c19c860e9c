"""iotuner calibrate: micro-benchmarks, one surrogate per operation chosen by CV, the calibration file."""

import json
import re
import subprocess
import sys

import pytest

from iotuner.perfmodel import calibration

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    d = tmp_path_factory.mktemp("cal")
    out = d / "cal.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "calibrate",
            "--passes",
            "1",
            "--max-bytes",
            "1048576",
            "--dir",
            str(d),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out


def test_prints_every_surrogate_with_cv_scores(calibrated):
    stdout, out = calibrated
    rows = {
        m.group(1): m
        for m in re.finditer(r"^(\w+)\s+(knn|svr-rbf|random-forest)\s+(\d+)\s+(-?[\d.]+)\s+([\d.e+-]+)", stdout, re.M)
    }
    assert set(rows) == set(calibration.SURROGATES)
    for m in rows.values():
        assert int(m.group(3)) >= 6 and float(m.group(4)) <= 1.0


def test_calibration_file_reloads_and_costs_grow_with_size(calibrated):
    _, out = calibrated
    cal = calibration.Calibration.load(out)
    assert cal.meta["ranks"] == 2 and set(cal.surrogates) == set(calibration.SURROGATES)
    doc = json.loads(out.read_text())
    assert {r["op"] for r in doc["measurements"]} == {
        "allgather",
        "alltoall",
        "allreduce",
        "bcast",
        "p2p",
        "pwrite",
        "pread",
        "copy_cold",
    }
    # a megabyte costs more than a few bytes, whatever learner was chosen
    assert cal.cost("p2p", 1 << 20, nprocs=2) > cal.cost("p2p", 8, nprocs=2)
    assert cal.cost("pwrite", 1 << 20, writers=1) > cal.cost("pwrite", 4096, writers=1)
    assert cal.cost("pwrite", 65536, writers=1, sync=True) > cal.cost("pwrite", 65536, writers=1)


def test_bad_calibration_files_are_named(tmp_path):
    with pytest.raises(calibration.CalibrationError, match="no calibration file.*iotuner calibrate"):
        calibration.Calibration.load(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(calibration.CalibrationError, match="corrupt"):
        calibration.Calibration.load(bad)
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(calibration.CalibrationError, match="not an iotuner calibration file"):
        calibration.Calibration.load(bad)


def test_microbench_measures_only_the_groups_asked(tmp_path):
    """--ops p2p: exchanges at every size and rank count, no collective and no storage record; a list that
    names no group is refused with a message naming it."""
    from conftest import kernel, mpi

    run = subprocess.run(
        mpi(2)
        + [kernel("iotuner-microbench"), "--ops", "p2p", "--reps", "1", "--max-bytes", "4096", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    records = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert {r["op"] for r in records} == {"p2p"}
    assert {(r["nprocs"], r["bytes"]) for r in records} == {(n, 1 << k) for n in (1, 2) for k in range(13)}
    bad = subprocess.run(
        mpi(1) + [kernel("iotuner-microbench"), "--ops", "pwrites"], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode != 0 and "--ops pwrites names no group" in bad.stderr


def test_poor_fits_are_warned_about(calibrated):
    """Every surrogate below the threshold is named in one warning, and none when all fit."""
    from iotuner.commands.calibrate import POOR_FIT

    stdout, _ = calibrated
    r2 = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^(\w+)\s+(?:knn|svr-rbf|random-forest)\s+\d+\s+(-?[\d.]+)", stdout, re.M)
    }
    poor = [name for name, x in r2.items() if x < POOR_FIT]
    warned = [line for line in stdout.splitlines() if line.startswith("warning: ")]
    if poor:
        assert len(warned) == 1 and all(f"{name} (R2" in warned[0] for name in poor), (poor, warned)
    else:
        assert not warned, warned


def test_the_fit_warning_names_the_poor_surrogates():
    from types import SimpleNamespace

    from iotuner.commands.calibrate import fit_warning

    fit = lambda r2: SimpleNamespace(cv_r2=r2)  # noqa: E731
    cal = SimpleNamespace(surrogates={"allreduce": fit(0.6), "write": fit(0.97), "bcast": fit(0.85)})
    w = fit_warning(cal)
    assert "2 of 3 surrogates" in w and "allreduce (R2 0.60)" in w and "bcast (R2 0.85)" in w and "write" not in w
    assert fit_warning(SimpleNamespace(surrogates={"write": fit(0.97)})) is None
