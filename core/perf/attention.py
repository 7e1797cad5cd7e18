"""Attention: softmax(Q K^T) V, forward and backward, as FlashAttention counts it.

Forward: 2*B*Hq*Sq*Sk*Dqk (Q K^T) + 2*B*Hq*Sq*Sk*Dv (P V), which is 4*B*H*Sq*Sk*D when
Dqk = Dv; the softmax is left out (a few FLOPs per score against 2*D). Backward: five
products of that size (Q K^T recomputed, dV, dP, dQ, dK): 2*B*Hq*Sq*Sk*(3*Dqk + 2*Dv), i.e.
2.5x the forward. A causal mask halves both where the call says it is causal and Sq = Sk.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from proftui.core.perf.shapes import Shape
from proftui.core.perf.work import Call, NoModel, Work, flag, nbytes, need, need_dtype, work


@dataclass(frozen=True)
class Dims:
    batch: int
    sq: int
    sk: int
    qk: int     # Hq * Dqk: the width of the Q K^T products
    pv: int     # Hq * Dv: the width of the P V products
    kv: int     # Hk * (Dqk + Dv): the elements of one K row and one V row


def _show(shape: Shape | None) -> str:
    return "not a tensor" if shape is None else "[" + ",".join(map(str, shape)) + "]"


def _heads(q: Shape, k: Shape, v: Shape, batch: int, sq: int, sk: int,
           hq: int, hk: int, d: int, dv: int) -> Dims | None:
    if d != k[-1] or hq % hk:  # grouped-query attention: Hq a multiple of Hk
        return None
    return Dims(batch, sq, sk, hq * d, hq * dv, hk * (d + dv))


def _read(layout: str, q: Shape, k: Shape, v: Shape) -> Dims | None:
    """The dims of Q, K, V in one layout; None where the shapes do not fit it."""
    if len(q) != len(k) or len(k) != len(v):
        return None
    if layout in ("BSH", "SBH"):
        if len(q) != 3:
            return None
        b, s = (0, 1) if layout == "BSH" else (1, 0)
        if q[b] != k[b] or k[b] != v[b] or k[s] != v[s] or k[2] == 0:
            return None
        # hidden sizes only: Hq*Dqk = q[2], Hk*Dqk = k[2], Hk*Dv = v[2]
        pv = q[2] * v[2] // k[2]
        if pv * k[2] != q[2] * v[2]:
            return None
        return Dims(q[b], q[s], k[s], q[2], pv, k[2] + v[2])
    if len(q) != 4:
        return None
    if layout == "BNSD":
        b, n, s = 0, 1, 2
    elif layout == "BSND":
        b, s, n = 0, 1, 2
    else:
        return None
    if q[b] != k[b] or k[b] != v[b] or k[s] != v[s] or k[n] != v[n]:
        return None
    return _heads(q, k, v, q[b], q[s], k[s], q[n], k[n], q[3], v[3])


def _flops(d: Dims, backward: bool) -> int:
    if backward:
        return 2 * d.batch * d.sq * d.sk * (3 * d.qk + 2 * d.pv)
    return 2 * d.batch * d.sq * d.sk * (d.qk + d.pv)


def _work(call: Call, d: Dims, backward: bool, causal: bool | None) -> Work | NoModel:
    dtype = need_dtype(call, 1 if backward and call.label.startswith("aten::") else 0)
    if isinstance(dtype, NoModel):
        return dtype
    flops = _flops(d, backward)
    if causal:
        if d.sq != d.sk:
            return NoModel(f"{call.label}: causal with Sq={d.sq} and Sk={d.sk}: how much the "
                           "mask removes depends on its alignment")
        flops //= 2
    elems = d.batch * (d.sq * d.qk + d.sk * d.kv + d.sq * d.pv)  # Q, K and V, O (or dO)
    if backward:
        elems += d.batch * (d.sq * d.qk + d.sk * d.kv)  # dQ, dK and dV written
    return work(flops, nbytes((elems,), dtype), "sdpa_bwd" if backward else "sdpa_fwd",
                "matrix", dtype)


# -- Kineto: (layout, first of Q/K/V, the varlen cum_seq input, is_causal's position) -------
_KINETO = {
    "aten::scaled_dot_product_attention": ("BNSD", 0, None, 5, False),
    "aten::_scaled_dot_product_flash_attention": ("BNSD", 0, None, 4, False),
    "aten::_scaled_dot_product_efficient_attention": ("BNSD", 0, None, 6, False),
    "aten::_scaled_dot_product_cudnn_attention": ("BNSD", 0, None, 6, False),
    "aten::_flash_attention_forward": ("BSND", 0, 3, 8, False),
    "aten::_scaled_dot_product_flash_attention_backward": ("BNSD", 1, 6, 11, True),
    "aten::_scaled_dot_product_efficient_attention_backward": ("BNSD", 1, None, 11, True),
    "aten::_scaled_dot_product_cudnn_attention_backward": ("BNSD", 1, None, 11, True),
    "aten::_flash_attention_backward": ("BSND", 1, 6, 11, True),
}


def kineto_attention(call: Call) -> Work | NoModel:
    layout, first, cum_seq, causal_at, backward = _KINETO[call.label]
    missing = need(call, first + 3)
    if missing:
        return missing
    if cum_seq is not None and call.shape(cum_seq) is not None:
        return NoModel(f"{call.label} with variable lengths (cum_seq): the lengths are values, "
                       "not shapes")
    q, k, v = (call.shape(first + i) for i in range(3))
    if layout == "BNSD" and len(q) > 4 and len(q) == len(k) == len(v):  # extra batch dims
        q, k, v = ((prod(s[:-3]), *s[-3:]) for s in (q, k, v))
    dims = _read(layout, q, k, v)
    if dims is None:
        return NoModel(f"{call.label}: Q {_show(q)}, K {_show(k)}, V {_show(v)} are not "
                       f"{layout} attention shapes")
    causal = flag(call.arg(causal_at))
    if causal is None:
        return NoModel(f"{call.label} needs is_causal (Kineto's Concrete Inputs)")
    return _work(call, dims, backward, causal)


# -- Ascend: the layout is an attribute the tables do not hold; the shapes settle it --------
# (backward, the atten_mask input, the inputs that hold variable lengths as values)
_ASCEND = {
    "FlashAttentionScore": (False, 6, (8, 9)),
    "FlashAttentionScoreGrad": (True, 7, (13, 14)),
    "PromptFlashAttention": (False, 4, (5, 6)),
    "IncreFlashAttention": (False, 4, (5,)),
}


def ascend_attention(call: Call) -> Work | NoModel:
    backward, mask_at, lengths = _ASCEND[call.label]
    missing = need(call, 3)
    if missing:
        return missing
    if any(call.shape(i) is not None for i in lengths):
        return NoModel(f"{call.label} with actual sequence lengths: the lengths are values, "
                       "not shapes")
    q, k, v = call.shape(0), call.shape(1), call.shape(2)
    found = {lay: d for lay in ("BSH", "SBH", "BNSD", "BSND") if (d := _read(lay, q, k, v))}
    mask = call.shape(mask_at)
    if mask is not None and len(mask) >= 2:
        fits = {lay: d for lay, d in found.items() if (d.sq, d.sk) == tuple(mask[-2:])}
        found = fits or found  # a compressed mask (2048x2048) fits none: the shapes decide
    if not found:
        return NoModel(f"{call.label}: Q {_show(q)}, K {_show(k)}, V {_show(v)} fit no "
                       "layout (BSH, SBH, BNSD, BSND); paged or packed KV is not modelled")
    if len({_flops(d, backward) for d in found.values()}) > 1:
        return NoModel(f"{call.label}: Q {_show(q)} and K {_show(k)} read as "
                       f"{' or '.join(sorted(found))} give different work, and no mask "
                       "says which")
    return _work(call, next(iter(found.values())), backward, None)
