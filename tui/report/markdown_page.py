"""A report as Markdown for a pull request or a ticket: the same sections, tables as
Markdown tables, the findings as lists, the rank strip as the command line draws it.

No SVG: GitHub and GitLab strip inline <svg> from Markdown and show no data: image in a
comment, so a chart would arrive as nothing or as markup. The tables carry every number the
bars draw, and the strip is text already (`proftui cluster`'s), kept in a code block."""

from __future__ import annotations

from proftui.tui.report.content import Bars, Grid, Report, Section, Strip, number_text
from proftui.tui.report.escape import markdown_text
from proftui.tui.text.format import fmt_duration
from proftui.tui.text.safe import safe

EVIDENCE = 3  # evidence ranges listed a finding (the HTML lists more, the JSON all)


def render_markdown(report: Report) -> str:
    """The Markdown of `report`."""
    out = [f"# {markdown_text(report.title)}", ""]
    for line in report.lines:
        out += [markdown_text(line), ""]
    for section in report.sections:
        out += _section(section)
    if report.version:
        out += [f"<sub>written by {markdown_text(report.version)}</sub>", ""]
    return "\n".join(out)


def _section(section: Section) -> list[str]:
    out = [f"## {markdown_text(section.title)}", ""]
    if section.command:
        out += [f"The same numbers: {_code(section.command)}", ""]
    for line in section.lines:
        out += [markdown_text(line), ""]
    for chart in section.charts:
        if isinstance(chart, Strip) and chart.text:
            out += [_fenced(chart.text), ""]
        elif isinstance(chart, Bars) and chart.note:
            out += [markdown_text(chart.note), ""]
    for finding in section.findings:
        out += _finding(finding, section.origin_ns)
    for grid in section.grids:
        out += _grid(grid)
    return out


def _grid(grid: Grid) -> list[str]:
    out = [f"**{markdown_text(grid.title)}**", ""]
    out.append("| " + " | ".join(markdown_text(h) for h in grid.headers) + " |")
    out.append("|" + "|".join("---:" if r else ":---" for r in grid.right) + "|")
    out += ["| " + " | ".join(markdown_text(c) for c in row) + " |" for row in grid.rows]
    if grid.more:
        out.append(f"\n... and {grid.more} more rows (the command prints them all)")
    return out + [""]


def _finding(finding: dict, origin_ns: int | None) -> list[str]:
    group = f" [{finding['group']}]" if finding["group"] else ""
    source = "" if finding["source"] == "timeline" else f" (source: {finding['source']})"
    numbers = ", ".join(f"{k} {number_text(k, v)}" for k, v in finding["numbers"].items())
    out = [f"- **{finding['severity'].upper()}** {markdown_text(finding['rule'] + group)}: "
           f"{markdown_text(finding['title'] + source)}",
           f"  loses {fmt_duration(finding['time_lost_ns'])} per step "
           f"({finding['share'] * 100:.1f} % of the median step); {markdown_text(numbers)}"]
    for e in finding["evidence"][:EVIDENCE]:
        at = (f"at {fmt_duration(e['start_ns'] - origin_ns)}: " if origin_ns is not None
              else "")
        out.append(f"  - {at}{markdown_text(e['label'])} "
                   f"({fmt_duration(e['end_ns'] - e['start_ns'])})")
    if len(finding["evidence"]) > EVIDENCE:
        out.append(f"  - ... {len(finding['evidence']) - EVIDENCE} more ranges "
                   "(`proftui advise --json`)")
    out.append(f"  - fix: {markdown_text(finding['suggestion'])}")
    return out + [""]


def _code(text: str) -> str:
    """`text` as inline code, fenced by more backticks than it holds in a row."""
    text = safe(text)
    fence = "`" * (_longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fenced(lines: tuple[str, ...]) -> str:
    """`lines` in a code block whose fence no line can close."""
    text = "\n".join(safe(line.rstrip("\n")) for line in lines)
    fence = "`" * max(3, _longest_run(text) + 1)
    return f"{fence}text\n{text}\n{fence}"


def _longest_run(text: str) -> int:
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return longest
