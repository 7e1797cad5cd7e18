"""Work done in two halves at once: the same as in one, and an error in a half raised."""

from __future__ import annotations

import numpy as np
import pytest

from proftui.core.runtime import halves
from proftui.core.runtime.halves import in_halves, taken


@pytest.mark.parametrize("n", [0, 1, 2, 5, 1000])
def test_halves_cover_every_item_once(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(halves, "LEAST", 1)
    seen = np.zeros(n, np.int64)
    parts: list[tuple[int, int]] = []

    def work(a: int, b: int) -> None:
        parts.append((a, b))
        seen[a:b] += 1

    in_halves(work, n)
    assert np.all(seen == 1)
    assert len(parts) == (2 if n >= 1 else 1)


def test_one_thread_or_few_items_is_one_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    parts: list[tuple[int, int]] = []
    in_halves(lambda a, b: parts.append((a, b)), 100, threads=2)  # below LEAST
    monkeypatch.setattr(halves, "LEAST", 1)
    in_halves(lambda a, b: parts.append((a, b)), 100, threads=1)
    assert parts == [(0, 100), (0, 100)]


def test_at_once_gives_both_results_in_order() -> None:
    from proftui.core.runtime.halves import at_once

    for threads in (1, 2):
        assert at_once(lambda: "here", lambda: ["there"], threads) == ("here", ["there"])


@pytest.mark.parametrize("failing", [0, 50])
def test_an_error_in_either_half_is_raised(failing: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(halves, "LEAST", 1)

    def work(a: int, b: int) -> None:
        if a == failing:
            raise ValueError(f"half from {a}")

    with pytest.raises(ValueError, match=f"half from {failing}"):
        in_halves(work, 100)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.float64, bool])
def test_taken_is_fancy_indexing(dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(halves, "LEAST", 1)
    rng = np.random.default_rng(3)
    values = rng.integers(0, 100, 999).astype(dtype)
    order = rng.permutation(999)
    got = taken(values, order)
    assert got.dtype == values.dtype and np.array_equal(got, values[order])


@pytest.mark.parametrize("sizes", [[5], [3, 4], [1, 1000], [1000, 1], [0, 7, 0, 9, 2], [4] * 9])
def test_chunks_joined_in_two_halves_are_joined_the_same(
        sizes: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    from proftui.core.build import chunks
    from proftui.core.build.chunks import Chunks

    monkeypatch.setattr(chunks, "LEAST", 1)
    rng = np.random.default_rng(len(sizes))
    parts = [rng.integers(0, 1 << 40, n) for n in sizes]
    table = [Chunks(x=np.int64), Chunks(x=np.int64)]
    for t in table:
        for p in parts:
            t.append(x=p)
    one, two = table[0].concat()["x"], table[1].concat(threads=2)["x"]
    assert np.array_equal(one, np.concatenate(parts)) and np.array_equal(two, one)
    assert two.dtype == one.dtype


def test_chunks_of_mixed_types_are_joined_as_concatenate_joins_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from proftui.core.build import chunks
    from proftui.core.build.chunks import _joined

    monkeypatch.setattr(chunks, "LEAST", 1)
    parts = [np.arange(5, dtype=np.int32), np.arange(7, dtype=np.int64)] * 40  # > 32 parts
    got = _joined(parts, np.int64, threads=2)
    assert got.dtype == np.int64 and np.array_equal(got, np.concatenate(parts))
    same = [np.arange(3, dtype=np.int32)] * 40
    joined = _joined(same, np.int32, threads=2)
    assert joined.dtype == np.int32 and np.array_equal(joined, np.concatenate(same))
