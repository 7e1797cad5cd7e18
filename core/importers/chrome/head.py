"""The head of a Chrome JSON trace: where its event array begins, and the keys before it.

Apart from the reader so that `proftui PATH` can say that a file is no trace, before the app
opens, without loading the parser (see :func:`proftui.core.load.loader.check_openable`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proftui.core.model.errors import NotATraceError

if TYPE_CHECKING:
    from proftui.core.source.streams import ByteSource, Chunk

WS = b" \t\r\n"
BOM = b"\xef\xbb\xbf"
HEADER_LIMIT = 16 << 20  # what precedes or follows the event array

_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')


@dataclass
class Head:
    """The start of the event array: `rest`, the bytes read past its ``[``, begin at byte
    `offset` of the file; `form` is "array" (the file is the array) or "object" (with the
    keys before traceEvents in `header`, the object's text from its ``{``)."""

    rest: bytes
    offset: int
    form: str
    header: bytes = b""


def find_events(chunks: Iterator[Chunk], source: ByteSource) -> Head:
    """Read `chunks` (of `source`) up to the first byte inside the event array. Raises
    :class:`NotATraceError` when they show it is no Chrome trace: empty or unreadable, not
    JSON, no traceEvents array in the first HEADER_LIMIT bytes."""
    name = source.path
    buf, blanks = b"", 0
    for data in chunks:
        buf += data
        if not buf.strip(WS):  # leading blanks: dropped as they come (bounded memory)
            blanks += len(buf)
            buf = b""
        elif len(buf) > 3:
            break
    skipped = len(buf) - len(buf.lstrip(WS))
    if buf.startswith(BOM, skipped):
        skipped += len(BOM)
        skipped += len(buf[skipped:]) - len(buf[skipped:].lstrip(WS))
    head = buf[skipped:]
    if not head:
        if source.error:
            raise NotATraceError(f"{name} cannot be read: {source.error}.")
        raise NotATraceError(f"{name} is empty.")
    if head[:1] == b"[":
        return Head(buf[skipped + 1:], blanks + skipped + 1, "array")
    if head[:1] != b"{":
        raise NotATraceError(f"{name} is not a JSON trace (it does not start with [ or {{).")
    searched = 0
    while True:
        m = _EVENTS_KEY.search(buf, max(0, searched - 64))
        if m:
            return Head(buf[m.end():], blanks + m.end(), "object", buf[skipped: m.start()])
        searched = len(buf)
        data = next(chunks, None)
        if data is None or len(buf) > HEADER_LIMIT:
            break
        buf += data
    raise NotATraceError(f"{name} is JSON but not a Chrome trace (no traceEvents array).")
