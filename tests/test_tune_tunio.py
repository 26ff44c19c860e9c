"""TunIO's impact-first search: the GA varies only the picked subset, the rest pinned at the best so far; the
exhaustion rule applies to the subspace; the state observer and the picker; the fANOVA ablation; decisions
replayed the same on resume."""

import json
import random

import numpy as np
import optuna
import pytest

from iotuner import settings
from iotuner.tune import objective
from iotuner.tune import space as spaces
from iotuner.tune import store as stores
from iotuner.tune.strategies.tunio import impact
from tune_helpers import FakeClock, make_study

PERF = objective.parse("perf")


def rows_of(strategy, store):
    return [strategy.row_of(r.settings) for r in store.trials.search_trials()]


def test_each_generation_varies_only_its_subset_around_the_best_so_far(tmp_path):
    store, t = make_study(
        tmp_path,
        model="lustre",
        space="tunio",
        strategy="tunio",
        trials=48,
        sigma=0.0,
        clock=FakeClock(),
        stop="none",
        storage=optuna.storages.InMemoryStorage(),
    )
    t.run()
    s = t.strategy
    rows = rows_of(s, store)
    values = [r.runs[0] if r.runs else None for r in store.trials.search_trials()]
    generations = len(rows) // s.population
    assert generations >= 6
    partial = 0
    for g in range(1, generations):
        plan = s.plans[g]
        start = g * s.population
        # the incumbent is the best point measured before the generation (noise-free: its value)
        before = [(v, rows[i]) for i, v in enumerate(values[:start]) if v is not None]
        assert plan["incumbent"] == max(before, key=lambda x: x[0])[1]
        assert rows[start] == plan["incumbent"]  # elitism: the best so far comes first
        subset = set(plan["decision"].subset)
        partial += len(subset) < len(s.dims)
        for row in rows[start + 1 : start + s.population]:
            assert all(row[j] == plan["incumbent"][j] for j in range(len(s.dims)) if j not in subset)
    assert partial >= 2  # the picker narrowed the search in several generations


def test_the_exhaustion_rule_applies_to_the_subspace_which_widens_instead_of_stopping(tmp_path):
    space = spaces.from_json(
        {
            "name": "small",
            "dimensions": [
                {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]},
                {"knob": "hdf5.transfer_mode", "values": ["collective", "independent"]},
                {"knob": "mpiio.romio_ds_write", "values": ["automatic", "disable"]},
                {"knob": "hdf5.alignment", "values": [[1, 1], [0, 1048576]]},
            ],
        }
    )
    store, t = make_study(
        tmp_path,
        space=space,
        strategy="tunio",
        trials=100,
        sigma=0.0,
        clock=FakeClock(),
        stop="none",
        storage=optuna.storages.InMemoryStorage(),
    )
    outcome = t.run()
    # every point of the space was measured before the study stopped for exhaustion
    assert len(store.results.requested) + len(store.results.failed) == space.size() == 16
    assert outcome.stop.rule == "exhaustion"
    # along the way the strategy searched subspaces: the rule sees their size and their points
    s = t.strategy
    plan = s.plans[0]
    subset = plan["decision"].subset
    if len(subset) < len(s.dims):
        size = 1
        for j in subset:
            size *= len(s.dims[j].labels)
        assert s.searched_size() in (size, None) or s.searched_size() >= size
    inc = s.labels(s.plans[-1]["incumbent"])
    flat = space.point_settings({d.name: d.value_of(inc[d.name]) for d in space.dimensions})
    assert s.searches(flat)


def test_searched_size_and_searches_describe_the_current_subspace(tmp_path):
    store, t = make_study(
        tmp_path,
        model="lustre",
        space="tunio",
        strategy="tunio",
        trials=24,
        sigma=0.0,
        clock=FakeClock(),
        stop="none",
        storage=optuna.storages.InMemoryStorage(),
    )
    t.run()
    s = t.strategy
    plan = s.plans[-1]
    subset = plan["decision"].subset
    expected = int(np.prod([len(s.dims[j].labels) for j in subset]))
    assert s.searched_size() == (None if len(subset) == len(s.dims) else expected)
    inside = list(plan["incumbent"])
    outside = list(plan["incumbent"])
    j_in = subset[0]
    j_out = next(j for j in range(len(s.dims)) if j not in subset)
    inside[j_in] = (inside[j_in] + 1) % len(s.dims[j_in].labels)
    outside[j_out] = (outside[j_out] + 1) % len(s.dims[j_out].labels)
    sp = spaces.load("tunio")

    def flat(row):
        return settings.complete(sp.point_settings(sp.decode(s.labels(row))))

    assert s.searches(flat(inside)) and not s.searches(flat(outside))


def test_decisions_are_replayed_the_same_on_resume(tmp_path):
    kw = dict(model="lustre", space="tunio", strategy="tunio", sigma=0.0, stop="none", baseline_every=0)
    whole, t = make_study(tmp_path, name="whole", trials=40, clock=FakeClock(), **kw)
    t.run()
    half, t = make_study(tmp_path, name="half", trials=17, clock=FakeClock(), **kw)
    t.run()
    from iotuner.tune import strategies, synthetic, tuner
    from iotuner.tune import study_config as cfg

    store = stores.Store.open(f"sqlite:///{tmp_path}/half.db", "half", heartbeat_s=None)
    store.set_budget(cfg.Budget(40, None))
    sp = spaces.from_json(store.config.space)
    resumed = tuner.Tuner(
        store,
        synthetic.SyntheticEvaluator(synthetic.model("lustre"), PERF, 0.0, 0.0, 0),
        sp,
        PERF,
        strategies.make("tunio", sp, store.workers.worker_seed(0)),
    )
    resumed.run()
    assert [r.settings for r in store.trials.search_trials()] == [r.settings for r in whole.trials.search_trials()]


def test_the_observer_sees_which_dimensions_matter_and_which_are_inert():
    dims = [
        impact.Dim("a", ("0", "1", "2"), frozenset({"x.a"})),
        impact.Dim("b", ("0", "1"), frozenset({"x.b"})),
        impact.Dim("c", ("0", "1"), frozenset({"x.c"})),
    ]
    rng = np.random.default_rng(0)
    rows = [tuple(int(rng.integers(len(d.labels))) for d in dims) for _ in range(30)]
    scores = [0.5 * r[0] + 0.01 * rng.standard_normal() for r in rows]  # only a matters
    took = [frozenset({"x.a", "x.b"}) for _ in rows]  # c never took effect: dropped by the system
    seen = impact.Seen(rows, scores, took, 0.0)
    effects = impact.main_effects(dims, seen)
    spread = [float(e.max() - e.min()) for e in effects]
    assert spread[0] == pytest.approx(1.0, abs=0.2) and spread[0] > 10 * spread[1]  # ridge shrinks a little
    ctx, inert = impact.contexts(dims, seen, (0, 0, 0), [0.5, 0.5, 0.5])
    headroom = ctx[:, impact.FEATURES.index("headroom")]
    assert headroom[0] > 0.9 and headroom[1] < 0.5  # a at its worst value: much to gain by moving it
    assert list(inert) == [False, False, True]
    picker = impact.Picker(dims, impact.PickerPolicy.blank({"x.a": 0.1, "x.b": 0.9, "x.c": 1.0}), seed=0, learn=False)
    d = picker.decide(3, seen, (0, 0, 0), [0.0, 0.2, 0.4, 0.6])
    assert d.order[-1] == 2  # the inert dimension comes last, whatever its prior


def test_the_picker_learns_with_a_five_generation_delay():
    dims = [impact.Dim(f"d{i}", ("0", "1"), frozenset({f"x.d{i}"})) for i in range(4)]
    policy = impact.PickerPolicy.blank()
    picker = impact.Picker(dims, policy, seed=0, learn=True, epsilon=0.0, weight=None)
    seen = impact.Seen([], [], [], 0.0)
    decisions = []
    score = 0.0
    for g in range(impact.REWARD_DELAY + 1):
        d = picker.decide(g, seen, (0, 0, 0, 0), [score])
        decisions.append(d)
        if g < impact.REWARD_DELAY:
            assert not picker.q.any()  # nothing is learned before the delay has passed
        score += 0.1
        picker.observe(d, [], 0.1, score, scale=1.0)
    first = decisions[0]
    # reward of a generation: its gain over the scale, minus PENALTY times the picked share
    rewards = [0.1 - impact.PENALTY * len(d.subset) / 4 for d in decisions]
    ret = sum(impact.GAMMA**i * r for i, r in enumerate(rewards[: impact.REWARD_DELAY]))
    ret += impact.GAMMA**impact.REWARD_DELAY * 0.0  # the Q-value of the state reached, still 0
    assert picker.q[first.state, first.action] == pytest.approx(impact.LEARNING_RATE * ret)
    assert np.count_nonzero(picker.q) == 1


def test_the_fanova_ablation_picks_what_matters_after_the_first_generation(tmp_path):
    store, t = make_study(
        tmp_path,
        model="ufs",
        space="romio",
        strategy="tunio-fanova",
        trials=24,
        sigma=0.0,
        clock=FakeClock(),
        stop="none",
        storage=optuna.storages.InMemoryStorage(),
    )
    t.run()
    plans = t.strategy.plans
    assert len(plans[0]["decision"].subset) == len(t.strategy.dims)  # nothing known yet: everything
    later = set(t.strategy.subsets()[1])
    assert len(later) < len(t.strategy.dims)
    # in the ufs model, collective buffering and the transfer mode make most of the difference
    assert later & {"hdf5.transfer_mode", "mpiio.romio_cb_write", "mpiio.cb_nodes"}


def test_a_damaged_policy_file_is_named(tmp_path):
    bad = tmp_path / "picker.json"
    bad.write_text("{not json")
    with pytest.raises(impact.PolicyError, match=str(bad)):
        impact.load_policy(bad)
    bad.write_text(json.dumps({"format": "iotuner-tunio-picker", "version": 1, "features": ["x"]}))
    with pytest.raises(impact.PolicyError, match="regenerate it"):
        impact.load_policy(bad)


@pytest.mark.parametrize("name", ["bandio", "tunio", "romio"])
def test_every_point_of_a_space_maps_back_to_its_own_row(name):
    """A value that sets nothing (HDF5's contiguous layout in bandio) must not match every point: once it did,
    the measured chunked points counted as contiguous ones and the exhaustion rule ended studies early."""
    import itertools

    from iotuner.settings import complete
    from iotuner.tune import space as spaces
    from iotuner.tune import strategies

    sp = spaces.load(name)
    s = strategies.make("tunio", sp, 0, {})
    rows = list(itertools.product(*[range(len(d.values)) for d in sp.dimensions]))
    for row in random.Random(0).sample(rows, min(len(rows), 2000)):
        point = {d.name: d.labels[i] for d, i in zip(sp.dimensions, row)}
        assert s.row_of(complete(sp.point_settings(sp.decode(point)), 1)) == row, point
