"""Inflating gzip files with seek points: where to restart inflating near any offset.

A seek point is zlib's own ``examples/zran.c`` method: at a deflate block boundary, the
offset in the inflated stream, the offset of the next compressed byte, how many bits of the
byte before it belong to the block, and the 32 KiB of inflated text before it (the window that
later back-references may reach). Inflating again from a point with that window as the
dictionary gives the same bytes as inflating from the file's start.

Python's :mod:`zlib` cannot stop at block boundaries nor prime an inflater with a few bits, so
the system's zlib library is called through ctypes here (the library Python's own module links
to). Where it cannot be found (Windows, a static build), :func:`available` is False and callers
inflate from the start with :mod:`zlib`, as before. Errors are raised as :class:`GzipError`
after every byte inflated before them was yielded.

The points cost nothing measurable while indexing: a gzip trace is inflated faster than it is
parsed, in a thread of its own, and zlib called this way inflated a 1 GB trace in 0.44x the
time of Python's zlib module, as fast as isal (bench/bench_gzip.py). It inflates into pooled
buffers, each piece handed on as a view with room before it, so that the reader can parse it
where it lies (see with_before). The libraries that keep seek points themselves were
measured too and left out: indexed_gzip inflates at Python zlib's speed (0.81x), rapidgzip's
parallel inflate competes with the parser for two cores (1.06x).
"""

from __future__ import annotations

import ctypes
import functools
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

WINDOW = 32768  # deflate's largest back-reference distance
SPACING = 4 << 20  # inflated bytes between seek points (~10 ms of zlib to reach any offset)
_INPUT = 1 << 18  # compressed bytes read at a time
_MAGIC = b"\x1f\x8b"
_Z_OK, _Z_STREAM_END, _Z_NEED_DICT, _Z_BUF_ERROR = 0, 1, 2, -5
_Z_BLOCK = 5
_GZIP, _RAW = 31, -15  # window bits: a gzip member (header and trailer), bare deflate data


class GzipError(Exception):
    """The gzip data cannot be inflated further; the message is one sentence."""


class GzipTruncated(GzipError):
    """The gzip data ends before its last member does."""


class _ZStream(ctypes.Structure):
    _fields_ = [("next_in", ctypes.c_void_p), ("avail_in", ctypes.c_uint),
                ("total_in", ctypes.c_ulong), ("next_out", ctypes.c_void_p),
                ("avail_out", ctypes.c_uint), ("total_out", ctypes.c_ulong),
                ("msg", ctypes.c_char_p), ("state", ctypes.c_void_p),
                ("zalloc", ctypes.c_void_p), ("zfree", ctypes.c_void_p),
                ("opaque", ctypes.c_void_p), ("data_type", ctypes.c_int),
                ("adler", ctypes.c_ulong), ("reserved", ctypes.c_ulong)]


@functools.cache
def _library() -> ctypes.CDLL | None:
    """The system zlib with the calls used here, or None. Looked up on first use, not on
    import (reopening from the cache needs no inflating), by its usual names first:
    `find_library` runs ldconfig in a child process, a fork of this one."""
    import ctypes.util

    def names() -> Iterator[str | None]:
        yield from ("libz.so.1", "libz.dylib")
        yield ctypes.util.find_library("z")

    for name in filter(None, names()):
        try:
            lib = ctypes.CDLL(name)  # a CDLL call releases the GIL: inflating runs beside us
            stream = ctypes.POINTER(_ZStream)
            lib.zlibVersion.restype = ctypes.c_char_p
            lib.inflateInit2_.argtypes = [stream, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
            lib.inflate.argtypes = [stream, ctypes.c_int]
            lib.inflateEnd.argtypes = [stream]
            lib.inflatePrime.argtypes = [stream, ctypes.c_int, ctypes.c_int]
            lib.inflateSetDictionary.argtypes = [stream, ctypes.c_char_p, ctypes.c_uint]
            lib.inflateReset2.argtypes = [stream, ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    return None



def available() -> bool:
    """Whether seek points can be kept and used here."""
    return _library() is not None


@dataclass(frozen=True)
class SeekPoints:
    """The seek points of one gzip file, in order: inflated offset, compressed offset, bits of
    the byte before it, and the windows, each compressed (zlib, level 1: a JSON window shrinks
    about 8x) and ending at its entry of `window_ends` in `windows`."""

    out: np.ndarray  # int64
    inp: np.ndarray  # int64
    bits: np.ndarray  # uint8
    windows: np.ndarray  # uint8: the compressed windows one after another
    window_ends: np.ndarray  # int64

    @classmethod
    def of(cls, points: list[tuple[int, int, int, bytes]]) -> SeekPoints:
        packed = [zlib.compress(p[3], 1) for p in points]
        return cls(np.array([p[0] for p in points], np.int64),
                   np.array([p[1] for p in points], np.int64),
                   np.array([p[2] for p in points], np.uint8),
                   np.frombuffer(b"".join(packed), np.uint8),
                   np.cumsum([len(w) for w in packed], dtype=np.int64))

    def valid(self, compressed_size: int) -> bool:
        """Whether the arrays are consistent with each other and with the file's size (they
        come from a file on disk)."""
        n = len(self.out)
        return (len(self.inp) == len(self.bits) == len(self.window_ends) == n
                and bool(np.all(np.diff(self.out) > 0)) and bool(np.all(self.bits < 8))
                and bool(np.all((self.inp >= 1) & (self.inp <= compressed_size)))
                and bool(np.all(self.out >= WINDOW))
                and bool(np.all(np.diff(self.window_ends, prepend=0) > 0))
                and (n == 0 or int(self.window_ends[-1]) == len(self.windows)))

    def before(self, offset: int) -> int:
        """The number of the last point at or before inflated `offset`; -1 for none."""
        return int(np.searchsorted(self.out, offset, side="right")) - 1

    def window(self, k: int) -> bytes:
        """The WINDOW inflated bytes before point `k`; raises GzipError when damaged."""
        start = int(self.window_ends[k - 1]) if k else 0
        try:
            window = zlib.decompress(self.windows[start: int(self.window_ends[k])].tobytes())
        except zlib.error:
            window = b""
        if len(window) != WINDOW:
            raise GzipError("a seek point's window is damaged")
        return window


# Each inflated piece follows this many free bytes in the buffer it was inflated into, where
# a reader may put what it carries over from the piece before (see with_before).
ROOM = 1 << 16


def with_before(piece: bytes | memoryview, before: memoryview) -> memoryview | None:
    """`before` and `piece` as one view, where `piece` is (what is left to read of) an
    inflated piece, a view of the buffer it was inflated into (see :func:`inflate`), and
    `before` fits in that buffer before it: the room left there, and the piece's bytes already
    read (copied out; nothing may read them there again). `before` is copied there; `piece`
    is not copied at all. None otherwise: then the caller joins them."""
    out = piece.obj if isinstance(piece, memoryview) else None
    if not isinstance(out, _Buffer):
        return None
    start = _address(piece) - _address(out)
    n = len(before)
    if n > start:
        return None
    whole = memoryview(out)
    whole[start - n:start] = before
    return whole[start - n:start + len(piece)]


def _address(buffer: bytearray | memoryview) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


class _Buffer(bytearray):
    """A buffer inflated into (told from any other by its type: see with_before)."""


class _Buffers:
    """The buffers inflated into: each piece is handed on as a view of one (not copied into a
    bytes object, under the GIL), and a buffer is inflated into again once no view of it is
    left."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pool: list[tuple[_Buffer, int]] = []

    def get(self) -> tuple[_Buffer, int]:
        """A buffer that nothing else refers to, and its address."""
        for entry in self.pool:
            if sys.getrefcount(entry[0]) == 2:  # its entry, and getrefcount's argument
                return entry
        out = _Buffer(self.size)
        entry = (out, _address(out))
        self.pool.append(entry)
        return entry


class _Inflater:
    """One zlib inflate stream over a file, yielding what it inflates."""

    def __init__(self, f: BinaryIO, chunk: int, counted: Callable[[int], None]) -> None:
        lib = _library()
        assert lib is not None
        self.lib = lib
        self.f = f
        self.chunk = chunk
        self.counted = counted
        self.strm = _ZStream()
        self.data = b""  # the compressed bytes being read (kept alive while zlib reads them)
        self.read_at = f.tell()  # the file offset of `data`
        self.eof = False

    def init(self, wbits: int) -> None:
        version = self.lib.zlibVersion()
        if self.lib.inflateInit2_(ctypes.byref(self.strm), wbits, version,
                                  ctypes.sizeof(_ZStream)) != _Z_OK:
            raise GzipError("zlib could not start inflating")

    def end(self) -> None:
        self.lib.inflateEnd(ctypes.byref(self.strm))

    def at(self) -> int:
        """The file offset of the next compressed byte zlib has not taken."""
        return self.read_at + len(self.data) - self.strm.avail_in

    def ensure(self, n: int) -> None:
        """Give zlib at least `n` compressed bytes not yet taken, if the file has them."""
        strm = self.strm
        while strm.avail_in < n and not self.eof:
            pos = len(self.data) - strm.avail_in
            more = self.f.read(_INPUT)
            self.counted(len(more))
            self.eof = not more
            self.read_at += pos
            self.data = self.data[pos:] + more
            strm.next_in = ctypes.cast(ctypes.c_char_p(self.data), ctypes.c_void_p)
            strm.avail_in = len(self.data)

    def peek(self, n: int) -> bytes:
        """The next `n` bytes zlib has not taken (fewer at the end of the file)."""
        self.ensure(n)
        pos = len(self.data) - self.strm.avail_in
        return self.data[pos: pos + n]

    def skip(self, n: int) -> None:
        """Pass over the next `n` compressed bytes (fewer at the end of the file)."""
        self.ensure(n)
        n = min(n, self.strm.avail_in)
        self.strm.next_in = (self.strm.next_in or 0) + n
        self.strm.avail_in -= n

    def run(self, out_at: int, raw: bool,
            keep: list[tuple[int, int, int, bytes]] | None = None,
            spacing: int = 0, tail: bytes = b"") -> Iterator[memoryview]:
        """Inflate to the end of the last gzip member, yielding at most `chunk` bytes at a
        time, each a view of the buffer it was inflated into, ROOM bytes into it (see
        with_before); `out_at` is the inflated offset where it starts. With `keep`, seek
        points are appended to it about every `spacing` inflated bytes. `raw`: the stream
        starts as bare deflate data inside a member (at a seek point)."""
        buffers = _Buffers(ROOM + self.chunk)
        out, base = buffers.get()
        filled = 0
        last = out_at
        strm, lib = self.strm, self.lib
        while True:
            self.ensure(1)
            if filled == self.chunk:
                piece = memoryview(out)[ROOM:ROOM + filled]
                tail = (tail + piece)[-WINDOW:] if filled < WINDOW else bytes(piece[-WINDOW:])
                out_at += filled
                filled = 0
                yield piece
                del piece
                out, base = buffers.get()
            strm.next_out = base + ROOM + filled
            strm.avail_out = self.chunk - filled
            ret = lib.inflate(ctypes.byref(strm), _Z_BLOCK)
            filled = self.chunk - strm.avail_out
            if ret == _Z_STREAM_END:
                if filled:
                    piece = memoryview(out)[ROOM:ROOM + filled]
                    tail = (tail + piece)[-WINDOW:]
                    out_at, filled = out_at + filled, 0
                    yield piece
                    del piece
                    out, base = buffers.get()
                if raw:  # the member's trailer (CRC-32, size), which zlib reads in gzip mode
                    self.skip(8)
                    raw = False
                head = self.peek(2)
                if not head or not _MAGIC.startswith(head):
                    return  # the end, or trailing bytes that are not another member
                lib.inflateReset2(ctypes.byref(strm), _GZIP)
                continue
            if ret == _Z_BUF_ERROR and self.eof and not strm.avail_in:
                if filled:
                    yield memoryview(out)[ROOM:ROOM + filled]
                raise GzipTruncated("the gzip stream ends early (truncated file)")
            if ret not in (_Z_OK, _Z_BUF_ERROR):
                if filled:
                    yield memoryview(out)[ROOM:ROOM + filled]
                msg = (strm.msg or b"").decode("ascii", "replace")
                raise GzipError(f"Error {ret} while decompressing data: {msg}")
            total = out_at + filled
            if (keep is not None and strm.data_type & 128 and not strm.data_type & 64
                    and total - last >= spacing and total >= WINDOW):
                near = min(filled, WINDOW)
                window = (tail + ctypes.string_at(base + ROOM + filled - near, near))[-WINDOW:]
                keep.append((total, self.at(), strm.data_type & 7, window))
                last = total


def inflate(f: BinaryIO, chunk: int, counted: Callable[[int], None],
            keep: list[tuple[int, int, int, bytes]] | None = None) -> Iterator[memoryview]:
    """The inflated bytes of the gzip file `f` from its start (all members, trailing bytes
    that are not a member ignored); seek points appended to `keep` when given, about every
    SPACING bytes. `counted` is told how many compressed bytes each read took. Raises
    GzipError."""
    inflater = _Inflater(f, chunk, counted)
    inflater.init(_GZIP)
    try:
        yield from inflater.run(0, False, keep, SPACING)
    finally:
        inflater.end()


def inflate_from(f: BinaryIO, points: SeekPoints, k: int, chunk: int) -> Iterator[memoryview]:
    """The inflated bytes from seek point number `k` on (it starts at ``points.out[k]``).
    Raises GzipError."""
    bits = int(points.bits[k])
    f.seek(int(points.inp[k]) - (1 if bits else 0))
    first = f.read(1) if bits else b""
    inflater = _Inflater(f, chunk, lambda n: None)
    inflater.init(_RAW)
    try:
        lib, strm = inflater.lib, ctypes.byref(inflater.strm)
        if bits and (not first or lib.inflatePrime(strm, bits, first[0] >> (8 - bits)) != _Z_OK):
            raise GzipError("a seek point lies outside the file")
        window = points.window(k)
        if lib.inflateSetDictionary(strm, window, WINDOW) != _Z_OK:
            raise GzipError("zlib refused a seek point's window")
        yield from inflater.run(int(points.out[k]), True, tail=window)
    finally:
        inflater.end()
