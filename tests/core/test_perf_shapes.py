"""Shapes and dtypes as Ascend's tables and Kineto's args write them, in one form."""

from __future__ import annotations

from proftui.core.perf.dtypes import canonical_dtype, dtype_bytes
from proftui.core.perf.shapes import ascend_list, ascend_shapes, kineto_list, kineto_shapes


def test_ascend_shapes_as_kernel_details_writes_them() -> None:
    assert ascend_shapes('"32,9216;4096,9216;4096"') == [(32, 9216), (4096, 9216), (4096,)]
    assert ascend_shapes('"1;;1;2"') == [(1,), None, (1,), (2,)]
    assert ascend_shapes('""') == [] and ascend_shapes("N/A") == []
    assert ascend_shapes('";"') == [None, None]
    assert ascend_shapes('"2,x"') == [None]


def test_ascend_lists() -> None:
    assert ascend_list("FLOAT;DT_BF16;INT64") == ["FLOAT", "DT_BF16", "INT64"]
    assert ascend_list("N/A") == []


def test_kineto_input_dims() -> None:
    assert kineto_shapes([[32, 9216], [4096, 9216], []]) == [(32, 9216), (4096, 9216), None]
    assert kineto_shapes([[[2, 3], [2, 3]], [1]]) == [None, (1,)]  # a TensorList, then a tensor
    assert kineto_shapes("[[1]]") == [] and kineto_shapes(None) == []
    assert kineto_list(["float", "", 3]) == ["float", "", "3"]


def test_dtypes_in_one_vocabulary() -> None:
    for text, name in (("float", "fp32"), ("FLOAT", "fp32"), ("c10::BFloat16", "bf16"),
                       ("DT_BF16", "bf16"), ("c10::Half", "fp16"), ("FLOAT16", "fp16"),
                       ("long int", "int64"), ("INT64", "int64"), ("c10::Float8_e4m3fn", "fp8"),
                       ("bf16", "bf16")):
        assert canonical_dtype(text) == name, text
    for text in ("Scalar", "TensorList", "", "N/A", "ScalarList"):
        assert canonical_dtype(text) is None
    assert dtype_bytes("DT_BF16") == 2 and dtype_bytes("float") == 4 and dtype_bytes("x") is None
