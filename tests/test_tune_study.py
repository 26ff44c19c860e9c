"""A study on the synthetic objective: deduplication, budgets, the A/A case,
the confirmation round and the outputs."""

import csv
import json
import math
import statistics
import subprocess
import sys

import pytest
from optuna.trial import TrialState

from iotuner import settings
from iotuner.tune import objective, results, space as spaces, strategies, study, synthetic, tuner
from tune_helpers import synthetic_study


def tuned(tmp_path, *, model="ufs", space="romio", strategy="random", trials=15, seconds=None, sigma=0.05, seed=0,
          delay=0.0, objective_name="perf", name="t", **options):
    """A study on a synthetic model, in-process: (store, tuner) before running."""
    sp = spaces.load(space) if isinstance(space, str) else space
    obj = objective.parse(objective_name)
    config = {"strategy": strategy, "seed": seed, "strategy_options": {}, "space": sp.to_json(),
              "objective": {"name": obj.name, "pattern": None, "direction": obj.direction, "unit": obj.unit}}
    store = study.StudyStore.create(f"sqlite:///{tmp_path}/{name}.db", name, config, sp)
    evaluator = synthetic.SyntheticEvaluator(synthetic.model(model), obj, sigma, delay, seed)
    return store, tuner.Tuner(store, evaluator, sp, obj, {"version": 1}, tuner.Budget(trials, seconds),
                              tuner.Options(**options))


def tune_cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", "tune", *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kw)

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


def test_aa_reports_no_significant_improvement(tmp_path, monkeypatch):
    """Every configuration is the same: noise alone must not be called a gain."""
    store, outcome, t = synthetic_study(tmp_path, model="flat", strategy="bayes", trials=25, sigma=0.1)
    assert outcome.verdict is not None and not outcome.verdict.significant
    assert "no significant improvement" in outcome.verdict.describe()
    assert outcome.best_doc["meta"]["significant"] is False
    assert settings.flatten(outcome.best_doc) == {}  # the default settings are kept
    # the search did see "better" trials by chance: the confirmation is what caught it
    best = max(t.value for t in store.completed())
    assert best > 1.05 * outcome.default
    # so there is no return on the tuning: RoTI is none, with the reason, in the summary and on the curve
    captions = []
    real_plot = results.plot
    monkeypatch.setattr(results, "plot", lambda *a, **kw: captions.append(a[5] if len(a) > 5 else kw.get("caption"))
                        or real_plot(*a, **kw))
    summary = results.write_all(store, objective.parse("perf"), outcome, tmp_path / "out", t.clock())
    assert summary["roti"] is None and summary["roti_reason"].startswith("no gain to return")
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["roti"] is None
    assert captions and "RoTI: none (no gain to return" in captions[0]


def test_aa_printout_says_no_gain_to_return(tmp_path):
    r = tune_cli("--synthetic", "flat", "--synthetic-noise", "0.1", "--trials", 12, "--study", "aa",
                 "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "no significant improvement" in r.stdout
    assert "RoTI: none (no gain to return" in r.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["roti"] is None and "no gain to return" in summary["roti_reason"]


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
    # the curve is the trials' best so far, as the CSV records them, in the order they ran
    recorded = sorted((int(r["trial"]), float(r["tuning_time_s"]), float(r["value"])) for r in rows
                      if r["kind"] == "trial" and r["state"] == "COMPLETE")
    best_so_far, expected = -math.inf, []
    for number, at, value in recorded:
        best_so_far = max(best_so_far, value)
        expected.append((number, value, best_so_far))
    traj = results.trajectory(store, objective.parse("perf"))
    assert [(n, pytest.approx(v), pytest.approx(b)) for _, n, v, b in traj] == expected
    assert [round(at, 3) for at, _, _, _ in traj] == [at for _, at, _ in recorded]
    # RoTI: final = confirmed gain over all the tuning time; peak = highest along the curve
    r = summary["roti"]
    winner = statistics.median(conf["samples"][outcome.winner["signature"]])
    assert r["final"] == pytest.approx((winner - statistics.median(conf["default"])) / (summary["tuning_time_s"] / 60))
    default = statistics.median(b["value"] for b in store.baseline_runs())
    peak = max(((b - default) / (at / 60), at / 60) for at, _, _, b in traj)
    assert (r["peak"], r["peak_at_min"]) == pytest.approx(peak)
    assert r["unit"] == "MB/s per minute" and summary["roti_reason"] is None


def test_bayes_finds_most_of_the_romio_optimum(tmp_path):
    from iotuner.tune import synthetic
    store, outcome, _ = synthetic_study(tmp_path, strategy="bayes", trials=40, sigma=0.0, confirm_rounds=2)
    best = synthetic.model("ufs").best(spaces.load("romio"))
    assert max(t.value for t in store.completed()) >= 0.9 * best


def test_reused_trials_take_their_place_on_the_tuning_clock(tmp_path):
    """GA proposes its elite again every generation: those trials cost no run, and sit on the
    curve when they were proposed, not at t = 0 with the best value found."""
    store, t = tuned(tmp_path, strategy="ga", trials=30, delay=0.002, sigma=0.02)
    outcome = t.run()
    trials = sorted(store.search_trials(), key=lambda tr: tr.number)
    reused = [tr for tr in trials if tr.user_attrs.get("cost_runs") == 0]
    assert len(reused) >= 2
    times = [tr.user_attrs["at_s"] for tr in trials]
    assert all(b >= a for a, b in zip(times, times[1:])) and times[0] > 0
    assert all(tr.user_attrs["at_s"] > 0 for tr in reused)
    assert outcome.significant
    r, why = results.roti(store, t.objective, outcome, t.clock())
    assert why is None and math.isfinite(r.peak) and r.peak_at_min > 0
    first_at = min(at for at, _, _, _ in results.trajectory(store, t.objective))
    assert r.peak_at_min >= first_at / 60


def test_trials_that_take_effect_as_the_default_share_its_runs(tmp_path):
    tiny = spaces.from_json({"name": "tiny", "dimensions": [
        {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable"]},  # automatic is the default
        {"knob": "mpiio.cb_buffer_size", "values": [16 << 20, 4 << 20]}]})  # 16 MiB is the default
    store, t = tuned(tmp_path, space=tiny, strategy="grid", trials=4, repeats=3, baseline_every=0)
    t.run()
    same = [tr for tr in store.completed() if tr.user_attrs.get("duplicate_of") == tuner.SAME_AS_DEFAULT]
    assert len(same) == 1
    assert same[0].user_attrs["settings"] == {"mpiio.romio_cb_write": "automatic", "mpiio.cb_buffer_size": 16 << 20}
    assert len(same[0].user_attrs["runs"]) == 1  # one run shows it is the default: no repeats
    assert [r.get("trial") for r in store.baseline_runs()].count(same[0].number) == 1
    assert len(store.pools) == 3 and store.confirmation()["candidates"]  # the other three are candidates


def test_ranking_uses_the_current_value_of_shared_results(tmp_path):
    striping = spaces.from_json({"name": "striping", "dimensions": [
        {"knob": "mpiio.striping_factor", "values": [1, 2, 4, 8, 16, 32]},
        {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]}]})
    store, t = tuned(tmp_path, space=striping, strategy="grid", trials=12, sigma=0.2, repeats=2)
    t.run()
    now = strategies.current_values(store.completed())
    by_sig = {}
    for tr in store.completed():
        by_sig.setdefault(tr.user_attrs["signature"], []).append(tr)
    stale = 0
    for sig, group in by_sig.items():
        runs = [x for tr in group for x in tr.user_attrs["runs"]]
        assert sorted(store.pools[sig].samples) == sorted(runs)  # one pool: every run of the configuration
        for tr in group:
            assert now[tr.number] == pytest.approx(statistics.median(runs))
            stale += tr.value != pytest.approx(statistics.median(runs))
    assert stale > 0  # told values go stale as their configuration gets more runs
    best = max(store.pools.values(), key=lambda p: statistics.median(p.samples))
    assert t.best() == (best.first_trial, pytest.approx(statistics.median(best.samples)))


def test_time_left_counts_repeats_and_interleaved_baseline_runs(tmp_path):
    def left(**options):
        _, t = tuned(tmp_path, trials=10, name=f"s{len(list(tmp_path.iterdir()))}", **options)
        return t.time_left(), t._run_estimate(), t._confirmation_estimate()
    base, run, confirm = left(baseline_every=0, repeats=1)
    assert base == pytest.approx(10 * run + confirm)
    with_baselines, _, _ = left(baseline_every=2, repeats=1)
    assert with_baselines - base == pytest.approx(5 * run)  # one default run every 2 trials
    with_repeats, _, _ = left(baseline_every=0, repeats=3)
    assert with_repeats - base == pytest.approx(2 * 10 * run)


def test_time_budget_keeps_room_for_a_trial_with_its_repeats(tmp_path):
    """A trial costs up to --repeats runs: the search stops when the next one and the confirmation
    round would not fit in --time."""
    store, t = tuned(tmp_path, trials=None, seconds=3.0, delay=0.05, repeats=20, baseline_every=0,
                     confirm_top=1, confirm_rounds=4)
    outcome = t.run()
    assert outcome.stopped_because.startswith("time budget reached")
    assert store.trials_run() >= 1
    assert t.clock() <= 3.0 * 1.05


def test_io_time_on_a_synthetic_model_is_minimized(tmp_path):
    store, t = tuned(tmp_path, trials=25, objective_name="io-time", strategy="bayes")
    outcome = t.run()
    assert outcome.significant and outcome.verdict.gain > 1.2
    assert outcome.winner["median"] < outcome.confirmed_default  # less time
    m = synthetic.model("ufs")
    assert m.value(outcome.winner["settings"]) > m.value({})  # more bandwidth, as it should
    r, _ = results.roti(store, t.objective, outcome, t.clock())
    assert r.final > 0 and "lower is better" in r.unit


def test_resume_with_a_larger_total_runs_more_and_confirms_again(tmp_path):
    out, log = tmp_path / "out", tmp_path / "runs.jsonl"
    storage = f"sqlite:///{out / 'study.db'}"
    common = ["--study", "r", "--storage", storage, "--eval-log", log]
    r = tune_cli("--synthetic", "ufs", "--strategy", "random", "--trials", 10, "--confirm-rounds", 4,
                 "--out", out, *common)
    assert r.returncode == 0, r.stderr
    first = json.loads((out / "summary.json").read_text())
    assert first["trials_run"] == 10 and first["budget"]["trials"] == 10

    r = tune_cli("--resume", "--trials", 20, *common)
    assert r.returncode == 0, r.stderr
    assert "confirming again" in r.stdout
    loaded = study.StudyStore.resume(storage, "r", spaces.from_json)
    assert loaded.trials_run() == 20 and loaded.config["budget"]["trials"] == 20
    conf = loaded.confirmation()
    assert conf["trials_run"] == 20 and conf["rounds_done"] == 4 and len(conf["default"]) == 4
    # the candidates are the best configurations of all 20 trials
    ranked = sorted(loaded.pools.values(), key=lambda p: statistics.median(p.samples), reverse=True)
    assert [c["signature"] for c in conf["candidates"]] == [p.signature for p in ranked[:3]]
    assert len(loaded.superseded_confirmations()) == 1
    labels = [json.loads(line)["label"] for line in log.read_text().splitlines()]
    last_trial = max(i for i, label in enumerate(labels) if label.startswith("t"))
    assert any(label.startswith("confirm-") for label in labels[last_trial:])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["trials_run"] == 20 and summary["budget"]["trials"] == 20

    runs_before = len(labels)
    r = tune_cli("--resume", *common)  # nothing new to do: no run, the same total
    assert r.returncode == 0, r.stderr
    assert len(log.read_text().splitlines()) == runs_before
    again = study.StudyStore.resume(storage, "r", spaces.from_json)
    assert again.config["budget"]["trials"] == 20 and again.trials_run() == 20
    assert again.confirmation() == conf


def test_three_confirmation_rounds_are_raised_so_a_gain_can_be_declared(tmp_path):
    events = []
    store, t = tuned(tmp_path, trials=15, confirm_rounds=3, confirm_top=1)
    t.progress = events.append
    outcome = t.run()
    conf = store.confirmation()
    assert conf["rounds_done"] == 4 and len(conf["default"]) == 4  # 3 vs 3 runs can never reach p < 0.05
    assert outcome.significant
    notes = [e["text"] for e in events if e["kind"] == "note"]
    assert any("4 confirmation rounds instead of 3" in n for n in notes)


def test_a_time_budget_too_small_for_the_confirmation_is_warned_about(tmp_path):
    # a search of 8 trials, stopped before its confirmation round (as a killed tuner would be) ...
    store, t = tuned(tmp_path, trials=8, delay=0.01, confirm_rounds=2, confirm_top=1)
    t._measure_default()
    t._search()
    assert store.confirmation() is None
    # ... resumed with a time budget that is already spent: no room for the 4 rounds a gain needs
    again = tuner.Tuner(store, t.evaluator, t.space, t.objective, {"version": 1}, tuner.Budget(None, 0.1),
                        tuner.Options(confirm_rounds=2, confirm_top=1))
    outcome = again.run()
    assert store.confirmation()["rounds_done"] == 2
    assert not outcome.significant  # 2 vs 2 runs: p is at least 1/6
    assert any("no gain can be declared" in n for n in outcome.notes)
