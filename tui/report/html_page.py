"""A report as one self-contained HTML page: its style inline, its charts inline SVG, no
script, and a Content-Security-Policy that lets the page fetch nothing."""

from __future__ import annotations

from proftui.tui.report.content import Bars, Grid, Report, Section, number_text
from proftui.tui.report.escape import html_text
from proftui.tui.report.svg import heat_strip, stacked_bars
from proftui.tui.text.format import fmt_duration

# Nothing may be loaded: no script, no font, no image, no frame; only the inline style.
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
EVIDENCE = 5  # evidence ranges listed a finding (the JSON has them all)
STYLE = """
body{font-family:sans-serif;margin:1.5em;color:#1d1d1d;max-width:1100px}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.2em;border-bottom:1px solid #ccc;
margin-top:1.6em} h3{font-size:1em;margin-bottom:.3em}
p.command{color:#555;font-size:.9em;margin-top:0} code{background:#f2f2f2;padding:0 .2em}
table{border-collapse:collapse;font-size:.85em;margin:.4em 0 1em}
th,td{border:1px solid #ddd;padding:.15em .5em;white-space:nowrap}
td{max-width:40em;overflow:hidden;text-overflow:ellipsis}
th{background:#f4f4f4;text-align:left} td.n{text-align:right;font-variant-numeric:tabular-nums}
div.wide{overflow-x:auto;max-width:100%} div.grids{display:flex;flex-wrap:wrap;column-gap:2em}
div.finding{border-left:4px solid #999;padding:.2em .8em;margin:.6em 0}
div.high{border-color:#bd0026} div.medium{border-color:#f39c12} div.low{border-color:#7f8c8d}
span.severity{font-weight:bold;text-transform:uppercase} ul{margin:.2em 0}
figure{margin:.6em 0} figcaption{font-size:.9em;color:#333;margin-bottom:.3em}
"""


def render_html(report: Report) -> str:
    """The page of `report`."""
    body = [f"<h1>{html_text(report.title)}</h1>"]
    body += [f"<p>{html_text(line)}</p>" for line in report.lines]
    body += [_section(s) for s in report.sections]
    if report.version:
        body.append(f'<p class="command">written by {html_text(report.version)}</p>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html_text(report.title)}</title><style>{STYLE}</style></head>\n"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")


def _section(section: Section) -> str:
    out = [f"<section><h2>{html_text(section.title)}</h2>"]
    if section.command:
        out.append(f'<p class="command">the same numbers: <code>'
                   f"{html_text(section.command)}</code></p>")
    out += [f"<p>{html_text(line)}</p>" for line in section.lines]
    for chart in section.charts:
        svg = stacked_bars(chart) if isinstance(chart, Bars) else heat_strip(chart)
        note = f"<p>{html_text(chart.note)}</p>" if isinstance(chart, Bars) and chart.note \
            else ""
        out.append(f'<figure><figcaption>{html_text(chart.title)}</figcaption>'
                   f'<div class="wide">{svg}</div>{note}</figure>')
    out += [_finding(f, section.origin_ns) for f in section.findings]
    if section.grids:  # side by side where the page is wide enough
        out.append('<div class="grids">' + "".join(_grid(g) for g in section.grids)
                   + "</div>")
    out.append("</section>")
    return "\n".join(out)


def _grid(grid: Grid) -> str:
    head = "".join(f"<th>{html_text(h)}</th>" for h in grid.headers)
    rows = []
    for cells, ns in zip(grid.rows, grid.ns):
        tds = []
        for text, right, value in zip(cells, grid.right, ns):
            data = f' data-ns="{value}"' if value is not None else ""
            shown = html_text(text)  # a long name is cut by the style: whole in its title
            tip = f' title="{shown}"' if not right and len(text) > 60 else ""
            tds.append(f'<td{" class=n" if right else ""}{data}{tip}>{shown}</td>')
        rows.append("<tr>" + "".join(tds) + "</tr>")
    more = (f"<p>... and {grid.more} more rows (the command prints them all)</p>"
            if grid.more else "")
    return (f"<div class=\"wide\"><h3>{html_text(grid.title)}</h3><table><thead><tr>{head}"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}</div>")


def _finding(finding: dict, origin_ns: int | None) -> str:
    """One finding: severity, rule and title, its cost, its numbers, its evidence, the fix."""
    group = f" [{finding['group']}]" if finding["group"] else ""
    severity = finding["severity"]
    numbers = ", ".join(f"{k} {number_text(k, v)}" for k, v in finding["numbers"].items())
    items = []
    for e in finding["evidence"][:EVIDENCE]:
        at = (f"at {fmt_duration(e['start_ns'] - origin_ns)}, " if origin_ns is not None
              else "")
        step = f", iteration {e['iteration']}" if e.get("iteration") is not None else ""
        items.append(f"<li>{at}{html_text(e['label'])} "
                     f"({fmt_duration(e['end_ns'] - e['start_ns'])}{step})</li>")
    if len(finding["evidence"]) > EVIDENCE:
        items.append(f"<li>... {len(finding['evidence']) - EVIDENCE} more ranges "
                     "(<code>proftui advise --json</code>)</li>")
    source = "" if finding["source"] == "timeline" else f" (source: {finding['source']})"
    return (f'<div class="finding {html_text(severity)}"><h3><span class="severity">'
            f"{html_text(severity)}</span> {html_text(finding['rule'] + group)}: "
            f"{html_text(finding['title'] + source)}</h3>"
            f'<p>loses <b data-ns="{finding["time_lost_ns"]}">'
            f"{fmt_duration(finding['time_lost_ns'])}</b> per step "
            f"({finding['share'] * 100:.1f} % of the median step)</p>"
            f"<p>numbers: {html_text(numbers)}</p>"
            f"<p>evidence:</p><ul>{''.join(items) or '<li>none</li>'}</ul>"
            f"<p>fix: {html_text(finding['suggestion'])}</p></div>")
