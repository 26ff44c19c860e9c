"""Parts of the tuner on their own: objectives, spaces, constraints, the
synthetic model's optimum, the significance test, strategies."""

import itertools
import json
import random
import sys
from pathlib import Path

import optuna
import pytest

from iotuner.report import Report
from iotuner.tune import noise, objective, space, strategies, synthetic
from iotuner.tune.session import parse_duration


def report_with(written, read, w_mib_s, r_mib_s, w_time=1.0, r_time=1.0):
    return Report({"totals": {"bytes_written": written, "bytes_read": read, "write_bandwidth_mib_s": w_mib_s,
                              "read_bandwidth_mib_s": r_mib_s, "write_time_s": w_time, "read_time_s": r_time}})


def test_durations():
    assert parse_duration("90s") == 90 and parse_duration("30m") == 1800 and parse_duration("1h30m") == 5400
    assert parse_duration("2.5") == 2.5
    with pytest.raises(ValueError):
        parse_duration("30 minutes")


def test_tunio_perf_weights_by_written_share():
    # 3 parts written at 100 MiB/s, 1 part read at 400 MiB/s: alpha = 0.75
    rep = report_with(300, 100, 100.0, 400.0)
    perf = objective.parse("perf").value(rep, None)
    assert perf == pytest.approx((0.25 * 400 + 0.75 * 100) * objective.MIB_TO_MB)
    assert objective.parse("write-bw").value(rep, None) == pytest.approx(100 * objective.MIB_TO_MB)
    assert objective.parse("io-time").value(rep, None) == 2.0
    with pytest.raises(objective.ObjectiveError, match="no bytes"):
        objective.parse("perf").value(report_with(0, 0, 0, 0), None)
    with pytest.raises(objective.ObjectiveError, match="read nothing"):
        objective.parse("read-bw").value(report_with(10, 0, 1, 0), None)


def test_regex_objective():
    obj = objective.parse(r"regex:bandwidth=([0-9.]+)", "min")
    assert obj.direction == "minimize"
    assert obj.value(None, "bandwidth=1.5\nbandwidth=2.5 MiB/s\n") == 2.5  # the last match
    with pytest.raises(objective.ObjectiveError, match="no match"):
        obj.value(None, "nothing here")
    with pytest.raises(objective.ObjectiveError, match="group"):
        objective.parse("regex:bandwidth")
    with pytest.raises(objective.ObjectiveError, match="unknown objective"):
        objective.parse("speed")


def test_builtin_spaces():
    h5e = space.load("h5evolve")
    assert h5e.size() == 13440  # the slides' count without chunking
    tunio = space.load("tunio")
    assert len(tunio.dimensions) == 12
    romio = space.load("romio")
    agg = romio.dimension("aggregators")
    assert agg.settings_of(agg.values[1]) == {"mpiio.cb_nodes": 2, "mpiio.cb_config_list": "*:2"}


def test_user_space_and_its_errors(tmp_path):
    good = tmp_path / "s.json"
    good.write_text(json.dumps({"name": "mine", "dimensions": [
        {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]},
        {"name": "agg", "values": [{"mpiio.cb_nodes": 1}, {"mpiio.cb_nodes": 2, "mpiio.cb_config_list": "*:2"}]},
        {"knob": "mpiio.my_vendor_hint", "values": ["a", "b"]}]}))
    s = space.load(str(good))
    assert s.size() == 8 and s.name == "mine"
    bad_cases = [
        ({"dimensions": [{"knob": "hdf5.nope", "values": [1, 2]}]}, "unknown knob"),
        ({"dimensions": [{"knob": "hdf5.sieve_buf_size", "values": [1, "4MB"]}]}, "ambiguous"),
        ({"dimensions": [{"knob": "hdf5.sieve_buf_size", "values": [1]}]}, "at least two"),
        ({"dimensions": [{"knob": "mpiio.cb_nodes", "values": [1, 2]},
                         {"name": "x", "values": [{"mpiio.cb_nodes": 4}, {"mpiio.cb_nodes": 8}]}]}, "set by both"),
        ({"dims": []}, "dimensions"),
    ]
    for doc, message in bad_cases:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(space.SpaceError, match=message):
            space.load(str(path))
    with pytest.raises(space.SpaceError, match="unknown space"):
        space.load("nonexistent")


def test_constraint_from_the_catalogue():
    assert space.complete({"mpiio.cb_nodes": 4}, nodes=1)["mpiio.cb_config_list"] == "*:4"
    assert space.complete({"mpiio.cb_nodes": 4}, nodes=2)["mpiio.cb_config_list"] == "*:2"
    explicit = {"mpiio.cb_nodes": 4, "mpiio.cb_config_list": "*:1"}
    assert space.complete(explicit) == explicit  # never overrides the user
    assert space.complete({"hdf5.alignment": [0, 4096]}) == {"hdf5.alignment": [0, 4096]}


def test_synthetic_optimum_is_exact_on_romio():
    """Brute force over the whole romio space equals the block-wise optimum."""
    s, m = space.load("romio"), synthetic.model("ufs")
    brute = max(m.value(s.point_settings(dict(zip([d.name for d in s.dimensions], combo))))
                for combo in itertools.product(*(d.values for d in s.dimensions)))
    assert m.best(s) == pytest.approx(brute)
    assert brute > 1.3 * m.value({})  # there is something to find


def test_synthetic_optimum_bounds_random_points_on_tunio():
    s, m = space.load("tunio"), synthetic.model("lustre")
    best = m.best(s)
    rng = random.Random(1)
    values = [m.value(s.point_settings({d.name: rng.choice(d.values) for d in s.dimensions})) for _ in range(3000)]
    assert max(values) <= best * (1 + 1e-9)
    assert max(values) > 0.3 * best


def test_synthetic_drops_what_ufs_drops():
    m = synthetic.model("ufs")
    a = m.effective({"mpiio.striping_factor": 4, "mpiio.romio_cb_write": "enable"})
    b = m.effective({"mpiio.striping_factor": 64, "mpiio.romio_cb_write": "enable", "lustre.stripe_count": 8})
    assert a == b  # striping is dropped on ufs, Lustre layouts do not apply
    assert m.effective({"mpiio.cb_nodes": 8})["mpiio.cb_nodes"] == 2  # capped at the ranks


class _Obj:
    direction = "maximize"

    @staticmethod
    def gain(v, ref):
        return v / ref


def test_significance():
    obj = objective.parse("perf")
    clear = noise.compare([200, 205, 198, 210, 202], [100, 104, 98, 101, 99], obj, comparisons=3)
    assert clear.significant and clear.gain == pytest.approx(2.02, rel=0.01)
    same = noise.compare([100, 103, 97, 101, 99], [101, 98, 102, 100, 97], obj, comparisons=3)
    assert not same.significant and "no significant improvement" in same.describe()
    # separated but within the noise of the default: not a gain
    small = noise.compare([111, 112, 113, 114, 115], [100, 80, 120, 90, 110], obj)  # spread 14.8% > gain 13%
    assert not small.significant
    assert noise.compare([1, 1.01], [5, 5], objective.parse("io-time")).significant is False


def test_strategy_registry():
    assert set(strategies.names()) >= {"random", "grid", "ga", "ga-h5evolve", "bayes"}
    with pytest.raises(KeyError, match="unknown strategy"):
        strategies.get("annealing")


def test_a_new_strategy_module_is_enough(tmp_path, monkeypatch):
    """Adding a strategy is one module file: the package finds it, no list to edit."""
    (tmp_path / "annealing.py").write_text(
        "import optuna\n"
        "from iotuner.tune.strategies import register\n"
        "@register('annealing', 'test strategy')\n"
        "def factory(space, seed, options):\n"
        "    return optuna.samplers.RandomSampler(seed=seed)\n")
    monkeypatch.setattr(strategies, "__path__", [*strategies.__path__, str(tmp_path)])
    monkeypatch.setattr(strategies, "_REGISTRY", dict(strategies._REGISTRY))
    monkeypatch.delitem(sys.modules, "iotuner.tune.strategies.annealing", raising=False)
    assert "annealing" in strategies.modules()
    assert "annealing" in strategies.names()
    assert isinstance(strategies.sampler("annealing", space.load("romio"), 1), optuna.samplers.RandomSampler)
    sys.modules.pop("iotuner.tune.strategies.annealing", None)


def test_every_module_in_the_strategies_directory_registers():
    directory = Path(strategies.__file__).parent
    files = sorted(p.stem for p in directory.glob("*.py") if not p.stem.startswith("_"))
    assert strategies.modules() == files
    strategies.names()
    registered_by = {s.factory.__module__.rpartition(".")[2] for s in map(strategies.get, strategies.names())}
    assert registered_by == set(files)


def test_ga_elitism_and_valid_children():
    s = space.load("romio")
    m = synthetic.model("ufs")
    study = optuna.create_study(direction="maximize", sampler=strategies.sampler("ga", s, 3))
    pop = 8
    for _ in range(5 * pop):
        trial = study.ask()
        params = {d.name: trial.suggest_categorical(d.name, d.labels) for d in s.dimensions}
        for d in s.dimensions:
            assert params[d.name] in d.labels
        if trial.number % pop == 0 and trial.number >= pop:  # the elite slot: the best point so far
            done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
            assert params == max(done, key=lambda t: t.value).params
        study.tell(trial, m.value(s.point_settings(s.decode(params))))
    values = [t.value for t in study.trials]
    assert max(values[-pop:]) >= max(values[:pop])  # elitism never loses the best
