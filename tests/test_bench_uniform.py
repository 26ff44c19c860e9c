"""bench/strategies.py's yardstick: the exact distribution of uniform sampling without repeats."""

import importlib.util
import random
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "strategies.py"


def load():
    spec = importlib.util.spec_from_file_location("bench_strategies", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_uniform_within_matches_sampling_without_repeats(capsys):
    bench = load()
    rng = random.Random(1)
    points, good, draws = 60, 3, 20000
    firsts = []
    for _ in range(draws):
        order = rng.sample(range(points), points)
        firsts.append(next(i + 1 for i, p in enumerate(order) if p < good))
    for t in (1, 5, 15, 30, 58):
        simulated = sum(f <= t for f in firsts) / draws
        assert abs(bench.uniform_within(t, points, good) - simulated) < 0.015, t
    assert bench.uniform_within(points - good + 1, points, good) == 1.0
    # counts drawn from uniform sampling pass the sign test; a strategy that finds a target point at once does not
    bench.uniform_against({"blind": firsts[:60], "sharp": [1] * 60}, points, good)
    lines = {
        line.split()[0]: float(line.split("p = ")[1]) for line in capsys.readouterr().out.splitlines() if "p = " in line
    }
    assert lines["blind"] > 0.01 and lines["sharp"] < 1e-6


class _Point:
    def __init__(self, runs):
        self.runs = runs


class _Recording:
    """Runs are the objective's values themselves."""

    def __init__(self, points):
        self.points = points

    def value(self, run, objective):
        return run


def _target(bench, points):
    from iotuner.tune import objective

    tgt = bench.Target.__new__(bench.Target)
    tgt.rec, tgt.obj, tgt.share = _Recording(points), objective.parse("perf"), 0.95
    return tgt


def test_split_half_tells_a_resolved_target_from_a_noise_winner():
    bench = load()
    rng = random.Random(3)
    # one point twice as fast as 99 others, 6 runs each with 10% noise: both halves find it
    clear = [_Point([rng.gauss(2000 if i == 0 else 1000, 100) for _ in range(6)]) for i in range(100)]
    odd, even, both = _target(bench, clear).split_half()
    assert (odd, even, both) == (1, 1, 1)
    # 100 points alike, 3 runs each with 20% noise: which ones look best is noise, and the halves disagree
    plateau = [_Point([rng.gauss(1000, 200) for _ in range(3)]) for _ in range(100)]
    odd, even, both = _target(bench, plateau).split_half()
    assert both < min(odd, even)
