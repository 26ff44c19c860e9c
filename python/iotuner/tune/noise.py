"""Deciding whether a measured gain is real.

I/O timings here vary 15-35% run to run (docs/machine.md), so the tuner
compares the confirmed winner with the default measured in the same time
window, and claims a gain only when both hold:
- the winner's runs beat the default's: one-sided Mann-Whitney U test at
  p < alpha / comparisons (Bonferroni: the winner is the best of several
  candidates, which favours it by chance);
- the gain exceeds the noise: the relative spread of the default's runs.
On a busy machine a few runs hit by bursts can leave the verdict undecided: one test passes and
the other does not. The confirmation then runs as many rounds again, once (`LOOKS` = 2 looks at
the data), and the level is split between the looks (Bonferroni), so looking twice does not make
a chance gain likelier.
"""

from __future__ import annotations

import functools
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import bootstrap, mannwhitneyu

from .objective import Objective
from .printout import describe_verdict

LOOKS = 2  # the confirmation is judged after its rounds and, when undecided, once more after as many again


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
    # the gain's 95% confidence interval, bootstrapped over both sides' runs (None: too few runs)
    low: float | None = None
    high: float | None = None

    def describe(self, unit_word: str = "") -> str:

        return describe_verdict(asdict(self))


def _p_value(better: Sequence[float], worse: Sequence[float]) -> float:
    """One-sided Mann-Whitney U: the chance that `better` beats `worse` this clearly by luck."""
    if len(better) < 2 or len(worse) < 2:
        return 1.0
    return float(mannwhitneyu(better, worse, alternative="greater", method="auto").pvalue)


def compare(
    candidate: Sequence[float],
    default: Sequence[float],
    objective: Objective,
    alpha: float = 0.05,
    comparisons: int = 1,
) -> Verdict:
    gain = objective.gain(median(candidate), median(default))
    p = _p_value([objective.key(x) for x in candidate], [objective.key(x) for x in default])
    level = alpha / max(1, comparisons)
    noise = relative_spread(default)
    low, high = gain_interval(candidate, default, objective)
    return Verdict(gain, p, noise, p < level and gain - 1 > noise, level, low, high)


CONFIDENCE = 0.95
RESAMPLES = 2000


def gain_interval(
    candidate: Sequence[float], default: Sequence[float], objective: Objective
) -> tuple[float | None, float | None]:
    """The gain's confidence interval: the ratio of the medians, recomputed over resamples of each side's
    runs (a percentile bootstrap; seeded, so a study's verdict reads the same every time). Default runs that
    spread from 15 to 2,600 MiB/s give an interval as wide as they are, so a 40x gain is not quoted as
    if its magnitude were known."""
    if len(candidate) < 2 or len(default) < 2:
        return None, None

    def ratio(c, d, axis=-1):
        mc, md = np.median(c, axis=axis), np.median(d, axis=axis)
        if objective.direction == "maximize":
            return mc / np.where(md > 0, md, np.nan)
        return md / np.where(mc > 0, mc, np.nan)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's on samples of equal values: the interval is then a point
        try:
            res = bootstrap(
                (np.asarray(candidate, float), np.asarray(default, float)),
                ratio,
                vectorized=True,
                paired=False,
                confidence_level=CONFIDENCE,
                n_resamples=RESAMPLES,
                method="percentile",
                rng=np.random.default_rng(0),
            )
        except ValueError:  # degenerate samples
            return None, None
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return None, None
    return low, high


def undecided(v: Verdict) -> bool:
    """Not significant, but not a clear no either: the winner's runs beat the default's (p) by less than the
    default's spread, or its median beats the default's by more than the spread without the runs being
    consistently better. More runs can tell; a burst that hit a few runs weighs less among more."""
    return not v.significant and (v.p_value < v.alpha or v.gain - 1 > v.noise)


@functools.cache
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
