"""What `iotuner tune` prints: one line a trial that fits 80 columns, --quiet, --verbose."""

import os
import re
import subprocess
import sys

import pytest

TRIAL = re.compile(r"^ +\S+  trial +(\d+)  .*\[(\d+)/10 ~\S+ left\]")


def tune(tmp_path, *args, columns=80):
    env = {**os.environ, "COLUMNS": str(columns)}
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", "--synthetic", "ufs", "--trials", "10", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_a_trial_is_one_line_within_80_columns(tmp_path):
    lines = tune(tmp_path)
    trials = [i for i, line in enumerate(lines) if TRIAL.match(line)]
    assert [int(TRIAL.match(lines[i]).group(1)) for i in trials] == list(range(10)), lines
    assert all(len(lines[i]) <= 80 for i in trials), max(lines, key=len)
    # between the first trial and the last, only trial lines and the interleaved baseline runs: no line of
    # knobs wrapped under a trial
    between = lines[trials[0] : trials[-1] + 1]
    assert all(TRIAL.match(x) or "baseline (interleaved)" in x for x in between), between
    # the knobs shown are those that differ from the default: the space's defaults are never named
    assert not any("romio_cb_write=automatic" in lines[i] or "alignment=1,1" in lines[i] for i in trials)
    # the confirmation round in a line a round, and the verdict after it
    rounds = [x for x in lines if re.match(r"^ +\S+  \d/\d +[\d,.]+", x)]
    assert len(rounds) == 5 and all(len(x) <= 80 for x in rounds), lines
    assert any(x.startswith("best: trial ") for x in lines)
    # header, notes, the trials, a baseline, the round and the outcome (30 lines at 80 columns): not 119 as the
    # knobs of every trial over 4-5 lines made it
    assert len(lines) < 70, len(lines)


def test_quiet_prints_no_trial_and_verbose_every_knob(tmp_path):
    quiet = tune(tmp_path, "--quiet", "--study", "q")
    assert not any(TRIAL.match(x) for x in quiet) and any(x.startswith("best: trial ") for x in quiet)
    loud = tune(tmp_path, "-v", "--study", "v", columns=200)
    trials = [i for i, line in enumerate(loud) if TRIAL.match(line)]
    assert len(trials) == 10
    # every knob of the space, defaults included, on the trial's line or under it
    knobs = " ".join(loud[trials[0] : trials[1]])
    for name in ("romio_cb_write=", "cb_buffer_size=", "coll_metadata_writes=", "transfer_mode="):
        assert name in knobs, knobs


@pytest.mark.parametrize("columns", [80, 100])
def test_knob_names_are_never_cut(columns):
    """`iotuner knobs` at 80 columns: a function name such as H5Pset_meta_block_size is whole on its line."""
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "knobs"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(columns)},
    )
    assert r.returncode == 0, r.stderr
    assert all(len(line) <= columns for line in r.stdout.splitlines())
    for name in ("H5Pset_meta_block_size", "H5Pset_alignment", "mpiio.romio_cb_write", "hdf5.meta_block_size"):
        assert name in r.stdout, name
