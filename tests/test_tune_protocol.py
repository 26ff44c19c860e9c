"""The strategy protocol (training runs, proposals, its own stop), RoTI and viability as functions of a
trajectory, and failures of the tuner's own I/O."""

import csv
import errno
import json
import subprocess
import sys

import pytest

from iotuner import run_report, settings
from iotuner.tune import evaluate, objective, results, strategies, trajectory
from iotuner.tune import space as spaces
from iotuner.tune import store as stores
from iotuner.tune.protocol import Strategy
from iotuner.tune.store import Point
from iotuner.tune.study.records import Record
from tune_helpers import FakeClock, make_study

PICKS = [
    {"mpiio.romio_cb_write": "disable", "hdf5.transfer_mode": "independent"},
    {"mpiio.romio_cb_write": "enable", "hdf5.transfer_mode": "independent"},
    {"mpiio.romio_cb_write": "automatic", "hdf5.transfer_mode": "independent"},
]
TRAINING = [
    {"mpiio.romio_cb_write": w, "mpiio.cb_nodes": n}
    for w, n in (("enable", 1), ("enable", 2), ("disable", 1), ("automatic", 1), ("disable", 2))
]


class FiveThenThree(Strategy):
    """Five training runs, then three proposed points, then it stops the study itself."""

    def prepare(self, ctx):
        self.trained = [ctx.measure(point)[0] for point in TRAINING]

    def propose(self, ctx):
        told = len(ctx.store.trials.search_trials())
        if told >= len(PICKS):
            return None
        labels = {}
        for d in self.space.dimensions:
            value = PICKS[told].get(d.name, d.values[0])
            labels[d.name] = d.label(value)
        return labels

    def stop(self, ctx):
        if len(ctx.store.trials.completed()) >= len(PICKS):
            return f"{self.name}: ran its {len(PICKS)} picks after {len(TRAINING)} training runs"
        return None


@pytest.fixture
def five_then_three(monkeypatch):
    strategies.names()  # the built-in ones registered first, so the copy keeps them
    monkeypatch.setattr(strategies, "_REGISTRY", dict(strategies._REGISTRY))
    strategies.register("five-then-three", "test strategy")(FiveThenThree)
    return "five-then-three"


def test_a_strategy_trains_proposes_and_stops_itself(tmp_path, five_then_three):
    clock = FakeClock()
    store, t = make_study(tmp_path, strategy=five_then_three, trials=50, delay=1.0, clock=clock, baseline_every=0)
    outcome = t.run()
    # its own stop, with its own reason
    assert outcome.stop.rule == "strategy"
    assert outcome.stopped_because == "five-then-three: ran its 3 picks after 5 training runs"
    # five training runs, recorded as such, before the search; the trial budget counts only the search
    training = store.trials.records(stores.TRAINING)
    assert [r.settings for r in training] == [settings.complete(p) for p in TRAINING]
    assert store.trials.trials_run() == 3
    first_trial = min(r.id for r in store.trials.search_trials())  # ids: the order records were made in
    assert all(r.id < first_trial for r in training)
    # they take tuning time: each run is 1 s on the deterministic clock, training included
    summary = results.write_all(store, t.objective, outcome, tmp_path / "out", t.clock())
    runs = len(store.trials.records(stores.BASELINE)) + 5 + 3 + len(store.trials.records(stores.CONFIRMATION))
    assert summary["tuning_time_s"] == pytest.approx(runs * 1.0)
    assert summary["training_runs"] == 5
    rows = list(csv.DictReader(open(tmp_path / "out" / "trials.csv")))
    trained = [r for r in rows if r["kind"] == "training"]
    assert [int(r["trial"]) for r in trained] == [0, 1, 2, 3, 4]
    assert [float(r["tuning_time_s"]) for r in trained] == pytest.approx([2.0, 3.0, 4.0, 5.0, 6.0])  # after 1 default
    # and they count in RoTI: the curve starts during training, when a training point beats the default
    curve = summary["roti"]["curve"]
    assert curve and curve[0]["t_s"] <= 6.0
    assert summary["stop"]["rule"] == "strategy"


def P(at, best, default, best_runs=1, default_runs=1, kind="trial"):
    return Point(
        at_s=at,
        kind=kind,
        record=0,
        ok=True,
        value=best,
        best=best,
        best_runs=best_runs,
        default=default,
        default_runs=default_runs,
    )


def test_roti_and_viability_of_a_fixed_trajectory():
    obj = objective.parse("perf")
    points = [
        P(0.0, None, 100.0),
        P(30.0, 90.0, 100.0),
        P(60.0, 300.0, 100.0, best_runs=1, default_runs=1),
        P(120.0, 400.0, 110.0, best_runs=2, default_runs=2),
        P(240.0, 420.0, 105.0, best_runs=3, default_runs=2),
    ]
    r = trajectory.roti(points, obj, min_runs=1, confirmed_gain=250.0, total_s=300.0)
    # RoTI(t) = (best - default) / minutes, where both have runs
    assert [c[0] for c in r.curve] == [30.0, 60.0, 120.0, 240.0]
    assert [c[1] for c in r.curve] == pytest.approx([-20.0, 200.0, 145.0, 78.75])
    assert (r.peak, r.peak_at_s) == (pytest.approx(200.0), 60.0)
    assert r.final == pytest.approx(250.0 / 5.0)  # the confirmed gain over all 5 minutes
    # with --repeats 2 the lucky single run at 60 s cannot be the peak
    r2 = trajectory.roti(points, obj, min_runs=2, confirmed_gain=250.0, total_s=300.0)
    assert [c[0] for c in r2.curve] == [120.0, 240.0] and r2.peak == pytest.approx(145.0)
    # no confirmed gain: no final RoTI
    assert trajectory.roti(points, obj, 1, None, 300.0).final is None

    # viability: 300 s of tuning, 2x faster I/O, a 600 s production run that is 50% I/O: 150 s saved per run
    v = trajectory.viability(300.0, 2.0, 600.0, io_share=0.5)
    assert v.saved_per_run_s == pytest.approx(150.0) and v.runs == 2
    assert trajectory.viability(301.0, 2.0, 600.0, 0.5).runs == 3
    assert trajectory.viability(300.0, 1.0, 600.0).runs is None  # no gain, never pays back
    assert trajectory.viability(300.0, 2.0, None).runs is None
    life = trajectory.lifecycle(300.0, 600.0, 150.0, 3)
    assert life == [(0, 300.0, 0.0), (1, 750.0, 600.0), (2, 1200.0, 1200.0), (3, 1650.0, 1800.0)]


def _run(kind, objective_s, wall_s, io_s=None):
    details = {"objective_time_s": objective_s, "wall_time_s": wall_s, "io_time_s": io_s}
    return Record(
        0, 0, kind, "COMPLETE", {}, (1.0,), None, None, None, 1, None, wall_s + 0.5, None, {"details": details}
    )


def test_viability_is_on_the_objective_clock_not_inside_the_posix_calls():
    """The case of issue 42: a 2.88 s run whose write phase is 2.4 s, of which 0.115 s inside POSIX calls
    (ROMIO's exchange is the rest), made 7.67x faster, after 187.5 s of tuning: ~90 runs, not 1803."""
    defaults = [_run("confirmation", 2.4, 2.88, io_s=0.115) for _ in range(3)]
    tuned = [_run("confirmation", 2.4 / 7.67, 0.48 + 2.4 / 7.67) for _ in range(3)]
    p = trajectory.production(defaults, None)
    assert p.io_share == pytest.approx(2.4 / 2.88) and p.runtime_s == pytest.approx(2.88)
    gain = trajectory.clock_gain(defaults, tuned)
    assert gain == pytest.approx(7.67)
    v = trajectory.viability(187.5, gain, p.runtime_s, p.io_share, p.source)
    assert v.saved_per_run_s == pytest.approx(2.4 * (1 - 1 / 7.67)) and v.runs == 90
    # an objective read from the output: the whole run is its clock
    whole = trajectory.production(defaults, None, whole_run=True)
    assert whole.io_share == 1.0
    assert trajectory.clock_gain(defaults, tuned, whole_run=True) == pytest.approx(2.88 / (0.48 + 2.4 / 7.67))
    # runs that did not say their time on the clock (synthetic): no clock gain, the whole run counts
    assert trajectory.clock_gain([_run("baseline", None, 1.0)], tuned) is None


def test_an_objective_clock_time_is_the_time_it_divides_by():
    rep = run_report.Report(
        {
            "totals": {"write_time_s": 2.0, "read_time_s": 1.0, "bytes_written": 1, "bytes_read": 1},
            "phases": [{"data_level": "mpiio", "mpiio": {"write_time_s": 0.5, "read_time_s": 0.25}}],
        }
    )
    assert objective.parse("write-bw").clock_time(rep) == 2.0
    assert objective.parse("read-bw").clock_time(rep) == 1.0
    assert objective.parse("perf").clock_time(rep) == objective.parse("io-time").clock_time(rep) == 3.0
    calls = objective.Objective("io-time", "minimize", "s", clock="calls")
    assert calls.clock_time(rep) == 0.75
    assert objective.parse("regex:bw=([0-9.]+)").clock_time(rep) is None


def test_summary_gives_the_curve_and_the_viability_point(tmp_path):
    clock = FakeClock()
    store, t = make_study(tmp_path, strategy="bayes", trials=12, delay=2.0, clock=clock, production_runtime_s=600.0)
    outcome = t.run()
    assert outcome.significant
    summary = json.loads(json.dumps(results.write_all(store, t.objective, outcome, tmp_path / "out", t.clock())))
    r, v = summary["roti"], summary["viability"]
    assert len(r["curve"]) >= 10 and r["peak"] == max(c["roti"] for c in r["curve"])
    assert r["final"] == pytest.approx(
        t.objective.improvement(outcome.winner["median"], outcome.confirmed_default) / (summary["tuning_time_s"] / 60)
    )
    saved = 600.0 * (1 - 1 / outcome.verdict.gain)  # synthetic runs are all I/O
    assert v["saved_per_run_s"] == pytest.approx(saved)
    assert v["runs"] == -(-summary["tuning_time_s"] // saved)


def test_a_full_scratch_fails_the_trial_and_stops_the_study(tmp_path, monkeypatch):
    """The scratch fills during the search: that trial fails with the reason, the study stops with it,
    nothing is left running, and the results are written."""
    app = tmp_path / "app.py"
    app.write_text("print('bandwidth=100')\n")
    from iotuner.tune import launch, tuner
    from iotuner.tune import study_config as cfg

    sp = spaces.load("romio")
    obj = objective.parse("regex:bandwidth=([0-9.]+)")
    config = cfg.StudyConfig(
        space=sp.to_json(),
        strategy="random",
        app=(sys.executable, str(app)),
        launcher="none",
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit, obj.pattern),
    )
    store = stores.Store.create(f"sqlite:///{tmp_path}/s.db", "s", config, cfg.Budget(20, None), heartbeat_s=None)
    saves = {"n": 0}
    real_save = evaluate.settings.save

    def filling(doc, path):
        saves["n"] += 1
        if saves["n"] > 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(doc, path)

    monkeypatch.setattr(evaluate.settings, "save", filling)
    ev = evaluate.JobEvaluator(config.app, launch.make("none", 1), obj, tmp_path / "scratch")
    t = tuner.Tuner(store, ev, sp, obj, strategies.make("random", sp, 0))
    outcome = t.run()
    assert outcome.stop.rule == "tuner-io" and "No space left on device" in outcome.stopped_because
    failed = [r for r in store.trials.search_trials() if r.state == "FAIL"]
    assert len(failed) == 1 and "No space left on device" in failed[0].error
    assert not [r for r in store.trials.records() if r.state == "RUNNING"]
    assert not outcome.significant and "cannot run the application" in outcome.notes[-1]
    monkeypatch.undo()  # space again, for the results
    summary = results.write_all(store, obj, outcome, tmp_path / "out", t.clock())
    assert summary["stop"]["rule"] == "tuner-io"


def tune(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)], capture_output=True, text=True, timeout=120, **kw
    )


def test_an_unwritable_output_or_a_damaged_database_is_named(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    r = tune("--synthetic", "ufs", "--trials", 3, "--out", a_file / "out")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "cannot create" in r.stderr and str(a_file) in r.stderr

    out = tmp_path / "out"
    r = tune("--synthetic", "ufs", "--trials", 4, "--study", "d", "--out", out)
    assert r.returncode == 0, r.stderr
    db = out / "study.db"
    data = bytearray(db.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = b"\xff" * 4096  # damage in the middle of the file
    db.write_bytes(bytes(data))
    r = tune("--resume", "--study", "d", "--storage", f"sqlite:///{db}")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "damaged" in r.stderr and str(db) in r.stderr


def test_only_tune_imports_the_tuner_stack(tmp_path):
    """iotuner --help, check and run never import Optuna, SciPy or matplotlib (they cost about a second)."""
    doc = tmp_path / "s.json"
    doc.write_text('{"version": 1}')
    code = (
        "import sys\nfrom iotuner import cli\n"
        "for argv in (['check', sys.argv[1]], ['run', '--help'], ['--help'], ['knobs', '--json']):\n"
        "    try:\n        cli.main(argv)\n    except SystemExit:\n        pass\n"
        "print(sorted(m for m in ('optuna', 'scipy', 'matplotlib', 'sqlalchemy') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(doc)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_the_worked_example_in_the_docs_runs(tmp_path, monkeypatch):
    """docs/tuning.md's example strategy, as printed there, tunes a study."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "tuning.md").read_text()
    code = re.search(r"```python\n# python/iotuner/tune/strategies/one_at_a_time.py\n(.*?)```", text, re.S).group(1)
    (tmp_path / "one_at_a_time.py").write_text(
        code.replace("from ..protocol", "from iotuner.tune.protocol").replace(
            "from . import register", "from iotuner.tune.strategies import register"
        )
    )
    strategies.names()
    monkeypatch.setattr(strategies, "_REGISTRY", dict(strategies._REGISTRY))
    monkeypatch.setattr(strategies, "__path__", [*strategies.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "iotuner.tune.strategies.one_at_a_time", raising=False)
    sp = spaces.from_json(
        {
            "name": "small",
            "dimensions": [
                {"knob": "hdf5.transfer_mode", "values": ["collective", "independent"]},
                {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable", "disable"]},
                {"knob": "mpiio.romio_ds_write", "values": ["automatic", "enable", "disable"]},
            ],
        }
    )
    store, t = make_study(tmp_path, space=sp, strategy="one-at-a-time", trials=20, sigma=0.01)
    outcome = t.run()
    sys.modules.pop("iotuner.tune.strategies.one_at_a_time", None)
    assert len(store.trials.records(stores.TRAINING)) == 8 and store.trials.trials_run() == 1
    assert outcome.stopped_because == "one-at-a-time: the combination ran"
    assert store.trials.completed()[0].settings["hdf5.transfer_mode"] == "independent"


def test_a_sampler_sees_the_trials_finished_before_each_draw(tmp_path):
    """Optuna's samplers read the study's trials through a cache that Optuna's own ask empties once a trial;
    the tuner asks its own way, so it must too. Without that, TPE saw no finished trial ever and drew every
    point at random: `bayes` made exactly `random`'s choices, trial for trial."""
    from tune_helpers import make_study

    runs = {}
    for strategy in ("random", "bayes"):
        store, t = make_study(tmp_path, strategy=strategy, trials=24, name=strategy, space="romio", seed=4)
        t.run()
        runs[strategy] = [r.key for r in store.trials.search_trials()]
    startup = 10  # bayes: its random start-up trials, drawn as the random strategy draws them
    assert runs["bayes"][:startup] == runs["random"][:startup]
    assert runs["bayes"][startup:] != runs["random"][startup:]
