"""The builder's tables while events are added: per-batch numpy arrays of each column,
concatenated once at the end; counter samples may also come one at a time."""

from __future__ import annotations

from typing import Any

import numpy as np

from proftui.core.runtime.halves import LEAST, at_once


class Chunks:
    """Per-batch numpy arrays of one table, concatenated once at the end."""

    def __init__(self, **dtypes: Any) -> None:
        self.dtypes = dtypes
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in dtypes}

    def append(self, keep: np.ndarray | None = None, **cols: Any) -> None:
        """Add one batch of rows; with `keep`, only the rows where it is True."""
        if keep is not None and keep.all():
            keep = None
        for key, dtype in self.dtypes.items():
            col = np.asarray(cols[key], dtype=dtype)
            self.parts[key].append(col if keep is None else col[keep])

    def concat(self, threads: int = 1) -> dict[str, np.ndarray]:
        """One array per column; the parts are released (the table is empty afterwards).
        With `threads` 2, a column's two halves of parts are copied at once."""
        self.flush()
        out = {}
        for key, parts in self.parts.items():
            out[key] = _joined(parts, self.dtypes[key], threads)
            parts.clear()
        return out

    def flush(self) -> None:
        """(Rows added one at a time: see Samples.)"""


def _joined(parts: list[np.ndarray], dtype: Any, threads: int) -> np.ndarray:
    """np.concatenate(parts); with `threads` 2, the parts up to the middle row and those
    after it copied at once (the fresh pages written, and their faults taken, on two cores)."""
    if not parts:
        return np.zeros(0, dtype)
    ends = np.cumsum([len(p) for p in parts])
    if (threads < 2 or len(parts) < 2 or ends[-1] < LEAST
            or any(p.dtype != parts[0].dtype for p in parts)):  # (as concatenate would cast)
        return np.concatenate(parts)
    out = np.empty(int(ends[-1]), parts[0].dtype)
    cut = int(np.searchsorted(ends, ends[-1] // 2)) + 1  # parts[:cut], then the rest
    middle = int(ends[cut - 1])

    def copy(which: list[np.ndarray], into: np.ndarray) -> None:
        if which:
            np.concatenate(which, out=into)

    at_once(lambda: copy(parts[:cut], out[:middle]), lambda: copy(parts[cut:], out[middle:]),
            threads)
    return out


class Samples(Chunks):
    """Counter samples: (series, ts, value, ref) rows, added as columns or one at a time
    (kept in a list until a column is added or the table is read: the order stays the order
    they were added in)."""

    ROWS = 1 << 16

    def __init__(self) -> None:
        super().__init__(series=np.int32, ts=np.int64, value=np.float64, ref=np.int64)
        self.rows: list[tuple[int, int, float, int]] = []

    def add(self, series: int, ts: int, value: float, ref: int) -> None:
        self.rows.append((series, ts, value, ref))
        if len(self.rows) >= self.ROWS:
            self.flush()

    def append(self, keep: np.ndarray | None = None, **cols: Any) -> None:
        self.flush()
        super().append(keep, **cols)

    def flush(self) -> None:
        if self.rows:
            rows, self.rows = self.rows, []
            super().append(**dict(zip(("series", "ts", "value", "ref"), zip(*rows))))
