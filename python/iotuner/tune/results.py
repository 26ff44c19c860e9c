"""What a study leaves behind: the best settings document, a CSV of every
trial, a PNG tuning curve, and the return on tuning investment (RoTI)."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from optuna.trial import TrialState

from .. import settings
from .objective import Objective
from .study import StudyStore
from .tuner import Outcome

NO_GAIN = "no gain to return"


@dataclass
class Roti:
    """TunIO's return on tuning investment, RoTI(t) = (perf_best(t) - perf_default) / t, t in minutes.

    peak: the highest RoTI along the search's best-so-far curve (perf_default: the median of
    the default's runs). final: the confirmed gain, (confirmed winner's median - confirmed
    default's median), over the whole tuning time, confirmation included.
    """
    peak: float
    peak_at_min: float
    final: float
    unit: str


def trajectory(store: StudyStore, objective: Objective) -> list[tuple[float, int, float, float]]:
    """(tuning time s, trial number, value, best so far) of completed trials, in the order they ran.

    A trial's value is the median of its configuration's runs when it finished. The tuner
    runs trials one after the other, so trial numbers give the order; a trial without a time
    (a study from an older iotuner) takes the time of the one before it.
    """
    out: list[tuple[float, int, float, float]] = []
    at, best = 0.0, None
    for t in sorted(store.search_trials(), key=lambda t: t.number):
        at = max(at, t.user_attrs.get("at_s", at))
        if t.state != TrialState.COMPLETE or t.value is None:
            continue
        best = t.value if best is None or objective.better(t.value, best) else best
        out.append((at, t.number, t.value, best))
    return out


def roti(store: StudyStore, objective: Objective, outcome: Outcome, end_s: float) -> tuple[Roti | None, str | None]:
    """(RoTI, None), or (None, why there is none): only a confirmed, significant gain has a return."""
    if not outcome.significant:
        why = ("the confirmation round found no significant improvement over the default" if outcome.verdict
               else outcome.notes[-1] if outcome.notes else "there was no confirmation round")
        return None, f"{NO_GAIN}: {why}"
    default = outcome.default
    per_min = [(objective.improvement(best, default) / (at / 60), at / 60)
               for at, _, _, best in trajectory(store, objective) if at > 0]
    peak, peak_at = max(per_min) if per_min else (0.0, 0.0)
    final = objective.improvement(outcome.winner["median"], outcome.confirmed_default) / (end_s / 60)
    return Roti(peak, peak_at, final, objective.roti_unit()), None


def describe_roti(r: Roti | None, why: str | None) -> str:
    if r is None:
        return f"RoTI: none ({why})"
    at = f"{r.peak_at_min * 60:.0f}s" if r.peak_at_min < 1.5 else f"{r.peak_at_min:.1f}min"
    return f"RoTI: peak {r.peak:,.1f} {r.unit} (at {at} of tuning), final {r.final:,.1f} {r.unit}"


def write_csv(store: StudyStore, path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "trial", "state", "tuning_time_s", "value", "runs", "duplicate_of", "settings",
                    "effective", "error"])
        for r in store.baseline_runs():
            w.writerow(["baseline", r.get("trial", ""), "COMPLETE", round(r["at_s"], 3), r["value"],
                        json.dumps([r["value"]]), "", "{}", r.get("signature") or "", ""])
        for t in store.search_trials():
            a = t.user_attrs
            w.writerow(["trial", t.number, t.state.name, round(a.get("at_s", 0.0), 3),
                        t.value if t.state == TrialState.COMPLETE else "", json.dumps(a.get("runs", [])),
                        a.get("duplicate_of", ""), json.dumps(a.get("settings", {}), sort_keys=True),
                        a.get("signature", ""), a.get("error", "")])
        confirmations = [("confirm-superseded", c) for c in store.superseded_confirmations()]
        confirmations.append(("confirm", store.confirmation() or {}))
        for kind, conf in confirmations:
            for value in conf.get("default", []):
                w.writerow([f"{kind}-default", "", "COMPLETE", "", value, json.dumps([value]), "", "{}", "", ""])
            for c in conf.get("candidates", []):
                for value in conf.get("samples", {}).get(c["signature"], []):
                    w.writerow([kind, c["trial"], "COMPLETE", "", value, json.dumps([value]), "",
                                json.dumps(c["settings"], sort_keys=True), c["signature"], ""])


def plot(store: StudyStore, objective: Objective, default: float | None, path: Path, title: str,
         caption: str = "") -> bool:
    traj = trajectory(store, objective)
    if not traj:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label = f"{objective.name} ({objective.unit})" if objective.unit else objective.name
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    xs_trial = list(range(1, len(traj) + 1))
    xs_time = [at / 60 for at, _, _, _ in traj]
    for ax, xs, xlabel in ((axes[0], xs_trial, "completed trial"), (axes[1], xs_time, "tuning time (min)")):
        ax.scatter(xs, [v for _, _, v, _ in traj], s=12, color="#9aa5b1", label="trial (median of its runs)")
        ax.step(xs, [b for _, _, _, b in traj], where="post", color="#1f6feb", linewidth=2, label="best so far")
        if default is not None:
            ax.axhline(default, color="#d1242f", linestyle="--", linewidth=1.2, label="default settings")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(label)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=10)
    if caption:
        fig.text(0.5, 0.01, caption, ha="center", va="bottom", fontsize=8)
    fig.tight_layout(rect=(0, 0.05 if caption else 0, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_all(store: StudyStore, objective: Objective, outcome: Outcome, out: Path, end_s: float) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    settings.save(outcome.best_doc, out / "best.json")
    files["best"] = str(out / "best.json")
    write_csv(store, out / "trials.csv")
    files["trials"] = str(out / "trials.csv")
    r, why = roti(store, objective, outcome, end_s)
    if plot(store, objective, outcome.default, out / "curve.png",
            f"study {store.study.study_name}: {objective.name}, strategy {store.config['strategy']}, "
            f"space {store.config['space']['name']}", describe_roti(r, why)):
        files["curve"] = str(out / "curve.png")
    summary = {
        "study": store.study.study_name,
        "objective": {"name": objective.name, "direction": objective.direction, "unit": objective.unit},
        "default": outcome.default,
        "confirmed_default": outcome.confirmed_default,
        "trials": len(store.search_trials()),
        "trials_run": store.trials_run(),
        "budget": store.config.get("budget"),
        "tuning_time_s": end_s,
        "stopped_because": outcome.stopped_because,
        "winner": outcome.winner,
        "verdict": asdict(outcome.verdict) if outcome.verdict else None,
        "roti": asdict(r) if r else None,
        "roti_reason": why,
        "notes": outcome.notes,
        "files": files,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
