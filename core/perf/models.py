"""Perf models: the FLOPs and bytes one call of an op does, from its shapes and dtypes.

`op_work` picks a model by Ascend's op type (tried first) or the op's name (Kineto's host op,
or an Ascend type written as the name) and returns `Work`, or `NoModel` with the reason: an
op no model covers, or shapes a model cannot read without guessing. `MODELS` is the one table
of definitions docs/definitions.md shows (tests/core/test_perf_models.py keeps them equal).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from proftui.core.perf import attention, conv, gemm, vector
from proftui.core.perf.shapes import Shape
from proftui.core.perf.work import Call, NoModel, Work, canonical_all

__all__ = ["MODELS", "Model", "NoModel", "Work", "op_work"]

Rule = Callable[[Call], "Work | NoModel"]


@dataclass(frozen=True)
class Model:
    id: str
    covers: str     # the op names and types it reads
    flops: str      # the formula, as text
    bytes: str      # the formula, as text (b: bytes per element of that tensor's dtype)
    unit: str       # "matrix" or "vector"


MODELS: tuple[Model, ...] = (
    Model("gemm", "aten::mm, aten::addmm, aten::linear, aten::matmul (no batch); Ascend "
          "MatMul, MatMulV2, MatMulV3", "2·M·N·K (+ M·N with a bias)",
          "(M·K + K·N + bias + M·N)·b", "matrix"),
    Model("bmm", "aten::bmm, aten::baddbmm, aten::matmul (batched, broadcast); Ascend "
          "BatchMatMul, BatchMatMulV2, BatchMatMulV3", "2·B·M·N·K (+ B·M·N with a bias)",
          "(A + B + bias + B·M·N)·b, each operand as stored", "matrix"),
    Model("grouped_gemm", "Ascend GroupedMatmul, x [T,K] with weights [E,K,N]", "2·T·K·N",
          "(T·K + E·K·N + T·N)·b", "matrix"),
    Model("conv_fwd", "aten::convolution, aten::_convolution, aten::conv1d/2d/3d, "
          "aten::cudnn_convolution; Ascend Conv2D, Conv3D (NCHW, NCDHW)",
          "2·prod(out)·Cin/g·prod(kernel) (+ prod(out) with a bias); transposed: prod(in) "
          "for prod(out)", "(in + weight + bias + out)·b", "matrix"),
    Model("conv_bwd_data", "aten::convolution_backward (output_mask [T,F,·]); Ascend "
          "Conv2DBackpropInput", "as its forward: 2·prod(dy)·Cin/g·prod(kernel)",
          "(dy + weight + dx)·b", "matrix"),
    Model("conv_bwd_weight", "aten::convolution_backward (output_mask [F,T,·]); Ascend "
          "Conv2DBackpropFilter", "as its forward: 2·prod(dy)·Cin/g·prod(kernel)",
          "(dy + x + dweight)·b", "matrix"),
    Model("conv_bwd", "aten::convolution_backward with both gradients",
          "the sum of the gradients asked for (+ prod(dy) for the bias)",
          "the sum of the gradients' bytes (+ dy + Cout for the bias)", "matrix"),
    Model("sdpa_fwd", "aten::scaled_dot_product_attention, aten::_scaled_dot_product_flash/"
          "efficient/cudnn_attention, aten::_flash_attention_forward; Ascend "
          "FlashAttentionScore, PromptFlashAttention, IncreFlashAttention",
          "2·B·Hq·Sq·Sk·(Dqk + Dv) = 4·B·H·Sq·Sk·D; half when causal and Sq = Sk",
          "(Q + K + V + O)·b", "matrix"),
    Model("sdpa_bwd", "aten::_scaled_dot_product_flash/efficient/cudnn_attention_backward, "
          "aten::_flash_attention_backward; Ascend FlashAttentionScoreGrad",
          "2·B·Hq·Sq·Sk·(3·Dqk + 2·Dv) = 2.5 × forward; half when causal and Sq = Sk",
          "(Q + K + V + dO + dQ + dK + dV)·b", "matrix"),
    Model("layer_norm", "aten::layer_norm, aten::native_layer_norm; Ascend LayerNorm, "
          "LayerNormV3", "(6 + 1 per weight and bias given)·n", "(2·n + weight + bias)·b",
          "vector"),
    Model("rms_norm", "aten::rms_norm, aten::_fused_rms_norm; Ascend RmsNorm",
          "(3 + 1 with a weight)·n", "(2·n + weight)·b", "vector"),
    Model("softmax", "aten::softmax, aten::_softmax, aten::log_softmax, aten::_log_softmax; "
          "Ascend SoftmaxV2, LogSoftmaxV2", "5·n", "n·b(in) + n·b(out)", "vector"),
    Model("elementwise", "unary and binary maths: aten::add, sub, mul, div, maximum, "
          "minimum, relu, gelu, silu, sigmoid, tanh, exp, log, sqrt, rsqrt, neg, abs ... "
          "(and in-place _); Ascend Add, Sub, Mul, Div, RealDiv, Relu, Gelu, FastGelu, "
          "Swish, Sigmoid, Tanh, Exp, Sqrt, Rsqrt, Muls, Adds ...",
          "n (the output's elements, after broadcasting)",
          "each tensor input at its dtype + n·b(out)", "vector"),
    Model("copy", "aten::copy_; Ascend Cast", "0", "n·b(in) + n·b(out)", "vector"),
    Model("fill", "aten::zero_, aten::fill_; Ascend ZerosLike", "0", "n·b", "vector"),
)

_UNARY_ATEN = ("relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt",
               "neg", "abs", "reciprocal", "sin", "cos", "erf", "hardswish", "hardsigmoid")
_BINARY_ATEN = ("add", "sub", "mul", "div", "maximum", "minimum")
_UNARY_ASCEND = ("Relu", "Gelu", "FastGelu", "FastGeluV2", "Swish", "Silu", "Sigmoid",
                 "Tanh", "Exp", "Log", "Sqrt", "Rsqrt", "Neg", "Abs", "Reciprocal", "Sin",
                 "Cos", "Erf", "Muls", "Adds")
_BINARY_ASCEND = ("Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum")


def _rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = {
        "aten::mm": gemm.mm, "aten::addmm": gemm.addmm, "aten::linear": gemm.linear,
        "aten::bmm": gemm.bmm, "aten::baddbmm": gemm.baddbmm, "aten::matmul": gemm.matmul,
        "aten::convolution_backward": conv.kineto_conv_backward,
        "Conv2D": conv.ascend_conv, "Conv3D": conv.ascend_conv,
        "Conv2DBackpropInput": conv.ascend_conv_backprop_input,
        "Conv2DBackpropInputD": conv.ascend_conv_backprop_input,
        "Conv2DBackpropFilter": conv.ascend_conv_backprop_filter,
        "Conv2DBackpropFilterD": conv.ascend_conv_backprop_filter,
        "GroupedMatmul": gemm.grouped_matmul,
        "aten::copy_": vector.copy, "Cast": vector.cast,
        "aten::zero_": vector.fill, "aten::fill_": vector.fill, "ZerosLike": vector.fill,
    }
    rules.update(dict.fromkeys(("MatMul", "MatMulV2", "MatMulV3"), gemm.ascend_matmul))
    rules.update(dict.fromkeys(("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"),
                               gemm.ascend_batch_matmul))
    rules.update(dict.fromkeys(conv._ARGS, conv.kineto_conv))
    rules.update(dict.fromkeys(attention._KINETO, attention.kineto_attention))
    rules.update(dict.fromkeys(attention._ASCEND, attention.ascend_attention))
    rules.update(dict.fromkeys(vector._NORM_PARAMS, vector.norm))
    rules.update(dict.fromkeys(("aten::softmax", "aten::_softmax", "aten::log_softmax",
                                "aten::_log_softmax", "SoftmaxV2", "LogSoftmaxV2"),
                               vector.softmax))
    for op in _UNARY_ATEN:
        rules[f"aten::{op}"] = rules[f"aten::{op}_"] = vector.unary
    for op in _BINARY_ATEN:
        rules[f"aten::{op}"] = rules[f"aten::{op}_"] = vector.binary
    rules.update(dict.fromkeys(_UNARY_ASCEND, vector.unary))
    rules.update(dict.fromkeys(_BINARY_ASCEND, vector.binary))
    return rules


RULES: dict[str, Rule] = _rules()
# The op names and Ascend types a matrix model covers (GEMM, convolution, attention): what the
# advisor's under_roof asks the profile's rows for, so that the other ops' args go unread.
MATRIX_OPS: frozenset[str] = frozenset(
    name for name, rule in RULES.items()
    if rule.__module__ in (gemm.__name__, conv.__name__, attention.__name__))


def op_work(name: str, inputs: Sequence[Shape | None], dtypes: Sequence[str], *,
            outputs: Sequence[Shape | None] = (), op_type: str = "",
            concrete: Sequence[str] = (), output_dtypes: Sequence[str] = (),
            formats: Sequence[str] = ()) -> Work | NoModel:
    """The work of one call of `name` (or Ascend's `op_type`, tried first) with these input
    shapes and dtypes (the profiler's text); see the module's docstring."""
    label = op_type if op_type in RULES else name
    rule = RULES.get(label)
    if rule is None:
        return NoModel(f"no model for {op_type or name}")
    if not inputs:
        return NoModel(f"{label}: the profile holds no input shapes for it")
    call = Call(label, tuple(inputs), canonical_all(dtypes), tuple(outputs),
                canonical_all(output_dtypes), tuple(concrete), tuple(formats))
    return rule(call)
