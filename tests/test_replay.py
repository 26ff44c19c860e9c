"""Recorded sweeps: the bandio space, the recording format, the replay objective, and a tuner
study on a replay."""

import csv
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from iotuner import catalogue, cli, settings
from iotuner.tune import objective, replay, space
from iotuner.tune import store as stores
from iotuner.tune.evaluate import Measurement

BASELINE = {"version": 1, "mpiio": {"romio_cb_write": "enable"}}
TOY = {
    "name": "toy",
    "dimensions": [
        {"knob": "hdf5.chunk_dims", "values": [None, [4, 4]]},
        {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]},
    ],
}


def test_bandio_space_is_small_enough_to_sweep_and_catalogued():
    s = space.load("bandio")
    assert 300 <= s.size() <= 5000
    knobs = {k for d in s.dimensions for k in d.knobs()}
    assert {"hdf5.chunk_dims", "mpiio.romio_cb_write", "mpiio.romio_cb_read"} <= knobs
    assert knobs <= set(catalogue.knobs())
    # None leaves a knob unset (the baseline's); it survives the study's JSON round trip
    chunk = s.dimension("hdf5.chunk_dims")
    assert None in chunk.values and chunk.settings_of(None) == {}
    again = space.from_json(json.loads(json.dumps(s.to_json())))
    assert again.to_json() == s.to_json() and again.size() == s.size()


def toy_recording(tmp_path, name="toy.json.gz"):
    """Every point of the toy space with runs (write s, read s) that tell the points apart."""
    rec = replay.Recording.new(space.from_json(TOY), BASELINE, ["app"], 1)
    rec.bytes_written, rec.bytes_read = 10**6, 3 * 10**6
    rec.default.runs = [(1.0, 1.0), (2.0, 1.0)]
    rec.default.effective = {"mpiio.romio_cb_write": "enable"}
    for i, p in enumerate(rec.points):
        p.runs = [(0.1 * (i + 1), 0.5), (0.2 * (i + 1), 0.5), (0.3 * (i + 1), 0.5)]
        chunk, cb = p.values  # what a run reads back unlike the default's
        p.effective = ({"hdf5.chunk_dims[/data]": "4,4"} if chunk else {}) | (
            {"mpiio.romio_cb_write": "disable"} if cb == "disable" else {}
        )
    rec.points[3].runs, rec.points[3].failures, rec.points[3].error = [], 2, "exit status 1; stderr: boom"
    path = tmp_path / name
    rec.save(path)
    return path


def doc_of(flat):
    return settings.from_flat(flat)


def test_replay_answers_with_recorded_runs(tmp_path):
    rec = replay.load(toy_recording(tmp_path))
    ev = replay.ReplayEvaluator(rec, objective.parse("io-time"), seed=1)
    point = {"hdf5.chunk_dims": [4, 4], "mpiio.romio_cb_write": "enable"}  # points[2]
    recorded = {round(w + r, 9) for w, r in rec.points[2].runs}
    seen = {round(ev.evaluate(doc_of(point), f"t{i:04d}-r1").value, 9) for i in range(40)}
    assert seen == recorded  # every value is a recorded run, and every recorded run comes up
    # the draw depends on the seed and the label only: a resumed study draws the same
    assert (
        ev.evaluate(doc_of(point), "t0007-r1").value
        == replay.ReplayEvaluator(rec, objective.parse("io-time"), seed=1).evaluate(doc_of(point), "t0007-r1").value
    )
    # the baseline's own document answers with the default's runs, and those of the point that is the baseline
    pooled = {2.0, 3.0} | {round(w + r, 9) for w, r in rec.points[0].runs}
    seen = {round(ev.evaluate(BASELINE, f"baseline-{i:03d}").value, 9) for i in range(60)}
    assert seen == pooled
    # bandwidths come from the recorded bytes and times, as from a run report
    bw = replay.ReplayEvaluator(rec, objective.parse("write-bw")).evaluate(doc_of(point), "x").value
    assert any(bw == pytest.approx(10**6 / 2**20 / w) for w, _ in rec.points[2].runs)
    perf = replay.ReplayEvaluator(rec, objective.parse("perf")).evaluate(doc_of(point), "x")
    assert perf.ok and perf.details["recorded_runs"] == 3


def test_replay_refuses_what_it_has_not_recorded(tmp_path):
    rec = replay.load(toy_recording(tmp_path))
    ev = replay.ReplayEvaluator(rec, objective.parse("io-time"))
    with pytest.raises(replay.ReplayError, match=r"mpiio.romio_cb_write=\"automatic\" is not one of the recorded"):
        ev.evaluate(doc_of({"mpiio.romio_cb_write": "automatic"}), "x")
    with pytest.raises(replay.ReplayError, match="knobs outside the space.*cb_buffer_size"):
        ev.evaluate(doc_of({"mpiio.romio_cb_write": "enable", "mpiio.cb_buffer_size": "1M"}), "x")
    failed = ev.evaluate(doc_of({"hdf5.chunk_dims": [4, 4], "mpiio.romio_cb_write": "disable"}), "x")
    assert not failed.ok and "boom" in failed.error
    with pytest.raises(replay.ReplayError, match="perf, write-bw"):
        replay.ReplayEvaluator(rec, objective.parse("regex:x=([0-9]+)"))


def test_damaged_recordings_are_named(tmp_path):
    good = toy_recording(tmp_path)
    data = good.read_bytes()
    cases = {
        "truncated.json.gz": data[: len(data) // 2],
        "notjson.json": b"{not json",
        "foreign.json": json.dumps({"format": "something else"}).encode(),
    }
    doc = json.loads(gzip.decompress(data))
    doc["points"] = doc["points"][:-1]
    cases["short.json"] = json.dumps(doc).encode()
    doc = json.loads(gzip.decompress(data))
    doc["points"][0]["runs"][0] = [-1, 0.5]
    cases["negative.json"] = json.dumps(doc).encode()
    doc = json.loads(gzip.decompress(data))
    del doc["baseline"]
    cases["nobaseline.json"] = json.dumps(doc).encode()
    messages = {
        "truncated.json.gz": "damaged",
        "notjson.json": "damaged",
        "foreign.json": "format",
        "short.json": "3 points for a space of 4",
        "negative.json": r"points\[0\]: a run is",
        "nobaseline.json": "missing 'baseline'",
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(replay.ReplayError, match=messages[name]):
            replay.load(tmp_path / name)
    with pytest.raises(replay.ReplayError, match="cannot read"):
        replay.load(tmp_path / "missing.json")


def test_recording_keeps_what_took_effect_unlike_the_default(tmp_path):
    rec = replay.Recording.new(space.from_json(TOY), BASELINE, ["app"], 1)
    rec.bytes_written, rec.bytes_read = 1000, 1000
    ok = Measurement(
        True,
        1.0,
        0.1,
        effective={"mpiio.romio_cb_write": ["enable"]},
        observed={"mpiio.romio_cb_write": "enable", "mpiio.cb_nodes": "1"},
    )
    rec.add_run(rec.default, ok, (0.5, 0.5))
    other = Measurement(
        True,
        1.0,
        0.1,
        effective={"mpiio.romio_cb_write": ["disable"]},
        observed={"mpiio.romio_cb_write": "disable", "mpiio.cb_nodes": "1"},
    )
    rec.add_run(rec.points[1], other, (0.2, 0.3))
    rec.add_run(rec.points[1], Measurement(False, None, 0.1, "killed by SIGKILL"), None)
    assert rec.default.effective == {"mpiio.romio_cb_write": "enable", "mpiio.cb_nodes": "1"}
    assert rec.points[1].effective == {"mpiio.romio_cb_write": "disable"}
    assert rec.points[1].runs == [(0.2, 0.3)] and rec.points[1].failures == 1
    rec.save(tmp_path / "r.json")
    back = replay.load(tmp_path / "r.json")
    assert (
        back.points[1].effective == {"mpiio.romio_cb_write": "disable"} and back.points[1].error == "killed by SIGKILL"
    )
    # the replay reports the recorded read-back, so the tuner deduplicates as on the real runs
    m = replay.ReplayEvaluator(back, objective.parse("io-time")).evaluate(
        doc_of({"mpiio.romio_cb_write": "disable"}), "x"
    )
    assert m.effective["mpiio.romio_cb_write"] == ["disable"] and m.effective["mpiio.cb_nodes"] == ["1"]


def test_tune_a_replay(tmp_path):
    path = toy_recording(tmp_path)
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--replay",
            str(path),
            "--strategy",
            "grid",
            "--trials",
            "4",
            "--objective",
            "io-time",
            "--confirm-rounds",
            "4",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "recorded sweep" in " ".join(r.stdout.split())  # wrapped to the width
    rec = replay.load(path)
    ev = replay.ReplayEvaluator(rec, objective.parse("io-time"))
    rows = list(csv.DictReader((out / "trials.csv").open()))
    trials = [row for row in rows if row["kind"] == "trial" and row["state"] == "COMPLETE"]
    assert len(trials) == 3  # the fourth point's runs all failed
    for row in rows:  # every run's value is one recorded for its settings (baseline runs: the default's)
        flat = json.loads(row["settings"] or "{}")
        point = ev.recording.find(
            settings.flatten(
                settings.from_flat({**settings.flatten(BASELINE), **settings.flatten(settings.from_flat(flat))})
            )
        )
        recorded = {round(w + r, 9) for w, r in point.runs}
        assert {round(v, 9) for v in json.loads(row["runs"] or "[]")} <= recorded, row
    assert any(row["effective"] not in ("", "{}") for row in trials)  # the recorded read-back tells them apart
    # a space or baseline other than the recording's is refused before anything runs
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--replay",
            str(path),
            "--space",
            "romio",
            "--out",
            str(tmp_path / "o2"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "not the space recorded" in bad.stderr
    both = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--replay",
            str(path),
            "--synthetic",
            "ufs",
            "--out",
            str(tmp_path / "o4"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert both.returncode == 2 and "not both" in both.stderr
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(path.read_bytes()[:100])
    bad = subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", "--replay", str(damaged), "--out", str(tmp_path / "o3")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "damaged" in bad.stderr


RECORDED = Path(__file__).resolve().parents[1] / "bench" / "data" / "bandio-sweep.json.gz"


def tune(capsys, *argv):
    """iotuner tune in this process: (exit status, stdout, stderr)."""
    code = cli.main(["tune", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def searched(out):
    """(kind, trial, settings, runs) of the baseline and trial rows of a study's trials.csv (a trial
    the tuner recognised as an earlier one has no runs of its own)."""
    return [
        (r["kind"], r["trial"], r["settings"], r["runs"])
        for r in csv.DictReader((out / "trials.csv").open())
        if r["kind"] in ("baseline", "trial")
    ]


def test_a_replayed_study_is_determined_by_its_seed_and_a_resume_draws_the_same(tmp_path, capsys):
    common = ["--replay", str(RECORDED), "--strategy", "random", "--objective", "io-time", "--confirm-rounds", "1"]
    common += ["--study", "iotuner"]
    for name, seed, trials in (("a", 3, 6), ("again", 3, 6), ("other", 4, 6), ("resumed", 3, 3)):
        code, _, err = tune(
            capsys, *common, "--seed", str(seed), "--trials", str(trials), "--out", str(tmp_path / name)
        )
        assert code == 0, err
    a = searched(tmp_path / "a")
    assert len([r for r in a if r[0] == "trial" and r[3] != "[]"]) == 6
    assert searched(tmp_path / "again") == a  # same seed, same points, same draws
    assert searched(tmp_path / "other") != a
    # a study stopped after 3 trials and resumed to 6 keeps its 3 and their draws: they are a's first 3
    code, _, err = tune(
        capsys,
        "--resume",
        "--study",
        "iotuner",
        "--storage",
        f"sqlite:///{tmp_path / 'resumed' / 'study.db'}",
        "--trials",
        "6",
    )
    assert code == 0, err
    resumed = searched(tmp_path / "resumed")
    assert len([r for r in resumed if r[0] == "trial" and r[3] != "[]"]) == 6
    ran = [i for i, r in enumerate(a) if r[0] == "trial" and r[3] != "[]"]
    assert resumed[: ran[2] + 1] == a[: ran[2] + 1]
    # every run, resumed or not, is one recorded for its point
    rec = replay.load(RECORDED)
    for _kind, _, flat, runs in resumed:
        point = rec.find({**settings.flatten(rec.baseline), **settings.flatten(settings.from_flat(json.loads(flat)))})
        recorded = {round(w + r, 6) for w, r, *_ in point.runs}
        assert {round(v, 6) for v in json.loads(runs or "[]")} <= recorded


def test_a_study_replays_only_the_recording_it_started_with(tmp_path, capsys):
    path = toy_recording(tmp_path)
    code, out, err = tune(
        capsys,
        "--replay",
        str(path),
        "--strategy",
        "grid",
        "--trials",
        "2",
        "--objective",
        "io-time",
        "--confirm-rounds",
        "1",
        "--out",
        str(tmp_path / "s"),
        "--study",
        "iotuner",
    )
    assert code == 0, err
    url = f"sqlite:///{tmp_path / 's' / 'study.db'}"
    done = len(stores.Store.open(url, "iotuner", heartbeat_s=None).trials.completed())
    rec = replay.load(path)
    rec.points[0].runs = [(9.0, 9.0)]  # the file changes under the study
    rec.save(path)
    code, _, err = tune(
        capsys,
        "--resume",
        "--study",
        "iotuner",
        "--storage",
        f"sqlite:///{tmp_path / 's' / 'study.db'}",
        "--trials",
        "4",
    )
    assert code == 2 and "changed since the study started" in err and str(path) in err
    # nothing was left running, and the completed trials are still there
    store = stores.Store.open(url, "iotuner", heartbeat_s=None)
    assert done >= 1 and len(store.trials.completed()) == done
    assert not [t for t in store.study.get_trials(deepcopy=False) if t.state.name == "RUNNING"]
    # a missing recording on resume is named as well
    path.unlink()
    code, _, err = tune(
        capsys,
        "--resume",
        "--study",
        "iotuner",
        "--storage",
        f"sqlite:///{tmp_path / 's' / 'study.db'}",
        "--trials",
        "4",
    )
    assert code == 2 and "cannot read recording" in err
