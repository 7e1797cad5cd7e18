"""Decoding a batch of Chrome trace events: the typed decoder that skips `args` (a successful
decode proves the cut), exact durations, and the lenient path that reads a damaged batch event
by event and counts what it cannot read."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np
import orjson

from proftui.core.importers.chrome.head import WS

TRAILING = re.compile(rb"trailing characters")
SKIP = re.compile(r"[ \t\r\n,]*")
AFTER_VALUE = re.compile(r"[ \t\r\n]*(?:[,\]]|$)")
BOUNDARY_TEXT = re.compile(r"\}\s*,\s*\{")


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
DECODER = msgspec.json.Decoder(list[Event], float_hook=str, strict=False)


LENIENT = json.JSONDecoder(parse_float=str, parse_constant=lambda _: None)


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


class EventBatch(list):
    """Decoded events with `dur_us`: their durations as float64 µs (NaN where absent), when
    every one converts exactly from its float (no digits below the ns), else None."""

    dur_us: np.ndarray | None = None


class _DurationText(msgspec.Struct, gc=False):
    dur: Any = None


_duration_texts = msgspec.json.Decoder(list[_DurationText], float_hook=str, strict=False)


def decode_fast(buf: bytes) -> list[Event] | None:
    try:
        return _exact_durations(buf, DECODER.decode(buf))
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
    with np.errstate(over="ignore", invalid="ignore"):  # a duration beyond a double in ns
        # (inf, then inf - inf): refused later
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
    return decode_whole(piece, final) or decode_slow(piece, final)


def decode_whole(piece: bytes, final: bool) -> Piece | None:
    """`decode_piece` when the piece decodes in one go (valid JSON), else None."""
    if not final:
        events = decode_fast(b"[" + piece + b"]")
        return Piece(events) if events is not None else None
    stripped = piece.rstrip(WS)
    if not stripped:
        return Piece([], closed=False)
    text = b"[" + stripped
    del stripped
    try:
        return Piece(_exact_durations(text, DECODER.decode(text)), closed=True)
    except (msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        pass
    except msgspec.DecodeError as exc:
        if TRAILING.search(str(exc).encode()):
            array = _closed_array(text)
            events = decode_fast(array) if array is not None else None
            if array is not None and events is not None:
                return Piece(events, trailer=text[len(array) - 1:], closed=True)
    body = text.rstrip(b",").rstrip(WS) if text.endswith(b",") else text
    del text
    events = decode_fast(body + b"]")
    return Piece(events) if events is not None else None


def _closed_array(text: bytes) -> bytes | None:
    """The leading JSON array of `text` (which has trailing characters after it)."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        array = text[: exc.pos].rstrip(WS)
        return array if array.endswith(b"]") else None
    return None


def decode_slow(piece: bytes, final: bool) -> Piece:
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
        pos = SKIP.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= size:
            break
        if text[pos] == "]" and final:
            out.closed = True
            out.trailer = text[pos:].encode()
            break
        src, begin = text, pos
        try:
            try:
                obj, end = LENIENT.raw_decode(text, pos)
            except RecursionError:
                # a value that never ends makes any later one unending too: scan once
                shallow = shallow_value(text, pos) if unending is None else None
                if shallow is None:
                    unending = pos
                    raise ValueError("unterminated") from None
                src, begin = shallow[0], 0
                obj, end = LENIENT.raw_decode(src)[0], shallow[1]
                out.problem("too_deep", at(pos), text[pos: pos + 60])
        except ValueError:
            nxt = BOUNDARY_TEXT.search(text, pos + 1)
            kind = "truncated" if final and nxt is None else "bad_json"
            out.problem(kind, at(pos), text[pos: pos + 60])
            if nxt is None:
                break
            pos = nxt.end() - 1
            continue
        if not AFTER_VALUE.match(text, end):  # values not separated by a comma
            out.problem("bad_json", at(end), text[end: end + 60])
            nxt = BOUNDARY_TEXT.search(text, end)
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


SLOW_PART = 1 << 20


# A string (possibly unterminated) or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')


def shallow_value(text: str, pos: int) -> tuple[str, int] | None:
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
