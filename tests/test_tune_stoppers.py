"""Early stoppers (TunIO's learned one, the heuristic, the production-runs one): their decisions on fixed
iterations, the same decision live as on the recorded trajectory, the study's choice, and what the
reports say."""

import json
import math
import subprocess
import sys

import optuna
import pytest

from conftest import flat
from iotuner.tune import objective, results, stoppers, strategies
from iotuner.tune import store as stores
from iotuner.tune import study_config as cfg
from iotuner.tune import trajectory as traj
from iotuner.tune.strategies.tunio import stopper as learned_stopper
from tune_helpers import FakeClock, make_study

PERF = objective.parse("perf")


def its(values, step_s=10.0):
    return [traj.Iteration(k, k * step_s, v, values[0]) for k, v in enumerate(values)]


def first_stop(decide, values, **kw):
    seq = its(values, **kw)
    return next((k for k in range(1, len(seq)) if decide(seq[: k + 1])), None)


def test_heuristic_stops_when_five_iterations_gain_less_than_five_percent():
    values = [100, 150, 160, 165, 166, 167, 168, 169, 170, 200]
    # 167/100, 168/150, 169/160 gain more than 5%; 170/165 is +3.0%
    assert first_stop(lambda s: stoppers.heuristic(s, PERF), values) == 8
    reason = stoppers.heuristic(its(values)[:9], PERF)
    assert "+3.0% over the last 5 iterations" in reason and "less than 5%" in reason
    # for a time objective, lower is better: the same ratios, the other way round
    secs = [1 / v for v in values]
    assert first_stop(lambda s: stoppers.heuristic(s, objective.parse("io-time")), secs) == 8


def test_learned_stopper_state_is_the_iteration_the_gain_and_the_iterations_since_a_gain():
    # iteration 1: gain 1.0 = the average gain (ratio bucket 4: [1, 2)), a gain just made (since 0)
    # iteration 2: no gain (ratio bucket 0), one iteration since the last gain (since bucket 1)
    assert learned_stopper.states([1.0, 2.0, 2.0]) == [(0 * 6 + 4) * 6 + 0, (1 * 6 + 0) * 6 + 1]
    # a gain of 0.5% is below GAIN_STEP: it does not reset the count
    s = learned_stopper.states([1.0, 2.0, 2.0, 2.01, 2.01, 2.01])
    assert [x % 6 for x in s] == [0, 1, 2, 3, 3]


def test_learned_stopper_follows_its_q_table():
    seq = its([1.0, 2.0, 2.0])
    state = learned_stopper.states([it.incumbent for it in seq])[-1]
    q = [1.0] * learned_stopper.STATES

    def policy():
        return learned_stopper.StopperPolicy(tuple(q), (0,) * learned_stopper.STATES, {})

    assert learned_stopper.learned(seq, PERF, policy()) is None
    q[state] = -0.01
    reason = learned_stopper.learned(seq, PERF, policy())
    assert reason.startswith("learned stopper: after iteration 2 (2.00x the default so far, 1 iteration(s) since")


def test_the_shipped_learned_stopper_stops_on_a_plateau():
    policy = learned_stopper.load_policy()
    plateau = [100.0, 300.0] + [300.0] * 30
    k = first_stop(lambda s: learned_stopper.learned(s, PERF, policy), plateau)
    assert k is not None and k <= 10


def test_the_shipped_learned_stopper_returns_more_than_the_heuristic_on_unseen_curves():
    """On synthetic curves it was not trained on, the share of the best return in hindsight (RoTI) it keeps
    is well above the heuristic's and above never stopping."""
    import numpy as np

    from iotuner.tune.strategies.tunio import pretrain

    policy = learned_stopper.load_policy()
    rng = np.random.default_rng(12345)
    shares = {"learned": [], "heuristic": [], "never": []}
    for _ in range(300):
        curve = pretrain.log_curve(rng)
        roti = curve.roti()
        if roti.max() <= 0:
            continue
        values = list(curve.observed)
        stop = {
            "learned": first_stop(lambda s: learned_stopper.learned(s, PERF, policy), values),
            "heuristic": first_stop(lambda s: stoppers.heuristic(s, PERF), values),
            "never": None,
        }
        for name, k in stop.items():
            shares[name].append(roti[k if k is not None else len(roti) - 1] / roti[1:].max())
    mean = {k: float(np.mean(v)) for k, v in shares.items()}
    assert mean["learned"] > mean["heuristic"] + 0.1 and mean["learned"] > mean["never"] + 0.2, mean


def test_production_runs_stopper_weighs_the_next_iteration_against_the_planned_runs():
    # the incumbent follows 100 + 50 log(1 + k) exactly; 10 s per iteration; a production run of 100 s is all I/O
    values = [100 + 50 * math.log1p(k) for k in range(4)]
    seq = its(values)
    prod = traj.Production(100.0, 1.0, "given")
    step = 50 * (math.log(5) - math.log(4))
    assert stoppers.expected_next(seq, PERF) == pytest.approx(step)
    saved = 100 * 100 / values[-1] - 100 * 100 / (values[-1] + step)  # I/O time of a run goes as 1/perf
    pays_after = math.ceil(10.0 / saved)
    assert pays_after == 3
    assert stoppers.production_runs(seq, PERF, pays_after, prod) is None
    reason = stoppers.production_runs(seq, PERF, pays_after - 1, prod)
    assert f"pays back only after {pays_after} runs, more than the {pays_after - 1} planned" in reason
    # tuning so far: 30 s for a gain of 1.69x: saves 100 (1 - 1/1.69) = 40.9 s per run, paid after 1 run
    assert "the tuning so far pays back after 1 run(s)" in reason
    # after a jump and a plateau, the fitted logarithm still expects a little: worth it only for many runs
    plateau = its([100.0, 150.0, 150.0, 150.0, 150.0, 150.0])
    assert stoppers.production_runs(plateau, PERF, 10**9, prod) is None
    assert "pays back only after 6 runs, more than the 5 planned" in stoppers.production_runs(plateau, PERF, 5, prod)
    # nothing gained at all: nothing expected, it stops whatever the runs planned
    flat = its([100.0] * 6)
    assert "not expected to gain anything" in stoppers.production_runs(flat, PERF, 10**9, prod)
    assert "has not found a gain" in stoppers.production_runs(flat, PERF, 10**9, prod)
    # too early to fit a curve
    assert stoppers.production_runs(seq[:3], PERF, 1, prod) is None


def test_iterations_are_generations_of_the_trajectory():
    P = stores.Point
    points = [P(1.0, "baseline", 0, True, 100.0, None, 0, 100.0, 1)]
    points += [P(2.0 + i, "trial", 1 + i, True, 90.0 + 10 * i, 90.0 + 10 * i, 1, 100.0, 1) for i in range(5)]
    seq = traj.iterations(points, 2, PERF)
    # iteration 0 is the default; the best is kept only where it beats the default
    assert [(it.number, it.at_s, it.incumbent) for it in seq] == [(0, 1.0, 100.0), (1, 3.0, 100.0), (2, 5.0, 120.0)]


def _posthoc(store, size, decide):
    seq = traj.iterations(store.results.trajectory, size, PERF)
    return next((k for k in range(1, len(seq)) if decide(seq[: k + 1])), None)


@pytest.mark.parametrize("choice", ["heuristic", "learned"])
def test_a_live_stopper_stops_where_it_would_on_the_recorded_trajectory(tmp_path, choice):
    """The benchmark applies the stoppers to recorded studies: that is valid only if a live study stops at the
    same iteration (the stoppers never change what is proposed)."""
    kw = dict(model="ufs", space="romio", strategy="ga", trials=160, delay=1.0, seed=3)
    whole, t = make_study(
        tmp_path, name="whole", clock=FakeClock(), storage=optuna.storages.InMemoryStorage(), stop="none", **kw
    )
    t.run()
    policy = learned_stopper.load_policy()
    decide = {
        "heuristic": lambda s: stoppers.heuristic(s, PERF),
        "learned": lambda s: learned_stopper.learned(s, PERF, policy),
    }[choice]
    expected = _posthoc(whole, 8, decide)
    assert expected is not None
    live, t = make_study(
        tmp_path, name="live", clock=FakeClock(), storage=optuna.storages.InMemoryStorage(), stop=choice, **kw
    )
    outcome = t.run()
    assert outcome.stop.rule == f"{choice}-stopper"
    assert len(traj.iterations(live.results.trajectory, 8, PERF)) - 1 == expected
    assert [r.settings for r in live.trials.search_trials()] == [r.settings for r in whole.trials.search_trials()][
        : 8 * expected
    ]


def test_the_stopper_is_the_studys_choice(tmp_path):
    with pytest.raises(cfg.ConfigError, match="needs --production-runs"):
        cfg.StudyConfig(space={}, synthetic=cfg.SyntheticSpec("ufs"), stop="production-runs")
    with pytest.raises(ValueError, match="unknown stopper"):  # checked where the strategies (and stoppers) load
        strategies.check_stopper("sometimes")
    strategies.check_stopper("learned")  # a strategy's stopper counts
    # the strategy's default: learned for tunio, none for the others
    store, t = make_study(tmp_path, strategy="tunio", name="a")
    assert [r.name for r in t.search.rules][-1] == "learned-stopper"
    store, t = make_study(tmp_path, strategy="ga", name="b")
    assert "learned-stopper" not in [r.name for r in t.search.rules]
    store, t = make_study(tmp_path, strategy="ga", name="c", stop="production-runs", production_runs=50)
    assert [r.name for r in t.search.rules][-1] == "production-runs-stopper"
    # stored in the study, so a resumed study stops the same way
    reopened = stores.Store.open(f"sqlite:///{tmp_path}/c.db", "c", heartbeat_s=None)
    assert reopened.config.stop == "production-runs" and reopened.config.production_runs == 50


def tune(*args):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def test_production_runs_on_the_command_line_stops_and_draws_the_lifecycle(tmp_path):
    out = tmp_path / "out"
    r = tune(
        "--synthetic",
        "ufs",
        "--strategy",
        "ga",
        "--trials",
        400,
        "--synthetic-delay",
        0,
        "--production-runs",
        20,
        "--production-runtime",
        "1s",
        "--study",
        "p",
        "--out",
        out,
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop"]["rule"] == "production-runs-stopper"
    assert "stopped: production-runs stopper:" in flat(r.stdout) and "more than the 20 planned" in flat(r.stdout)
    assert summary["trials_run"] < 400
    life, v = summary["lifecycle"], summary["viability"]
    if v["runs"] is not None:  # a confirmed gain: the lifecycle lines, with the viability point and the plan
        assert life["planned_runs"] == 20 and life["viability_runs"] == v["runs"]
        assert {p["runs"] for p in life["points"]} >= {0, v["runs"], 20}
        assert life["saved_at_planned_s"] == pytest.approx(20 * v["saved_per_run_s"] - summary["tuning_time_s"])
        assert "planned production runs, tuning" in flat(r.stdout)
    assert (out / "curve.png").stat().st_size > 10_000
    r = tune("--synthetic", "ufs", "--stop", "production-runs", "--study", "q", "--out", tmp_path / "q")
    assert r.returncode == 2 and "needs --production-runs" in r.stderr


def test_summary_lifecycle_marks_the_viability_point_and_the_planned_runs(tmp_path):
    store, t = make_study(
        tmp_path,
        strategy="bayes",
        trials=12,
        delay=2.0,
        clock=FakeClock(),
        production_runtime_s=600.0,
        production_runs=40,
    )
    outcome = t.run()
    assert outcome.significant
    summary = json.loads(json.dumps(results.write_all(store, t.objective, outcome, tmp_path / "out", t.clock())))
    v, life = summary["viability"], summary["lifecycle"]
    assert life["viability_runs"] == v["runs"] and life["planned_runs"] == 40
    by_runs = {p["runs"]: p for p in life["points"]}
    # at the viability point, tuning plus tuned runs no longer cost more than the untuned runs
    at = by_runs[v["runs"]]
    assert at["tuned_total_s"] <= at["untuned_total_s"]
    before = traj.lifecycle(summary["tuning_time_s"], 600.0, v["saved_per_run_s"], [v["runs"] - 1])[0]
    assert before[1] > before[2]
    assert by_runs[40]["untuned_total_s"] == pytest.approx(40 * 600.0)
