"""`iotuner smart`: run with SmartIO's runtime tuning, and explain a run's decisions.

The decisions are made in the runtime (C core, libiotuner.so); `--explain`
re-runs the same core's rules through ctypes on the insights a report holds.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from . import native, render, run_report, runner
from .destinations import forget_if_unused, report_destination
from .recommend import insights


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}%"


# the phases that ran with the application's own settings (unchanged: none of the rules' settings took effect)
DEFAULT_ROLES = ("learn", "probe", "default", "off", "unchanged")


def _identity_key(p: dict) -> tuple:
    return p["identity"], p.get("opened"), p.get("scope")


def default_references(phases: list[dict]) -> dict[tuple, tuple[float, bool]]:
    """Per identity, the bandwidth its phases reach with the default settings: the median of those phases
    that moved data, leaving out the identity's first one when there are others (a first phase can be a
    cold start: memory and files touched for the first time). (bandwidth, only the first phase) per key."""
    seen: dict[tuple, list[tuple[int, float]]] = {}
    for i, p in enumerate(phases):
        if p["role"] in DEFAULT_ROLES and p["bandwidth_mib_s"] > 0:
            seen.setdefault(_identity_key(p), []).append((i, p["bandwidth_mib_s"]))
    first = {}
    for i, p in enumerate(phases):
        first.setdefault(_identity_key(p), i)
    out = {}
    for key, runs in seen.items():
        warm = [bw for i, bw in runs if i != first[key]]
        out[key] = (statistics.median(warm), False) if warm else (runs[0][1], True)
    return out


def _label(p: dict) -> str:
    how = p.get("opened")
    if p.get("scope") == "independent":
        how = f"{how}, one rank" if how else "one rank"
    return Path(p["identity"]).name + (f" ({how})" if how else "")


def phase_table(smart: dict) -> render.FittedTable:
    refs = default_references(smart["phases"])
    cold = False
    rows = []
    for p in smart["phases"]:
        pred = p["prediction"]
        scored = pred["hits"] + pred["misses"]
        hit = pred["hits"] / scored if scored else None
        ref, first_only = refs.get(_identity_key(p), (0.0, False))
        vs = ""
        if p["role"] not in DEFAULT_ROLES and ref > 0:
            vs = f"{p['bandwidth_mib_s'] / ref:.2f}x" + ("*" if first_only else "")
            cold |= first_only
        label = p["role"] + (f" ({p['rules_applied']})" if p.get("rules_applied") else "")
        role = Text(
            label,
            style={
                "learn": "cyan",
                "optimized": "green",
                "probe": "magenta",
                "isolate": "magenta",
                "default": "yellow",
                "off": "red",
                "unchanged": "yellow",
            }.get(p["role"], ""),
        )
        phase = p.get("phase")
        rows.append(
            render.cells(
                str(phase) if phase is not None else "-",
                _label(p),
                str(p["occurrence"]),
                role,
                f"{pred['calls']} ({pred['method']})" if pred["calls"] else "-",
                _pct(hit),
                render.fmt_bw(p["bandwidth_mib_s"]) if p["bandwidth_mib_s"] else "-",
                vs,
                p.get("feedback") or "",
            )
        )
    header = [
        ("#", "right"),
        ("file", "left"),
        ("n", "right"),
        ("role", "left"),
        ("predicted", "right"),
        ("hit", "right"),
        ("bandwidth", "right"),
        ("vs default", "right"),
        ("feedback", "left"),
    ]
    caption = (
        ("* against the file's first phase, the only one with the default settings: it may have been a cold start")
        if cold
        else None
    )
    return render.FittedTable(
        "Smart mode, per phase (learned in the first phase of a file, applied to the ones that recur)",
        header,
        rows,
        wrap=("role", "file", "feedback"),
        caption=caption,
    )


INSIGHT_LABELS = (
    ("write_transfer", "writes"),
    ("read_transfer", "reads"),
    ("transfer_size", "transfer size"),
    ("write_locality", "write locality"),
    ("read_locality", "read locality"),
    ("files", "files"),
    ("bytes_written", "bytes written"),
    ("bytes_read", "bytes read"),
    ("file_system", "file system"),
)


def _insight_text(insights: dict) -> str:
    parts = []
    for key, label in INSIGHT_LABELS:
        v = insights.get(key)
        if v in (None, "unknown", "none", 0) and key not in ("files",):
            continue
        if key in ("transfer_size", "bytes_written", "bytes_read") and isinstance(v, int):
            v = render.fmt_bytes(v)
        parts.append(f"{label}: {v}")
    return "; ".join(parts)


def print_chain(console: Console, phase: dict, decided: dict) -> None:
    """Insights -> rules -> settings of one learned phase."""
    console.print(Text.assemble(("\n" + phase["identity"], "bold"), " (learned in its first phase)"))
    source = {
        "rule": "SmartIO's rule for its first call",
        "repeat": "the phase just seen",
        "report": "the run report's counters and access patterns",
    }.get(phase.get("insights_from", ""), "its calls")
    console.print(
        render.indented(
            f"insights (of its recurrence as predicted from {source}): " + _insight_text(phase["insights"]), 2
        )
    )
    for f in decided["fired"]:
        sets = ", ".join(f"{k}={v}" for k, v in (f.get("set") or {}).items()) or "nothing (keep the default)"
        console.print(render.indented(Text(f"rule {f['rule']:>2} {f.get('title', '')}", style="green"), 2))
        console.print(render.indented(Text(f"{f['reason']} -> sets {sets}", style="dim"), 10))
    settings = decided["settings"]
    console.print(
        render.indented(
            "settings for the recurring phases: "
            + (", ".join(f"{k}={v}" for k, v in settings.items()) if settings else "none"),
            2,
        )
    )


METHODS = (
    ("rule", "SmartIO's rule for its first call (3.1.2)"),
    ("repeat", "the last phase under the same settings that began with the same call"),
    ("context", "the phase that most often followed one like the latest (a cycle of phases)"),
)


def print_predictions(console: Console, smart: dict, per_phase: bool = True) -> None:
    """The totals per method, and which method predicted each phase and how well. Each phase takes the
    method with the best record on the earlier phases of its file (docs/smart.md)."""
    pred = smart["prediction"]
    console.print(
        f"\nprediction: {pred['hits']} of {pred['hits'] + pred['misses']} predicted calls occurred "
        f"({_pct(pred['hit_fraction'])}), over {pred['predictions']} predictions"
    )
    for method, what in METHODS:
        m = pred.get(method)
        if m and m["predictions"]:
            console.print(f"  {m['predictions']} by {what}: {_pct(m['hit_fraction'])} of their calls occurred")
    for p in smart["phases"] if per_phase else ():
        pr = p["prediction"]
        phase = p.get("phase")
        head = f"  #{phase if phase is not None else '-'} {_label(p)} {p['occurrence']}: "
        if pr["calls"]:
            line = f"{pr['calls']} calls predicted by {pr['method']}, {pr['hits']} occurred, {pr['misses']} missed"
        elif p["occurrence"] == 0:
            line = "not predicted: the first phase of its file"
        else:
            line = "not predicted: no earlier phase of its file under these settings"
        console.print(Text(head + line, style="dim"))


def explain(report_path: str, console: Console, rules_table: str | None = None) -> int:
    try:
        rep = run_report.load(report_path)
    except run_report.ReportError as e:
        print(f"iotuner smart --explain: {e}", file=sys.stderr)
        return e.exit_code
    try:
        with console.capture() as page:
            status = _explain(rep, report_path, console, rules_table)
    except run_report.DAMAGE as e:
        print(f"iotuner smart --explain: {run_report.malformed(e, report_path)}", file=sys.stderr)
        return 2
    sys.stdout.write(page.get())
    return status


def _explain(rep: run_report.Report, report_path: str, console: Console, rules_table: str | None) -> int:
    """The insights -> rules -> settings chain of every phase smart mode learns, from the recommendation
    engine's one extraction (iotuner.recommend.insights): smart mode's own insights where the run recorded them,
    else the same insights from the report's counters and access patterns, as `iotuner advise` takes them."""
    smart = rep.data.get("smart")
    units = insights.of_report(rep)
    if not units:
        console.print("no phase was learned in this run" if smart else "no HDF5, PnetCDF or MPI-IO phase to learn")
    status = 0
    recorded = {p["phase"]: p for p in (smart or {}).get("phases", []) if p.get("role") == "learn"}
    for u in units:
        try:
            decided = native.core().rules_explain(u.insights, rules_table)
        except ValueError as e:
            print(f"iotuner smart --explain: {e}", file=sys.stderr)
            return 1
        p = recorded.get(u.phases[0])
        phase = p or {"identity": u.identity, "insights": u.insights, "insights_from": "report"}
        print_chain(console, phase, decided)
        if p is not None and (p.get("rules") or {}).get("settings", {}) != decided["settings"]:
            status = 1  # the run used another rules table, or another iotuner
            console.print(
                Text(
                    f"  the run decided {p['rules']['settings']} (another rules table: {smart['rules_table']})",
                    style="yellow",
                )
            )
    if smart:
        print_predictions(console, smart)
    else:
        console.print(
            Text("(a run without smart mode: the insights are the report's, as advise extracts them)", style="dim")
        )
    return status


def print_summary(console: Console, rep: run_report.Report) -> None:
    smart = rep.data.get("smart")
    if not smart:
        console.print("smart mode made no decision (no HDF5 or MPI-IO file phase was seen)")
        return
    console.print(phase_table(smart))
    for p in smart["phases"]:
        if p["role"] == "learn" and p.get("rules"):
            print_chain(console, p, p["rules"])
    over = smart["overhead"]
    print_predictions(console, smart, per_phase=False)  # the table above has each phase's
    console.print(
        f"overhead: prediction {render.fmt_seconds(over['prediction_s'])}, extraction "
        f"{render.fmt_seconds(over['extraction_s'])}, optimization {render.fmt_seconds(over['optimization_s'])}; "
        f"total {render.fmt_seconds(over['total_s'])} (slowest rank)"
    )


def run(
    command: list[str], *, report_path: str | None, verbose: bool, rules_table: str | None, console: Console
) -> int:

    env = dict(os.environ, IOTUNER_SMART="1")
    if rules_table:
        env["IOTUNER_SMART_RULES"] = os.path.abspath(rules_table)
    target, warning = report_destination(report_path)  # a path it cannot be written to never stops the job
    if warning:
        print(f"iotuner: warning: {warning}", file=sys.stderr)
    try:
        result = runner.run(command, report=target, env=env, verbose=verbose)
    except FileNotFoundError as e:
        print(f"iotuner smart: cannot start '{command[0]}': {e.strerror}", file=sys.stderr)
        return 127
    if result.report is None:
        if warning:
            forget_if_unused(target)
        console.print(f"[yellow]iotuner: {result.report_error}[/yellow]")
    else:
        render.print_report(result.report, console, live=True)
        print_summary(console, result.report)
        if report_path and target is not None:
            console.print(f"report written to {target}")
    if result.exit_message():
        console.print(f"[red]{result.exit_message()}[/red]")
    return result.exit_status
