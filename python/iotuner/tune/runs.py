"""One application run, measured and recorded: what the search, the strategies' training and the confirmation
round share. A run becomes a record of the study (`store.add_run`), with what took effect, and the strategy
observes it; a run the tuner itself could not make (its own files) is a fault, never a record."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

from .. import settings
from ..settings import complete
from .evaluate import Evaluator, Measurement, reference_of
from .store import BASELINE, CONFIRMATION, TRAINING, Record, Store, signature
from .trialdoc import effective_of, trial_doc
from .tune_error import TuneError

Progress = Callable[[dict], None]
Observe = Callable[[Record, "Measurement | None"], None]


class Runs:
    """Measures a settings document and records the run. observe: the strategy's look at every run this worker
    records; note: how to tell the user something (the study's notes)."""

    def __init__(
        self,
        store: Store,
        evaluator: Evaluator,
        progress: Progress,
        note: Callable[[str], None],
        observe: Observe,
        eval_log: Path | None = None,
    ):
        self.store, self.evaluator, self.progress, self.note, self.observe = store, evaluator, progress, note, observe
        self.eval_log = eval_log
        self.baseline = settings.validate(store.config.baseline)
        self.nodes = store.config.nodes
        self.incomplete_said: set[str] = set()

    def measure(self, doc: dict, label: str) -> Measurement:
        try:
            m = self.evaluator.evaluate(doc, label)
        except OSError as e:  # the tuner's own files, not the application
            why = f"the tuner could not run {label}: {e.strerror or e}"
            m = Measurement(False, None, 0.0, why, fault=why)
        if self.eval_log:
            try:
                with open(self.eval_log, "a") as f:
                    f.write(
                        json.dumps(
                            {"label": label, "ok": m.ok, "value": m.value, "at_s": round(self.store.workers.clock(), 3)}
                        )
                        + "\n"
                    )
            except OSError as e:
                self.note(f"cannot append to --eval-log {self.eval_log}: {e.strerror}")
        part: str | None = (m.report or {}).get("incomplete") if m.ok else None
        if part and part not in self.incomplete_said:  # the value is real, but of a part of the job
            self.incomplete_said.add(part)
            self.note(f"{label}'s run report is incomplete, so its value measures only what iotuner saw: {part}")
        return m

    def signature(self, m: Measurement, doc: dict) -> str:
        """What took effect in this run, relative to the default's effective settings."""
        return self.store.results.signature(effective_of(m, doc))

    def record(
        self, kind: str, flat: Mapping[str, Any], doc: dict, m: Measurement, attrs: Mapping[str, Any] | None = None
    ) -> Record:
        """A run of the default, a training point or the confirmation round, recorded and observed."""
        attrs = dict(attrs or {})
        sig = self.signature(m, doc) if m.ok else None
        if kind in (BASELINE, CONFIRMATION) and m.ok:  # a production run's time and I/O share (viability)
            attrs["details"] = {
                k: m.details.get(k) for k in ("objective_time_s", "wall_time_s", "bytes_written", "bytes_read", "ranks")
            }
        if kind == BASELINE and m.ok:
            if (
                self.store.results.reference is None
            ):  # the default's effective settings: signatures are relative to them
                attrs["reference"] = reference_of(m)
                sig = signature(effective_of(m, doc), attrs["reference"], self.nodes)
        rec = self.store.add_run(
            kind,
            settings=flat,
            value=m.value if m.ok else None,
            error=m.error,
            signature=sig,
            duration_s=m.duration_s,
            attrs=attrs,
            report=m.report if kind == BASELINE and m.ok else None,
        )
        self.observe(rec, m)
        return rec

    def default(self, reason: str) -> Measurement:
        """A run of the default settings (a baseline run), recorded unless the tuner could not make it."""
        n = self.store.trials.count(BASELINE)
        m = self.measure(self.baseline, f"baseline-{n:03d}")
        if m.fault is None:
            self.record(BASELINE, {}, self.baseline, m)
        self.progress(
            {
                "kind": "baseline",
                "value": m.value,
                "error": m.error,
                "default": self.store.results.default_value(),
                "reason": reason,
                "clock": self.store.workers.clock(),
            }
        )
        return m

    def point(
        self, flat: Mapping[str, Any], kind: str = TRAINING, label: str | None = None, why: str | None = None
    ) -> tuple[Record, Measurement]:
        """A strategy's own run of a point (flat settings), recorded under its kind (`Context.measure`)."""
        flat = complete(dict(flat), self.nodes)
        n = self.store.trials.count(kind)
        m = self.measure(trial_doc(self.baseline, flat), label or f"{kind}-{n:03d}")
        if m.fault:
            raise TuneError(m.fault)
        rec = self.record(kind, flat, trial_doc(self.baseline, flat), m, {"why": why} if why else None)
        self.progress(
            {
                "kind": kind,
                "number": n,
                "settings": flat,
                "value": m.value,
                "error": m.error,
                "clock": self.store.workers.clock(),
            }
        )
        return rec, m
