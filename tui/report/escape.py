"""Text from a profile (names come from untrusted files) made inert in HTML and Markdown."""

from __future__ import annotations

import html
import re

from proftui.tui.text.safe import safe

# What Markdown reads as markup anywhere in a line or a table cell: emphasis, code, links
# (brackets: a parenthesis or ! is plain without them), HTML, entities and the pipe that
# ends a cell; at a line's start, headings, lists, quotes and numbered items too.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~&])")
_LEADING = re.compile(r"^(\s*)([#+\-]|\d+[.)])(?=\s|$)")


def html_text(text: object) -> str:
    """`text` for HTML or SVG text or an attribute value: control characters shown as
    escapes (as the terminal shows them), then &, <, >, " and ' as entities."""
    return html.escape(safe(text), quote=True)


def markdown_text(text: object) -> str:
    """`text` for a Markdown line or table cell: control characters shown as escapes and
    every character Markdown reads as markup (the cell's pipe among them) backslashed."""
    escaped = _MARKDOWN.sub(r"\\\1", safe(text))
    return _LEADING.sub(_leading, escaped, count=1)


def _leading(match: re.Match[str]) -> str:
    """A line's leading mark with its last character backslashed: \\#, 1\\. ..."""
    space, mark = match.groups()
    return f"{space}{mark[:-1]}\\{mark[-1]}"
