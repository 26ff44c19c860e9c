"""The marking loop of section III-B, run to a fixed point.

Start from the I/O statements (and keep markers). A kept statement marks its
dependents: every variable it reads or writes (call arguments and the assigned
variable, conditions, loop headers). A marked variable keeps every statement
that assigns it: plain assignments, ++/--, declarations, writes through a
pointer or into an element or member (all in one alias class), and calls that
write through a pointer argument or to a global. A kept statement keeps its
parents up to the function, and a kept function keeps what calls must see.

Without the compute (the default): a variable that kept code uses only as the
data buffer of an I/O call, in free() or under sizeof, or passes to a function
whose parameter needs no more, is marked for its storage alone.
Its declarations and the statements that say where its memory is (pointer and
record assignments, allocations) are kept; the statements that only compute
the numbers it holds are not, so a solver whose results are written goes.
"""

from __future__ import annotations

from collections import deque

from . import catalog
from .model import Func, Program, Stmt, Var


class Marker:
    def __init__(self, prog: Program, keep_compute: bool = True):
        self.prog = prog
        self.keep_compute = keep_compute
        self.marked: set[Var] = set()  # classes whose values matter
        self.stored: set[Var] = set()  # classes whose storage alone matters
        self.links: dict[Var, list[tuple[set[Var], str]]] = {}  # parameter class -> arguments passed to it
        self.queue: deque = deque()
        self.blocked: list[tuple[Stmt, str]] = []  # needed, but inside a drop region (and why needed)
        self.labels: dict[tuple[Func, str], Stmt] = {}
        self.gotos: dict[tuple[Func, str], list[Stmt]] = {}
        self.jumps: dict[Stmt, list[Stmt]] = {}  # loop/switch -> its break/continue statements
        self.exits: dict[Stmt, list[Stmt]] = {}  # loop -> returns and calls of exit() inside it
        for st in prog.stmts:
            if st.kind == "label":
                self.labels[(st.func, st.label)] = st
            elif st.kind == "goto":
                self.gotos.setdefault((st.func, st.label), []).append(st)
            elif st.target is not None:
                self.jumps.setdefault(st.target, []).append(st)

    def run(self) -> None:
        for st in self.prog.stmts:
            if st.is_root:
                self.keep(st, st.root_why)
        for f in self.prog.funcs.values():
            if f.name == "main" and f.rewritable:
                self.keep_func(f)
        for key in self.prog.global_func_refs:  # tables of function pointers are kept, so are their entries
            if key in self.prog.funcs:
                self.keep_whole(self.prog.funcs[key], "named in the initialiser of a global")
        self._drain()
        while self._early_exits():
            self._drain()

    def _drain(self) -> None:
        while self.queue:
            what, item, why, storage = self.queue.popleft()
            if what == "stmt":
                self._stmt(item, why)
            else:
                self._var(item, why, storage)

    def _early_exits(self) -> bool:
        """Control dependence: a return, goto or exit before a kept statement decides whether
        that statement runs (`if (fd < 0) return -1;` before a write), so it stays."""
        added = False
        for f in self.prog.funcs.values():
            if not (f.kept and f.rewritable):
                continue
            last = max((s.start for s in f.stmts if s.kept and s.kind != "compound"), default=-1)
            for s in f.stmts:
                if not s.kept and not s.forbidden and (s.kind in ("return", "goto") or s.terminator) and s.start < last:
                    self.keep(s, f"may skip the kept code after it in {f.name}")
                    added = True
        return added

    # -- requests
    def keep(self, st: Stmt, why: str) -> None:
        if not st.kept:
            self.queue.append(("stmt", st, why, False))

    def mark(self, v: Var, why: str, storage: bool = False) -> None:
        """storage: only where the variable's memory is matters, not the values it holds."""
        cls = self.prog.find(v)
        if cls in self.marked:
            return
        if storage and not self.keep_compute:
            if cls not in self.stored:
                self.stored.add(cls)
                self.queue.append(("var", cls, why, True))
            return
        self.marked.add(cls)
        self.queue.append(("var", cls, why, False))
        for args, where in self.links.pop(cls, ()):  # the callee needs the values: so do its callers
            for a in args:
                self.mark(a, f"passed at {where} to a parameter whose values are used")

    def keep_whole(self, f: Func, why: str) -> None:
        """A function that runs in ways the slicer cannot see (called through a pointer, or not
        rewritten) keeps all its statements."""
        if f.whole:
            return
        f.whole = True
        f.kept = True
        for st in f.stmts:
            self.keep(st, f"in {f.name}: {why} (kept whole)")

    def keep_func(self, f: Func) -> None:
        if f.kept:
            return
        f.kept = True
        if not f.rewritable:
            self.keep_whole(f, "defined in a header")
            return
        self.keep(f.body, f"body of {f.name}")
        for st in f.body.children:
            if st.terminator:
                self.keep(st, f"ends {f.name}")
        for st in f.stmts:  # local types cost nothing and kept declarations may need them
            if st.declares_type:
                self.keep(st, f"declares a type in {f.name}")

    # -- the rules
    def _stmt(self, st: Stmt, why: str) -> None:
        if st.kept:
            return
        if st.forbidden:
            if all(b is not st for b, _ in self.blocked):
                self.blocked.append((st, why))
            return
        st.kept, st.why = True, why
        here = f"line {st.line}"
        values = st.reads | (st.writes - st.storage_writes)
        for call in st.calls:
            self._arguments(call, values, here)
        for v in values:
            self.mark(v, f"used by {here} of {st.func.name}")
        for v in (st.buffer_reads | st.storage_writes) - values:
            self.mark(v, f"where memory is at {here} of {st.func.name}", storage=True)
        for key in st.func_refs:
            if key in self.prog.funcs:
                self.keep_whole(self.prog.funcs[key], f"used as a value at {here}")
        for call in st.calls:
            callee = self.prog.funcs.get(call.key) if call.key else None
            if callee is not None:
                self.keep_func(callee)
                if call.value_used and not callee.value_needed:
                    callee.value_needed = True  # every return computes the value kept code uses
                    for r in callee.stmts:
                        if r.kind == "return":
                            self.keep(r, f"returns the value of {callee.name} used at {here}")
            if call.name in catalog.MPI_RECEIVES:
                for send in self.prog.sends:
                    self.keep(send, f"a send that may match the receive at {here}")
        if st.parent is not None:
            self.keep(st.parent, f"encloses {here}")
        else:
            self.keep_func(st.func)
        for c in st.children:  # statements of a macro's body cannot be cut out of its invocation
            if c.glued:
                self.keep(c, f"expanded from the same macro as {here}")
        if st.kind in ("for", "while", "do", "switch"):
            for j in self.jumps.get(st, ()):
                self.keep(j, f"leaves the loop at line {st.line}")
            if st.kind != "switch" and _endless(st):
                for ex in _exits(st):
                    self.keep(ex, f"the only way out of the loop at line {st.line}")
            for sub in st.children:  # a kept loop keeps its braces
                if sub.kind == "compound":
                    self.keep(sub, f"body of line {st.line}")
        if st.kind == "if":
            then = next((c for c in st.children if c.slot == "then"), None)
            if then is not None and then.kind == "compound":
                self.keep(then, f"body of line {st.line}")
        if st.kind == "switch":
            body = st.children[0] if st.children else None
            for c in body.children if body is not None else ():
                if c.kind in ("case", "default"):
                    self.keep(c, f"label of the switch at line {st.line}")
        if st.kind == "label":
            for g in self.gotos.get((st.func, st.label), ()):
                self.keep(g, f"jumps to label {st.label}")
        if st.kind == "goto":
            target = self.labels.get((st.func, st.label))
            if target is not None:
                self.keep(target, f"target of the goto at {here}")
        # a kept block keeps the returns and exit() calls directly in it
        block = st.children if st.kind == "compound" else [c for c in st.children if c.slot in ("then", "else", "sub")]
        for c in block:
            if c.terminator:
                self.keep(c, f"ends the block of line {st.line}")

    def _arguments(self, call, values: set[Var], here: str) -> None:
        """Pointer arguments: an I/O call's data buffer and free() need only where the memory is; a user
        function needs what its parameter needs (decided as the marking goes on); other external
        functions read what the pointer reaches."""
        callee = self.prog.funcs.get(call.key) if call.key else None
        data = catalog.DATA_ARG.get(call.name or "")
        for i, bases in enumerate(call.arg_bases):
            if not bases or i == data or catalog.is_closer(call.name):
                continue
            if callee is None or i >= len(callee.params):
                values |= bases
                continue
            param = self.prog.find(callee.params[i])
            if param in self.marked or self.keep_compute:
                values |= bases
            else:
                self.links.setdefault(param, []).append((bases, f"{here} of {call.stmt.func.name}"))

    def _var(self, cls: Var, why: str, storage: bool) -> None:
        for st, via, content in self.prog.writers.get(cls, ()):
            if storage and content:
                continue  # computes values of a buffer whose values nothing kept reads
            self.keep(st, f"assigns {cls.name} ({why})")
            if via is not None:
                callee, i = via
                self.mark(callee.params[i], f"{cls.name} is written through it at line {st.line}", storage)


def _endless(loop: Stmt) -> bool:
    """for (;;), while (1), do ... while (1): only a jump ends the loop."""
    if loop.kind == "for":
        header = loop.cursor
        children = list(header.get_children())
        body = children[-1] if children else None
        toks = [
            t.spelling for t in header.get_tokens() if body is None or t.extent.start.offset < body.extent.start.offset
        ]
        # for ( init ; cond ; inc ): an empty condition is two adjacent ';' or '; ;'
        try:
            first = toks.index(";")
            return toks[first + 1] == ";"
        except (ValueError, IndexError):
            return False
    conds = loop.own
    if not conds:
        return True
    toks = [t.spelling for t in conds[0].get_tokens()]
    return toks in (["1"], ["true"], ["TRUE"])


def _exits(loop: Stmt):
    for st in loop.walk():
        if st is not loop and (st.kind in ("return", "goto") or st.terminator):
            yield st


def run(prog: Program, keep_compute: bool = True) -> Marker:
    m = Marker(prog, keep_compute)
    m.run()
    return m
