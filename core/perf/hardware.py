"""The hardware's peaks: dense FLOP/s per dtype on the matrix and vector units, and memory
bandwidth, per device, from the data file peaks.csv (each row cites its source).

A profile names its device in Kineto's deviceProperties ("NVIDIA H100 80GB HBM3") or
Ascend's chip name ("Ascend910_9391"); each row's `match` is a regular expression searched
in that name, the first row that matches wins (so a specific row precedes a general one).
A user's file has the same columns; --peak-tflops / --peak-tbps override a row or stand in
for a device the table does not know.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from proftui.core.perf.dtypes import SIZES
from proftui.core.perf.work import Work

PEAKS_FILE = Path(__file__).with_name("peaks.csv")
MATRIX_DTYPES = ("fp64", "tf32", "fp32", "bf16", "fp16", "fp8", "int8")
VECTOR_DTYPES = ("fp64", "fp32", "bf16", "fp16")
COLUMNS = ("device", "match", *(f"matrix_{d}" for d in MATRIX_DTYPES),
           *(f"vector_{d}" for d in VECTOR_DTYPES), "bandwidth_tbps", "source")
TERA = 1e12


class PeaksError(ValueError):
    """A peaks file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Peaks:
    device: str                  # "NVIDIA H100 SXM5 80GB", "Ascend 910C (one die)"
    matrix: dict[str, float]     # canonical dtype -> dense FLOP/s on the matrix units
    vector: dict[str, float]     # canonical dtype -> FLOP/s on the vector units
    bandwidth: float             # device memory bytes/s (0: not known)
    source: str                  # where the figures come from
    match: str = field(default="", compare=False)  # the regular expression names match


def _figure(text: str, where: str, column: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise PeaksError(f"{where}: {column} is {text!r}, not a number") from None
    if not value > 0:
        raise PeaksError(f"{where}: {column} is {text}, not a positive number")
    return value


def _row(row: dict[str, str], where: str) -> Peaks:
    device = (row.get("device") or "").strip()
    pattern = (row.get("match") or "").strip()
    if not device:
        raise PeaksError(f"{where}: the device column is empty")
    try:
        re.compile(pattern or re.escape(device))
    except re.error as exc:
        raise PeaksError(f"{where}: match {pattern!r} is not a regular expression ({exc})") \
            from None
    units = {}
    for unit, dtypes in (("matrix", MATRIX_DTYPES), ("vector", VECTOR_DTYPES)):
        figures = {d: _figure(row.get(f"{unit}_{d}") or "", where, f"{unit}_{d}")
                   for d in dtypes}
        units[unit] = {d: v * TERA for d, v in figures.items() if v is not None}
    bandwidth = _figure(row.get("bandwidth_tbps") or "", where, "bandwidth_tbps")
    if not units["matrix"] and not units["vector"] and bandwidth is None:
        raise PeaksError(f"{where}: no peak figure for {device}")
    return Peaks(device, units["matrix"], units["vector"], (bandwidth or 0.0) * TERA,
                 (row.get("source") or "").strip(), pattern or re.escape(device))


def load_peaks(path: str | Path) -> list[Peaks]:
    """The rows of a peaks file (peaks.csv's columns; TFLOP/s and TB/s). A file that cannot
    be read raises PeaksError with one sentence naming the line."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in ("device", "bandwidth_tbps") if c not in (reader.fieldnames
                                                                            or ())]
            if missing:
                raise PeaksError(f"{path}, line 1: the header lacks {', '.join(missing)} "
                                 f"(the columns are {','.join(COLUMNS)})")
            unknown = [c for c in reader.fieldnames or () if c not in COLUMNS]
            if unknown:
                raise PeaksError(f"{path}, line 1: unknown column {unknown[0]!r} (the "
                                 f"columns are {','.join(COLUMNS)})")
            return [_row(row, f"{path}, line {reader.line_num}") for row in reader]
    except OSError as exc:
        raise PeaksError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise PeaksError(f"{path}: not a CSV text file ({exc})") from None


_TABLE: list[Peaks] | None = None


def table() -> list[Peaks]:
    """The shipped rows (peaks.csv), read once."""
    global _TABLE
    if _TABLE is None:
        _TABLE = load_peaks(PEAKS_FILE)
    return _TABLE


def match_device(name: str, rows: list[Peaks] | None = None) -> Peaks | None:
    """The first row (of `rows`, else the shipped table) whose pattern the device name
    holds, None when none does."""
    name = name.strip()
    if not name:
        return None
    for peaks in table() if rows is None else rows:
        if re.search(peaks.match, name, re.IGNORECASE):
            return peaks
    return None


def with_overrides(peaks: Peaks | None, *, tflops: float | None = None,
                   tbps: float | None = None, device: str = "") -> Peaks | None:
    """The peaks with the user's figures: `tflops` is the matrix peak for every dtype (the
    table's are replaced), `tbps` the bandwidth. Without a row, the figures given make one
    (named `device`); with neither, the peaks as they are."""
    if tflops is None and tbps is None:
        return peaks
    given = [f"--peak-tflops {tflops:g}" if tflops is not None else "",
             f"--peak-tbps {tbps:g}" if tbps is not None else ""]
    note = "given: " + " ".join(g for g in given if g)
    base = peaks or Peaks(device or "unknown device", {}, {}, 0.0, "")
    matrix = base.matrix if tflops is None else dict.fromkeys(
        [d for d in SIZES if d not in ("bool", "complex64", "complex128")], tflops * TERA)
    return replace(base, device=device or base.device, matrix=matrix,
                   bandwidth=base.bandwidth if tbps is None else tbps * TERA,
                   source=f"{base.source}; {note}" if base.source else note)


def peak_flops(peaks: Peaks, work: Work) -> float | None:
    """The FLOP/s that bounds this work: its unit's peak for its dtype, None when the table
    has none."""
    return (peaks.matrix if work.unit == "matrix" else peaks.vector).get(work.dtype)
