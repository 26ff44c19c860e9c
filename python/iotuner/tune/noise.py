"""Deciding whether a measured gain is real.

I/O timings here vary 15-35% run to run (docs/machine.md), so the tuner
compares the confirmed winner with the default measured in the same time
window, and claims a gain only when both hold:
- the winner's runs beat the default's: one-sided Mann-Whitney U test at
  p < alpha / comparisons (Bonferroni: the winner is the best of several
  candidates, which favours it by chance);
- the gain exceeds the noise: the relative spread of the default's runs.
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import asdict, dataclass
from typing import Sequence

from scipy.stats import mannwhitneyu

from .objective import Objective


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def relative_spread(xs: Sequence[float]) -> float:
    """Robust coefficient of variation: 1.4826 x median absolute deviation / median."""
    if len(xs) < 2:
        return 0.0
    m = statistics.median(xs)
    mad = statistics.median(abs(x - m) for x in xs)
    return 1.4826 * mad / abs(m) if m else 0.0


@dataclass(frozen=True)
class Verdict:
    gain: float  # times better than the default (>1 is better)
    p_value: float
    noise: float  # relative spread of the default's runs
    significant: bool
    alpha: float

    def describe(self, unit_word: str = "") -> str:
        from .printout import describe_verdict
        return describe_verdict(asdict(self))


def _p_value(better: Sequence[float], worse: Sequence[float]) -> float:
    """One-sided Mann-Whitney U: the chance that `better` beats `worse` this clearly by luck."""
    if len(better) < 2 or len(worse) < 2:
        return 1.0
    return float(mannwhitneyu(better, worse, alternative="greater", method="auto").pvalue)


def compare(candidate: Sequence[float], default: Sequence[float], objective: Objective, alpha: float = 0.05,
            comparisons: int = 1) -> Verdict:
    gain = objective.gain(median(candidate), median(default))
    p = _p_value([objective.key(x) for x in candidate], [objective.key(x) for x in default])
    level = alpha / max(1, comparisons)
    noise = relative_spread(default)
    return Verdict(gain, p, noise, p < level and gain - 1 > noise, level)


@functools.lru_cache(maxsize=None)
def smallest_p(rounds: int) -> float:
    """The smallest p-value `compare` can give with this many runs on each side: every run
    of the candidate beats every run of the default, no ties."""
    return _p_value([float(rounds + i) for i in range(rounds)], [float(i) for i in range(rounds)])


def rounds_needed(comparisons: int, alpha: float = 0.05, most: int = 50) -> int:
    """The fewest confirmation rounds with which a gain over `comparisons` candidates can be
    significant at all (3 rounds never can: the exact test's smallest p is 1/20 = 0.05)."""
    level = alpha / max(1, comparisons)
    for n in range(2, most + 1):
        if smallest_p(n) < level:
            return n
    return most
