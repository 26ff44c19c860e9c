"""Parts of the tuner on their own: objectives, spaces, constraints, the
synthetic model's optimum, the significance test, strategies."""

import itertools
import json
import random
import re
import statistics
import sys
from pathlib import Path

import optuna
import pytest

from iotuner import catalogue, settings
from iotuner.run_report import Report
from iotuner.tune import noise, objective, space, strategies, synthetic
from iotuner.tune import study_config as cfg
from iotuner.tune.arguments import parse_duration
from tune_helpers import make_study


def report_with(written, read, w_mib_s, r_mib_s, w_time=1.0, r_time=1.0):
    return Report(
        {
            "totals": {
                "bytes_written": written,
                "bytes_read": read,
                "write_bandwidth_mib_s": w_mib_s,
                "read_bandwidth_mib_s": r_mib_s,
                "write_time_s": w_time,
                "read_time_s": r_time,
            }
        }
    )


def test_durations():
    assert parse_duration("90s") == 90 and parse_duration("30m") == 1800 and parse_duration("1h30m") == 5400
    assert parse_duration("2.5") == 2.5
    with pytest.raises(ValueError):
        parse_duration("30 minutes")


def test_tunio_perf_weights_by_written_share():
    # 3 parts written at 100 MiB/s, 1 part read at 400 MiB/s: alpha = 0.75
    rep = report_with(300, 100, 100.0, 400.0)
    perf = objective.parse("perf").value(rep, None)
    assert perf == pytest.approx(0.25 * 400 + 0.75 * 100)  # MiB/s, as the report
    assert objective.parse("write-bw").value(rep, None) == pytest.approx(100)
    old = objective.Objective("write-bw", "maximize", "MB/s")  # a study made before the units were one
    assert old.value(rep, None) == pytest.approx(100 * objective.MIB_TO_MB)
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


PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"


def _paper(name):
    path = PAPERS / name
    if not path.exists():
        pytest.skip(f"{path} is not here")
    return path.read_text()


def _size(text):
    number, unit = re.fullmatch(r"\s*(\d+)\s*(KB|MB|GB)?\s*", text).groups()
    return int(number) * {None: 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[unit]


def test_h5evolve_space_has_the_ranges_of_paper_004():
    text = _paper("004_948db8d4b2abde44.txt")
    row = {
        name: re.search(rf"^{re.escape(name)} (.+) (\d+)$", text, re.M).groups()
        for name in (
            "Lustre Stripe Count",
            "Lustre Stripe Size / CB Size",
            "MPI-IO Collective Buffering Nodes",
            "HDF5 Alignment",
        )
    }
    s = space.load("h5evolve")

    lo, hi = row["Lustre Stripe Count"][0].split(" ", 1)  # "4 156/160"
    count = s.dimension("lustre.stripe_count").values
    assert min(count) == int(lo) and max(count) in map(int, hi.split("/"))
    assert len(count) == int(row["Lustre Stripe Count"][1])

    sizes = s.dimension("stripe_and_cb_size").values  # one dimension: the stripe size is the cb_buffer_size
    assert all(v["lustre.stripe_size"] == v["mpiio.cb_buffer_size"] for v in sizes)
    lo, hi = re.fullmatch(r"(\d+ MB) (\d+ MB)", row["Lustre Stripe Size / CB Size"][0]).groups()
    stripe = [v["lustre.stripe_size"] for v in sizes]
    assert (min(stripe), max(stripe), len(stripe)) == (
        _size(lo),
        _size(hi),
        int(row["Lustre Stripe Size / CB Size"][1]),
    )

    lo, hi = row["MPI-IO Collective Buffering Nodes"][0].split()
    nodes = s.dimension("mpiio.cb_nodes").values
    assert (min(nodes), max(nodes), len(nodes)) == (int(lo), int(hi), int(row["MPI-IO Collective Buffering Nodes"][1]))

    first, last = re.findall(r"\(([^)]*)\)", row["HDF5 Alignment"][0])  # "(1,1) (16KB, 32MB)"
    align = s.dimension("hdf5.alignment").values
    assert align[0] == [_size(x) for x in first.split(",")] and align[-1] == [_size(x) for x in last.split(",")]
    assert len(align) == int(row["HDF5 Alignment"][1])
    assert max(a[1] for a in align) == _size(last.split(",")[1])

    lo, hi, n = re.search(r"^HDF5 Chunks Size (\d+ MB) (\d+ GB) (\d+)$", text, re.M).groups()
    chunks = s.dimension("hdf5.chunk_bytes").values
    assert (min(chunks), max(chunks), len(chunks)) == (_size(lo), _size(hi), int(n))
    assert list(chunks) == sorted(set(chunks))

    with_chunking = int(
        re.search(r"([\d,]+) possible configurations on Lustre with chunking", text)[1].replace(",", "")
    )
    assert s.size() == with_chunking


# TunIO's parameter names (paper 002, section III-C) and the catalogue knobs they are
TUNIO_KNOBS = {
    "sieve_buf_size": {"hdf5.sieve_buf_size"},
    "chunk_cache": {"hdf5.chunk_cache_nbytes", "hdf5.chunk_cache_nslots"},
    "alignment": {"hdf5.alignment"},
    "meta_block_size": {"hdf5.meta_block_size"},
    "col_meta_ops": {"hdf5.coll_metadata_reads"},
    "mdc_conf": {"hdf5.mdc_initial_size"},
    "coll_metadata_write": {"hdf5.coll_metadata_writes"},
    "striping_factor": {"mpiio.striping_factor"},
    "striping_unit": {"mpiio.striping_unit"},
    "cb_nodes": {"mpiio.cb_nodes"},
    "cb_buffer_size": {"mpiio.cb_buffer_size"},
}


def test_tunio_space_has_the_parameters_of_paper_002():
    text = _paper("002_595d1be0b897d5fc.txt")
    listed = re.search(r"include (`[^.]*`)\.", text)[1]
    names = re.findall(r"`([a-z_]+)`", listed)
    assert set(names) == set(TUNIO_KNOBS)  # every parameter the paper lists, and only those
    count = int(re.search(r"tune a subset of (\d+) parameters", text)[1])
    s = space.load("tunio")
    knobs = set().union(*(d.knobs() for d in s.dimensions))
    assert knobs == set().union(*TUNIO_KNOBS.values())
    assert len(s.dimensions) == count == 12
    for d in s.dimensions:
        assert len(d.values) >= 2 and len(set(map(json.dumps, d.values))) == len(d.values)


def test_romio_space_sets_cb_nodes_and_the_catalogue_adds_cb_config_list():
    romio = space.load("romio")
    agg = romio.dimension("mpiio.cb_nodes")
    assert agg.values == (1, 2, 4) and agg.knob == "mpiio.cb_nodes"
    assert "mpiio.cb_config_list" not in set().union(*(d.knobs() for d in romio.dimensions))
    requires = catalogue.knobs()["mpiio.cb_nodes"].requires  # the one place the constraint is written
    target, _, template = requires.partition("=")
    for n in agg.values:
        flat = settings.complete(romio.point_settings({"mpiio.cb_nodes": n}))
        assert flat[target] == template.format(per_node=n, value=n)


def test_user_space_and_its_errors(tmp_path):
    good = tmp_path / "s.json"
    good.write_text(
        json.dumps(
            {
                "name": "mine",
                "dimensions": [
                    {"knob": "mpiio.romio_cb_write", "values": ["enable", "disable"]},
                    {
                        "name": "agg",
                        "values": [{"mpiio.cb_nodes": 1}, {"mpiio.cb_nodes": 2, "mpiio.cb_config_list": "*:2"}],
                    },
                    {"knob": "mpiio.my_vendor_hint", "values": ["a", "b"]},
                ],
            }
        )
    )
    s = space.load(str(good))
    assert s.size() == 8 and s.name == "mine"
    bad_cases = [
        ({"dimensions": [{"knob": "hdf5.nope", "values": [1, 2]}]}, "unknown knob"),
        ({"dimensions": [{"knob": "hdf5.sieve_buf_size", "values": [1, "4MB"]}]}, "ambiguous"),
        ({"dimensions": [{"knob": "hdf5.sieve_buf_size", "values": [1]}]}, "at least two"),
        (
            {
                "dimensions": [
                    {"knob": "mpiio.cb_nodes", "values": [1, 2]},
                    {"name": "x", "values": [{"mpiio.cb_nodes": 4}, {"mpiio.cb_nodes": 8}]},
                ]
            },
            "set by both",
        ),
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
    assert settings.complete({"mpiio.cb_nodes": 4}, nodes=1)["mpiio.cb_config_list"] == "*:4"
    assert settings.complete({"mpiio.cb_nodes": 4}, nodes=2)["mpiio.cb_config_list"] == "*:2"
    explicit = {"mpiio.cb_nodes": 4, "mpiio.cb_config_list": "*:1"}
    assert settings.complete(explicit) == explicit  # never overrides the user
    assert settings.complete({"hdf5.alignment": [0, 4096]}) == {"hdf5.alignment": [0, 4096]}


def test_synthetic_optimum_is_exact_on_romio():
    """Brute force over the whole romio space equals the block-wise optimum."""
    s, m = space.load("romio"), synthetic.model("ufs")
    brute = max(
        m.value(s.point_settings(dict(zip([d.name for d in s.dimensions], combo))))
        for combo in itertools.product(*(d.values for d in s.dimensions))
    )
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
        "    return optuna.samplers.RandomSampler(seed=seed)\n"
    )
    monkeypatch.setattr(strategies, "__path__", [*strategies.__path__, str(tmp_path)])
    monkeypatch.setattr(strategies, "_REGISTRY", dict(strategies._REGISTRY))
    monkeypatch.delitem(sys.modules, "iotuner.tune.strategies.annealing", raising=False)
    assert "annealing" in strategies.modules()
    assert "annealing" in strategies.names()
    assert isinstance(strategies.sampler("annealing", space.load("romio"), 1), optuna.samplers.RandomSampler)
    sys.modules.pop("iotuner.tune.strategies.annealing", None)


def test_every_module_in_the_strategies_directory_registers():
    # a strategy is a module, or a package of its own (its code, options and stoppers)
    directory = Path(strategies.__file__).parent
    found = sorted(
        [p.stem for p in directory.glob("*.py") if not p.stem.startswith("_")]
        + [p.parent.name for p in directory.glob("*/__init__.py")]
    )
    assert strategies.modules() == found
    registered_by = {
        s.__module__[len(strategies.__name__) + 1 :].split(".")[0] for s in map(strategies.get, strategies.names())
    }
    assert registered_by == set(found)


def test_ga_elitism_and_valid_children(tmp_path):
    # the GA reads its population from the study's records (the store's views), as the tuner runs it
    s = space.load("romio")
    store, t = make_study(tmp_path, strategy="ga", seed=3, trials=40)
    pop, real, proposed = 8, t.strategy.propose, []

    def spy(ctx):
        point = real(ctx)
        now = ctx.store.results.current_values()
        points = {r.number: s.labels_of(r.settings) for r in ctx.store.trials.completed()}
        proposed.append((len(ctx.store.trials.search_trials()), point, now, points))
        return point

    t.strategy.propose = spy
    t.run()
    elites = 0
    for index, point, now, points in proposed:
        assert set(point) == {d.name for d in s.dimensions}
        assert all(point[d.name] in d.labels for d in s.dimensions)
        if index % pop == 0 and index >= pop:  # the elite slot: the best point so far, as it stands now
            assert point == points[max(now, key=now.get)]
            elites += 1
    assert elites >= 3 and store.trials.trials_run() == 40


def test_two_aggregators_beat_one_on_the_ufs_model():
    m = synthetic.model("ufs")
    one = m.value({"mpiio.romio_cb_write": "enable"})
    one_explicit = m.value({"mpiio.romio_cb_write": "enable", "mpiio.cb_nodes": 1, "mpiio.cb_config_list": "*:1"})
    two = m.value({"mpiio.romio_cb_write": "enable", "mpiio.cb_config_list": "*:2", "mpiio.cb_nodes": 2})
    assert one == one_explicit
    assert two > 3 * one  # two aggregators recover most of the one-aggregator loss
    # cb_nodes alone: the catalogue adds its cb_config_list, as the tuner does for a trial
    assert m.value({"mpiio.romio_cb_write": "enable", "mpiio.cb_nodes": 2}) == two
    # cb_config_list alone: ROMIO uses all the aggregators it allows
    assert m.effective({"mpiio.cb_config_list": "*:2"})["mpiio.cb_nodes"] == 2
    # cb_nodes with a cb_config_list that allows one per node: capped, as ROMIO does
    assert m.effective({"mpiio.cb_nodes": 2, "mpiio.cb_config_list": "*:1"})["mpiio.cb_nodes"] == 1


def test_lustre_model_aggregators_follow_cb_config_list():
    m = synthetic.model("lustre")  # 4 nodes, 128 ranks
    assert m.effective({"mpiio.cb_nodes": 64})["mpiio.cb_nodes"] == 64  # "*:16" on 4 nodes
    assert m.effective({"mpiio.cb_nodes": 64, "mpiio.cb_config_list": "*:2"})["mpiio.cb_nodes"] == 8
    assert m.effective({})["mpiio.cb_nodes"] == 4  # the default, one per node
    # one aggregator per stripe: 64 aggregators on 64 stripes beat the 8 that "*:2" allows
    striped = {"lustre.stripe_count": 64, "lustre.stripe_size": 16 << 20, "mpiio.cb_nodes": 64}
    assert m.value(striped) > m.value({**striped, "mpiio.cb_config_list": "*:2"})


def test_synthetic_objective_follows_the_direction():
    m = synthetic.model("ufs")
    good = {"hdf5.transfer_mode": "independent"}
    bad = {"mpiio.romio_cb_write": "enable"}
    doc = settings.from_flat
    bw = synthetic.SyntheticEvaluator(m, objective.parse("write-bw"), noise=0.0)
    t = synthetic.SyntheticEvaluator(m, objective.parse("io-time"), noise=0.0)
    assert bw.evaluate(doc(good), "a").value > bw.evaluate(doc(bad), "b").value
    assert t.evaluate(doc(good), "a").value < t.evaluate(doc(bad), "b").value  # less time is better
    obj = objective.parse("io-time")
    assert obj.better(t.evaluate(doc(good), "a").value, t.evaluate(doc(bad), "b").value)
    assert t.evaluate(doc(good), "a").value == pytest.approx(synthetic.DATA_MB / m.value(good))


def _signature_of(m, flat, nodes=1):
    from iotuner.tune import evaluate, store

    ev = synthetic.SyntheticEvaluator(m, objective.parse("perf"), noise=0.0)
    reference = evaluate.reference_of(ev.evaluate({"version": 1}, "baseline"))
    doc = settings.from_flat(settings.complete(flat, nodes))
    return store.signature(ev.evaluate(doc, "t").effective, reference, nodes)


def test_signatures_compare_effective_values_with_the_default():
    m = synthetic.model("ufs")  # 1 node, 2 ranks
    default = _signature_of(m, {})
    assert default == "{}"
    # knobs set to the values in effect by default change nothing
    assert _signature_of(m, {"mpiio.romio_cb_write": "automatic", "mpiio.cb_buffer_size": 16 << 20}) == default
    assert _signature_of(m, {"mpiio.cb_nodes": 1}) == default  # cb_nodes 1 with "*:1": the default
    # cb_nodes 4 is capped at the 2 ranks: the same aggregators as cb_nodes 2, whatever cb_config_list says
    assert _signature_of(m, {"mpiio.cb_nodes": 4}) == _signature_of(m, {"mpiio.cb_nodes": 2}) != default
    assert _signature_of(m, {"mpiio.cb_nodes": 2, "mpiio.cb_config_list": "*:1"}) == default  # capped at 1
    assert _signature_of(m, {"mpiio.romio_cb_write": "enable"}) != default


def test_signatures_from_run_reports():
    """The same on what a real run reads back: cb_nodes 4 on 2 ranks is capped at 2 by ROMIO."""
    from iotuner.tune import store

    reference = {"mpiio.cb_nodes": "1", "mpiio.cb_config_list": "*:1", "mpiio.cb_buffer_size": "16777216"}
    four = {"mpiio.cb_nodes": ["2"], "mpiio.cb_config_list": ["*:4"]}
    two = {"mpiio.cb_nodes": ["2"], "mpiio.cb_config_list": ["*:2"]}
    assert store.signature(four, reference) == store.signature(two, reference)
    assert store.signature({"mpiio.cb_buffer_size": ["16777216"]}, reference) == "{}"
    assert store.signature({"hdf5.transfer_mode": ["independent"]}, reference) != "{}"  # default not seen: kept
    # on two nodes, "*:1" allows 2 aggregators: cb_nodes 2 with "*:1" is not "*:2" on one node's terms
    assert store.signature(
        {"mpiio.cb_nodes": ["2"], "mpiio.cb_config_list": ["*:1"]}, reference, nodes=2
    ) == store.signature({"mpiio.cb_nodes": ["2"], "mpiio.cb_config_list": ["*:4"]}, reference, nodes=2)


def test_confirmation_rounds_are_raised_until_a_gain_can_be_significant():
    obj = objective.parse("perf")
    clear = [200.0, 201.5, 203.0, 204.5, 206.0, 207.5]  # every run beats every default run, no ties
    default = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0]
    for k in (1, 3, 10):
        n = noise.rounds_needed(k)
        assert noise.compare(clear[:n], default[:n], obj, comparisons=k).significant
        assert not noise.compare(clear[: n - 1], default[: n - 1], obj, comparisons=k).significant
    assert noise.rounds_needed(3) > 3  # 3 vs 3 can never be significant: the exact p is at least 1/20
    assert noise.smallest_p(3) == pytest.approx(1 / 20)


def test_ga_tournament_of_three_prefers_the_fitter():
    s = space.load("romio")
    ga = strategies.make("ga", s, 0)

    class T:
        def __init__(self, n):
            self.number = n

    pool = [T(n) for n in range(8)]
    fitness = {t.number: float(t.number) for t in pool}  # rank = number: 7 is the fittest
    rng = random.Random(42)
    picks = [ga.parents(pool, rng, lambda t: fitness[t.number]) for _ in range(4000)]
    assert all(fitness[a.number] > fitness[b.number] for a, b in picks)  # the best of three first
    mean = statistics.mean(fitness[p.number] for pair in picks for p in pair)
    # the expectation for the best two of three distinct individuals drawn at random (random parents: 3.5)
    expected = statistics.mean(sorted(c)[-1] + sorted(c)[-2] for c in itertools.combinations(range(8), 3)) / 2
    assert mean == pytest.approx(expected, abs=0.1)
    assert mean > 3.5 + 0.8


def test_ga_mutation_rate():
    s = space.load("romio")
    search = strategies.distributions(s)
    parent = {name: d.choices[0] for name, d in search.items()}
    for rate in (0.0, 0.1, 0.3):
        ga = strategies.make("ga", s, 0, {"mutation": rate})
        rng = random.Random(7)
        genes = changed = 0
        for _ in range(3000):
            child = ga.breed(parent, parent, rng)
            genes += len(child)
            changed += sum(child[n] != parent[n] for n in child)
        assert changed / genes == pytest.approx(rate, abs=0.01)
    # crossover alone takes every gene from one of the parents, about half from each
    other = {name: d.choices[1] for name, d in search.items()}
    ga = strategies.make("ga", s, 0, {"mutation": 0.0})
    rng = random.Random(3)
    from_a = [sum(ga.breed(parent, other, rng)[n] == parent[n] for n in search) for _ in range(2000)]
    assert statistics.mean(from_a) / len(search) == pytest.approx(0.5, abs=0.02)


def test_demo_never_wipes_a_directory_that_is_not_its_output(tmp_path, monkeypatch, capsys):
    from iotuner import cli
    from iotuner.commands import demo as command

    calls = []
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(argv) or 0)  # the tuning itself: not here

    def demo(out):
        return command.main(cli.build_parser(["demo"]).parse_args(["demo", "--out", str(out)]))

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    assert demo(mine) == 2
    assert (mine / "thesis.tex").read_text() == "years of work" and not calls
    assert "not an earlier demo or tune output" in capsys.readouterr().err

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert demo(a_file) == 2
    assert a_file.read_text() == "x"

    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "summary.json").write_text("{}")
    (earlier / "trials.csv").write_text("old")
    assert demo(earlier) == 0
    assert not (earlier / "trials.csv").exists() and (earlier / "baseline.json").exists() and len(calls) == 1

    empty = tmp_path / "empty"
    empty.mkdir()
    assert demo(empty) == 0
    assert demo(tmp_path / "new") == 0
    assert len(calls) == 3


def test_the_calls_clock_leaves_out_the_applications_work_inside_its_phases():
    """With clock calls, a bandwidth is of the time inside the application's I/O calls (the phase's data
    level, the slowest rank's), not of the phase from open to close, which holds the application's work between
    its calls too: a kernel without that work and its application then measure the same thing."""
    mib = 1 << 20
    phase = {
        "data_level": "hdf5",
        "bytes_written": 64 * mib,
        "bytes_read": 0,
        "wall_time_s": 4.0,
        "hdf5": {"write_time_s": 0.5, "read_time_s": 0.0},
        "posix": {"write_time_s": 0.3, "read_time_s": 0.0},
    }
    read = {
        "data_level": "hdf5",
        "bytes_written": 0,
        "bytes_read": 64 * mib,
        "wall_time_s": 1.0,
        "hdf5": {"write_time_s": 0.0, "read_time_s": 0.25},
    }
    rep = Report(
        {
            "phases": [phase, read],
            "totals": {
                "bytes_written": 64 * mib,
                "bytes_read": 64 * mib,
                "write_time_s": 4.0,
                "read_time_s": 1.0,
                "write_bandwidth_mib_s": 16.0,
                "read_bandwidth_mib_s": 64.0,
            },
        }
    )
    calls = objective.Objective("write-bw", "maximize", "MiB/s", clock="calls")
    assert calls.value(rep, None) == pytest.approx(128.0)
    assert objective.parse("write-bw").value(rep, None) == pytest.approx(16.0)
    io = objective.Objective("io-time", "minimize", "s", clock="calls")
    assert io.value(rep, None) == pytest.approx(0.75)
    assert objective.of_spec(cfg.ObjectiveSpec("io-time", "minimize", "s", None, "calls")) == io


def test_an_incomplete_run_report_is_said_once_per_cause():
    """A run whose report is incomplete (MPI_Init unseen, processes spawned) has a value of a part of the job:
    the study's notes say so, once per cause, naming the run that showed it."""
    from types import SimpleNamespace

    from iotuner.tune.evaluate import Measurement
    from iotuner.tune.runs import Runs

    reports = iter(
        [{"incomplete": "the job started 1 process(es) with MPI_Comm_spawn"}, {"incomplete": None}]
        + [{"incomplete": "the job started 1 process(es) with MPI_Comm_spawn"}] * 2
    )
    evaluator = SimpleNamespace(evaluate=lambda doc, label: Measurement(True, 1.0, 0.1, report=next(reports)))
    store = SimpleNamespace(config=SimpleNamespace(baseline={"version": 1}, nodes=1))
    notes: list[str] = []
    runs = Runs(store, evaluator, lambda e: None, notes.append, lambda r, m: None)
    for label in ("default-r1", "default-r2", "t0001-r1", "t0002-r1"):
        runs.measure({"version": 1}, label)
    assert notes == [
        "default-r1's run report is incomplete, so its value measures only what iotuner saw: the job started 1 "
        "process(es) with MPI_Comm_spawn"
    ]
