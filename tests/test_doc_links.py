"""Every relative link in the README and the Markdown pages under docs/ and benchmarks/ leads somewhere:
the file exists, and a ``#fragment`` names a heading of the target page, by GitHub's rule for heading
anchors (lower case; punctuation but ``-`` and ``_`` dropped; spaces become ``-``; a repeated heading
gets ``-1``, ``-2``, ...)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "benchmarks").rglob("*.md")],
    key=str,
)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def prose(text: str) -> str:
    """``text`` without its fenced code blocks (a link-like string in code is not a link)."""
    return FENCE.sub("", text)


def anchor(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", prose(page.read_text(encoding="utf-8")), re.M):
        slug = anchor(heading)
        count = seen.get(slug, 0)
        found.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return found


def test_github_s_anchor_rule_as_this_test_applies_it():
    assert anchor("`clock-0.99`: the contrasts at γ = 0.99 (5 seeds, read 2026-11-29)") == (
        "clock-099-the-contrasts-at-γ--099-5-seeds-read-2026-11-29"
    )
    assert anchor("On a CPU: `--preset tiny-cpu`") == "on-a-cpu---preset-tiny-cpu"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path):
    broken = []
    for first, second in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        target = first or second
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        path, _, fragment = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target}: no file {destination.relative_to(ROOT)}")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{target}: no heading #{fragment} in {destination.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)
