"""The builder's tables while events are added: per-batch numpy arrays of each column,
concatenated once at the end; counter samples may also come one at a time."""

from __future__ import annotations

from typing import Any

import numpy as np


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

    def concat(self) -> dict[str, np.ndarray]:
        """One array per column; the parts are released (the table is empty afterwards)."""
        self.flush()
        out = {}
        for key, parts in self.parts.items():
            out[key] = np.concatenate(parts) if parts else np.zeros(0, self.dtypes[key])
            parts.clear()
        return out

    def flush(self) -> None:
        """(Rows added one at a time: see Samples.)"""


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
