"""`proftui cache`: what the cache holds (sizes, last use, sources), and `cache clear`."""

from __future__ import annotations

import sys
import time

from proftui import __version__
from proftui.tui.commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    json_option,
    print_json,
    print_whole_table,
    warning,
)
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe

SPEC = Command(
    "cache", "what the cache holds; cache clear empties it",
    "List what the cache holds: each entry (a trace's index with the arrays derived from it, "
    "a summary table, what discovery found in a folder, or one rank's file of a profile as it "
    "was read) with its size, when it was last used, the files it was made from and whether "
    "they still exist; then the total and the cap (PROFTUI_CACHE_MAX, default 10G: the least "
    "recently used entries are removed to stay under it). `proftui cache clear` empties it. "
    "The cache is $PROFTUI_CACHE_DIR, else $XDG_CACHE_HOME/proftui (~/.cache/proftui).",
    (Arg("action", nargs="?", choices=("clear",),
         help="clear: remove every file proftui wrote in the cache"),
     json_option("times in integer ns since the epoch")),
    ("proftui cache",
     "proftui cache --json | jq '.total_bytes'",
     "PROFTUI_CACHE_MAX=2G proftui index big.json",
     "proftui cache clear"))


def cmd_cache(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    from proftui.core.cache import entries as cache_entries
    from proftui.core.cache import indexes as cache

    directory = cache.cache_dir()
    if args.action == "clear":
        removed, freed = cache_entries.clear(directory)
        if args.json:
            print_json({"directory": str(directory), "removed_files": removed,
                        "freed_bytes": freed, "warnings": []})
        else:
            files = "file" if removed == 1 else "files"
            sys.stdout.write(f"removed {removed} {files} ({cache_entries.fmt_bytes(freed)}) "
                             f"from {safe(directory)}\n")
        return EXIT_OK
    try:
        cap = cache_entries.max_bytes()
    except ValueError as exc:
        sys.stderr.write(f"proftui: {safe(exc)}.\n")
        return EXIT_USAGE
    found = [cache_entries.describe(e, cache.FORMAT_VERSION, __version__)
             for e in reversed(cache_entries.entries(directory))]  # most recently used first
    total = sum(d.entry.size for d in found)
    if args.json:
        print_json({"directory": str(directory), "max_bytes": cap, "total_bytes": total,
                    "entries": [_plain(d) for d in found],
                    "warnings": [warning("unreadable_entry", f"{d.entry.key}: {d.problem}")
                                 for d in found if d.problem]})
        return EXIT_OK
    summary = (f"{plural(len(found), 'entry', 'entries')}, {cache_entries.fmt_bytes(total)} of "
               f"{cache_entries.fmt_bytes(cap)} ({cache_entries.MAX_ENV}) in {directory}")
    if not found:
        sys.stdout.write(f"{safe(summary)}\n")
        return EXIT_OK
    print_whole_table(_listing(found), summary)
    return EXIT_OK


def _plain(d) -> dict:
    e = d.entry
    return {"key": e.key, "kind": d.kind, "path": e.main, "files": list(e.files),
            "size_bytes": e.size, "last_used_ns": e.last_used_ns,
            "sources": [{"path": p, "exists": x} for p, x in zip(d.sources, d.sources_exist)],
            "problem": d.problem or None}


def _listing(found: list):
    """The entries as a table of text columns (what print_table prints)."""
    from proftui.core.cache.entries import fmt_bytes
    from proftui.core.model.table import Table, text_column

    def sources(d) -> str:
        if not d.sources:
            return d.problem or "-"
        first = d.sources[0] + ("" if d.sources_exist[0] else " (gone)")
        more = len(d.sources) - 1
        gone = d.sources_exist[1:].count(False)
        rest = f" and {more} more" + (f", {gone} gone" if gone else "") if more else ""
        return first + rest + (f"; {d.problem}" if d.problem else "")

    columns = [
        text_column("Kind", [d.kind for d in found]),
        text_column("Size", [fmt_bytes(d.entry.size) for d in found]),
        text_column("Last used", [_when(d.entry.last_used_ns) for d in found]),
        text_column("Files", [str(len(d.entry.files)) for d in found]),
        text_column("Sources", [sources(d) for d in found]),
    ]
    return Table("cache", "", columns, len(found))


def _when(ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ns / 1e9))
