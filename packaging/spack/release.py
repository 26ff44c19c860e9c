#!/usr/bin/env python3
"""The release step of the Spack recipe: the source tarball of a tagged version, and its checksum.

    packaging/spack/release.py 0.2.0              # from tag v0.2.0
    packaging/spack/release.py 0.2.0 --ref HEAD   # a dry run from another commit

Exports the tagged tree (git archive, so nothing untracked gets in), builds its sdist with scikit-build-core
(reproducible: the same tree gives the same bytes), writes it as OUT/iotuner-VERSION.tar.gz and puts
version("VERSION", sha256=...) into the recipe, replacing an older line of that version. The release then
publishes that tarball where the recipe's url says (a release asset of the tag).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPE = Path(__file__).resolve().parent / "spack_repo" / "iotuner" / "packages" / "py_iotuner" / "package.py"


def build_sdist(ref: str, out: Path) -> Path:
    """The sdist of ref's tree, in out."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="iotuner-release-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref], check=True,
                                 capture_output=True).stdout
        tree = Path(tmp) / "tree"
        tree.mkdir()
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        epoch = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct", ref], check=True,
                               capture_output=True, text=True).stdout.strip()
        code = ("import sys, scikit_build_core.build as b; "
                "print(b.build_sdist(sys.argv[1]))")
        name = subprocess.run([sys.executable, "-c", code, str(out.resolve())], cwd=tree, check=True,
                              capture_output=True, text=True, env={"SOURCE_DATE_EPOCH": epoch, "PATH": "/usr/bin:/bin"}
                              ).stdout.strip().splitlines()[-1]
    return out / name


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record(recipe: Path, version: str, digest: str) -> None:
    """version(VERSION, sha256=...) in the recipe: replaces a line of that version, else goes first among
    the released versions (after version("main", ...))."""
    text = recipe.read_text()
    line = f'    version("{version}", sha256="{digest}")\n'
    mine = re.compile(rf'^    version\("{re.escape(version)}", sha256="[0-9a-f]*"\)\n', re.M)
    if mine.search(text):
        text = mine.sub(line, text)
    else:
        anchor = re.search(r"^    # released versions.*\n", text, re.M)
        if not anchor:
            raise SystemExit(f"release.py: {recipe} has no '# released versions' line to put {version} under")
        text = text[:anchor.end()] + line + text[anchor.end():]
    recipe.write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("version")
    p.add_argument("--ref", help="the commit to release (default: tag vVERSION)")
    p.add_argument("--out", type=Path, default=ROOT / "dist", help="where the tarball goes (default: dist/)")
    p.add_argument("--recipe", type=Path, default=RECIPE)
    opts = p.parse_args(argv)
    tarball = build_sdist(opts.ref or f"v{opts.version}", opts.out)
    with tarfile.open(tarball) as tar:
        declared = next(m for m in tar.getnames() if m.endswith("/pyproject.toml"))
        pyproject = tar.extractfile(declared).read().decode()
    found = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    if found != opts.version or tarball.name != f"iotuner-{opts.version}.tar.gz":
        raise SystemExit(f"release.py: the tree says version {found} ({tarball.name}), not {opts.version}")
    digest = sha256(tarball)
    record(opts.recipe, opts.version, digest)
    print(f"{tarball}  sha256 {digest}  (recorded in {opts.recipe})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
