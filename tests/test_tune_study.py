"""A study on the synthetic objective: deduplication, budgets, the A/A case,
the confirmation round and the outputs."""

import csv
import json

from optuna.trial import TrialState

from iotuner import settings
from iotuner.tune import objective, results, space as spaces
from tune_helpers import synthetic_study

STRIPING = spaces.from_json({"name": "striping", "dimensions": [
    {"knob": "mpiio.striping_factor", "values": [1, 2, 4, 8]},
    {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]}]})


def test_trials_whose_effective_settings_match_share_one_result(tmp_path):
    # on ufs striping is dropped: 8 requested configurations, 2 that take effect
    store, outcome, _ = synthetic_study(tmp_path, space=STRIPING, strategy="grid", trials=8, repeats=3)
    done = store.completed()
    assert len(done) == 8
    assert len(store.pools) == 2
    creators = [t for t in done if "duplicate_of" not in t.user_attrs]
    sharers = [t for t in done if "duplicate_of" in t.user_attrs]
    assert len(creators) == 2 and len(sharers) == 6
    assert all(len(t.user_attrs["runs"]) == 3 for t in creators)  # repeats for a new configuration
    assert all(len(t.user_attrs["runs"]) == 1 for t in sharers)  # one run shows it is not new
    for t in sharers:
        assert t.user_attrs["signature"] == store.study.trials[t.user_attrs["duplicate_of"]].user_attrs["signature"]
    assert sorted(len(p.samples) for p in store.pools.values()) == [6, 6]


def test_a_point_measured_before_costs_no_run(tmp_path):
    tiny = spaces.from_json({"name": "tiny", "dimensions": [
        {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable", "automatic"]},
        {"knob": "hdf5.transfer_mode", "values": ["independent", "collective"]}]})
    store, outcome, _ = synthetic_study(tmp_path, space=tiny, strategy="random", trials=50)
    assert store.trials_run() == 6
    assert outcome.stopped_because == "every one of the 6 points of the space was measured"
    reused = [t for t in store.search_trials() if t.user_attrs.get("cost_runs") == 0]
    assert all(t.state == TrialState.COMPLETE and "duplicate_of" in t.user_attrs for t in reused)


def test_aa_reports_no_significant_improvement(tmp_path):
    """Every configuration is the same: noise alone must not be called a gain."""
    store, outcome, _ = synthetic_study(tmp_path, model="flat", strategy="bayes", trials=25, sigma=0.1)
    assert outcome.verdict is not None and not outcome.verdict.significant
    assert "no significant improvement" in outcome.verdict.describe()
    assert outcome.best_doc["meta"]["significant"] is False
    assert settings.flatten(outcome.best_doc) == {}  # the default settings are kept
    # the search did see "better" trials by chance: the confirmation is what caught it
    best = max(t.value for t in store.completed())
    assert best > 1.05 * outcome.default


def test_confirmed_gain_and_outputs(tmp_path):
    store, outcome, t = synthetic_study(tmp_path, strategy="bayes", trials=30, repeats=1, baseline_every=5)
    assert outcome.verdict.significant and outcome.verdict.gain > 1.2
    assert outcome.best_doc["meta"]["trial"] == outcome.winner["trial"]
    runs_of_baseline = len(store.baseline_runs())
    assert runs_of_baseline >= 1 + 30 // 5 - 1  # measured at the start and between trials
    conf = store.confirmation()
    assert conf["rounds_done"] == 5 and len(conf["default"]) == 5
    assert all(len(v) == 5 for v in conf["samples"].values())

    summary = results.write_all(store, t.objective, outcome, tmp_path / "out", t.clock())
    best = settings.load(tmp_path / "out" / "best.json")  # usable as is by iotuner run --config
    assert best["meta"]["significant"] is True
    rows = list(csv.DictReader(open(tmp_path / "out" / "trials.csv")))
    kinds = [r["kind"] for r in rows]
    assert kinds.count("trial") == len(store.search_trials())
    assert kinds.count("baseline") == runs_of_baseline
    assert kinds.count("confirm-default") == 5
    png = (tmp_path / "out" / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    r = summary["roti"]
    assert r["peak"] >= r["final"] > 0 and r["unit"] == "MB/s per minute"
    traj = results.trajectory(store, objective.parse("perf"))
    assert all(b2 >= b1 for (_, _, _, b1), (_, _, _, b2) in zip(traj, traj[1:]))  # best so far never drops


def test_bayes_finds_most_of_the_romio_optimum(tmp_path):
    from iotuner.tune import synthetic
    store, outcome, _ = synthetic_study(tmp_path, strategy="bayes", trials=40, sigma=0.0, confirm_rounds=2)
    best = synthetic.model("ufs").best(spaces.load("romio"))
    assert max(t.value for t in store.completed()) >= 0.9 * best
