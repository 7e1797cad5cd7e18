"""Summary CSVs read a block of whole rows at a time (core/importers/csv_blocks.py): the same
table, to the bit, as csv.reader's rows give, whatever the file holds and wherever the blocks
are cut; and profilers' plain rows never go through csv.reader."""

from __future__ import annotations

import random

import numpy as np
import pytest

from proftui.core.importers.csv import blocks as csv_blocks
from proftui.core.importers.csv import columns as csv_columns
from proftui.core.importers.csv import summary as csv_summary
from proftui.core.importers.csv.summary import parse_table
from proftui.core.model.table import Table

KERNELS = (
    "Step Id,Model ID,Task ID,Name,Type,Start Time(us),Duration(us),Block Dim,Mix Block Dim,"
    "Input Shapes,Input Data Types,aic_total_cycles,aic_mac_ratio,cube_utilization(%)\n")
_KINDS = [("MatMul_{n}", "MatMulV2", '"""4096,1024;1024,4096"""', "FLOAT16;FLOAT16"),
          ("hcom_allReduce__{n}_1", "hcom_allReduce_", "N/A", "N/A"),
          ("Cast", "Cast", '"""32,1024"""', "FLOAT16"),
          ("EVENT_WAIT", "EVENT_WAIT", "", "")]


def _kernels(rows: int, seed: int = 3, eol: str = "\n") -> str:
    """A kernel_details.csv as torch_npu writes it: quoted stamps ending with a TAB, shapes
    in doubled quotes, N/A, single digits, empty cells."""
    rng = random.Random(seed)
    lines = [KERNELS.rstrip("\n")]
    start = 1_736_408_883_704_643_212
    for i in range(rows):
        name, kind, shapes, types = rng.choice(_KINDS)
        start += rng.randrange(1, 10**7)
        ratio = "N/A" if kind.startswith("hcom") else f"{rng.random():.3f}"
        lines.append(",".join([
            "3", "4294967295", str(i), name.format(n=rng.randrange(9)), kind,
            f'"{start // 1000}.{start % 1000:03d}\t"', f"{rng.lognormvariate(2, 1):.3f}",
            str(rng.choice((1, 8, 48))), rng.choice(("0", "N/A", "")), shapes, types,
            str(rng.randrange(10**6)), ratio, rng.choice(("0", "96.4", "-0.5", "1e2"))]))
    return eol.join(lines) + eol


def _write(tmp_path, data: bytes, name: str = "t.csv") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _by_csv_reader(path: str, monkeypatch) -> Table:
    """The table as csv.reader's rows give it (no block is plain)."""
    with monkeypatch.context() as m:
        m.setattr(csv_blocks, "_analyse", lambda data, width: False)
        return parse_table(path)[0]


def _same(a: Table, b: Table) -> None:
    assert a.n_rows == b.n_rows
    assert a.diagnostics.to_list() == b.diagnostics.to_list()
    assert [(c.header, c.unit, c.kind) for c in a.columns] == [
        (c.header, c.unit, c.kind) for c in b.columns]
    for x, y in zip(a.columns, b.columns):
        if x.kind == "text":
            assert x.values.tolist() == y.values.tolist(), x.header
        else:  # NaN where NaN, the same bits (and sign of zero) elsewhere
            assert x.values.dtype == y.values.dtype and x.values.tobytes() == y.values.tobytes()


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_plain_rows_never_go_through_csv_reader(tmp_path, monkeypatch, eol) -> None:
    path = _write(tmp_path, b"\xef\xbb\xbf" + _kernels(3000, eol=eol).encode())
    expected = _by_csv_reader(path, monkeypatch)
    monkeypatch.setattr(csv_summary, "_BLOCK_BYTES", 1 << 14)  # many blocks

    def refuse(*_args, **_kwargs):
        raise AssertionError("rows from csv.reader")
    monkeypatch.setattr(csv_columns.Chunks, "add", refuse)
    one_by_one = []  # columns read from their cells' strings, as csv.reader gives them
    read = csv_columns.plain_numbers
    monkeypatch.setattr(csv_columns, "plain_numbers", lambda *a: one_by_one.append(1) or read(*a))
    table = parse_table(path)[0]
    _same(table, expected)
    assert len(one_by_one) == 4  # the text columns, found in the first block
    start = table.find("Start Time")
    assert start.kind == "timestamp" and start.values[0] % 1000 != 0  # exact ns
    assert table.find("Input Shapes").values[0] in ('"4096,1024;1024,4096"', "N/A",
                                                    '"32,1024"', "")


# Cells of every kind csv.reader and float() meet in damaged or foreign files.
CELLS = ["1", "2.5", "-3", "0", "-0", "-0.0", "N/A", "", " ", " 7 ", "\t8", "9\t", "1e5", "abc",
         '"q"', '"a,b"', '"""s,t"""', '"x""y"', '""', '"1.5"', '"-0"', '"N/A"', "12.300",
         '"1736408883704643.212\t"', "1736408883704643.213", "9007199254740993", "null", "nan",
         "inf", "1_0", "é", "\xa0", '"multi\nline"', '"cr\r\nlf"', 'a"b', '"a"b', ' "a"', "+1",
         ".5", "5.", "123456789012345678901234567890", "1e400", "-", "\x00", "\r", "\xff"]
HEADERS = ["A", "B(us)", "C(%)", "Name", "T(us)", "D(ns)", "E", "F(ms)", "G(s)"]


def _odd_csv(rng: random.Random) -> bytes:
    width = rng.randint(1, 9)
    lines = [",".join(rng.sample(HEADERS, width))]
    usual = rng.choice([["1", "2.5", "N/A", "12.300", "0", ""], ["k1", "k2", "k3"],
                        ['"1736408883704643.212\t"', "1736408883704643.5", "N/A"], CELLS])
    odd = rng.random() < 0.5
    for _ in range(rng.randint(0, 60)):
        n = rng.randint(0, width + 2) if odd and rng.random() < 0.05 else width
        lines.append(",".join(rng.choice(CELLS if odd and rng.random() < 0.1 else usual)
                              for _ in range(n)))
        if odd and rng.random() < 0.03:
            lines.append("")
    eol = rng.choice(["\n", "\r\n", "\r"] if odd else ["\n", "\r\n"])
    data = (eol.join(lines) + (eol if rng.random() < 0.8 else "")).encode()
    data = data.replace("\xff".encode(), b"\xff")  # a byte that is no UTF-8
    return (b"\xef\xbb\xbf" if rng.random() < 0.2 else b"") + data


@pytest.mark.parametrize("seed", range(4))
def test_blocks_read_what_csv_reader_reads(tmp_path, monkeypatch, seed) -> None:
    rng = random.Random(seed)
    for case in range(40):
        path = _write(tmp_path, _odd_csv(rng), f"{seed}_{case}.csv")
        expected = _by_csv_reader(path, monkeypatch)
        for block in (1, 40, csv_blocks.BLOCK_BYTES):  # the cuts between blocks change nothing
            monkeypatch.setattr(csv_summary, "_BLOCK_BYTES", block)
            _same(parse_table(path)[0], expected)


def test_ns_integers_are_exact_beside_decimals(tmp_path) -> None:
    path = _write(tmp_path, b"D(ns)\n9007199254740993\n12.5\nN/A\n1736408883704643001\n")
    column = parse_table(path)[0].columns[0]
    assert column.kind == "timestamp"
    assert column.values.tolist() == [9007199254740993, 12, np.iinfo(np.int64).min,
                                      1736408883704643001]


def test_every_row_before_a_cell_too_long_is_kept(tmp_path) -> None:
    rows = "".join(f"{i},{i}.5\n" for i in range(3000))
    path = _write(tmp_path, (f"A,B(us)\n{rows}1,\"" + "x" * (17 << 20) + '"\n2,3\n').encode())
    table = parse_table(path)[0]
    assert table.n_rows == 3000 and table.columns[1].values[-1] == 2999.5
    (problem,) = table.diagnostics
    assert problem.kind == "bad_csv" and problem.detail.startswith("line 3002: field larger")
