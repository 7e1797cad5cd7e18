"""Summary tables cached like traces: parsed once, mapped on the next read with the same
numbers, texts and problems; parsed again when the CSV changes or its cache file is damaged.
And the faster parse gives float()'s very numbers."""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

import numpy as np
import pytest

from proftui.core.cache import file as cache_file
from proftui.core.cache import indexes as cache
from proftui.core.cache import tables as table_cache
from proftui.core.cache.tables import read_table
from proftui.core.importers.csv import columns as csv_columns
from proftui.core.importers.csv import summary as csv_summary
from proftui.core.importers.csv.summary import parse_table
from proftui.core.model.table import MISSING
from proftui.core.source.streams import FileIdentity

KERNELS = (
    "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
    "Block Dim,Input Shapes,aic_mac_ratio,cube_utilization(%)\n"
    '3,MatMul_1,MatMulV2,AI_CORE,"1736408883704643.212\t",53.741,0,32,"""32,3""",0.5,96.4\n'
    '3,hcom_allReduce__586_0_1,hcom_allReduce_,HCCL,"1736408883704801.156\t",6.54,104.202,'
    "N/A,N/A,N/A,0\n"
    '4, MatMul_1 ,MatMulV2,AI_CORE,"1736408883705001.5\t",,7,8,"""32,3""",-0,1e2\n'
    "4,ragged\n")


def _csv(tmp_path: Path, text: str = KERNELS, name: str = "kernel_details.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    time.sleep(0.05)  # a file changed moments ago is not cached (see cache.settle)
    return str(path)


def _same(a, b) -> None:
    assert (a.kind, a.path, a.group, a.n_rows) == (b.kind, b.path, b.group, b.n_rows)
    assert a.diagnostics.to_list() == b.diagnostics.to_list()
    assert len(a.columns) == len(b.columns)
    for x, y in zip(a.columns, b.columns):
        assert (x.header, x.name, x.unit, x.kind) == (y.header, y.name, y.unit, y.kind)
        assert x.values.dtype == y.values.dtype
        if x.kind == "number":  # NaN where NaN, the same bits (and sign of zero) elsewhere
            assert x.values.tobytes() == y.values.tobytes()
        else:
            assert x.values.tolist() == y.values.tolist()


def test_a_table_is_parsed_once_then_mapped(tmp_path, cache_dir) -> None:
    path = _csv(tmp_path)
    first = read_table(path, "kernel_details", "rank 0")
    [entry] = cache_dir.glob("*.tbl")
    second = read_table(path, "kernel_details", "rank 0")
    _same(first, second)
    start = second.find("Start Time")
    assert start.kind == "timestamp" and not start.values.flags.writeable  # mapped
    assert start.values.tolist()[:3] == [1736408883704643212, 1736408883704801156,
                                         1736408883705001500]
    assert second.find("Name").values.tolist() == ["MatMul_1", "hcom_allReduce__586_0_1",
                                                   "MatMul_1", "ragged"]
    assert math.copysign(1, second.find("aic_mac_ratio").values[2]) == -1  # "-0" kept its sign
    assert second.diagnostics.count("ragged_row") == 1
    _same(second, parse_table(path, "kernel_details", "rank 0")[0])
    assert entry.exists() and len(list(cache_dir.glob("*.tbl"))) == 1


def test_the_kind_and_group_are_the_callers(tmp_path, cache_dir) -> None:
    path = _csv(tmp_path)
    read_table(path, "kernel_details", "rank 0")
    other = read_table(path, "op_summary", "rank 1")
    assert (other.kind, other.group) == ("op_summary", "rank 1")


def test_a_changed_csv_is_parsed_again(tmp_path, cache_dir) -> None:
    path = _csv(tmp_path)
    read_table(path)
    Path(path).write_text(KERNELS.replace("MatMul_1", "MatMul_2"))
    time.sleep(0.05)
    assert read_table(path).find("Name").values[0] == "MatMul_2"


def test_a_csv_written_moments_ago_is_not_cached(tmp_path, cache_dir) -> None:
    path = tmp_path / "t.csv"
    path.write_text(KERNELS)
    read_table(str(path))
    assert not list(cache_dir.glob("*.tbl"))


def test_a_damaged_table_is_parsed_again(tmp_path, cache_dir) -> None:
    path = _csv(tmp_path)
    read_table(path)
    identity = FileIdentity.of(path)
    entry = table_cache.table_path(identity)
    data = bytearray(entry.read_bytes())
    header, start = cache_file.read_header(bytes(data))
    durations = next(e for e in header["arrays"] if e["name"] == "5.values")
    data[start + durations["offset"] + 6] ^= 0x01  # one bit of 53.741
    entry.write_bytes(bytes(data))
    with pytest.raises(cache.CacheMiss):
        table_cache.load(identity, path, "", "")
    again = read_table(path)
    assert again.find("Duration").values[0] == 53.741
    _same(again, parse_table(path)[0])


def test_no_cache_writes_nothing(tmp_path, cache_dir) -> None:
    read_table(_csv(tmp_path), use_cache=False)
    assert not cache_dir.exists()


# --- the parse -----------------------------------------------------------------------------

TOKENS = ["N/A", "", " 12 ", "12\t", "\t13.5", "-0", "-0.0", "0", "1e5", "1E-3", "-1e-400",
          "9007199254740993", "123456789012345678901234567890", "2.2250738585072011e-308",
          "0.30000000000000004441", "1.7976931348623157e308", "4.9e-324", "1e400", "nan",
          "inf", "1_000", "null", "None"]


def _decimals(n: int, seed: int = 5) -> list[str]:
    """Plain decimal texts (JSON numbers): up to 21 digits, signs, exponents."""
    rng = random.Random(seed)
    cells = []
    for _ in range(n):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 22)))
        dot = rng.randrange(len(digits) + 1)
        whole = digits[:dot].lstrip("0") or "0"
        text = whole + ("." + digits[dot:] if dot < len(digits) else "")
        if rng.random() < 0.1:
            text += f"e{rng.randrange(-280, 280)}"
        cells.append(("-" if rng.random() < 0.2 and text != "0" else "") + text)
    return cells


def test_the_one_pass_decoder_gives_float_s_numbers() -> None:
    cells = _decimals(50_000) + ["N/A", "", " 12 ", "12\t", "\t13.5", "1e-400", "null"] * 5
    expected = np.array([float(c) if c.strip() not in MISSING else math.nan
                         for c in cells], np.float64)
    values = csv_columns.plain_numbers(cells)
    assert values is not None and values.tobytes() == expected.tobytes()
    for other in ("-0", "nan", "1_000", "1e400", '"1"', "true", "[1]", "1,5", "0x1", ".5"):
        assert csv_columns.plain_numbers(["1.5", other]) is None, other


def test_numbers_are_float_s_to_the_bit(tmp_path) -> None:
    rng = random.Random(5)
    cells = _decimals(20_000) + TOKENS * 10
    rng.shuffle(cells)
    expected = np.array([c.strip() if c.strip() not in MISSING else "nan"
                         for c in cells], np.float64)
    text = "K,X(%)\n" + "\n".join(f'k,"{c}"' for c in cells) + "\n"
    values = parse_table(_csv(tmp_path, text, "x.csv"))[0].columns[1].values
    assert values.tobytes() == expected.tobytes()


def test_a_column_turning_to_text_late_keeps_the_files_text(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(csv_summary, "_CHUNK_ROWS", 4)
    monkeypatch.setattr(csv_summary, "_BLOCK_BYTES", 16)
    text = "X,Y(us)\n" + "".join(f"{i}.0,{i}\n" for i in range(10)) + "word,5\n"
    table = parse_table(_csv(tmp_path, text, "x.csv"))[0]
    assert table.columns[0].kind == "text"
    assert table.columns[0].values.tolist() == [f"{i}.0" for i in range(10)] + ["word"]


def test_epoch_timestamps_late_in_a_column_are_exact(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(csv_summary, "_CHUNK_ROWS", 4)
    monkeypatch.setattr(csv_summary, "_BLOCK_BYTES", 16)
    rows = ["N/A"] * 6 + ["12.5", "1736408883704643.213\t", "1736408883704643.001"]
    table = parse_table(_csv(tmp_path, "T(us)\n" + "\n".join(rows) + "\n", "t.csv"))[0]
    column = table.columns[0]
    assert column.kind == "timestamp"
    assert column.values.tolist()[6:] == [12500, 1736408883704643213, 1736408883704643001]
    assert (column.values[:6] == np.iinfo(np.int64).min).all()


@pytest.mark.parametrize("chunk", [1, 3, 2048])
def test_the_chunk_size_changes_nothing(tmp_path, monkeypatch, chunk) -> None:
    path = _csv(tmp_path, KERNELS * 3)
    monkeypatch.setattr(csv_summary, "_CHUNK_ROWS", 2048)
    expected = parse_table(path)[0]
    monkeypatch.setattr(csv_summary, "_CHUNK_ROWS", chunk)
    monkeypatch.setattr(csv_summary, "_BLOCK_BYTES", chunk * 64)  # (csv_blocks' chunks)
    _same(parse_table(path)[0], expected)
