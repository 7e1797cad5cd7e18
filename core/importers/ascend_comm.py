"""HCCL communication summaries of Ascend profiles (communication.json and
communication_matrix.json of a torch_npu or msprof export) as frozen records.

communication.json holds, per step (``"step50"``) and kind (``"p2p"``, ``"collective"``), one
entry per communication op, keyed ``<op name>@<group hash>``: its ``Communication Time Info``
(start in µs, elapse, transit, wait, synchronisation and idle time in ms, two ratios) and its
``Communication Bandwidth Info`` per transport (HCCS, PCIE, SIO, RDMA, and SDMA, which msprof
makes the sum of the first three): size in MB, time in ms, bandwidth in GB/s, the share of
large packets and the ``Size Distribution`` of the packets (``{"<MB>": [count, ms]}``).
communication_matrix.json holds, per step and kind, links ``"<src>-<dst>"`` of each op type
(``allreduce-total@<group>``: all that type's ops summed; ``-top1``, ``-middle``,
``-bottom1`` .. ``-bottom3``: single ops picked by bandwidth) or, from msprof itself, of each
op. msprof's own ``analyze`` output has the same entries without the step and kind levels.

Times become integer ns and sizes integer bytes (msprof's MB is 10^6 bytes), converted from the
decimal text of each figure and rounded to the nearest unit, so the same figure reads the same
from the text and from the SQLite export (:mod:`.ascend_db_comm`). The producer's own totals
("Total Op Info") are left out: the analysis sums the ops itself. Unknown keys are ignored; a
figure that is not a number, or negative, is left out and counted; a file that is not JSON or
not a communication summary gives one sentence. A transport that moved nothing (the text export
lists all five, the SQLite one only those used) is not kept.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import orjson

US = 1_000  # µs -> ns
MS = 1_000_000  # ms -> ns
MB = 1_000_000  # MB -> bytes (msprof: COMMUNICATION_B_to_MB = 1000 ** 2)
KINDS = ("collective", "p2p")
_FLOAT_EXACT = float(2**40)  # below, a product's error is far under 0.001
LINK_SAMPLES = ("total", "top1", "middle", "bottom1", "bottom2", "bottom3")
_P2P_PREFIXES = ("hcom_send", "hcom_receive", "hcom_batchsendrecv")
_STEP = re.compile(r"^step(\d+)$")
_SAMPLE = re.compile(r"^(.+)-(" + "|".join(LINK_SAMPLES) + r")$")
# Problems counted while reading, with the sentence shown for each.
PROBLEMS = {
    "comm_bad_value": "a figure that is not a number, or is negative (left out)",
    "comm_bad_entry": "an entry of an unexpected shape (skipped)",
    "comm_missing_column": "a table of analysis.db lacks a column it needs (the table is "
                           "not read)",
    "comm_unmatched": "bandwidth of an op analysis.db gives no times for (left out)",
}


@dataclass(frozen=True)
class PacketSize:
    """One line of a transport's size distribution: packets of one size, how many, and
    their time (None when the producer gives only the count)."""

    size_bytes: int
    count: int
    time_ns: int | None


@dataclass(frozen=True)
class Transport:
    """What one op moved over one transport type, as the file says it."""

    transport: str  # "HCCS", "PCIE", "SIO", "RDMA", "SDMA" (the sum of the first three) ...
    size_bytes: int | None
    time_ns: int | None
    bandwidth_gbps: float | None  # the producer's, GB/s (10^9 bytes a second)
    large_packet_ratio: float | None  # the producer's
    packets: tuple[PacketSize, ...] = ()


@dataclass(frozen=True)
class Collective:
    """One communication op of a rank: its times (ns, None when missing or unusable) and what
    it moved per transport."""

    step: int | None  # from "step50"; None when the export is not split by step
    kind: str  # "collective" or "p2p"
    name: str  # "hcom_allReduce__586_0_1"
    group: str  # the communication group's hash
    start_ns: int | None
    elapse_ns: int | None
    transit_ns: int | None
    wait_ns: int | None
    sync_ns: int | None
    idle_ns: int | None
    transports: tuple[Transport, ...] = ()


@dataclass(frozen=True)
class Link:
    """One src -> dst link of the communication matrix."""

    step: int | None
    kind: str
    op_type: str  # "allreduce" for the producer's samples, else the op's name
    sample: str  # "total", "top1", ... "bottom3"; "op" for one op's own links
    group: str
    src: str
    dst: str
    transport: str  # "HCCS", "RDMA", "LOCAL" ...
    size_bytes: int | None
    time_ns: int | None
    bandwidth_gbps: float | None  # the producer's
    op_name: str = ""  # the op a sample is, when the file names it


@dataclass(frozen=True)
class CommData:
    """One rank's communication summary: where it was read from, its records, the problems
    counted, and `error`, one sentence, when a file could not be read at all."""

    rank: str
    source: str  # communication.json (or the matrix alone), or analysis.db
    form: str  # "text" or "db"
    collectives: tuple[Collective, ...] = ()
    links: tuple[Link, ...] = ()
    problems: dict[str, int] = field(default_factory=dict)
    error: str = ""


class Problems:
    """Problems counted by kind (see PROBLEMS)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, kind: str, n: int = 1) -> None:
        if n > 0:
            self.counts[kind] = self.counts.get(kind, 0) + n


def exact(value: Any, scale: int, problems: Problems) -> int | None:
    """`value` (a JSON or SQLite number, or its text) times `scale`, rounded to the nearest
    integer (half away from zero); None, counted, when it is not a finite number >= 0 (a
    missing value is None uncounted)."""
    if value is None:
        return None
    if type(value) is int and value >= 0:  # the usual 0 of an unused transport
        return value * scale
    if type(value) is float and value >= 0:  # (NaN fails the comparison)
        # Fast where a float product is exact enough to round (far from 2^53, not near a
        # half): the same integer as the decimal path below, for most figures.
        scaled_float = value * scale
        if scaled_float < _FLOAT_EXACT:
            nearest = math.floor(scaled_float + 0.5)
            if abs(abs(scaled_float - nearest) - 0.5) > 0.001:
                return nearest
    number = _decimal(value)
    if number is None:
        problems.add("comm_bad_value")
        return None
    scaled = int((number * scale).to_integral_value(ROUND_HALF_UP))
    if scaled < 0:
        problems.add("comm_bad_value")
        return None
    return scaled


def number(value: Any, problems: Problems) -> float | None:
    """A ratio or bandwidth as a float; None, counted, when not a finite number >= 0."""
    if value is None:
        return None
    found = _decimal(value)
    if found is None or found < 0:
        problems.add("comm_bad_value")
        return None
    return float(found)


def _decimal(value: Any) -> Decimal | None:
    """The exact decimal a figure was written as: a float by its shortest text (the digits
    the producer's JSON writer printed), so text and SQLite exports agree."""
    if isinstance(value, Decimal):  # as the JSON decoder hands decimals over
        return value if value.is_finite() else None
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = repr(value)
    try:
        found = Decimal(value.strip() if isinstance(value, str) else value)
    except (InvalidOperation, TypeError, ValueError):
        return None
    return found if found.is_finite() else None


def step_number(label: Any) -> int | None:
    """50 of "step50"; None of "step" (an export not split by step) or anything else."""
    found = _STEP.match(str(label or ""))
    return int(found.group(1)) if found else None


def split_key(key: str) -> tuple[str, str]:
    """("hcom_allReduce__586_0_1", "17522688603477080586") of "<name>@<group>"."""
    name, at, group = key.rpartition("@")
    return (name, group) if at else (key, "")


def kind_of(name: str) -> str:
    """An op's kind by its name, as torch_npu splits them (send, receive: point to point)."""
    return "p2p" if name.lower().startswith(_P2P_PREFIXES) else "collective"


def sample_of(entry: str) -> tuple[str, str]:
    """(op type, sample) of a matrix entry: ("allreduce", "total") of "allreduce-total", an
    op's own name with "op" otherwise."""
    found = _SAMPLE.match(entry)
    return (found.group(1), found.group(2)) if found else (entry, "op")


def kept(transport: Transport) -> bool:
    """Whether a transport moved anything (or names packets): the rest is padding."""
    return bool(transport.size_bytes or transport.time_ns or transport.packets)


def order_collectives(found: list[Collective]) -> tuple[Collective, ...]:
    """Collectives in one order whatever the source: by step, kind, start, name."""
    return tuple(sorted(found, key=lambda c: (
        -1 if c.step is None else c.step, KINDS.index(c.kind) if c.kind in KINDS else 2,
        c.kind, -1 if c.start_ns is None else c.start_ns, c.name, c.group)))


def order_links(found: list[Link]) -> tuple[Link, ...]:
    """Links in one order whatever the source."""
    def rank_key(text: str) -> tuple[int, str]:
        return (int(text), "") if text.isdigit() else (1 << 62, text)

    return tuple(sorted(found, key=lambda x: (
        -1 if x.step is None else x.step, x.kind, x.group, x.op_type,
        LINK_SAMPLES.index(x.sample) if x.sample in LINK_SAMPLES else len(LINK_SAMPLES),
        rank_key(x.src), rank_key(x.dst), x.op_name)))


# -- the text export ----------------------------------------------------------------------------


def read_text(rank: str, comm_path: str | None, matrix_path: str | None) -> CommData:
    """Read a rank's communication.json and communication_matrix.json (either may be None)."""
    problems = Problems()
    collectives: list[Collective] = []
    links: list[Link] = []
    errors = []
    if comm_path:
        data, error = load_json(comm_path)
        if error:
            errors.append(error)
        else:
            for step, kind, key, entry in _entries(data, "Communication Time Info", problems):
                collectives.append(read_collective(step, kind, key, entry, problems))
    if matrix_path:
        data, error = load_json(matrix_path)
        if error:
            errors.append(error)
        else:
            for step, kind, key, entry in _entries(data, None, problems):
                links += read_links(step, kind, key, entry, problems)
    return CommData(rank, comm_path or matrix_path or "", "text",
                    order_collectives(collectives), order_links(links), problems.counts,
                    " ".join(errors))


def load_json(path: str) -> tuple[Any, str]:
    """The parsed JSON, or a sentence why not. A float is converted later by its shortest
    text, which is what Python's JSON writer printed (torch_npu writes these files with it)."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as exc:
        return None, f"{name} cannot be read ({exc.strerror or exc})."
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:  # NaN and Infinity, which Python's writer emits and orjson refuses
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            where = f" at byte {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
            return None, f"{name} is not valid JSON{where} (damaged or cut short)."
    if not isinstance(data, dict):
        return None, f"{name} is not a communication summary (not a JSON object)."
    return data, ""


def _entries(data: dict, marker: str | None, problems: Problems):
    """(step, kind, key, entry) of every op (or matrix) entry, from the step layout
    (step -> kind -> entries) or msprof's flat one (entries at the top). `marker` is the key
    an op entry has (None: any object is one: the matrix)."""
    def is_entry(key: str, value: Any) -> bool:
        if marker is not None:
            return isinstance(value, dict) and marker in value
        return isinstance(value, dict) and any(isinstance(v, dict) and "-" in k
                                               for k, v in value.items())

    for top, value in data.items():
        if not isinstance(value, dict):
            problems.add("comm_bad_entry")
            continue
        if any(k in value for k in KINDS):  # a step
            step = step_number(top)
            for kind, ops in value.items():
                if kind not in KINDS:
                    continue  # unknown keys are ignored
                if not isinstance(ops, dict):
                    problems.add("comm_bad_entry")
                    continue
                for key, entry in ops.items():
                    if key.startswith("Total Op Info"):
                        continue  # the producer's totals: the analysis sums the ops
                    if not isinstance(entry, dict):
                        problems.add("comm_bad_entry")
                        continue
                    yield step, kind, key, entry
        elif top.startswith("Total Op Info") or top.lower().startswith("total"):
            continue
        elif is_entry(top, value):
            yield None, kind_of(split_key(top)[0]), top, value
        else:
            problems.add("comm_bad_entry")


def read_collective(step: int | None, kind: str, key: str, entry: dict,
                problems: Problems) -> Collective:
    name, group = split_key(key)
    times = entry.get("Communication Time Info")
    if not isinstance(times, dict):
        problems.add("comm_bad_entry")
        times = {}

    def ms(label: str) -> int | None:
        return exact(times.get(label), MS, problems)

    bandwidth = entry.get("Communication Bandwidth Info")
    transports = []
    if isinstance(bandwidth, dict):
        for transport, info in bandwidth.items():
            if not isinstance(info, dict):
                problems.add("comm_bad_entry")
                continue
            found = Transport(
                str(transport), exact(info.get("Transit Size(MB)"), MB, problems),
                exact(info.get("Transit Time(ms)"), MS, problems),
                number(info.get("Bandwidth(GB/s)"), problems),
                number(info.get("Large Packet Ratio"), problems),
                _distribution(info.get("Size Distribution"), problems))
            if kept(found):
                transports.append(found)
    elif bandwidth is not None:
        problems.add("comm_bad_entry")
    return Collective(step, kind, name, group, exact(times.get("Start Timestamp(us)"), US,
                                                       problems),
                      ms("Elapse Time(ms)"), ms("Transit Time(ms)"), ms("Wait Time(ms)"),
                      ms("Synchronization Time(ms)"), ms("Idle Time(ms)"),
                      tuple(sorted(transports, key=lambda t: t.transport)))


def _distribution(value: Any, problems: Problems) -> tuple[PacketSize, ...]:
    """{"<MB>": [count, ms]} (or {"<MB>": count} of older exports) as packet sizes."""
    if not isinstance(value, dict):
        if value is not None:
            problems.add("comm_bad_entry")
        return ()
    out = []
    for size, info in value.items():
        count_value, time_value = (info[0], info[1]) if isinstance(info, list) and len(
            info) == 2 else (info, None)
        size_bytes = exact(size, MB, problems)
        count = exact(count_value, 1, problems)
        if size_bytes is None or count is None:
            continue
        out.append(PacketSize(size_bytes, count, exact(time_value, MS, problems)))
    return tuple(sorted(out, key=lambda p: p.size_bytes))


def read_links(step: int | None, kind: str, key: str, entry: dict,
           problems: Problems) -> list[Link]:
    name, group = split_key(key)
    op_type, sample = sample_of(name)
    out = []
    for pair, info in entry.items():
        src, dash, dst = str(pair).partition("-")
        if not (dash and isinstance(info, dict)):
            problems.add("comm_bad_entry")
            continue
        out.append(Link(step, kind, op_type, sample, group, src.strip(), dst.strip(),
                        str(info.get("Transport Type") or ""),
                        exact(info.get("Transit Size(MB)"), MB, problems),
                        exact(info.get("Transit Time(ms)"), MS, problems),
                        number(info.get("Bandwidth(GB/s)"), problems),
                        str(info.get("Op Name") or "")))
    return out
