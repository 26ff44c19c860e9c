"""A Gaussian process over the points of a categorical space, around a prior mean, and expected improvement.

Points are one-hot encoded (each dimension's values scaled so that two points differing in one dimension are
at distance 1), so the squared-exponential kernel is a function of how many dimensions differ. The process
models what the prior does not explain: y = a + b * prior(x) + f(x), with a and b fitted by least squares on
the observations (b kept between 0 and 2: a prior that ranks backwards is ignored, not inverted), and f a
zero-mean process whose scale, length and noise are fitted by marginal likelihood (scikit-learn). Values y
are on the log scale of the objective, oriented so that higher is better.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from ....lazy import lazy

np = lazy("numpy")


def encode(space, points: list[dict[str, str]]):
    """One-hot rows of points ({dimension: label}); a dimension's block is scaled by 1/sqrt(2), so points that
    differ in one dimension are at Euclidean distance 1."""
    offsets, width = {}, 0
    for d in space.dimensions:
        offsets[d.name] = (width, {label: i for i, label in enumerate(d.labels)})
        width += len(d.labels)
    X = np.zeros((len(points), width))
    for row, p in enumerate(points):
        for name, (start, index) in offsets.items():
            X[row, start + index[p[name]]] = 1 / math.sqrt(2)
    return X


@dataclass
class Posterior:
    mean: "np.ndarray"
    std: "np.ndarray"


def posterior(X_obs, y_obs, noise_obs, prior_obs, X_all, prior_all, seed: int) -> Posterior:
    """The process's mean and standard deviation at X_all, given observations (noise_obs: each observation's
    own variance on top of the fitted noise, larger for what other studies measured)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    y_obs, prior_obs, prior_all = np.asarray(y_obs, float), np.asarray(prior_obs, float), np.asarray(prior_all, float)
    a, b = _trend(y_obs, prior_obs)
    resid = y_obs - (a + b * prior_obs)
    mean_all = a + b * prior_all
    scale = max(float(np.std(y_obs)) if len(y_obs) > 1 else 0.0, 0.1)
    if len(y_obs) < 2:  # nothing to fit a length or a noise to: the prior, with the spread of one unknown point
        return Posterior(mean_all + (resid.mean() if len(resid) else 0.0), np.full(len(prior_all), scale))
    kernel = (ConstantKernel(scale ** 2, (1e-4, 1e2)) * RBF(1.0, (0.3, 10.0))
              + WhiteKernel(0.01 * scale ** 2, (1e-6, scale ** 2)))
    gp = GaussianProcessRegressor(kernel, alpha=np.asarray(noise_obs, float) + 1e-9, normalize_y=False,
                                  n_restarts_optimizer=2, random_state=seed)
    with warnings.catch_warnings():  # a bound reached (a flat or a noiseless landscape) is an answer, not a fault
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp.fit(X_obs, resid)
    mu, sd = gp.predict(X_all, return_std=True)
    return Posterior(mean_all + mu, sd)


def _trend(y, prior) -> tuple[float, float]:
    """y ~ a + b * prior, least squares, b in [0, 2]; with fewer than 3 points, b = 1 (the prior as it is)."""
    if len(y) == 0:
        return 0.0, 1.0
    if len(y) < 3 or float(np.var(prior)) < 1e-12:
        return float(np.mean(y - prior)), 1.0
    b = float(np.clip(np.cov(prior, y, bias=True)[0, 1] / np.var(prior), 0.0, 2.0))
    return float(np.mean(y - b * prior)), b


def expected_improvement(post: Posterior, best: float, xi: float = 0.01):
    """EI of each point over the best value seen (higher is better)."""
    from scipy.stats import norm
    sd = np.maximum(post.std, 1e-9)
    z = (post.mean - best - xi) / sd
    return (post.mean - best - xi) * norm.cdf(z) + sd * norm.pdf(z)
