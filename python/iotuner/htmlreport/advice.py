"""The page of an advice (iotuner advise --json): findings by level with their evidence."""

from __future__ import annotations

import json
from pathlib import Path

from .page import cards, document, e, fired_rules, level, table, value

LEVEL_TITLES = {
    "high": "High: fix these first",
    "warn": "Warnings",
    "info": "Information and SmartIO's settings",
    "ok": "Fine",
}


def _evidence(ev: dict) -> str:
    items = []
    for k, v in ev.items():
        if k in ("insights", "detail") or v is None:
            continue
        items.append(f"<li><code>{e(k)}</code> {e(value(k, v))}</li>")
    return f'<ul class="ev">{"".join(items)}</ul>' if items else ""


def _why(conflict: dict) -> str:
    """Why a fix was left out (advice of an older iotuner has no "why": the winner's value)."""
    return conflict.get("why") or f"{conflict['kept_from']} sets {json.dumps(conflict['kept'])}"


def _knobs(knobs: dict, left_out: dict) -> str:
    return "".join(
        f"<div><code>{e(k)} = {e(json.dumps(v))}</code>"
        + (f'<span class="note"> left out: {e(left_out[k])}</span>' if k in left_out else "")
        + "</div>"
        for k, v in (knobs or {}).items()
    )


def render(advice: dict) -> str:
    inp, job, s = advice["input"], advice["job"], advice["summary"]
    kind = {"darshan": "Darshan log", "run-report": "iotuner run report"}.get(inp["type"], inp["type"])
    body = [
        cards(
            [
                ("high", str(s["high"])),
                ("warn", str(s["warn"])),
                ("info", str(s["info"])),
                ("ok", str(s["ok"])),
                ("processes", str(job["processes"])),
                ("files with data", str(job["files_with_data"])),
                ("exit code", str(advice["exit_code"])),
            ]
        )
    ]
    if job.get("notes"):
        body.append("".join(f'<p class="note">note: {e(n)}</p>' for n in job["notes"]))
    rows = []
    for f in advice["findings"]:
        files = f.get("files") or []
        flist = "".join(f"<div class=mono>{e(p)}</div>" for p in files[:5]) + (
            f'<div class="note">and {len(files) - 5} more</div>' if len(files) > 5 else ""
        )
        rec = e(f.get("recommendation") or "") + _knobs(f.get("knobs"), f.get("left_out") or {})
        if f.get("code_change") and f["level"] != "ok":
            rec += f'<div class="note">code change: {e(f["code_change"])}</div>'
        rows.append(
            [
                level(f["level"]),
                f'<code>{e(f["code"])}</code><div class="note">{e(f["source"])}</div>',
                f"<b>{e(f['title'])}</b><div>{e(f['message'])}</div><details><summary>evidence</summary>"
                f"{_evidence(f.get('evidence') or {})}</details>",
                flist,
                rec,
            ]
        )
    body.append("<h2>Findings</h2>")
    body.append(
        table(
            ["level", "code", "finding and evidence", "files", "recommendation"],
            rows,
            main=True,
            widths=["78px", "14%", "34%", "18%", "22%"],
        )
        if rows
        else "<p>No findings.</p>"
    )
    fx = advice["fixes"]
    body.append("<h2>Settings that address the findings</h2>")
    if fx["knobs"]:
        body.append(
            table(
                ["knob", "value", "files", "from"],
                [
                    [
                        f"<code>{e(k['knob'])}</code>",
                        f"<code>{e(json.dumps(k['value']))}</code>",
                        e(k["files"] or "all"),
                        f"<code>{e(k['from'])}</code>",
                    ]
                    for k in fx["knobs"]
                ],
                widths=["30%", "25%", "25%", "20%"],
            )
        )
        body.append(
            "<details><summary>the settings document (iotuner run --config, iotuner tune --baseline)"
            f'</summary><pre class="mono">{e(json.dumps(fx["document"], indent=2))}</pre></details>'
        )
    else:
        body.append("<p>None of the findings maps to a knob.</p>")
    if fx.get("conflicts"):
        body.append(
            "".join(
                f'<p class="note">left out: {e(c["knob"])} = {e(json.dumps(c["dropped"]))} from '
                f"{e(c['dropped_from'])}: {e(_why(c))}</p>"
                for c in fx["conflicts"]
            )
        )
    if advice["code_changes"]:
        body.append(
            "<h2>Needs code changes</h2>"
            + table(
                ["code", "change", "files"],
                [
                    [f"<code>{e(c['code'])}</code>", e(c["change"]), "<br>".join(e(p) for p in c["files"])]
                    for c in advice["code_changes"]
                ],
                widths=["18%", "50%", "32%"],
            )
        )
    if advice["smartio"]:
        body.append("<h2>SmartIO: insights &rarr; rules &rarr; settings</h2>")
        for ch in advice["smartio"]:
            ins = ch["insights"]
            body.append(f'<h3 class="mono">{e(ch["identity"])}</h3>')
            body.append(
                table(
                    ["insight", "value", "from"],
                    [
                        [e(k), e(value(k, v)), e(ch["sources"].get(k) or ch["sources"].get("*") or "")]
                        for k, v in ins.items()
                        if k != "identity"
                    ],
                    widths=["25%", "35%", "40%"],
                )
            )
            fired = ch.get("fired") or []
            body.append(fired_rules(fired) if fired else f'<p class="note">{e(ch.get("error") or "no rule fired")}</p>')
    if advice["not_evaluated"]:
        body.append(
            "<h2>Not evaluated</h2>"
            + table(
                ["check", "why"],
                [[f"<code>{e(n['code'])}</code>", e(n["reason"])] for n in advice["not_evaluated"]],
                widths=["25%", "75%"],
            )
        )
    body.append(
        "<h2>Thresholds</h2>"
        + table(
            ["name", "value"],
            [[f"<code>{e(k)}</code>", e(value(k, v))] for k, v in advice["thresholds"].items()],
            widths=["50%", "50%"],
        )
    )
    sub = (
        f"{e(kind)} <span class=mono>{e(inp['path'])}</span>: {job['processes']} process(es)"
        + (f", {job['nodes']} node(s)" if job.get("nodes") else "")
        + f"; advice of iotuner {e(advice['iotuner'])}"
    )
    return document(f"I/O advice: {Path(inp['path']).name}", sub, "".join(body), "advice")
