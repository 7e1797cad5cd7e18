"""`proftui advise`: what to fix first, each finding with its cost and evidence."""

from __future__ import annotations

import sys

from proftui.tui.commands.common import (
    EXIT_OK,
    TRACE,
    json_option,
    load,
    peaks_asked,
    peaks_options,
    print_json,
    print_warning,
    with_warnings,
)
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.format import fmt_duration
from proftui.tui.text.safe import safe

SPEC = Command(
    "advise", "what to fix first, with evidence ranges",
    "Run the advisor's rules on a profile: each finding with its rule, severity (high from "
    "5 % of the step lost, medium from 1 %), time lost per step, the numbers behind it, "
    "evidence ranges on the timeline and the fix to try; rules that cannot run are listed "
    "with the reason.",
    (*TRACE, json_option("all times in integer ns"),
     Arg("--rules", action="store_true", help="print the rule table (id, what it measures, "
                                              "thresholds, fix) and its version, and exit"),
     Arg("--set", action="append", default=[], metavar="RULE.KEY=VALUE",
         help="override a rule's threshold (repeatable)"),
     *peaks_options()),
    ("proftui advise run.pt.trace.json",
     "proftui advise --set exposed_comm.min_share=0.2 PROF_000001_...",
     "proftui advise --rules",
     "proftui advise --json torch_npu_ascend_pt/ | jq '.findings[0]'"),
    forms=(("proftui advise --rules [--set RULE.KEY=VALUE ...] [--json]",
            "the rule table, without a profile"),))


def cmd_advise(argv: list[str]) -> int:
    if "--rules" in argv and not ({"-h", "--help"} & set(argv)):  # needs no profile
        return _print_rules("--json" in argv, argv)
    _, args = SPEC.parse(argv)
    from proftui.core.analysis.advise import parse_overrides
    from proftui.core.ops.iterations import capture_start_ns

    overrides = parse_overrides(args.set)
    index = load(args)
    found = advice(index, overrides, peaks_asked(args))
    if args.json:
        print_json(advise_json(found, index))
        return EXIT_OK
    print_warning(index)  # the damage said first, before the answer
    origin = capture_start_ns(index)
    starts = [e.start_ns for f in found.findings for e in f.evidence]
    if not index.meta.get("sources") and starts:  # no timeline: the tables' own clock
        origin = min(starts)
        sys.stdout.write("no timeline: evidence times are from the first task the tables "
                         "list as evidence\n")
    sys.stdout.write("".join(finding_lines(found, origin)))
    return EXIT_OK


def advice(index, overrides: dict | None = None, peaks: dict | None = None):
    """The advisor's answer on `index` (its rules' thresholds moved by `overrides`, the
    device's peaks as `peaks` asks: peaks_asked); its `to_json()` with the warnings is what
    `proftui advise --json` prints."""
    from proftui.core.analysis.advise import advise
    from proftui.core.analysis.overview import read_overview

    _, tables, iterations = read_overview(index)
    return advise(index, iterations, tables, overrides or {}, peaks)


def json_answer(args, index) -> dict:
    """What `advise --json` prints of the loaded `index` (`proftui mcp` answers it too)."""
    from proftui.core.analysis.advise import parse_overrides

    return advise_json(advice(index, parse_overrides(args.set), peaks_asked(args)), index)


def advise_json(found, index) -> dict:
    """What `proftui advise --json` prints of the advice `found` (see :func:`advice`)."""
    return with_warnings(found.to_json(), index)


def finding_lines(advice, origin_ns: int, limit: int | None = None, evidence: int = 3
                  ) -> list[str]:
    """The findings as text, most time lost first (the first `limit`; evidence times from
    `origin_ns`), then the skipped rules (when all findings are shown)."""
    lines = []
    if not advice.findings:
        lines.append("no findings: no rule's threshold is crossed on this profile\n")
    for n, f in enumerate(advice.findings[:limit], 1):
        group = f" [{safe(f.group)}]" if f.group else ""
        source = "" if f.source == "timeline" else f" (source: {safe(f.source)})"
        lines.append(f"{n}. {f.severity.upper()} {f.rule}{group}: {safe(f.title)}{source}\n"
                     f"   loses {fmt_duration(f.time_lost_ns)} per step "
                     f"({f.share * 100:.1f} % of the median step)\n")
        for e in f.evidence[:evidence]:
            lines.append(f"   at {fmt_duration(e.start_ns - origin_ns)}: "
                         f"{safe(e.label)} ({fmt_duration(e.end_ns - e.start_ns)})\n")
        if len(f.evidence) > evidence:
            lines.append(f"   ... {len(f.evidence) - evidence} more range(s) (--json)\n")
        lines.append(f"   fix: {safe(f.suggestion)}\n")
    if limit is None:
        for rule, why in advice.skipped:
            lines.append(f"skipped {rule}: {safe(why)}\n")
    return lines


def _print_rules(as_json: bool, argv: list[str]) -> int:
    from proftui.core.analysis.advise import RULES, RULES_VERSION, parse_overrides

    overrides = parse_overrides([v for k, v in zip(argv, argv[1:]) if k == "--set"])
    table = [r.to_json({**r.params, **overrides.get(r.id, {})}) for r in RULES]
    if as_json:
        print_json({"version": RULES_VERSION, "rules": table})
        return EXIT_OK
    out = [f"advisor rules, version {RULES_VERSION}\n"]
    for r in table:
        limits = ", ".join(f"{r['rule']}.{k}={v:g}" for k, v in r["thresholds"].items())
        out.append(f"{r['rule']}: {r['measures']}\n   thresholds: {limits}\n"
                   f"   fix: {r['suggestion']}\n")
    sys.stdout.write("".join(out))
    return EXIT_OK
