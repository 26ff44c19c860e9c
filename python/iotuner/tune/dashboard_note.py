"""What optuna-dashboard shows of an iotuner study: the objective's name and unit, and a note with the
tuner's verdict (the confirmed winner is not Optuna's 'best trial', which is the best search trial as told)."""

from __future__ import annotations

import json

from . import objective as objectives
from .store import Store, StudyError, open_storage
from .study.storage import COMPANION, study_names
from .study.urls import mask
from .verdict import Verdicts


def note(store: Store) -> str:
    c = store.config
    obj = objectives.of_spec(c.objective)
    outcome = Verdicts(store, obj).result()
    unit = f" {obj.unit}" if obj.unit else ""
    lines = [
        f"# iotuner study {store.name}",
        f"Objective **{obj.name}**{f' ({obj.unit})' if obj.unit else ''}, to {obj.direction}; strategy "
        f"`{c.strategy}`, space `{c.space.get('name')}`; {store.trials.trials_run()} search trials run.",
        "",
        "Each trial here is a point of the search: `result` holds its runs, what took effect and, when it "
        "shared an earlier result, `duplicate_of`. The other runs are trials of the companion study "
        f"`{store.name}{COMPANION}`, each with its `kind`: `baseline` (a run of the default settings), "
        "`training` (a strategy's own run), `confirmation` (the final round against the default).",
        "",
    ]
    if outcome is None:
        lines.append("No confirmation round yet: no result is confirmed.")
    elif outcome.significant:
        w = outcome.winner
        lines += [
            f"**Confirmed winner: search trial {w['trial']}**, median {w['median']:,.4g}{unit} against the "
            f"default's {outcome.confirmed_default:,.4g}{unit} in the confirmation round: "
            f"{outcome.verdict.describe()}.",
            "",
            "Its settings: `" + json.dumps(w["settings"], sort_keys=True) + "`",
            "",
            "The dashboard's own 'best trial' is the search trial with the best value as told, which noise "
            "favours; the confirmation round is what the tuner trusts.",
        ]
    else:
        lines.append(
            f"The confirmation round found no significant improvement: "
            f"{outcome.verdict.describe() if outcome.verdict else outcome.notes[-1]}."
        )
    return "\n".join(lines)


def annotate(storage: str, study: str | None = None) -> list[str]:
    """Writes the note (and the objective's name) on the study, or on every iotuner study of the storage."""
    import optuna_dashboard

    st = open_storage(storage)
    every = study_names(st, storage)
    names = [study] if study else sorted(n for n in every if n + COMPANION in every)  # iotuner's studies
    if not names:
        raise StudyError(f"no iotuner study in {mask(storage)}")
    for name in names:
        store = Store.open(st, name, heartbeat_s=None)
        c = store.config.objective
        store.study.set_metric_names([f"{c.name} ({c.unit})" if c.unit else c.name])
        optuna_dashboard.save_note(store.study, note(store))
    return names
