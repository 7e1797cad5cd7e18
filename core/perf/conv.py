"""Convolutions (1-D to 3-D, grouped, transposed), forward and backward, in NCHW order.

A forward convolution pairs every output element with Cin/groups * kernel-size inputs:
P = prod(output) * prod(weight[1:]) multiply-adds (for a transposed one every input element
is scattered that way: prod(input) * prod(weight[1:])). The data gradient and the weight
gradient each do the same P multiply-adds again, so each is 2*P FLOPs like the forward.
"""

from __future__ import annotations

from math import prod

from proftui.core.perf.shapes import Shape
from proftui.core.perf.work import (
    Call,
    NoModel,
    Work,
    flag,
    int_list,
    nbytes,
    need,
    need_dtype,
    work,
)

# Kineto's argument positions (Concrete Inputs) per op:
# stride, padding, dilation, transposed, output_padding, groups (None: not an argument)
_ARGS = {
    "aten::convolution": (3, 4, 5, 6, 7, 8),
    "aten::_convolution": (3, 4, 5, 6, 7, 8),
    "aten::conv1d": (3, 4, 5, None, None, 6),
    "aten::conv2d": (3, 4, 5, None, None, 6),
    "aten::conv3d": (3, 4, 5, None, None, 6),
    "aten::cudnn_convolution": (3, 2, 4, None, None, 5),
}
_BIAS = {"aten::convolution": 2, "aten::_convolution": 2, "aten::conv1d": 2,
         "aten::conv2d": 2, "aten::conv3d": 2}


def _show(shape: Shape | None) -> str:
    return "not a tensor" if shape is None else "[" + ",".join(map(str, shape)) + "]"


def _spatial(call: Call, pos: int | None, n: int, default: int) -> tuple[int, ...] | None:
    """A per-dimension argument, a single value repeated over the `n` spatial dims."""
    if pos is None:
        return (default,) * n
    values = int_list(call.arg(pos))
    if values is None or len(values) not in (1, n):
        return None
    return values * n if len(values) == 1 else values


def _out_dim(size: int, k: int, stride: int, pad: int, dil: int, opad: int,
             transposed: bool) -> int:
    if transposed:
        return (size - 1) * stride - 2 * pad + dil * (k - 1) + opad + 1
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def _output(call: Call, x: Shape, w: Shape) -> tuple[Shape, bool] | NoModel:
    """The output shape from Kineto's concrete stride/padding/dilation/groups, and whether
    the convolution is transposed."""
    stride_at, pad_at, dil_at, trans_at, opad_at, groups_at = _ARGS[call.label]
    n = len(x) - 2
    transposed = bool(flag(call.arg(trans_at))) if trans_at is not None else False
    stride = _spatial(call, stride_at, n, 1)
    padding = _spatial(call, pad_at, n, 0)
    dilation = _spatial(call, dil_at, n, 1)
    opad = _spatial(call, opad_at, n, 0) if transposed else (0,) * n
    groups = int_list(call.arg(groups_at)) if groups_at is not None else (1,)
    if None in (stride, padding, dilation, opad) or not groups or len(groups) != 1:
        return NoModel(f"{call.label} needs its stride, padding, dilation and groups "
                       "(Kineto's Concrete Inputs)")
    g = groups[0]
    if g < 1 or x[1] != (w[0] if transposed else w[1] * g):
        return NoModel(f"{call.label}: input {_show(x)} and weight {_show(w)} disagree "
                       f"with groups={g}")
    channels = w[1] * g if transposed else w[0]
    dims = tuple(_out_dim(x[2 + i], w[2 + i], stride[i], padding[i], dilation[i], opad[i],
                          transposed) for i in range(n))
    if min(dims) < 1:
        return NoModel(f"{call.label}: the arguments give an empty output")
    return (x[0], channels, *dims), transposed


def _shapes_ok(call: Call, x: Shape, w: Shape) -> NoModel | None:
    if len(x) not in (3, 4, 5) or len(w) != len(x):
        return NoModel(f"{call.label} needs an NC(D)HW input and a weight of the same rank, "
                       f"got {_show(x)} and {_show(w)}")
    return None


def _forward(call: Call, x_at: int, w_at: int, bias_at: int | None, out: Shape,
             transposed: bool) -> Work | NoModel:
    dtype = need_dtype(call, x_at)
    if isinstance(dtype, NoModel):
        return dtype
    x, w = call.shape(x_at), call.shape(w_at)
    macs = prod(x if transposed else out) * prod(w[1:])
    bias = call.shape(bias_at) if bias_at is not None else None
    flops = 2 * macs + (prod(out) if bias is not None else 0)
    moved = (nbytes(x, dtype) + nbytes(w, call.dtype(w_at) or dtype)
             + nbytes(bias, call.dtype(bias_at) or dtype) + nbytes(out, call.out_dtype(0) or dtype))
    return work(flops, moved, "conv_fwd", "matrix", dtype)


def kineto_conv(call: Call) -> Work | NoModel:
    missing = need(call, 2)
    if missing:
        return missing
    x, w = call.shape(0), call.shape(1)
    bad = _shapes_ok(call, x, w)
    if bad:
        return bad
    found = _output(call, x, w)
    if isinstance(found, NoModel):
        return found
    out, transposed = found
    return _forward(call, 0, 1, _BIAS.get(call.label), out, transposed)


def _mask(text: str) -> tuple[bool, ...] | None:
    parts = [flag(p) for p in text.strip().strip("[]").split(",")]
    return None if not parts or None in parts else tuple(bool(p) for p in parts)


def kineto_conv_backward(call: Call) -> Work | NoModel:
    """aten::convolution_backward (grad_output, input, weight, bias_sizes, stride, padding,
    dilation, transposed, output_padding, groups, output_mask): the gradients output_mask
    asks for."""
    missing = need(call, 3)
    if missing:
        return missing
    dy, x, w = call.shape(0), call.shape(1), call.shape(2)
    bad = _shapes_ok(call, x, w)
    mask = _mask(call.arg(10))
    if bad:
        return bad
    if mask is None or len(mask) != 3:
        return NoModel(f"{call.label} needs its output_mask (Kineto's Concrete Inputs)")
    transposed = bool(flag(call.arg(7)))
    return _backward(call, dy, x, w, mask, transposed, x_at=1)


def _backward(call: Call, dy: Shape, x: Shape, w: Shape, mask: tuple[bool, ...],
              transposed: bool, x_at: int) -> Work | NoModel:
    dtype = need_dtype(call, x_at)
    if isinstance(dtype, NoModel):
        return dtype
    macs = prod(x if transposed else dy) * prod(w[1:])
    parts = [("data", (dy, w, x)), ("weight", (dy, x, w)), ("bias", (dy, (dy[1],)))]
    flops, moved, done = 0, 0.0, []
    for wanted, (name, tensors) in zip(mask, parts):
        if wanted:
            flops += prod(dy) if name == "bias" else 2 * macs
            moved += sum(nbytes(t, dtype) for t in tensors)
            done.append(name)
    if not done:
        return NoModel(f"{call.label}: output_mask asks for no gradient")
    model = {("data",): "conv_bwd_data", ("weight",): "conv_bwd_weight"}.get(
        tuple(done), "conv_bwd")
    return work(flops, moved, model, "matrix", dtype)


# -- Ascend ---------------------------------------------------------------------------------


def _ascend_layout(call: Call) -> NoModel | None:
    """Every input in NCHW, NCDHW or ND (a size vector): Ascend's 5-D NC1HWC0 and FRACTAL_Z
    shapes are not the logical ones."""
    for fmt in call.formats:
        if fmt.upper().removeprefix("FORMAT_") not in ("NCHW", "NCDHW", "ND"):
            return NoModel(f"{call.label}: input format {fmt} is not modelled (only NCHW and "
                           "NCDHW)")
    return None


def ascend_conv(call: Call) -> Work | NoModel:
    """Conv2D, Conv3D (x, filter, bias?, offset_w?): the output shape gives the geometry."""
    missing = need(call, 2) or _ascend_layout(call)
    if missing:
        return missing
    x, w, out = call.shape(0), call.shape(1), call.out(0)
    bad = _shapes_ok(call, x, w)
    if bad:
        return bad
    if out is None or len(out) != len(x) or out[1] != w[0] or x[1] % w[1]:
        return NoModel(f"{call.label} needs its output shape to match input {_show(x)} and "
                       f"filter {_show(w)}, got {_show(out)}")
    return _forward(call, 0, 1, 2, out, False)


def _ascend_grad(call: Call, which: str) -> Work | NoModel:
    missing = _ascend_layout(call)
    if missing:
        return missing
    ranked = [i for i, s in enumerate(call.inputs) if s is not None and len(s) in (4, 5)]
    result = call.out(0)
    if len(ranked) < 2 or result is None:
        return NoModel(f"{call.label} needs two NC(D)HW inputs and its output shape")
    first, dy_at = ranked[-2], ranked[-1]
    dy, other = call.shape(dy_at), call.shape(first)
    if which == "data":
        x, w = result, other
    else:
        x, w = other, result
    bad = _shapes_ok(call, x, w)
    if bad:
        return bad
    if len(dy) != len(x) or dy[1] != w[0] or x[1] % w[1]:
        return NoModel(f"{call.label}: gradient {_show(dy)}, input {_show(x)} and filter "
                       f"{_show(w)} do not fit one convolution")
    mask = (which == "data", which == "weight", False)
    dtype_at = dy_at if call.dtype(dy_at) else first
    return _backward(call, dy, x, w, mask, False, x_at=dtype_at)


def ascend_conv_backprop_input(call: Call) -> Work | NoModel:
    """Conv2DBackpropInput(D) (input_size?, filter, out_backprop) -> the input gradient."""
    return _ascend_grad(call, "data")


def ascend_conv_backprop_filter(call: Call) -> Work | NoModel:
    """Conv2DBackpropFilter(D) (x, filter_size?, out_backprop) -> the filter gradient."""
    return _ascend_grad(call, "weight")
