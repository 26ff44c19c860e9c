"""Persistent studies on Optuna storage (SQLite by default, any SQLAlchemy URL).

Everything a study needs to continue is in the storage: the tuning
configuration, every trial with its settings, runs and effective-settings
signature, the baseline runs and the confirmation rounds. A tuner killed at
any moment resumes from it: completed trials are kept and never run again,
and a trial that was running is run again under a new number.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from . import strategies
from .space import SearchSpace

CONFIG_KEY = "iotuner"
CONFIG_VERSION = 2  # 2: signatures relative to the default's effective settings

optuna.logging.set_verbosity(optuna.logging.WARNING)
logging.getLogger("alembic").setLevel(logging.WARNING)


class StudyError(RuntimeError):
    pass


def canonical(flat: dict[str, Any]) -> str:
    return json.dumps(flat, sort_keys=True)


@dataclass
class Pool:
    """All runs of one effective configuration: trials that share it share its result."""
    signature: str
    samples: list[float] = field(default_factory=list)
    first_trial: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)


class StudyStore:
    def __init__(self, study: optuna.Study, config: dict):
        self.study, self.config = study, config
        self.pools: dict[str, Pool] = {}
        self.requested: dict[str, tuple[int, str]] = {}  # requested settings -> (first trial, signature)
        self.failed: dict[str, int] = {}  # requested settings that failed -> trial
        self.interrupted: list[int] = []  # trials a killed tuner left running (found on resume)
        self._rebuild()

    # ---- opening ----

    @classmethod
    def create(cls, storage, name: str, config: dict, space: SearchSpace) -> "StudyStore":
        """storage: an SQLAlchemy URL, or an Optuna storage object (in-memory for benchmarks)."""
        if isinstance(storage, str) and name in _study_names(storage):
            raise StudyError(f"study '{name}' already exists in {storage}: add --resume to continue it, "
                             f"or choose another --study name")
        config = {**config, "version": CONFIG_VERSION, "created": dt.datetime.now(dt.timezone.utc).isoformat()}
        sampler = strategies.sampler(config["strategy"], space, config["seed"], config.get("strategy_options"))
        study = optuna.create_study(storage=storage, study_name=name, direction=config["objective"]["direction"],
                                    sampler=sampler)
        study.set_user_attr(CONFIG_KEY, config)
        study.set_user_attr("baseline_runs", [])
        study.set_user_attr("tuning_clock_s", 0.0)
        return cls(study, config)

    @classmethod
    def resume(cls, storage: str, name: str, space_loader) -> "StudyStore":
        if name not in _study_names(storage):
            raise StudyError(f"no study '{name}' in {storage} to resume")
        study = optuna.load_study(storage=storage, study_name=name)
        config = study.user_attrs.get(CONFIG_KEY)
        if not isinstance(config, dict) or config.get("version") != CONFIG_VERSION:
            raise StudyError(f"study '{name}' was not made by this iotuner (no usable configuration)")
        space = space_loader(config["space"])
        study.sampler = strategies.sampler(config["strategy"], space, config["seed"], config.get("strategy_options"))
        store = cls(study, config)
        store.interrupted = store.recover_interrupted()
        return store

    def recover_interrupted(self) -> list[int]:
        """Trials left running by a killed tuner: marked failed, and queued to run again."""
        numbers = []
        for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            self.study._storage.set_trial_user_attr(t._trial_id, "error", "interrupted: the tuner was stopped")
            self.study._storage.set_trial_user_attr(t._trial_id, "interrupted", True)
            self.study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
            if t.params:
                self.study.enqueue_trial(t.params, skip_if_exists=False)
            numbers.append(t.number)
        return numbers

    # ---- state derived from the trials ----

    def _rebuild(self) -> None:
        default = self.default_signatures()
        for t in self.search_trials():
            attrs = t.user_attrs
            if t.state == TrialState.FAIL and "settings" in attrs and attrs.get("cost_runs") \
                    and not attrs.get("interrupted"):
                self.failed.setdefault(canonical(attrs["settings"]), t.number)
            if t.state != TrialState.COMPLETE:
                continue
            sig = attrs.get("signature")
            if sig is None:
                continue
            self.requested.setdefault(canonical(attrs.get("settings", {})), (t.number, sig))
            if sig in default:  # the default settings in effect: its runs are baseline runs
                continue
            pool = self.pools.setdefault(sig, Pool(sig, first_trial=t.number, settings=attrs.get("settings", {})))
            pool.samples.extend(attrs.get("runs", []))

    def search_trials(self) -> list[FrozenTrial]:
        return self.study.get_trials(deepcopy=False)

    def completed(self) -> list[FrozenTrial]:
        return [t for t in self.search_trials() if t.state == TrialState.COMPLETE]

    def trials_run(self) -> int:
        """Finished trials that cost a run: the trial budget counts these. A re-proposed
        point costs none, and an interrupted trial is queued again instead."""
        return sum(1 for t in self.search_trials()
                   if t.state in (TrialState.COMPLETE, TrialState.FAIL) and t.user_attrs.get("cost_runs", 0) > 0
                   and not t.user_attrs.get("interrupted"))

    # ---- study-level records ----

    def set_config(self, config: dict) -> None:
        """Persists a changed configuration (a budget given on resume)."""
        self.config = config
        self.study.set_user_attr(CONFIG_KEY, config)

    @property
    def reference(self) -> dict[str, str] | None:
        """The default's effective settings, from its first run: signatures are relative to these."""
        return self.study.user_attrs.get("reference")

    def set_reference(self, reference: dict[str, str]) -> None:
        self.study.set_user_attr("reference", reference)

    def default_signatures(self) -> set[str]:
        return {r["signature"] for r in self.baseline_runs() if r.get("signature") is not None}

    @property
    def clock(self) -> float:
        return float(self.study.user_attrs.get("tuning_clock_s", 0.0))

    def set_clock(self, seconds: float) -> None:
        self.study.set_user_attr("tuning_clock_s", seconds)

    def baseline_runs(self) -> list[dict]:
        return list(self.study.user_attrs.get("baseline_runs", []))

    def add_baseline_run(self, value: float, at: float, signature: str | None, trial: int | None = None) -> None:
        """A run of the default settings: a baseline run, or a trial whose settings took effect as the default's."""
        runs = self.baseline_runs()
        runs.append({"value": value, "at_s": at, "signature": signature, **({"trial": trial} if trial is not None
                                                                            else {})})
        self.study.set_user_attr("baseline_runs", runs)

    def confirmation(self) -> dict | None:
        return self.study.user_attrs.get("confirmation")

    def set_confirmation(self, record: dict | None) -> None:
        self.study.set_user_attr("confirmation", record)

    def superseded_confirmations(self) -> list[dict]:
        """Confirmation rounds of earlier runs of the study, redone since because the search went on."""
        return list(self.study.user_attrs.get("superseded_confirmations", []))

    def supersede_confirmation(self) -> None:
        record = self.confirmation()
        if record is not None:
            self.study.set_user_attr("superseded_confirmations", self.superseded_confirmations() + [record])
            self.set_confirmation(None)

    @property
    def scratch_in_use(self) -> str | None:
        """The temporary scratch directory of the tuner running this study (removed on resume if left)."""
        return self.study.user_attrs.get("scratch_in_use")

    def set_scratch_in_use(self, path: str | None) -> None:
        self.study.set_user_attr("scratch_in_use", path)


def _study_names(storage: str) -> set[str]:
    try:
        return {s.study_name for s in optuna.get_all_study_summaries(storage=storage, include_best_trial=False)}
    except Exception as e:  # a corrupt or unreachable database
        raise StudyError(f"cannot open study storage {storage}: {e}") from None
