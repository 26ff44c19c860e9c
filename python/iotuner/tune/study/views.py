"""The read-only views of a study that its readers use (strategies, stop rules, the verdict, the printouts):
`Trials`, what was run (records by kind, the search trials, what the study knew at a trial, the counts the
budgets count), and `Results`, what it measured (each effective configuration's runs and value, the default's,
the ranking, the trajectory). Both read the records as last refreshed (`derive.Derived`), never the storage;
the writing and the refresh are the store's (`tune.store.Store`), the workers' presence its `Workers` view."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable

from .derive import Derived, Point, Pool, median_of, signature
from .records import BASELINE, CONFIRMATION, TRAINING, TRIAL, Record, unpack

if TYPE_CHECKING:
    from .coordination import Workers


class Trials:
    """What was run: the study's records (search trials, runs of the default, training and confirmation runs)."""

    def __init__(self, derived: Derived, direction: str):
        self.derived, self.direction = derived, direction
        self._reports: dict[int, dict] = {}  # unpacked baseline reports, by record

    def records(self, *kinds: str) -> list[Record]:
        return self.derived.records(*kinds)

    def record(self, rid: int) -> Record | None:
        return self.derived.by_id.get(rid)

    def search_trials(self) -> list[Record]:
        return self.derived.search_trials()

    def completed(self) -> list[Record]:
        return [r for r in self.search_trials() if r.state == "COMPLETE"]

    def count(self, kind: str) -> int:
        return self.derived.count(kind)

    def index_of(self, rid: int) -> int | None:
        """A search trial's place among the study's search trials, from its record id."""
        r = self.record(rid)
        return r.number if r is not None and r.kind == TRIAL else None

    def as_of(self, index: int, *kinds: str) -> list[Record]:
        """Records created before search trial `index` was asked for: what the study knew then."""
        return self.derived.as_of(index, *kinds)

    def known_at(self, index: int, *kinds: str) -> Derived:
        """The study as it stood when search trial `index` was asked for: its finished records of these kinds,
        derived on their own (pools, the default's runs, the best, what was measured), for strategies that
        decide from that moment (a generation's plan), so a resumed study or another worker decides the same."""
        known = Derived(self.direction)
        known.add(r for r in self.as_of(index, *kinds) if r.end is not None)
        return known

    def confirmation_runs(self, plan: str) -> dict[str | None, list[float]]:
        """The successful runs of the confirmation round `plan`, by candidate (DEFAULT for the default)."""
        out: dict[str | None, list[float]] = {}
        for r in self.records(CONFIRMATION):
            if r.attrs.get("plan") == plan and r.ok:
                out.setdefault(r.attrs.get("candidate"), []).extend(r.runs)
        return out

    def baseline_report(self) -> dict | None:
        """The run report of the first run of the default that wrote one, whichever worker made it: what
        strategies that model the application (hybrid, auto) start from. None: no such run yet."""
        for r in self.records(BASELINE):
            if "report" in r.attrs:
                if r.id not in self._reports:
                    self._reports[r.id] = unpack(r.attrs["report"])
                return self._reports[r.id]
        return None

    def application_runs(self) -> dict[str, int]:
        """Application runs the study made, by kind (confirmation apart: its size is fixed in advance), the
        run budget (`Budget.runs`) counting default, training and trials."""
        return {
            "default": sum(r.cost_runs for r in self.records(BASELINE)),
            "training": sum(r.cost_runs for r in self.records(TRAINING)),
            "trials": sum(r.cost_runs for r in self.search_trials() if r.finished),
            "confirmation": sum(r.cost_runs for r in self.records(CONFIRMATION)),
        }

    def runs_spent(self) -> int:
        """What the run budget counts: every application run before the confirmation round."""
        n = self.application_runs()
        return n["default"] + n["training"] + n["trials"]

    def trials_run(self) -> int:
        """Search trials that cost a run: the trial budget counts these."""
        return self.derived.trials_run

    def owed(self) -> list[Record]:
        """Search trials queued to run again (their worker died): owed whatever the budget."""
        return self.derived.owed()


class Results:
    """What the study measured: each effective configuration (by signature) with its runs and current value,
    the default's, the best, and the trajectory on the tuning clock. Mappings are read-only views."""

    def __init__(self, derived: Derived, trials: Trials, workers: Workers, nodes: int):
        self.derived, self.trials, self.workers, self.nodes = derived, trials, workers, nodes
        self._trajectory: tuple[Any, list[Point]] | None = None

    @property
    def pools(self) -> Mapping[str, Pool]:
        """Each effective configuration's runs, by signature."""
        return MappingProxyType(self.derived.pools)

    @property
    def requested(self) -> Mapping[str, tuple[int, str]]:
        """Settings measured, as canonical text: (the record that measured them first, its signature)."""
        return MappingProxyType(self.derived.requested)

    @property
    def failed(self) -> Mapping[str, int]:
        """Settings whose run failed, as canonical text: the first such record."""
        return MappingProxyType(self.derived.failed)

    @property
    def default_runs(self) -> list[float]:
        return self.derived.default_runs

    @property
    def reference(self) -> dict[str, str] | None:
        """The default's effective settings: every signature is relative to them."""
        return self.derived.reference

    def signature(self, effective: Mapping[str, list[str]]) -> str:
        return signature(effective, self.reference or {}, self.nodes)

    def default_signatures(self) -> set[str]:
        return self.derived.default_signatures

    def default_value(self) -> float | None:
        return self.derived.default_value()

    def value_of(self, sig: str) -> float | None:
        return self.derived.value_of(sig)

    def current_values(self) -> dict[int, float]:
        """Every completed search trial's value as it stands now (its configuration's median), by number."""
        out = {}
        for r in self.trials.completed():
            v = self.value_of(r.signature) if r.signature is not None else None
            if v is not None:
                out[r.number] = v
        return out

    def ranked_pools(self, key: Callable[[float], float] | None = None) -> list[Pool]:
        """Configurations other than the default, best first by their current median (key: higher is better;
        by default the objective's direction)."""
        ranked = self.derived.ranked()
        return ranked if key is None else sorted(ranked, key=lambda p: key(median_of(p)), reverse=True)

    def best_pool(self) -> Pool | None:
        return self.derived.best()

    def run_estimate(self) -> float:
        """What one application run costs in tuning time, from the runs so far."""
        return self.derived.run_estimate()

    @property
    def trajectory(self) -> list[Point]:
        """The study's state after each finished run (computed when asked for, kept until something changes)."""
        sessions = self.workers.sessions()
        key = (self.derived.version, tuple(sessions))
        if self._trajectory is None or self._trajectory[0] != key:
            self._trajectory = (key, self.derived.trajectory(sessions, self.workers.session.id))
        return self._trajectory[1]
