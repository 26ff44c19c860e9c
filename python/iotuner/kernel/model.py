"""The program as the extractor sees it, built from libclang's AST: functions,
statements (each with the variables it reads and writes and the calls it
makes), variables merged into alias classes, and per-function summaries of
what a call writes through its pointer arguments and to globals.

Offsets are byte offsets into the clang-formatted text of each source.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from . import catalog

CK = ci.CursorKind
TK = ci.TypeKind

_STRIP = {CK.UNEXPOSED_EXPR, CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR}
_ARRAYS = {TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY}
_LOOPS = {"for", "while", "do"}


class ParseError(RuntimeError):
    pass


class MarkerError(ValueError):
    pass


# ---------------------------------------------------------------- libclang helpers


def _operator_api():
    """libclang >= 17 names the operator of a cursor; older ones do not (then tokens are read)."""
    lib = ci.conf.lib
    try:
        for fn in ("clang_getCursorBinaryOperatorKind", "clang_getCursorUnaryOperatorKind"):
            getattr(lib, fn).argtypes = [ci.Cursor]
            getattr(lib, fn).restype = ctypes.c_int
        for fn in ("clang_getBinaryOperatorKindSpelling", "clang_getUnaryOperatorKindSpelling"):
            getattr(lib, fn).argtypes = [ctypes.c_int]
            getattr(lib, fn).restype = ci._CXString
            getattr(lib, fn).errcheck = ci._CXString.from_result
        return lib
    except AttributeError:
        return None


_OPS = None
_BIN_SPELLING: dict[int, str] = {}
_UN_SPELLING: dict[int, str] = {}


def binary_op(c: ci.Cursor) -> str:
    global _OPS
    if _OPS is None:
        _OPS = _operator_api() or False
    if _OPS:
        k = _OPS.clang_getCursorBinaryOperatorKind(c)
        if k not in _BIN_SPELLING:
            _BIN_SPELLING[k] = _OPS.clang_getBinaryOperatorKindSpelling(k)
        return _BIN_SPELLING[k]
    ch = list(c.get_children())
    if ch:
        end = ch[0].extent.end.offset
        for t in c.get_tokens():
            if t.extent.start.offset >= end:
                return t.spelling
    return ""


def unary_op(c: ci.Cursor) -> str:
    global _OPS
    if _OPS is None:
        _OPS = _operator_api() or False
    if _OPS:
        k = _OPS.clang_getCursorUnaryOperatorKind(c)
        if k not in _UN_SPELLING:
            _UN_SPELLING[k] = _OPS.clang_getUnaryOperatorKindSpelling(k)
        s = _UN_SPELLING[k]
        return {"PostInc": "++", "PreInc": "++", "PostDec": "--", "PreDec": "--"}.get(s, s)
    toks = [t.spelling for t in c.get_tokens()]
    for op in ("++", "--", "&", "*", "-", "!", "~", "+"):
        if toks and (toks[0] == op or toks[-1] == op):
            return op
    return ""


def strip(c: ci.Cursor) -> ci.Cursor:
    while c.kind in _STRIP:
        ch = list(c.get_children())
        if not ch:
            break
        c = ch[-1]
    return c


def canon(t: ci.Type) -> ci.Type:
    return t.get_canonical()


def is_pointerish(t: ci.Type) -> bool:
    """Values of this type can lead to memory that a write through them changes."""
    k = canon(t).kind
    return k == TK.POINTER or k in _ARRAYS or k == TK.RECORD


def text_of(c: ci.Cursor) -> str:
    return " ".join(t.spelling for t in c.get_tokens())


# ---------------------------------------------------------------- the model


@dataclass(eq=False)
class Var:
    key: str
    name: str
    is_global: bool
    pointerish: bool
    func: Func | None = None  # for parameters
    index: int = -1  # parameter position
    parent: Var | None = None  # union-find
    where: str = ""

    def __repr__(self) -> str:
        return f"Var({self.name})"


@dataclass(eq=False)
class Call:
    stmt: Stmt
    cursor: ci.Cursor
    name: str | None  # None: an indirect call through a pointer
    key: str | None  # the callee's USR
    args: list[ci.Cursor]
    arg_texts: list[str]
    arg_bases: list[set[Var]]  # memory each argument can reach (pointer arguments)
    handle_bases: list[set[Var]]  # variables passed by value (handles)
    param_readonly: list[bool | None]  # external callee: pointer parameter to const (None: unknown/variadic)
    variadic: bool
    has_proto: bool
    io: str | None = None
    line: int = 0
    value_used: bool = True  # False: a call statement whose result is discarded


@dataclass(eq=False)
class Stmt:
    id: int
    kind: str
    cursor: ci.Cursor
    func: Func
    parent: Stmt | None
    start: int
    end: int
    line: int
    slot: str = ""  # "body", "then", "else", "sub" (label/case), "" in a compound
    children: list[Stmt] = field(default_factory=list)
    reads: set[Var] = field(default_factory=set)
    writes: set[Var] = field(default_factory=set)
    storage_writes: set[Var] = field(default_factory=set)  # declared, or assigned a pointer or record: not values
    buffer_reads: set[Var] = field(default_factory=set)  # used only as an I/O call's data buffer or under sizeof
    declares: list[Var] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    own: list[ci.Cursor] = field(default_factory=list)  # the statement's own expressions
    func_refs: set[str] = field(default_factory=set)  # functions it uses as values (not calls)
    target: Stmt | None = None  # break/continue: the loop or switch
    label: str = ""  # goto/label name
    is_root: bool = False
    root_why: str = ""
    terminator: bool = False
    kept: bool = False
    glued: bool = False  # same text as its parent (expanded from a macro): kept with it
    declares_type: bool = False  # a local struct, union, enum or typedef
    forbidden: bool = False  # inside a drop region
    why: str = ""

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def __repr__(self) -> str:
        return f"Stmt({self.kind}@{self.line})"


@dataclass(eq=False)
class Func:
    key: str
    name: str
    cursor: ci.Cursor
    source: Source | None  # None: defined in a header (analysed, never rewritten)
    start: int
    end: int
    line: int
    is_static: bool
    params: list[Var] = field(default_factory=list)
    body: Stmt | None = None
    stmts: list[Stmt] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    leads_to_io: bool = False
    io_why: str = ""
    writes_params: set[int] = field(default_factory=set)
    writes_globals: set[Var] = field(default_factory=set)  # class roots
    kept: bool = False
    whole: bool = False  # kept with every statement
    noreturn: bool = False  # every path ends in exit(), abort() or MPI_Abort()
    value_needed: bool = False  # kept code uses its return value

    @property
    def rewritable(self) -> bool:
        return self.source is not None


@dataclass
class Region:
    start: int
    end: int
    kind: str  # keep | drop
    line: int


@dataclass(eq=False)
class Source:
    path: Path  # the application's file
    text: bytes  # clang-formatted
    tu: ci.TranslationUnit
    funcs: list[Func] = field(default_factory=list)
    prototypes: list[tuple[str, int, int, bool]] = field(default_factory=list)  # (key, start, end, static)
    comments: list[tuple[int, int]] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)

    def line_of(self, offset: int) -> int:
        return self.text.count(b"\n", 0, offset) + 1


@dataclass
class Unsupported:
    what: str
    where: str


class Program:
    """Every analysed function of the application, across its source files."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.funcs: dict[str, Func] = {}
        self.vars: dict[str, Var] = {}
        self.stmts: list[Stmt] = []
        self.address_taken: dict[str, tuple[str, list[str]]] = {}  # function key -> (name, where used as a value)
        self.global_func_refs: set[str] = set()  # functions named in initialisers of globals
        self.unsupported: list[Unsupported] = []
        # per alias class: (statement, (callee, parameter) when written through a call, content) where content
        # says the statement only changes values stored in the class (a number, not where memory is)
        self.writers: dict[Var, list[tuple[Stmt, tuple[Func, int] | None, bool]]] = {}
        self.sends: list[Stmt] = []

    # -- union-find over variables: pointer assignments merge what can be reached
    def find(self, v: Var) -> Var:
        root = v
        while root.parent is not None:
            root = root.parent
        while v.parent is not None and v.parent is not root:
            v.parent, v = root, v.parent
        return root

    def union(self, a: Var, b: Var) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            rb.parent = ra

    def var(self, decl: ci.Cursor) -> Var:
        decl = decl.canonical
        key = decl.get_usr() or f"{decl.location.file}:{decl.location.offset}:{decl.spelling}"
        v = self.vars.get(key)
        if v is None:
            par = decl.semantic_parent
            is_global = par is not None and par.kind == CK.TRANSLATION_UNIT
            v = Var(
                key,
                decl.spelling,
                is_global,
                is_pointerish(decl.type),
                where=f"{Path(str(decl.location.file)).name}:{decl.location.line}",
            )
            self.vars[key] = v
        return v

    # ------------------------------------------------------------ building

    def add_source(self, path: Path, text: bytes, tu: ci.TranslationUnit) -> Source:
        src = Source(path, text, tu)
        self.sources.append(src)
        main = str(path)
        for tok in tu.get_tokens(extent=tu.cursor.extent):
            if tok.kind == ci.TokenKind.COMMENT and str(tok.location.file) == main:
                src.comments.append((tok.extent.start.offset, tok.extent.end.offset))
        src.regions = _regions(src)
        for c in tu.cursor.get_children():
            in_main = c.location.file is not None and str(c.location.file) == main
            if c.kind == CK.FUNCTION_DECL:
                if c.is_definition():
                    self._add_function(c, src if in_main else None)
                elif in_main:
                    src.prototypes.append(
                        (
                            c.get_usr(),
                            c.extent.start.offset,
                            c.extent.end.offset,
                            c.storage_class == ci.StorageClass.STATIC,
                        )
                    )
            elif c.kind == CK.VAR_DECL:
                self._scan_function_refs(c)
        return src

    def _taken(self, fn: ci.Cursor, at: ci.Cursor) -> None:
        self.address_taken.setdefault(fn.get_usr(), (fn.spelling, []))[1].append(
            f"{Path(str(at.location.file)).name}:{at.location.line}"
        )

    def _scan_function_refs(self, c: ci.Cursor) -> None:
        """Function names used as values at file scope (tables of function pointers)."""
        for d in c.walk_preorder():
            if d.kind == CK.DECL_REF_EXPR and d.referenced is not None and d.referenced.kind == CK.FUNCTION_DECL:
                self._taken(d.referenced, d)
                self.global_func_refs.add(d.referenced.get_usr())

    def _add_function(self, c: ci.Cursor, src: Source | None) -> None:
        key = c.get_usr()
        if key in self.funcs:
            return
        body = next((ch for ch in c.get_children() if ch.kind == CK.COMPOUND_STMT), None)
        if body is None:
            return
        f = Func(
            key,
            c.spelling,
            c,
            src,
            c.extent.start.offset,
            c.extent.end.offset,
            c.location.line,
            c.storage_class == ci.StorageClass.STATIC,
        )
        self.funcs[key] = f
        for i, p in enumerate(c.get_arguments()):
            v = self.var(p)
            v.func, v.index = f, i
            f.params.append(v)
        if src is not None:
            src.funcs.append(f)
        f.body = self._stmt(body, f, None, "", [])

    def _stmt(self, c: ci.Cursor, f: Func, parent: Stmt | None, slot: str, targets: list[Stmt]) -> Stmt:
        kind, own, subs = _shape(c)
        s = Stmt(
            len(self.stmts),
            kind,
            c,
            f,
            parent,
            c.extent.start.offset,
            c.extent.end.offset,
            c.extent.start.line,
            slot,
            own=own,
        )
        s.glued = parent is not None and s.start <= parent.start and s.end >= parent.end
        self.stmts.append(s)
        f.stmts.append(s)
        if kind in ("break", "continue"):
            for t in reversed(targets):
                if t.kind in _LOOPS or (kind == "break" and t.kind == "switch"):
                    s.target = t
                    break
        if kind in ("goto", "label"):
            s.label = (
                c.spelling
                if kind == "label"
                else next((ch.spelling for ch in c.get_children() if ch.kind == CK.LABEL_REF), "")
            )
        if kind in ("return", "goto"):
            s.terminator = True
        if kind == "decl":
            s.declares_type = any(
                ch.kind in (CK.STRUCT_DECL, CK.UNION_DECL, CK.ENUM_DECL, CK.TYPEDEF_DECL) and ch.is_definition()
                for ch in c.get_children()
            )
        for e in own:
            self._expr(e, s)
        if kind == "expr" and any(call.name in catalog.TERMINATORS for call in s.calls):
            s.terminator = True
        inner = targets + [s] if kind in _LOOPS or kind == "switch" else targets
        for sub, sub_slot in subs:
            s.children.append(self._stmt(sub, f, s, sub_slot, inner))
        return s

    # -- expressions: what a statement reads, writes, declares and calls
    def _expr(self, c: ci.Cursor, s: Stmt) -> None:
        k = c.kind
        if k == CK.DECL_REF_EXPR:
            ref = c.referenced
            if ref is None:
                return
            if ref.kind in (CK.VAR_DECL, CK.PARM_DECL):
                s.reads.add(self.var(ref))
            elif ref.kind == CK.FUNCTION_DECL:  # a function used as a value, not called
                self._taken(ref, c)
                s.func_refs.add(ref.get_usr())
            return
        if k == CK.VAR_DECL:
            v = self.var(c)
            s.declares.append(v)
            s.writes.add(v)
            s.storage_writes.add(v)
            for ch in c.get_children():
                if v.pointerish and ch.kind != CK.TYPE_REF and ch.kind.is_expression():
                    bases = self.ptr_bases(ch)
                    for b in bases:
                        self.union(v, b)
                    self._buffer_expr(ch, s, bases)  # where the memory is, not what it holds
                else:
                    self._expr(ch, s)
            return
        if k == CK.BINARY_OPERATOR:
            op = binary_op(c)
            ch = list(c.get_children())
            if op == "=" and len(ch) == 2:
                lhs = self.lvalue_bases(ch[0])
                s.writes |= lhs
                if is_pointerish(ch[0].type):  # a pointer or record assigned: where memory is
                    s.storage_writes |= lhs
                    rhs = self.ptr_bases(ch[1])
                    for b in rhs:
                        for a in lhs:
                            self.union(a, b)
                    self._buffer_expr(ch[0], s, lhs)
                    self._buffer_expr(ch[1], s, rhs)
                    return
        elif k == CK.COMPOUND_ASSIGNMENT_OPERATOR or (k == CK.UNARY_OPERATOR and unary_op(c) in ("++", "--")):
            ch = list(c.get_children())
            if ch:
                lhs = self.lvalue_bases(ch[0])
                s.writes |= lhs
                if is_pointerish(ch[0].type):  # p += k moves a pointer
                    s.storage_writes |= lhs
                    self._buffer_expr(ch[0], s, lhs)
                    for rest in ch[1:]:
                        self._expr(rest, s)
                    return
        elif k == CK.CALL_EXPR:
            self._call(c, s)
            return
        elif k == CK.CXX_UNARY_EXPR:  # sizeof, alignof: the type matters, not the value
            for ch in c.get_children():
                self._buffer_expr(ch, s, None)
            return
        for ch in c.get_children():
            self._expr(ch, s)

    def _call(self, c: ci.Cursor, s: Stmt) -> None:
        children = list(c.get_children())
        callee = strip(children[0]) if children else None
        direct = (
            callee is not None
            and callee.kind == CK.DECL_REF_EXPR
            and callee.referenced is not None
            and callee.referenced.kind == CK.FUNCTION_DECL
        )
        args = list(c.get_arguments())
        if direct:
            fn = callee.referenced
            name, key = fn.spelling, fn.get_usr()
            ftype = canon(fn.type)
            has_proto = ftype.kind == TK.FUNCTIONPROTO
            ptypes = list(ftype.argument_types()) if has_proto else []
            variadic = has_proto and ftype.is_function_variadic()
        else:
            name = key = None
            has_proto, ptypes, variadic = False, [], True
            if callee is not None:
                self._expr(children[0], s)  # the function pointer is read
        readonly: list[bool | None] = []
        for i in range(len(args)):
            if i < len(ptypes):
                t = canon(ptypes[i])
                readonly.append(canon(t.get_pointee()).is_const_qualified() if t.kind == TK.POINTER else True)
            else:
                readonly.append(None)
        call = Call(
            s,
            c,
            name,
            key,
            args,
            [text_of(a) for a in args],
            [self.ptr_bases(a) if is_pointerish(a.type) else set() for a in args],
            [self.lvalue_bases(a) if name in catalog.MUTATES_HANDLE else set() for a in args],
            readonly,
            variadic,
            has_proto,
            line=c.location.line,
            value_used=not (s.kind == "expr" and strip(s.cursor) == c),
        )
        if name is not None and canon(c.type).kind == TK.POINTER:
            s.reads.add(self.pseudo(name))  # *f() and f()->x read what f returns
        if name is not None:
            call.io = catalog.io_kind(name, call.arg_texts)
        s.calls.append(call)
        s.func.calls.append(call)
        data = catalog.DATA_ARG.get(name or "")
        for i, a in enumerate(args):
            if i == data or call.arg_bases[i]:
                # the memory a pointer argument reaches: the marker decides what the callee needs of it
                # (a data buffer and free() need where it is; a user function what its parameter needs)
                self._buffer_expr(a, s, self.ptr_bases(a) if i == data else call.arg_bases[i])
            else:
                self._expr(a, s)

    def _buffer_expr(self, c: ci.Cursor, s: Stmt, buffers: set[Var] | None) -> None:
        """An expression whose variables matter for where memory is, not what it holds: the data buffer
        of an I/O call (`buffers`, the memory it points into; offsets and indices in it are ordinary
        reads) or the operand of sizeof (None: all of its variables)."""
        outer, s.reads = s.reads, set()
        self._expr(c, s)
        inner, s.reads = s.reads, outer
        for v in inner:
            (s.buffer_reads if buffers is None or v in buffers else s.reads).add(v)

    def pseudo(self, name: str) -> Var:
        """The storage a pointer returned by function `name` points to, as one global
        variable: `errno = 0` is a write to *__errno_location(), `if (errno)` a read."""
        key = f"iotuner:result:{name}"
        v = self.vars.get(key)
        if v is None:
            v = self.vars[key] = Var(key, f"*{name}()", True, True)
        return v

    def lvalue_bases(self, c: ci.Cursor) -> set[Var]:
        """The variables whose storage an lvalue denotes (a field or element belongs to its base)."""
        c = strip(c)
        k = c.kind
        if k == CK.DECL_REF_EXPR:
            ref = c.referenced
            return {self.var(ref)} if ref is not None and ref.kind in (CK.VAR_DECL, CK.PARM_DECL) else set()
        ch = list(c.get_children())
        if k == CK.MEMBER_REF_EXPR and ch:
            return self.lvalue_bases(ch[0]) if canon(ch[0].type).kind != TK.POINTER else self._through(ch[0])
        if k == CK.ARRAY_SUBSCRIPT_EXPR and len(ch) == 2:
            base = ch[0] if is_pointerish(ch[0].type) else ch[1]
            return self._through(base)
        if k == CK.UNARY_OPERATOR and ch:
            return self._through(ch[0]) if unary_op(c) == "*" else self.lvalue_bases(ch[0])
        return self.ptr_bases(c)

    def _through(self, ptr: ci.Cursor) -> set[Var]:
        """What a write through the pointer expression ptr changes; through a call's result
        (`*__errno_location() = 0`, `get()->n = 1`) that is the call's pseudo variable."""
        out = self.ptr_bases(ptr)
        p = strip(ptr)
        if p.kind == CK.CALL_EXPR:
            callee = strip(next(iter(p.get_children()), p))
            if callee.kind == CK.DECL_REF_EXPR and callee.referenced is not None:
                out.add(self.pseudo(callee.referenced.spelling))
        return out

    def ptr_bases(self, c: ci.Cursor) -> set[Var]:
        """The variables whose storage a pointer-valued expression can point into."""
        c = strip(c)
        k = c.kind
        ch = list(c.get_children())
        if k == CK.DECL_REF_EXPR:
            return self.lvalue_bases(c)
        if k == CK.UNARY_OPERATOR and ch:
            op = unary_op(c)
            if op == "&":
                return self.lvalue_bases(ch[0])
            return self.ptr_bases(ch[0])
        if k in (CK.MEMBER_REF_EXPR, CK.ARRAY_SUBSCRIPT_EXPR):
            return self.lvalue_bases(c)
        if k == CK.CONDITIONAL_OPERATOR and len(ch) == 3:
            return self.ptr_bases(ch[1]) | self.ptr_bases(ch[2])
        if k == CK.CALL_EXPR:  # a pointer returned by a call may point into a pointer argument (strchr, memcpy)
            out: set[Var] = set()
            for a in c.get_arguments():
                if is_pointerish(a.type):
                    out |= self.ptr_bases(a)
            return out
        out = set()
        for d in c.walk_preorder():
            if (
                d.kind == CK.DECL_REF_EXPR
                and d.referenced is not None
                and d.referenced.kind in (CK.VAR_DECL, CK.PARM_DECL)
                and is_pointerish(d.type)
            ):
                out.add(self.var(d.referenced))
        return out

    # ------------------------------------------------------------ after all sources

    def finish(self) -> None:
        """Summaries, writers per alias class, I/O reach, markers and unsupported constructs."""
        self._noreturn()
        self._summaries()
        self._writers()
        self._io_reach()
        self._apply_regions()
        for st in self.stmts:
            if any(c.name in catalog.MPI_SENDS for c in st.calls):
                self.sends.append(st)
        for key, (name, wheres) in self.address_taken.items():
            f = self.funcs.get(key)
            if (f is not None and f.leads_to_io) or (f is None and catalog.io_kind(name, [])):
                why = f" ({f.io_why})" if f is not None else ""
                self.unsupported.append(
                    Unsupported(
                        f"I/O through a function pointer: {name}{why} is used as a value, so the calls that reach "
                        "it cannot be found",
                        ", ".join(sorted(set(wheres))),
                    )
                )

    def written_args(self, call: Call) -> list[tuple[int, set[Var]]]:
        """(position, variables) of the arguments the call may write through. Logging calls
        write nothing the kernel keeps: they are dropped, so they must not pull code in."""
        out = []
        if catalog.is_logging(call.name or ""):
            return out
        callee = self.funcs.get(call.key) if call.key else None
        for i, bases in enumerate(call.arg_bases):
            if callee is not None:
                hit = i in callee.writes_params or (i >= len(callee.params))
            elif call.name is None or not call.has_proto:
                hit = True
            elif call.param_readonly[i] is None:  # a variadic argument
                hit = call.name not in catalog.VARIADIC_READS
            else:
                hit = not call.param_readonly[i]
            if hit and bases:
                out.append((i, bases))
        for i in catalog.MUTATES_HANDLE.get(call.name or "", ()):
            if i < len(call.handle_bases) and call.handle_bases[i]:
                out.append((i, call.handle_bases[i]))
        return out

    def _noreturn(self) -> None:
        """Functions that end in a terminator at their top level (k_fatal, usage errors): their
        calls are terminators too."""
        for f in self.funcs.values():
            if f.cursor.type.get_canonical().spelling.endswith("__attribute__((noreturn))"):
                f.noreturn = True
        changed = True
        while changed:
            changed = False
            for f in self.funcs.values():
                if f.noreturn or f.body is None:
                    continue
                for st in f.body.children:
                    if st.kind == "expr" and any(self._ends(c) for c in st.calls if not c.value_used):
                        f.noreturn = changed = True
                        break
        for st in self.stmts:
            if st.kind == "expr" and any(self._ends(c) for c in st.calls if not c.value_used):
                st.terminator = True

    def _ends(self, call: Call) -> bool:
        if call.name in catalog.TERMINATORS:
            return True
        g = self.funcs.get(call.key) if call.key else None
        return g is not None and g.noreturn

    def _summaries(self) -> None:
        def classes_written(f: Func) -> set[Var]:
            cls = {self.find(v) for st in f.stmts for v in st.writes}
            for call in f.calls:
                for _, bases in self.written_args(call):
                    cls |= {self.find(b) for b in bases}
                callee = self.funcs.get(call.key) if call.key else None
                if callee is not None:
                    cls |= callee.writes_globals
            return cls

        members: dict[Var, list[Var]] = {}
        for v in self.vars.values():
            members.setdefault(self.find(v), []).append(v)
        self.members = members
        changed = True
        while changed:
            changed = False
            for f in self.funcs.values():
                for cls in classes_written(f):
                    for m in members.get(cls, ()):
                        if m.is_global and cls not in f.writes_globals:
                            f.writes_globals.add(cls)
                            changed = True
                        if m.func is f and m.index >= 0 and m.index not in f.writes_params:
                            f.writes_params.add(m.index)
                            changed = True

    def _writers(self) -> None:
        for st in self.stmts:
            for v in st.writes:
                self.writers.setdefault(self.find(v), []).append((st, None, v not in st.storage_writes))
            for call in st.calls:
                callee = self.funcs.get(call.key) if call.key else None
                for i, bases in self.written_args(call):
                    content = _points_to_values(call.args[i].type) and not catalog.is_closer(call.name)
                    for b in bases:
                        self.writers.setdefault(self.find(b), []).append(
                            (st, (callee, i) if callee is not None and i < len(callee.params) else None, content)
                        )
                if callee is not None:
                    for cls in callee.writes_globals:
                        self.writers.setdefault(cls, []).append((st, None, False))

    def compression_filters(self) -> list[str]:
        """Where the program sets an HDF5 filter whose output size depends on the data (file:line name)."""
        return [
            f"{call.name} at {Path(str(call.cursor.location.file)).name}:{call.line}"
            for st in self.stmts
            for call in st.calls
            if call.name in catalog.VALUE_FILTERS
        ]

    def _io_reach(self) -> None:
        for f in self.funcs.values():
            for call in f.calls:
                if call.io and call.io != "mpi":  # MPI_Init/Finalize: kept, but no reason to keep callers
                    f.leads_to_io, f.io_why = True, f"calls {call.name}"
                    break
        changed = True
        while changed:
            changed = False
            for f in self.funcs.values():
                if f.leads_to_io:
                    continue
                for call in f.calls:
                    g = self.funcs.get(call.key) if call.key else None
                    if g is not None and g.leads_to_io:
                        f.leads_to_io, f.io_why = True, f"calls {g.name}, which leads to I/O"
                        changed = True
                        break
        for st in self.stmts:
            for call in st.calls:
                g = self.funcs.get(call.key) if call.key else None
                if call.io:
                    st.is_root, st.root_why = True, f"{call.io} call {call.name}"
                elif g is not None and g.leads_to_io:
                    st.is_root, st.root_why = True, f"calls {g.name}, which leads to I/O"
                if call.name in catalog.NONLOCAL_JUMPS:
                    self.unsupported.append(
                        Unsupported(
                            f"{call.name}: control flow through a non-local jump cannot be followed",
                            f"{Path(str(call.cursor.location.file)).name}:{call.line}",
                        )
                    )

    def _apply_regions(self) -> None:
        for src in self.sources:
            for f in src.funcs:
                for st in f.stmts:
                    for r in src.regions:
                        if r.kind == "keep" and r.start <= st.start < r.end and st.kind != "compound":
                            st.is_root, st.root_why = True, f"keep marker (line {r.line})"
                            if not f.leads_to_io:
                                f.leads_to_io, f.io_why = True, "keep marker"
                        if r.kind == "drop" and r.start <= st.start < r.end:
                            st.forbidden = True
                    if st.parent is not None and st.parent.forbidden:
                        st.forbidden = True
        # a function whose only I/O is in a keep region leads to I/O: its callers too
        changed = True
        while changed:
            changed = False
            for f in self.funcs.values():
                if f.leads_to_io:
                    continue
                if any(self.funcs.get(c.key) is not None and self.funcs[c.key].leads_to_io for c in f.calls if c.key):
                    f.leads_to_io, f.io_why = True, "calls a function with a keep marker"
                    changed = True
        for st in self.stmts:
            for call in st.calls:
                g = self.funcs.get(call.key) if call.key else None
                if g is not None and g.leads_to_io and not st.is_root:
                    st.is_root, st.root_why = True, f"calls {g.name}, which leads to I/O"


def _points_to_values(t: ci.Type) -> bool:
    """An argument of this type lets a call change numbers only (double *, void *), not pointers or records
    that say where other memory is."""
    t = canon(t)
    if t.kind == TK.POINTER:
        return not is_pointerish(t.get_pointee())
    if t.kind in _ARRAYS:
        return not is_pointerish(t.element_type)
    return False


def _shape(c: ci.Cursor) -> tuple[str, list[ci.Cursor], list[tuple[ci.Cursor, str]]]:
    """(kind, own expressions, sub-statements with their slot) of a statement cursor."""
    k = c.kind
    ch = list(c.get_children())
    if k == CK.COMPOUND_STMT:
        return "compound", [], [(x, "") for x in ch]
    if k == CK.IF_STMT:
        subs = [(ch[1], "then")] + ([(ch[2], "else")] if len(ch) > 2 else [])
        return "if", ch[:1], subs
    if k == CK.FOR_STMT:
        return "for", ch[:-1], [(ch[-1], "body")]
    if k == CK.WHILE_STMT:
        return "while", ch[:-1], [(ch[-1], "body")]
    if k == CK.DO_STMT:
        return "do", ch[1:], [(ch[0], "body")]
    if k == CK.SWITCH_STMT:
        return "switch", ch[:-1], [(ch[-1], "body")]
    if k == CK.CASE_STMT:
        return "case", ch[:-1], [(ch[-1], "sub")]
    if k == CK.DEFAULT_STMT:
        return "default", [], [(ch[-1], "sub")] if ch else []
    if k == CK.LABEL_STMT:
        return "label", [], [(ch[-1], "sub")] if ch else []
    if k == CK.RETURN_STMT:
        return "return", ch, []
    if k == CK.GOTO_STMT:
        return "goto", [], []
    if k == CK.BREAK_STMT:
        return "break", [], []
    if k == CK.CONTINUE_STMT:
        return "continue", [], []
    if k == CK.NULL_STMT:
        return "null", [], []
    if k == CK.DECL_STMT:
        return "decl", [c], []
    return "expr", [c], []


_MARKER = re.compile(rb"iotuner:(keep|drop)(?:\s+(begin|end))?\b")


def _regions(src: Source) -> list[Region]:
    """Keep and drop regions from the marker comments of a source."""
    regions: list[Region] = []
    open_: dict[str, tuple[int, int]] = {}
    for start, end in src.comments:
        m = _MARKER.search(src.text, start, end)
        if not m:
            continue
        what, edge = m.group(1).decode(), (m.group(2) or b"").decode()
        line = src.line_of(start)
        if edge == "begin":
            if what in open_:
                raise MarkerError(
                    f"{src.path.name}:{line}: 'iotuner:{what} begin' inside another "
                    f"'iotuner:{what} begin' (line {open_[what][1]})"
                )
            open_[what] = (end, line)
        elif edge == "end":
            if what not in open_:
                raise MarkerError(f"{src.path.name}:{line}: 'iotuner:{what} end' without a begin")
            b, bline = open_.pop(what)
            regions.append(Region(b, start, what, bline))
        else:  # a single statement: the one on this line, else the next
            line_start = src.text.rfind(b"\n", 0, start) + 1
            line_end = src.text.find(b"\n", end)
            before = src.text[line_start:start].strip()
            if before:
                regions.append(Region(line_start, line_end if line_end >= 0 else len(src.text), what, line))
            else:
                regions.append(Region(end, _next_statement_end(src.text, end), what, line))
    if open_:
        what, (_, line) = next(iter(open_.items()))
        raise MarkerError(f"{src.path.name}:{line}: 'iotuner:{what} begin' has no 'iotuner:{what} end'")
    return regions


def _next_statement_end(text: bytes, pos: int) -> int:
    """End of the line after pos that holds code (the statement a lone marker comment is about)."""
    while True:
        nl = text.find(b"\n", pos)
        if nl < 0:
            return len(text)
        nxt = text.find(b"\n", nl + 1)
        line = text[nl + 1 : nxt if nxt >= 0 else len(text)].strip()
        if line and not line.startswith((b"//", b"/*")):
            return nxt if nxt >= 0 else len(text)
        pos = nl + 1
