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


@dataclass
class Roti:
    """TunIO's RoTI(t) = (perf_best(t) - perf_default) / t, t in minutes of tuning."""
    peak: float
    peak_at_min: float
    final: float
    unit: str


def trajectory(store: StudyStore, objective: Objective) -> list[tuple[float, int, float, float]]:
    """(tuning time s, trial number, value, best so far) of completed trials, in time order."""
    points = sorted((t.user_attrs.get("at_s", 0.0), t.number, t.value) for t in store.completed()
                    if t.value is not None)
    out, best = [], None
    for at, number, value in points:
        best = value if best is None or objective.better(value, best) else best
        out.append((at, number, value, best))
    return out


def roti(store: StudyStore, objective: Objective, default: float, end_s: float) -> Roti | None:
    traj = trajectory(store, objective)
    if not traj or default is None:
        return None
    sign = 1 if objective.direction == "maximize" else -1
    per_min = [(sign * (best - default) / (at / 60), at / 60) for at, _, _, best in traj if at > 0]
    if not per_min:
        return None
    peak, peak_at = max(per_min)
    final = sign * (traj[-1][3] - default) / (end_s / 60) if end_s > 0 else 0.0
    unit = f"{objective.unit} per minute" if objective.unit else "per minute"
    return Roti(peak, peak_at, final, unit)


def write_csv(store: StudyStore, path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "trial", "state", "tuning_time_s", "value", "runs", "duplicate_of", "settings",
                    "effective", "error"])
        for r in store.baseline_runs():
            w.writerow(["baseline", "", "COMPLETE", round(r["at_s"], 3), r["value"], json.dumps([r["value"]]), "",
                        "{}", r.get("signature") or "", ""])
        for t in store.search_trials():
            a = t.user_attrs
            w.writerow(["trial", t.number, t.state.name, round(a.get("at_s", 0.0), 3),
                        t.value if t.state == TrialState.COMPLETE else "", json.dumps(a.get("runs", [])),
                        a.get("duplicate_of", ""), json.dumps(a.get("settings", {}), sort_keys=True),
                        a.get("signature", ""), a.get("error", "")])
        conf = store.confirmation() or {}
        for r, value in enumerate(conf.get("default", [])):
            w.writerow(["confirm-default", "", "COMPLETE", "", value, json.dumps([value]), "", "{}", "", ""])
        for c in conf.get("candidates", []):
            for value in conf.get("samples", {}).get(c["signature"], []):
                w.writerow(["confirm", c["trial"], "COMPLETE", "", value, json.dumps([value]), "",
                            json.dumps(c["settings"], sort_keys=True), c["signature"], ""])


def plot(store: StudyStore, objective: Objective, default: float | None, path: Path, title: str) -> bool:
    traj = trajectory(store, objective)
    if not traj:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label = f"{objective.name} ({objective.unit})" if objective.unit else objective.name
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
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
    fig.tight_layout()
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
    if plot(store, objective, outcome.default, out / "curve.png",
            f"study {store.study.study_name}: {objective.name}, strategy {store.config['strategy']}, "
            f"space {store.config['space']['name']}"):
        files["curve"] = str(out / "curve.png")
    r = roti(store, objective, outcome.default, end_s)
    summary = {
        "study": store.study.study_name,
        "objective": {"name": objective.name, "direction": objective.direction, "unit": objective.unit},
        "default": outcome.default,
        "trials": len(store.search_trials()),
        "trials_run": store.trials_run(),
        "tuning_time_s": end_s,
        "stopped_because": outcome.stopped_because,
        "winner": outcome.winner,
        "verdict": asdict(outcome.verdict) if outcome.verdict else None,
        "roti": asdict(r) if r else None,
        "notes": outcome.notes,
        "files": files,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
