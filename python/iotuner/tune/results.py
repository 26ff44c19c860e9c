"""What a study leaves behind: the best settings, a CSV of every run, a PNG of
the tuning, and summary.json with the verdict, RoTI and the viability point.

Everything here is read from the store's records and trajectory (the store
derives, this module only presents)."""

from __future__ import annotations

import csv
import json
import statistics
from dataclasses import asdict
from pathlib import Path

from .. import settings, tune_output
from . import noise, printout
from . import trajectory as traj
from .printout import fmt_time

__all__ = ["fmt_time"]  # results.fmt_time, as before the move
from .objective import Objective
from .store import BASELINE, CONFIRMATION, DEFAULT, TRAINING, TRIAL, Store
from .verdict import Outcome

NO_GAIN = "no gain to return"
CSV_COLUMNS = [
    "kind",
    "trial",
    "record",
    "state",
    "tuning_time_s",
    "value",
    "runs",
    "duplicate_of",
    "round",
    "settings",
    "effective",
    "error",
    "why",
]


def roti(store: Store, objective: Objective, outcome: Outcome, total_s: float) -> tuple[traj.Roti, str | None]:
    """RoTI along the trajectory; its final value only for a confirmed, significant gain (else why not)."""
    gain = None
    why = None
    if outcome.significant:
        gain = objective.improvement(outcome.winner["median"], outcome.confirmed_default)
    else:
        why = (
            "the confirmation round found no significant improvement over the default"
            if outcome.verdict
            else outcome.notes[-1]
            if outcome.notes
            else "there was no confirmation round"
        )
        why = f"{NO_GAIN}: {why}"
    return traj.roti(store.results.trajectory, objective, store.config.repeats, gain, total_s), why


def viability(store: Store, objective: Objective, outcome: Outcome, total_s: float) -> traj.Viability:
    """The viability point, on the objective's own clock: the production run time given at creation, or the
    default's measured run time, the share of it on the clock the objective is measured on, and how many times
    faster the confirmed winner made that time. All from the confirmation round's runs (the default's and the
    winner's, interleaved; the application's, for a study tuned through its kernel), else the baseline runs."""
    whole = objective.pattern is not None  # an objective read from the output: the whole run is its clock
    rounds = [r for r in store.trials.records(CONFIRMATION) if outcome.plan and r.attrs.get("plan") == outcome.plan]
    defaults = [r for r in rounds if r.attrs.get("candidate") == DEFAULT and r.ok]
    source = "measured default (application)" if store.config.confirm_app else "measured default"
    p = traj.production(defaults or store.trials.records(BASELINE), store.config.production_runtime_s, whole, source)
    if not outcome.significant or outcome.winner is None:
        return traj.viability(total_s, None, p.runtime_s, p.io_share, p.source)
    tuned = [r for r in rounds if r.attrs.get("candidate") == outcome.winner["signature"]]
    gain = traj.clock_gain(defaults, tuned, whole)
    if gain is None:  # runs that did not say their time there (synthetic): the objective's own gain
        gain = outcome.verdict.gain if outcome.verdict else None
    clock = objective.clock_name() if p.share_measured else "I/O (its share was not measured: all of it counts)"
    return traj.viability(total_s, gain, p.runtime_s, p.io_share, p.source, clock)


def kernel_costs(store: Store, objective: Objective, outcome: Outcome, total_s: float) -> dict | None:
    """With --kernel: one evaluation on the kernel and on the application, and RoTI with the kernel and
    without it (the same search, had every run cost an application run: TunIO's Fig. 8a)."""
    if not store.config.confirm_app:
        return None
    per_run = [
        r.duration_s / max(1, r.cost_runs)
        for r in store.trials.records(BASELINE, TRIAL, TRAINING)
        if r.ok and r.cost_runs and r.duration_s > 0
    ]
    app = [r.duration_s for r in store.trials.records(CONFIRMATION) if r.ok and r.duration_s > 0]
    out = {
        "dir": store.config.kernel,
        "evaluation_s": {
            "kernel": statistics.median(per_run) if per_run else None,
            "application": statistics.median(app) if app else None,
        },
    }
    if not per_run or not app:
        return out
    k, a = out["evaluation_s"]["kernel"], out["evaluation_s"]["application"]
    out["speedup"] = a / k
    gain = objective.improvement(outcome.winner["median"], outcome.confirmed_default) if outcome.significant else None
    runs = {r.id: max(1, r.cost_runs) for r in store.trials.records()}
    extra = max(0.0, a - k)
    searched = sum(runs.get(p.record, 1) for p in store.results.trajectory if p.kind != CONFIRMATION)
    slow = traj.costing_more(store.results.trajectory, runs, extra)
    with_k = traj.roti(store.results.trajectory, objective, store.config.repeats, gain, total_s)
    without = traj.roti(slow, objective, store.config.repeats, gain, total_s + searched * extra)
    out["roti"] = {"peak": with_k.peak, "final": with_k.final}
    out["roti_without_kernel"] = {
        "peak": without.peak,
        "final": without.final,
        "tuning_time_s": total_s + searched * extra,
    }
    return out


def describe_roti(r: traj.Roti | None, why: str | None) -> str:
    if r is None:
        return printout.describe_roti("", None, None, None, why)
    return printout.describe_roti(r.unit, r.peak, r.peak_at_s, r.final, why)


# ---- trials.csv ----


def write_csv(store: Store, path: Path, plan: str | None) -> None:
    """Every run, in the order records were made; `record` is the record's id in the storage."""
    at = {p.record: p.at_s for p in store.results.trajectory}
    training = {r.id: i for i, r in enumerate(store.trials.records(TRAINING))}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for r in store.trials.records(BASELINE, TRIAL, TRAINING, CONFIRMATION):
            kind, label, rnd = r.kind, "", ""
            if r.kind == TRIAL:
                label = r.number
            elif r.kind == TRAINING:
                label = training[r.id]
            elif r.kind == CONFIRMATION:
                kind = CONFIRMATION if r.attrs.get("plan") == plan else "confirmation-superseded"
                label = "default" if r.attrs.get("candidate") == DEFAULT else r.attrs.get("trial", "")
                rnd = r.attrs.get("round", "")
            dup = r.duplicate_of
            if isinstance(dup, int):  # a trial's number, or a training run as "training N"
                dup = f"training {training[dup]}" if dup in training else store.trials.index_of(dup)
            value = (statistics.median(r.runs) if r.runs else "") if r.state == "COMPLETE" else ""
            w.writerow(
                [
                    kind,
                    label,
                    r.id,
                    r.state,
                    round(at[r.id], 3) if r.id in at else "",
                    value,
                    json.dumps(list(r.runs)),
                    "" if dup is None else dup,
                    rnd,
                    json.dumps(r.settings, sort_keys=True),
                    r.signature or "",
                    r.error or "",
                    r.attrs.get("why", ""),
                ]
            )


# ---- curve.png ----


def plot(
    store: Store,
    objective: Objective,
    outcome: Outcome,
    r: traj.Roti,
    v: traj.Viability,
    total_s: float,
    path: Path,
    title: str,
    caption: str = "",
) -> bool:
    points = store.results.trajectory
    trials = [p for p in points if p.kind == TRIAL]
    if not trials and not any(p.kind == TRAINING for p in points):
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    span = max((p.at_s for p in points), default=1.0)
    scale, unit = (1, "s") if span < 120 else (60, "min") if span < 7200 else (3600, "h")
    label = f"{objective.name} ({objective.unit})" if objective.unit else objective.name
    fig, ax = plt.subplots(2, 2, figsize=(12, 8.2))
    by_trial, by_time, roti_ax, life_ax = ax[0][0], ax[0][1], ax[1][0], ax[1][1]

    default_runs = store.results.default_runs
    if default_runs:
        med = statistics.median(default_runs)
        spread = noise.relative_spread(default_runs) * abs(med)
        for a in (by_trial, by_time):
            a.axhline(
                med,
                color="#d1242f",
                linestyle="--",
                linewidth=1.2,
                label=f"default (median of {len(default_runs)} runs)",
            )
            a.axhspan(med - spread, med + spread, color="#d1242f", alpha=0.08, label="default's spread (1.48 MAD)")

    index = {p.record: store.trials.index_of(p.record) for p in trials}
    ok = [p for p in trials if p.ok and p.value is not None]
    by_trial.scatter(
        [index[p.record] for p in ok],
        [p.value for p in ok],
        s=14,
        color="#9aa5b1",
        label="trial (its configuration's median)",
        zorder=3,
    )
    bests = [(index[p.record], p.best) for p in trials if p.best is not None]
    if bests:
        by_trial.step(
            [b[0] for b in bests],
            [b[1] for b in bests],
            where="post",
            color="#1f6feb",
            linewidth=2,
            label="best so far (current median)",
        )
    by_trial.set_xlabel("trial (numbered as in the log)")
    by_trial.xaxis.set_major_locator(MaxNLocator(integer=True))

    kernel = bool(store.config.confirm_app)  # the search ran the kernel, the confirmation the application
    styles = {
        BASELINE: ("#d1242f", "x", "default run" + (" (kernel)" if kernel else "")),
        TRAINING: ("#8250df", "^", "training run"),
        TRIAL: ("#9aa5b1", "o", "trial" + (" (kernel)" if kernel else "")),
        CONFIRMATION: ("#1a7f37", "s", "confirmation run" + (" (application, right axis)" if kernel else "")),
    }
    app_ax = by_time.twinx() if kernel else by_time  # their values are another program's: an axis of their own
    for kind, (color, marker, name) in styles.items():
        pts = [p for p in points if p.kind == kind and p.ok and p.value is not None]
        if pts:
            (app_ax if kind == CONFIRMATION else by_time).scatter(
                [p.at_s / scale for p in pts],
                [p.value for p in pts],
                s=14,
                color=color,
                marker=marker,
                label=name,
                zorder=3,
            )
    if kernel:
        app_ax.set_ylabel(f"{label}, application", color="#1a7f37")
        app_ax.legend(loc="lower right", fontsize=7)
    line = [(p.at_s / scale, p.best) for p in points if p.kind != CONFIRMATION and p.best is not None]
    if line:
        by_time.step([x for x, _ in line], [y for _, y in line], where="post", color="#1f6feb", linewidth=2)
    confirm = [p.at_s / scale for p in points if p.kind == CONFIRMATION]
    if confirm:
        by_time.axvspan(min(confirm), max(confirm), color="#1a7f37", alpha=0.07, label="confirmation round")
    if outcome.winner:
        # the winner's median is the confirmation round's: on the application's axis in a kernel study
        for a, x in (
            (by_trial, None if kernel else outcome.winner["trial"]),
            (app_ax, max(confirm) if confirm else span / scale),
        ):
            if x is None:  # a training run won: it has no place on the trial axis
                continue
            a.scatter(
                [x],
                [outcome.winner["median"]],
                s=160,
                marker="*",
                color="#bf8700",
                zorder=5,
                edgecolors="black",
                linewidths=0.6,
                label="confirmed winner" if outcome.significant else "best candidate (not significant)",
            )
    by_time.set_xlabel(f"tuning time ({unit})")
    for a in (by_trial, by_time):
        a.set_ylabel(label)
        a.grid(alpha=0.3)
    by_trial.legend(loc="best", fontsize=7)
    by_time.legend(loc="best", fontsize=7)

    if r.curve:
        roti_ax.plot(
            [t / scale for t, _ in r.curve],
            [x for _, x in r.curve],
            color="#1f6feb",
            marker=".",
            label="RoTI(t) along the search",
        )
        if r.peak is not None:
            roti_ax.scatter([r.peak_at_s / scale], [r.peak], color="#bf8700", zorder=5, label="peak")
        if r.final is not None:
            roti_ax.axhline(r.final, color="#1a7f37", linestyle=":", label="final (confirmed gain / all tuning time)")
        roti_ax.legend(loc="best", fontsize=7)
    else:
        roti_ax.text(
            0.5,
            0.5,
            "no RoTI yet: the default and a trial need their --repeats runs",
            ha="center",
            va="center",
            transform=roti_ax.transAxes,
            fontsize=8,
        )
    roti_ax.set_xlabel(f"tuning time ({unit})")
    roti_ax.set_ylabel(f"RoTI ({r.unit})", fontsize=8)
    roti_ax.set_title("return on tuning investment: gain over the default per minute of tuning", fontsize=8)
    roti_ax.grid(alpha=0.3)

    if outcome.stop.rule.endswith("-stopper"):  # an early stopper ended the search here
        stopped = max((p.at_s for p in points if p.kind == TRIAL), default=None)
        if stopped is not None:
            roti_ax.axvline(
                stopped / scale,
                color="#d1242f",
                linestyle="--",
                linewidth=1,
                label=f"stopped by the {outcome.stop.rule}",
            )
            roti_ax.legend(loc="best", fontsize=7)

    planned = store.config.production_runs
    lines = traj.lifecycle_summary(total_s, v, planned)
    if lines:
        life = [(p["runs"], p["tuned_total_s"], p["untuned_total_s"]) for p in lines["points"]]
        hs = 3600 if life[-1][2] > 7200 else 60 if life[-1][2] > 120 else 1
        hu = {3600: "h", 60: "min", 1: "s"}[hs]
        life_ax.plot(
            [x for x, _, _ in life], [t / hs for _, t, _ in life], color="#1f6feb", label="tuning + n tuned runs"
        )
        life_ax.plot(
            [x for x, _, _ in life],
            [u / hs for _, _, u in life],
            color="#d1242f",
            linestyle="--",
            label="n untuned runs",
        )
        at = lines["viability_runs"] * lines["untuned_run_s"] / hs
        life_ax.scatter(
            [v.runs],
            [at],
            s=60,
            color="#bf8700",
            zorder=5,
            edgecolors="black",
            linewidths=0.6,
            label=f"viability point: {v.runs:,} runs",
        )
        if planned:
            life_ax.axvline(
                planned,
                color="#8250df",
                linestyle=":",
                label=f"planned: {planned:,} runs ({'pays back' if planned >= v.runs else 'does not pay back'})",
            )
        life_ax.set_xlabel("production runs")
        life_ax.set_ylabel(f"time ({hu})")
        life_ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        life_ax.legend(loc="best", fontsize=7)
    else:
        life_ax.text(
            0.5,
            0.5,
            f"no viability point: {v.reason}",
            ha="center",
            va="center",
            transform=life_ax.transAxes,
            fontsize=8,
            wrap=True,
        )
    life_ax.set_title("lifecycle: when tuning pays for itself", fontsize=8)
    life_ax.grid(alpha=0.3)

    fig.suptitle(title, fontsize=10)
    if caption:
        fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=8)
    fig.tight_layout(rect=(0, 0.03 if caption else 0, 1, 1))
    fig.savefig(path, dpi=100, metadata={"Title": title})  # the counts it quotes, readable without OCR
    plt.close(fig)
    return True


# ---- all of it ----


def summary(
    store: Store,
    objective: Objective,
    outcome: Outcome,
    total_s: float,
    r: traj.Roti,
    why: str | None,
    v: traj.Viability,
) -> dict:
    return {
        "version": tune_output.SUMMARY_VERSION,  # docs/summary.schema.json
        "study": store.name,
        "objective": {"name": objective.name, "direction": objective.direction, "unit": objective.unit},
        "strategy": store.config.strategy,
        "space": store.config.space.get("name"),
        "default": outcome.default,
        "confirmed_default": outcome.confirmed_default,
        "trials": len(store.trials.search_trials()),
        "trials_run": store.trials.trials_run(),
        "training_runs": len(store.trials.records(TRAINING)),
        "baseline_runs": len(store.trials.records(BASELINE)),
        "default_runs": len(store.results.default_runs),
        "application_runs": store.trials.application_runs(),
        "budget": asdict(store.budget),
        "tuning_time_s": total_s,
        "stop": outcome.stop.to_json(),
        "stopped_because": outcome.stopped_because,
        "winner": outcome.winner,
        "verdict": asdict(outcome.verdict) if outcome.verdict else None,
        "roti": r.to_json(),
        "roti_reason": why,
        "viability": v.to_json(),
        "lifecycle": traj.lifecycle_summary(total_s, v, store.config.production_runs),
        "kernel": kernel_costs(store, objective, outcome, total_s),
        "notes": outcome.notes,
    }


def write_all(store: Store, objective: Objective, outcome: Outcome, out: Path, total_s: float) -> dict:
    """Writes best.json, trials.csv, curve.png and summary.json; OSError when the directory is unwritable."""
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    settings.save(outcome.best_doc, out / "best.json")
    files["best"] = str(out / "best.json")
    write_csv(store, out / "trials.csv", outcome.plan)
    files["trials"] = str(out / "trials.csv")
    r, why = roti(store, objective, outcome, total_s)
    v = viability(store, objective, outcome, total_s)
    doc = summary(store, objective, outcome, total_s, r, why, v)
    if plot(
        store,
        objective,
        outcome,
        r,
        v,
        total_s,
        out / "curve.png",
        f"study {store.name}: {objective.name}, strategy {store.config.strategy}, "
        f"space {store.config.space.get('name')}; {printout.counted(doc)}",
        describe_roti(r, why),
    ):
        files["curve"] = str(out / "curve.png")
    doc["files"] = files
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(out / "summary.json")
    return doc
