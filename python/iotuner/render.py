"""Terminal tables for run reports."""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .report import Report

STATUS_STYLE = {"applied": "green", "changed": "yellow", "dropped": "red", "not_applicable": "dim",
                "failed": "bold red"}


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    if s < 120:
        return f"{s:.2f} s"
    return f"{s / 60:.1f} min"


def fmt_bw(mib_s: float) -> str:
    return f"{mib_s / 1024:.2f} GiB/s" if mib_s >= 1024 else f"{mib_s:.1f} MiB/s"


def _short(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def cells(*values: object) -> list[Text]:
    """Plain text cells: file and dataset names may contain [brackets]."""
    return [v if isinstance(v, Text) else Text(str(v)) for v in values]


UNWRAPPED = 1 << 16  # columns of a console that is not a terminal: a record stays one line for grep and awk


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich exits with status 1 here; `iotuner ... | head` is not an error: the CLI ends quietly with 0."""
        self.quiet = True
        raise BrokenPipeError


def console_for_output(file: TextIO | None = None) -> Console:
    """For stdout (or file): the terminal's width on a terminal; piped or redirected, no wrapping at all (one
    record per line, no name cut mid-token), whatever COLUMNS says."""
    import sys
    stream = file or sys.stdout
    return _Console(file=file, highlight=False, width=None if stream.isatty() else UNWRAPPED)


def _file_cell(p: dict, cwd: str | None) -> str:
    """The file; a file-per-process phase by its name pattern and how many files it has."""
    files = p.get("files", 1)
    if p.get("folded"):
        return f"{_short(p['file'], cwd)} ({files} more files, one after another)"
    if files > 1 and p.get("identity"):
        return f"{_short(p['identity'], cwd)} ({files} files)"
    return _short(p["file"], cwd)


def phase_table(report: Report) -> Table:
    cwd = report.run.get("cwd")
    t = Table(title="I/O phases (a file from its first open to its last close, on every rank that opened it; "
                    "the application's data)",
              box=box.SIMPLE_HEAD,
              title_justify="left")
    for col, just in (("#", "right"), ("file", "left"), ("via", "left"), ("ranks", "right"), ("written", "right"),
                      ("read", "right"), ("time", "right"), ("in I/O calls", "right"), ("bandwidth", "right"),
                      ("to the file system", "right")):
        if col == "file":
            t.add_column(col, justify=just, min_width=16, overflow="fold")
        else:
            t.add_column(col, justify=just, no_wrap=True)
    for p in report.data_phases():
        via = p["kind"] + (f"/{p['driver']}" if p.get("driver") else "")
        posix = p["posix"]
        fs = f"W {fmt_bytes(posix['bytes_written'])}" + (f" R {fmt_bytes(posix['bytes_read'])}" if posix["bytes_read"]
                                                        else "")
        amp = p.get("write_amplification")
        fs_cell = Text(fs + (f" ({amp:.1f}x the data)" if amp and amp >= 1.5 else ""),
                       style="yellow" if amp and amp >= 1.5 else "")
        t.add_row(*cells(p["id"], _file_cell(p, cwd), via, p["ranks"], fmt_bytes(p["bytes_written"]),
                          fmt_bytes(p["bytes_read"]), fmt_seconds(p["wall_time_s"]), fmt_seconds(p["io_time_s"]),
                          fmt_bw(p["bandwidth_mib_s"]), fs_cell))
    empty = report.empty_phases()
    if empty:  # listed too, in one line: the numbering has no unexplained gaps
        files = sorted({_short(p["file"], cwd) for p in empty})
        named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        t.add_row(*cells(_phase_ranges([p["id"] for p in empty]),
                          Text(f"{len(empty)} phase(s) that moved no data ({named})", style="dim"),
                          "", "", "", "", "", "", "", ""))
    tot = report.totals
    t.add_section()
    bw = [f"{d} {fmt_bw(tot[f'{key}_bandwidth_mib_s'])}" for d, key in (("W", "write"), ("R", "read"))
          if tot[f"bytes_{'written' if key == 'write' else 'read'}"]]
    t.add_row(*cells("", "total", "", "", fmt_bytes(tot["bytes_written"]), fmt_bytes(tot["bytes_read"]),
                      fmt_seconds(tot["write_time_s"] + tot["read_time_s"]), fmt_seconds(tot["io_time_s"]),
                      "  ".join(bw), f"W {fmt_bytes(tot['posix_bytes_written'])}"))
    return t


def _phase_ranges(ids: list[int]) -> str:
    ids = sorted(set(ids))
    parts, start = [], None
    for i, v in enumerate(ids):
        if start is None:
            start = v
        if i + 1 == len(ids) or ids[i + 1] != v + 1:
            parts.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ",".join(parts)


def settings_table(report: Report) -> Table | None:
    """One row per distinct outcome of a knob, with the phases it happened in."""
    rows: dict[tuple, list[int]] = {}
    for c in report.checks():
        key = (c["layer"], c["knob"], c.get("dataset", ""), c["requested"], c["effective"], c["status"],
               c["reason"] or "")
        rows.setdefault(key, []).append(c["phase"])
    if not rows:
        return None
    t = Table(title="Settings: requested vs effective (read back after applying)", box=box.SIMPLE_HEAD,
              title_justify="left")
    for col in ("phases", "knob", "requested", "effective", "status", "why"):
        t.add_column(col, overflow="fold")
    for (layer, knob, dataset, req, eff, status, reason), phases in rows.items():
        name = f"{layer}.{knob}" + (f" [{dataset}]" if dataset else "")
        t.add_row(*cells(_phase_ranges(phases), name, req, eff if eff is not None else "-",
                          Text(status.replace("_", " "), style=STATUS_STYLE.get(status, "")), reason))
    return t


def print_report(report: Report, console: Console | None = None, *, live: bool = False) -> None:
    """live: the job just ran here, and its stderr showed the warnings the runtime printed: not again."""
    console = console or Console()
    run = report.run
    s = report.settings
    settings_line = {"none": Text("no settings file (measured only)"),
                     "loaded": Text(str(s.get("path"))),
                     "rejected": Text.assemble(("rejected", "red"), f": {s.get('message')}")}.get(
                         s["status"], Text(s["status"]))
    mpi = " ".join((run.get("mpi_library") or "none").split())
    console.print(Text.assemble(("iotuner run", "bold"), f": {run['ranks']} rank(s) on {run['nodes']} node(s); "
                                f"MPI: {mpi}; HDF5: {run.get('hdf5_library') or 'not used'}"))
    if run.get("job_id"):
        console.print(Text(f"job: user {run.get('user')}, {run.get('scheduler') or 'batch'} job {run['job_id']}"))
    console.print(Text("settings: ") + settings_line)
    sources = run.get("hint_sources") or {}
    if sources:  # the MPI library applies these itself, before iotuner's settings
        console.print(Text("hints from the environment: " + ", ".join(f"{k}={v}" for k, v in sources.items()),
                           style="yellow"))
    if report.phases:
        console.print(phase_table(report))
    else:
        console.print("no file I/O was seen")
    table = settings_table(report)
    if table is not None:
        console.print(table)
    for w in (report.warnings_not_printed() if live else report.warnings):
        if w != s.get("message"):
            console.print(Text.assemble(("warning: ", "yellow"), w))
