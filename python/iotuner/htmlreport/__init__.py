"""HTML reports: one self-contained page (inline CSS and SVG, no network, no
JavaScript needed) for a tuning study, a run (smart mode included) or an
advice. `render(path)` finds out which it was given."""

from __future__ import annotations

from pathlib import Path

from ..files import write_atomic
from ..inputs import InputError, read_json


class ReportInputError(ValueError):
    """A path that is none of the inputs a page can be made of."""


def render_advice(advice: dict) -> str:
    from . import advice as page
    return page.render(advice)


def render_run(data: dict, source: str = "") -> str:
    from ..report import parse
    from . import run as page
    return page.render(parse(data, source or "report"), source)


def render_study(path: str | Path) -> str:
    from . import study as page
    return page.render(page.read_tune_dir(path))


def render(path: str | Path) -> tuple[str, str]:
    """(HTML, kind: study, run, smart or advice)."""
    from ..report import KIND as RUN_KIND
    from ..report import ReportError
    path = Path(path)
    if path.is_dir():
        if not (path / "summary.json").is_file():
            raise ReportInputError(f"{path} is a directory without summary.json: not a tune output directory")
        try:
            return render_study(path), "study"
        except ValueError as e:
            raise ReportInputError(str(e)) from None
    try:
        data = read_json(path, "a run report, an advice file or a tune output directory")
    except InputError as e:
        raise ReportInputError(str(e)) from None
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind == "iotuner-advice":
        return render_advice(data), "advice"
    if kind == RUN_KIND:
        try:
            return render_run(data, str(path)), "smart" if data.get("smart") else "run"
        except ReportError as e:
            raise ReportInputError(str(e)) from None
    if isinstance(data, dict) and "objective" in data and "verdict" in data:
        return render_study(path.parent), "study"  # summary.json itself
    raise ReportInputError(f"{path} is JSON but neither a run report, an advice nor a study summary")


def write(html: str, path: str | Path) -> Path:
    """Atomically: a reader never sees half a page."""
    return write_atomic(path, html)
