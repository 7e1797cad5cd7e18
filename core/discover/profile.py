"""Profile discovery: what a file or directory holds (timelines, summary tables) and what not.

Users open a PROF_XXX directory, a torch_npu `*_ascend_pt` folder, a folder of ranks or a single
trace file. Discovery walks the directory, recognises the layouts of Ascend msprof (old CANN
`device_N/timeline` and CANN 7/8 `mindstudio_profiler_output`, with sliced timelines stitched
back in order), torch_npu and MindSpore output, Kineto and Paddle traces, and groups the files
by rank or device. Everything it does not use is listed with the reason.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from proftui.core.model.errors import NotATraceError, ProftuiError
from proftui.core.model.naming import natural_key

# Directories that hold raw binary data or logs, never timelines or summaries.
_SKIP_DIRS = {"data", "FRAMEWORK", "logs", "log", "mindstudio_profiler_log", "__pycache__",
              ".git", "sqlite"}
_MAX_DEPTH = 8
DB_KIND = "ascend_db"  # the kind of timeline discovery names a SQLite export
_MSPROF = re.compile(r"^msprof(_\d+)*(_slice_(\d+))?(_\d{14})?\.json$")
_OLD_TIMELINE = re.compile(r"^(msprof|step_trace|task_time|hccl)_(\d+)_(\d+)_(\d+)\.json$")
_STAMP = re.compile(r"(_slice_\d+)?(_\d{14})?$")
_OLD_SUMMARY = re.compile(r"_\d+_\d+_\d+$")
_TRACE_SUFFIX = re.compile(r"(\.pt\.trace)?\.json(\.gz)?$|\.gz$")
_RANK_DIR = re.compile(r"(?:^|_)rank_?(\d+)$")
_PROFILER_INFO = re.compile(r"^profiler_info_(\d+)\.json$")
# Files that say when a capture ran: torch_npu's profiler_info, msprof's start_info/end_info.
_RUN_INFO = re.compile(r"^(profiler_info(_\d+)?\.json|(start|end)_info\.\d+)$")
# MindSpore 1.x-2.2 `profiler/` files carry their rank in the name: step_trace_raw_0_detail_time.csv
_MINDSPORE_RANKED = re.compile(
    r"^(ascend_timeline_display|ascend_timeline_summary|gpu_timeline_display|"
    r"cpu_timeline_display|step_trace_raw|aicore_intermediate|aicpu_intermediate|"
    r"framework_raw|minddata_pipeline_raw|hccl_raw|flops_summary|flops|"
    r"memory_usage_summary)_(\d+)((?:_[a-z]+)*)\.(?:json|csv|txt)$")
# Read by `proftui comm` (layout.comm), not by the timeline or the tables.
COMM_FILES = {"communication.json": "communication",
              "communication_matrix.json": "communication_matrix"}
# msprof-analyze's cluster_analysis_output, read by `proftui cluster` (layout.comm too); its
# cluster_communication and cluster_communication_matrix are summary tables as well.
CLUSTER_FILES = {"cluster_communication.json": "cluster_communication",
                 "cluster_communication_matrix.json": "cluster_communication_matrix",
                 "communication_group.json": "communication_group"}
_NOT_TIMELINES = {
    "communication.json": "communication summary (not a timeline; proftui comm reads it)",
    "communication_matrix.json": "communication matrix (not a timeline; proftui comm reads "
                                 "it)",
    "profiler_metadata.json": "profiler metadata",
    "cluster_communication.json": "msprof-analyze cluster communication summary (not a "
                                  "timeline; proftui cluster and table read it)",
    "cluster_communication_matrix.json": "msprof-analyze cluster communication matrix (not a "
                                         "timeline; proftui cluster and table read it)",
    "communication_group.json": "msprof-analyze communication groups (not a timeline; "
                                "proftui cluster reads it)",
}


@dataclass
class TimelineFile:
    """A trace file to index, with the rank or device it belongs to ("" for a lone trace)."""

    path: str
    group: str
    kind: str


@dataclass
class TableFile:
    """A summary table: its kind (op_summary, op_statistic, ...) and rank or device. A CSV
    file, or (`source` set) a table of a SQLite export made into the CSV it stands for."""

    path: str
    group: str
    kind: str
    source: str = ""  # of a SQLite export: the table it is read from (see ascend_db_tables)


@dataclass
class ProfileLayout:
    """What discovery found under one path."""

    root: str
    layouts: list[str] = field(default_factory=list)
    timelines: list[TimelineFile] = field(default_factory=list)
    tables: list[TableFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    run_info: list[str] = field(default_factory=list)  # profiler_info, start_info, end_info
    run: dict | None = None  # which run of several this is (see core.runs)
    ranks: dict[str, list[int]] = field(default_factory=dict)  # see rank_gaps
    # communication summaries (kind communication, communication_matrix, analysis_db, or
    # msprof-analyze's cluster_communication, cluster_communication_matrix, communication_group)
    comm: list[TableFile] = field(default_factory=list)

    @property
    def groups(self) -> list[str]:
        return sorted({t.group for t in self.timelines}, key=natural_key)


def discover(path: str, keep: Callable[[str], bool] | None = None) -> ProfileLayout:
    """Find the timelines and summary tables under `path` (a trace file or a directory).

    `keep` limits a directory to the files it accepts (one run of several: see core.runs).
    """
    if not os.path.exists(path):
        raise ProftuiError(f"{path}: no such file or directory.")
    if not os.path.isdir(path) and _is_sqlite(path):  # a profiler's export: as its folder
        here = os.path.dirname(os.path.realpath(path))  # opens, its own files alone
        try:
            return discover(here, keep=lambda p: os.path.dirname(p) == here)
        except NotATraceError:
            raise NotATraceError(f"{path} is a SQLite database, but not a profiler export "
                                 "proftui recognises.") from None
    if not os.path.isdir(path):
        layout = ProfileLayout(os.path.realpath(path), ["trace file"])
        layout.timelines.append(TimelineFile(os.path.realpath(path), "", "trace"))
        return layout
    root = os.path.realpath(path)
    layout = ProfileLayout(root)
    files, unreadable = walk(root)
    layout.skipped += unreadable
    if keep is not None:
        files = [f for f in files if keep(f)]
    _classify(root, files, layout)
    if not layout.timelines and not layout.tables:
        raise NotATraceError(
            f"{path} holds no trace or profiler output proftui recognises "
            f"({len(files)} file{'' if len(files) == 1 else 's'} looked at).")
    layout.ranks = rank_gaps(layout)  # before the labels lose the parts all groups share
    _name_groups(layout)
    # Stable: within a group the walk's order stays (msprof slices are stitched in it).
    layout.timelines.sort(key=lambda t: natural_key(t.group))
    layout.tables.sort(key=lambda t: natural_key(t.group))
    layout.comm.sort(key=lambda t: natural_key(t.group))
    return layout


def _is_sqlite(path: str) -> bool:
    # (SQLite's header, as source/dbfile.MAGIC: not imported, which would load sqlite3 on
    # every open)
    if not os.path.isfile(path):  # a pipe or a device is never opened here (it may block)
        return False
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def walk(root: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The files under the folder `root` that discovery looks at (in its order), and the
    folders it cannot read, with why."""
    found: list[str] = []
    unreadable: list[tuple[str, str]] = []
    for here, dirs, names in os.walk(root, onerror=lambda e: unreadable.append(
            (str(e.filename), f"cannot be read: {e.strerror}"))):
        depth = here[len(root):].count(os.sep)
        dirs[:] = sorted((d for d in dirs if d not in _SKIP_DIRS and depth < _MAX_DEPTH),
                         key=natural_key)
        found += [os.path.join(here, n) for n in sorted(names, key=natural_key)]
    return found, unreadable


def _classify(root: str, files: list[str], layout: ProfileLayout) -> None:
    """Sort files into timelines, tables and skipped, per the layouts they belong to."""
    kinds: set[str] = set()
    msprof_dirs: dict[str, list[tuple[int, str]]] = {}  # dir -> (slice number, path)
    old_timeline_dirs: dict[str, list[str]] = {}
    twins = _Twins()
    databases: list[str] = []
    for path in files:
        name = os.path.basename(path)
        parent = os.path.basename(os.path.dirname(path))
        lower = name.lower()
        if _RUN_INFO.match(name):
            layout.run_info.append(path)
        if lower.endswith((".csv", ".json", ".gz")) and (why := _unreadable(path)):
            layout.skipped.append((path, why))  # reported; the rest of the profile loads
            continue
        if lower.endswith(".csv"):
            layout.tables.append(TableFile(path, "", _table_kind(name)))
            continue
        if not (lower.endswith(".json") or lower.endswith(".json.gz") or lower.endswith(".gz")):
            if lower.endswith(".db"):
                databases.append(path)
            continue
        if name in COMM_FILES or name in CLUSTER_FILES:
            layout.comm.append(TableFile(path, "", {**COMM_FILES, **CLUSTER_FILES}[name]))
        if name in CLUSTER_FILES:  # (its tables' reader, imported only when there is one)
            from proftui.core.importers.cluster_tables import tables_of

            layout.tables += [TableFile(path, "", kind) for kind in tables_of(name)]
        if name in _NOT_TIMELINES:
            layout.skipped.append((path, _NOT_TIMELINES[name]))
            continue
        if lower.startswith("profiler_info") or parent.startswith("device_") and (
                name.startswith(("info.json", "start_info", "end_info", "sample.json"))):
            layout.skipped.append((path, "profiler run information (not a timeline)"))
            continue
        m = _MSPROF.match(name)
        if m and parent == "mindstudio_profiler_output":
            msprof_dirs.setdefault(os.path.dirname(path), []).append(
                (int(m.group(3)) if m.group(3) else -1, path))
            kinds.add("msprof (CANN 7/8 mindstudio_profiler_output)")
            continue
        m = _OLD_TIMELINE.match(name)
        if m and parent == "timeline":
            old_timeline_dirs.setdefault(os.path.dirname(path), []).append(path)
            kinds.add("msprof (old CANN device_N/timeline)")
            continue
        if parent == "mindstudio_profiler_output" and not m:
            layout.skipped.append((path, "a partial timeline (msprof_*.json holds all of it)"))
            continue
        kind = _trace_kind(name)
        if kind is None:
            if not _looks_like_trace(path):
                layout.skipped.append((path, "JSON that is not a trace"))
                continue
            kind = "chrome"
        twin = twins.earlier(path)
        if twin is not None:
            layout.skipped.append((path, f"same content as {os.path.relpath(twin, root)}"))
            continue
        kinds.add({"trace_view": "torch_npu (ASCEND_PROFILER_OUTPUT)",
                   "mindspore": "MindSpore profiler", "kineto": "PyTorch Kineto",
                   "chrome": "Chrome trace"}[kind])
        layout.timelines.append(TimelineFile(path, "", kind))
    # torch_npu embeds the msprof output it merged into trace_view.json: index that only once.
    merged = {os.path.dirname(os.path.dirname(t.path)) for t in layout.timelines
              if t.kind == "trace_view"
              and os.path.basename(os.path.dirname(t.path)) == "ASCEND_PROFILER_OUTPUT"}
    for directory, parts in msprof_dirs.items():
        prof = os.path.dirname(directory)
        run = os.path.dirname(prof)  # {worker}_ascend_pt, above its PROF_* and output dirs
        if run in merged and os.path.basename(prof).startswith("PROF_"):
            layout.skipped += [(path, "trace_view.json of this run holds the same timeline")
                               for _, path in parts]
            continue
        sliced = sorted(p for p in parts if p[0] >= 0)
        whole = [p for p in parts if p[0] < 0]
        use = sliced or whole[-1:]  # the slices stitched in order, else the newest whole file
        for _, path in parts:
            if (_, path) not in use and all(path != u[1] for u in use):
                layout.skipped.append((path, "an older or partial export of the same timeline"))
        for _, path in use:
            layout.timelines.append(TimelineFile(path, "", "msprof"))
    for directory, paths in old_timeline_dirs.items():
        has_msprof = any(os.path.basename(p).startswith("msprof_") for p in paths)
        for path in paths:
            name = os.path.basename(path)
            if has_msprof and name.startswith(("task_time_", "hccl_", "step_trace_")):
                layout.skipped.append((path, "its events are in msprof_*.json too"))
                continue
            twin = twins.earlier(path)
            if twin is not None:
                layout.skipped.append((path, f"same content as {os.path.relpath(twin, root)}"))
                continue
            layout.timelines.append(TimelineFile(path, "", name.split("_")[0]))
    _classify_databases(databases, layout, kinds)
    _name_by_rank(root, layout)
    _split_workers(layout)
    layout.layouts = sorted(kinds) or (["summary tables only"] if layout.tables else [])


def _classify_databases(paths: list[str], layout: ProfileLayout, kinds: set[str]) -> None:
    """SQLite exports: a run's timeline when its text export is not there (the text is
    preferred: the established path, and both hold the same capture), analysis.db's step
    table, and the summary tables a used export stands in for."""
    from proftui.core.importers.ascend_db import comm as ascend_db_comm
    from proftui.core.importers.ascend_db import tables as ascend_db_tables
    from proftui.core.importers.ascend_db import timeline as ascend_db

    used_dirs = {os.path.dirname(t.path) for t in layout.timelines}
    runs_used = {_run_of(t.path) for t in layout.timelines}
    csv_kinds = {(os.path.dirname(t.path), t.kind) for t in layout.tables}
    msprof_by_dir: dict[str, list[str]] = {}
    chosen: list[str] = []
    for path in paths:
        name, here = os.path.basename(path), os.path.dirname(path)
        if ascend_db.TIMELINE_DB.match(name):
            if here in used_dirs:
                layout.skipped.append((path, "SQLite export of the same capture as the text "
                                             "export beside it (trace_view.json), which is read"))
            else:
                chosen.append(path)
                # The same kind of profile as its text export (diff compares them as such);
                # the format and each source say it is SQLite.
                kinds.add("torch_npu (ASCEND_PROFILER_OUTPUT)")
        elif ascend_db.MSPROF_DB.match(name):
            msprof_by_dir.setdefault(here, []).append(path)
        elif name == "analysis.db":
            continue  # below, once the timelines are known
        else:
            layout.skipped.append((path, "SQLite file that is not an Ascend profiler export"))
    runs_used |= {_run_of(p) for p in chosen}
    for here, found in msprof_by_dir.items():
        newest = sorted(found, key=natural_key)[-1]
        for path in found:
            if path != newest:
                layout.skipped.append((path, "an older export of the same timeline"))
            elif here in {os.path.dirname(os.path.dirname(t.path)) for t in layout.timelines
                          if t.kind == "msprof"}:
                layout.skipped.append((path, "SQLite export of the msprof_*.json timeline of "
                                             "this PROF dir, which is read"))
            elif _run_of(path) in runs_used and os.path.basename(here).startswith("PROF_"):
                layout.skipped.append((path, "its run's torch_npu export holds the same "
                                             "timeline"))
            else:
                chosen.append(path)
                kinds.add("msprof (CANN 8 msprof_*.db)")
    for path in chosen:
        layout.timelines.append(TimelineFile(path, "", DB_KIND))
        layout.skipped += [(f"{path}: {what}", why) for what, why in
                           ascend_db.schema_notes(path)]
        here = os.path.dirname(path)
        for kind, source in ascend_db_tables.tables_of(path):
            if (here, kind) in csv_kinds:
                continue  # a CSV of the same kind beside it is read
            layout.tables.append(TableFile(path, "", kind, source))
    for path in paths:
        if os.path.basename(path) != "analysis.db":
            continue
        here = os.path.dirname(path)
        found = ascend_db_tables.analysis_tables(path)
        if any(source in ascend_db_comm.TABLES for _, source, _ in found):
            layout.comm.append(TableFile(path, "", "analysis_db"))
        for kind, source, why in found:
            if why:
                layout.skipped.append((f"{path}: {source}" if source else path, why))
            elif (here, kind) in csv_kinds:
                layout.skipped.append((f"{path}: {source}", f"{kind}.csv beside it is read"))
            else:
                layout.tables.append(TableFile(path, "", kind, source))


def _run_of(path: str) -> str:
    """The capture folder (*_ascend_pt, *_ascend_ms) a file is in, else ""."""
    for parent in Path(path).parents:
        if parent.name.endswith(("_ascend_pt", "_ascend_ms")):
            return str(parent)
    return ""


def _split_workers(layout: ProfileLayout) -> None:
    """Several whole traces in one group (Kineto workers side by side) are one group each."""
    whole = [t for t in layout.timelines if t.kind in ("kineto", "chrome", "trace_view",
                                                       "mindspore")]
    count: dict[str, int] = {}
    for t in whole:
        count[t.group] = count.get(t.group, 0) + 1
    for t in whole:
        if count[t.group] > 1:
            stem = _TRACE_SUFFIX.sub("", os.path.basename(t.path))
            t.group = f"{t.group} / {stem}" if t.group else stem


def _trace_kind(name: str) -> str | None:
    lower = name.lower()
    if lower == "trace_view.json":
        return "trace_view"
    if lower.startswith("ascend_timeline_display_") or lower.startswith("gpu_timeline_display_"):
        return "mindspore"
    if ".pt.trace.json" in lower or lower.endswith(".paddle_trace.json"):
        return "kineto"
    return None


def _unreadable(path: str) -> str | None:
    """Why a file cannot be opened (a dangling link, no permission), or None if it can."""
    if os.path.islink(path) and not os.path.exists(path):
        return f"a link to {os.readlink(path)}, which does not exist"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block, /dev/zero not end
            return "not a regular file (a pipe, a device or a socket)"
        with open(path, "rb"):
            return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"


def _looks_like_trace(path: str) -> bool:
    """Cheap sniff: an array of objects, or an object with traceEvents near its start."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    if head[:2] == b"\x1f\x8b":
        return True  # a compressed .gz: the importer decides
    text = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    return text[:1] == b"[" or (text[:1] == b"{" and b'"traceEvents"' in head)


class _Twins:
    """Timeline files of the same content (a copy of a rank's output beside it): the same size
    and the same hash of their first and last MB. Only files of a size seen before are hashed
    (hashing every rank of a large folder took longer than the rest of its discovery)."""

    def __init__(self) -> None:
        self._by_size: dict[int, list[tuple[str, str | None]]] = {}  # (path, hash or None)

    def earlier(self, path: str) -> str | None:
        """The file seen before with the content of `path`, else None (`path` is noted)."""
        size = os.path.getsize(path)
        same_size = self._by_size.setdefault(size, [])
        digest = _digest(path, size) if same_size else None
        for n, (other, other_digest) in enumerate(same_size):
            if other_digest is None:
                other_digest = _digest(other, size)
                same_size[n] = (other, other_digest)
            if other_digest == digest:
                return other
        same_size.append((path, digest))
        return None


def _digest(path: str, size: int) -> str:
    """A hash of a file's first and last MB."""
    import hashlib  # (not on import: a cached reopen digests nothing)

    h = hashlib.sha256()  # several times faster than BLAKE2 where the CPU has SHA instructions
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
        if size > 2 << 20:
            f.seek(size - (1 << 20))
            h.update(f.read())
    return h.hexdigest()


def _table_kind(name: str) -> str:
    m = _MINDSPORE_RANKED.match(name)
    if m:  # the rank is the group, not part of the kind
        return m.group(1) + m.group(3)
    stem = name[:-4]
    stem = _STAMP.sub("", stem)
    stem = _OLD_SUMMARY.sub("", stem)
    return stem.lower()


def rank_dirs(run_info: list[str]) -> dict[str, str]:
    """torch_npu and MindSpore output dirs -> the rank in their profiler_info_N.json."""
    return {os.path.dirname(p): m.group(1) for p in run_info
            if (m := _PROFILER_INFO.match(os.path.basename(p)))}


def _name_by_rank(root: str, layout: ProfileLayout) -> None:
    """Give each timeline and table its group, output dirs named by their rank.

    Only dirs holding a file that is used count (a SQLite-only export of another capture
    does not), and only when every rank is named once: two runs of rank 0 side by side keep
    their dir names.
    """
    items: list[TimelineFile | TableFile] = [*layout.timelines, *layout.tables, *layout.comm]
    used = {d for item in items for d in _parents(root, item.path)}
    ranks = {d: r for d, r in rank_dirs(layout.run_info).items() if d in used}
    if len(set(ranks.values())) != len(ranks):
        ranks = {}
    for item in items:
        item.group = group_of(root, item.path, ranks)


def _parents(root: str, path: str) -> list[str]:
    """The directories from root down to the one holding `path`."""
    parents = [root]
    for part in Path(os.path.relpath(path, root)).parts[:-1]:
        parents.append(os.path.join(parents[-1], part))
    return parents


def group_of(root: str, path: str, ranks: dict[str, str] | None = None) -> str:
    """The rank or device a file belongs to, from the directories between root and it.

    A torch_npu or MindSpore output dir is its rank when `ranks` knows it; a MindSpore
    `profiler/` file whose name carries a rank id is that rank.
    """
    rel = Path(os.path.relpath(path, root)).parts[:-1]
    labels = []
    here = root
    for part in rel:
        here = os.path.join(here, part)
        if part.startswith("device_") and part[7:].isdigit():
            labels.append(f"device {part[7:]}")
        elif (m := _RANK_DIR.search(part)) is not None:
            labels.append(f"rank {m.group(1)}")
        elif part.endswith(("_ascend_pt", "_ascend_ms")) and here in (ranks or {}):
            labels.append(f"rank {ranks[here]}")  # type: ignore[index]
        elif part.startswith("PROF_") or part.endswith(("_ascend_pt", "_ascend_ms")):
            labels.append(part)
    m = _MINDSPORE_RANKED.match(os.path.basename(path))
    if m and not any(label.startswith("rank ") for label in labels):
        labels.append(f"rank {m.group(2)}")
    return " / ".join(labels)


_RANK_LABEL = re.compile(r"(?:^| / )rank (\d+)(?:$| / )")


def rank_gaps(layout: ProfileLayout) -> dict[str, list[int]]:
    """The ranks a folder of ranks names (by folder, file or profiler_info_N.json) but holds
    no timeline of ("without_timeline": a rank folder whose trace is absent or unreadable),
    and the rank numbers between 0 and the highest named that nothing names ("missing").
    Both empty with fewer than two ranks named."""
    def rank(label: str) -> int | None:
        m = _RANK_LABEL.search(label)
        return int(m.group(1)) if m else None

    with_timeline = {r for t in layout.timelines if (r := rank(t.group)) is not None}
    named = with_timeline | {r for t in layout.tables if (r := rank(t.group)) is not None}
    for path in [*layout.run_info, *(p for p, _ in layout.skipped)]:
        m = _PROFILER_INFO.match(os.path.basename(path))
        if m:
            named.add(int(m.group(1)))
    if len(named) < 2:
        return {"without_timeline": [], "missing": [], "highest": max(named, default=-1)}
    return {"without_timeline": sorted(named - with_timeline),
            "missing": sorted(set(range(max(named) + 1)) - named), "highest": max(named)}


def _name_groups(layout: ProfileLayout) -> None:
    """Shorten group labels: drop parts all groups share (one PROF dir -> just the device).
    The communication summaries follow the timelines' and tables' groups, not lead them."""
    groups = {t.group for t in layout.timelines} | {t.group for t in layout.tables}
    split = {g: g.split(" / ") if g else [] for g in groups}
    common = None
    for parts in split.values():
        common = parts if common is None else [a for a, b in zip(common, parts) if a == b]
    common = common or []
    drop = len(common)
    rename = {g: " / ".join(p[drop:]) for g, p in split.items()}
    for c in layout.comm:
        parts = c.group.split(" / ") if c.group else []
        if c.group not in rename:
            rename[c.group] = " / ".join(parts[drop:] if parts[:drop] == common else parts)
    items: list[TimelineFile | TableFile] = [*layout.timelines, *layout.tables, *layout.comm]
    for item in items:
        item.group = rename[item.group]
