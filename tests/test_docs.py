"""The documentation as a reader meets it: README.md and the manual in docs/. Every relative
Markdown link points to a file of the repository and every #anchor to a heading of the page it
names (anchors as GitHub makes them); the README stays short; every manual page starts with its
title and a paragraph saying what it covers. (docs/fmus.md being current: tests/test_examples.py;
the snippets: tests/cosim/test_system.py, tests/study/test_study.py; the Set-up commands:
tests/fmi/test_self_contained.py.)"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"(?<!!)\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)\)")


def prose(text):
    """The Markdown text without fenced code blocks and code spans (links there are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation other than - and _ removed, spaces to -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    """The anchors of the headings of a Markdown file (repeated headings get -1, -2, ...)."""
    seen, found = {}, set()
    for line in re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M).splitlines():
        m = re.match(r"#{1,6} +(.*?) *#*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def test_slug_is_githubs():
    assert slug("Any master: Gauss-Seidel and Jacobi") == "any-master-gauss-seidel-and-jacobi"
    assert (
        slug("Set-up (fresh machine, Python 3.11, a C compiler)")
        == "set-up-fresh-machine-python-311-a-c-compiler"
    )
    assert slug("Force sign = MSL GenerationOfFMUs") == "force-sign--msl-generationoffmus"
    assert (
        slug("ElastoGap with m_a/m_b: the held force may pull")
        == "elastogap-with-m_am_b-the-held-force-may-pull"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(
                f"{target}: no heading with the anchor #{anchor} in {file.relative_to(ROOT)}"
            )
        elif ROOT not in file.parents:
            broken.append(f"{target}: outside the repository")
    assert not broken, "\n".join(broken)


def test_readme_is_short_and_links_every_manual_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    linked = {
        Path(t.partition("#")[0]).name for t in LINK.findall(prose(readme)) if t.startswith("docs/")
    }
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages <= linked, f"not linked from the README: {sorted(pages - linked)}"


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_every_manual_page_starts_with_its_title_and_what_it_covers(page):
    lines = page.read_text().splitlines()
    assert lines[0].startswith("# ") and lines[1] == ""
    assert lines[2].strip() and not lines[2].startswith(("#", "*", "|", "```", "<!--")), lines[2]


REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:tests|src|examples|benchmarks|mutation|docs)/[\w./<>*{}-]*[\w>*}])"
)


def named_paths(text):
    """The repository paths (tests/..., src/..., ...) a text names; placeholders (<Model>, *) skipped."""
    return {p for p in REPO_PATH.findall(text) if not re.search(r"[<*{]", p)}


def test_every_repository_path_named_in_the_docs_and_the_code_exists():
    """A file or folder the manual, a component page, a docstring or a comment names by its path
    in the repository is there, or is one a run writes (git-ignored, such as mutation/REPORT.md);
    a stale path misleads."""
    texts = PAGES + sorted((ROOT / "src" / "contactfmu" / "components").glob("*/README.md"))
    texts += [
        p
        for d in ("src", "tests", "examples", "benchmarks", "mutation")
        for p in (ROOT / d).rglob("*.py")
    ]
    texts += [ROOT / "mutation" / "README.md", ROOT / ".ci" / "run", ROOT / "pyproject.toml"]
    missing = sorted(
        {
            (t.relative_to(ROOT).as_posix(), p)
            for t in texts
            for p in named_paths(t.read_text())
            if not (ROOT / p).exists() and not (ROOT / p.rstrip(".")).exists()
        }
    )
    written = {p for _, p in missing if _ignored(p)}  # written by a run (git-ignored): no file yet
    missing = [(t, p) for t, p in missing if p not in written]
    assert not missing, "\n".join(f"{t}: {p}" for t, p in missing)


def _ignored(path):
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0


def test_named_paths_finds_paths_and_skips_placeholders():
    text = "see `tests/fmi/test_build.py`, src/contactfmu/components/<Name>/ and docs/*.md; not mytests/x.py"
    assert named_paths(text) == {"tests/fmi/test_build.py"}
