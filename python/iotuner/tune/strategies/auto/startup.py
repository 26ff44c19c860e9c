"""auto's TPE, made when it first samples: its random start-up count adds the runs auto makes before the search,
which are known only once the search begins (Optuna sets the count when a sampler is made, and has no setter)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import optuna


class LateTPE(optuna.samplers.BaseSampler):
    """A multivariate TPE (with constant liar) made at its first use, with `startup()` start-up trials."""

    def __init__(self, seed: int, startup: Callable[[], int]):
        self.seed, self.startup = seed, startup
        self._tpe: optuna.samplers.TPESampler | None = None

    @property
    def tpe(self) -> optuna.samplers.TPESampler:
        if self._tpe is None:
            self._tpe = optuna.samplers.TPESampler(
                seed=self.seed, multivariate=True, constant_liar=True, n_startup_trials=self.startup()
            )
        return self._tpe

    def infer_relative_search_space(self, study, trial) -> dict[str, Any]:
        return self.tpe.infer_relative_search_space(study, trial)

    def sample_relative(self, study, trial, search_space) -> dict[str, Any]:
        return self.tpe.sample_relative(study, trial, search_space)

    def sample_independent(self, study, trial, param_name, param_distribution) -> Any:
        return self.tpe.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study, trial) -> None:
        self.tpe.before_trial(study, trial)

    def after_trial(self, study, trial, state, values: Sequence[float] | None) -> None:
        self.tpe.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self.tpe.reseed_rng()
