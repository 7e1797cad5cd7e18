"""`proftui cluster`: which rank is slow, and who waits for whom at the collectives."""

from __future__ import annotations

import math
import sys

from proftui.tui.commands.common import (
    EXIT_OK,
    TRACE,
    json_option,
    load,
    ops_window,
    print_json,
    print_warning,
    print_whole_table,
    rank_keys,
    top_option,
    with_warnings,
)
from proftui.tui.commands.info import rank_gap_lines
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.format import fmt_duration, plural
from proftui.tui.text.safe import safe

RAMP = "▁▂▃▄▅▆▇█"  # step time, from the cluster's shortest to its longest
SLOWEST = "◆"
WIDTH = 120
MAX_LABEL = 24
STRIPS = {"step": "step_ns", "compute": "compute_ns", "comm": "comm_exposed_ns",
          "free": "free_ns"}
RULE_TEXT = {
    "hccl_name": "by HCCL op name (hcom_<op>__<group>_<index>_<n>)",
    "nccl_args": "by process group and Seq in the NCCL args",
    "order": "in order of appearance of each name"}


SPEC = Command(
    "cluster", "ranks compared: the slow one, who waits for whom",
    "Compare the ranks of a profile (a folder of ranks, or devices): per rank and step the "
    "step time and the device's compute, exposed communication and free time (the "
    "breakdown's numbers), each rank's medians (warm-up left out), the spread of the median "
    "steps and the slowest step; a strip of step time per rank and iteration; each collective "
    "matched across the ranks of its group (by HCCL op name, NCCL args, else order) with its "
    "arrival skew, the rank that came last and each rank's wait; and who waits for whom. "
    "Where HCCL's communication summaries are there: bandwidth per link type (SDMA, RDMA, "
    "HCCS, PCIE, SIO) and rank, the rank x rank link matrix with slow links flagged (under 0.8 "
    "of the median of the step's links of the same transport); where msprof-analyze's "
    "cluster_analysis_output is there, its figures beside proftui's, differences flagged.",
    (*TRACE,
     Arg("--iteration", type=int, metavar="N",
         help="only iteration N: its step on each rank and its collectives"),
     top_option("the K collectives with the largest arrival skew (default 10)", default=10),
     Arg("--strip", choices=tuple(STRIPS), default="step",
         help="what the rank x iteration strip shades: step time (default), compute, exposed "
              "communication or free time"),
     json_option("all times in integer ns")),
    ("proftui cluster cluster_run/               # a folder of rank*_ascend_pt dirs",
     "proftui cluster --iteration 7 --top 20 cluster_run/",
     "proftui cluster --json cluster_run/ | jq '.last_arrivals'"))


def cmd_cluster(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    index = load(args)
    if args.json:
        print_json(json_answer(args, index))
        return EXIT_OK
    found, comm, profiler, gaps = _answer(args, index)
    print_warning(index)  # the damage said first, before the answer
    for line in rank_gap_lines({"ranks": gaps}):
        sys.stdout.write("warning: " + line.removeprefix("warning").strip() + "\n")
    print_cluster(found, args.top, STRIPS[args.strip])
    if comm is not None:
        print_comm(comm)
    if profiler is not None:
        print_profiler(profiler, args.top)
    return EXIT_OK


def _answer(args, index) -> tuple:
    if args.iteration is not None:
        ops_window(args, index)  # the same sentence for an iteration that is not there
    return cluster_answer(index, args.iteration)


def json_answer(args, index) -> dict:
    """What `cluster --json` prints of the loaded `index` (`proftui mcp` answers it too)."""
    return cluster_json(_answer(args, index), args.top, index)


def cluster_answer(index, number: int | None = None) -> tuple:
    """(the cluster, HCCL's communication, msprof-analyze's figures, the ranks missing) of
    `index`, of iteration `number` or of every step."""
    from proftui.core.analysis.cluster import cluster
    from proftui.core.analysis.cluster_comm import read_communication
    from proftui.core.analysis.overview import read_overview

    _, tables, iterations = read_overview(index)
    found = cluster(index, iterations, tables, number=number)
    profile = index.meta.get("profile") or {}
    comm, profiler = read_communication(profile.get("comm", []), tables, found)
    if comm is not None and number is not None:
        comm = comm.only_step(number)
    return found, comm, profiler, profile.get("ranks") or {}


def cluster_json(answer: tuple, top: int, index) -> dict:
    """What `proftui cluster --json` prints of `answer` (see :func:`cluster_answer`)."""
    found, comm, profiler, gaps = answer
    return with_warnings(_ranks_numbered({
        **found.to_json(top),
        "ranks_without_timeline": gaps.get("without_timeline", []),
        "missing_ranks": gaps.get("missing", []),
        "communication": comm.to_json() if comm is not None else None,
        "profiler": profiler.to_json() if profiler is not None else None}), index)


def _ranks_numbered(data: dict) -> dict:
    """The cluster's JSON with each rank a number in `rank` and its label in `group`."""
    data["ranks"] = [rank_keys(r) for r in data["ranks"]]
    data["slowest"] = rank_keys(data["slowest"])
    if data["communication"] is not None:
        links = data["communication"]["link_types"]
        data["communication"]["link_types"] = [rank_keys(r) for r in links]
    return data


def print_comm(comm) -> None:
    """Bandwidth per link type and rank, the link matrix and its slow links."""
    from proftui.core.analysis.cluster_comm import SLOW_DEFINITION, link_type_table

    table = link_type_table(comm)
    if table.n_rows:
        print_whole_table(table, "bandwidth per link type and rank (HCCL's summaries; "
                          "bandwidth = size / time; SDMA sums HCCS, PCIE and SIO); "
                          f"{SLOW_DEFINITION}")
    sys.stdout.write("".join(matrix_lines(comm.matrix)))


def matrix_lines(cells, width: int = WIDTH) -> list[str]:
    """The link matrix as a grid per step and transport (src rows, dst columns, GB/s; `!`
    marks a slow link), within `width` columns; the slow links listed below."""
    from proftui.core.analysis.cluster_comm import SLOW_DEFINITION, endpoint_key

    if not cells:
        return ["link matrix: no links in the communication matrices\n"]
    out = [f"link matrix (GB/s, src rows, dst columns, every op type summed; ! {SLOW_DEFINITION})"
           "\n"]
    grids: dict[tuple, dict[tuple[str, str], object]] = {}
    for c in cells:
        grids.setdefault((c.step, c.transport), {})[(c.src, c.dst)] = c
    for (step, transport), grid in grids.items():
        srcs = sorted({s for s, _ in grid}, key=endpoint_key)
        dsts = sorted({d for _, d in grid}, key=endpoint_key)
        labels = [_cut(safe(x) or "(all)", 10) for x in srcs]
        left = max(len(x) for x in labels)
        cell = max(9, *(len(_cut(safe(d) or "(all)", 10)) + 1 for d in dsts))
        shown = dsts[:max((width - left - 2) // cell, 1)]
        at = f"step {step}, " if step is not None else ""
        more = f" (first {len(shown)} of {len(dsts)} dst; --json has all)" if len(
            shown) < len(dsts) else ""
        out.append(f"  {at}{safe(transport)}{more}\n")
        out.append(" " * (left + 2) + "".join(
            _cut(safe(d) or "(all)", 10).rjust(cell) for d in shown) + "\n")
        for src, label in zip(srcs, labels):
            row = []
            for dst in shown:
                c = grid.get((src, dst))
                text = ("" if c is None else "-" if c.bandwidth_gbps is None
                        else f"{c.bandwidth_gbps:.2f}" + ("!" if c.slow else " "))
                row.append(text.rjust(cell))
            out.append(f"{label.ljust(left)}  {''.join(row)}".rstrip() + "\n")
    slow = [c for c in cells if c.slow]
    for c in slow:
        at = f"step {c.step}: " if c.step is not None else ""
        out.append(f"slow link: {at}{safe(c.src)} -> {safe(c.dst)} {safe(c.transport)} "
                   f"{c.bandwidth_gbps:.2f} GB/s, {c.bandwidth_gbps / c.median_gbps:.0%} of the "
                   f"median of its {c.peers} links ({c.median_gbps:.2f} GB/s)\n")
    if not slow:
        out.append("slow links: none\n")
    from proftui.core.analysis.comm import not_judged
    from proftui.core.analysis.comm_tables import not_judged_text

    if small := not_judged(cells):
        out.append(not_judged_text(small) + "\n")
    return out


def print_profiler(found, top: int) -> None:
    """msprof-analyze's cluster output beside proftui's figures: the differing ones."""
    import os

    from proftui.core.analysis.cluster_comm import FLOORS, TOLERANCE, check_table

    names = ", ".join(safe(os.path.basename(p)) for p in found.files)
    sys.stdout.write(f"msprof-analyze's cluster_analysis_output ({names}) beside proftui's "
                     f"figures: {len(found.checks)} compared, {len(found.differing)} differ "
                     f"(more than {TOLERANCE:.1%} apart and more than 1 µs, 1 kB or "
                     f"{FLOORS['GB/s']} GB/s; or on one side only)\n")
    for error in found.errors:
        sys.stdout.write(f"warning: {safe(error)}\n")
    if found.problems:
        sys.stdout.write("warning: " + ", ".join(f"{n} x {safe(k)}" for k, n in
                                                 found.problems.items()) + "\n")
    differing = found.differing
    if differing:
        table = check_table(differing[:top])
        print_whole_table(table, f"differing figures: the first {table.n_rows} of "
                          f"{len(differing)}")


def print_cluster(found, top: int, strip: str = "step_ns") -> None:
    """The answer as text: its tables rich on a terminal, plain when piped."""
    from proftui.core.analysis.cluster import instance_table, rank_table, step_table

    if not found.ranks:
        sys.stdout.write("nothing to compare: no slices in this profile\n")
        return
    steps = (f"steps from {safe(found.source)}" if found.source
             else "no steps found: the whole capture")
    if len(found.ranks) == 1:
        rank = found.ranks[0]
        who = safe(rank.rank) if rank.rank else "the whole profile"
        sys.stdout.write(f"one rank ({who}): nothing to compare across ranks; {steps}:\n")
        table = step_table(rank)
        warm = [s for s in rank.steps if s.warmup]
        print_whole_table(table, "steps" + ("; warm-up is left out of medians" if warm else ""))
        return
    sys.stdout.write(f"{len(found.ranks)} ranks, {steps}\n")
    table = rank_table(found)
    print_whole_table(table, "ranks: medians over their steps, warm-up left out; Last: "
                      "collectives it arrived last at; Wait: its waits at them")
    out = _spread_lines(found)
    out += step_strip(found, metric=strip)
    sys.stdout.write("".join(out))
    out = []
    c = found.collectives
    if not found.timed:
        out.append(f"collectives: not matched: no timeline (source: {safe(found.source)}); "
                   "arrivals and waits are on the ranks' device timelines only\n")
    elif c.matched_by is None:
        out.append("collectives: none on the devices of these ranks\n")
    else:
        shown = c.instances[:top]
        if shown:
            table = instance_table(shown)
            print_whole_table(table, f"collectives: {len(c.instances)} matched across ranks "
                              f"{RULE_TEXT[c.matched_by]}; top {len(shown)} by arrival skew")
        else:
            out.append(f"collectives: none matched across ranks {RULE_TEXT[c.matched_by]}\n")
        counts = ", ".join(f"{safe(r)} {n}" for r, n in c.count.items())
        out.append(f"collectives per rank: {counts}; unmatched (missing on some rank of their "
                   f"group): {len(c.unmatched)}\n")
        for u in c.unmatched[:3]:
            out.append(f"  {safe(u.name)}: not on {', '.join(safe(r) for r in u.missing)}\n")
    out += who_waits_lines(found, top)
    for f in found.slow_rank:
        out.append(f"slow rank: {safe(f.title)} (compute, exposed copies, host-bound idle: "
                   f"{fmt_duration(f.numbers['own_ns_per_step'])} against "
                   f"{fmt_duration(f.numbers['others_median_ns_per_step'])} a step)\n")
    sys.stdout.write("".join(out))


def _spread_lines(found) -> list[str]:
    """The spread of the median steps, the slowest step and the warm-up left out."""
    out = []
    if found.spread is not None:
        out.append(f"spread of the median steps: {found.spread * 100:.1f} % "
                   "((max - min) / mean)\n")
    if found.slowest is not None:
        rank, iteration, step_ns = found.slowest
        at = f", iteration {iteration}" if iteration is not None else ""
        out.append(f"slowest step: {safe(rank) or '(all)'}{at} ({fmt_duration(step_ns)})\n")
    warm = sorted({s.iteration for r in found.ranks for s in r.steps
                   if s.warmup and s.iteration is not None})
    if warm:
        listed = ", ".join(map(str, warm[:10])) + (" ..." if len(warm) > 10 else "")
        out.append(f"warm-up, left out of medians, the slowest and the waits: iteration "
                   f"{listed}\n")
    return out


def step_strip(found, width: int = WIDTH, metric: str = "step_ns") -> list[str]:
    """A rank x iteration strip of `metric` (step time by default; see
    :data:`~proftui.core.analysis.heat.METRICS`): one row per rank, one cell per iteration (or
    per run of iterations, their largest, when there are more than fit in `width`), shaded from
    the cluster's smallest to its largest value (warm-up clipped to that scale), the worst
    marked; no line longer than `width`. The Cluster pane draws the same grid."""
    import numpy as np

    from proftui.core.analysis.heat import METRICS, heat_grid

    grid = heat_grid(found, metric)
    numbers = grid.iterations
    if not numbers:
        return []
    labels = [_cut(safe(r) or "(all)", MAX_LABEL) for r in grid.ranks]
    label_width = max(len("iteration"), *(len(x) for x in labels))
    room = max(width - label_width - 2, 1)
    per_cell = math.ceil(len(numbers) / room)
    n_cells = math.ceil(len(numbers) / per_cell)
    what = METRICS[metric]
    lines = [f"{what} per rank and iteration: {RAMP[0]} {fmt_duration(grid.lo_ns)} .. "
             f"{RAMP[-1]} {fmt_duration(grid.hi_ns)}" + (
                 f" ({plural(per_cell, 'iteration')} a cell, their "
                 f"{'slowest' if metric == 'step_ns' else 'largest'})" if per_cell > 1 else "")
             + "\n"]
    lines.append(_ruler(numbers, per_cell, n_cells, label_width, room) + "\n")
    for row, label in enumerate(labels):
        cells = []
        for k in range(n_cells):
            block = grid.values[row, k * per_cell:(k + 1) * per_cell]
            if grid.worst is not None and grid.worst[0] == row and (
                    k * per_cell <= grid.worst[1] < (k + 1) * per_cell):
                cells.append(SLOWEST)
            elif np.isfinite(block).any():
                cells.append(_shade(float(np.nanmax(block)), grid.lo_ns, grid.hi_ns))
            else:
                cells.append(" ")
        lines.append(f"{label.ljust(label_width)}  {''.join(cells)}".rstrip() + "\n")
    if grid.worst is not None:
        lines.append(f"{SLOWEST} marks the " + ("slowest step" if metric == "step_ns" else
                                                 f"largest {what}") + "\n")
    return lines


def _ruler(numbers: list[int], per_cell: int, n_cells: int, label_width: int,
           room: int) -> str:
    """Iteration numbers over the strip's cells, every tenth cell, where they fit in
    `room`."""
    line = [" "] * room
    free_from = 0
    for cell in range(0, n_cells, 10):
        text = str(numbers[cell * per_cell])
        if cell >= free_from and cell + len(text) <= room:
            line[cell:cell + len(text)] = text
            free_from = cell + len(text) + 1
    return f"{'iteration'.ljust(label_width)}  {''.join(line)}".rstrip()


def _shade(value_ns: float, lo: int, hi: int) -> str:
    if hi <= lo:
        return RAMP[len(RAMP) // 2]
    share = min(max((value_ns - lo) / (hi - lo), 0.0), 1.0)
    return RAMP[round(share * (len(RAMP) - 1))]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def who_waits_lines(found, top: int) -> list[str]:
    """Who arrived last how often, and who waited how long for whom (largest first)."""
    matched = [i for i in found.collectives.instances if not i.warmup]
    if not matched:
        return []
    out = ["who waits for whom (at the collectives matched, warm-up left out; each wait is\n"
           "  the last arrival's start less the rank's own, summed over the steps: "
           "`proftui comm`'s Sync\n  is HCCL's own figure of the same wait, per step and "
           "warm-up included):\n"]
    late = sorted(found.last_arrivals.items(), key=lambda kv: -kv[1])
    out.append("  arrived last: " + ", ".join(f"{safe(r)} {n} of {len(matched)}"
                                              for r, n in late if n) + "\n"
               if any(n for _, n in late) else "  every rank arrived at once\n")
    waited_for: dict[str, int] = {}
    for mine in found.waits_for.values():
        for other, ns in mine.items():
            waited_for[other] = waited_for.get(other, 0) + ns
    if waited_for:
        rank, ns = max(waited_for.items(), key=lambda kv: kv[1])
        out.append(f"  the rank the others wait for: {safe(rank)} ({fmt_duration(ns)} of "
                   "their waits)\n")
    pairs = sorted(((a, b, ns) for a, mine in found.waits_for.items()
                    for b, ns in mine.items()), key=lambda p: -p[2])
    for a, b, ns in pairs[:top]:
        out.append(f"  {safe(a)} waited {fmt_duration(ns)} for {safe(b)}\n")
    return out
