"""Cache hygiene: a size cap kept by removing the least recently used entries (an index with
the arrays derived from it), checksums that make a damaged file be rebuilt, never trusted,
and only proftui's own files ever counted or removed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.cache import entries as cache_entries
from proftui.core.cache import file as cache_file
from proftui.core.cache import indexes as cache
from proftui.core.query.rows import ROWS_KIND, build_rows, rows_for

from helpers import columns_equal, write_trace


def _events(name: str, n: int = 300) -> list[dict]:
    return [{"ph": "X", "name": f"{name}{i % 5}", "pid": 1, "tid": i % 2, "ts": i * 10,
             "dur": 4} for i in range(n)]


def _trace(tmp_path: Path, name: str, n: int = 300) -> Path:
    return write_trace(tmp_path / f"{name}.json", _events(name, n))


def _later() -> None:
    """Past the file system's time-stamp tick, so that two uses have different times."""
    time.sleep(0.03)


# --- the cap -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("10G", 10 << 30), ("500M", 500 << 20), ("123456", 123456), ("1.5G", 3 << 29),
    ("750MiB", 750 << 20), ("2k", 2048), (" 1T ", 1 << 40), ("64MB", 64 << 20)])
def test_sizes_of_the_cap(text, expected) -> None:
    assert cache_entries.parse_size(text) == expected


@pytest.mark.parametrize("text", ["12x", "", "-5M", "G", "1.2.3G", "ten"])
def test_a_cap_that_is_not_a_size(text) -> None:
    with pytest.raises(ValueError, match="is not a size"):
        cache_entries.parse_size(text)


def test_the_cap_defaults_to_10_gib(monkeypatch) -> None:
    monkeypatch.delenv("PROFTUI_CACHE_MAX", raising=False)
    assert cache_entries.max_bytes() == 10 << 30


def test_least_recently_used_entries_go_first_with_their_derived_files(
        tmp_path, cache_dir, monkeypatch) -> None:
    a, b, c = (_trace(tmp_path, name) for name in "abc")
    first = load_trace(str(a))
    index_bytes = Path(first.meta["cache_path"]).stat().st_size  # B's and C's are as large
    rows_for(first)  # a derived file beside A's index
    a_files = sorted(cache_dir.iterdir())
    assert [p.suffix for p in a_files] == [".idx", f".{ROWS_KIND}"]
    one = sum(p.stat().st_size for p in a_files)
    cap = one + index_bytes * 3 // 2  # A with its rows and B fit; C then does not
    monkeypatch.setenv("PROFTUI_CACHE_MAX", str(cap))
    _later()
    load_trace(str(b))
    _later()
    assert load_trace(str(a)).meta["from_cache"] is True  # A used again: now B is the oldest
    _later()
    load_trace(str(c))  # no room for three: B goes
    names = {Path(e.main).name for e in cache_entries.entries(cache_dir)}
    assert names == {Path(load_trace(str(x)).meta["cache_path"]).name for x in (a, c)}
    assert len(list(cache_dir.glob(f"*.{ROWS_KIND}"))) == 1  # A's rows stayed with A
    assert "from_cache" not in load_trace(str(b)).meta  # B indexed again (and A went now)
    assert sum(e.size for e in cache_entries.entries(cache_dir)) <= cap


def test_a_store_never_removes_its_own_entry(tmp_path, cache_dir, monkeypatch) -> None:
    trace = _trace(tmp_path, "a")
    index = load_trace(str(trace))
    size = Path(index.meta["cache_path"]).stat().st_size
    monkeypatch.setenv("PROFTUI_CACHE_MAX", str(size + 100))  # no room for its rows too
    rows = rows_for(index)
    assert rows.n_rows == build_rows(index).n_rows
    assert load_trace(str(trace)).meta["from_cache"] is True  # the index stayed


def test_an_index_larger_than_the_cap_is_not_cached(tmp_path, cache_dir, monkeypatch) -> None:
    monkeypatch.setenv("PROFTUI_CACHE_MAX", "1K")
    index = load_trace(str(_trace(tmp_path, "a")))
    assert index.meta["cache_error"].startswith("could not write the cache: ")
    assert "more than the cache may hold (1 KiB, PROFTUI_CACHE_MAX)" in index.meta["cache_error"]
    assert not list(cache_dir.glob("*.idx"))


def test_a_cap_that_is_not_a_size_is_said_and_the_trace_opens(tmp_path, cache_dir,
                                                               monkeypatch) -> None:
    monkeypatch.setenv("PROFTUI_CACHE_MAX", "lots")
    trace = _trace(tmp_path, "a")
    index = load_trace(str(trace))
    assert index.meta["cache_error"] == (
        "could not write the cache: PROFTUI_CACHE_MAX='lots' is not a size (for example "
        "10G, 500M or a number of bytes)")
    assert columns_equal(index, load_trace(str(trace), use_cache=False))


def test_files_of_others_are_never_counted_nor_removed(tmp_path, cache_dir,
                                                       monkeypatch) -> None:
    cache_dir.mkdir()
    notes = cache_dir / "notes.txt"
    notes.write_bytes(b"x" * 5000)
    lookalike = cache_dir / ("0" * 40 + ".idx")  # named like an entry, not ours
    lookalike.write_bytes(b"not a cache file" * 400)
    load_trace(str(_trace(tmp_path, "a")))
    monkeypatch.setenv("PROFTUI_CACHE_MAX", "1")
    cache_entries.make_room(cache_dir / ("f" * 40 + ".idx"), 0)
    assert not list(cache_dir.glob("[1-9a-f]*.idx"))  # ours went
    assert cache_entries.clear(cache_dir) == (0, 0)
    assert notes.read_bytes() == b"x" * 5000 and lookalike.exists()


def test_clear_removes_every_entry_and_old_temporaries(tmp_path, cache_dir) -> None:
    index = load_trace(str(_trace(tmp_path, "a")))
    rows_for(index)
    load_trace(str(_trace(tmp_path, "b")))
    stale, fresh = cache_dir / ".tmp-killed", cache_dir / ".tmp-writing"
    for tmp in (stale, fresh):
        tmp.write_bytes(cache_file.MAGIC + b"half")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    total = sum(p.stat().st_size for p in cache_dir.iterdir() if p != fresh)
    assert cache_entries.clear(cache_dir) == (4, total)
    assert sorted(p.name for p in cache_dir.iterdir()) == [".tmp-writing"]


def test_a_mapped_index_outlives_its_removal(tmp_path, cache_dir) -> None:
    """On Linux a removed file stays readable through the maps of the processes using it."""
    trace = _trace(tmp_path, "a")
    load_trace(str(trace))
    mapped = load_trace(str(trace))
    assert mapped.meta["from_cache"] is True
    cache_entries.clear(cache_dir)
    assert not list(cache_dir.iterdir())
    assert columns_equal(mapped, load_trace(str(trace), use_cache=False))


def test_a_load_marks_its_entry_as_used(tmp_path, cache_dir) -> None:
    trace = _trace(tmp_path, "a")
    path = Path(load_trace(str(trace)).meta["cache_path"])
    os.utime(path, (1_000_000, 1_000_000))
    load_trace(str(trace))
    assert path.stat().st_mtime > time.time() - 60


# --- checksums -----------------------------------------------------------------------------

def _flip(path: Path, array: str, at: int = 3, bit: int = 0x10) -> None:
    """Flip one bit of byte `at` of `array` in the cache file at `path`."""
    data = bytearray(path.read_bytes())
    header, data_start = cache_file.read_header(bytes(data))
    entry = next(e for e in header["arrays"] if e["name"] == array)
    assert entry["nbytes"] > at
    data[data_start + entry["offset"] + at] ^= bit
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("array", ["slices.start", "slices.name", "strings.blob"])
def test_a_flipped_bit_in_an_array_is_rebuilt_not_trusted(tmp_path, cache_dir, array) -> None:
    trace = _trace(tmp_path, "a")
    good = load_trace(str(trace))
    entry = Path(good.meta["cache_path"])
    _flip(entry, array)
    with pytest.raises(cache.CacheMiss, match="does not match its checksum"):
        cache.read_file(entry)
    rebuilt = load_trace(str(trace))
    assert "from_cache" not in rebuilt.meta and "cache_error" not in rebuilt.meta
    assert columns_equal(rebuilt, load_trace(str(trace), use_cache=False))
    again = load_trace(str(trace))
    assert again.meta["from_cache"] is True and columns_equal(again, rebuilt)


def test_a_flipped_bit_in_the_header_is_not_trusted(tmp_path, cache_dir) -> None:
    trace = _trace(tmp_path, "a")
    entry = Path(load_trace(str(trace)).meta["cache_path"])
    data = bytearray(entry.read_bytes())
    at = data.index(b'"start_ns":') + len(b'"start_ns":')  # a digit of the metadata
    data[at] = ord("9") if data[at] != ord("9") else ord("8")
    entry.write_bytes(bytes(data))
    with pytest.raises(cache.CacheMiss, match="damaged header"):
        cache.read_file(entry)
    assert "from_cache" not in load_trace(str(trace)).meta


def test_a_flipped_bit_in_derived_arrays_is_rebuilt(tmp_path, cache_dir) -> None:
    trace = _trace(tmp_path, "a")
    index = load_trace(str(trace))
    rows_for(index)
    rows_file = Path(f"{index.meta['cache_path']}.{ROWS_KIND}")
    header, _ = cache_file.read_header(rows_file.read_bytes())
    _flip(rows_file, header["arrays"][0]["name"])
    with pytest.raises(cache.CacheMiss, match="does not match its checksum"):
        cache.load_derived(index, ROWS_KIND)
    rows = rows_for(index)
    expected = build_rows(index).arrays()
    assert all(a.tolist() == expected[k].tolist() for k, a in rows.arrays().items())


def test_damage_anywhere_in_a_large_array_is_found(tmp_path) -> None:
    """A bit late in a many-page array, the top bit of a word (an even page weight would lose
    it modulo 2**64), the last bytes of an array whose size is no multiple of 8, and two pages
    swapped: each is found; the array as written reads back."""
    import numpy as np

    path = tmp_path / "f"
    values = np.arange(100_000, dtype=np.int64)  # 196 pages
    odd = np.arange(1001, dtype=np.uint8)  # 1001 bytes: the last page and word padded
    cache_file.write(path, {"what": "test"}, {"big": values, "odd": odd})
    header, arrays = cache_file.read(path)
    assert header["checksum"] == cache_file.CHECKSUM
    assert arrays["big"].tolist() == values.tolist() and arrays["odd"].tolist() == odd.tolist()
    good = path.read_bytes()
    _, data_start = cache_file.read_header(good)
    big_at = data_start + header["arrays"][0]["offset"]
    for name, at, bit in (("big", 700_000, 0x10), ("big", 4096 + 7, 0x80),
                          ("odd", 1000, 0x01)):
        _flip(path, name, at, bit)
        with pytest.raises(cache.CacheMiss, match=f"{name} does not match its checksum"):
            cache_file.read(path)
        path.write_bytes(good)
    data = bytearray(good)
    first, second = big_at + 3 * 4096, big_at + 9 * 4096
    data[first: first + 4096], data[second: second + 4096] = \
        data[second: second + 4096], data[first: first + 4096]
    path.write_bytes(bytes(data))
    with pytest.raises(cache.CacheMiss, match="big does not match its checksum"):
        cache_file.read(path)


def test_the_checksum_is_the_sum_of_pages_by_odd_weights() -> None:
    import numpy as np

    words = np.zeros(1024, "<u8")  # two pages
    words[0], words[511], words[512] = 5, 2**64 - 1, 7
    # page sums 4 (5 + 2**64 - 1, modulo 2**64) and 7, weighted 1 and 3; a third page holds
    # the last byte (9, padded with zeros), weight 5
    data = np.concatenate([words.view(np.uint8), np.array([9], np.uint8)])
    assert cache_file.checksum(data) == 4 * 1 + 7 * 3 + 9 * 5
    assert cache_file.checksum(np.zeros(0, np.uint8)) == 0
