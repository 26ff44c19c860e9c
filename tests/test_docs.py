"""Docs stay true to the repository: every file they link or cite exists, and their commands run.

Runnable blocks. A fenced block whose info string is `sh runnable` is run verbatim by bash (-e, -o pipefail):
all the runnable blocks of one document in order, in one fresh temporary directory, so a block sees the files
the ones before it wrote. A block with `file=NAME` in its info string (```json file=tuned.json) is written to
NAME there first, so a document shows a file and then uses it. The environment is a user's after `pip install`
and activating the environment: its bin/ first on PATH (iotuner and the kernels as iotuner-<kernel>), no
IOTUNER_* variables. Keep runnable blocks tiny (2 ranks, MiB not GiB); a command that needs a cluster, Slurm
modules or many ranks stays a plain ```sh block.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "kernels" / "README.md",
    ROOT / "packaging" / "spack" / "README.md",
]


def test_every_linked_file_exists():
    missing = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not missing, missing


def test_no_citation_of_files_outside_the_repository():
    for path in [*DOCS, *(ROOT / "python").rglob("*.py"), *(ROOT / "tests").glob("*.py")]:
        text = path.read_text()
        if path.name in ("test_docs.py", "references.md"):
            continue
        assert "ENVIRONMENT.md" not in text, path
        bare = re.findall(r"(?<![\[\w])paper 00\d(?!\]\()", text)
        if path.suffix == ".md":
            assert not bare, (path, bare)  # docs link the paper list: docs/references.md


FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(doc: Path) -> list[tuple[str, str]]:
    """(info string, body) of the fenced blocks of doc, in order."""
    return [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(doc.read_text())]


def runnable(doc: Path) -> list[tuple[str, str]]:
    return [(info, body) for info, body in blocks(doc) if "runnable" in info.split() or "file=" in info]


RUNNABLE_DOCS = [d for d in DOCS if any("runnable" in info.split() for info, _ in blocks(d))]


def test_the_docs_that_show_commands_have_runnable_blocks():
    """The documents whose commands a new user runs first are checked by running them."""
    names = {str(d.relative_to(ROOT)) for d in RUNNABLE_DOCS}
    assert {
        "README.md",
        "docs/smart.md",
        "docs/tuning.md",
        "docs/advise.md",
        "docs/settings.md",
        "kernels/README.md",
    } <= names, names


def user_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOTUNER_") and k not in ("COLUMNS",)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', os.defpath)}"
    return env


@pytest.mark.mpi
@pytest.mark.parametrize("doc", RUNNABLE_DOCS, ids=[str(d.relative_to(ROOT)) for d in RUNNABLE_DOCS])
def test_runnable_blocks_run_verbatim(doc):
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="iotuner-docs-") as tmp:
        for info, body in runnable(doc):
            name = next((w.split("=", 1)[1] for w in info.split() if w.startswith("file=")), None)
            if name:
                (Path(tmp) / name).write_text(body)
                continue
            r = subprocess.run(
                ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", body],
                cwd=tmp,
                env=user_environment(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert r.returncode == 0, (
                f"{doc.relative_to(ROOT)}: this block failed with status {r.returncode}:\n"
                f"{body}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
            )
    print(f"{doc.relative_to(ROOT)}: runnable blocks ran in {time.monotonic() - start:.1f} s")


def variables_read_by_the_code() -> set[str]:
    """IOTUNER_* variables the code reads: getenv / flag_env in C, os.environ in Python, ${VAR} in scripts."""
    found = set()
    sources = [
        *(ROOT / "native" / "src").rglob("*.c"),
        *(ROOT / "python").rglob("*.c"),
        *(ROOT / "python").rglob("*.py"),
        *(ROOT / "packaging").rglob("*.in"),
        *(ROOT / "scripts").glob("*.sh"),
    ]
    for path in sources:
        text = path.read_text()
        found |= set(re.findall(r'(?:getenv|flag_env)\("(IOTUNER_[A-Z_]+)"\)', text))
        found |= set(re.findall(r'environ(?:\.get\(|\[)"(IOTUNER_[A-Z_]+)"', text))
        found |= set(re.findall(r"\$\{?(IOTUNER_[A-Z_]+)", text))
        found |= set(re.findall(r"^(IOTUNER_[A-Z_]+)=", text, re.M))
    return found


def test_the_environment_table_lists_every_variable_the_code_reads():
    table = (ROOT / "docs" / "environment.md").read_text()
    listed = set(re.findall(r"^\| `(IOTUNER_[A-Z_]+)", table, re.M))
    read = variables_read_by_the_code()
    assert read - listed == set(), f"read but not in docs/environment.md: {sorted(read - listed)}"
    assert listed - read == set(), f"in docs/environment.md but read nowhere: {sorted(listed - read)}"
