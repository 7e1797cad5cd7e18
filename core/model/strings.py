"""Interned strings: every name, category and label is stored once and referred to by id."""

from __future__ import annotations

import json
import re

import numpy as np


class StringInterner(dict):
    """Maps a string to its id, adding unseen strings; id 0 is the empty string (and None).

    A dict subclass so that ``map(interner.__getitem__, names)`` interns a whole column at C speed.
    Hashable non-strings (numbers) are interned under their JSON text.
    """

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = [""]
        self[""] = 0
        self[None] = 0

    def __missing__(self, key: object) -> int:
        text = key if isinstance(key, str) else json_text(key)
        value = self[key] = len(self.texts)
        self.texts.append(text)
        return value

    def freeze(self) -> StringTable:
        """The table of all interned strings, ordered by id."""
        return StringTable.from_strings(self.texts)


def json_text(value: object) -> str:
    """A value of any JSON type as display text (strings as they are)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


class StringTable:
    """An immutable table of strings, stored as one UTF-8 blob plus offsets (cache-friendly)."""

    def __init__(self, blob: bytes | np.ndarray, offsets: np.ndarray) -> None:
        self._blob = blob if isinstance(blob, bytes) else memoryview(blob).cast("B")  # type: ignore[arg-type]
        self.offsets = offsets
        self._decoded: dict[int, str] = {}
        self._lookup: dict[str, int] | None = None

    @classmethod
    def from_strings(cls, strings: list[str]) -> StringTable:
        encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
        offsets = np.zeros(len(encoded) + 1, np.int64)
        if encoded:
            np.cumsum([len(b) for b in encoded], out=offsets[1:])
        table = cls(b"".join(encoded), offsets)
        table._decoded = dict(enumerate(strings))
        return table

    @property
    def blob(self) -> np.ndarray:
        return np.frombuffer(self._blob, np.uint8)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, sid: int) -> str:
        sid = int(sid)
        text = self._decoded.get(sid)
        if text is None:
            if not 0 <= sid < len(self):
                raise IndexError(sid)
            start, end = int(self.offsets[sid]), int(self.offsets[sid + 1])
            text = bytes(self._blob[start:end]).decode("utf-8", "surrogatepass")
            self._decoded[sid] = text
        return text

    def find(self, text: str) -> int:
        """The id of `text`, or -1 (one vectorised pass over the strings of its length)."""
        if self._lookup is None:
            self._lookup = {}
        sid = self._lookup.get(text)
        if sid is None:
            key = np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8)
            starts = self.offsets[:-1]
            same = np.flatnonzero(self.offsets[1:] - starts == len(key))
            blob = self.blob
            for k, byte in enumerate(key.tolist()):  # narrowed byte by byte
                same = same[blob[starts[same] + k] == byte]
            sid = int(same[0]) if len(same) else -1
            self._lookup[text] = sid
        return sid

    def ids_containing(self, needle: str) -> list[int]:
        """Ids of the strings that contain `needle`, found by one scan of the blob."""
        blob = bytes(self._blob)
        key = needle.encode("utf-8")
        hits, at = [], blob.find(key)
        while at >= 0:
            sid = int(np.searchsorted(self.offsets, at, side="right")) - 1
            hits.append(sid)
            at = blob.find(key, max(int(self.offsets[sid + 1]), at + 1))
        return hits

    def ids_searched(self, pattern: re.Pattern[bytes]) -> np.ndarray:
        """Ids of the strings where `pattern` matches in the blob (a match that runs on into
        the next string counts for the first: use it to narrow before an exact test)."""
        at = np.fromiter((m.start() for m in pattern.finditer(self._blob)), np.int64)
        return np.unique(np.searchsorted(self.offsets, at, side="right") - 1)

    def all(self) -> list[str]:
        return [self[i] for i in range(len(self))]
