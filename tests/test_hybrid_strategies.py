"""Strategies hybrid and ml on the protocol; the design of ml's training runs."""

import csv
import json
import subprocess
import sys

import pytest

from iotuner.tune import space as spaces
from iotuner.tune import strategies
from iotuner.tune.strategies.hybrid.design import balanced_fraction


def iotuner(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


def test_balanced_fraction_is_a_latin_square_for_two_three_level_knobs():
    points = balanced_fraction([["a", "b", "c"], ["1", "2", "3"]], 3, seed=5)
    assert len(points) == 3
    assert sorted(p[0] for p in points) == ["a", "b", "c"] and sorted(p[1] for p in points) == ["1", "2", "3"]
    big = balanced_fraction([["a", "b", "c"], ["1", "2"], ["x", "y", "z", "w", "v"]], 30, seed=1)
    assert len(big) == len(set(big)) and len(big) >= 20  # repeated combinations dropped, most kept


def test_ml_trains_on_the_design_then_runs_its_top_k(tmp_path):
    r = iotuner("tune", "--synthetic", "ufs", "--space", "twophase", "--strategy", "ml", "--strategy-option", "train=12",
                "--strategy-option", "top=3", "--objective", "write-bw", "--trials", 20, "--study", "ml",
                "--out", tmp_path / "out", timeout=600)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(tmp_path / "out" / "trials.csv")))
    training = [x for x in rows if x["kind"] == "training"]
    trials = [x for x in rows if x["kind"] == "trial"]
    assert len(training) == 12 and 1 <= len(trials) <= 3
    assert not {x["settings"] for x in trials} & {x["settings"] for x in training}  # it predicts the others
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop"]["rule"] in ("strategy", "exhaustion") and any("ml: SVR-RBF" in n for n in summary["notes"])


def test_strategy_options_are_checked():
    sp = spaces.twophase()
    with pytest.raises(ValueError, match="top"):
        strategies.make("hybrid", sp, 0, {"top": "0"})
    with pytest.raises(ValueError, match="ml"):
        strategies.make("ml", sp, 0, {"train": "many"})
    tunio_hdf5 = spaces.SearchSpace("h", [d for d in spaces.tunio().dimensions if d.name.startswith("hdf5")])
    with pytest.raises(ValueError, match="no MPI-IO hint"):
        strategies.make("hybrid", tunio_hdf5, 0, {})
