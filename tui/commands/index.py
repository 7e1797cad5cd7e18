"""`proftui index`: index a trace and store the index in the cache."""

from __future__ import annotations

import sys

from proftui.tui.commands.common import EXIT_FAILURE, EXIT_OK, TRACE, load
from proftui.tui.commands.spec import Command
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe

SPEC = Command(
    "index", "build the cache (with a progress bar)",
    "Index a trace and store the index in the cache, so that opening it later is instant.",
    TRACE, ("proftui index big_trace.json.gz",))


def cmd_index(argv: list[str]) -> int:
    parser, args = SPEC.parse(argv)
    if args.no_cache:
        parser.error("--no-cache makes no sense for index")
    index = load(args)
    where = index.meta.get("cache_path")
    if index.meta.get("from_cache"):
        sys.stdout.write(f"already indexed: {plural(index.n_slices, 'slice')}\n")
    elif where:
        sys.stdout.write(f"indexed {plural(index.n_slices, 'slice')} into {safe(where)}"
                         f"{_from_rank_entries(index.meta)}\n")
    else:
        why = index.meta.get("cache_error", "the cache was not written")
        sys.stderr.write(f"proftui: {safe(why)}\n")
        return EXIT_FAILURE
    return EXIT_OK


def _from_rank_entries(meta: dict) -> str:
    """How many trace files of a profile of several were merged from their own cache entries
    (see core.rank_cache) rather than read, when any were."""
    cached = meta.get("ranks_cached")
    if not cached:
        return ""
    from proftui.core.discover.profile import DB_KIND

    files = sum(1 for s in meta.get("sources", []) if s.get("kind") != DB_KIND)
    return f" ({cached} of {plural(files, 'trace file')} from their own cache entries)"
