"""Tensor shapes and dtypes as the profilers write them, parsed into one form: a list with
one entry per input (or output), each a tuple of dims, `None` where the entry is no tensor or
its shape is not given.

Ascend's tables write `"32,9216;4096,9216;4096"` (one `;`-separated entry per tensor, the dims
`,`-separated, the whole in literal double quotes; an empty entry for an absent input; `N/A`
for a task with none). Kineto's `Input Dims` is a JSON list: `[[32, 9216], [4096, 9216], []]`
(an empty list for a scalar or an absent tensor, a list of lists for a TensorList).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Shape = tuple[int, ...]
NOT_GIVEN = ("", "N/A", "NA", "-")


def _dims(text: str) -> Shape | None:
    parts = [p.strip() for p in text.split(",")]
    if not parts or parts == [""]:
        return None
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        return None


def ascend_shapes(text: object) -> list[Shape | None]:
    """`"32,9216;4096,9216;4096"` -> [(32, 9216), (4096, 9216), (4096,)]; an empty entry (or
    one that is not a list of integers) is None; no shapes at all gives []."""
    s = str(text).strip().strip('"').strip()
    if s in NOT_GIVEN:
        return []
    return [_dims(entry) for entry in s.split(";")]


def ascend_list(text: object) -> list[str]:
    """A `;`-separated list of an Ascend table (dtypes, formats): `FLOAT;DT_BF16` ->
    ['FLOAT', 'DT_BF16']; [] where the cell holds none."""
    s = str(text).strip().strip('"').strip()
    if s in NOT_GIVEN:
        return []
    return [part.strip() for part in s.split(";")]


def kineto_shapes(value: Any) -> list[Shape | None]:
    """Kineto's `Input Dims` -> one entry per input: a tuple of dims for a tensor, None for a
    scalar, an absent tensor or a TensorList (a list of lists)."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    out: list[Shape | None] = []
    for dims in value:
        ok = (isinstance(dims, Sequence) and not isinstance(dims, str) and len(dims) > 0
              and all(isinstance(d, int) and not isinstance(d, bool) for d in dims))
        out.append(tuple(dims) if ok else None)
    return out


def kineto_list(value: Any) -> list[str]:
    """Kineto's `Input type` (or `Concrete Inputs`) as a list of strings; [] otherwise."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [v if isinstance(v, str) else str(v) for v in value]
