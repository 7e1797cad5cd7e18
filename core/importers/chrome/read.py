"""Chrome Trace Event Format JSON, read in ~1 MB batches in bounded memory.

The event array is cut at ``}`` ``,`` ``{`` boundaries without a structural scan: a batch is
decoded as ``[`` + piece + ``]`` by a typed decoder that skips ``args``; a cut that fell inside
a string cannot decode, so a successful decode proves the cut. When a few candidate cuts in a
row do not decode, a (vectorised) scan of strings and brackets finds one between two events.
Batches that do not decode (invalid JSON, NaN, a truncated tail) are re-read event by event
with a lenient decoder, and what cannot be read is counted. Each batch's byte range is
recorded so that the ``args`` of one event can be read again later (see :func:`decode_piece`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np
import orjson

from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.errors import Cancelled, NotATraceError
from proftui.core.source.streams import ByteSource

BATCH_BYTES = 1 << 20
_MAX_EXTENSIONS = 4
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_TRAILING = re.compile(rb"trailing characters")
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_HEADER_LIMIT = 16 << 20  # what precedes or follows the event array
_WS = b" \t\r\n"
_LEAD = re.compile(rb"[ \t\r\n,]*")  # always matches (possibly empty)
_SKIP = re.compile(r"[ \t\r\n,]*")
_AFTER_VALUE = re.compile(r"[ \t\r\n]*(?:[,\]]|$)")
_BOUNDARY_TEXT = re.compile(r"\}\s*,\s*\{")
BOM = b"\xef\xbb\xbf"
_CLOSED = "closed"
# An entry larger than this is damage: it is skipped so that memory stays bounded.
ENTRY_LIMIT = 32 << 20


class Event(msgspec.Struct, gc=False):
    """The fields of a trace event the index needs; `args` stays raw JSON, unparsed."""

    ph: Any = None
    name: Any = None
    cat: Any = None
    ts: Any = None
    # Decoded as a float (fast); a duration with digits below the ns is read again as its
    # text (see _exact_durations), as `ts` always is; the lenient path keeps the text.
    # Absent: NaN (no duration either way), so that a batch's durations convert to floats in
    # one go; an explicit null stays None.
    dur: float | None = math.nan
    pid: Any = None
    tid: Any = None
    id: Any = None
    id2: Any = None
    scope: Any = None
    bp: Any = None
    s: Any = None
    cname: Any = None
    bind_id: Any = None
    flow_in: Any = None
    flow_out: Any = None
    args: msgspec.Raw = msgspec.Raw(b"null")  # or a dict, from the lenient path


_FIELDS = Event.__struct_fields__
# msgspec raises UnicodeDecodeError for invalid UTF-8 inside strings, RecursionError for
# values nested about a thousand levels deep.
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError,
                  RecursionError)
# Float literals arrive as their text so that times convert to ns exactly.
_decoder = msgspec.json.Decoder(list[Event], float_hook=str, strict=False)
_lenient = json.JSONDecoder(parse_float=str, parse_constant=lambda _: None)
_lenient_numbers = json.JSONDecoder(parse_constant=lambda _: None)


def event_args(ev: Event) -> Any:
    """The decoded `args` of an event (a dict, or None)."""
    args = ev.args
    if isinstance(args, msgspec.Raw):
        try:
            return msgspec.json.decode(args)
        except _DECODE_ERRORS:  # NaN, invalid UTF-8: the lenient decoder takes them
            try:
                return _lenient_numbers.decode(bytes(args).decode("utf-8", "replace"))
            except (ValueError, RecursionError):
                return None
    return args


@dataclass
class Piece:
    """The events decoded from one batch of bytes, and what went wrong in it."""

    events: list[Event]
    trailer: bytes | None = None  # bytes after the closing `]` (object form)
    # kind -> [count, offset of the first in the piece, its text]; bounded however bad the piece
    problems: dict[str, list] = field(default_factory=dict)
    closed: bool = False

    def problem(self, kind: str, rel: int, detail: str) -> None:
        seen = self.problems.get(kind)
        if seen is None:
            self.problems[kind] = [1, rel, detail]
        else:
            seen[0] += 1


def _as_event(obj: Any) -> Event | None:
    if not isinstance(obj, dict):
        return None
    fields = {k: obj[k] for k in _FIELDS if k in obj}
    if "dur" in fields:
        fields["dur"] = _duration_value(fields["dur"])
    return Event(**fields)


def _duration_value(value: Any) -> Any:
    """A duration as the fast path leaves it for conversion: a number or decimal text (float
    literals arrive here as their text, so digits below the ns stay exact), None if absent,
    NaN if unusable."""
    if value is None or (isinstance(value, (int, float, str)) and not isinstance(value, bool)):
        return value
    return math.nan


# How each byte changes the nesting depth (outside strings).
_DEPTH_STEP = np.zeros(256, np.int8)
_DEPTH_STEP[list(b"{[")] = 1
_DEPTH_STEP[list(b"}]")] = -1
_QUOTE, _BACKSLASH, _OBJECT_END = (ord(c) for c in '"\\}')


def _entry_boundary(buf: bytes, start: int, after: int,
                    block: int = 1 << 20) -> tuple[int, int, None] | str | None:
    """The first ``}`` ``,`` ``{`` between two entries of the event array at or after `after`,
    found by following strings and brackets from `start` (the first byte of an entry).

    Returns what :meth:`ChromeJsonReader._cut` does: ``(end, next start, None)``, `_CLOSED`
    when the array ends first, or None when `buf` ends first. Vectorised, a block at a time
    (memory stays a few times `block` however large `buf` is): a Python loop over the tokens
    of a batch would cost ten times its decoding.
    """
    in_string, depth, run = 0, 0, 0  # carried from block to block; run: trailing backslashes
    for lo in range(start, len(buf), block):
        data = np.frombuffer(buf, np.uint8, min(block, len(buf) - lo), lo)
        quotes = np.flatnonzero(data == _QUOTE)
        slashes = np.flatnonzero(data == _BACKSLASH)
        if len(quotes) and (len(slashes) or run):
            quotes = quotes[~_escaped(quotes, slashes, run)]
        if len(slashes) == len(data):
            run += len(data)
        else:
            run = _trailing_run(slashes, len(data))
        brackets = np.flatnonzero(_DEPTH_STEP[data] != 0)
        # outside strings: an even number of quotes before, counting the blocks before
        brackets = brackets[(np.searchsorted(quotes, brackets) + in_string) % 2 == 0]
        in_string = (in_string + len(quotes)) % 2
        depths = depth + np.cumsum(_DEPTH_STEP[data[brackets]], dtype=np.int64)
        below = np.flatnonzero(depths < 0)  # the array's closing bracket
        limit = int(below[0]) if len(below) else len(brackets)
        ends = brackets[:limit][(depths[:limit] == 0) & (data[brackets[:limit]] == _OBJECT_END)]
        for end in ends[ends >= after - lo].tolist():
            boundary = _BOUNDARY.match(buf, lo + end)
            if boundary is not None:
                return boundary.start() + 1, boundary.end() - 1, None
        if len(below):
            return _CLOSED
        if len(depths):
            depth = int(depths[-1])
    return None


def _escaped(quotes: np.ndarray, slashes: np.ndarray, run: int) -> np.ndarray:
    """Which quotes of a block follow an odd run of backslashes (`run` of them end the block
    before); positions are the block's."""
    if not len(slashes):
        return (quotes == 0) & (run % 2 == 1)
    new_run = np.ones(len(slashes), bool)
    new_run[1:] = slashes[1:] != slashes[:-1] + 1
    first = np.maximum.accumulate(np.where(new_run, np.arange(len(slashes)), 0))
    i = np.searchsorted(slashes, quotes - 1)
    i_ok = np.minimum(i, len(slashes) - 1)
    after_slash = (i < len(slashes)) & (slashes[i_ok] == quotes - 1)
    length = i_ok - first[i_ok] + 1 + np.where(slashes[first[i_ok]] == 0, run, 0)
    return np.where(after_slash, length % 2 == 1, (quotes == 0) & (run % 2 == 1))


def _trailing_run(slashes: np.ndarray, size: int) -> int:
    """How many backslashes end a block of `size` bytes (not all of them backslashes)."""
    n = 0
    while n < len(slashes) and slashes[len(slashes) - 1 - n] == size - 1 - n:
        n += 1
    return n


class EventBatch(list):
    """Decoded events with `dur_us`: their durations as float64 µs (NaN where absent), when
    every one converts exactly from its float (no digits below the ns), else None."""

    dur_us: np.ndarray | None = None


class _DurationText(msgspec.Struct, gc=False):
    dur: Any = None


_duration_texts = msgspec.json.Decoder(list[_DurationText], float_hook=str, strict=False)


def _decode_fast(buf: bytes) -> list[Event] | None:
    try:
        return _exact_durations(buf, _decoder.decode(buf))
    except _DECODE_ERRORS:
        return None


def _exact_durations(buf: bytes, events: list[Event]) -> list[Event]:
    """Durations whose µs text has digits below the ns ("0.0005") as that text, so that they
    convert exactly: a float holds three decimals to well within the ns, not more."""
    durations = [e.dur for e in events]
    try:
        us = np.array(durations, np.float64)
    except TypeError:  # None (no duration) among them
        us = np.array([math.nan if d is None else d for d in durations], np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf: an overflowing duration, refused later
        ns = us * 1000.0
        finer = np.flatnonzero(np.abs(ns - np.rint(ns)) > 1e-6)  # NaN compares False
    if len(finer):
        try:
            texts = _duration_texts.decode(buf)
        except _DECODE_ERRORS:
            return events
        for i in finer.tolist():
            events[i].dur = texts[i].dur
        return events
    batch = EventBatch(events)
    batch.dur_us = us  # spares the index a second conversion
    return batch


def decode_piece(piece: bytes, final: bool) -> Piece:
    """Decode one batch (bytes starting at an event's ``{``) into events.

    A non-final piece ends at an event's closing ``}``. The final piece runs to the end of the
    file and may end with ``]``, a trailer, a trailing comma, or mid-event. The result depends
    only on the bytes and `final`, so re-decoding a recorded batch gives the same events.
    """
    return _decode_whole(piece, final) or _decode_slow(piece, final)


def _decode_whole(piece: bytes, final: bool) -> Piece | None:
    """`decode_piece` when the piece decodes in one go (valid JSON), else None."""
    if not final:
        events = _decode_fast(b"[" + piece + b"]")
        return Piece(events) if events is not None else None
    stripped = piece.rstrip(_WS)
    if not stripped:
        return Piece([], closed=False)
    text = b"[" + stripped
    del stripped
    try:
        return Piece(_exact_durations(text, _decoder.decode(text)), closed=True)
    except (msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        pass
    except msgspec.DecodeError as exc:
        if _TRAILING.search(str(exc).encode()):
            array = _closed_array(text)
            events = _decode_fast(array) if array is not None else None
            if array is not None and events is not None:
                return Piece(events, trailer=text[len(array) - 1:], closed=True)
    body = text.rstrip(b",").rstrip(_WS) if text.endswith(b",") else text
    del text
    events = _decode_fast(body + b"]")
    return Piece(events) if events is not None else None


def _closed_array(text: bytes) -> bytes | None:
    """The leading JSON array of `text` (which has trailing characters after it)."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        array = text[: exc.pos].rstrip(_WS)
        return array if array.endswith(b"]") else None
    return None


def _decode_slow(piece: bytes, final: bool) -> Piece:
    """Value-by-value decoding of a piece that did not decode whole; problems are counted.

    A lenient decoder (NaN, invalid UTF-8 and duplicate keys accepted) reads one value after
    another; after a value it cannot read, it resumes at the next event boundary. Values
    nested deeper than `_DEPTH_LIMIT` keep their shallow part.
    """
    text = piece.decode("utf-8", "replace")
    out = Piece([])
    pos, size = 0, len(text)
    # Byte offsets of problems, counted forward from the last one (linear however many).
    mark, mark_bytes = 0, 0
    unending: int | None = None  # where a deep value was found never to end

    def at(p: int) -> int:
        nonlocal mark, mark_bytes
        mark_bytes += len(text[mark:p].encode())
        mark = p
        return mark_bytes

    while True:
        pos = _SKIP.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= size:
            break
        if text[pos] == "]" and final:
            out.closed = True
            out.trailer = text[pos:].encode()
            break
        src, begin = text, pos
        try:
            try:
                obj, end = _lenient.raw_decode(text, pos)
            except RecursionError:
                # a value that never ends makes any later one unending too: scan once
                shallow = _shallow(text, pos) if unending is None else None
                if shallow is None:
                    unending = pos
                    raise ValueError("unterminated") from None
                src, begin = shallow[0], 0
                obj, end = _lenient.raw_decode(src)[0], shallow[1]
                out.problem("too_deep", at(pos), text[pos: pos + 60])
        except ValueError:
            nxt = _BOUNDARY_TEXT.search(text, pos + 1)
            kind = "truncated" if final and nxt is None else "bad_json"
            out.problem(kind, at(pos), text[pos: pos + 60])
            if nxt is None:
                break
            pos = nxt.end() - 1
            continue
        if not _AFTER_VALUE.match(text, end):  # values not separated by a comma
            out.problem("bad_json", at(end), text[end: end + 60])
            nxt = _BOUNDARY_TEXT.search(text, end)
            end = nxt.end() - 1 if nxt is not None else size
        ev = _as_event(obj)
        if ev is None:
            out.problem("not_an_object", at(pos), text[pos: end][:60])
        else:
            if isinstance(obj.get("args"), dict):
                # times were read as text; args keep JSON numbers as numbers
                ev.args = _lenient_numbers.raw_decode(src, begin)[0].get("args")
            out.events.append(ev)
        pos = end
    return out


_DEPTH_LIMIT = 100
_SLOW_PART = 1 << 20
# A string (possibly unterminated) or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')


def _shallow(text: str, pos: int) -> tuple[str, int] | None:
    """The value at `pos` with what is nested deeper than `_DEPTH_LIMIT` replaced by null,
    and where the value ends in `text`; None if it does not end."""
    out: list[str] = []
    depth, last = 0, pos
    for m in _TOKEN.finditer(text, pos):
        c = m.group()[0]
        if c == '"':
            continue
        if c in "[{":
            depth += 1
            if depth == _DEPTH_LIMIT + 1:
                out.append(text[last: m.start()])
                out.append("null")
        else:
            if depth == _DEPTH_LIMIT + 1:
                last = m.end()
            depth -= 1
            if depth == 0:
                out.append(text[last: m.end()])
                return "".join(out), m.end()
    return None


class _Stream:
    """The unread bytes of the event array: `buf`, which starts at byte `base` of the file."""

    def __init__(self, chunks: Iterator[bytes], buf: bytes, base: int) -> None:
        self.chunks = chunks
        self.buf = buf
        self.base = base
        self.eof = False

    def fill(self, size: int) -> None:
        """Read on until `buf` holds at least `size` bytes or the file ends."""
        parts, have = [self.buf], len(self.buf)
        while have < size and not self.eof:
            data = next(self.chunks, None)
            if data is None:
                self.eof = True
            else:
                parts.append(data)
                have += len(data)
        if len(parts) > 1:
            self.buf = b"".join(parts)

    def drop(self, n: int) -> None:
        """Forget the first `n` bytes of `buf`."""
        self.buf = self.buf[n:]
        self.base += n


@dataclass
class BatchRecord:
    """Where a batch lies in the (decompressed) file and the ordinal of its first event."""

    start: int
    end: int
    first_ordinal: int
    final: bool


EventSink = Callable[[list[Event], int, int], None]  # (events, first ordinal, byte offset)


class ChromeJsonReader:
    """Streams one Chrome-trace JSON file into an event sink, batch by batch."""

    def __init__(self, source: ByteSource, diagnostics: Diagnostics,
                 batch_bytes: int = BATCH_BYTES) -> None:
        self.source = source
        self.diagnostics = diagnostics
        self.batch_bytes = max(1, batch_bytes)
        self.metadata: dict[str, Any] = {}
        self.batches: list[BatchRecord] = []
        self.n_events = 0
        self.closed = False  # the event array's closing bracket was seen

    def check_head(self) -> None:
        """Raise :class:`NotATraceError` with the sentence :meth:`read` would give when the
        file's head shows it is no Chrome trace (empty or unreadable, not JSON, no
        traceEvents array), reading no further than the start of its events."""
        self._find_events(self.source.chunks(1 << 16))

    def read(self, sink: EventSink,
             progress: Callable[[int, int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None,
             region: tuple[int, int | None] | None = None) -> None:
        """Read the whole file, passing each batch of events to `sink`.

        With `region` (start, end), read only the events in that byte range of a plain file:
        `start` is the ``{`` of an event (or the file's start) and `end` just past an event's
        ``}`` (or None for the end of the file).
        """
        chunk = max(self.batch_bytes, 1 << 16)
        if region is None or region[0] == 0:
            chunks = self.source.chunks(chunk, 0, None if region is None else region[1])
            stream = _Stream(chunks, *self._find_events(chunks))
        else:
            stream = _Stream(self.source.chunks(chunk, region[0], region[1]), b"", region[0])
        while True:
            if cancelled is not None and cancelled():
                raise Cancelled("Loading was cancelled.")
            stream.fill(self.batch_bytes + 1)
            start = _LEAD.match(stream.buf).end()  # type: ignore[union-attr]
            if start == len(stream.buf) and not stream.eof:
                stream.drop(start)  # only blanks and commas so far (a padded file)
                continue
            cut = self._cut(stream.buf, start)
            if cut is None and not stream.eof:
                # No provable boundary yet: one event larger than a batch, or damage.
                if len(stream.buf) - start > ENTRY_LIMIT:
                    self._skip_damage(sink, stream, start, progress, cancelled)
                else:  # doubling keeps the rescans linear
                    stream.fill(min(2 * len(stream.buf), start + ENTRY_LIMIT + 1))
                continue
            if cut is None or cut == _CLOSED:
                # The rest is the last batch: the array's end and what follows it.
                stream.fill(_HEADER_LIMIT)
                self._emit(sink, stream.buf[start:], stream.base + start, final=True)
                break
            end, nxt, events = cut
            if events is not None:  # decoded while cutting: no need to copy the bytes again
                self._record(sink, events, stream.base + start, end - start, final=False)
            else:
                self._emit(sink, stream.buf[start:end], stream.base + start, final=False)
            stream.drop(nxt)
            if progress is not None:
                progress(self.source.consumed, self.source.size, self.n_events)
        if self.source.error:
            self.diagnostics.add("truncated", 1, self.source.consumed, self.source.error)
        if progress is not None:
            progress(self.source.consumed, self.source.size, self.n_events)

    def _skip_damage(self, sink: EventSink, stream: _Stream, start: int,
                     progress: Callable[[int, int, int], None] | None,
                     cancelled: Callable[[], bool] | None) -> None:
        """Move past ENTRY_LIMIT bytes at `start` that hold no provable boundary.

        The stretch up to the first candidate boundary is decoded leniently (what it holds is
        counted); with no candidate at all it is one oversized entry, dropped up to the next
        candidate while reading on in bounded memory.
        """
        m = _BOUNDARY.search(stream.buf, start + 1)
        if m is not None:
            end = m.start() + 1
            self._emit(sink, stream.buf[start:end], stream.base + start, final=False)
            stream.drop(m.end() - 1)
            return
        sample = stream.buf[start: start + 60].decode("utf-8", "replace")
        self.diagnostics.add("oversized", 1, stream.base + start, sample)
        while not stream.eof:
            if cancelled is not None and cancelled():
                raise Cancelled("Loading was cancelled.")
            if progress is not None:
                progress(self.source.consumed, self.source.size, self.n_events)
            stream.drop(max(0, len(stream.buf) - 256))  # a boundary may span two chunks
            stream.fill(len(stream.buf) + 1)
            m = _BOUNDARY.search(stream.buf)
            if m is not None:
                stream.drop(m.end() - 1)
                return
        stream.drop(len(stream.buf))

    def _cut(self, buf: bytes, start: int):
        """Where the batch beginning at `start` ends: ``(end, next start, events or None)``.

        None when `buf` holds no boundary past the batch size yet; `_CLOSED` when the event
        array ends inside the batch.
        """
        tries = 0
        view = memoryview(buf)
        for m in _BOUNDARY.finditer(buf, start + self.batch_bytes - 1):
            array = b"".join((b"[", view[start: m.start() + 1], b"]"))
            events = _decode_fast(array)
            if events is not None:
                return m.start() + 1, m.end() - 1, events
            try:
                _decoder.decode(memoryview(array)[:-1])
            except msgspec.DecodeError as exc:
                if _TRAILING.search(str(exc).encode()):
                    return _CLOSED
            except (msgspec.ValidationError, UnicodeDecodeError, RecursionError):
                pass
            tries += 1
            if tries > _MAX_EXTENSIONS:
                # These boundaries lie inside strings or nested args (JSON text in a string,
                # a list of objects), or the batch holds invalid JSON (NaN, a bad byte). A
                # cut at an unproven boundary could fall inside an event and lose it: find
                # one between two entries by following strings and brackets instead.
                return _entry_boundary(buf, start, start + self.batch_bytes - 1)
        return None

    def _emit(self, sink: EventSink, piece: bytes, offset: int, final: bool) -> None:
        result = _decode_whole(piece, final)
        if result is None and len(piece) <= _SLOW_PART:
            result = _decode_slow(piece, final)
        if result is not None:
            self._take(sink, result, offset, len(piece), final)
            return
        # A large stretch to read value by value: a part at a time, each its own batch, so
        # that memory stays bounded however many values it holds.
        lo = 0
        while lo < len(piece):
            m = _BOUNDARY.search(piece, lo + _SLOW_PART)
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

    def _record(self, sink: EventSink, events: list[Event], offset: int, size: int,
                final: bool) -> None:
        self.batches.append(BatchRecord(offset, offset + size, self.n_events, final))
        if events:
            sink(events, self.n_events, offset)
        self.n_events += len(events)

    def find_split(self, near: int, events_start: int) -> int | None:
        """A byte offset near `near` where an event begins, proven by decoding from it."""
        window = 4 * self.batch_bytes + (1 << 16)
        data = self.source.read_range(near, near + window)
        for m in _BOUNDARY.finditer(data):
            at = m.end() - 1
            nxt = _BOUNDARY.search(data, at + self.batch_bytes // 4)
            if nxt is None:
                return None
            if near + at > events_start and _decode_fast(
                    b"[" + data[at: nxt.start() + 1] + b"]") is not None:
                return near + at
        return None

    def _find_events(self, chunks) -> tuple[bytes, int]:
        """Skip to the first byte inside the event array; read the object form's header."""
        buf, blanks = b"", 0
        for data in chunks:
            buf += data
            if not buf.strip(_WS):  # leading blanks: dropped as they come (bounded memory)
                blanks += len(buf)
                buf = b""
            elif len(buf) > 3:
                break
        skipped = len(buf) - len(buf.lstrip(_WS))
        if buf.startswith(BOM, skipped):
            skipped += len(BOM)
            skipped += len(buf[skipped:]) - len(buf[skipped:].lstrip(_WS))
        head = buf[skipped:]
        name = self.source.path
        if not head:
            if self.source.error:
                raise NotATraceError(f"{name} cannot be read: {self.source.error}.")
            raise NotATraceError(f"{name} is empty.")
        if head[:1] == b"[":
            self.metadata["format"] = "array"
            return buf[skipped + 1:], blanks + skipped + 1
        if head[:1] != b"{":
            raise NotATraceError(f"{name} is not a JSON trace (it does not start with [ or {{).")
        self.metadata["format"] = "object"
        searched = 0
        while True:
            m = _EVENTS_KEY.search(buf, max(0, searched - 64))
            if m:
                self._read_header(buf[skipped: m.start()])
                return buf[m.end():], blanks + m.end()
            searched = len(buf)
            data = next(chunks, None)
            if data is None or len(buf) > _HEADER_LIMIT:
                break
            buf += data
        raise NotATraceError(f"{name} is JSON but not a Chrome trace (no traceEvents array).")

    def _read_header(self, header: bytes) -> None:
        text = header.rstrip(_WS).rstrip(b",")
        try:
            meta = orjson.loads(text + b"}") if text.strip() != b"{" else {}
        except orjson.JSONDecodeError:
            self.diagnostics.add("bad_tail", 1, 0, "the keys before traceEvents are not valid JSON")
            return
        if isinstance(meta, dict):
            self.metadata.update(meta)

    def _read_trailer(self, trailer: bytes, offset: int) -> None:
        rest = trailer[1:].strip(_WS)  # after the closing `]`
        if not rest or rest == b"}":
            return
        if rest.startswith(b","):
            try:
                extra = orjson.loads(b"{" + rest[1:])
            except orjson.JSONDecodeError:
                try:
                    extra = _lenient.decode("{" + rest[1:].decode("utf-8", "replace"))
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
