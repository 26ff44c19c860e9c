"""A study on the synthetic objective: deduplication, budgets, the A/A case,
the confirmation round and the outputs."""

import csv
import json
import math
import re
import statistics
import subprocess
import sys

import optuna
import pytest

from conftest import flat
from iotuner import settings
from iotuner.tune import objective, results, synthetic, tuner
from iotuner.tune import space as spaces
from iotuner.tune import store as stores
from iotuner.tune import study_config as cfg
from iotuner.tune.arguments import parse_duration
from iotuner.tune.store import BASELINE, CONFIRMATION, DEFAULT
from iotuner.tune.tune_error import TuneError
from tune_helpers import FakeClock, make_study, synthetic_study


def tune_cli(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)], capture_output=True, text=True, timeout=300, **kw
    )


def confirmation(store, outcome):
    """{candidate: [values]} of the outcome's confirmation round, and its rounds."""
    runs = [r for r in store.trials.records(CONFIRMATION) if r.attrs.get("plan") == outcome.plan]
    samples = store.trials.confirmation_runs(outcome.plan)
    return samples, {r.attrs["round"] for r in runs}


STRIPING = spaces.from_json(
    {
        "name": "striping",
        "dimensions": [
            {"knob": "mpiio.striping_factor", "values": [1, 2, 4, 8]},
            {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]},
        ],
    }
)


def test_trials_whose_effective_settings_match_share_one_result(tmp_path):
    # on ufs striping is dropped: 8 requested configurations, 2 that take effect
    store, outcome, _ = synthetic_study(tmp_path, space=STRIPING, strategy="grid", trials=8, repeats=3)
    done = store.trials.completed()
    assert len(done) == 8
    assert len(store.results.pools) == 2
    creators = [r for r in done if r.duplicate_of is None]
    sharers = [r for r in done if r.duplicate_of is not None]
    assert len(creators) == 2 and len(sharers) == 6
    assert all(len(r.runs) == 3 for r in creators)  # repeats for a new configuration
    assert all(len(r.runs) == 1 for r in sharers)  # one run shows it is not new
    for r in sharers:  # duplicate_of: the id of the record that measured it first
        assert r.signature == store.trials.record(r.duplicate_of).signature
    assert sorted(len(p.runs) for p in store.results.pools.values()) == [6, 6]


def test_a_point_measured_before_costs_no_run(tmp_path):
    tiny = spaces.from_json(
        {
            "name": "tiny",
            "dimensions": [
                {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable", "automatic"]},
                {"knob": "hdf5.transfer_mode", "values": ["independent", "collective"]},
            ],
        }
    )
    store, outcome, _ = synthetic_study(tmp_path, space=tiny, strategy="random", trials=50)
    assert store.trials.trials_run() == 6
    assert outcome.stopped_because == "every one of the 6 points of the space was measured"
    assert outcome.stop.rule == "exhaustion"
    reused = [r for r in store.trials.search_trials() if r.cost_runs == 0]
    assert reused and all(r.state == "COMPLETE" and r.duplicate_of is not None for r in reused)


def test_a_later_trial_waits_for_an_earlier_peer_that_has_not_yet_published_its_point(tmp_path):
    # three workers on one study: A asks first but publishes its point last
    a, _ = make_study(tmp_path, name="race", storage=f"sqlite:///{tmp_path}/race.db")
    b, c = (stores.Store.open(f"sqlite:///{tmp_path}/race.db", "race", heartbeat_s=None) for _ in range(2))
    dist = optuna.distributions.CategoricalDistribution(["enable", "disable"])
    point, other = {"mpiio.romio_cb_write": "disable"}, {"mpiio.romio_cb_write": "enable"}

    def ask(store, flat, meanwhile=lambda trial: None):
        def choose(trial, tid):
            meanwhile(trial)
            return {k: (v, dist) for k, v in flat.items()}

        return store.ask(choose, lambda params: (dict(params), None))

    seen = {}

    def while_a_chooses(trial):  # A's trial exists, its point is not published yet
        seen["b"] = ask(b, point)
        seen["waits"] = b.workers.in_flight(point, seen["b"].number)

    asked_a = ask(a, other, while_a_chooses)
    asked_b = seen["b"]
    assert seen["waits"].number == asked_a.number  # A may be measuring the same point
    b.refresh()
    assert b.workers.in_flight(point, asked_b.number) is None  # A measures another point: B goes ahead
    asked_c = ask(c, point)
    assert c.workers.in_flight(point, asked_c.number).number == asked_b.number  # B measures it: C waits, then shares
    assert c.workers.in_flight(other, asked_c.number).number == asked_a.number
    assert a.workers.in_flight(other, asked_a.number) is None  # the earliest never waits for a later one
    assert [asked_a.number, asked_b.number, asked_c.number] == [0, 1, 2]


def test_aa_reports_no_significant_improvement(tmp_path):
    """Every configuration is the same: noise alone must not be called a gain."""
    store, outcome, t = synthetic_study(tmp_path, model="flat", strategy="bayes", trials=25, sigma=0.1)
    assert outcome.verdict is not None and not outcome.verdict.significant
    assert "no significant improvement" in outcome.verdict.describe()
    assert outcome.best_doc["meta"]["significant"] is False
    assert settings.flatten(outcome.best_doc) == {}  # the default settings are kept
    # the search did see "better" trials by chance: the confirmation is what caught it
    assert max(p.median for p in store.results.pools.values()) > 1.05 * outcome.default
    # so there is no return on the tuning: no final RoTI, with the reason, in the summary and on the curve
    summary = results.write_all(store, objective.parse("perf"), outcome, tmp_path / "out", t.clock())
    assert summary["roti"]["final"] is None and summary["roti_reason"].startswith("no gain to return")
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["roti"]["final"] is None
    assert summary["viability"]["runs"] is None and "no confirmed gain" in summary["viability"]["reason"]


def test_aa_printout_says_no_gain_to_return(tmp_path):
    r = tune_cli(
        "--synthetic", "flat", "--synthetic-noise", "0.1", "--trials", 12, "--study", "aa", "--out", tmp_path / "out"
    )
    assert r.returncode == 0, r.stderr
    assert "no significant improvement" in flat(r.stdout)
    assert "RoTI: none (no gain to return" in flat(r.stdout)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["roti"]["final"] is None and "no gain to return" in summary["roti_reason"]
    assert summary["stop"] == {"rule": "trial-budget", "reason": "trial budget of 12 reached"}


def test_confirmed_gain_and_outputs(tmp_path):
    store, outcome, t = synthetic_study(tmp_path, strategy="bayes", trials=30, repeats=1, baseline_every=5)
    assert outcome.verdict.significant and outcome.verdict.gain > 1.2
    assert outcome.best_doc["meta"]["trial"] == outcome.winner["trial"]
    runs_of_baseline = len(store.trials.records(BASELINE))
    assert runs_of_baseline >= 1 + 30 // 5 - 1  # measured at the start and between trials
    samples, rounds = confirmation(store, outcome)
    assert rounds == set(range(5)) and len(samples[DEFAULT]) == 5
    assert all(len(v) == 5 for v in samples.values())

    summary = results.write_all(store, t.objective, outcome, tmp_path / "out", t.clock())
    best = settings.load(tmp_path / "out" / "best.json")  # usable as is by iotuner run --config
    assert best["meta"]["significant"] is True
    assert len(best["groups"]) == 1  # the default settings and the winner's knobs, merged
    rows = list(csv.DictReader(open(tmp_path / "out" / "trials.csv")))
    kinds = [r["kind"] for r in rows]
    assert kinds.count("trial") == len(store.trials.search_trials())
    assert kinds.count("baseline") == runs_of_baseline
    assert sum(1 for r in rows if r["kind"] == "confirmation" and r["trial"] == "default") == 5
    png = (tmp_path / "out" / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # trials are numbered 0, 1, ... in the CSV as in the log, in the order they were asked
    assert [int(r["trial"]) for r in rows if r["kind"] == "trial"] == list(range(len(store.trials.search_trials())))
    # the trajectory's times are the CSV's, and never go back
    at = [float(r["tuning_time_s"]) for r in rows if r["kind"] in ("trial", "baseline")]
    points = {p.record: p for p in store.results.trajectory}
    assert sorted(at) == sorted(
        round(points[int(r["record"])].at_s, 3) for r in rows if r["kind"] in ("trial", "baseline")
    )
    assert all(b.at_s >= a.at_s for a, b in zip(store.results.trajectory, store.results.trajectory[1:]))
    # RoTI: final = confirmed gain over all the tuning time; peak = highest along the curve
    r = summary["roti"]
    winner = statistics.median(samples[outcome.winner["signature"]])
    assert r["final"] == pytest.approx((winner - statistics.median(samples[DEFAULT])) / (summary["tuning_time_s"] / 60))
    curve = [
        (p.at_s, (p.best - p.default) / (p.at_s / 60))
        for p in store.results.trajectory
        if p.best is not None and p.default is not None and p.at_s > 0
    ]
    assert [c["roti"] for c in r["curve"]] == pytest.approx([c[1] for c in curve])
    assert r["peak"] == pytest.approx(max(c[1] for c in curve))
    assert r["unit"] == "MiB/s per minute" and summary["roti_reason"] is None


def test_bayes_finds_most_of_the_romio_optimum(tmp_path):
    store, outcome, _ = synthetic_study(tmp_path, strategy="bayes", trials=40, sigma=0.0, confirm_rounds=2)
    best = synthetic.model("ufs").best(spaces.load("romio"))
    assert max(p.median for p in store.results.pools.values()) >= 0.9 * best


def test_reused_trials_take_their_place_on_the_tuning_clock(tmp_path):
    """GA proposes its elite again every generation: those trials cost no run, and sit on the
    curve when they were proposed, not at t = 0 with the best value found."""
    store, t = make_study(tmp_path, strategy="ga", trials=30, delay=0.5, sigma=0.02, clock=FakeClock())
    outcome = t.run()
    at = {p.record: p.at_s for p in store.results.trajectory}
    trials = store.trials.search_trials()
    reused = [r for r in trials if r.cost_runs == 0]
    assert len(reused) >= 2
    times = [at[r.id] for r in trials]
    assert all(b >= a for a, b in zip(times, times[1:])) and times[0] > 0
    assert all(at[r.id] > 0 for r in reused)
    assert outcome.significant
    r, why = results.roti(store, t.objective, outcome, t.clock())
    assert why is None and math.isfinite(r.peak) and r.peak_at_s > 0
    assert r.peak_at_s >= min(times)


def test_trials_that_take_effect_as_the_default_share_its_runs(tmp_path):
    tiny = spaces.from_json(
        {
            "name": "tiny",
            "dimensions": [
                {"knob": "mpiio.romio_cb_write", "values": ["automatic", "enable"]},  # automatic is the default
                {"knob": "mpiio.cb_buffer_size", "values": [16 << 20, 4 << 20]},
            ],
        }
    )  # 16 MiB is the default
    store, t = make_study(tmp_path, space=tiny, strategy="grid", trials=4, repeats=3, baseline_every=0)
    t.run()
    same = [r for r in store.trials.completed() if r.duplicate_of == DEFAULT]
    assert len(same) == 1
    assert same[0].settings == {"mpiio.romio_cb_write": "automatic", "mpiio.cb_buffer_size": 16 << 20}
    assert len(same[0].runs) == 1  # one run shows it is the default: no repeats
    baseline_runs = sum(len(r.runs) for r in store.trials.records(BASELINE) if r.ok)
    assert len(store.results.default_runs) == baseline_runs + 1  # the trial's run counts with the default's
    assert len(store.results.pools) == 3 and t.confirmation.candidates()  # the other three are candidates


def test_ranking_uses_the_current_value_of_shared_results(tmp_path):
    striping = spaces.from_json(
        {
            "name": "striping",
            "dimensions": [
                {"knob": "mpiio.striping_factor", "values": [1, 2, 4, 8, 16, 32]},
                {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]},
            ],
        }
    )
    store, t = make_study(tmp_path, space=striping, strategy="grid", trials=12, sigma=0.2, repeats=2)
    t.run()
    now = store.results.current_values()
    by_sig = {}
    for r in store.trials.completed():
        by_sig.setdefault(r.signature, []).append(r)
    stale = 0
    told = {tr.number: tr.value for tr in store.study.trials}
    for sig, group in by_sig.items():
        runs = [x for r in group for x in r.runs]
        assert sorted(store.results.pools[sig].runs) == sorted(runs)  # one pool: every run of the configuration
        for r in group:
            assert now[r.number] == pytest.approx(statistics.median(runs))
            stale += told[r.number] != pytest.approx(statistics.median(runs))
    assert stale > 0  # told values go stale as their configuration gets more runs
    best = max(store.results.pools.values(), key=lambda p: statistics.median(p.runs))
    assert t.search.best() == (best.first, pytest.approx(statistics.median(best.runs)))


def test_time_left_counts_repeats_and_interleaved_baseline_runs(tmp_path):
    def left(**options):
        _, t = make_study(tmp_path, trials=10, name=f"s{len(list(tmp_path.iterdir()))}", **options)
        return t.search.time_left(), t.search.run_estimate(), t.confirmation.estimate()

    base, run, confirm = left(baseline_every=0, repeats=1)
    assert base == pytest.approx(10 * run + confirm)
    with_baselines, _, _ = left(baseline_every=2, repeats=1)
    assert with_baselines - base == pytest.approx(5 * run)  # one default run every 2 trials
    with_repeats, _, _ = left(baseline_every=0, repeats=3)
    assert with_repeats - base == pytest.approx(2 * 10 * run)


def test_time_budget_keeps_room_for_a_trial_with_its_repeats(tmp_path):
    """A trial costs up to --repeats runs: the search stops when the next one and the confirmation
    round would not fit in --time (a deterministic clock: each run takes exactly 0.05 s)."""
    store, t = make_study(
        tmp_path,
        trials=None,
        seconds=3.0,
        delay=0.05,
        repeats=20,
        baseline_every=0,
        confirm_top=1,
        confirm_rounds=4,
        clock=FakeClock(),
    )
    outcome = t.run()
    assert outcome.stop.rule == "time-budget"
    assert outcome.stopped_because.startswith("time budget reached")
    assert store.trials.trials_run() >= 1
    assert t.clock() <= 3.0
    # one more trial with its repeats would not have fitted with the confirmation round
    assert (
        t.clock() - t.confirmation.estimate() + t.search.next_trial_estimate() + t.confirmation.estimate() > 3.0 - 1e-9
    )


def test_a_time_budget_with_no_room_for_one_trial_refuses_and_names_one_that_has(tmp_path):
    """Runs of 9 s and --time 20s: the default's run leaves no room for a trial and the confirmation round
    after it. The tuner says so, with a budget that has room, instead of judging trials that never ran; the
    study keeps the default's run, and resumed with the budget named, it runs trials."""
    store, t = make_study(tmp_path, trials=None, seconds=20.0, delay=9.0, confirm_top=1, clock=FakeClock())
    with pytest.raises(TuneError) as e:
        t.run()
    message = str(e.value)
    assert "no room for a single trial" in message and "--resume" in message, message
    assert (
        store.trials.trials_run() == 0
        and not store.trials.records(CONFIRMATION)
        and len(store.trials.records(BASELINE)) == 1
    )
    given = re.search(r"--time (\S+) or more", message)
    assert given, message
    store.set_budget(cfg.Budget(None, parse_duration(given[1])))
    again = tuner.Tuner(store, t.evaluator, t.space, t.objective, t.strategy)
    outcome = again.run()
    assert store.trials.trials_run() >= 1 and store.trials.records(CONFIRMATION)
    assert outcome.stop.rule == "time-budget" and len(store.trials.records(BASELINE)) == 1  # the default's run was kept


def test_a_study_stopped_before_any_trial_draws_no_conclusion_about_trials(tmp_path):
    """A run budget spent on the default's runs: no trial ran, and the outcome says that, not that no
    configuration took effect differently."""
    store, t = make_study(tmp_path, trials=None)
    store.set_budget(cfg.Budget(None, None, 1))
    outcome = t.run()
    assert store.trials.trials_run() == 0 and outcome.stop.rule == "run-budget"
    assert outcome.notes[-1].startswith("no trial ran (run budget of 1"), outcome.notes
    assert not any("took effect differently" in n for n in outcome.notes)
    summary = json.loads(json.dumps(results.write_all(store, t.objective, outcome, tmp_path / "out", t.clock())))
    assert summary["roti_reason"].endswith(outcome.notes[-1]) and summary["viability"]["runs"] is None


def test_io_time_on_a_synthetic_model_is_minimized(tmp_path):
    store, t = make_study(tmp_path, trials=25, objective_name="io-time", strategy="bayes")
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
    r = tune_cli(
        "--synthetic", "ufs", "--strategy", "random", "--trials", 10, "--confirm-rounds", 4, "--out", out, *common
    )
    assert r.returncode == 0, r.stderr
    first = json.loads((out / "summary.json").read_text())
    assert first["trials_run"] == 10 and first["budget"]["trials"] == 10

    r = tune_cli("--resume", "--trials", 20, *common)
    assert r.returncode == 0, r.stderr
    assert "confirming again" in " ".join(r.stdout.split())  # the printout wraps to the width
    loaded = stores.Store.open(storage, "r")
    assert loaded.trials.trials_run() == 20 and loaded.budget.trials == 20
    plans = {x.attrs["plan"] for x in loaded.trials.records(CONFIRMATION)}
    assert len(plans) == 2  # the first round, superseded, and the new one
    summary = json.loads((out / "summary.json").read_text())
    assert summary["trials_run"] == 20 and summary["budget"]["trials"] == 20
    # the new round's candidates are the best configurations of all 20 trials
    ranked = loaded.results.ranked_pools(lambda v: v)
    rows = list(csv.DictReader(open(out / "trials.csv")))
    current = {x["effective"] for x in rows if x["kind"] == "confirmation" and x["trial"] != "default"}
    assert current == {p.signature for p in ranked[:3]}
    assert any(x["kind"] == "confirmation-superseded" for x in rows)
    labels = [json.loads(line)["label"] for line in log.read_text().splitlines()]
    last_trial = max(i for i, label in enumerate(labels) if label.startswith("t"))
    assert any(label.startswith("confirm-") for label in labels[last_trial:])

    runs_before = len(labels)
    r = tune_cli("--resume", *common)  # nothing new to do: no run, the same total, the same verdict
    assert r.returncode == 0, r.stderr
    assert len(log.read_text().splitlines()) == runs_before
    assert "confirming again" not in r.stdout and "results:" in r.stdout  # the path may go on a line of its own
    again = stores.Store.open(storage, "r")
    assert again.budget.trials == 20 and again.trials.trials_run() == 20
    assert len(again.trials.records(CONFIRMATION)) == len(loaded.trials.records(CONFIRMATION))


class Bursts:
    """The evaluator of a study, with the winner's confirmation runs of some rounds slowed 20x (a burst)."""

    def __init__(self, evaluator, rounds, stop_at=None):
        self.evaluator, self.rounds, self.objective, self.stop_at = evaluator, rounds, evaluator.objective, stop_at

    def evaluate(self, doc, label):
        part = label.split("-")  # confirm-ROUND-WHO
        if part[0] == "confirm" and int(part[1]) == self.stop_at:
            raise KeyboardInterrupt  # the tuner is stopped in this round
        m = self.evaluator.evaluate(doc, label)
        if part[0] == "confirm" and part[2] != "default" and int(part[1]) in self.rounds:
            m.value /= 20
        return m


@pytest.mark.parametrize(
    "bursts,rounds,significant",
    [
        ((), 5, True),  # clear at once: no more rounds
        ((0, 1), 10, True),  # 2 of 5 winner's runs under the default's: undecided, then clear in 10 rounds
        (range(10), 5, False),
    ],
)  # every run under the default's: a clear no, no more rounds
def test_an_undecided_confirmation_runs_as_many_rounds_again_once(tmp_path, bursts, rounds, significant):
    store, t = make_study(tmp_path, trials=10, confirm_top=1, sigma=0.02)
    t = tuner.Tuner(store, Bursts(t.evaluator, set(bursts)), t.space, t.objective, t.strategy)
    outcome = t.run()
    samples, ran = confirmation(store, outcome)
    assert ran == set(range(rounds)) and len(samples[DEFAULT]) == rounds
    assert outcome.significant is significant
    extended = [n for n in outcome.notes if n.startswith("the confirmation is undecided after 5 rounds")]
    assert len(extended) == (rounds == 10)
    # both looks at the data share the level: alpha over the candidate and the two looks
    assert outcome.verdict.alpha == pytest.approx(0.05 / 2)


def test_a_tuner_stopped_in_the_extra_rounds_runs_the_round_again_and_extends_it(tmp_path):
    store, t = make_study(tmp_path, trials=10, confirm_top=1, sigma=0.02)
    evaluator = t.evaluator
    t = tuner.Tuner(store, Bursts(evaluator, {0, 1}, stop_at=9), t.space, t.objective, t.strategy)
    with pytest.raises(KeyboardInterrupt):
        t.run()
    again = tuner.Tuner(store, Bursts(evaluator, {0, 1}), t.space, t.objective, t.strategy)
    outcome = again.run()
    samples, ran = confirmation(store, outcome)
    # the round is run again from its start (a new start of its lease: the stopped runs may have been
    # disturbed), and undecided after 5 rounds again, it runs 5 more
    assert ran == set(range(10)) and len(samples[DEFAULT]) == 10 and outcome.significant
    notes = " ".join(outcome.notes)
    assert "runs the round again, from the start (start 2)" in notes, outcome.notes
    assert "the confirmation is undecided after 5 rounds (p = " in notes, outcome.notes


def test_three_confirmation_rounds_are_raised_so_a_gain_can_be_declared(tmp_path):
    events = []
    store, t = make_study(tmp_path, trials=15, confirm_rounds=3, confirm_top=1)
    t = tuner.Tuner(store, t.evaluator, t.space, t.objective, t.strategy, progress=events.append)
    outcome = t.run()
    samples, rounds = confirmation(store, outcome)
    assert rounds == set(range(4)) and len(samples[DEFAULT]) == 4  # 3 vs 3 runs can never reach p < 0.05
    assert outcome.significant
    notes = [e["text"] for e in events if e["kind"] == "note"]
    assert any("4 confirmation rounds instead of 3" in n for n in notes)


def test_a_time_budget_too_small_for_the_confirmation_is_warned_about(tmp_path):
    # a search of 8 trials, stopped before its confirmation round (as a killed tuner would be) ...
    store, t = make_study(tmp_path, trials=8, delay=0.01, confirm_rounds=2, confirm_top=1)
    t.store.workers.begin_session()
    t.search.measure_default()
    t.search.run()
    assert not store.trials.records(CONFIRMATION)
    # ... resumed with a time budget that is already spent: no room for the 4 rounds a gain needs
    store.set_budget(cfg.Budget(None, 0.1))
    again = tuner.Tuner(store, t.evaluator, t.space, t.objective, t.strategy)
    outcome = again.run()
    samples, rounds = confirmation(store, outcome)
    assert rounds == {0, 1}
    assert not outcome.significant  # 2 vs 2 runs: p is at least 1/6
    assert any("no gain can be declared" in n for n in outcome.notes)


def test_best_json_lists_only_what_took_effect_differently(tmp_path):
    """On ufs, striping hints are dropped: a winner that sets them gets only its knobs that matter in
    best.json; the others are named in its meta."""
    sp = spaces.from_json(
        {
            "name": "mixed",
            "dimensions": [
                {"knob": "hdf5.transfer_mode", "values": ["collective", "independent"]},
                {"knob": "mpiio.striping_factor", "values": [4, 8]},
            ],
        }
    )
    store, outcome, _ = synthetic_study(tmp_path, space=sp, strategy="grid", trials=4, sigma=0.01)
    assert outcome.significant
    flat = settings.flatten(outcome.best_doc)
    assert flat == {"hdf5.transfer_mode": "independent"}
    assert "mpiio.striping_factor" in outcome.best_doc["meta"]["same_as_default"]


@pytest.mark.parametrize("strategy, repeats", [("model", 1), ("ml", 1), ("bayes", 2)])
def test_a_run_budget_bounds_every_application_run_of_the_search(tmp_path, strategy, repeats):
    """--runs counts what the search costs in runs: the default's, a strategy's training and the trials'
    with their repeats; a strategy that trains fits its training into it, says how many at the start, and
    summary.json counts the runs by kind (the confirmation apart)."""
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--synthetic",
            "ufs",
            "--space",
            "twophase",
            "--strategy",
            strategy,
            "--runs",
            "24",
            "--repeats",
            str(repeats),
            "--confirm-top",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    runs = summary["application_runs"]
    rows = list(csv.DictReader(open(out / "trials.csv")))
    assert runs["default"] + runs["training"] + runs["trials"] <= 24
    assert runs["training"] == len([x for x in rows if x["kind"] == "training"])
    assert runs["confirmation"] == len([x for x in rows if x["kind"] == "confirmation"])
    assert summary["budget"]["runs"] == 24 and summary["stop"]["rule"] in ("run-budget", "strategy", "exhaustion")
    said = flat(r.stdout)
    if strategy == "bayes":
        assert "training runs" not in said.split("study synthetic-ufs in")[0] and runs["training"] == 0
    else:
        assert 0 < runs["training"] < 24 - 1
        assert f"this strategy will make {runs['training']} training runs before its first trial" in said
        assert runs["trials"] >= 1  # room was left for what it predicts
    assert f"application runs: {runs['default'] + runs['training'] + runs['trials']} to search" in said
