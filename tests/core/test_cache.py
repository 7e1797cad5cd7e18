"""The index cache: reopened memory-mapped, never trusted when stale, foreign or damaged,
never in the way when it cannot be written (full disk, read-only path, two writers at once)."""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from proftui.core import load_trace
from proftui.core.cache import file as cache_file
from proftui.core.cache import indexes as cache
from proftui.core.query.args import slice_args
from proftui.core.query.rows import ROWS_KIND, build_rows, rows_for
from proftui.core.source.streams import FileIdentity

from helpers import columns_equal, slice_names, write_trace

EVENTS = [{"ph": "X", "name": f"op{i % 7}", "pid": 1, "tid": i % 3, "ts": i * 10, "dur": 5,
           "args": {"i": i}} for i in range(200)]
# The same bytes but for one name of the same length: the file keeps its size.
RENAMED = [{**e, "name": "opX"} if i == 3 else e for i, e in enumerate(EVENTS)]


def _fresh(trace: Path):
    return load_trace(str(trace), use_cache=False)


def _leftovers(cache_dir: Path) -> list[str]:
    """Whatever in the cache directory is not a finished cache file."""
    if not cache_dir.exists():
        return []
    return sorted(p.name for p in cache_dir.iterdir()
                  if not p.is_file() or p.name.startswith(".tmp-"))


class Denials:
    """What the kernel refuses an unprivileged user: writing into a directory without write
    permission, reading a file without read permission. The modes are really set; when the
    tests run as root (who may do anything), the refusals within `scope` are played by
    wrapping the os calls that the cache, pathlib and tempfile make."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, scope: Path) -> None:
        self.modes: list[tuple[Path, int]] = []
        if os.geteuid() != 0:
            return
        real = {name: getattr(os, name) for name in
                ("open", "mkdir", "replace", "rename", "unlink", "rmdir")}

        def lacks(path, bits: int) -> bool:
            path = Path(os.path.abspath(path))
            try:
                return (path == scope or scope in path.parents) and not path.stat().st_mode & bits
            except OSError:
                return False

        def refuse_write(*paths) -> None:
            for path in paths:
                if lacks(Path(os.path.abspath(path)).parent, 0o222):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

        def fake_open(path, flags, *args, **kwargs):
            if "dir_fd" not in kwargs and isinstance(path, (str, os.PathLike)):
                if flags & os.O_CREAT and not os.path.lexists(path):
                    refuse_write(path)
                if (flags & os.O_ACCMODE) != os.O_WRONLY and lacks(path, 0o444):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
                if (flags & os.O_ACCMODE) != os.O_RDONLY and lacks(path, 0o222):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real["open"](path, flags, *args, **kwargs)

        def fake_mkdir(path, *args, **kwargs):
            if not os.path.lexists(path):
                refuse_write(path)
            return real["mkdir"](path, *args, **kwargs)

        def guarded(name: str):
            def call(*args, **kwargs):
                if not any(k.endswith("dir_fd") for k in kwargs):
                    refuse_write(*args[:2] if name in ("replace", "rename") else args[:1])
                return real[name](*args, **kwargs)
            return call

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "mkdir", fake_mkdir)
        for name in ("replace", "rename", "unlink", "rmdir"):
            monkeypatch.setattr(os, name, guarded(name))

    def read_only(self, directory: Path) -> None:
        self._chmod(directory, 0o555)

    def unreadable(self, file: Path) -> None:
        self._chmod(file, 0)

    def _chmod(self, path: Path, mode: int) -> None:
        self.modes.append((path, path.stat().st_mode))
        path.chmod(mode)

    def restore(self) -> None:
        for path, mode in reversed(self.modes):
            if path.exists():
                path.chmod(mode)


@pytest.fixture
def denied(monkeypatch, tmp_path):
    denials = Denials(monkeypatch, tmp_path)
    yield denials
    denials.restore()


def test_second_open_is_from_the_cache(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    first = load_trace(str(trace))
    assert "from_cache" not in first.meta
    second = load_trace(str(trace))
    assert second.meta["from_cache"] is True
    assert columns_equal(first, second)
    assert not second.col("slices.start").flags.writeable  # mapped read-only
    assert slice_args(second, 3) == slice_args(first, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "t.json"]  # nothing beside


# --- staleness ---------------------------------------------------------------------------

def _rewrite_keeping_size_and_mtime(trace: Path, how: str) -> None:
    before = trace.stat()
    if how == "touch -d":  # rewritten in place, then the old time stamp put back
        write_trace(trace, RENAMED)
        os.utime(trace, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif how == "cp -p":  # another file's bytes and time stamp, into the same inode
        other = write_trace(trace.with_name("other.json"), RENAMED)
        os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
        shutil.copy2(other, trace)
    else:  # "mv": a new inode under the old name, same size and time stamp
        other = write_trace(trace.with_name("other.json"), RENAMED)
        os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(other, trace)
    after = trace.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


@pytest.mark.parametrize("how", ["touch -d", "cp -p", "mv"])
def test_a_rewrite_with_the_same_size_and_mtime_is_indexed_again(tmp_path, cache_dir,
                                                                  how) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    load_trace(str(trace))
    _rewrite_keeping_size_and_mtime(trace, how)
    again = load_trace(str(trace))
    assert "from_cache" not in again.meta
    assert "opX" in slice_names(again)
    assert columns_equal(again, _fresh(trace))


def test_a_rewrite_within_one_coarse_time_stamp_is_indexed_again(tmp_path, cache_dir,
                                                                  monkeypatch) -> None:
    """On a file system with 100 ms time stamps, the second write lands in the first's tick."""
    tick = 100_000_000
    real_of = FileIdentity.of.__func__  # type: ignore[attr-defined]

    def coarse(cls, path: str) -> FileIdentity:
        found = real_of(cls, path)
        return dataclasses.replace(found, mtime_ns=found.mtime_ns // tick * tick,
                                   ctime_ns=found.ctime_ns // tick * tick)

    monkeypatch.setattr(FileIdentity, "of", classmethod(coarse))
    # Start early in a tick (the kernel's clock lags by up to a timer tick), early in a second:
    # time stamps of whole seconds would be taken for a 2 s file system, a longer wait.
    while not (12e6 < time.time_ns() % tick < 20e6 and 1 <= time.time_ns() // tick % 10 <= 5):
        time.sleep(0.001)
    trace = write_trace(tmp_path / "t.json", EVENTS)
    started = time.monotonic()
    assert "from_cache" not in load_trace(str(trace)).meta
    write_trace(trace, RENAMED)  # no faster than a person, yet often in the same tick
    again = load_trace(str(trace))
    assert "from_cache" not in again.meta
    assert "opX" in slice_names(again)
    assert load_trace(str(trace)).meta["from_cache"] is True
    assert time.monotonic() - started < 1.5  # waited for a 100 ms tick, not for seconds


def test_a_file_changed_while_it_is_read_is_not_cached(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    rewritten = []

    def rewrite_once(_done: int, _total: int, _events: int) -> None:
        if not rewritten:
            write_trace(trace, RENAMED)
            rewritten.append(True)

    first = load_trace(str(trace), progress=rewrite_once, batch_bytes=256)
    assert rewritten and first.meta["cache_error"] == "not cached: t.json changed while it was read"
    assert "cache_path" not in first.meta
    assert _leftovers(cache_dir) == [] and not list(cache_dir.glob("*.idx"))
    again = load_trace(str(trace))
    assert "from_cache" not in again.meta and "opX" in slice_names(again)


def test_a_time_stamp_in_the_future_is_not_cached(tmp_path, cache_dir, monkeypatch) -> None:
    real_of = FileIdentity.of.__func__  # type: ignore[attr-defined]
    hour_ns = 3600 * 10**9

    def an_hour_ahead(cls, path: str) -> FileIdentity:
        found = real_of(cls, path)
        return dataclasses.replace(found, ctime_ns=found.ctime_ns + hour_ns)

    monkeypatch.setattr(FileIdentity, "of", classmethod(an_hour_ahead))
    trace = write_trace(tmp_path / "t.json", EVENTS)
    started = time.monotonic()
    index = load_trace(str(trace))
    assert time.monotonic() - started < 1  # a clock an hour off is not waited for
    assert index.meta["cache_error"] == "not cached: t.json has a time stamp in the future"
    assert columns_equal(index, _fresh(trace))
    assert not cache_dir.exists()


def _profile(root: Path, names: dict[str, int]) -> Path:
    """An msprof profile: one slice file per entry (name -> start µs) and an op summary."""
    out = root / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA" / "mindstudio_profiler_output"
    out.mkdir(parents=True, exist_ok=True)
    for number, (name, ts) in enumerate(names.items()):
        (out / f"msprof_slice_{number}_20260605161734.json").write_text(json.dumps(
            [{"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 1}]))
    return out


@pytest.mark.parametrize("change", ["rewrite", "add", "remove"])
def test_a_profile_directory_follows_each_of_its_files(tmp_path, cache_dir, change) -> None:
    out = _profile(tmp_path, {"first": 10, "other": 20})
    assert slice_names(load_trace(str(tmp_path))) == ["first", "other"]
    assert load_trace(str(tmp_path)).meta["from_cache"] is True
    second = out / "msprof_slice_1_20260605161734.json"
    if change == "rewrite":
        _rewrite_slice(second, "again")
    elif change == "add":
        (out / "msprof_slice_2_20260605161734.json").write_text(json.dumps(
            [{"ph": "X", "name": "third", "pid": 1, "tid": 1, "ts": 30, "dur": 1}]))
    else:
        second.unlink()
    index = load_trace(str(tmp_path))
    assert "from_cache" not in index.meta
    assert slice_names(index) == {"rewrite": ["first", "again"], "add": ["first", "other", "third"],
                             "remove": ["first"]}[change]
    assert columns_equal(index, _fresh(tmp_path))


def _rewrite_slice(path: Path, name: str) -> None:
    before = path.stat()
    path.write_text(path.read_text().replace('"other"', f'"{name}"'))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size


def test_summary_tables_are_read_afresh_beside_a_cached_profile(tmp_path, cache_dir) -> None:
    out = _profile(tmp_path, {"first": 10})
    load_trace(str(tmp_path))
    (out / "op_summary_20260605161737.csv").write_text("Device_id,OP Type\n0,MatMul\n")
    index = load_trace(str(tmp_path))
    assert index.meta["from_cache"] is True  # the index holds no table
    assert [t["kind"] for t in index.meta["profile"]["tables"]] == ["op_summary"]


# --- derived arrays ------------------------------------------------------------------------

def test_derived_arrays_pair_only_with_the_index_they_were_made_from(tmp_path,
                                                                     cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    load_trace(str(trace))
    mapped = load_trace(str(trace))
    assert mapped.meta["from_cache"] is True
    before = mapped.col("slices.start").copy()
    # Another process replaces the cache file (same trace, a new file) and stores rows for
    # it; this process's map of the old file stays valid and never takes those rows.
    [entry] = cache_dir.glob("*.idx")
    entry.unlink()
    other = load_trace(str(trace))
    assert other.meta["cache_path"] == mapped.meta["cache_path"]
    rows_for(other)
    assert cache.load_derived(other, ROWS_KIND)
    with pytest.raises(cache.CacheMiss, match="another version of the index"):
        cache.load_derived(mapped, ROWS_KIND)
    assert mapped.col("slices.start").tolist() == before.tolist()
    assert columns_equal(mapped, _fresh(trace))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_damaged_derived_arrays_are_rebuilt(tmp_path, cache_dir, damage) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    index = load_trace(str(trace))
    rows_for(index)
    rows_file = Path(f"{index.meta['cache_path']}.{ROWS_KIND}")
    data = rows_file.read_bytes()
    rows_file.write_bytes({"truncate": data[:-1], "garbage": os.urandom(len(data)),
                           "empty": b""}[damage])
    with pytest.raises(cache.CacheMiss):
        cache.load_derived(index, ROWS_KIND)
    rows = rows_for(index)
    expected = build_rows(index)
    assert all(a.tolist() == expected.arrays()[k].tolist() for k, a in rows.arrays().items())
    assert cache.load_derived(index, ROWS_KIND).keys() == expected.arrays().keys()


# --- a damaged cache file ------------------------------------------------------------------

def _rewrite_header(entry: Path, **changes) -> None:
    header, arrays = cache._read(entry)
    header = {k: v for k, v in header.items() if k not in ("arrays", "data_bytes")}
    cache._write(entry, {**header, **changes}, {k: a.copy() for k, a in arrays.items()})


def _cut_points(data: bytes) -> dict[str, int]:
    header_len = int.from_bytes(data[len(cache.MAGIC): len(cache.MAGIC) + 8], "little")
    header_end = len(cache.MAGIC) + 16 + header_len
    return {"magic-half": 5, "magic": len(cache.MAGIC), "length-half": len(cache.MAGIC) + 4,
            "length": len(cache.MAGIC) + 8, "header-half": header_end - header_len // 2,
            "header": header_end, "data-half": (header_end + len(data)) // 2,
            "last-byte": len(data) - 1}


DAMAGE = ["other-program", "other-format", "garbage", "garbage-after-magic", "empty",
          "overlong", "directory", "fifo", "unreadable",
          *[f"cut-{p}" for p in ["magic-half", "magic", "length-half", "length", "header-half",
                                 "header", "data-half", "last-byte"]]]


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_cache_file_is_replaced(tmp_path, cache_dir, denied, damage) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    good = load_trace(str(trace))
    entry = Path(good.meta["cache_path"])
    data = entry.read_bytes()
    if damage == "other-program":
        _rewrite_header(entry, program="0.0.1")
    elif damage == "other-format":
        _rewrite_header(entry, version=cache.FORMAT_VERSION - 1)
    elif damage == "garbage":
        entry.write_bytes(os.urandom(len(data)))
    elif damage == "garbage-after-magic":
        entry.write_bytes(data[:len(cache.MAGIC)] + os.urandom(len(data) - len(cache.MAGIC)))
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "overlong":
        entry.write_bytes(data + b"\0" * 64)
    elif damage == "directory":
        entry.unlink()
        entry.mkdir()
    elif damage == "fifo":
        entry.unlink()
        os.mkfifo(entry)
    elif damage == "unreadable":
        denied.unreadable(entry)
    else:
        entry.write_bytes(data[: _cut_points(data)[damage.removeprefix("cut-")]])
    damaged_inode = entry.lstat().st_ino
    rebuilt = load_trace(str(trace))
    assert "from_cache" not in rebuilt.meta and "cache_error" not in rebuilt.meta
    assert columns_equal(good, rebuilt)
    assert entry.is_file() and entry.stat().st_ino != damaged_inode  # replaced, by a new file
    again = load_trace(str(trace))
    assert again.meta["from_cache"] is True
    assert columns_equal(good, again)
    assert _leftovers(cache_dir) == []


# --- a cache that cannot be written ------------------------------------------------------

def _opens_without_a_word(trace: Path, capfd, recwarn):
    """Load `trace`: it must open right, with one sentence in its metadata, nothing printed."""
    index = load_trace(str(trace))
    assert columns_equal(index, _fresh(trace))
    error = index.meta["cache_error"]
    assert error.startswith("could not write the cache: ") and "\n" not in error
    assert "cache_path" not in index.meta
    assert capfd.readouterr() == ("", "")
    # A ResourceWarning is the garbage collector's, raised wherever it happens to run (it
    # once came from another test's objects under pytest -n 4): not a word of this load's.
    assert not [w for w in recwarn.list if not issubclass(w.category, ResourceWarning)]
    return index


class DiskFull:
    """Files opened for writing take `room` bytes, then fail with ENOSPC (at close if never)."""

    def __init__(self, file, room: int | None) -> None:
        self.file, self.room = file, room

    def write(self, data) -> int:
        data = memoryview(data).cast("B")
        if self.room is not None and len(data) > self.room:
            self.file.write(data[: self.room])
            self.room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if self.room is not None:
            self.room -= len(data)
        return self.file.write(data)

    def __enter__(self) -> DiskFull:
        return self

    def __exit__(self, *exc_info) -> None:
        self.file.close()
        if self.room is None and exc_info[0] is None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # on the final flush


@pytest.mark.parametrize("where", ["at-once", "in-header", "in-data", "at-close"])
def test_a_full_disk_leaves_nothing_behind(tmp_path, cache_dir, monkeypatch, capfd, recwarn,
                                           where) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    with monkeypatch.context() as scratch:  # where the header ends, and the file
        scratch.setenv("PROFTUI_CACHE_DIR", str(tmp_path / "scratch"))
        data = Path(load_trace(str(trace)).meta["cache_path"]).read_bytes()
    header_end = _cut_points(data)["header"]
    room = {"at-once": 0, "in-header": header_end // 2, "in-data": (header_end + len(data)) // 2,
            "at-close": None}[where]
    with monkeypatch.context() as full:
        real_fdopen = os.fdopen
        full.setattr(os, "fdopen", lambda fd, *a, **k: DiskFull(real_fdopen(fd, *a, **k), room))
        index = _opens_without_a_word(trace, capfd, recwarn)
    assert index.meta["cache_error"] == "could not write the cache: No space left on device"
    assert list(cache_dir.iterdir()) == []
    assert load_trace(str(trace)).meta.get("cache_path")  # with room again, it is stored
    assert [p.suffix for p in cache_dir.iterdir()] == [".idx"]


def test_a_full_disk_for_derived_arrays_only_costs_their_shortcut(tmp_path, cache_dir,
                                                                  monkeypatch) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    index = load_trace(str(trace))
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: DiskFull(real_fdopen(fd, *a, **k),
                                                                  1000))
    rows = rows_for(index)
    assert rows.n_rows == build_rows(index).n_rows
    assert [p.suffix for p in cache_dir.iterdir()] == [".idx"]


def test_a_nearly_full_disk_is_not_filled(tmp_path, cache_dir, monkeypatch, capfd,
                                          recwarn) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    real_statvfs = os.statvfs

    def little_room(path):
        fs = real_statvfs(path)
        return os.statvfs_result((fs.f_bsize, 4096, fs.f_blocks, 100, 100, *fs[5:]))

    monkeypatch.setattr(os, "statvfs", little_room)
    index = _opens_without_a_word(trace, capfd, recwarn)
    assert index.meta["cache_error"].startswith(
        "could not write the cache: not enough free space (0 MB free, 1 MB needed")
    assert list(cache_dir.iterdir()) == []


def test_a_cache_directory_that_cannot_be_made(tmp_path, monkeypatch, capfd, recwarn) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(blocker / "cache"))
    trace = write_trace(tmp_path / "t.json", EVENTS)
    index = _opens_without_a_word(trace, capfd, recwarn)
    assert index.meta["cache_error"] == "could not write the cache: Not a directory"
    assert rows_for(index).n_rows == build_rows(index).n_rows
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("exists", [True, False], ids=["dir", "parent"])
def test_a_read_only_cache_path(tmp_path, cache_dir, denied, capfd, recwarn, exists) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    if exists:
        cache_dir.mkdir()
        denied.read_only(cache_dir)
    else:
        denied.read_only(tmp_path)
    _opens_without_a_word(trace, capfd, recwarn)
    assert cache_dir.exists() == exists and (not exists or list(cache_dir.iterdir()) == [])


def test_a_read_only_cache_still_serves_what_it_holds(tmp_path, cache_dir, denied) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    load_trace(str(trace))
    before = sorted(p.name for p in cache_dir.iterdir())
    denied.read_only(cache_dir)
    index = load_trace(str(trace))
    assert index.meta["from_cache"] is True
    assert rows_for(index).n_rows == build_rows(index).n_rows  # rows not stored, still right
    assert sorted(p.name for p in cache_dir.iterdir()) == before


def test_temporaries_of_killed_writers_are_swept(tmp_path, cache_dir) -> None:
    """Storing an index sweeps what killed writers left (ours, or empty: killed before the
    first byte), and nothing that is someone else's: the policy `proftui cache clear` uses."""
    cache_dir.mkdir()
    outside = tmp_path / "precious"
    outside.write_bytes(cache_file.MAGIC + b"not the cache's")
    names = {".tmp-killed": cache_file.MAGIC + b"half", ".tmp-writing": cache_file.MAGIC,
             ".tmp-empty": b"", ".tmp-foreign": b"someone else's", ".tmp-link": None}
    for name, data in names.items():
        path = cache_dir / name
        path.symlink_to(outside) if data is None else path.write_bytes(data)
        if name != ".tmp-writing":
            os.utime(path, (time.time() - 7200, time.time() - 7200), follow_symlinks=False)
    load_trace(str(write_trace(tmp_path / "t.json", EVENTS)))
    assert _leftovers(cache_dir) == [".tmp-foreign", ".tmp-link", ".tmp-writing"]
    assert outside.exists()


def test_no_cache_writes_nothing(tmp_path, cache_dir) -> None:
    load_trace(str(write_trace(tmp_path / "t.json", EVENTS)), use_cache=False)
    assert not cache_dir.exists()


# --- two processes at once -----------------------------------------------------------------

CHILD = """
import hashlib, sys, time
from pathlib import Path
from proftui.core import load_trace
ready, go, trace = sys.argv[1:]
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.0005)
index = load_trace(trace)
digest = hashlib.sha256(index.strings.blob.tobytes() + index.strings.offsets.tobytes())
for key in sorted(index.arrays):
    digest.update(key.encode() + index.arrays[key].tobytes())
print(digest.hexdigest(), index.meta.get("cache_error"))
"""


def _digest(index) -> str:
    digest = hashlib.sha256(index.strings.blob.tobytes() + index.strings.offsets.tobytes())
    for key in sorted(index.arrays):
        digest.update(key.encode() + index.arrays[key].tobytes())
    return digest.hexdigest()


def test_two_processes_index_the_same_trace_at_once(tmp_path, cache_dir) -> None:
    events = [{**e, "ts": i * 10} for i, e in enumerate(EVENTS * 25)]
    trace = write_trace(tmp_path / "t.json", events)
    go = tmp_path / "go"
    env = dict(os.environ, PROFTUI_CACHE_DIR=str(cache_dir))
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / f"ready{n}"),
                                  str(go), str(trace)], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for n in range(2)]
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"ready{n}").exists() for n in range(2)):
            assert time.monotonic() < deadline and all(c.poll() is None for c in children)
            time.sleep(0.005)
        go.touch()
        results = [c.communicate(timeout=60) for c in children]
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert [c.returncode for c in children] == [0, 0], [err for _, err in results]
    fresh = _fresh(trace)
    assert [out.split() for out, _ in results] == [[_digest(fresh), "None"]] * 2
    assert [err for _, err in results] == ["", ""]
    assert _leftovers(cache_dir) == [] and len(list(cache_dir.glob("*.idx"))) == 1
    cached = load_trace(str(trace))
    assert cached.meta["from_cache"] is True
    assert columns_equal(cached, fresh) and _digest(cached) == _digest(fresh)


def test_a_map_outlives_the_replacement_of_its_file(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    load_trace(str(trace))
    mapped = load_trace(str(trace))
    entry = Path(mapped.meta["cache_path"])
    garbage = entry.with_name("incoming")
    garbage.write_bytes(os.urandom(entry.stat().st_size))
    os.replace(garbage, entry)  # what another writer's rename does, with other bytes
    fresh = _fresh(trace)
    assert columns_equal(mapped, fresh)
    assert [slice_args(mapped, i) for i in range(5)] == [slice_args(fresh, i) for i in range(5)]


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's /proc")
def test_the_check_lets_go_of_the_pages_it_read(tmp_path):
    """Verifying every array reads all of the file; its pages are not left counted in the
    process's memory (only what is touched afterwards is), and the arrays read the same."""
    path = tmp_path / "big.idx"
    values = np.arange(4 << 20, dtype=np.int64)  # 32 MB
    cache_file.write(path, {}, {"a": values, "b": values[:1000]})
    _, arrays = cache_file.read(path)

    def resident_kb() -> int:
        total, mine = 0, False
        for line in Path("/proc/self/smaps").read_text().splitlines():
            if "-" in line.split(" ", 1)[0] and not line.endswith(":"):
                mine = line.endswith(str(path))
            elif mine and line.startswith("Rss:"):
                total += int(line.split()[1])
        return total

    assert resident_kb() < 1024
    assert np.array_equal(arrays["a"], values) and np.array_equal(arrays["b"], values[:1000])
    assert resident_kb() >= 32 << 10  # touched again: read back from the page cache
