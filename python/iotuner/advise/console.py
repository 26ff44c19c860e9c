"""The advice on a terminal (rich)."""

from __future__ import annotations

import json

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..render import indented

STYLE = {"high": "bold red", "warn": "yellow", "info": "cyan", "ok": "green"}


def _value(v) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def print_advice(advice: dict, console: Console, *, verbose: bool = False) -> None:
    job, inp, s = advice["job"], advice["input"], advice["summary"]
    what = {
        "darshan": f"Darshan log (format {inp.get('format_version')}{', DXT' if inp.get('dxt') else ''})",
        "run-report": "iotuner run report",
    }.get(inp["type"], inp["type"])
    nodes = f", {job['nodes']} node(s) ({job['nodes_from']})" if job.get("nodes") else ""
    console.print(
        Text.assemble(
            ("iotuner advise", "bold"),
            f": {inp['path']}: {what}; {job['processes']} "
            f"process(es){nodes}; {job['files_with_data']} file(s) with data",
        )
    )
    for note in job.get("notes", []):
        console.print(Text(f"note: {note}", style="yellow"))
    console.print(Text.assemble(*[(f"{s[lvl]} {lvl}  ", STYLE[lvl]) for lvl in ("high", "warn", "info", "ok")]))
    t = Table(box=box.SIMPLE_HEAD, title="Findings", title_justify="left", show_lines=False)
    t.add_column("level", no_wrap=True)
    t.add_column("code", no_wrap=True)
    t.add_column("finding (evidence)", overflow="fold", ratio=3)
    t.add_column("recommendation", overflow="fold", ratio=2)
    for f in advice["findings"]:
        if f["level"] == "ok" and not verbose:
            continue
        files = f.get("files") or []
        where = f"\nfiles: {', '.join(files[:3])}{' ...' if len(files) > 3 else ''}" if files and verbose else ""
        rec = f["recommendation"] or ""
        left_out = f.get("left_out") or {}
        kept = {k: v for k, v in (f.get("knobs") or {}).items() if k not in left_out}
        if kept:
            rec += "\n-> " + ", ".join(f"{k}={_value(v)}" for k, v in kept.items())
        for k, why in left_out.items():
            rec += f"\n(not {k}={_value(f['knobs'][k])}: {why})"
        t.add_row(Text(f["level"], style=STYLE[f["level"]]), Text(f["code"]), Text(f["message"] + where), Text(rec))
    console.print(t)
    if not verbose and s["ok"]:
        console.print(Text(f"({s['ok']} ok finding(s) hidden; --verbose shows them and the files)", style="dim"))
    knobs = advice["fixes"]["knobs"]
    per_dataset = [
        (f["code"], g) for f in advice["findings"] if f["level"] != "ok" for g in f.get("dataset_groups") or []
    ]
    if knobs or per_dataset:
        console.print(Text("Settings that address them (the fixes document):", style="bold"))
        for k in knobs:
            console.print(
                indented(f"{k['knob']} = {_value(k['value'])}  (files {k['files'] or 'all'}; from {k['from']})", 2)
            )
        for code, g in per_dataset:
            for layer, values in g.items():
                for name, value in values.items() if isinstance(values, dict) else []:
                    console.print(
                        indented(
                            f"{layer}.{name} = {_value(value)}  (files {g['file']}, dataset {g['dataset']}; "
                            f"from {code})",
                            2,
                        )
                    )
        for c in advice["fixes"]["conflicts"]:
            console.print(
                indented(
                    Text(
                        f"left out: {c['knob']} = {_value(c['dropped'])} from {c['dropped_from']}: {c['why']}",
                        style="dim",
                    ),
                    2,
                )
            )
    print_recommendations(advice, console, verbose=verbose)
    if advice["code_changes"]:
        console.print(Text("Needs code changes (not settings):", style="bold"))
        for c in advice["code_changes"]:
            console.print(indented(f"[{c['code']}] {c['change']}", 2))
    if verbose:
        for chain in advice["smartio"]:
            ins = ", ".join(f"{k}={v}" for k, v in chain["insights"].items() if k not in ("identity",))
            console.print(Text(f"SmartIO insights of {chain['identity']}: {ins}", style="dim"))
        for na in advice.get("not_applied", []):
            where = f" ({na['identity']})" if na.get("identity") else ""
            console.print(Text(f"{na['status']}: {na['source']}{where}: {na['reason']}", style="dim"))


def print_recommendations(advice: dict, console: Console, *, verbose: bool = False) -> None:
    """The engine's ranked recommendations: settings, predicted effect, confidence, what backs them."""
    recs = advice.get("recommendations") or []
    model = advice.get("model") or {}
    if not recs:
        console.print(Text("No recommendation: nothing to change was found.", style="bold"))
    else:
        t = Table(box=box.SIMPLE_HEAD, title="Recommendations (the first is written by -o)", title_justify="left")
        t.add_column("#", justify="right", no_wrap=True)
        t.add_column("settings", overflow="fold", ratio=3)
        t.add_column("predicted", justify="right", no_wrap=True)
        t.add_column("confidence", no_wrap=True)
        t.add_column("from", overflow="fold", ratio=2)
        for r in recs[: None if verbose else 5]:
            effect = r["predicted"].get("effect")
            t.add_row(
                str(r["rank"]),
                Text(", ".join(f"{k}={_value(v)}" for k, v in r["settings"].items())),
                (f"{effect:.2f}x" + ("*" if r["predicted"].get("not_priced") else "")) if effect is not None else "-",
                Text(
                    r["confidence"]["level"], style={"high": "green", "low": "yellow"}.get(r["confidence"]["level"], "")
                ),
                Text(", ".join(r["sources"])),
            )
        console.print(t)
        if any(r["predicted"].get("not_priced") for r in recs[: None if verbose else 5]):
            console.print(Text("* the model does not price the chunk shape: the hints' effect alone", style="dim"))
    if model.get("status") != "evaluated":
        console.print(Text(f"performance model not evaluated: {model.get('reason')}", style="dim"))
