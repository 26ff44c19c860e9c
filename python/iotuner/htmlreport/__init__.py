"""HTML reports: one self-contained page (inline CSS and SVG, no network, no
JavaScript needed) for a tuning study, a run (smart mode included) or an
advice. `render(path)` finds out which it was given."""

from __future__ import annotations

from pathlib import Path

from .. import schema
from ..files import write_atomic
from ..inputs import InputError, read_json


class ReportInputError(ValueError):
    """A path that is none of the inputs a page can be made of."""


def render_advice(advice: dict) -> str:
    from . import advice as page

    return page.render(advice)


def render_run(data: dict, source: str = "") -> str:
    from ..run_report import DAMAGE, malformed, parse
    from . import run_page as page

    rep = parse(data, source or "report")
    try:
        return page.render(rep, source)
    except DAMAGE as e:  # what the schema leaves open (a version-1 report's smart section): one line
        raise malformed(e, source or "report") from None


def render_study(path: str | Path) -> str:
    from . import study as page

    return page.render(page.read_tune_dir(path))


def render(path: str | Path) -> tuple[str, str]:
    """(HTML, kind: study, run, smart or advice)."""
    from ..run_report import KIND as RUN_KIND
    from ..run_report import ReportError

    path = Path(path)
    if path.is_dir():
        try:
            return render_study(path), "study"
        except ValueError as e:  # TuneOutputError, InputError: the file and the field
            raise ReportInputError(str(e)) from None
    try:
        data = read_json(path, "a run report, an advice file or a tune output directory")
    except InputError as e:
        raise ReportInputError(str(e)) from None
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind == "iotuner-advice":
        try:
            schema.check(data, "advice.schema.json")
        except schema.SchemaError as e:
            raise ReportInputError(f"advice {path} is damaged: {e}") from None
        return render_advice(data), "advice"
    if kind == RUN_KIND:
        try:
            return render_run(data, str(path)), "smart" if data.get("smart") else "run"
        except ReportError as e:
            raise ReportInputError(str(e)) from None
    if isinstance(data, dict) and "objective" in data and "verdict" in data:
        try:
            return render_study(path.parent), "study"  # summary.json itself
        except ValueError as e:
            raise ReportInputError(str(e)) from None
    raise ReportInputError(f"{path} is JSON but neither a run report, an advice nor a study summary")


def write(html: str, path: str | Path) -> Path:
    """Atomically: a reader never sees half a page."""
    return write_atomic(path, html)
