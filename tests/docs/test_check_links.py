"""``python -m docs.check_links``: broken internal links of a built site are found."""

from __future__ import annotations

from pathlib import Path

from docs.check_links import broken_links, main


def _site(root: Path, pages: dict[str, str]) -> Path:
    for name, body in pages.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    return root


def test_good_links_pass(tmp_path: Path) -> None:
    site = _site(
        tmp_path,
        {
            "index.html": '<a href="guide/">g</a> <a href="guide/#run">r</a> <a href="#top">t</a>'
            ' <a href="https://example.org/x">x</a> <h1 id="top">T</h1>',
            "guide/index.html": '<h2 id="run">Run</h2><a href="../">home</a>'
            ' <img src="/img/a.png">',
            "img/a.png": "",
        },
    )
    assert broken_links(site) == []
    assert main([str(site)]) == 0


def test_missing_pages_and_anchors_are_reported(tmp_path: Path) -> None:
    site = _site(
        tmp_path,
        {
            "index.html": '<a href="gone/">g</a> <a href="guide/#nowhere">n</a>',
            "guide/index.html": '<h2 id="run">Run</h2>',
        },
    )
    problems = broken_links(site)
    assert problems == [
        "index.html: gone/: no such file",
        "index.html: guide/#nowhere: no element with id 'nowhere'",
    ]
    assert main([str(site)]) == 1
