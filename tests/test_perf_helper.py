"""The shared judge of performance claims (tests/perf.py), on given sequences of ratios: no timing."""

import pytest

from perf import Claim, assert_ratio, decide, interleaved, judge


def feed(values):
    return lambda i: {"ratio": values[i]}


def test_a_clear_result_stops_after_the_first_samples():
    judged = decide(feed([5.0, 5.5, 6.0] + [1.0] * 20), {"ratio": Claim(above=3)})["ratio"]
    assert judged.state == "holds" and len(judged.ratios) == 3 and 3 < judged.low < 5 < 6 < judged.high


def test_a_burst_buys_more_samples_instead_of_failing():
    # one pair hit by a burst (1.2 where the others are 5-6): undecided at 3, decided later
    values = [5.0, 1.2, 5.5, 6.0, 5.2, 5.8, 5.4, 5.6, 5.1, 5.9, 5.3]
    judged = decide(feed(values), {"ratio": Claim(above=3)}, most=11)["ratio"]
    assert judged.state == "holds" and len(judged.ratios) > 3
    assert judge(values[:3], Claim(above=3)).state == "undecided"


def test_a_false_claim_is_refuted_not_waited_out():
    judged = decide(feed([1.0, 1.1, 0.95, 1.05, 1.0, 0.9] + [9.0] * 20), {"ratio": Claim(above=3)})["ratio"]
    assert judged.state == "refuted" and len(judged.ratios) == 6


def test_a_refutation_waits_for_more_samples_than_a_claim_that_holds():
    """Three ratios that cluster by chance above the claimed range (a stress run's sampled-time estimates) are
    refuted by their own spread; the next samples show the runs' real spread, and the claim holds."""
    values = [1.15, 1.17, 1.25, 0.68, 1.30, 0.75, 1.06, 0.74, 0.93, 1.0, 0.96, 0.99, 0.95, 1.02, 0.97]
    assert judge(values[:3], Claim(above=0.5, below=1.1)).state == "refuted"
    judged = decide(feed(values), {"ratio": Claim(above=0.5, below=1.1)}, most=15)["ratio"]
    assert judged.holds and len(judged.ratios) > 6


def test_at_the_bound_the_geometric_mean_decides():
    noisy = [4.0, 1.5, 6.0, 2.0, 5.0, 1.8]  # geometric mean 2.99: too noisy to decide, and under 3
    judged = decide(feed(noisy), {"ratio": Claim(above=3)}, most=6)["ratio"]
    assert judged.state == "refuted at the bound" and len(judged.ratios) == 6
    judged = decide(feed([x * 1.1 for x in noisy]), {"ratio": Claim(above=3)}, most=6)["ratio"]
    assert judged.state == "holds at the bound"
    with pytest.raises(AssertionError, match="refuted at the bound"):
        assert_ratio(lambda i: noisy[i], Claim(above=3), most=6)


def test_a_range_holds_only_when_the_whole_interval_is_inside():
    assert judge([0.98, 1.02, 1.0, 1.01], Claim(above=0.9, below=1.1)).state == "holds"
    assert judge([0.7, 1.3, 1.0], Claim(above=0.9, below=1.1)).state == "undecided"
    assert judge([1.5, 1.6, 1.55], Claim(above=0.9, below=1.1)).state == "refuted"
    assert judge([0.5, 0.52, 0.49], Claim(below=1.1)).state == "holds"


def test_several_claims_go_on_until_each_is_decided():
    values = [{"a": 5.0, "b": 1.0 + d} for d in (0.3, -0.3, 0.2, -0.2, 0.05, -0.05, 0.0, 0.01, -0.01, 0.0)]
    judged = decide(lambda i: values[i], {"a": Claim(above=3), "b": Claim(above=0.6, below=1.6)}, most=10)
    assert judged["a"].holds and judged["b"].holds and len(judged["a"].ratios) == len(judged["b"].ratios) > 3


def test_interleaved_pairs_alternate_which_side_runs_first():
    ran = []

    def side(name, value):
        def run(i):
            ran.append((i, name))
            return value

        return run

    pair = interleaved(side("a", 6.0), side("b", 2.0))
    assert [pair(i) for i in range(3)] == [3.0, 3.0, 3.0]
    assert ran == [(0, "a"), (0, "b"), (1, "b"), (1, "a"), (2, "a"), (2, "b")]
