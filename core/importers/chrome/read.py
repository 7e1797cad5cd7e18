"""Chrome Trace Event Format JSON, read in ~4 MB batches in bounded memory.

The event array is cut at ``}`` ``,`` ``{`` boundaries without a structural scan: a batch is
decoded as ``[`` + piece + ``]`` by a typed decoder that skips ``args``; a cut that fell inside
a string cannot decode, so a successful decode proves the cut. When a few candidate cuts in a
row do not decode, a (vectorised) scan of strings and brackets finds one between two events.
Batches that do not decode (invalid JSON, NaN, a truncated tail) are re-read event by event
with a lenient decoder, and what cannot be read is counted. Each batch's byte range is
recorded so that the ``args`` of one event can be read again later (see :func:`decode_piece`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import orjson

from proftui.core.importers.chrome import native
from proftui.core.importers.chrome.decode import (
    DECODER,
    LENIENT,
    SLOW_PART,
    TRAILING,
    Event,
    Piece,
    decode_fast,
    decode_piece,
    decode_slow,
    decode_whole,
)
from proftui.core.importers.chrome.head import HEADER_LIMIT, WS, find_events
from proftui.core.importers.chrome.scan import BOUNDARY, CLOSED, entry_boundary, last_boundary
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.errors import Cancelled
from proftui.core.source.gzip_seek import with_before
from proftui.core.source.streams import ByteSource, Chunk

# Each batch costs the sink ~50 numpy calls whatever its size: 4 MB batches index a 1 GB trace
# in 0.89-0.90x the CPU time of 1 MB ones (Kineto-like and msprof-like, one process; 8 MB gain
# less), with the same peak, once their read buffers stay below malloc's mmap threshold (see
# runtime.malloc.tune_malloc; above it, 4 MB batches took 1.4x the time).
BATCH_BYTES = 4 << 20

_MAX_EXTENSIONS = 4

_LEAD = re.compile(rb"[ \t\r\n,]*")  # always matches (possibly empty)

# An entry larger than this is damage: it is skipped so that memory stays bounded.
ENTRY_LIMIT = 32 << 20
# Where the last batch's last event is looked for: its last bytes (a larger last event, or
# more after the array, leave the whole last batch to the Python path, as before).
LAST_EVENT_WINDOW = 1 << 20


class _Stream:
    """The event array being read: `buf` holds the file's bytes from byte `base` on, read up
    to `pos`. A batch is cut without copying what follows it; only what is left unread when
    more is read is carried into the next buffer.

    Two buffers take turns: a refill reads into the one not in use, unless anything still
    holds it (a batch's columns, a view, the reading ahead): then into a new one. (numpy's
    `ndarray.resize` checks its references the same way before it reuses an array.) A reader
    that can hand over its next chunk as it is, with what is left unread before it (a
    compressed file's: see _Chunks.take), is taken from instead, and nothing is copied but
    the few bytes left unread (copying each inflated chunk on the thread that parses, and
    into a bytes object before that: a 1 GB .json.gz indexes in 0.84x the time without)."""

    def __init__(self, reader: Any, buf: bytes, base: int, chunk: int) -> None:
        self.reader = reader  # readinto(view) -> bytes read, 0 at the end; close()
        self.buf: bytes | memoryview = buf
        self.base = base
        self.pos = 0
        self.eof = False
        self.chunk = chunk
        self._current: bytearray | None = None  # what `buf` views, once refilled
        self._spare: bytearray | None = None

    def fill(self, size: int) -> None:
        """Read on until `buf` holds at least `size` unread bytes or the file ends (positions
        in `buf` taken before are then stale: `pos` is where the unread bytes begin)."""
        have = len(self.buf) - self.pos
        if have >= size or self.eof:
            return
        take = getattr(self.reader, "take", None)
        while take is not None and (taken := take(memoryview(self.buf)[self.pos:])):
            # the next chunk as it is, what was unread put before it (see _Chunks.take)
            self.buf = taken
            self.base += self.pos
            self.pos = 0
            if len(taken) >= size:
                return
        have = len(self.buf) - self.pos
        want = max(size, have + self.chunk)
        spare, self._spare = self._spare, None
        # Reused when large enough and held by no one else: only `spare` and getrefcount's
        # argument refer to it.
        if spare is None or len(spare) < want or sys.getrefcount(spare) > 2:
            spare = None  # (let go before a new one is made: the peak holds one less)
            # of the size any refill of a batch asks (what is left of one, and a chunk)
            spare = bytearray(max(want, self.chunk * 3 // 2 + 1))
        view = memoryview(spare)
        view[:have] = memoryview(self.buf)[self.pos:]
        got = have
        while got < size or (got < want and not self.eof):
            n = self.reader.readinto(view[got:want])
            if not n:
                self.eof = True
                break
            got += n
        view.release()
        # The one read before is kept to be read into next, unless grown for a large entry.
        old = self._current
        self._spare = old if old is not None and len(old) <= 2 * self.chunk else None
        self._current = spare
        self.buf = memoryview(spare)[:got]
        self.base += self.pos
        self.pos = 0

    def seek(self, at: int) -> None:
        """Mark the bytes of `buf` before `at` read."""
        self.pos = at

    def close(self) -> None:
        self.reader.close()


class _Chunks:
    """A compressed file's chunks (inflated in a thread), each taken as it is where it can
    be (take), else read into the stream's buffer (readinto)."""

    def __init__(self, chunks: Generator[Chunk, None, None]) -> None:
        self.chunks = chunks
        self.left = memoryview(b"")

    def take(self, before: memoryview) -> memoryview | None:
        """The next chunk (or what is left of it) with `before` in front of it, the chunk not
        copied: where it was inflated with room for `before` (see gzip_seek.with_before).
        None where it was not (it is then read into the stream's buffer by readinto), or at
        the end."""
        if not self.left:
            data = next(self.chunks, None)
            if data is None:
                return None
            self.left = memoryview(data)
        taken = with_before(self.left, before)
        if taken is not None:
            self.left = memoryview(b"")
        return taken

    def readinto(self, view: memoryview) -> int:
        while not self.left:
            data = next(self.chunks, None)
            if data is None:
                return 0
            self.left = memoryview(data)
        n = min(len(view), len(self.left))
        view[:n] = self.left[:n]
        self.left = self.left[n:]
        return n

    def close(self) -> None:
        self.chunks.close()


@dataclass
class BatchRecord:
    """Where a batch lies in the (decompressed) file and the ordinal of its first event."""

    start: int
    end: int
    first_ordinal: int
    final: bool


# (events, first ordinal, byte offset); events decoded by the Python path or the native reader
EventSink = Callable[[list[Event] | native.Columns, int, int], None]


def first_end(buf: bytes, start: int, batch_bytes: int, eof: bool,
              ) -> tuple[re.Match | None, bool]:
    """Where the batch from `start` is first tried to end, and whether that is the buffer's
    last boundary: the first ``},{`` past the batch size; when `buf` holds none and the file
    goes on (`eof` false), its last one at least half a batch on (None if none). A buffer
    that ends in such a batch carries part of one event into the next, where it carried most
    of a batch (a refill copied half of what the file read)."""
    m = BOUNDARY.search(buf, start + batch_bytes - 1)
    if m is not None or eof:
        return m, False
    return last_boundary(buf, start + batch_bytes // 2, len(buf)), True


class _Ahead:
    """The native reading of the next batch, begun in a thread of its own while the sink
    takes the current one (the extension releases the GIL: the two run on two cores). Only
    the reading is done ahead; what is recorded, counted and added happens in the reader's
    thread in file order, so that the index is the one a serial read gives."""

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(1, thread_name_prefix="proftui-read-ahead")
        self.key: tuple[bytes, int, int] | None = None
        self.future: Any = None

    def begin(self, buf: bytes, start: int, batch_bytes: int, eof: bool) -> None:
        """Read ahead the batch of `buf` from `start` to where it is first tried to end (see
        first_end; `eof`: the file's end is in `buf`)."""
        m, _ = first_end(buf, start, batch_bytes, eof)
        if m is None:
            self.key = None
            return
        self.key = (buf, start, m.start() + 1)
        self.future = self.pool.submit(native.read_batch, buf, start, m.start() + 1)

    def take(self, buf: bytes, start: int, end: int) -> native.Columns | None | bool:
        """What was read ahead for buf[start:end], or False when that was not read ahead."""
        key, self.key = self.key, None
        if key is None or key[0] is not buf or key[1:] != (start, end):
            return False
        return self.future.result()

    def close(self) -> None:
        self.key = None
        self.pool.shutdown(wait=True)


class ChromeJsonReader:
    """Streams one Chrome-trace JSON file into an event sink, batch by batch.

    With `read_ahead` (and the native reader on), the next batch is read in a thread while
    the sink takes the current one; the index is the same either way.
    """

    def __init__(self, source: ByteSource, diagnostics: Diagnostics,
                 batch_bytes: int = BATCH_BYTES, read_ahead: bool = False) -> None:
        self.source = source
        self.diagnostics = diagnostics
        self.batch_bytes = max(1, batch_bytes)
        self.read_ahead = read_ahead
        self._ahead: _Ahead | None = None
        self.metadata: dict[str, Any] = {}
        self.batches: list[BatchRecord] = []
        self.n_events = 0
        self.closed = False  # the event array's closing bracket was seen

    def read(self, sink: EventSink,
             progress: Callable[[int, int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None,
             region: tuple[int, int | None] | None = None) -> None:
        """Read the whole file, passing each batch of events to `sink`.

        With `region` (start, end), read only the events in that byte range of a plain file:
        `start` is the ``{`` of an event (or the file's start) and `end` just past an event's
        ``}`` (or None for the end of the file).
        """
        # Two batches a read: a refill copies what is left of the last read (under a batch)
        # and the new bytes, which stay under malloc's mmap threshold (see tune_malloc).
        chunk = max(2 * self.batch_bytes, 1 << 16)
        cut_before = self.diagnostics.count("truncated")
        if region is None or region[0] == 0:
            chunks = self.source.chunks(chunk, 0, None if region is None else region[1])
            rest, offset = self._find_events(chunks)
            if self.source.compressed:
                reader: Any = _Chunks(chunks)
            else:  # on from where finding the events stopped, into the stream's buffers
                chunks.close()
                reader = self.source.reader(offset + len(rest),
                                            None if region is None else region[1])
            stream = _Stream(reader, rest, offset, chunk)
        else:
            self.source.consumed = 0
            stream = _Stream(self.source.reader(region[0], region[1]), b"", region[0], chunk)
        # A compressed file is inflated in a thread already (see ByteSource.chunks): a third
        # busy thread on two cores made it slower (1 GB Kineto-like .gz: 3.14 s, 2.90 without).
        self._ahead = (_Ahead() if self.read_ahead and native.enabled()
                       and not self.source.compressed else None)
        try:
            self._read_stream(sink, stream, progress, cancelled)
        finally:
            stream.close()
            if self._ahead is not None:
                self._ahead.close()
                self._ahead = None
        if self.source.error:
            # A gzip stream that ends early ends the text mid-event too: one cut, counted
            # once, with the stream's reason (the event cut is where the text stops).
            if self.diagnostics.count("truncated") > cut_before:
                self.diagnostics.explain("truncated", self.source.error)
            else:
                self.diagnostics.add("truncated", 1, self.source.consumed, self.source.error)
        elif region is None or region[1] is None:
            self.count_unclosed(self.closed, self.source.consumed, cut_before)
        if progress is not None:
            progress(self.source.consumed, self.source.size, self.n_events)

    def _read_stream(self, sink: EventSink, stream: _Stream,
                     progress: Callable[[int, int, int], None] | None,
                     cancelled: Callable[[], bool] | None) -> None:
        """The batches of `stream` into `sink`, to the end of the event array."""
        while True:
            if cancelled is not None and cancelled():
                raise Cancelled("Loading was cancelled.")
            stream.fill(self.batch_bytes // 2 + 1)
            start = _LEAD.match(stream.buf, stream.pos).end()  # type: ignore[union-attr]
            if start == len(stream.buf) and not stream.eof:
                stream.seek(start)  # only blanks and commas so far (a padded file)
                continue
            cut = self._cut(stream.buf, start, stream.eof)
            if cut is None and not stream.eof:
                # No provable boundary yet: one event larger than a batch, or damage.
                if len(stream.buf) - start > ENTRY_LIMIT:
                    self._skip_damage(sink, stream, start, progress, cancelled)
                else:  # doubling keeps the rescans linear
                    stream.seek(start)
                    unread = len(stream.buf) - start
                    stream.fill(min(2 * unread, ENTRY_LIMIT + 1))
                continue
            if cut is None or cut == CLOSED:
                # The rest is the last batch: the array's end and what follows it.
                stream.seek(start)
                stream.fill(HEADER_LIMIT)
                start = self._all_but_last(sink, stream.buf, stream.pos, stream.base)
                self._emit(sink, bytes(stream.buf[start:]), stream.base + start, final=True)
                return
            end, nxt, events = cut
            offset = stream.base + start
            piece = bytes(stream.buf[start:end]) if events is None else b""
            stream.seek(nxt)
            if self._ahead is not None:  # the next batch, read while the sink takes this one
                stream.fill(self.batch_bytes // 2 + 1)
                lead = _LEAD.match(stream.buf, stream.pos).end()  # type: ignore[union-attr]
                self._ahead.begin(stream.buf, lead, self.batch_bytes, stream.eof)
            if events is not None:  # decoded while cutting: no need to copy the bytes again
                self._record(sink, events, offset, end - start, final=False)
            else:
                self._emit(sink, piece, offset, final=False)
            if progress is not None:
                progress(self.source.consumed, self.source.size, self.n_events)

    def _all_but_last(self, sink: EventSink, buf: bytes | memoryview, start: int,
                      base: int) -> int:
        """The last batch's events but its last, read as a batch of their own where they
        decode as one (natively where the native reader takes them); where the rest begins
        (`start` if they were not). The array's end and what follows are left to the Python
        path's lenient reading, which would otherwise read the whole last batch: up to a batch
        of events, and all of a file under a batch. The last few boundaries are tried, last
        first: one may lie past the array's end (in what follows it) or inside a string."""
        found = list(BOUNDARY.finditer(buf, max(start, len(buf) - LAST_EVENT_WINDOW)))
        for last in found[::-1][:_MAX_EXTENSIONS]:
            end = last.start() + 1
            if end <= start:
                break
            events = self._proven(buf, start, end)  # (natively, or the Python path's)
            if events is not None:
                self._record(sink, events, base + start, end - start, final=False)
                return last.end() - 1
        return start

    def count_unclosed(self, closed: bool, end: int, cut_before: int = 0) -> None:
        """A file of the object form whose event array never closed (`closed` False), cut
        between two events so that no event was cut in half: one truncation, what followed
        the last event lost. (The array form may end unclosed: catapult reads it so, as
        crashed writers leave it.)"""
        if (self.metadata.get("format") == "object" and not closed
                and self.diagnostics.count("truncated") == cut_before):
            self.diagnostics.add("truncated", 1, end,
                                 "the file ends before its event array closes")

    def _skip_damage(self, sink: EventSink, stream: _Stream, start: int,
                     progress: Callable[[int, int, int], None] | None,
                     cancelled: Callable[[], bool] | None) -> None:
        """Move past ENTRY_LIMIT bytes at `start` that hold no provable boundary.

        The stretch up to the first candidate boundary is decoded leniently (what it holds is
        counted); with no candidate at all it is one oversized entry, dropped up to the next
        candidate while reading on in bounded memory.
        """
        m = BOUNDARY.search(stream.buf, start + 1)
        if m is not None:
            end = m.start() + 1
            self._emit(sink, bytes(stream.buf[start:end]), stream.base + start, final=False)
            stream.seek(m.end() - 1)
            return
        sample = bytes(stream.buf[start: start + 60]).decode("utf-8", "replace")
        self.diagnostics.add("oversized", 1, stream.base + start, sample)
        while not stream.eof:
            if cancelled is not None and cancelled():
                raise Cancelled("Loading was cancelled.")
            if progress is not None:
                progress(self.source.consumed, self.source.size, self.n_events)
            # a boundary may span two chunks
            stream.seek(max(stream.pos, len(stream.buf) - 256))
            stream.fill(len(stream.buf) - stream.pos + 1)
            m = BOUNDARY.search(stream.buf, stream.pos)
            if m is not None:
                stream.seek(m.end() - 1)
                return
        stream.seek(len(stream.buf))

    def _cut(self, buf: bytes, start: int, eof: bool):
        """Where the batch beginning at `start` ends: ``(end, next start, events or None)``.

        At the first ``},{`` past the batch size that proves to be between two events, or
        at the buffer's last (see first_end) if that proves. None when `buf` holds no
        boundary yet, or its last does not prove (then more is read and the batch is cut as
        any other); `CLOSED` when the event array ends inside the batch.
        """
        first, last = first_end(buf, start, self.batch_bytes, eof)
        if last:
            events = None if first is None else self._proven(buf, start, first.start() + 1)
            return None if events is None else (first.start() + 1, first.end() - 1, events)
        tries = 0
        view = memoryview(buf)
        for m in BOUNDARY.finditer(buf, start + self.batch_bytes - 1):
            events = self._proven(buf, start, m.start() + 1)
            if events is not None:
                return m.start() + 1, m.end() - 1, events
            try:
                DECODER.decode(b"".join((b"[", view[start: m.start() + 1])))
            except msgspec.DecodeError as exc:
                if TRAILING.search(str(exc).encode()):
                    return CLOSED
            except (msgspec.ValidationError, UnicodeDecodeError, RecursionError):
                pass
            tries += 1
            if tries > _MAX_EXTENSIONS:
                # These boundaries lie inside strings or nested args (JSON text in a string,
                # a list of objects), or the batch holds invalid JSON (NaN, a bad byte). A
                # cut at an unproven boundary could fall inside an event and lose it: find
                # one between two entries by following strings and brackets instead.
                return entry_boundary(buf, start, start + self.batch_bytes - 1)
        return None

    def _proven(self, buf: bytes, start: int, end: int) -> native.Columns | list | None:
        """The events of buf[start:end], if it holds whole events only: read by the native
        reader (or ahead), or else decoded by the Python path's fast decoding; None if not."""
        columns = self._ahead.take(buf, start, end) if self._ahead else False
        if columns is False:
            columns = native.read_batch(buf, start, end)
        if columns is not None:
            return columns
        return decode_fast(b"".join((b"[", memoryview(buf)[start:end], b"]")))

    def _emit(self, sink: EventSink, piece: bytes, offset: int, final: bool) -> None:
        columns = None if final else native.read_batch(piece, 0, len(piece))
        if columns is not None:
            self._record(sink, columns, offset, len(piece), final)
            return
        result = decode_whole(piece, final)
        if result is None and len(piece) <= SLOW_PART:
            result = decode_slow(piece, final)
        if result is not None:
            self._take(sink, result, offset, len(piece), final)
            return
        # A large stretch to read value by value: a part at a time, each its own batch, so
        # that memory stays bounded however many values it holds.
        lo = 0
        while lo < len(piece):
            m = BOUNDARY.search(piece, lo + SLOW_PART)
            hi = m.start() + 1 if m is not None else len(piece)
            last = final and m is None
            self._take(sink, decode_piece(piece[lo:hi], last), offset + lo, hi - lo, last)
            lo = m.end() - 1 if m is not None else hi

    def _take(self, sink: EventSink, result: Piece, offset: int, size: int,
              final: bool) -> None:
        for kind, (count, rel, detail) in result.problems.items():
            self.diagnostics.add(kind, count, offset + rel, detail)
        if final and result.closed:
            self.closed = True
        if final and result.trailer is not None:
            self._read_trailer(result.trailer, offset)
        self._record(sink, result.events, offset, size, final)

    def _record(self, sink: EventSink, events: list[Event] | native.Columns, offset: int,
                size: int, final: bool) -> None:
        self.batches.append(BatchRecord(offset, offset + size, self.n_events, final))
        if events:
            sink(events, self.n_events, offset)
        self.n_events += len(events)

    def find_split(self, near: int, events_start: int) -> int | None:
        """A byte offset near `near` where an event begins, proven by decoding from it."""
        window = 4 * self.batch_bytes + (1 << 16)
        data = self.source.read_range(near, near + window)
        for m in BOUNDARY.finditer(data):
            at = m.end() - 1
            nxt = BOUNDARY.search(data, at + self.batch_bytes // 4)
            if nxt is None:
                return None
            if near + at > events_start and decode_fast(
                    b"[" + data[at: nxt.start() + 1] + b"]") is not None:
                return near + at
        return None

    def _find_events(self, chunks: Iterator[Chunk]) -> tuple[bytes, int]:
        """Skip to the first byte inside the event array; read the object form's header."""
        head = find_events(chunks, self.source)
        self.metadata["format"] = head.form
        if head.form == "object":
            self._read_header(head.header)
        return head.rest, head.offset

    def _read_header(self, header: bytes) -> None:
        text = header.rstrip(WS).rstrip(b",")
        try:
            meta = orjson.loads(text + b"}") if text.strip() != b"{" else {}
        except orjson.JSONDecodeError:
            self.diagnostics.add("bad_tail", 1, 0, "the keys before traceEvents are not valid JSON")
            return
        if isinstance(meta, dict):
            self.metadata.update(meta)

    def _read_trailer(self, trailer: bytes, offset: int) -> None:
        rest = trailer[1:].strip(WS)  # after the closing `]`
        if not rest or rest == b"}":
            return
        if rest.startswith(b","):
            try:
                extra = orjson.loads(b"{" + rest[1:])
            except orjson.JSONDecodeError:
                try:
                    extra = LENIENT.decode("{" + rest[1:].decode("utf-8", "replace"))
                except (ValueError, RecursionError):
                    sample = rest[:60].decode("utf-8", "replace")
                    self.diagnostics.add("bad_tail", 1, offset, sample)
                    return
            if isinstance(extra, dict):
                for key, value in extra.items():
                    self.metadata.setdefault(key, value)
            return
        if self.metadata.get("format") == "array":
            self.diagnostics.add("bad_tail", 1, offset, rest[:60].decode("utf-8", "replace"))


KEPT_METADATA = ("displayTimeUnit", "baseTimeNanoseconds", "schemaVersion", "traceName",
                  "distributedInfo", "span_indx", "trace_id", "deviceProperties")


def index_metadata(reader: ChromeJsonReader, source: ByteSource) -> dict[str, Any]:
    """What the index keeps of a file read by `reader`: its form, the trace's own metadata
    named in KEPT_METADATA, and the file (path, size, compressed)."""
    metadata: dict[str, Any] = {k: reader.metadata[k] for k in KEPT_METADATA
                                if k in reader.metadata}
    metadata["format"] = reader.metadata.get("format")
    metadata["sources"] = [{"path": source.identity.path, "size": source.size,
                            "compressed": source.compressed}]
    return metadata


def batch_table(batches: list[BatchRecord]) -> dict[str, np.ndarray]:
    """The index's table of batches (to read an event's `args` again), as columns."""
    return {
        "file": np.zeros(len(batches), np.int32),
        "start": np.array([r.start for r in batches], np.int64),
        "end": np.array([r.end for r in batches], np.int64),
        "first_ordinal": np.array([r.first_ordinal for r in batches], np.int64),
        "final": np.array([r.final for r in batches], np.bool_),
    }
