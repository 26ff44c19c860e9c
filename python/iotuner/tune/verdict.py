"""A study's verdict, judged from its records alone, so every worker (and `iotuner tune --status`, the dashboard)
reports the same: the confirmation round a worker completed, its winner against the default, and best.json."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .. import settings
from . import noise
from . import stop as stops
from .objective import Objective
from .study.leases import Lease
from .study.records import DEFAULT, TRAINING

if TYPE_CHECKING:
    from .store import Store

ROUND = "confirmation-"  # the confirmation rounds' leases: confirmation-0, then -1 after a resume that searched more


@dataclass
class Outcome:
    default: float | None  # median of the default's runs during the search
    best_doc: dict
    verdict: noise.Verdict | None
    winner: dict | None  # {"trial", "signature", "settings", "median"} of the confirmed winner
    stop: stops.Stop
    notes: list[str] = field(default_factory=list)
    confirmed_default: float | None = None  # median of the default's runs in the confirmation round
    plan: str | None = None  # the confirmation round's key (its runs are records with this plan)
    shown: set = field(default_factory=set)  # notes the progress printout already showed
    round: Lease | None = None  # the confirmation round's lease, as it ended
    ran_round: bool = False  # this process ran the confirmation round: it writes the results

    @property
    def stopped_because(self) -> str:
        return self.stop.reason

    @property
    def significant(self) -> bool:
        return bool(self.verdict and self.winner and self.verdict.significant)


class Verdicts:
    """The verdict of a study's confirmation rounds. notes: the study's notes so far (the outcome carries them);
    note: how to add one (the tuner's also shows it), by default to notes."""

    def __init__(
        self,
        store: Store,
        objective: Objective,
        notes: list[str] | None = None,
        note: Callable[[str], None] | None = None,
    ):
        self.store, self.objective = store, objective
        self.notes = notes if notes is not None else []
        self.note = note or self._add_note
        self.baseline = settings.validate(store.config.baseline)
        self.alpha = store.config.alpha

    def _add_note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def result(self) -> Outcome | None:
        """The study's outcome from its records: the last confirmation round a worker completed (None: none)."""
        self.store.refresh()
        done = [
            (int(n[len(ROUND) :]), lease)
            for n, lease in self.store.workers.leases_named(ROUND).items()
            if n[len(ROUND) :].isdigit() and lease.state == "done"
        ]
        if not done:
            return None
        return self.outcome(max(done, key=lambda x: x[0])[1], ran=False)

    def outcome(self, lease: Lease, ran: bool) -> Outcome:
        """The verdict of the round under this lease, from its records: the same in every process."""
        self.store.refresh()
        c = lease.content
        stop = stops.Stop(**c.get("stop", {"rule": "unknown", "reason": "unknown"}))
        if lease.attempt > 1 and not ran:  # the worker that ran it again said so as it began
            self.note(
                f"the confirmation round was run again from the start (start {lease.attempt}): the worker "
                f"running it before had stopped"
            )
        if not c.get("candidates"):
            out = Outcome(
                self.store.results.default_value(),
                self.best_doc(None, None),
                None,
                None,
                stop,
                self.notes + [self._nothing_to_confirm(stop)],
                plan=c.get("plan"),
            )
        else:
            out = self.judge(stop, c["plan"], c["candidates"])
        out.round, out.ran_round = lease, ran
        return out

    def _nothing_to_confirm(self, stop: stops.Stop) -> str:
        """Why a round had no candidate, from what ran: never a conclusion about trials that did not run."""
        tried = self.store.trials.search_trials() + self.store.trials.records(TRAINING)
        if not tried:
            return f"no trial ran ({stop.reason}): nothing was compared with the default settings"
        if not any(r.ok for r in tried):
            return f"every one of the {len(tried)} trials failed: nothing was compared with the default settings"
        return "no configuration took effect differently from the default settings"

    def judge(self, stop: stops.Stop, key: str, cands: list[dict]) -> Outcome:
        """The verdict of the confirmation round `key` over these candidates, from its runs so far."""
        default = self.store.results.default_value()
        samples = self.store.trials.confirmation_runs(key)
        base = samples.get(DEFAULT, [])
        measured = [c for c in cands if samples.get(c["signature"])]
        if not measured or not base:
            return Outcome(
                default,
                self.best_doc(None, None),
                None,
                None,
                stop,
                self.notes + ["the confirmation runs failed; keeping the default settings"],
                plan=key,
            )
        winner = max(measured, key=lambda c: self.objective.key(noise.median(samples[c["signature"]])))
        verdict = noise.compare(
            samples[winner["signature"]], base, self.objective, self.alpha, comparisons=len(measured) * noise.LOOKS
        )
        win = {
            "trial": winner["trial"],
            "name": winner["name"],
            "signature": winner["signature"],
            "settings": winner["settings"],
            "median": noise.median(samples[winner["signature"]]),
        }
        return Outcome(
            default, self.best_doc(win, verdict), verdict, win, stop, list(self.notes), noise.median(base), key
        )

    def best_doc(self, winner: dict | None, verdict: noise.Verdict | None) -> dict:
        """best.json: the default settings with the winner's knobs that took effect differently from the
        default's, in one group; the winner's other knobs are named in meta."""
        name = self.store.name
        base = settings.flatten(self.baseline)
        if winner is None or verdict is None or not verdict.significant:
            doc = settings.from_flat(
                base,
                description=f"iotuner tune, study {name}: no configuration beat the "
                f"default settings beyond the measured noise, so these are the default settings",
                meta={"tool": "iotuner tune", "study": name, "significant": False, "objective": self.objective.name},
            )
            return settings.validate(_keep_scoped(doc, self.baseline))
        differs = set(json.loads(winner["signature"])) if winner["signature"] else set()
        matters = {k: v for k, v in winner["settings"].items() if any(d.split("[")[0] == k for d in differs)}
        # not "left out" when the default settings have it: best.json keeps the default's knobs
        inert = {k: v for k, v in winner["settings"].items() if k not in matters and base.get(k) != v}
        meta = {
            "tool": "iotuner tune",
            "study": name,
            "trial": winner["trial"],
            "objective": self.objective.name,
            "unit": self.objective.unit,
            "value": winner["median"],
            "gain": verdict.gain,
            "p_value": verdict.p_value,
            "significant": True,
        }
        if inert:
            meta["same_as_default"] = inert
            meta["note"] = (
                "the winner also set these knobs, but they took effect as in the default settings "
                "(dropped, not applicable, or the value in effect anyway), so they are left out"
            )
        doc = settings.from_flat(
            {**base, **matters},
            meta=meta,
            description=f"iotuner tune, study {name}: {winner['name']}, "
            f"{verdict.gain:.2f}x the default {self.objective.name}",
        )
        return settings.validate(_keep_scoped(doc, self.baseline))


def _keep_scoped(doc: dict, baseline: dict) -> dict:
    """The baseline's groups matched by file or dataset globs stay as they were, before the merged group."""
    scoped = [g for g in settings.validate(baseline).get("groups", []) if "file" in g or "dataset" in g]
    if scoped:
        doc = dict(doc)
        doc["groups"] = scoped + doc.get("groups", [])
    return doc
