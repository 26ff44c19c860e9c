"""Docs stay true to the repository: every file they link or cite exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "kernels" / "README.md",
        ROOT / "packaging" / "spack" / "README.md"]


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
