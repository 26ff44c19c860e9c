"""Every use of Optuna that its public API does not cover, in one place.

The study storage reads and writes Optuna's own tables in a few statements per trial (`study.storage.SqlBackend`),
which needs their SQLAlchemy definitions and the schema version; Optuna keeps both in a private module. Nothing
else in iotuner names a private Optuna name (tests/test_optuna_compat.py checks that, and that the installed Optuna
is one of CHECKED): when a new Optuna release comes, check these against it, run the study tests
(tests/test_tune_store.py, test_tune_study.py, test_tune_protocol.py), and add its version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Optuna releases (major.minor) this module and the study storage were checked against: the study tests pass on each
CHECKED = ("4.0", "4.9", "5.0")


@dataclass(frozen=True)
class Tables:
    """Optuna's tables in an RDB storage (SQLAlchemy Core tables)."""

    trials: Any
    trial_user_attrs: Any
    trial_params: Any
    trial_values: Any
    trial_heartbeats: Any
    studies: Any
    study_user_attrs: Any


def tables() -> Tables:
    from optuna.storages._rdb import models

    return Tables(
        models.TrialModel.__table__,
        models.TrialUserAttributeModel.__table__,
        models.TrialParamModel.__table__,
        models.TrialValueModel.__table__,
        models.TrialHeartbeatModel.__table__,
        models.StudyModel.__table__,
        models.StudyUserAttributeModel.__table__,
    )


def stored_value(value: float) -> tuple[float | None, Any]:
    """An objective value as a row of trial_values stores it: (value, its type; infinities are a type)."""
    from optuna.storages._rdb import models

    return models.TrialValueModel.value_to_stored_repr(value)


def schema_version() -> int:
    """The version of Optuna's schema (table version_info) this Optuna writes."""
    from optuna.storages._rdb import models

    return models.SCHEMA_VERSION


def startup_trials(sampler: Any) -> int:
    """A TPE sampler's random start-up trials (for tests: Optuna has no reader)."""
    return sampler._n_startup_trials
