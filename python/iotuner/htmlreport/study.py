"""The page of a tuning study (an `iotuner tune` output directory): the tuning
curve with the default and its spread, RoTI and the viability point when the
study has them, the trial table, parameter importance and the verdict.

`read_tune_dir` is the one place that knows the directory's files, so a change
of the tuner's output format is adapted there.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from pathlib import Path

from .. import tune_output
from ..inputs import read_text
from ..tune.printout import describe_interval
from . import svg
from .page import cards, document, e, table

TRIAL_KINDS = ("trial", "training")


def _float(v) -> float | None:
    """A finite number, or None."""
    try:
        x = float(v) if v not in (None, "") and not isinstance(v, bool) else None
    except (TypeError, ValueError, OverflowError):
        return None
    return x if x is not None and math.isfinite(x) else None


def read_tune_dir(path: str | Path) -> dict:
    """summary.json (required), trials.csv, best.json, study.db of a tune output directory, normalized:
    {"summary", "trials": [{kind, trial, state, t_s, value, runs, settings, error}], "best", "db", "path"}.
    Today's kinds are baseline, trial, confirm-default, confirm, confirm-superseded; the tuner-core
    rewrite adds training and confirmation (read as they come)."""

    path = Path(path)
    summary = tune_output.summary(path)  # TuneOutputError (a ValueError): the file and the field, one line
    trials = []
    csv_path = path / "trials.csv"
    if csv_path.exists():
        text = read_text(csv_path, "the trials of a tune output directory (trials.csv)")
        for row in csv.DictReader(io.StringIO(text, newline="")):
            settings = _json_cell(row.get("settings"), dict, {})
            runs = [x for x in _json_cell(row.get("runs"), list, []) if _float(x) is not None]
            trials.append(
                {
                    "kind": _text(row.get("kind")) or "trial",
                    "trial": _text(row.get("trial")),
                    "state": _text(row.get("state")),
                    "t_s": _float(row.get("tuning_time_s")),
                    "value": _float(row.get("value")),
                    "runs": runs,
                    "settings": settings,
                    "duplicate_of": _text(row.get("duplicate_of")),
                    "error": _text(row.get("error")),
                }
            )
    best = tune_output.best(path)
    db = path / "study.db"
    return {"summary": summary, "trials": trials, "best": best, "db": db if db.exists() else None, "path": path}


def _text(cell) -> str:
    """A CSV cell as text: a short row leaves None, an overlong one a list."""
    return cell if isinstance(cell, str) else ""


def _json_cell(cell, kind: type, default):
    """A cell holding JSON of this kind (settings: an object, runs: a list); the default when it does not."""
    try:
        value = json.loads(cell) if isinstance(cell, str) and cell else default
    except (json.JSONDecodeError, RecursionError):
        return default
    return value if isinstance(value, kind) else default


def importance(study: dict) -> tuple[list[tuple[str, float]], str]:
    """(knob, importance) largest first, and how it was computed: Optuna's fANOVA on the study database when
    it loads, else the fraction of the trials' variance each knob explains alone (one-way ANOVA's eta squared)."""
    name = study["summary"].get("study")
    if study["db"] is not None and name:
        try:
            import optuna

            optuna.logging.set_verbosity(optuna.logging.WARNING)
            # the study's trials are its search trials (the other runs are in its companion study); copied
            # into memory once, since the importance evaluator reads the trials again and again
            st = optuna.load_study(study_name=name, storage=f"sqlite:///{study['db']}")
            search = optuna.create_study(directions=st.directions)
            search.add_trials(st.get_trials(states=(optuna.trial.TrialState.COMPLETE,)))
            # fANOVA by name: Optuna 5's default evaluator is PED-ANOVA, and the page says fANOVA
            imp = optuna.importance.get_param_importances(
                search, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0)
            )
            n = len(search.trials)
            return sorted(imp.items(), key=lambda kv: -kv[1]), (
                f"Optuna's fANOVA importance over the study's {n} completed trials (sums to 1)"
            )
        except Exception:  # noqa: BLE001 - another storage, an older study: fall back to the CSV
            pass
    rows = [t for t in study["trials"] if t["kind"] in TRIAL_KINDS and t["value"] is not None]
    if len(rows) < 3:
        return [], "too few completed trials for parameter importance"
    values = [t["value"] for t in rows]
    mean = statistics.fmean(values)
    total = sum((v - mean) ** 2 for v in values)
    if total == 0:
        return [], "every trial gave the same value"
    out = []
    for knob in sorted({k for t in rows for k in t["settings"]}):
        groups: dict[str, list[float]] = {}
        for t in rows:
            groups.setdefault(json.dumps(t["settings"].get(knob), sort_keys=True), []).append(t["value"])
        between = sum(len(g) * (statistics.fmean(g) - mean) ** 2 for g in groups.values())
        out.append((knob, between / total))
    return sorted(out, key=lambda kv: -kv[1]), (
        f"fraction of the variance of {len(rows)} trials that each knob explains alone (eta squared; "
        "knobs that vary together share it)"
    )


def _curve(study: dict) -> str:
    s = study["summary"]
    obj = s.get("objective") or {}
    maximize = obj.get("direction", "maximize") == "maximize"
    trials = [
        t for t in study["trials"] if t["kind"] in TRIAL_KINDS and t["value"] is not None and t["t_s"] is not None
    ]
    base = [t for t in study["trials"] if t["kind"] == "baseline" and t["value"] is not None]
    conf = [t for t in study["trials"] if t["kind"] in ("confirm", "confirmation") and t["value"] is not None]
    times = [t["t_s"] for t in trials + base + conf if t["t_s"] is not None]
    unit, per = svg.time_unit(max(times + [s.get("tuning_time_s") or 0]) if times else 1)
    ylabel = f"{obj.get('name', 'objective')} ({obj.get('unit')})" if obj.get("unit") else obj.get("name", "objective")
    kernel = isinstance(s.get("kernel"), dict)  # the search ran the application's I/O kernel
    on = " on the kernel" if kernel else ""
    run, proposed = s.get("trials_run"), s.get("trials")
    if not isinstance(run, int):  # a summary without the count
        run = len(trials)
    again = proposed - run if isinstance(proposed, int) and proposed > run else 0
    failed = run - len(trials)  # every trial that ran has a value, unless it failed
    chart = svg.XYChart(
        f"Tuning curve: {run} trials run{on}"
        + (f", {failed} of them failed (not plotted)" if failed > 0 else "")
        + (f" ({again} more proposed were duplicates of these, not run again)" if again else ""),
        f"tuning time ({unit})",
        ylabel + (", kernel" if kernel else ""),
    )
    chart.series.append(
        svg.Series(f"trial{on} (median of its runs)", [(t["t_s"] / per, t["value"]) for t in trials], color="#8c959f")
    )
    best, pts = None, []
    for t in sorted(trials, key=lambda t: t["t_s"]):
        if best is None or (t["value"] > best if maximize else t["value"] < best):
            best = t["value"]
        pts.append((t["t_s"] / per, best))
    if pts:
        chart.series.append(svg.Series("best so far", pts, kind="step", color="#1f6feb"))
    timed_base = [(t["t_s"] / per, t["value"]) for t in base if t["t_s"] is not None]
    if timed_base:
        chart.series.append(svg.Series(f"default settings (run{on})", timed_base, color="#d1242f"))
    timed_conf = [(t["t_s"] / per, t["value"]) for t in conf if t["t_s"] is not None]
    app_chart = None
    if timed_conf and kernel:  # the application's values: a chart of their own, not the kernel's axis
        app_chart = svg.XYChart(
            "Confirmation round on the application", f"tuning time ({unit})", ylabel + ", application"
        )
        app_chart.series.append(svg.Series("confirmation run on the application", timed_conf, color="#1a7f37"))
    elif timed_conf:
        chart.series.append(svg.Series("confirmation run", timed_conf, color="#1a7f37"))
    if s.get("default") is not None:
        vals = [t["value"] for t in base]
        band = (min(vals), max(vals)) if len(vals) > 1 else None
        chart.hlines.append(("default (median; band: its runs' range)", s["default"], "#d1242f", band))
    win = (s.get("winner") or {}).get("median")
    if win is not None and (s.get("verdict") or {}).get("significant"):
        (app_chart or chart).hlines.append(("confirmed winner (median)", win, "#1a7f37", None))
    via = s.get("viability") or {}
    at = next((via[k] for k in ("t_s", "at_s", "tuning_time_s") if isinstance(via.get(k), (int, float))), None)
    if at is not None:
        chart.vlines.append(("viability point", at / per, "#8250df"))
    out = chart.render() + (app_chart.render() if app_chart else "")
    curve = (s.get("roti") or {}).get("curve")
    if curve:
        r_unit = (s.get("roti") or {}).get("unit", "")
        pts = [(c["t_s"] / per, c["roti"]) for c in curve if isinstance(c, dict) and "t_s" in c and "roti" in c]
        rc = svg.XYChart("Return on tuning investment over time", f"tuning time ({unit})", f"RoTI ({r_unit})")
        rc.series.append(svg.Series("RoTI", pts, kind="line"))
        out += rc.render()
    return out


def _verdict(study: dict) -> str:
    s = study["summary"]
    v = s.get("verdict") or {}
    unit = (s.get("objective") or {}).get("unit") or ""
    roti = s.get("roti") or {}
    rows = [
        ("default (median of its runs)", s.get("default"), unit),
        ("confirmed default (median)", s.get("confirmed_default"), unit),
        ("winner (median)", (s.get("winner") or {}).get("median"), unit),
        ("gain (winner / default)", v.get("gain"), "x"),
        ("gain's 95% interval", _interval(v), ""),
        ("p-value", v.get("p_value"), ""),
        ("significance level", v.get("alpha"), ""),
        ("measured noise", v.get("noise"), "(relative)"),
        ("significant", _significance(v), ""),
        ("RoTI peak", roti.get("peak"), roti.get("unit", "")),
        ("RoTI final", roti.get("final"), roti.get("unit", "")),
        ("RoTI", s.get("roti_reason"), ""),
        ("trials", s.get("trials"), ""),
        ("tuning time", s.get("tuning_time_s"), "s"),
        ("stopped because", s.get("stopped_because") or (s.get("stop") or {}).get("reason"), ""),
    ]
    k = s.get("kernel")
    if isinstance(k, dict):
        ev = k.get("evaluation_s") if isinstance(k.get("evaluation_s"), dict) else {}
        rows.append(
            (
                "trials ran on",
                f"the application's I/O kernel {k.get('dir')}: one evaluation "
                f"{_seconds(ev.get('kernel'))} against {_seconds(ev.get('application'))} for the application, "
                f"which the confirmation round ran",
                "",
            )
        )
    via = s.get("viability") or {}
    for k, val in via.items():
        rows.append((f"viability: {k}", val, ""))
    fmt = lambda x: f"{x:,.4g}" if isinstance(x, float) else str(x)  # noqa: E731
    return table(
        ["", "value"],
        [[e(k), e(f"{fmt(val)} {u}".strip())] for k, val, u in rows if val is not None],
        widths=["40%", "60%"],
    )


def _interval(verdict: dict) -> str | None:

    return describe_interval(verdict).removeprefix("95% interval ") or None


def _default_card(s: dict, obj: dict) -> tuple[str, str]:
    """The default the gain is measured against: the confirmation round's, when there was one."""
    unit = obj.get("unit") or ""
    for key, label in (("confirmed_default", "default (confirmation round)"), ("default", "default")):
        if isinstance(s.get(key), (int, float)):
            return label, f"{s[key]:,.1f} {unit}".strip()
    return "default", "-"


def _seconds(x) -> str:
    return f"{x:.3g} s" if isinstance(x, (int, float)) and not isinstance(x, bool) else "?"


def _significance(verdict: dict) -> str:
    """ "yes" or "no", with the p-value and the level it was compared with ("-" without a confirmation)."""
    sig = verdict.get("significant")
    if not isinstance(sig, bool):
        return "-"
    p, alpha = verdict.get("p_value"), verdict.get("alpha")
    detail = (
        f" (p = {p:.2g}{f' < {alpha:.3g}' if sig and alpha else f', needed < {alpha:.3g}' if alpha else ''})"
        if isinstance(p, (int, float))
        else ""
    )
    return ("yes" if sig else "no") + detail


def _trials(study: dict) -> str:
    kernel = isinstance(study["summary"].get("kernel"), dict)
    rows = []
    for t in study["trials"]:
        sets = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(t["settings"].items()))
        where = "" if not kernel else " (application)" if "confirm" in t["kind"] else " (kernel)"
        rows.append(
            [
                e(t["trial"]),
                e(t["kind"] + where),
                e(t["state"]),
                e(f"{t['t_s']:.2f}" if t["t_s"] is not None else ""),
                e(f"{t['value']:,.4g}" if t["value"] is not None else ""),
                f'<span class="mono">{e(sets)}</span>'
                + (f'<div class="note">duplicate of {e(t["duplicate_of"])}</div>' if t["duplicate_of"] else ""),
                e(t["error"][:200]),
            ]
        )
    return table(
        ["#", "kind", "state", "time (s)", "value", "settings", "error"],
        rows,
        main=True,
        num={0, 3, 4},
        widths=["5%", "10%", "9%", "8%", "10%", "43%", "15%"],
    )


def render(study: dict) -> str:
    s = study["summary"]
    v = s.get("verdict") or {}
    obj = s.get("objective") or {}
    gain = v.get("gain")
    # the counts summary.json gives, as the terminal and curve.png quote them: a duplicate found by its
    # first run was run, one proposed again was not
    run = s.get("trials_run")
    if not isinstance(run, int):  # a summary without the count
        run = sum(1 for t in study["trials"] if t["kind"] in TRIAL_KINDS and t["value"] is not None)
    proposed = s.get("trials")
    body = [
        cards(
            [
                (
                    f"trials run ({proposed} proposed)"
                    if isinstance(proposed, int) and proposed != run
                    else "trials run",
                    str(run),
                ),
                ("gain", f"{gain:.2f}x" if isinstance(gain, (int, float)) else "-"),
                ("significant", _significance(v)),
                _default_card(s, obj),
                ("tuning time", f"{s.get('tuning_time_s', 0):.1f} s"),
            ]
        ),
        "<h2>Tuning curve</h2>",
        _curve(study),
        "<h2>Verdict</h2>",
        _verdict(study),
    ]
    imp, how = importance(study)
    body.append("<h2>Parameter importance</h2>")
    if imp:
        body.append(svg.hbars("Parameter importance", [(k, val, f"{val:.2f}") for k, val in imp[:20]]))
    body.append(f'<p class="note">{e(how)}</p>')
    if study["best"]:
        body.append('<h2>Best settings</h2><pre class="mono">' + e(json.dumps(study["best"], indent=2)) + "</pre>")
    body.append("<h2>Trials</h2>" + _trials(study))
    for n in s.get("notes") or []:
        body.append(f'<p class="note">note: {e(n)}</p>')
    sub = (
        f"tune output <span class=mono>{e(study['path'])}</span>: objective {e(obj.get('name'))} "
        f"({e(obj.get('direction'))}, {e(obj.get('unit'))})"
    )
    return document(f"Tuning study: {s.get('study', '?')}", sub, "".join(body), "study")
