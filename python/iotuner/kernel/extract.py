"""I/O discovery: application sources in, kernel sources out (Fig. 4 of the paper):
pre-format, parse, mark, rebuild, reduce."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import emit, flags, fmt, mark
from .model import ParseError, Program, Unsupported


@dataclass
class Extraction:
    program: Program
    emitted: emit.Result
    unsupported: list[Unsupported]
    blocked: list[str]  # needed statements a drop marker removed
    kept_functions: list[str]
    dropped_functions: list[str]
    compute_kept: bool  # the compute that only makes written values stays
    compute_why: str
    formatted: dict[str, bytes] = field(default_factory=dict)  # kernel file name -> formatted original


def _first_line(st) -> str:
    text = st.func.source.text
    end = text.find(b"\n", st.start)
    return text[st.start : end if end >= 0 else len(text)].decode(errors="replace").strip()


def _index():
    import clang.cindex as ci

    return ci.Index.create()


def extract(
    toolchain: flags.Toolchain,
    *,
    loop_fraction: float = 1.0,
    path_prefix: str | None = None,
    keep_compute: bool = False,
) -> Extraction:
    """Raises ParseError (the sources do not parse) or MarkerError (unbalanced markers)."""
    import clang.cindex as ci

    index = _index()
    prog = Program()
    formatted: dict[Path, bytes] = {}
    for unit in toolchain.units:
        try:
            original = unit.source.read_bytes()
        except OSError as e:
            raise ParseError(f"cannot read {unit.source}: {e.strerror}") from None
        text = fmt.format_source(original, unit.source.name)
        formatted[unit.source] = text
        args = flags.parse_flags(unit)
        try:
            tu = index.parse(
                str(unit.source),
                args=args,
                unsaved_files=[(str(unit.source), text)],
                options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD,
            )
        except ci.TranslationUnitLoadError as e:
            raise ParseError(f"libclang cannot parse {unit.source}: {e}") from None
        errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        if errors:
            shown = "; ".join(f"{Path(str(d.location.file)).name}:{d.location.line}: {d.spelling}" for d in errors[:3])
            raise ParseError(f"libclang cannot parse {unit.source.name} with the application's flags: {shown}")
        prog.add_source(unit.source, text, tu)  # MarkerError: unbalanced markers, for the caller
    prog.finish()
    filters = prog.compression_filters()
    if keep_compute:
        why = "asked for (--keep-compute): the kernel computes the values it writes"
    elif filters:
        why = (
            f"a compression filter is set ({filters[0]}): the values decide the bytes written, so the kernel "
            "computes them"
        )
    else:
        why = "dropped: the kernel writes buffers of the application's sizes and layout without computing their values"
    keep_compute = keep_compute or bool(filters)
    marker = mark.run(prog, keep_compute)
    result = emit.emit(prog, loop_fraction, path_prefix, touch=not keep_compute)
    names = {e.original: e.name for e in result.files}
    funcs = [f for f in prog.funcs.values() if f.rewritable]
    blocked = [
        f"{st.func.source.path.name}:{st.line} in {st.func.name}: {_first_line(st)!r} {why}"
        for st, why in marker.blocked
    ]
    return Extraction(
        prog,
        result,
        list(prog.unsupported),
        blocked,
        sorted(f.name for f in funcs if f.kept),
        sorted(f.name for f in funcs if not f.kept),
        keep_compute,
        why,
        {names[p]: t for p, t in formatted.items()},
    )
