"""I/O kernels: an application cut down to the code its I/O depends on (TunIO's I/O discovery).

`iotuner kernel` writes OUTDIR/kernel.json; other tools read it through this
module, which needs no libclang:

    k = iotuner.kernel.load("kern")
    k.command()      # what to run per trial: the kernel, or the application when it fell back
    k.app_command()  # the application, for confirmation runs
    k.scale          # application bytes (and time) per kernel byte: > 1 with loop reduction
    k.validation     # the comparison the kernel passed or failed

Commands are the application's argv without launcher, as `iotuner tune`
takes them; `{scratch}` stays in place for the caller to fill in.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..files import write_atomic

MANIFEST = "kernel.json"
KIND = "iotuner-kernel"
VERSION = 1
STATUSES = ("validated", "fallback", "unvalidated")


class KernelError(ValueError):
    """OUTDIR holds no readable kernel manifest."""


@dataclass
class Kernel:
    outdir: Path
    data: dict

    @property
    def status(self) -> str:
        return self.data["status"]

    @property
    def usable(self) -> bool:
        """Built and validated: trials may run the kernel instead of the application."""
        return self.status == "validated"

    @property
    def reason(self) -> str | None:
        return self.data.get("reason")

    def command(self) -> list[str]:
        """The command one evaluation runs: the kernel when usable, else the application."""
        return self.kernel_command() if self.usable else self.app_command()

    def kernel_command(self) -> list[str]:
        return list(self.data["kernel"]["command"])

    def app_command(self) -> list[str]:
        cmd = self.data["application"]["command"]
        if not cmd:
            raise KernelError(f"{self.outdir / MANIFEST} has no application command (made without one)")
        return list(cmd)

    @property
    def cwd(self) -> Path | None:
        c = self.data["application"].get("cwd")
        return Path(c) if c else None

    @property
    def scale(self) -> float:
        """Multiply the kernel's bytes, calls and I/O time by this to predict the application's
        (loop reduction); 1.0 when the kernel is not used."""
        return float(self.data.get("scale", 1.0)) if self.usable else 1.0

    @property
    def loop_fraction(self) -> float:
        return float(self.data.get("loop_fraction", 1.0))

    @property
    def path_prefix(self) -> str | None:
        return self.data.get("path_prefix")

    @property
    def validation(self) -> dict:
        return self.data.get("validation") or {}

    @property
    def speedup(self) -> float | None:
        """Application time over kernel time for one evaluation, as measured by the validation."""
        return self.validation.get("speedup")


def load(outdir: str | os.PathLike) -> Kernel:
    outdir = Path(outdir)
    path = outdir / MANIFEST
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise KernelError(f"{outdir} holds no kernel: {MANIFEST} is missing (make one with 'iotuner kernel')") from None
    except OSError as e:
        raise KernelError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise KernelError(f"{path} is corrupt: {e}") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise KernelError(f"{path} is not an iotuner kernel manifest")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise KernelError(f"{path} has manifest version {data.get('version')!r}; this iotuner reads up to {VERSION}")
    if data.get("status") not in STATUSES:
        raise KernelError(f"{path} has an unknown status {data.get('status')!r}")
    for key in ("application", "kernel"):
        if not isinstance(data.get(key), dict):
            raise KernelError(f"{path} lacks '{key}'")
    return Kernel(outdir, data)


def save(outdir: Path, data: dict) -> Path:
    """Writes the manifest atomically (a reader never sees half a file)."""
    outdir.mkdir(parents=True, exist_ok=True)
    return write_atomic(outdir / MANIFEST, json.dumps(data, indent=1) + "\n")
