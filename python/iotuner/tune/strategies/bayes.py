"""Bayesian optimization with Optuna's multivariate TPE.

TPE handles categorical dimensions natively and models the joint density of
good points (multivariate), which matters where knobs interact (cb_nodes
with cb_config_list, stripe size with cb_buffer_size)."""

from ...lazy import lazy
from . import register

optuna = lazy("optuna")


def startup_trials(space) -> int:
    """TPE's random start-up trials unless told: two per dimension, 5 to 10."""
    return max(5, min(10, 2 * len(space.dimensions)))


@register("bayes", "Bayesian optimization (Optuna's multivariate TPE)")
def factory(space, seed, options):
    startup = int(options.get("startup_trials", startup_trials(space)))
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=startup)
