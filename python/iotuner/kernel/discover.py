"""discover_io (the paper's Table I): sources and options in, a validated kernel
or a reasoned fall-back to the application out, recorded in OUTDIR/kernel.json."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import KIND, MANIFEST, VERSION, Kernel, build, flags, load, save
from .validate import Launch, validate


@dataclass
class Options:
    sources: list[Path]
    outdir: Path
    app_command: list[str] = field(default_factory=list)  # without launcher; may hold {scratch}
    cwd: Path | None = None
    compile_commands: Path | None = None
    cc: str | None = None
    cflags: str | None = None
    ldflags: str | None = None
    loop_fraction: float = 1.0
    path_prefix: str | None = None
    keep_compute: bool = False  # keep the compute that only makes the values written (kept anyway with compression)
    launch: Launch = field(default_factory=Launch)
    validate: bool = True
    repeats: int = 1
    tolerance: float = 1e-4  # bytes per phase (0.01%)
    timeout: float | None = None


class OptionsError(ValueError):
    """Bad input: the command cannot start (missing sources, bad flags, unbalanced markers)."""


def toolchain_of(opts: Options) -> flags.Toolchain:
    try:
        if opts.compile_commands is not None:
            return flags.from_database(opts.compile_commands, opts.sources)
        return flags.derived(opts.sources, opts.cc, opts.cflags, opts.ldflags)
    except flags.FlagsError as e:
        raise OptionsError(str(e)) from None


def discover_io(opts: Options, progress: Callable[[str], None] = lambda s: None) -> Kernel:
    from . import extract, fmt
    from .model import MarkerError, ParseError

    for s in opts.sources:
        if not s.is_file():
            raise OptionsError(f"source file {s} does not exist")
    if not 0.0 < opts.loop_fraction <= 1.0:
        raise OptionsError(f"--loop-fraction must be in (0, 1], not {opts.loop_fraction}")
    if opts.path_prefix is not None and not opts.path_prefix.startswith("/"):
        raise OptionsError(f"--path-prefix must be an absolute directory, not {opts.path_prefix!r}")
    tc = toolchain_of(opts)
    opts.outdir.mkdir(parents=True, exist_ok=True)
    exe = (opts.outdir / build.EXECUTABLE).resolve()
    data: dict = {
        "kind": KIND,
        "version": VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": "fallback",
        "reason": None,
        "application": {
            "command": list(opts.app_command),
            "cwd": str(opts.cwd) if opts.cwd else None,
            "launcher": opts.launch.as_dict(),
        },
        "kernel": {
            "executable": build.EXECUTABLE,
            "command": [str(exe), *opts.app_command[1:]] if opts.app_command else [str(exe)],
        },
        "loop_fraction": opts.loop_fraction,
        "path_prefix": opts.path_prefix,
        "scale": 1.0,
        "sources": [],
        "functions": {},
        "loops": [],
        "unsupported": [],
        "blocked_by_markers": [],
        "notes": [],
        "build": {"flags_from": tc.origin, "compiler": tc.units[0].compiler, "notes": tc.notes},
        "validation": None,
        "tools": {"clang_format": fmt.version(), "libclang": _libclang_version()},
    }

    def finish(status: str, reason: str | None) -> Kernel:
        from . import summary

        data["status"], data["reason"] = status, reason
        save(opts.outdir, data)
        k = load(opts.outdir)
        (opts.outdir / "validation.txt").write_text(summary.render(k))
        return k

    (opts.outdir / MANIFEST).unlink(missing_ok=True)  # never leave the manifest of an earlier kernel
    progress(f"formatting and parsing {len(opts.sources)} source file(s)")
    try:
        ex = extract.extract(
            tc, loop_fraction=opts.loop_fraction, path_prefix=opts.path_prefix, keep_compute=opts.keep_compute
        )
    except MarkerError as e:
        raise OptionsError(str(e)) from None
    except (ParseError, fmt.FormatError) as e:
        return finish("fallback", str(e))
    build.write(opts.outdir, tc, ex.emitted, ex.formatted, opts.loop_fraction, opts.path_prefix)
    data["sources"] = [
        {
            "original": str(f.original),
            "kernel": f"src/{f.name}",
            "formatted": f"formatted/{f.name}",
            "lines_formatted": f.lines_formatted,
            "lines_kernel": f.lines_kernel,
        }
        for f in ex.emitted.files
    ]
    data["functions"] = {"kept": ex.kept_functions, "dropped": ex.dropped_functions}
    data["compute"] = {"kept": ex.compute_kept, "why": ex.compute_why}
    data["loops"] = [vars(lp) for lp in ex.emitted.loops]
    data["unsupported"] = [{"what": u.what, "where": u.where} for u in ex.unsupported]
    data["blocked_by_markers"] = ex.blocked
    data["notes"] = ex.emitted.notes
    if ex.unsupported:
        u = ex.unsupported[0]
        return finish("fallback", f"the extractor cannot handle this code: {u.what} ({u.where})")
    if opts.loop_fraction < 1.0 and not any(lp.reduced for lp in ex.emitted.loops):
        data["notes"].append("no loop containing I/O could be reduced; the kernel runs every iteration")

    progress("building the kernel with the application's flags")
    b = build.run(opts.outdir)
    data["build"].update({"command": b.command, "ok": b.ok, "log": "build.log", "error": b.error})
    if not b.ok:
        return finish("fallback", f"the kernel does not build: {b.error}")
    if not (opts.validate and opts.app_command):
        return finish(
            "unvalidated",
            "not validated (no application command given)" if not opts.app_command else "not validated (--no-validate)",
        )
    finish("unvalidated", "the validation did not finish")  # what an interrupted run leaves

    v = validate(
        opts.app_command,
        data["kernel"]["command"],
        opts.launch,
        opts.outdir / "validation",
        opts.cwd,
        repeats=opts.repeats,
        tolerance=opts.tolerance,
        loop_fraction=opts.loop_fraction,
        prefix=opts.path_prefix,
        timeout=opts.timeout,
        progress=progress,
    )
    data["validation"] = v
    data["scale"] = v.get("scale", 1.0)
    if "reduction" in v:
        data["loop_scale"] = v["reduction"]["loop_scale"]
    if not v.get("ok"):
        return finish("fallback", v.get("reason") or "validation failed")
    return finish("validated", None)


def _libclang_version() -> str:
    try:
        from importlib.metadata import version

        return version("libclang")
    except Exception:  # noqa: BLE001 - informational only (Debian's python3-clang has no wheel metadata)
        return "unknown"
