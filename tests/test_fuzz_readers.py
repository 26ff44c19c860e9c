"""Mutation fuzzing of the readers: damaged run reports to `show`, `report` and `advise`, damaged tune
directories and advice files to `report`, damaged XML to `convert`.

A seeded mutator (reproducible: the seed is in the failure message) damages
real inputs at the JSON / XML level and at the byte level. Each command's
main runs in-process; any exception escaping it is a crash, with its place.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import traceback
from pathlib import Path

import pytest

from conftest import kernel, mpi, run_job
from iotuner import cli

DATA = Path(__file__).parent / "data"
N = 2000

ODD_VALUES = [
    None,
    "",
    "[bold]x[/bold]",
    "\udcff" if False else "\u00e9\u00e8",
    -1,
    0,
    2**70,
    1e308,
    float("nan"),
    True,
    [],
    {},
    [1, 2],
    {"a": 1},
    "1",
    3.5,
    "x" * 300,
]


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _mutate_tree(doc, rng: random.Random):
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            return doc
        path = rng.choice(paths)
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        op = rng.random()
        if op < 0.35:
            del parent[key]
        elif op < 0.85:
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        else:
            parent[key + "_x" if isinstance(key, str) else key] = copy.deepcopy(parent[key])
    return doc


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    op = rng.random()
    if op < 0.3:
        return bytes(data[: rng.randrange(len(data))])
    if op < 0.6:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if op < 0.8:
        i = rng.randrange(len(data))
        return bytes(data[:i] + rng.choice([b"\xff\xfe", b"\x00", b"\xc3", "\u00e9".encode("latin-1")]) + data[i:])
    i, j = sorted(rng.randrange(len(data)) for _ in range(2))
    return bytes(data[:i] + data[j:])


def _call(argv: list[str]) -> str | None:
    """None, or where the command crashed."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = cli.main(argv)
    except SystemExit as e:  # argparse
        status = e.code
    except Exception as e:  # noqa: BLE001 - any escape is the finding
        last = traceback.extract_tb(e.__traceback__)[-1]
        return f"{type(e).__name__} at {Path(last.filename).name}:{last.lineno} ({e!s:.80})"
    return None if status in (0, 1, 2) else f"exit status {status}"


def _fuzz(
    seeds: list[bytes], argv_of, tmp_path: Path, suffix: str, tree_mutator, n: int = N
) -> tuple[int, dict[str, str]]:
    crashes: dict[str, str] = {}
    rng = random.Random(16)
    target = tmp_path / f"damaged{suffix}"
    for i in range(n):
        seed = seeds[i % len(seeds)]
        data = tree_mutator(seed, rng) if rng.random() < 0.7 else _mutate_bytes(seed, rng)
        target.write_bytes(data)
        where = _call(argv_of(target))
        if where and where not in crashes:
            crashes[where] = f"case {i}: {data[:160]!r}"
    return n, crashes


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> list[bytes]:
    """A version 1 report (tests/data), and a fresh version 2 one from a run in smart mode."""
    seeds = [(DATA / "bad_run_report.json").read_bytes()]
    d = tmp_path_factory.mktemp("fuzz-seed")
    import os

    r = run_job([*mpi(), kernel("flashio"), "-o", str(d)], report=d / "r.json", env=dict(os.environ, IOTUNER_SMART="1"))
    if r.report is not None:
        seeds.append((d / "r.json").read_bytes())
    return seeds


def _json_tree(seed: bytes, rng: random.Random) -> bytes:
    return json.dumps(_mutate_tree(json.loads(seed), rng)).encode()


@pytest.mark.mpi
def test_show_survives_damaged_run_reports(reports, tmp_path):
    assert any(b'"smart"' in r for r in reports), "the seed from smart mode is missing"
    n, crashes = _fuzz(reports, lambda p: ["show", str(p)], tmp_path, ".json", _json_tree)
    assert not crashes, f"show crashed on damaged reports at {len(crashes)} places:\n" + "\n".join(
        f"{k}: {v}" for k, v in list(crashes.items())[:15]
    )


XML_SEEDS = [
    b'<?xml version="1.0"?>\n<Parameters><High_Level_IO_Library><alignment>0,65536</alignment>'
    b'<sieve_buf_size>262144</sieve_buf_size><chunk FileName="out.h5" VariableName="x">8,16</chunk>'
    b"</High_Level_IO_Library><Middleware_Layer><cb_buffer_size>8388608</cb_buffer_size><cb_nodes>2</cb_nodes>"
    b'</Middleware_Layer><Parallel_File_System><striping_factor FileName="a.h5">4</striping_factor>'
    b"<striping_unit>1048576</striping_unit></Parallel_File_System></Parameters>\n",
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n<Parameters><cb_nodes FileName="donn\u00e9es.h5">2</cb_nodes>'
    "<IBM_lockless_io>1</IBM_lockless_io></Parameters>\n".encode("latin-1"),
]


def _xml_tree(seed: bytes, rng: random.Random) -> bytes:
    """Damage at the element level: values, attributes, tags replaced or dropped."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(seed)
    for _ in range(rng.randint(1, 3)):
        elements = list(root.iter())
        el = rng.choice(elements)
        op = rng.random()
        if op < 0.4:
            el.text = str(rng.choice(ODD_VALUES + ["-4", "1,2,3", "0", " 7 ", "\u0663", "1e3", ","]))
        elif op < 0.6:
            el.set(rng.choice(["FileName", "VariableName"]), str(rng.choice(ODD_VALUES + ["*", "/a/b", "[x"])))
        elif op < 0.8 and el is not root:
            el.tag = rng.choice(["chunk", "alignment", "cb_nodes", "striping_unit", "bogus", "sieve_buf_size"])
        else:
            for child in list(el)[:1]:
                el.remove(child)
    return ET.tostring(root, encoding=rng.choice(["utf-8", "iso-8859-1", "us-ascii"]))


def test_convert_survives_damaged_xml(tmp_path):
    n, crashes = _fuzz(XML_SEEDS, lambda p: ["convert", str(p)], tmp_path, ".xml", _xml_tree)
    assert not crashes, f"convert crashed on damaged XML at {len(crashes)} places:\n" + "\n".join(
        f"{k}: {v}" for k, v in list(crashes.items())[:15]
    )


def test_a_phase_without_its_file_is_named(tmp_path):
    doc = json.loads((DATA / "bad_run_report.json").read_bytes())
    del doc["phases"][0]["file"]
    (tmp_path / "r.json").write_text(json.dumps(doc))
    for argv in (["show"], ["smart", "--explain"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = cli.main([*argv, str(tmp_path / "r.json")])
        if argv[0] == "show":
            assert status == 2 and out.getvalue().count("\n") == 1
            assert "r.json is damaged: phases[0].file: is missing" in out.getvalue()
        else:
            assert status in (1, 2)  # a version 1 report is not from smart mode: said so, no traceback


# ---- iotuner report and iotuner advise (issue 26: 51 and 4 tracebacks before their readers were typed) ----

N_REPORT = 1000  # damaged inputs per reader and input kind


def _crash_list(crashes: dict[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in list(crashes.items())[:15])


@pytest.mark.mpi
def test_report_survives_damaged_run_reports(reports, tmp_path):
    out = tmp_path / "page.html"
    n, crashes = _fuzz(reports, lambda p: ["report", str(p), "-o", str(out)], tmp_path, ".json", _json_tree, N_REPORT)
    assert n >= 1000 and not crashes, (
        f"report crashed on damaged run reports at {len(crashes)} places:\n" + _crash_list(crashes)
    )


@pytest.mark.mpi
def test_advise_survives_damaged_run_reports(reports, tmp_path):
    n, crashes = _fuzz(reports, lambda p: ["advise", str(p), "--json"], tmp_path, ".json", _json_tree, N_REPORT)
    assert n >= 1000 and not crashes, (
        f"advise crashed on damaged run reports at {len(crashes)} places:\n" + _crash_list(crashes)
    )


@pytest.mark.mpi
def test_advise_survives_each_damaged_recorded_insight(reports, tmp_path):
    """Every key of smart mode's recorded insights, given every odd value in turn (the random damage found a
    list in `processes` once in a thousand cases): advise computes that phase's insights from the report."""
    doc = json.loads(next(r for r in reports if b'"smart"' in r))
    learned = [p for p in doc["smart"]["phases"] if p.get("role") == "learn" and p.get("insights")]
    assert learned, "the smart-mode seed learned no phase"
    crashes: dict[str, str] = {}
    target = tmp_path / "damaged.json"
    for key in learned[0]["insights"]:
        for value in ODD_VALUES:
            damaged = copy.deepcopy(doc)
            next(p for p in damaged["smart"]["phases"] if p.get("insights"))["insights"][key] = value
            target.write_text(json.dumps(damaged))
            where = _call(["advise", str(target), "--json"])
            if where and where not in crashes:
                crashes[where] = f"insights.{key} = {value!r:.40}"
    assert not crashes, "advise crashed on damaged recorded insights:\n" + _crash_list(crashes)


@pytest.mark.mpi
def test_report_survives_damaged_advice(reports, tmp_path):
    seed = tmp_path / "seed.json"
    seed.write_bytes(reports[-1])
    advices = []
    for r in (seed, DATA / "bad_run_report.json"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli.main(["advise", str(r), "--json"])
        advices.append(out.getvalue().encode())
    assert all(b'"kind": "iotuner-advice"' in a for a in advices)
    page = tmp_path / "page.html"
    n, crashes = _fuzz(advices, lambda p: ["report", str(p), "-o", str(page)], tmp_path, ".json", _json_tree, N_REPORT)
    assert not crashes, f"report crashed on damaged advice at {len(crashes)} places:\n" + _crash_list(crashes)


@pytest.fixture(scope="module")
def tune_dir(tmp_path_factory) -> Path:
    """A real tune output directory (synthetic objective: seconds), without its study database, so that the
    page's parameter importance reads trials.csv, which the fuzzer damages too."""
    out = tmp_path_factory.mktemp("tune") / "out"
    status = cli.main(["tune", "--synthetic", "ufs", "--trials", "6", "--out", str(out)])
    assert status == 0 and (out / "summary.json").is_file()
    (out / "study.db").unlink()
    return out


@pytest.mark.slow
def test_report_survives_damaged_tune_directories(tune_dir, tmp_path):
    files = {name: (tune_dir / name).read_bytes() for name in ("summary.json", "trials.csv", "best.json")}
    rng = random.Random(26)
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    page = tmp_path / "page.html"
    crashes: dict[str, str] = {}
    for i in range(N_REPORT):
        name = rng.choice(["summary.json", "summary.json", "trials.csv", "best.json"])
        for other, data in files.items():
            (damaged / other).write_bytes(data)
        seed = files[name]
        if name.endswith(".json") and rng.random() < 0.7:
            data = _json_tree(seed, rng)
        else:
            data = _mutate_bytes(seed, rng)
        (damaged / name).write_bytes(data)
        where = _call(["report", str(damaged), "-o", str(page)])
        if where and where not in crashes:
            crashes[where] = f"case {i} ({name}): {data[:160]!r}"
    assert not crashes, f"report crashed on damaged tune directories at {len(crashes)} places:\n" + _crash_list(crashes)


# ---- calibration and platform files (issue 39: 257 tracebacks in 500 damaged calibrations to calibrate, 73 from
# simulate on damaged platforms and calibrations, before both were read against their schemas) ----

N_DOCS = 500  # damaged inputs per reader
BENCH = Path(__file__).parent.parent / "bench" / "data"
PLATFORMS = Path(__file__).parent.parent / "python" / "iotuner" / "simulate" / "platforms"


@pytest.fixture(scope="module")
def calibrations() -> list[bytes]:
    """Calibration files made of this machine's committed measurements (one pass of them), with a surrogate of
    each learner."""
    import gzip

    recorded = json.loads(gzip.decompress((BENCH / "simulate-calibration.json.gz").read_bytes()))
    records = [r for r in recorded["records"] if r["pass"] == 0]
    params = {
        "knn": {"kneighborsregressor__n_neighbors": 3, "kneighborsregressor__weights": "distance"},
        "svr-rbf": {"svr__C": 10.0, "svr__gamma": "scale", "svr__epsilon": 0.1},
        "random-forest": {"min_samples_leaf": 3},
    }
    seeds = []
    for first in params:
        learners = [first, *(k for k in params if k != first)]
        surrogates = {
            op: {
                "learner": learners[i % 3],
                "params": params[learners[i % 3]],
                "cv_r2": 0.9,
                "cv_rmse_s": 1e-5,
                "cv_rmse_log10": 0.1,
                "points": 20,
            }
            for i, op in enumerate(["allgather", "alltoall", "allreduce", "bcast", "p2p", "pwrite", "pread"])
        }
        doc = {
            "format": "iotuner-calibration",
            "version": 1,
            "host": "vm",
            "created": "2026-11-26T14:20:34Z",
            "ranks": 2,
            "dir": "/dev/shm",
            "surrogates": surrogates,
            "measurements": records,
        }
        seeds.append(json.dumps(doc).encode())
    return seeds


@pytest.fixture
def fits_once(monkeypatch):
    """A surrogate fitted again to the same learner, parameters and measurements is the first fit (scikit-learn's
    fits are deterministic: the seed is fixed), so it is fitted once: most damage leaves the measurements alone,
    and the readers, not the fits, are under test. A fit that raises is tried every time."""
    import numpy as np

    from iotuner.perfmodel import calibration

    real, fitted = calibration._learner, {}

    def learner(kind, params, seed=0):
        est = real(kind, params, seed)
        fit = est.fit

        def fit_once(X, y):
            X, y = np.asarray(X), np.asarray(y)
            if X.dtype.kind not in "fiu" or y.dtype.kind not in "fiu":  # objects: their bytes are not their values
                return fit(X, y)
            key = (kind, json.dumps(params, sort_keys=True, default=repr), seed, X.shape, X.tobytes(), y.tobytes())
            if key not in fitted:
                fitted[key] = fit(X, y)
            return fitted[key]

        est.fit = fit_once
        return est

    monkeypatch.setattr(calibration, "_learner", learner)


def _small_grid(monkeypatch):
    """calibrate's model selection with one candidate: the fuzzer is after the reader, not scikit-learn's
    grid search (a minute a file here)."""
    from iotuner.perfmodel import calibration

    full = calibration._candidates
    monkeypatch.setattr(
        calibration,
        "_candidates",
        lambda seed: {"knn": (full(seed)["knn"][0], {"kneighborsregressor__n_neighbors": [2]})},
    )


@pytest.mark.slow
def test_calibrate_from_measurements_survives_damaged_calibrations(calibrations, tmp_path, monkeypatch, fits_once):
    _small_grid(monkeypatch)
    out = tmp_path / "refit.json"
    n, crashes = _fuzz(
        calibrations,
        lambda p: ["calibrate", "--from-measurements", str(p), "--output", str(out)],
        tmp_path,
        ".json",
        _json_tree,
        N_DOCS,
    )
    assert n >= 500 and not crashes, (
        f"calibrate crashed on damaged calibrations at {len(crashes)} places:\n" + _crash_list(crashes)
    )


@pytest.mark.slow
def test_simulate_here_survives_damaged_calibrations(calibrations, tmp_path, fits_once):
    report = str(DATA / "bad_run_report.json")
    n, crashes = _fuzz(
        calibrations,
        lambda p: ["simulate", report, "--platform", "here", "--calibration", str(p)],
        tmp_path,
        ".json",
        _json_tree,
        N_DOCS,
    )
    assert n >= 500 and not crashes, (
        f"simulate crashed on damaged calibrations at {len(crashes)} places:\n" + _crash_list(crashes)
    )


@pytest.mark.slow
def test_the_tuners_calibration_reader_says_why_or_loads(calibrations, tmp_path, fits_once):
    """What tune's prior (auto, hybrid) reads: a damaged calibration is a CalibrationError with its reason (the
    study then has no prior), never another exception."""
    from iotuner.perfmodel import calibration

    rng = random.Random(39)
    target = tmp_path / "cal.json"
    crashes: dict[str, str] = {}
    loaded = 0
    for i in range(N_DOCS):
        seed = calibrations[i % len(calibrations)]
        data = _json_tree(seed, rng) if rng.random() < 0.7 else _mutate_bytes(seed, rng)
        target.write_bytes(data)
        try:
            calibration.Calibration.load(target)
            loaded += 1
        except calibration.CalibrationError as e:
            assert "\n" not in str(e) and str(target) in str(e)
        except Exception as e:  # noqa: BLE001 - any other escape is the finding
            last = traceback.extract_tb(e.__traceback__)[-1]
            crashes.setdefault(f"{type(e).__name__} at {Path(last.filename).name}:{last.lineno}", f"case {i}")
    assert not crashes, _crash_list(crashes)
    assert 0 < loaded < N_DOCS  # some damage is harmless (an extra field), most is refused


def test_simulate_survives_damaged_platforms(tmp_path):
    seeds = [
        (PLATFORMS / "hopper.json").read_bytes(),
        (PLATFORMS / "lustre-template.json").read_bytes(),
        (BENCH / "simulate-here.json").read_bytes(),
    ]
    report = str(DATA / "bad_run_report.json")
    n, crashes = _fuzz(
        seeds,
        lambda p: ["simulate", report, "--platform", str(p), "--ranks", "8", "--nodes", "1"],
        tmp_path,
        ".json",
        _json_tree,
        N_DOCS,
    )
    assert n >= 500 and not crashes, f"simulate crashed on damaged platforms at {len(crashes)} places:\n" + _crash_list(
        crashes
    )
