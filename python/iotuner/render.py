"""Terminal tables for run reports."""

from __future__ import annotations

import re
import sys
from typing import TextIO

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from . import terminal
from .hints import environment_sources
from .run_report import Report

STATUS_STYLE = {
    "applied": "green",
    "changed": "yellow",
    "dropped": "red",
    "not_applicable": "dim",
    "failed": "bold red",
    "not_used": "dim",
    "cannot_apply": "bold red",
}


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


LONGEST_NAME = 60  # a longer file name is shown by its end (the whole name is in --json)


def _short(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1 :]
    return path if len(path) <= LONGEST_NAME else "…" + path[-(LONGEST_NAME - 1) :]


def cells(*values: object) -> list[Text]:
    """Plain text cells: file and dataset names may contain [brackets]."""
    return [v if isinstance(v, Text) else Text(str(v)) for v in values]


_TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich exits with status 1 here; `iotuner ... | head` is not an error: the CLI ends quietly with 0."""
        self.quiet = True
        raise BrokenPipeError

    def _render_buffer(self, buffer) -> str:
        """No line ends in padding: tables pad every row to their width, which a log file or a pager shows."""
        return _TRAILING_BLANKS.sub(r"\1", super()._render_buffer(buffer))


def console_for_output(file: TextIO | None = None) -> Console:
    """For stdout (or file): text that fits the terminal, or COLUMNS (100 when unset) when piped or
    redirected; tables wrap their long cells. The whole data, unwrapped, is in each command's --json."""
    stream = file or sys.stdout
    return _Console(file=file, highlight=False, width=None if stream.isatty() else terminal.piped_width())


def indented(text: Text | str, columns: int) -> Padding:
    """text whose every line, wrapped ones included, starts columns to the right."""
    return Padding(text if isinstance(text, Text) else Text(text), (0, 0, 0, columns))


def _file_cell(p: dict, cwd: str | None) -> str:
    """The file; a file-per-process phase by its name pattern and how many files it has."""
    files = p.get("files", 1)
    if p.get("folded"):
        return f"{_short(p['file'], cwd)} ({files} more files, one after another)"
    if files > 1 and p.get("identity"):
        return f"{_short(p['identity'], cwd)} ({files} files)"
    return _short(p["file"], cwd)


class FittedTable:
    """A table that fits the width it is printed in. Its columns keep their values whole (each as wide as its
    widest value line; a long header wraps instead), except the columns in `wrap`, which wrap or fold their
    cells: the last of them (the main text) takes the width left, the others their own width when there is
    room, else 12 columns. When even that is too wide, columns are one space apart instead of three.
    A row None is a rule."""

    NARROW = 12  # a wrapping column squeezed
    MAIN = 24  # the main text column, at least (when the width allows)

    def __init__(
        self,
        title: str,
        header: list[tuple[str, str]],
        rows: list[list[Text] | None],
        wrap: tuple[str, ...],
        caption: str | None = None,
    ):
        self.title, self.header, self.rows, self.wrap, self.caption = title, header, rows, wrap, caption

    def _width(self, i: int, name: str) -> int:
        widest = max((len(line) for row in self.rows if row for line in row[i].plain.split("\n")), default=0)
        return max(widest, *map(len, name.split()))

    def __rich_console__(self, console: Console, options):
        natural = [self._width(i, name) for i, (name, _) in enumerate(self.header)]
        main = self.wrap[-1] if self.wrap else None
        fixed = sum(w for (name, _), w in zip(self.header, natural) if name not in self.wrap)
        others = sum(w for (name, _), w in zip(self.header, natural) if name in self.wrap and name != main)
        # columns are 3 apart (a space of padding on each side and the box's blank divider), inside blank edges
        gaps = 3 * (len(self.header) - 1) + 2
        room = options.max_width - gaps - fixed
        squeeze = room < others + self.MAIN
        widths = [
            min(w, self.NARROW) if name in self.wrap and (squeeze or name == main) else w
            for (name, _), w in zip(self.header, natural)
        ]
        tight = sum(widths) + gaps > options.max_width
        others_width = sum(w for (name, _), w in zip(self.header, widths) if name != main)
        main_room = options.max_width - others_width - (len(widths) - 1 if tight else gaps)
        if (tight and sum(widths) + len(widths) - 1 > options.max_width) or (
            main is not None
            and main_room
            < min(self.MAIN, self._longest_word(self.header.index(next(h for h in self.header if h[0] == main))))
        ):
            # even one space apart the columns would be cut at the right edge, or the main text would be
            # cut inside its words: a paragraph a row instead
            yield from self._stacked()
            return
        t = Table(
            title=self.title,
            caption=self.caption,
            box=box.SIMPLE_HEAD,
            title_justify="left",
            caption_justify="left",
            pad_edge=False,
            padding=(0, 0) if tight else (0, 1),
        )
        for (name, justify), width in zip(self.header, widths):
            if name == main:
                t.add_column(name, justify=justify, min_width=width, overflow="fold")
            else:
                t.add_column(name, justify=justify, width=width, overflow="fold")
        for row in self.rows:
            if row is None:
                t.add_section()
            else:
                t.add_row(*row)
        yield t

    def _longest_word(self, i: int) -> int:
        return max((len(w) for row in self.rows if row for w in row[i].plain.split()), default=0)

    def _stacked(self):
        """The table for a narrow terminal: a row a paragraph, its whole columns on its first line and each
        wrapping column under it, indented, wrapped between words (a name or a path is never cut)."""
        yield Text(self.title, style="italic")
        main = self.wrap[-1] if self.wrap else None
        for row in self.rows:
            if row is None:
                yield Text("")
                continue
            # each whole column named by its header ("ranks 2"), its lines on one ("W 1 MiB, R 2 MiB")
            whole = [
                Text(f"{name} ") + Text(", ").join(c.copy().split("\n"))
                for (name, _), c in zip(self.header, row)
                if name not in self.wrap and c.plain.strip()
            ]
            yield indented(Text("  ").join(whole), 0) if whole else Text("")
            for (name, _), cell in zip(self.header, row):
                if name in self.wrap and cell.plain.strip():
                    text = cell.copy() if name == main else Text(f"{name}: ") + cell
                    yield indented(text, 4)
        if self.caption:
            yield Text(self.caption)


def phase_table(report: Report) -> FittedTable:
    cwd = report.run.get("cwd")
    rows: list[list[Text] | None] = []
    for p in report.data_phases():
        via = p["kind"] + (f"/{p['driver']}" if p.get("driver") else "")
        posix, buffered = p["posix"], stdio_bytes(p)
        if buffered:  # C library streams: their calls are buffered ones, their system calls unseen
            via = "posix+stdio" if posix["write_calls"] or posix["read_calls"] else "stdio"
        amp = p.get("write_amplification")
        to_fs = _directions(posix["bytes_written"], posix["bytes_read"], fmt_bytes)
        if buffered:
            to_fs = "stdio's not seen" if via == "stdio" else f"{to_fs}\n+ stdio's not seen"
        if amp and amp >= 1.5:
            to_fs += f"\n{amp:.1f}x the data"
        fs_cell = Text(to_fs, style="yellow" if amp and amp >= 1.5 else "")
        rows.append(
            cells(
                p["id"],
                Text.assemble(_file_cell(p, cwd), " ", (via, "dim")),
                p["ranks"],
                _directions(p["bytes_written"], p["bytes_read"], fmt_bytes),
                fmt_seconds(p["wall_time_s"]),
                fmt_seconds(p["io_time_s"]),
                fmt_bw(p["bandwidth_mib_s"]),
                fs_cell,
            )
        )
    empty = report.empty_phases()
    if empty:  # listed too, in one line: the numbering has no unexplained gaps
        files = sorted({_short(p["file"], cwd) for p in empty})
        named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        rows.append(
            cells(
                _phase_ranges([p["id"] for p in empty]),
                Text(f"{len(empty)} phase(s) that moved no data ({named})", style="dim"),
                "",
                "",
                "",
                "",
                "",
                "",
            )
        )
    tot = report.totals
    rows.append(None)
    bw = "\n".join(
        f"{d} {fmt_bw(tot[f'{key}_bandwidth_mib_s'])}"
        for d, key in (("W", "write"), ("R", "read"))
        if tot[f"bytes_{'written' if key == 'write' else 'read'}"]
    )
    rows.append(
        cells(
            "",
            "total",
            "",
            _directions(tot["bytes_written"], tot["bytes_read"], fmt_bytes),
            fmt_seconds(tot["write_time_s"] + tot["read_time_s"]),
            fmt_seconds(tot["io_time_s"]),
            bw,
            f"W {fmt_bytes(tot['posix_bytes_written'])}"
            + ("\n+ stdio's not seen" if any(stdio_bytes(p) for p in report.data_phases()) else ""),
        )
    )
    header = [
        ("#", "right"),
        ("file (via)", "left"),
        ("ranks", "right"),
        ("data", "right"),
        ("time", "right"),
        ("in I/O calls", "right"),
        ("bandwidth", "right"),
        ("to the file system", "right"),
    ]
    return FittedTable(
        "I/O phases (a file from its first open to its last close, on every rank that opened it; "
        "the application's data)",
        header,
        rows,
        wrap=("file (via)",),
    )


def stdio_bytes(phase: dict) -> int:
    """The bytes a phase moved through the C library's streams (fwrite, fprintf, fread, ...): its stdio
    section's (0 in a report before it)."""
    stdio = phase.get("stdio") or {}
    return int(stdio.get("bytes_written", 0) or 0) + int(stdio.get("bytes_read", 0) or 0)


def _directions(written: float, read: float, fmt) -> str:
    """ "W x" and "R y", one a line, leaving out a direction with nothing ("W 0 B" when both are 0)."""
    lines = [f"{d} {fmt(n)}" for d, n in (("W", written), ("R", read)) if n]
    return "\n".join(lines) or f"W {fmt(0)}"


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


def settings_table(report: Report) -> FittedTable | None:
    """One row per distinct outcome of a knob, with the phases it happened in; a requested knob no phase took
    has a row too, with "-" for its phases."""
    rows: dict[tuple, list[int]] = {}
    for c in report.checks():
        key = (
            c["layer"],
            c["knob"],
            c.get("dataset", ""),
            c["requested"],
            c["effective"],
            c["status"],
            c["reason"] or "",
        )
        rows.setdefault(key, []).append(c["phase"])
    for c in report.without_phase():
        rows.setdefault((c["layer"], c["knob"], "", c["requested"], None, c["status"], c["reason"]), [])
    if not rows:
        return None
    lines = []
    for (layer, knob, dataset, req, eff, status, reason), phases in rows.items():
        name = f"{layer}.{knob}" + (f" [{dataset}]" if dataset else "")
        lines.append(
            cells(
                _phase_ranges(phases) or "-",
                name,
                req,
                eff if eff is not None else "-",
                Text(status.replace("_", " "), style=STATUS_STYLE.get(status, "")),
                reason,
            )
        )
    header = [(col, "left") for col in ("phases", "knob", "requested", "effective", "status", "why")]
    return FittedTable(
        "Settings: requested vs effective (read back after applying)",
        header,
        lines,
        wrap=("requested", "effective", "why"),
    )


def print_report(report: Report, console: Console | None = None, *, live: bool = False) -> None:
    """live: the job just ran here, and its stderr showed the warnings the runtime printed: not again."""
    console = console or Console()
    run = report.run
    s = report.settings
    settings_line = {
        "none": Text("no settings file (measured only)"),
        "loaded": Text(str(s.get("path"))),
        "rejected": Text.assemble(("rejected", "red"), f": {s.get('message')}"),
    }.get(s["status"], Text(s["status"]))
    mpi = " ".join((run.get("mpi_library") or "none").split())
    static = any(c["layer"] == "hdf5" and c["status"] == "cannot_apply" for c in report.without_phase())
    hdf5 = run.get("hdf5_library") or ("linked statically, its calls unseen" if static else "not used")
    console.print(
        Text.assemble(
            ("iotuner run", "bold"), f": {run['ranks']} rank(s) on {run['nodes']} node(s); MPI: {mpi}; HDF5: {hdf5}"
        )
    )
    if report.incomplete:  # the tables below are one process's share, not the job's
        console.print(Text.assemble(("warning: incomplete report: ", "bold red"), report.incomplete))
    if run.get("job_id"):
        console.print(Text(f"job: user {run.get('user')}, {run.get('scheduler') or 'batch'} job {run['job_id']}"))
    console.print(Text("settings: ") + settings_line)

    sources = environment_sources(run)
    if sources:  # the MPI library applies these itself, before iotuner's settings; some it does not read at all
        console.print(
            Text(
                "hints from the environment: "
                + ", ".join(f"{var}={value}" + (f" ({ignored})" if ignored else "") for var, value, ignored in sources),
                style="yellow",
            )
        )
    if report.phases:
        console.print(phase_table(report))
    else:
        console.print("no file I/O was seen")
    table = settings_table(report)
    if table is not None:
        console.print(table)
    for w in report.warnings_not_printed() if live else report.warnings:
        if w != s.get("message") and w != report.incomplete:
            console.print(Text.assemble(("warning: ", "yellow"), w))
