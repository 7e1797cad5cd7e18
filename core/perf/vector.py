"""Ops on the vector units: normalisations, softmax, elementwise maths, casts and fills.

Each is bound by memory on every accelerator in the peaks table, so their bytes matter more
than their FLOPs: each input read once, each output written once, at its own dtype's size.
FLOPs are counted per element, as written in models.MODELS; a transcendental (exp, tanh,
erf) counts one, though the hardware spends several instructions on it.
"""

from __future__ import annotations

from proftui.core.perf.work import (
    Call,
    NoModel,
    Work,
    broadcast,
    nbytes,
    need,
    need_dtype,
    numel,
    size,
    work,
)

# positions of (weight, bias) per op; None: the op has none
_NORM_PARAMS = {
    "aten::layer_norm": (2, 3), "aten::native_layer_norm": (2, 3),
    "LayerNorm": (1, 2), "LayerNormV3": (1, 2),
    "aten::rms_norm": (2, None), "aten::_fused_rms_norm": (2, None), "RmsNorm": (1, None),
}
_RMS = {"aten::rms_norm", "aten::_fused_rms_norm", "RmsNorm"}


def _unary_bytes(call: Call, dtype: str) -> float:
    x = call.shape(0)
    return nbytes(x, dtype) + numel(x) * size(call.out_dtype(0) or dtype)


def norm(call: Call) -> Work | NoModel:
    """Layer norm: mean (1 per element), variance (3: subtract, square, add), normalise (2:
    subtract, scale by 1/std), then scale and shift (1 each where weight and bias are given).
    RMS norm: mean square (2), normalise (1), weight (1 where given)."""
    missing = need(call, 1)
    dtype = need_dtype(call, 0)
    if missing or isinstance(dtype, NoModel):
        return missing or dtype
    weight_at, bias_at = _NORM_PARAMS[call.label]
    params = [call.shape(i) for i in (weight_at, bias_at) if i is not None]
    given = [p for p in params if p is not None]
    per_element = (3 if call.label in _RMS else 6) + len(given)
    moved = _unary_bytes(call, dtype) + sum(nbytes(p, dtype) for p in given)
    model = "rms_norm" if call.label in _RMS else "layer_norm"
    return work(per_element * numel(call.shape(0)), moved, model, "vector", dtype)


def softmax(call: Call) -> Work | NoModel:
    """Softmax and log-softmax along one dim: max, subtract, exp, sum, divide (or subtract
    the log): 5 per element. aten::_softmax(half_to_float=True) writes fp32."""
    missing = need(call, 1)
    dtype = need_dtype(call, 0)
    if missing or isinstance(dtype, NoModel):
        return missing or dtype
    x = call.shape(0)
    out_dtype = call.out_dtype(0) or dtype
    if call.label in ("aten::_softmax", "aten::_log_softmax") and call.arg(2) == "True":
        out_dtype = "fp32"
    moved = nbytes(x, dtype) + numel(x) * size(out_dtype)
    return work(5 * numel(x), moved, "softmax", "vector", dtype)


def unary(call: Call) -> Work | NoModel:
    """One FLOP per element; read the input, write the output."""
    missing = need(call, 1)
    dtype = need_dtype(call, 0)
    if missing or isinstance(dtype, NoModel):
        return missing or dtype
    return work(numel(call.shape(0)), _unary_bytes(call, dtype), "elementwise", "vector",
                dtype)


def binary(call: Call) -> Work | NoModel:
    """One FLOP per output element (a broadcast of the two inputs; a scalar operand is no
    tensor and moves nothing); the output takes the larger of the two inputs' dtypes."""
    tensors = [(call.shape(i), call.dtype(i)) for i in (0, 1) if call.shape(i) is not None]
    if not tensors:
        return NoModel(f"{call.label} needs at least one tensor input")
    if any(d is None for _, d in tensors):
        return NoModel(f"{call.label}: no known dtype for an input")
    out = tensors[0][0] if len(tensors) == 1 else broadcast(tensors[0][0], tensors[1][0])
    if out is None:
        return NoModel(f"{call.label}: input shapes {tensors[0][0]} and {tensors[1][0]} do "
                       "not broadcast")
    out_dtype = call.out_dtype(0) or max((d for _, d in tensors), key=size)
    moved = sum(nbytes(s, d) for s, d in tensors) + numel(out) * size(out_dtype)
    return work(numel(out), moved, "elementwise", "vector", out_dtype)


def copy(call: Call) -> Work | NoModel:
    """aten::copy_ (self, src): read src, write self, no FLOPs."""
    missing = need(call, 2)
    if missing:
        return missing
    if call.dtype(0) is None or call.dtype(1) is None:
        return NoModel(f"{call.label}: no known dtype for an input")
    moved = nbytes(call.shape(1), call.dtype(1)) + nbytes(call.shape(0), call.dtype(0))
    return work(0, moved, "copy", "vector", call.dtype(0))


def cast(call: Call) -> Work | NoModel:
    """Ascend Cast (x): read x, write it in the output's dtype, no FLOPs."""
    missing = need(call, 1)
    dtype = need_dtype(call, 0)
    if missing or isinstance(dtype, NoModel):
        return missing or dtype
    if call.out_dtype(0) is None:
        return NoModel(f"{call.label} needs its output dtype")
    return work(0, _unary_bytes(call, dtype), "copy", "vector", dtype)


def fill(call: Call) -> Work | NoModel:
    """aten::zero_, aten::fill_, Ascend ZerosLike: write the tensor, no FLOPs."""
    missing = need(call, 1)
    dtype = need_dtype(call, 0)
    if missing or isinstance(dtype, NoModel):
        return missing or dtype
    return work(0, numel(call.shape(0)) * size(call.out_dtype(0) or dtype), "fill",
                "vector", dtype)
