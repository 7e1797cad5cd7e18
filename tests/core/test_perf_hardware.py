"""The hardware peaks: device names as profiles write them, a user's file, overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from proftui.core.perf.hardware import (
    COLUMNS,
    PeaksError,
    load_peaks,
    match_device,
    peak_flops,
    table,
    with_overrides,
)
from proftui.core.perf.work import Work

HEADER = ",".join(COLUMNS)


@pytest.mark.parametrize(("name", "device"), [
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"),    # Kineto deviceProperties names
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
    ("NVIDIA H100 NVL", "NVIDIA H100 NVL"),
    ("NVIDIA H200", "NVIDIA H200 SXM 141GB"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB"),
    ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"),
    ("NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"),
    ("NVIDIA B200", "NVIDIA B200"),
    ("AMD Instinct MI300X", "AMD Instinct MI300X"),
    ("AMD Instinct MI325X", "AMD Instinct MI325X"),
    ("Ascend910_9391", "Ascend 910C (one die)"),          # Ascend's chip names
])
def test_device_names_match_their_row(name: str, device: str) -> None:
    peaks = match_device(name)
    assert peaks is not None and peaks.device == device


def test_unknown_or_ambiguous_devices_have_no_row() -> None:
    # 910B figures are not published clearly enough; MI250X and MI250 share one name
    for name in ("Ascend910B3", "AMD Instinct MI250X/MI250", "NVIDIA GeForce RTX 4090", ""):
        assert match_device(name) is None


def test_the_shipped_table_is_dense_and_cited() -> None:
    h100 = match_device("NVIDIA H100 80GB HBM3")
    assert h100.matrix["bf16"] == pytest.approx(989.4e12)  # dense, not 1979 (sparse)
    assert h100.bandwidth == pytest.approx(3.35e12)
    for peaks in table():
        assert peaks.source and ("http" in peaks.source or "arXiv" in peaks.source)
        assert peaks.bandwidth > 0


def _file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "peaks.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_users_file(tmp_path: Path) -> None:
    path = _file(tmp_path, "device,match,matrix_bf16,bandwidth_tbps,source",
                 "Lab card,LabX,100,1.5,our measurement")
    rows = load_peaks(path)
    assert rows[0].matrix == {"bf16": 100e12} and rows[0].bandwidth == 1.5e12
    assert match_device("LabX rev2", rows) is rows[0]
    assert match_device("NVIDIA H100", rows) is None


@pytest.mark.parametrize(("lines", "message"), [
    (("device,bandwidth_tbps", "A,fast"), "line 2: bandwidth_tbps is 'fast', not a number"),
    (("device,bandwidth_tbps", "A,-1"), "line 2: bandwidth_tbps is -1, not a positive"),
    (("device,bandwidth_tbps", "A,1", ",2"), "line 3: the device column is empty"),
    (("device,match,bandwidth_tbps", "A,(,1"), "line 2: match '(' is not a regular"),
    (("device,speed", "A,1"), "line 1: the header lacks bandwidth_tbps"),
    (("device,bandwidth_tbps,tflops", "A,1,2"), "line 1: unknown column 'tflops'"),
    (("device,matrix_bf16,bandwidth_tbps", "A,,"), "line 2: no peak figure for A"),
])
def test_a_bad_file_says_which_line(tmp_path: Path, lines: tuple[str, ...],
                                    message: str) -> None:
    with pytest.raises(PeaksError, match="peaks.csv, " + message.replace("(", r"\(")):
        load_peaks(_file(tmp_path, *lines))


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PeaksError, match="cannot be read"):
        load_peaks(tmp_path / "none.csv")


def test_overrides() -> None:
    h100 = match_device("NVIDIA H100 80GB HBM3")
    assert with_overrides(h100) is h100
    faster = with_overrides(h100, tbps=4.0)
    assert faster.bandwidth == 4e12 and faster.matrix == h100.matrix
    assert faster.source.endswith("given: --peak-tbps 4")
    flat = with_overrides(h100, tflops=500)
    assert flat.matrix["bf16"] == flat.matrix["fp32"] == 500e12 and flat.bandwidth == 3.35e12
    assert with_overrides(None) is None
    own = with_overrides(None, tflops=300, tbps=1.6, device="Ascend910B3")
    assert (own.device, own.matrix["fp16"], own.bandwidth) == ("Ascend910B3", 300e12, 1.6e12)


def test_peak_for_the_work() -> None:
    h100 = match_device("NVIDIA H100 80GB HBM3")
    gemm = Work(1, 1, "gemm", "matrix", "bf16")
    add = Work(1, 1, "elementwise", "vector", "fp32")
    assert peak_flops(h100, gemm) == pytest.approx(989.4e12)
    assert peak_flops(h100, add) == pytest.approx(66.9e12)
    assert peak_flops(h100, Work(1, 1, "elementwise", "vector", "int64")) is None
