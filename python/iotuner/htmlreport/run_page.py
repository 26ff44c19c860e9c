"""The page of a run report: phases over time per file with bandwidth, the
settings requested / effective / dropped with reasons, and in smart mode the
insights -> rules -> settings chain per learned phase and the feedback."""

from __future__ import annotations

from pathlib import Path

from ..render import fmt_bw, fmt_bytes, fmt_seconds
from ..run_report import Report
from . import svg
from .page import cards, document, e, fired_rules, table, value

START_KEYS = ("start_s", "started_s", "start_time_s", "open_s", "t_start_s")  # a future runtime may record one


def _start(phase: dict) -> float | None:
    for k in START_KEYS:
        if isinstance(phase.get(k), (int, float)):
            return float(phase[k])
    return None


def _timeline(rep: Report) -> str:
    phases = rep.data_phases()
    if not phases:
        return "<p>No file I/O was seen.</p>"
    files = list(dict.fromkeys(p["file"] for p in phases))
    bws = [p.get("bandwidth_mib_s") or 0 for p in phases]
    lo, hi = min(bws), max(bws)
    timed = all(_start(p) is not None for p in phases)
    bars, t = [], 0.0
    for p in phases:
        start = _start(p) if timed else t
        end = start + (p.get("wall_time_s") or 0)
        t = end
        bars.append(
            (
                files.index(p["file"]),
                start,
                end,
                svg.color_scale(p.get("bandwidth_mib_s") or 0, lo, hi),
                f"phase {p['id']}: {fmt_bytes(p['bytes_written'] + p['bytes_read'])} in "
                f"{fmt_seconds(p.get('wall_time_s') or 0)}, {fmt_bw(p.get('bandwidth_mib_s') or 0)}",
            )
        )
    out = svg.timeline(
        "Phases per file (colour: bandwidth, red slow to green fast)",
        [Path(f).name for f in files],
        bars,
        "time from the run's first phase" if timed else "phases one after the other",
    )
    if not timed:
        out += (
            '<p class="note">This report has no phase start times: phases are drawn one after the other in '
            "their order, each as long as its wall time (open to close, slowest rank).</p>"
        )
    out += svg.hbars(
        "Bandwidth per phase",
        [
            (f"#{p['id']} {Path(p['file']).name}", p.get("bandwidth_mib_s") or 0, fmt_bw(p.get("bandwidth_mib_s") or 0))
            for p in phases[:40]
        ],
        "MiB/s",
    )
    return out


def _settings(rep: Report) -> str:
    rows: dict[tuple, list[int]] = {}
    for c in rep.checks():
        key = (
            c["layer"],
            c["knob"],
            c.get("dataset", ""),
            c.get("requested"),
            c.get("effective"),
            c["status"],
            c.get("reason") or "",
        )
        rows.setdefault(key, []).append(c["phase"])
    for c in rep.without_phase():
        rows.setdefault((c["layer"], c["knob"], "", c["requested"], None, c["status"], c["reason"]), [])
    if not rows:
        return "<p>No settings were requested.</p>"
    out = []
    for (layer, knob, ds, req, eff, status, why), phases in rows.items():
        ids = ",".join(str(i) for i in sorted(set(phases))[:12]) + ("..." if len(set(phases)) > 12 else "") or "-"
        out.append(
            [
                e(ids),
                f"<code>{e(layer)}.{e(knob)}</code>" + (f" [{e(ds)}]" if ds else ""),
                e(req),
                e(eff if eff is not None else "-"),
                f'<span class="st-{e(status)}">{e(status.replace("_", " "))}</span>',
                e(why),
            ]
        )
    return table(
        ["phases", "knob", "requested", "effective", "status", "why"],
        out,
        widths=["9%", "20%", "13%", "13%", "10%", "35%"],
    )


def _smart(rep: Report) -> str:
    smart = rep.data.get("smart")
    if not smart:
        return ""
    out = ["<h2>Smart mode</h2>"]
    rows = []
    for p in smart.get("phases", []):
        ref = p.get("reference_mib_s")
        vs = (p.get("bandwidth_mib_s") or 0) / ref if ref and p.get("role") != "learn" else None
        pred = p.get("prediction") or {}
        rows.append(
            [
                e(Path(p.get("identity", "")).name),
                e(p.get("occurrence")),
                e(p.get("role")),
                e(p.get("rules_applied") or ""),
                e(fmt_bw(p.get("bandwidth_mib_s") or 0)),
                e(f"{vs:.2f}x" if vs else ""),
                e(f"{pred.get('calls', 0)} ({pred.get('method', '-')})"),
                e(p.get("feedback") or ""),
            ]
        )
    out.append(
        table(
            ["phase", "#", "role", "rules", "bandwidth", "vs reference", "predicted calls", "feedback"],
            rows,
            widths=["16%", "5%", "9%", "8%", "11%", "9%", "12%", "30%"],
        )
    )
    for p in smart.get("phases", []):
        if p.get("role") != "learn" or not p.get("insights"):
            continue
        ins = p["insights"]
        out.append(f'<h3 class="mono">{e(p.get("identity"))}: learned in phase {e(p.get("occurrence"))}</h3>')
        out.append('<p class="note">insights &rarr; rules &rarr; settings for the phases that recur</p>')
        out.append(
            table(
                ["insight", "value"],
                [[e(k), e(value(k, v))] for k, v in ins.items() if v not in (None, "unknown")],
                widths=["35%", "65%"],
            )
        )
        rules = p.get("rules") or {}
        out.append(fired_rules(rules.get("fired", [])))
        sets = rules.get("settings") or {}
        out.append(f"<p>settings: <code>{e(', '.join(f'{k}={v}' for k, v in sets.items()) or 'none')}</code></p>")
    decisions = [p for p in smart.get("phases", []) if p.get("feedback")]
    if decisions:
        out.append(
            "<h3>Feedback decisions</h3><ul>"
            + "".join(
                f"<li>{e(Path(p.get('identity', '')).name)} #{e(p.get('occurrence'))} ({e(p.get('role'))}): "
                f"{e(p['feedback'])}</li>"
                for p in decisions
            )
            + "</ul>"
        )
    return "".join(out)


def render(rep: Report, source: str) -> str:
    run, tot = rep.run, rep.totals
    phases = rep.data_phases()
    cards_html = cards(
        [
            ("ranks", str(run.get("ranks"))),
            ("nodes", str(run.get("nodes"))),
            ("phases with data", str(len(phases))),
            ("written", fmt_bytes(tot.get("bytes_written", 0))),
            ("read", fmt_bytes(tot.get("bytes_read", 0))),
            ("write bandwidth", fmt_bw(tot.get("write_bandwidth_mib_s", 0))),
            ("time in I/O phases", fmt_seconds(tot.get("write_time_s", 0) + tot.get("read_time_s", 0))),
            ("of it in I/O calls", fmt_seconds(tot.get("io_time_s", 0))),
            ("run time", fmt_seconds(run.get("wall_time_s") or 0)),
        ]
    )
    rows = []
    for p in phases:
        amp = p.get("write_amplification")
        rows.append(
            [
                e(p["id"]),
                f'<span class="mono">{e(p["file"])}</span>',
                e(p["kind"] + (f"/{p['driver']}" if p.get("driver") else "")),
                e(p["ranks"]),
                e(fmt_bytes(p["bytes_written"])),
                e(fmt_bytes(p["bytes_read"])),
                e(fmt_seconds(p.get("wall_time_s") or 0)),
                e(fmt_seconds(p.get("io_time_s") or 0)),
                e(fmt_bw(p.get("bandwidth_mib_s") or 0)),
                e(f"{amp:.1f}x" if amp else "-"),
            ]
        )
    s = rep.settings
    settings_line = {
        "none": "no settings file (measured only)",
        "loaded": f"settings: {s.get('path')}",
        "rejected": f"settings rejected: {s.get('message')}",
    }.get(s.get("status"), s.get("status"))
    body = [
        cards_html,
        f"<p>{e(settings_line)}</p>",
        "<h2>Phases over time</h2>",
        _timeline(rep),
        "<h2>Phases</h2>",
        table(
            ["#", "file", "via", "ranks", "written", "read", "time", "in I/O calls", "bandwidth", "write ampl."],
            rows,
            main=True,
            num={0, 3, 4, 5, 6, 7, 8, 9},
            widths=["5%", "25%", "10%", "6%", "9%", "9%", "8%", "9%", "11%", "8%"],
        ),
        '<p class="note">time: from the phase\'s first open to its last close (slowest rank); in I/O calls: the '
        "slowest rank's time inside its POSIX I/O calls. A phase whose time is mostly outside I/O calls spent "
        "it in HDF5, MPI (collective buffering's exchanges) or the application between calls, not in slow "
        "I/O.</p>",
        "<h2>Settings: requested, effective, why</h2>",
        _settings(rep),
        _smart(rep),
    ]
    for w in rep.warnings:
        body.append(f'<p class="note">warning: {e(w)}</p>')
    mpi = " ".join((run.get("mpi_library") or "none").split())
    sub = (
        f"run report <span class=mono>{e(source)}</span>: {e(' '.join(run.get('command') or []))}<br>"
        f"MPI: {e(mpi)}; HDF5: {e(run.get('hdf5_library') or 'not used')}"
    )
    kind = "smart" if rep.data.get("smart") else "run"
    return document(
        ("Smart-mode run: " if kind == "smart" else "Run: ") + Path((run.get("command") or ["?"])[0]).name,
        sub,
        "".join(body),
        kind,
    )
