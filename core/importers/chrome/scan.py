"""Where one event of a Chrome trace's array ends and the next begins, when a cut at
``}`` ``,`` ``{`` fell inside a string: a vectorised scan of strings and brackets."""

from __future__ import annotations

import re

import numpy as np

BOUNDARY = re.compile(rb"\}\s*,\s*\{")
CLOSED = "closed"

# How each byte changes the nesting depth (outside strings).
_DEPTH_STEP = np.zeros(256, np.int8)


_DEPTH_STEP[list(b"{[")] = 1


_DEPTH_STEP[list(b"}]")] = -1


_QUOTE, _BACKSLASH, _OBJECT_END = (ord(c) for c in '"\\}')


def last_boundary(buf: bytes, lo: int, hi: int) -> re.Match | None:
    """The last ``}`` ``,`` ``{`` wholly within buf[lo:hi], or None: looked for in the last
    4 kB first, then in windows 16 times larger (an event is rarely more than a few kB)."""
    window = 1 << 12
    while True:
        at = max(lo, hi - window)
        last = None
        for last in BOUNDARY.finditer(buf, at, hi):
            pass
        if last is not None or at == lo:
            return last
        window *= 16


def entry_boundary(buf: bytes, start: int, after: int,
                    block: int = 1 << 20) -> tuple[int, int, None] | str | None:
    """The first ``}`` ``,`` ``{`` between two entries of the event array at or after `after`,
    found by following strings and brackets from `start` (the first byte of an entry).

    Returns what :meth:`ChromeJsonReader._cut` does: ``(end, next start, None)``, `CLOSED`
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
            boundary = BOUNDARY.match(buf, lo + end)
            if boundary is not None:
                return boundary.start() + 1, boundary.end() - 1, None
        if len(below):
            return CLOSED
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
