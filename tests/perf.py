"""Performance claims that hold on a busy machine.

A claim is about a ratio: configuration A against B in interleaved pairs (which side runs first alternates,
so a burst or a drift hits both sides of a pair alike), or two clocks of one run. Each sample is one ratio.
The claim is judged on the geometric mean of the ratios with a margin from their measured spread: a
one-sided Student t bound on the logarithms, at `CONFIDENCE` on each side. It holds when the whole interval
lies inside the claimed range and is refuted when the whole interval lies outside it. In between, the noise
is too high to decide with so few samples, and more are taken, up to a bound; at the bound the geometric
mean of all the samples decides (the claim as written, on every sample taken). A claim that holds stops
after `first` samples, so a quiet machine pays little; a burst widens the interval and buys more samples
instead of failing the test. A refutation fails the suite, so it waits for `REFUTE_AFTER` samples: under load
a few ratios can cluster by chance while the spread of the runs is several times theirs (three sampled-time
estimates of 1.15-1.25 in a stress run, where runs of the same load range over 0.68-1.30), and a margin from
three samples does not see that.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from scipy.stats import t as student_t

from conftest import run_job

CONFIDENCE = 0.95  # per side
REFUTE_AFTER = 6  # samples before a refutation is believed (a claim that holds needs `first`)


@dataclass(frozen=True)
class Claim:
    """The ratio lies above `above` and below `below` (either may be None)."""

    above: float | None = None
    below: float | None = None

    def describe(self) -> str:
        if self.above is not None and self.below is not None:
            return f"between {self.above:g} and {self.below:g}"
        return f"above {self.above:g}" if self.above is not None else f"below {self.below:g}"

    def inside(self, x: float) -> bool:
        return (self.above is None or x > self.above) and (self.below is None or x < self.below)


@dataclass
class Judgement:
    claim: Claim
    ratios: list[float] = field(default_factory=list)
    low: float = 0.0  # the interval of the geometric mean
    high: float = math.inf
    estimate: float = math.nan
    state: str = "undecided"  # holds | refuted | undecided (more samples would tell), "... at the bound"

    @property
    def holds(self) -> bool:
        return self.state.startswith("holds")

    def __str__(self) -> str:
        return (
            f"ratio {self.estimate:.3g} (interval {self.low:.3g}-{self.high:.3g} at {CONFIDENCE:.0%} per side, "
            f"{len(self.ratios)} samples: {', '.join(f'{r:.3g}' for r in self.ratios)}), claimed "
            f"{self.claim.describe()}: {self.state}"
        )


def judge(ratios: list[float], claim: Claim, confidence: float = CONFIDENCE) -> Judgement:
    """The claim on these ratios: the interval of their geometric mean, from the spread of their logarithms."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    margin = math.inf
    if len(logs) >= 2:
        margin = student_t.ppf(confidence, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    low, high = math.exp(mean - margin), math.exp(mean + margin)
    if claim.inside(low) and claim.inside(high):
        state = "holds"
    elif (claim.above is not None and high <= claim.above) or (claim.below is not None and low >= claim.below):
        state = "refuted"
    else:
        state = "undecided"
    return Judgement(claim, list(ratios), low, high, math.exp(mean), state)


def decide(
    sample: Callable[[int], Mapping[str, float]], claims: Mapping[str, Claim], *, first: int = 3, most: int = 15
) -> dict[str, Judgement]:
    """Calls sample(i) for i = 0, 1, ... (each call one interleaved pair, giving a ratio per claim) until every
    claim holds or one is refuted, taking at least `first` samples (`REFUTE_AFTER` to refute) and at most
    `most`. At `most`, an undecided claim holds if its geometric mean lies inside the claimed range."""
    ratios: dict[str, list[float]] = {name: [] for name in claims}
    judged: dict[str, Judgement] = {}
    for i in range(most):
        got = sample(i)
        for name in claims:
            ratios[name].append(got[name])
        if i + 1 < first:
            continue
        judged = {name: judge(ratios[name], c) for name, c in claims.items()}
        if all(j.state == "holds" for j in judged.values()):
            break
        if any(j.state == "refuted" for j in judged.values()) and i + 1 >= min(REFUTE_AFTER, most):
            break
    else:
        for j in judged.values():
            if j.state == "undecided":
                j.state = "holds at the bound" if j.claim.inside(j.estimate) else "refuted at the bound"
    for name, j in judged.items():
        print(f"perf: {name}: {j}", file=sys.stderr)  # shown with the test's output when it fails
    return judged


def assert_claims(
    sample: Callable[[int], Mapping[str, float]], claims: Mapping[str, Claim], **kw
) -> dict[str, Judgement]:
    judged = decide(sample, claims, **kw)
    for name, j in judged.items():
        assert j.holds, f"{name}: {j}"
    return judged


def assert_ratio(sample: Callable[[int], float], claim: Claim, **kw) -> Judgement:
    """One claim on one ratio per sample."""
    return assert_claims(lambda i: {"ratio": sample(i)}, {"ratio": claim}, **kw)["ratio"]


def interleaved(a: Callable[[int], float], b: Callable[[int], float]) -> Callable[[int], float]:
    """A sample of a(i) / b(i), measured as a pair: a first in even pairs, b first in odd ones."""

    def pair(i: int) -> float:
        if i % 2 == 0:
            x = a(i)
            return x / b(i)
        y = b(i)
        return a(i) / y

    return pair


def write_bandwidth(command: list, config: Path, report: Path) -> float:
    """The write bandwidth (MiB/s) of one run of `command` (with its launcher) under a settings file."""
    result = run_job(command, config=config, report=report)
    assert result.ok and result.report is not None, result.stderr
    return result.report.totals["write_bandwidth_mib_s"]


def settings_ratio(better: Path, worse: Path, command: list, out: Path) -> Callable[[int], float]:
    """Interleaved pairs of one command under two settings files: the write bandwidth under `better` over the
    one under `worse`. Run reports go to out/STEM-I.json."""

    def side(config: Path) -> Callable[[int], float]:
        return lambda i: write_bandwidth(command, config, out / f"{config.stem}-{i}.json")

    return interleaved(side(better), side(worse))
