"""Which communication summaries a profile holds, one per rank, read by the importers of
:mod:`proftui.core.importers.ascend_comm` (text) and :mod:`.ascend_db_comm` (SQLite).

Discovery (:mod:`proftui.core.discover.profile`) lists the files; this picks one source per rank and
reads it, so the importers themselves know nothing of a profile's layout.
"""

from __future__ import annotations

import os

from proftui.core.discover.profile import COMM_FILES
from proftui.core.importers.ascend_comm import CommData, read_text
from proftui.core.importers.ascend_db.comm import read_db


def read_sources(entries: list[dict]) -> tuple[list[CommData], list[tuple[str, str]]]:
    """Read the communication summaries a profile lists (``meta["profile"]["comm"]``: path,
    group, kind), one per rank: its communication.json with the matrix beside it (the copy in
    ASCEND_PROFILER_OUTPUT when there are several), else its analysis.db. Returns the data per
    rank in the profile's order and (path, why) of the files not read."""
    by_group: dict[str, list[dict]] = {}
    for entry in entries:
        by_group.setdefault(str(entry.get("group", "")), []).append(entry)
    out: list[CommData] = []
    unused: list[tuple[str, str]] = []
    for group, mine in by_group.items():
        dirs: dict[str, dict[str, str]] = {}
        for entry in mine:
            if entry.get("kind") in ("communication", "communication_matrix"):
                dirs.setdefault(os.path.dirname(entry["path"]), {})[entry["kind"]] = entry["path"]
        databases = [e["path"] for e in mine if e.get("kind") == "analysis_db"]
        if dirs:
            chosen = next((d for d in dirs if os.path.basename(d) == "ASCEND_PROFILER_OUTPUT"),
                          next(iter(dirs)))
            files = dirs.pop(chosen)
            out.append(read_text(group, files.get("communication"),
                                 files.get("communication_matrix")))
            unused += [(p, "another copy of this rank's communication summary") for d in
                       dirs.values() for p in d.values()]
            unused += [(p, "the communication.json of this rank is read") for p in databases]
        elif databases:
            out.append(read_db(group, databases[0]))
            unused += [(p, "another export of this rank's communication summary")
                       for p in databases[1:]]
    return out, unused


def profile_entries(path: str, run: int | None = None) -> list[dict]:
    """The communication summaries of a profile (see :func:`read_sources`), found without
    indexing its timelines; `path` may also be one communication.json,
    communication_matrix.json or analysis.db itself (with the other JSON beside it)."""
    name = os.path.basename(path)
    if os.path.isfile(path) and (name in COMM_FILES or name == "analysis.db"):
        if name == "analysis.db":
            return [{"path": os.path.realpath(path), "group": "", "kind": "analysis_db"}]
        here = os.path.dirname(os.path.realpath(path))
        return [{"path": os.path.join(here, n), "group": "", "kind": kind}
                for n, kind in COMM_FILES.items() if os.path.isfile(os.path.join(here, n))]
    from proftui.core.load.loader import profile_layout

    layout = profile_layout(path, run)
    return [{"path": c.path, "group": c.group, "kind": c.kind} for c in layout.comm]
