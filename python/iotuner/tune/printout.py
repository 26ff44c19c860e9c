"""The end of a tuning in words: printed by `iotuner tune` when it finishes and by `iotuner show DIR` later.

Everything comes from summary.json and best.json, so both print the same lines.
Light imports only: `show` loads this without the tuner stack.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console


def fmt_time(s: float | None) -> str:
    if s is None:
        return "?"
    return f"{s:.1f}s" if s < 10 else f"{s:.0f}s" if s < 90 else f"{s / 60:.1f}min" if s < 5400 else f"{s / 3600:.1f}h"


def fmt_value(value: float | None, unit: str | None) -> str:
    if value is None:
        return "-"
    unit = f" {unit}" if unit else ""
    return f"{value:,.1f}{unit}" if abs(value) >= 10 else f"{value:.4g}{unit}"


def error_line(error: str, width: int = 300) -> str:
    """A failed run's error on one line: why it failed (what comes before its stderr), then as much of the end
    of the stderr as fits."""
    why, sep, stderr = error.partition("; stderr: ")
    if not sep or len(error) <= width:
        return error[-width:]
    room = max(0, width - len(why) - len("; stderr: ..."))
    return f"{why}; stderr: ...{stderr[-room:]}"


def describe_roti(unit: str, peak: float | None, peak_at_s: float | None, final: float | None, why: str | None) -> str:
    if final is None:
        shown = "" if peak is None else f"; peak along the search {peak:,.1f} {unit}"
        return f"RoTI: none ({why}){shown}"
    shown = f"peak {peak:,.1f} {unit} (at {fmt_time(peak_at_s)} of tuning), " if peak is not None else ""
    return f"RoTI: {shown}final {final:,.1f} {unit}"


UNCERTAIN = 3.0  # an interval whose ends are further apart than this factor leaves the magnitude open


def describe_interval(v: dict) -> str:
    """ "95% interval 1.21-1.45x", and when it is wide, that the magnitude is uncertain ("" without one)."""
    low, high = v.get("low"), v.get("high")
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return ""
    text = f"95% interval {low:.2f}-{high:.2f}x"
    if low > 0 and high / low > UNCERTAIN:
        text += ": the direction holds, the magnitude is uncertain (the runs spread widely)"
    return text


def describe_verdict(v: dict) -> str:
    gain = v["gain"]
    pct = (gain - 1) * 100
    interval = describe_interval(v)
    within = f"{pct:+.1f}%" + (f", {interval}" if interval else "")
    if v["significant"]:
        return (
            f"{gain:.2f}x the default ({within}; beyond the measured noise of "
            f"{v['noise'] * 100:.1f}%; p = {v['p_value']:.3g})"
        )
    if gain < 1 and 1 - gain > v["noise"]:  # slower beyond the noise: a loss, not "within the noise"
        return (
            f"no improvement: the best candidate is a loss, {gain:.2f}x the default ({within}); "
            f"the default settings are kept"
        )
    return (
        f"no significant improvement: {gain:.2f}x the default ({within}) is "
        + ("a loss " if gain < 1 else "")
        + f"within the measured noise (spread {v['noise'] * 100:.1f}%, p = {v['p_value']:.3g} against "
        f"{v['alpha']:.3g} needed)"
        if gain < 1 or gain - 1 <= v["noise"]
        else f"no significant improvement: {gain:.2f}x the default ({within}), but its runs do not beat the "
        f"default's consistently enough (p = {v['p_value']:.3g} against {v['alpha']:.3g} needed; spread "
        f"{v['noise'] * 100:.1f}%)"
    )


def best_line(
    winner: dict | None,
    verdict: dict | None,
    confirmed_default: float | None,
    unit: str | None,
    notes: list | None = None,
) -> str | None:
    """The confirmation round's verdict in one line: what every worker of a study prints alike."""
    if winner and verdict:
        name = winner.get("name") or f"trial {winner['trial']}"  # "training run 10" when a training run won
        return (
            f"best: {name}, {fmt_value(winner['median'], unit)} against the default's "
            f"{fmt_value(confirmed_default, unit)} in the confirmation round: {describe_verdict(verdict)}"
        )
    return "best: the default settings" if notes else None


def counted(summary: dict) -> str:
    """The trials a study ran, as the terminal, the HTML page and curve.png all quote them (summary.json's):
    "70 trials run (79 proposed)"."""
    run, proposed = summary["trials_run"], summary["trials"]
    return f"{run} trials run" + (f" ({proposed} proposed)" if proposed != run else "")


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def print_outcome(console: Console, summary: dict, best_doc: dict, out: Path) -> None:
    unit = summary["objective"].get("unit")
    console.print(
        f"\n[bold]study {summary['study']}[/bold]: {counted(summary)}"
        + (f", {summary['training_runs']} training runs" if summary["training_runs"] else "")
        + f", {fmt_time(summary['tuning_time_s'])} of tuning; stopped: {summary['stopped_because']}"
    )
    runs = summary.get("application_runs")  # summaries written before it lack it
    if isinstance(runs, dict) and all(isinstance(runs.get(k), int) for k in ("default", "training", "trials")):
        console.print(
            f"application runs: {runs['default'] + runs['training'] + runs['trials']} to search "
            f"(default {runs['default']}, training {runs['training']}, trials {runs['trials']}), "
            f"{runs.get('confirmation', 0)} to confirm"
        )
    console.print(
        f"default settings: {fmt_value(summary['default'], unit)} (median of the default's "
        f"{summary.get('default_runs', summary['baseline_runs'])} runs)"
    )
    line = best_line(
        summary.get("winner"), summary.get("verdict"), summary.get("confirmed_default"), unit, summary.get("notes")
    )
    if line:
        console.print(line)
    flat = _flat(best_doc)
    console.print(f"best settings ({out / 'best.json'}):" + ("" if flat else " the default settings"))
    for k, v in flat.items():
        console.print(f"  {k} = {json.dumps(v)}")
    inert = best_doc.get("meta", {}).get("same_as_default")
    if inert:
        console.print(
            f"  [dim]left out, as they took effect as in the default: "
            f"{', '.join(f'{k}={json.dumps(v)}' for k, v in inert.items())}[/dim]"
        )
    r = summary["roti"]
    console.print(describe_roti(r["unit"], r["peak"], r["peak_at_s"], r["final"], summary.get("roti_reason")))
    k = summary.get("kernel")
    if k and k.get("speedup"):
        w = k["roti_without_kernel"]
        console.print(
            f"kernel: one evaluation {k['evaluation_s']['kernel']:.3g} s against "
            f"{k['evaluation_s']['application']:.3g} s for the application ({k['speedup']:.1f}x); RoTI peak "
            f"{_num(k['roti']['peak'])} with the kernel, {_num(w['peak'])} had the search run the "
            f"application ({r['unit']})"
        )
    v = summary["viability"]
    if v["runs"] is not None:
        console.print(f"viability: tuning pays for itself after {v['runs']} production run(s) ({v['reason']})")
    else:
        console.print(f"viability: none ({v['reason']})")
    life = summary.get("lifecycle")
    if life and life.get("planned_runs"):
        saved = life["saved_at_planned_s"]
        console.print(
            f"lifecycle: over the {life['planned_runs']:,} planned production runs, tuning "
            f"{'saves' if saved >= 0 else 'costs'} {fmt_time(abs(saved))} in all"
        )
    console.print(f"results: {out}/ (best.json, trials.csv, curve.png, summary.json, report.html)")


def _flat(doc: dict) -> dict:
    """{"layer.knob": value} of the groups for every file (best.json is validated when written)."""
    out = {}
    for group in doc.get("groups", []):
        if "file" in group or "dataset" in group:
            continue
        for layer in ("hdf5", "mpiio", "lustre", "ompio", "pnetcdf"):
            for name, value in group.get(layer, {}).items():
                out[f"{layer}.{name}"] = value
    return out
