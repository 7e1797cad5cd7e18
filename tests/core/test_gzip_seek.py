"""Inflating through the system zlib with seek points: the same bytes and the same errors as
Python's zlib, and inflating again from any seek point gives the rest of the stream exactly."""

from __future__ import annotations

import gzip
import io
import random

import pytest

from proftui.core.source import gzip_seek
from proftui.core.source.gzip_seek import GzipError, SeekPoints
from proftui.core.source.streams import ByteSource

pytestmark = pytest.mark.skipif(not gzip_seek.available(), reason="no system zlib to call")


def _text(rng: random.Random, n: int) -> bytes:
    words = [b'{"ph":"X","name":"', b"aten::mm", b'","ts":', b"17000000", b"},\n"]
    return b"".join(rng.choice(words) if rng.random() < 0.5 else bytes([rng.randrange(256)])
                    for _ in range(n))


def _members(seed: int) -> tuple[bytes, bytes]:
    """(gzip file, its inflated bytes): one to three members, levels 1 to 9."""
    rng = random.Random(seed)
    parts = [_text(rng, rng.randrange(50_000, 150_000)) for _ in range(rng.choice([1, 2, 3]))]
    packed = b"".join(gzip.compress(p, compresslevel=rng.choice([1, 6, 9]), mtime=0)
                      for p in parts)
    return packed, b"".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_every_seek_point_restarts_exactly(seed, monkeypatch) -> None:
    monkeypatch.setattr(gzip_seek, "SPACING", 64 << 10)
    packed, raw = _members(seed)
    packed += b"\0" * 50 if seed == 3 else b""  # padding after the last member is ignored
    keep: list = []
    assert b"".join(gzip_seek.inflate(io.BytesIO(packed), 1 << 16, lambda n: None, keep)) == raw
    points = SeekPoints.of(keep)
    assert points.valid(len(packed)) and len(points.out) >= 2
    assert len(set(points.bits.tolist())) > 1  # points inside bytes, not only at byte edges
    for k, at in enumerate(points.out.tolist()):
        again = gzip_seek.inflate_from(io.BytesIO(packed), points, k, 1 << 16)
        assert b"".join(again) == raw[at:], k
        assert points.window(k) == raw[at - gzip_seek.WINDOW: at]


def test_pieces_are_views_with_room_before_them() -> None:
    """Each inflated piece is a view of the buffer it was inflated into, not a copy: one that
    is held is not inflated into again, and with_before puts bytes in the room before it (or
    before what is left of it) without copying it; bytes that do not fit there, and a piece
    that is no such view, it refuses."""
    packed, raw = _members(2)
    held, at = [], 0
    for k, piece in enumerate(gzip_seek.inflate(io.BytesIO(packed), 1 << 12, lambda n: None)):
        if k % 3 == 0:
            held.append((at, piece))  # the others are let go: their buffers are used again
        at += len(piece)
    assert len(held) > 20 and all(bytes(p) == raw[a: a + len(p)] for a, p in held)
    piece = held[4][1]
    joined = gzip_seek.with_before(piece, memoryview(b"carried over"))
    assert joined is not None and joined.obj is piece.obj
    assert bytes(joined) == b"carried over" + bytes(piece)
    assert gzip_seek.with_before(piece, memoryview(bytes(gzip_seek.ROOM + 1))) is None
    rest = gzip_seek.with_before(piece[100:], memoryview(bytes(gzip_seek.ROOM + 100)))
    assert rest is not None and bytes(rest) == bytes(gzip_seek.ROOM + 100) + bytes(piece[100:])
    assert gzip_seek.with_before(piece[100:], memoryview(bytes(gzip_seek.ROOM + 101))) is None
    assert gzip_seek.with_before(bytes(piece), memoryview(b"x")) is None
    assert gzip_seek.with_before(memoryview(bytearray(100))[50:], memoryview(b"x")) is None


def test_same_bytes_and_errors_as_pythons_zlib(tmp_path, monkeypatch) -> None:
    """Cut anywhere or damaged, a file gives the same bytes and the same error both ways."""
    packed, _ = _members(1)
    bad = bytearray(packed)
    bad[len(bad) // 2: len(bad) // 2 + 40] = b"\xff" * 40
    cases = [packed[:cut] for cut in range(5, len(packed), len(packed) // 9)] + [bytes(bad)]
    path = tmp_path / "t.json.gz"
    for data in cases:
        path.write_bytes(data)
        got = []
        for lib in (gzip_seek._library(), None):
            monkeypatch.setattr(gzip_seek, "_library", lambda lib=lib: lib)
            source = ByteSource(str(path))
            got.append((b"".join(source.chunks()), source.error))
        assert got[0] == got[1]
        assert got[0][1] is not None


def test_a_point_past_the_file_is_an_error(monkeypatch) -> None:
    monkeypatch.setattr(gzip_seek, "SPACING", 64 << 10)
    packed, _ = _members(1)
    keep: list = []
    b"".join(gzip_seek.inflate(io.BytesIO(packed), 1 << 16, lambda n: None, keep))
    points = SeekPoints.of(keep)
    with pytest.raises(GzipError):
        b"".join(gzip_seek.inflate_from(io.BytesIO(packed[: int(points.inp[0]) - 1]),
                                        points, 0, 1 << 16))
