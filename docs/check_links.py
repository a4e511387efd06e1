"""Check every internal link of the built site: ``python -m docs.check_links [SITE]``.

Run after ``mkdocs build`` (``.ci/run`` does).  Every internal ``href`` and ``src`` of every
page (relative, or from the site's root) must name a file of the site (a directory means its
``index.html``) and, with a ``#fragment``, an element of that page with that ``id``.
External links are not followed: the build machine has no network.  Exit status 1 lists
each broken link with its page.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id":
                self.ids.add(value)
            elif name in ("href", "src") and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def _read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def broken_links(site: Path) -> list[str]:
    pages = {path: _read(path) for path in sorted(site.rglob("*.html"))}
    problems = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            if not parts.path:
                target = path
            elif parts.path.startswith("/"):  # from the site's root (the 404 page's links)
                target = (site / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = path.relative_to(site)
            if not target.exists():
                problems.append(f"{where}: {link}: no such file")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _read(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: {link}: no element with id {parts.fragment!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    site = Path(arguments[0] if arguments else "site").resolve()
    if not (site / "index.html").exists():
        print(f"{site}: no built site (run mkdocs build first)", file=sys.stderr)
        return 2
    problems = broken_links(site)
    for problem in problems:
        print(problem, file=sys.stderr)
    pages = sum(1 for _ in site.rglob("*.html"))
    print(f"checked the internal links of {pages} pages: {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
