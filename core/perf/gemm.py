"""Matrix multiplies: C[M,N] = A[M,K] @ B[K,N] (+ bias), batched or not.

FLOPs are 2*M*N*K per matrix (a multiply-add is two), plus one per output element for a
bias. Bytes assume each operand is read once and C written once: a broadcast operand (the
weight of `aten::matmul` against a batch) is read once, not once per batch.
"""

from __future__ import annotations

from math import prod

from proftui.core.perf.shapes import Shape
from proftui.core.perf.work import (
    Call,
    NoModel,
    Work,
    broadcast,
    nbytes,
    need,
    need_dtype,
    size,
    work,
)


def _gemm(call: Call, a: int, b: int, batch: int, m: int, n: int, k: int, *,
          bias: int | None = None, model: str = "gemm") -> Work | NoModel:
    """The work of `batch` products [m,k]@[k,n], reading input `a` and `b` (indices into
    the call), a bias input `bias` (added to every output element) when given."""
    dtype = need_dtype(call, a)
    if isinstance(dtype, NoModel):
        return dtype
    out_dtype = call.out_dtype(0) or dtype
    moved = (nbytes(call.shape(a), dtype) + nbytes(call.shape(b), call.dtype(b) or dtype)
             + batch * m * n * size(out_dtype))
    flops = 2 * batch * m * n * k
    if bias is not None and call.shape(bias) is not None:
        moved += nbytes(call.shape(bias), call.dtype(bias) or dtype)
        flops += batch * m * n
    return work(flops, moved, model, "matrix", dtype)


def _two_d(call: Call, i: int) -> Shape | NoModel:
    shape = call.shape(i)
    if shape is None or len(shape) != 2:
        return NoModel(f"{call.label} needs 2-D matrices, input {i} is {_show(shape)}")
    return shape


def _show(shape: Shape | None) -> str:
    return "not a tensor" if shape is None else "[" + ",".join(map(str, shape)) + "]"


def _mismatch(call: Call, k1: int, k2: int) -> NoModel:
    return NoModel(f"{call.label}: the inner dimensions differ ({k1} and {k2})")


def mm(call: Call, a: int = 0, b: int = 1, bias: int | None = None) -> Work | NoModel:
    """aten::mm (A, B); aten::addmm (bias, A, B) with a=1, b=2, bias=0."""
    missing = need(call, max(a, b) + 1)
    if missing:
        return missing
    sa, sb = _two_d(call, a), _two_d(call, b)
    if isinstance(sa, NoModel):
        return sa
    if isinstance(sb, NoModel):
        return sb
    if sa[1] != sb[0]:
        return _mismatch(call, sa[1], sb[0])
    return _gemm(call, a, b, 1, sa[0], sb[1], sa[1], bias=bias)


def addmm(call: Call) -> Work | NoModel:
    return mm(call, 1, 2, bias=0)


def linear(call: Call) -> Work | NoModel:
    """aten::linear (input [..., K], weight [N, K], bias [N]): y = x @ W^T + b."""
    missing = need(call, 2)
    if missing:
        return missing
    x, w = call.shape(0), _two_d(call, 1)
    if isinstance(w, NoModel):
        return w
    if x[-1] != w[1]:
        return _mismatch(call, x[-1], w[1])
    return _gemm(call, 0, 1, 1, prod(x[:-1]), w[0], w[1], bias=2)


def bmm(call: Call, a: int = 0, b: int = 1, bias: int | None = None) -> Work | NoModel:
    """aten::bmm (A [B,M,K], B [B,K,N]); aten::baddbmm (C, A, B) with a=1, b=2, bias=0."""
    missing = need(call, max(a, b) + 1)
    if missing:
        return missing
    sa, sb = call.shape(a), call.shape(b)
    if len(sa) != 3 or len(sb) != 3 or sa[0] != sb[0]:
        return NoModel(f"{call.label} needs [B,M,K] and [B,K,N], got {_show(sa)} and "
                       f"{_show(sb)}")
    if sa[2] != sb[1]:
        return _mismatch(call, sa[2], sb[1])
    return _gemm(call, a, b, sa[0], sa[1], sb[2], sa[2], bias=bias, model="bmm")


def baddbmm(call: Call) -> Work | NoModel:
    return bmm(call, 1, 2, bias=0)


def matmul(call: Call) -> Work | NoModel:
    """aten::matmul: torch.matmul's rules (a 1-D operand is a vector, leading dims
    broadcast)."""
    missing = need(call, 2)
    if missing:
        return missing
    sa, sb = call.shape(0), call.shape(1)
    ma, ka = (1, sa[0]) if len(sa) == 1 else sa[-2:]
    kb, nb = (sb[0], 1) if len(sb) == 1 else sb[-2:]
    if ka != kb:
        return _mismatch(call, ka, kb)
    batch_shape = broadcast(sa[:-2], sb[:-2])
    if batch_shape is None:
        return NoModel(f"{call.label}: batch dims {_show(sa)} and {_show(sb)} do not "
                       "broadcast")
    batch = prod(batch_shape)
    return _gemm(call, 0, 1, batch, ma, nb, ka, model="gemm" if batch == 1 else "bmm")


# -- Ascend: the transposes are attributes the tables do not hold; the shapes settle them ---


def _orient(call: Call, x1: Shape, x2: Shape) -> tuple[int, int, int] | NoModel:
    """(M, N, K) of x1 @ x2 where either may be stored transposed: every reading whose inner
    dims agree (and whose [M,N] is the output's, where the output is given) must give the
    same M*N*K, else the shapes do not say."""
    out = call.out(0)
    found = set()
    for m, k1 in (x1, x1[::-1]):
        for k2, n in (x2, x2[::-1]):
            if k1 == k2 and (out is None or len(out) < 2 or tuple(out[-2:]) == (m, n)):
                found.add((m, n, k1))
    if not found:
        return NoModel(f"{call.label}: no reading of {_show(x1)} @ {_show(x2)} has matching "
                       "inner dimensions")
    if len({m * n * k for m, n, k in found}) > 1:
        return NoModel(f"{call.label}: {_show(x1)} @ {_show(x2)} can be read with either "
                       "operand transposed, and the shapes do not say which")
    return min(found)


def _private_format(call: Call, count: int) -> NoModel | None:
    for i, fmt in enumerate(call.formats[:count]):
        if "FRACTAL" in fmt.upper() or "C0" in fmt.upper():
            return NoModel(f"{call.label}: input {i} is in Ascend's {fmt} format, whose "
                           "shape is not the logical one")
    return None


def ascend_matmul(call: Call) -> Work | NoModel:
    """MatMul, MatMulV2, MatMulV3 (x1, x2, bias?, offset_w?)."""
    missing = need(call, 2) or _private_format(call, 2)
    if missing:
        return missing
    x1, x2 = _two_d(call, 0), _two_d(call, 1)
    if isinstance(x1, NoModel):
        return x1
    if isinstance(x2, NoModel):
        return x2
    mnk = _orient(call, x1, x2)
    if isinstance(mnk, NoModel):
        return mnk
    return _gemm(call, 0, 1, 1, *mnk, bias=2)


def ascend_batch_matmul(call: Call) -> Work | NoModel:
    """BatchMatMul, BatchMatMulV2, BatchMatMulV3 (x1 [...,M,K], x2 [...,K,N], bias?)."""
    missing = need(call, 2) or _private_format(call, 2)
    if missing:
        return missing
    s1, s2 = call.shape(0), call.shape(1)
    if len(s1) < 2 or len(s2) < 2:
        return NoModel(f"{call.label} needs operands of 2 or more dims, got {_show(s1)} and "
                       f"{_show(s2)}")
    batch_shape = broadcast(s1[:-2], s2[:-2])
    if batch_shape is None:
        return NoModel(f"{call.label}: batch dims {_show(s1)} and {_show(s2)} do not "
                       "broadcast")
    mnk = _orient(call, s1[-2:], s2[-2:])
    if isinstance(mnk, NoModel):
        return mnk
    return _gemm(call, 0, 1, prod(batch_shape), *mnk, bias=2, model="bmm")


def grouped_matmul(call: Call) -> Work | NoModel:
    """GroupedMatmul with the tokens split over experts: x [T,K], weight [E,K,N] (or
    [E,N,K]). Every token meets one expert's weight: 2*T*K*N, whatever the split; every
    expert's weight is read once."""
    missing = need(call, 2) or _private_format(call, 2)
    if missing:
        return missing
    x, w = call.shape(0), call.shape(1)
    if len(x) != 2 or len(w) != 3:
        return NoModel(f"{call.label}: only x [T,K] with weights [E,K,N] is modelled, got "
                       f"{_show(x)} and {_show(w)}")
    t, k = x
    out = call.out(0)
    n_options = {n for kk, n in (w[1:], w[:0:-1]) if kk == k
                 and (out is None or len(out) != 2 or out[1] == n)}
    if len(n_options) != 1:
        return NoModel(f"{call.label}: the weight {_show(w)} does not say N for x {_show(x)}")
    n = n_options.pop()
    dtype = need_dtype(call, 0)
    if isinstance(dtype, NoModel):
        return dtype
    out_dtype = call.out_dtype(0) or dtype
    moved = (nbytes(x, dtype) + nbytes(w, call.dtype(1) or dtype) + t * n * size(out_dtype))
    return work(2 * t * k * n, moved, "grouped_gemm", "matrix", dtype)
