"""Rebuild the kernel's sources from what was kept, then reduce them.

The kernel is the clang-formatted source with every statement that was not
kept removed (with the comments right above it), every function that was
not kept removed, and two optional reductions: loop reduction (loops that
contain I/O run a fraction of their iterations) and path switching (every
path argument of an open-like call goes through iotk_path()).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from . import catalog
from .model import CK, Program, Source, Stmt, Var

_HEADER_KINDS = {"compound", "if", "for", "while", "switch", "case", "default", "label"}


@dataclass
class Loop:
    id: int
    file: str
    line: int
    header: str
    reduced: bool
    reason: str = ""


@dataclass
class Emitted:
    name: str  # file name inside OUTDIR/src
    original: Path
    text: bytes
    lines_formatted: int
    lines_kernel: int


@dataclass
class Result:
    files: list[Emitted] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def emit(prog: Program, loop_fraction: float, path_prefix: str | None, touch: bool = False) -> Result:
    """touch: allocations fill their memory (the kernel computes no values into it, and untouched pages
    would all be the system's zero page, cheaper to copy out of than the application's data)."""
    res = Result()
    written_by = _written_by(prog)
    names = _unique_names([s.path for s in prog.sources])
    for src, name in zip(prog.sources, names):
        edits: list[tuple[int, int, bytes]] = []
        for f in src.funcs:
            if not f.kept:
                edits.append(_lines(src, f.start, f.end, comments=True) + (b"",))
                continue
            _prune(src, f.body, edits)
            for st in f.stmts:
                if not st.kept:
                    continue
                if path_prefix or loop_fraction < 1.0:
                    _switch_paths(src, st, edits, res, bool(path_prefix))
                if touch:
                    _touch_allocations(st, edits)
                if st.kind in ("for", "while", "do") and loop_fraction < 1.0 and _has_io(st):
                    _reduce(src, st, prog, written_by, edits, res)
        dropped = {f.key for f in src.funcs if not f.kept}
        for key, start, end, static in src.prototypes:
            if static and key in dropped:
                edits.append(_lines(src, start, end + _semicolon(src.text, end), comments=False) + (b"",))
        text = b'#include "iotk.h" /* iotuner kernel: loop reduction, path switching */\n' + _apply(src.text, edits)
        text = re.sub(rb"\n{3,}", b"\n\n", text)
        res.files.append(Emitted(name, src.path, text, src.text.count(b"\n"), text.count(b"\n")))
    return res


# ---------------------------------------------------------------- removal


def _prune(src: Source, st: Stmt, edits: list) -> None:
    """Removes the children of a kept statement that were not kept."""
    for c in st.children:
        if c.kept:
            _prune(src, c, edits)
        elif c.slot == "else":
            start = _else_keyword(src.text, c.start)
            edits.append(_lines(src, start, _end(src.text, c), comments=False) + (b"",))
        elif c.slot in ("then", "body", "sub"):  # a body must stay a statement
            edits.append((c.start, _end(src.text, c), b";"))
        else:
            edits.append(_lines(src, c.start, _end(src.text, c), comments=True) + (b"",))


def _end(text: bytes, st: Stmt) -> int:
    return st.end if st.kind in _HEADER_KINDS else st.end + _semicolon(text, st.end)


def _semicolon(text: bytes, pos: int) -> int:
    """Length up to and including a ';' that follows pos (only blanks between)."""
    j = pos
    while j < len(text) and text[j : j + 1] in (b" ", b"\t"):
        j += 1
    return j + 1 - pos if text[j : j + 1] == b";" else 0


def _else_keyword(text: bytes, pos: int) -> int:
    j = pos
    while j > 0 and text[j - 1 : j].isspace():
        j -= 1
    return j - 4 if text[j - 4 : j] == b"else" else pos


def _lines(src: Source, a: int, b: int, comments: bool) -> tuple[int, int]:
    """[a, b) widened to whole lines when nothing else is on them, and over the
    comment lines right above (marker comments stay)."""
    text = src.text
    ls = text.rfind(b"\n", 0, a) + 1
    if not text[ls:a].strip():
        a = ls
        le = text.find(b"\n", b)
        le = len(text) if le < 0 else le
        if not text[b:le].strip():
            b = min(le + 1, len(text))
    if comments and a == ls:
        ends = {e: s for s, e in src.comments}
        while True:
            j = a
            while j > 0 and text[j - 1 : j].isspace():
                j -= 1
            s = ends.get(j)
            if s is None or b"iotuner:" in text[s:j]:
                break
            cls = text.rfind(b"\n", 0, s) + 1
            if text[cls:s].strip():
                break
            a = cls
    return a, b


def _apply(text: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    edits = sorted(edits, key=lambda e: (e[0], e[1]))
    out, pos = [], 0
    for a, b, rep in edits:
        if a < pos:  # inside a removed range already (a widened neighbour): nothing left to edit
            continue
        out.append(text[pos:a])
        out.append(rep)
        pos = b
    out.append(text[pos:])
    return b"".join(out)


def _unique_names(paths: list[Path]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for p in paths:
        n = seen.get(p.name, 0)
        seen[p.name] = n + 1
        out.append(p.name if n == 0 else f"{p.stem}_{n}{p.suffix}")
    return out


def _touch_allocations(st: Stmt, edits: list) -> None:
    """malloc -> iotk_malloc (and calloc): the same memory, written once."""
    for call in st.calls:
        if call.name in ("malloc", "calloc"):
            name = next(iter(call.cursor.get_tokens()), None)
            if name is not None and name.spelling == call.name:  # not inside a macro
                edits.append((name.extent.start.offset, name.extent.end.offset, b"iotk_" + call.name.encode()))


# ---------------------------------------------------------------- path switching


def _switch_paths(src: Source, st: Stmt, edits: list, res: Result, switch: bool) -> None:
    """Wraps path arguments: iotk_open_path for calls that open a file (it also records the
    open for the validation of loop reduction), iotk_path for the others (only when switching)."""
    for call in st.calls:
        positions = catalog.PATH_ARGS.get(call.name or "")
        opens = call.name in catalog.OPENS
        if not positions or not (switch or opens):
            continue
        toks = list(call.cursor.get_tokens())
        if not toks or toks[0].spelling != call.name:
            res.notes.append(
                f"{src.path.name}:{call.line}: the path of {call.name} is not switched "
                "(the call is written inside a macro)"
            )
            continue
        writes = _writes(src, call, res)
        for i in positions:
            if i >= len(call.args):
                continue
            arg = call.args[i]
            a, b = arg.extent.start.offset, arg.extent.end.offset
            if not _inside(call, toks, arg):
                res.notes.append(
                    f"{src.path.name}:{call.line}: the path of {call.name} is not switched "
                    "(its argument comes from a macro)"
                )
                continue
            edits.append((a, a, b"iotk_open_path(" if opens else b"iotk_path("))
            edits.append((b, b, b", " + writes + b")"))


def _inside(call, toks, arg) -> bool:
    """The argument is written at the call, not produced by a macro."""
    a, b = arg.extent.start.offset, arg.extent.end.offset
    return toks[0].extent.start.offset < a < b <= call.cursor.extent.end.offset


_HARMLESS = {"H5open", "H5check_version"}  # called by HDF5's constant macros (H5F_ACC_RDONLY)


def _writes(src: Source, call, res: Result) -> bytes:
    """C text that is true when the call writes the file: its mode argument tested, repeated (so only an
    argument without side effects), else taken as a write."""
    rule = catalog.PATH_WRITES.get(call.name, True)
    if isinstance(rule, bool):
        return b"1" if rule else b"0"
    pos, template = rule
    toks = list(call.cursor.get_tokens())
    if pos < len(call.args) and _inside(call, toks, call.args[pos]):
        arg = call.args[pos]
        pure = not any(
            (d.kind == CK.CALL_EXPR and d.spelling not in _HARMLESS)
            or (
                d.kind in (CK.UNARY_OPERATOR, CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR)
                and any(t.spelling in ("++", "--", "=") for t in d.get_tokens())
            )
            for d in arg.walk_preorder()
        )
        if pure:
            text = src.text[arg.extent.start.offset : arg.extent.end.offset].decode(errors="replace")
            return template.format(text).encode()
    res.notes.append(
        f"{src.path.name}:{call.line}: the mode of {call.name} is not read (a call or side effect in "
        "it): the file is taken as written"
    )
    return b"1"


# ---------------------------------------------------------------- loop reduction

_INIT = re.compile(r"^(?:[A-Za-z_][\w\s\*]*?\s+\**)?([A-Za-z_]\w*)\s*=\s*(.+)$", re.S)
_COND = re.compile(r"^([A-Za-z_]\w*)\s*(<=|<|>=|>)\s*(.+)$", re.S)
_INC = [
    (re.compile(r"^(?:\+\+\s*([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*\+\+)$"), "+", "1"),
    (re.compile(r"^(?:--\s*([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*--)$"), "-", "1"),
    (re.compile(r"^([A-Za-z_]\w*)\s*\+=\s*(.+)$", re.S), "+", None),
    (re.compile(r"^([A-Za-z_]\w*)\s*-=\s*(.+)$", re.S), "-", None),
]


def _has_io(loop: Stmt) -> bool:
    return any(s.is_root for s in loop.walk() if s is not loop)


def _cleanup(loop: Stmt, prog: Program) -> bool:
    """Every I/O call the loop makes, directly or through the functions it calls, only releases a
    handle (H5Tclose, H5Dclose, MPI_File_close, close, fclose)."""
    seen: set[str] = set()
    closes = []

    def only_closes(stmts) -> bool:
        for s in stmts:
            for call in s.calls:
                callee = prog.funcs.get(call.key) if call.key else None
                if call.io:
                    if not catalog.is_closer(call.name):
                        return False
                    closes.append(call)
                if callee is not None and callee.leads_to_io and callee.key not in seen:
                    seen.add(callee.key)
                    if not only_closes(callee.stmts):
                        return False
        return True

    return only_closes(s for s in loop.walk() if s is not loop) and bool(closes)


def _written_by(prog: Program) -> dict[Stmt, set[Var]]:
    out: dict[Stmt, set[Var]] = {}
    for cls, entries in prog.writers.items():
        for st, *_ in entries:
            out.setdefault(st, set()).add(cls)
    return out


def _header(text: bytes, st: Stmt) -> list[tuple[int, int]] | None:
    """Byte ranges of init, condition and increment of a for statement."""
    i = text.find(b"(", st.start)
    if i < 0:
        return None
    depth, semis, j, quote = 0, [], i, None
    while j < st.end:
        ch = text[j : j + 1]
        if quote:
            if ch == b"\\":
                j += 1
            elif ch == quote:
                quote = None
        elif ch in (b'"', b"'"):
            quote = ch
        elif ch == b"(":
            depth += 1
        elif ch == b")":
            depth -= 1
            if depth == 0:
                break
        elif ch == b";" and depth == 1:
            semis.append(j)
        j += 1
    if len(semis) != 2 or depth != 0:
        return None
    return [(i + 1, semis[0]), (semis[0] + 1, semis[1]), (semis[1] + 1, j)]


def _trip_count(src: Source, st: Stmt, prog: Program, written_by: dict) -> tuple[str, tuple] | str:
    """The expression of the loop's trip count, or why there is none."""
    parts = _header(src.text, st)
    if parts is None:
        return "not a plain for header"
    init, cond, inc = (src.text[a:b].decode(errors="replace").strip() for a, b in parts)
    mc = _COND.match(cond)
    if not mc:
        return "the condition is not 'i < n' (or <=, >, >=)"
    var, rel, bound = mc.group(1), mc.group(2), mc.group(3)
    step_dir, step = None, None
    for rx, d, s in _INC:
        mi = rx.match(inc)
        if mi:
            name = mi.group(1) or (mi.group(2) if s is not None else None)
            if s is None:
                name, s = mi.group(1), mi.group(2)
            if name == var:
                step_dir, step = d, s
            break
    if step_dir is None:
        return "the increment is not 'i++', 'i += s' (or --, -=)"
    if (step_dir == "+") != (rel in ("<", "<=")):
        return "the increment runs away from the bound"
    if init:
        mi = _INIT.match(init)
        if not mi or mi.group(1) != var or "," in mi.group(2):
            return "the initialisation is not a single 'i = a'"
        start = mi.group(2)
    else:
        start = var
    # side effects and writes of i or the bound inside the loop
    header_cursors = [c for c in st.own]
    for c in header_cursors:
        for d in c.walk_preorder():
            if d.kind == CK.CALL_EXPR and parts[1][0] <= d.extent.start.offset < parts[2][1]:
                return "the condition or increment calls a function"
    body = st.children[0] if st.children else None
    if body is None:
        return "no body"
    watched = set()
    for c in header_cursors:
        for d in c.walk_preorder():
            if (
                d.kind == CK.DECL_REF_EXPR
                and d.referenced is not None
                and d.referenced.kind in (CK.VAR_DECL, CK.PARM_DECL)
                and parts[1][0] <= d.extent.start.offset
            ):
                watched.add(prog.find(prog.var(d.referenced)))
            if d.kind == CK.VAR_DECL:
                watched.add(prog.find(prog.var(d)))
    for s in body.walk():
        hit = written_by.get(s, set()) & watched
        if hit:
            return f"the body changes {', '.join(sorted(v.name for v in hit))} (line {s.line})"
    up = 1 if step_dir == "+" else 0
    incl = 1 if rel in ("<=", ">=") else 0
    expr = f"iotk_trip((long long)({start}), (long long)({bound}), (long long)({step}), {up}, {incl})"
    return expr, parts


def _reduce(src: Source, st: Stmt, prog: Program, written_by: dict, edits: list, res: Result) -> None:
    lid = len(res.loops) + 1
    header = src.text[st.start : src.text.find(b"\n", st.start)].decode(errors="replace").strip()
    if _cleanup(st, prog):
        res.loops.append(
            Loop(
                lid,
                src.path.name,
                st.line,
                header,
                False,
                "a cleanup loop (its I/O calls only close or free handles): cut, it would leave handles open",
            )
        )
        return
    if st.kind != "for":
        res.loops.append(
            Loop(
                lid,
                src.path.name,
                st.line,
                header,
                False,
                f"a {st.kind} loop: its trip count is not known before it starts",
            )
        )
        return
    r = _trip_count(src, st, prog, written_by)
    if isinstance(r, str):
        res.loops.append(Loop(lid, src.path.name, st.line, header, False, r))
        return
    expr, parts = r
    ls = src.text.rfind(b"\n", 0, st.start) + 1
    indent = src.text[ls : st.start] if not src.text[ls : st.start].strip() else b""
    ca, cb = parts[1]
    cond = src.text[ca:cb].strip()
    edits.append((st.start, st.start, b"{ IOTK_LOOP(%d, %s);\n" % (lid, expr.encode()) + indent))
    edits.append((ca, cb, b" (%s) && iotk_loop_next(&iotk_loop_%d)" % (cond, lid)))
    edits.append((st.end, st.end, b"\n" + indent + b"}"))
    res.loops.append(Loop(lid, src.path.name, st.line, header, True))
