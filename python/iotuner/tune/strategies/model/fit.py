"""Forward selection of basis terms, with the model's size chosen by cross-validation.

The path: starting from the intercept, the candidate that most reduces the
residual sum of squares enters, one at a time, and every step refits all
coefficients (forward stepwise regression). Then the path is pruned
backwards: the term whose removal costs least leaves, one at a time. Of the
two subsets of each size the one that fits better is kept (at equal size
every criterion prefers it): greedy forward selection alone keeps a term that
stood in for others before they entered.

The size: K-fold cross-validation along the path, with the selection run
again inside every fold (selecting on all the data and then cross-validating
would grade the selection on points it saw), and the one-standard-error rule
in its paired form: the smallest model whose held-out errors exceed the best
model's by less than one standard error of the point-by-point differences.
The usual unpaired rule (the standard error of the folds' errors) keeps too
few terms here: a rare, very slow configuration (one aggregator under
collective buffering) that no model predicts makes one fold's error, and so
the standard error, large whatever the model; paired, it cancels out.
Information criteria (AIC, BIC) assume independent Gaussian errors of
constant variance and a fixed set of models; I/O times have multiplicative,
heavy-tailed noise and the candidates outnumber the training points, so both
tend to keep spurious terms. The held-out error measures what the model is
for: predicting configurations it has not seen.

The noise of I/O times is multiplicative (a run disturbed by other jobs is
some percent slower), so errors are relative: the time is fitted by weighted
least squares with weights 1/t^2, and the log of the time by ordinary least
squares. The response is the time (the paper's) or its logarithm, whichever
predicts held-out points better: times add up where costs add up (latency
plus size over bandwidth, the paper's Eq. 1-3), and multiply where knobs
scale each other (collective buffering through one aggregator makes
everything slower).

Least squares inside the search is LAPACK's (`scipy.linalg.lstsq`, many
right-hand sides at once); the reported model is fitted by scikit-learn's
`LinearRegression`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.linalg import lstsq
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold

from .basis import Term, matrix
from .fitted import RESPONSES, FitError, Model

COLLINEAR = 1e-8  # a candidate whose residual keeps less than this share of its norm adds nothing new


# ---- least squares on whitened rows: rows scaled by sqrt(weight), the intercept a column of its own ----


def _residuals(S: np.ndarray, targets: np.ndarray) -> np.ndarray:
    coef = lstsq(S, targets, lapack_driver="gelsy")[0]
    return targets - S @ coef


def _rss(S: np.ndarray, u: np.ndarray) -> float:
    r = _residuals(S, u)
    return float(r @ r)


def forward_path(one: np.ndarray, X: np.ndarray, u: np.ndarray, steps: int) -> list[int]:
    """The columns of X in the order forward stepwise regression adds them (up to `steps`); `one` is the
    intercept's column, always in."""
    selected: list[int] = []
    norms0 = (X**2).sum(axis=0)
    both = np.column_stack([u, X])
    total = _rss(one[:, None], u)
    for _ in range(steps):
        res = _residuals(np.column_stack([one, X[:, selected]]), both)
        r, Xt = res[:, 0], res[:, 1:]
        if float(r @ r) <= 1e-24 * max(total, 1e-300):
            break  # the response is fitted exactly
        norms = (Xt**2).sum(axis=0)
        ok = norms > COLLINEAR * np.maximum(norms0, 1e-300)
        ok[selected] = False
        if not ok.any():
            break
        gain = np.where(ok, (r @ Xt) ** 2 / np.where(ok, norms, 1.0), -1.0)  # the RSS each one would remove
        selected.append(int(np.argmax(gain)))
    return selected


def backward_path(one: np.ndarray, X: np.ndarray, u: np.ndarray, start: list[int]) -> list[list[int]]:
    """From the given terms, the one whose removal raises the residual sum of squares least leaves, one at a
    time: the subsets of every size from one up (index: size - 1)."""
    current = list(start)
    out = [list(current)]
    while len(current) > 1:
        rss = [_rss(np.column_stack([one, X[:, [c for c in current if c != drop]]]), u) for drop in current]
        current = [c for c in current if c != current[int(np.argmin(rss))]]
        out.append(list(current))
    return out[::-1]


def stepwise(one: np.ndarray, X: np.ndarray, u: np.ndarray, steps: int) -> list[list[int]]:
    """The selected columns for every model size 0, 1, ...: of the forward path's prefix and the backward
    pruning's subset of that size, the one that fits better."""
    forward = forward_path(one, X, u, steps)
    if not forward:
        return [[]]
    backward = backward_path(one, X, u, forward)
    out: list[list[int]] = [[]]
    for size in range(1, len(forward) + 1):
        f, b = forward[:size], backward[size - 1]
        fit = lambda cols: _rss(np.column_stack([one, X[:, cols]]), u)  # noqa: E731
        out.append(b if fit(b) < fit(f) else f)
    return out


class _Whitened:
    """Rows scaled by sqrt(weight) and columns to unit norm (selection is scale-free; this keeps LAPACK
    well conditioned when c f / a and 1 / s differ by ten orders of magnitude)."""

    def __init__(self, B: np.ndarray, y: np.ndarray, w: np.ndarray):
        sw = np.sqrt(w)
        Z = B * sw[:, None]
        self.scale = np.sqrt((Z**2).sum(axis=0))
        self.scale[self.scale == 0] = 1.0
        self.X, self.one, self.u = Z / self.scale, sw, y * sw

    def coefficients(self, cols: list[int]) -> tuple[float, np.ndarray]:
        """(intercept, coefficients of B's columns) of the least-squares fit on cols."""
        coef = lstsq(np.column_stack([self.one, self.X[:, cols]]), self.u, lapack_driver="gelsy")[0]
        return float(coef[0]), coef[1:] / self.scale[cols]


def _prepare(time: np.ndarray, response: str) -> tuple[np.ndarray, np.ndarray]:
    """(response values, weights): relative errors either way."""
    if response == "log-time":
        return np.log(time), np.ones_like(time)
    return time, 1.0 / time**2


def _cross_validate(
    B: np.ndarray, y: np.ndarray, w: np.ndarray, max_terms: int, folds: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Held-out predictions for every model size (selection redone in each fold): (n, max_terms + 1), and
    each point's fold."""
    n = len(y)
    oof = np.full((n, max_terms + 1), np.nan)
    fold_of = np.empty(n, dtype=int)
    for i, (train, test) in enumerate(KFold(n_splits=folds, shuffle=True, random_state=seed).split(B)):
        fold_of[test] = i
        wh = _Whitened(B[train], y[train], w[train])
        subsets = stepwise(wh.one, wh.X, wh.u, max(0, min(max_terms, len(train) - 2)))
        for size in range(max_terms + 1):
            cols = subsets[min(size, len(subsets) - 1)]
            b0, b = wh.coefficients(cols)
            oof[test, size] = b0 + B[test][:, cols] @ b
    return oof, fold_of


def _choose(errors: np.ndarray) -> int:
    """The model size: the smallest whose held-out errors (one row per point, one column per size) are
    within one standard error of the best size's, the standard error of their paired differences
    (a configuration no model predicts adds the same error to every size, and cancels out)."""
    n = errors.shape[0]
    mean = errors.mean(axis=0)
    best = int(np.nanargmin(mean))
    for size in range(best + 1):
        d = errors[:, size] - errors[:, best]
        se = d.std(ddof=1) / np.sqrt(n) if n > 1 else 0.0
        if d.mean() <= se + 1e-12:  # 1e-12: rounding, not error
            return size
    return best


def select(
    table: Mapping[str, np.ndarray],
    time: Sequence[float],
    candidates: Sequence[Term],
    *,
    responses: Sequence[str] = RESPONSES,
    max_terms: int = 15,
    folds: int = 5,
    seed: int = 0,
    legend: Mapping[str, str] | None = None,
) -> Model:
    """Fits the model of `time` (one per row of `table`, positive) over the candidate terms."""
    t = np.asarray(time, dtype=float)
    n = len(t)
    if n < 4:
        raise FitError(f"{n} measured points are too few to fit a model (at least 4)")
    if np.any(~np.isfinite(t)) or np.any(t <= 0):
        raise FitError("the times to fit must be positive numbers")
    B = matrix(candidates, table)
    finite = np.all(np.isfinite(B), axis=0)
    terms = [c for c, ok in zip(candidates, finite) if ok]
    B = B[:, finite]
    k = min(folds, n)
    max_terms = max(0, min(max_terms, n - 3, len(terms)))
    best: tuple[float, str, int] | None = None
    for response in responses:
        y, w = _prepare(t, response)
        oof, fold_of = _cross_validate(B, y, w, max_terms, k, seed)
        sq = w[:, None] * (oof - y[:, None]) ** 2  # squared relative error, either response
        preds = np.exp(oof) if response == "log-time" else oof
        size = _choose(sq)
        pred = preds[:, size]
        err = float(np.mean(np.abs(pred - t) / t))
        if best is None or err < best[0]:
            best = (err, response, size)
    err, response, size = best
    y, w = _prepare(t, response)
    wh = _Whitened(B, y, w)
    subsets = stepwise(wh.one, wh.X, wh.u, max_terms)  # as in every fold: the size picks one of its subsets
    path = subsets[min(size, len(subsets) - 1)]
    if path:
        reg = LinearRegression().fit(B[:, path], y, sample_weight=w)
        intercept, coefs = float(reg.intercept_), [float(c) for c in reg.coef_]
    else:
        intercept, coefs = float(np.average(y, weights=w)), []
    model = Model([terms[j] for j in path], intercept, coefs, response, None, err, n, len(terms), dict(legend or {}))
    fitted = model.predict(table)
    model.r2 = float(1 - np.sum((fitted - t) ** 2) / np.sum((t - t.mean()) ** 2)) if np.ptp(t) > 0 else 1.0
    return model
