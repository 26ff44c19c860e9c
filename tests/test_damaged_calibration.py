"""A damaged calibration file never stops a study: `iotuner tune` (default strategy auto) runs without a prior
and its header says why, naming the field; `simulate --platform here` and `calibrate --from-measurements` say
the same in one line (exit 2). The damage is the issue's: a measurement without `op`, a measurement that is a
number, an unknown learner, nprocs: Infinity, svr__C: "4MB"."""

import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import flat

pytestmark = pytest.mark.mpi

BENCH = Path(__file__).parent.parent / "bench" / "data"
DATA = Path(__file__).parent / "data"
OPS = ["allgather", "alltoall", "allreduce", "bcast", "p2p", "pwrite", "pread"]


def calibration_doc() -> dict:
    """A calibration of this machine's committed measurements (their first pass), every surrogate a kNN but
    p2p's, an SVR."""
    recorded = json.loads(gzip.decompress((BENCH / "simulate-calibration.json.gz").read_bytes()))
    knn = {
        "learner": "knn",
        "params": {"kneighborsregressor__n_neighbors": 3},
        "cv_r2": 0.9,
        "cv_rmse_s": 1e-5,
        "cv_rmse_log10": 0.1,
        "points": 20,
    }
    surrogates = {op: dict(knn) for op in OPS}
    surrogates["p2p"] = {**knn, "learner": "svr-rbf", "params": {"svr__C": 10.0, "svr__gamma": "scale"}}
    return {
        "format": "iotuner-calibration",
        "version": 1,
        "host": "vm",
        "surrogates": surrogates,
        "measurements": [r for r in recorded["records"] if r["pass"] == 0],
    }


def _no_op(d):
    del d["measurements"][0]["op"]


def _a_number(d):
    d["measurements"][3] = 7


def _learner(d):
    d["surrogates"]["pwrite"]["learner"] = "xgboost"


def _infinity(d):
    d["measurements"][5]["nprocs"] = float("inf")  # json.dumps writes Infinity


def _svr_c(d):
    d["surrogates"]["p2p"]["params"]["svr__C"] = "4MB"


DAMAGE = {
    "measurement without op": (_no_op, "measurements[0].op: is missing"),
    "measurement that is a number": (_a_number, "measurements[3]: expected object, got an integer"),
    "unknown learner": (_learner, 'surrogates.pwrite.learner: "xgboost" is not one of'),
    "nprocs Infinity": (_infinity, "measurements[5].nprocs: expected integer, got inf"),
    "svr__C 4MB": (_svr_c, "surrogates.p2p.params.svr__C: expected number, got a string"),
}


def damaged(tmp_path: Path, kind: str) -> tuple[Path, str]:
    doc = calibration_doc()
    damage, field = DAMAGE[kind]
    damage(doc)
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(doc))
    return path, field


def iotuner(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, timeout=600, env=env
    )


def test_the_undamaged_calibration_loads():
    """The damage below is what the readers refuse: the same document undamaged is a calibration."""
    from iotuner.perfmodel import calibration

    cal = calibration.Calibration.from_doc(calibration_doc())
    assert set(cal.surrogates) == set(OPS) and cal.cost("p2p", 1 << 20, nprocs=2) > 0


@pytest.mark.parametrize("kind", DAMAGE)
def test_tune_with_a_damaged_calibration_completes_without_a_prior(tmp_path, kind):
    import os

    cal, field = damaged(tmp_path, kind)
    out = tmp_path / "study"
    scratch = tempfile.mkdtemp(prefix="iotuner-damaged-", dir="/dev/shm")  # its own: tests run side by side
    r = iotuner(
        "tune",
        "--trials",
        "1",
        "--confirm-rounds",
        "1",
        "--out",
        out,
        "--",
        "h5ior",
        "-b",
        "1M",
        "-t",
        "256K",
        "-o",
        scratch,
        env=dict(os.environ, IOTUNER_CALIBRATION=str(cal)),
    )
    shutil.rmtree(scratch)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((out / "summary.json").read_text())["trials"]
    said = flat(r.stdout)
    unwrapped = "".join(said.split())  # a path longer than the terminal is broken across lines
    assert "".join(f"auto: no prior: calibration file {cal} is damaged: {field}".split()) in unwrapped, said[:3000]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("kind", DAMAGE)
def test_simulate_and_calibrate_name_the_field(tmp_path, kind):
    cal, field = damaged(tmp_path, kind)
    sim = iotuner("simulate", DATA / "bad_run_report.json", "--platform", "here", "--calibration", cal)
    refit = iotuner("calibrate", "--from-measurements", cal, "--output", tmp_path / "out.json")
    for r in (sim, refit):
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and field in r.stderr, r.stderr
