"""What optuna-dashboard shows of an iotuner study: the objective's name and unit, and a note with the
tuner's verdict (the confirmed winner is not Optuna's 'best trial', which is the best single run)."""

from __future__ import annotations

import json

import optuna

from . import objective as objectives, space as spaces
from .store import Store, StudyError, open_storage
from .tuner import Tuner


def note(store: Store) -> str:
    c = store.config
    obj = objectives.Objective(c.objective.name, c.objective.direction, c.objective.unit, c.objective.pattern)
    outcome = Tuner(store, None, spaces.from_json(c.space), obj).result()
    unit = f" {obj.unit}" if obj.unit else ""
    lines = [f"# iotuner study {store.name}",
             f"Objective **{obj.name}**{f' ({obj.unit})' if obj.unit else ''}, to {obj.direction}; strategy "
             f"`{c.strategy}`, space `{c.space.get('name')}`; {store.trials_run()} search trials run.",
             "",
             "Each trial here is one record of the study; its `kind` attribute says which: `baseline` (a run of "
             "the default settings), `trial` (a point of the search; `result` holds its runs, what took effect "
             "and, when it shared an earlier result, `duplicate_of`), `training` (a strategy's own run), "
             "`confirmation` (the final round against the default), `lock` (bookkeeping).", ""]
    if outcome is None:
        lines.append("No confirmation round yet: no result is confirmed.")
    elif outcome.significant:
        w = outcome.winner
        lines += [f"**Confirmed winner: search trial {w['trial']}**, median {w['median']:,.4g}{unit} against the "
                  f"default's {outcome.confirmed_default:,.4g}{unit} in the confirmation round: "
                  f"{outcome.verdict.describe()}.", "",
                  "Its settings: `" + json.dumps(w["settings"], sort_keys=True) + "`", "",
                  "The dashboard's own 'best trial' is the best single run of the search, which noise favours; "
                  "the confirmation round is what the tuner trusts."]
    else:
        lines.append(f"The confirmation round found no significant improvement: "
                     f"{outcome.verdict.describe() if outcome.verdict else outcome.notes[-1]}.")
    return "\n".join(lines)


def annotate(storage: str, study: str | None = None) -> list[str]:
    """Writes the note (and the objective's name) on the study, or on every iotuner study of the storage."""
    import optuna_dashboard
    st = open_storage(storage, None)
    names = [study] if study else [s.study_name for s in optuna.get_all_study_summaries(st, include_best_trial=False)]
    if not names:
        raise StudyError(f"no study in {storage}")
    for name in names:
        store = Store.open(st, name, heartbeat_s=None)
        c = store.config.objective
        store.study.set_metric_names([f"{c.name} ({c.unit})" if c.unit else c.name])
        optuna_dashboard.save_note(store.study, note(store))
    return names
