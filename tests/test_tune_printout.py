"""What `iotuner tune` prints: one line a trial that fits 80 columns, --quiet, --verbose."""

import csv
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
    # auto's note gives the reason that holds: no application ran, not "it ran without libiotuner"
    said = " ".join(lines)
    assert "auto: no prior: a synthetic objective runs no application" in said and "without libiotuner" not in said
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


def test_the_verdict_of_a_synthetic_tuning_gives_an_interval(tmp_path):
    lines = tune(tmp_path, "--quiet")
    verdict = " ".join(lines[next(i for i, x in enumerate(lines) if x.startswith("best: ")) :])
    m = re.search(r"(\d+\.\d+)x the default \([+-][\d.]+%, 95% interval (\d+\.\d+)-(\d+\.\d+)x", verdict)
    assert m, verdict
    gain, low, high = map(float, m.groups())
    assert low <= gain <= high
    import json

    v = json.loads((tmp_path / "iotuner-synthetic-ufs" / "summary.json").read_text())["verdict"]
    assert v["low"] == pytest.approx(low, abs=0.006) and v["high"] == pytest.approx(high, abs=0.006)


def _verdict(candidate, default):
    from dataclasses import asdict

    from iotuner.tune import noise, objective, printout

    v = noise.compare(candidate, default, objective.parse("perf", None))
    return v, printout.describe_verdict(asdict(v))


def test_a_wild_default_leaves_the_magnitude_uncertain_and_a_steady_one_does_not():
    # the case: default runs from 15.6 to 2,649 MiB/s, a winner near 1,000
    wild, text = _verdict([1000, 1100, 990, 1020, 1005, 1010, 995], [15.6, 2649, 30, 1800, 25, 20, 40])
    assert wild.high / wild.low > 3 and "magnitude is uncertain" in text, text
    steady, text = _verdict([1596, 1466, 1596, 1477, 1597], [1213, 1295, 1141, 1099, 1209])
    assert steady.low < steady.gain < steady.high < 2 * steady.low and "uncertain" not in text, text


def test_a_loss_is_worded_as_a_loss():
    v, text = _verdict([71, 70, 72, 73, 69], [100, 101, 99, 100, 102])
    assert v.gain < 1 and "loss" in text and "within the measured noise" not in text, text
    same, text = _verdict([99, 101, 100, 98, 102], [100, 101, 99, 100, 102])
    assert "within the measured noise" in text and "loss, " not in text, text


def test_no_negative_roti_peak():
    from iotuner.tune import objective, trajectory
    from iotuner.tune.study.derive import Point

    obj = objective.parse("perf", None)
    worse = [Point(t, "trial", i, True, 90.0, 90.0, 1, 100.0, 1) for i, t in enumerate((60.0, 120.0))]
    r = trajectory.roti(worse, obj, 1, None, 120.0)
    assert r.curve and all(c[1] < 0 for c in r.curve) and r.peak is None and r.peak_at_s is None


def test_the_kernels_speedup_is_from_interleaved_pairs():
    from iotuner.kernel.summary import _speedup

    many = _speedup({"speedup": 3.5, "speedup_pairs": [3.1, 3.5, 4.2]})
    assert "median of 3 interleaved pairs" in many and "3.1-4.2x" in many
    assert "one pair of runs" in _speedup({"speedup": 3.7, "speedup_pairs": [3.7]})


def test_terminal_summary_page_and_curve_count_the_same_trials_and_default(tmp_path):
    """A study with a trial that ran once and took effect as the default (a duplicate that ran) and points
    proposed again (duplicates that did not): every output quotes summary.json's counts and default."""
    import json

    from PIL import Image

    space = tmp_path / "space.json"
    space.write_text(
        json.dumps(
            {
                "name": "dup",
                "dimensions": [
                    {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]},
                    {"knob": "mpiio.romio_ds_write", "values": ["enable", "disable", "automatic"]},
                ],
            }
        )
    )
    (tmp_path / "base.json").write_text('{"version": 1, "mpiio": {"romio_ds_write": "disable"}}')
    args = ("--space", space, "--strategy", "random", "--baseline", "base.json", "--trials", "9", "--quiet")
    lines = tune(tmp_path, *map(str, args), columns=200)
    out = tmp_path / "iotuner-synthetic-ufs"
    s = json.loads((out / "summary.json").read_text())
    rows = [r for r in csv.DictReader(open(out / "trials.csv")) if r["kind"] == "trial"]
    ran_dup = [r for r in rows if r["duplicate_of"] and r["value"]]
    assert ran_dup, "no duplicate that ran: the study does not test what it should"
    assert s["trials"] > s["trials_run"] == 9
    said = "\n".join(lines)
    assert f"study synthetic-ufs: 9 trials run ({s['trials']} proposed)" in said
    assert f"(median of the default's {s['default_runs']} runs)" in said
    html = (out / "report.html").read_text()
    assert f"<b>9</b><span>trials run ({s['trials']} proposed)</span>" in html
    assert "Tuning curve: 9 trials run" in html
    # the default tile is the one the gain is computed against
    assert f"<b>{s['confirmed_default']:,.1f} MiB/s</b><span>default (confirmation round)</span>" in html
    assert f"9 trials run ({s['trials']} proposed)" in Image.open(out / "curve.png").text["Title"]
    # no knob both a best setting and "left out, as they took effect as in the default"
    best = [x.split(" = ")[0].strip() for x in lines if x.startswith("  ") and " = " in x]
    left = next((x for x in lines if "left out" in x), "")
    assert not any(k in left for k in best), (best, left)
