"""Perf models, each worked by hand: the arithmetic is in the comments."""

from __future__ import annotations

import re
from pathlib import Path

from proftui.core.perf.models import MODELS, RULES, NoModel, Work, op_work

BF16, FP32 = "c10::BFloat16", "float"
ROOT = Path(__file__).resolve().parents[2]


def _work(result: Work | NoModel) -> Work:
    assert isinstance(result, Work), result
    return result


# -- GEMM -----------------------------------------------------------------------------------


def test_mm() -> None:
    w = _work(op_work("aten::mm", [(4096, 4096), (4096, 4096)], [BF16, BF16]))
    # 2*4096^3 = 137,438,953,472; three 4096^2 bf16 matrices: 3*16,777,216*2 = 100,663,296
    assert (w.flops, w.bytes, w.model, w.unit, w.dtype) == (
        137_438_953_472, 100_663_296, "gemm", "matrix", "bf16")


def test_addmm_counts_its_bias() -> None:
    w = _work(op_work("aten::addmm", [(512,), (64, 256), (256, 512)], [FP32] * 3,
                      concrete=["", "", "", "1", "1"]))
    # 2*64*512*256 = 16,777,216 + the bias add 64*512 = 32,768 -> 16,809,984
    # (64*256 + 256*512 + 512 + 64*512) * 4 = (16384+131072+512+32768)*4 = 722,944
    assert (w.flops, w.bytes) == (16_809_984, 722_944)


def test_linear_weight_is_out_by_in() -> None:
    w = _work(op_work("aten::linear", [(8, 128, 1024), (4096, 1024), (4096,)], [BF16] * 3))
    # M = 8*128 = 1024, K = 1024, N = 4096: 2*1024*4096*1024 = 8,589,934,592 + 1024*4096
    # bytes: (1024*1024 + 4096*1024 + 4096 + 1024*4096) * 2 = 18,882,560
    assert (w.flops, w.bytes) == (8_589_934_592 + 4_194_304, 18_882_560)
    assert isinstance(op_work("aten::linear", [(8, 1000), (4096, 1024)], [BF16] * 2), NoModel)


def test_bmm_and_baddbmm() -> None:
    w = _work(op_work("aten::bmm", [(16, 128, 64), (16, 64, 256)], [BF16] * 2))
    # 2*16*128*256*64 = 67,108,864
    # (16*128*64 + 16*64*256 + 16*128*256)*2 = (131,072 + 262,144 + 524,288)*2 = 1,835,008
    assert (w.flops, w.bytes, w.model) == (67_108_864, 1_835_008, "bmm")
    w = _work(op_work("aten::baddbmm", [(16, 128, 256), (16, 128, 64), (16, 64, 256)],
                      [BF16] * 3))
    # + the added C: 16*128*256 = 524,288 FLOPs and 1,048,576 bytes read
    assert (w.flops, w.bytes) == (67_108_864 + 524_288, 1_835_008 + 1_048_576)


def test_matmul_broadcasts_its_batch() -> None:
    w = _work(op_work("aten::matmul", [(4, 1, 32, 64), (3, 64, 16)], [FP32] * 2))
    # batch (4,1) x (3,) -> (4,3) = 12; 2*12*32*16*64 = 786,432
    # A read once 4*32*64 = 8192, B 3*64*16 = 3072, C 12*32*16 = 6144: 17,408 * 4 = 69,632
    assert (w.flops, w.bytes, w.model) == (786_432, 69_632, "bmm")
    w = _work(op_work("aten::matmul", [(64,), (64, 16)], [FP32] * 2))
    assert w.flops == 2 * 16 * 64  # a vector times a matrix


def test_ascend_matmul_transposes_from_shapes() -> None:
    # x2 is stored [N,K] (transpose_x2): only that reading has matching inner dims
    w = _work(op_work("MatMulV2", [(32, 9216), (4096, 9216), (4096,)], ["DT_BF16"] * 3,
                      op_type="MatMulV2", outputs=[(32, 4096)]))
    # 2*32*4096*9216 = 2,415,919,104 + bias 32*4096 = 131,072
    # (32*9216 + 4096*9216 + 4096 + 32*4096)*2 = 76,357,632
    assert (w.flops, w.bytes) == (2_416_050_176, 76_357_632)


def test_ascend_matmul_says_when_shapes_cannot_tell() -> None:
    # [64,64] @ [64,128]: fine either way for x1; but [128,64] @ [128,64] read as x1^T @ x2
    # (M=64,N=64,K=128) or x1 @ x2^T (M=128,N=128,K=64) differ, and no output says which
    no = op_work("n", [(128, 64), (128, 64)], ["FLOAT16"] * 2, op_type="MatMulV3")
    assert isinstance(no, NoModel) and "transposed" in no.reason
    w = _work(op_work("n", [(128, 64), (128, 64)], ["FLOAT16"] * 2, op_type="MatMulV3",
                      outputs=[(128, 128)]))
    assert w.flops == 2 * 128 * 128 * 64
    nz = op_work("n", [(32, 64), (4, 2, 16, 16)], ["FLOAT16"] * 2, op_type="MatMulV2",
                 formats=["ND", "FRACTAL_NZ"])
    assert isinstance(nz, NoModel) and "FRACTAL_NZ" in nz.reason


def test_ascend_batch_matmul_and_grouped() -> None:
    w = _work(op_work("b", [(8, 128, 64), (8, 128, 64)], ["DT_BF16"] * 2,
                      op_type="BatchMatMulV2", outputs=[(8, 128, 128)]))
    assert w.flops == 2 * 8 * 128 * 128 * 64  # x2 transposed: [8,128,64]^T
    g = _work(op_work("g", [(1000, 512), (8, 512, 2048), (8,)], ["DT_BF16", "DT_BF16",
                      "INT64"], op_type="GroupedMatmul", outputs=[(1000, 2048)]))
    # every token meets one expert: 2*1000*512*2048 = 2,097,152,000
    # (1000*512 + 8*512*2048 + 1000*2048)*2 = (512000+8388608+2048000)*2 = 21,897,216
    assert (g.flops, g.bytes, g.model) == (2_097_152_000, 21_897_216, "grouped_gemm")


# -- convolution ----------------------------------------------------------------------------

CONV_ARGS = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]


def test_conv2d_forward_from_concrete_inputs() -> None:
    w = _work(op_work("aten::convolution", [(8, 64, 56, 56), (128, 64, 3, 3), (128,)],
                      [FP32] * 3, concrete=CONV_ARGS))
    # out: (56 + 2*1 - 1*(3-1) - 1)//2 + 1 = 28 -> [8,128,28,28] = 802,816 elements
    # 2*802,816*64*9 = 924,844,032 + bias 802,816 = 925,646,848
    # (8*64*56*56 + 128*64*9 + 128 + 802,816)*4 = (1,605,632+73,728+128+802,816)*4
    assert (w.flops, w.bytes, w.model) == (925_646_848, 9_929_216, "conv_fwd")


def test_conv3d_grouped_and_without_args() -> None:
    args = ["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "4"]
    w = _work(op_work("aten::_convolution", [(2, 8, 4, 10, 10), (16, 2, 1, 3, 3), None],
                      [BF16] * 3, concrete=args + ["False", "False", "True", "True"]))
    # out [2,16,4,8,8] = 8192 elements (D 4, H and W 10-3+1 = 8); each pairs with
    # Cin/g*k = 2*1*3*3 = 18 inputs: 2*8192*18 = 294,912
    assert w.flops == 294_912
    no = op_work("aten::convolution", [(8, 64, 56, 56), (128, 64, 3, 3)], [FP32] * 2)
    assert isinstance(no, NoModel) and "Concrete Inputs" in no.reason


def test_conv_backward_follows_output_mask() -> None:
    dy, x, wt = (8, 128, 28, 28), (8, 64, 56, 56), (128, 64, 3, 3)
    args = ["", "", "", "[128]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]
    both = _work(op_work("aten::convolution_backward", [dy, x, wt], [FP32] * 3,
                         concrete=[*args, "[True, True, True]"]))
    # each gradient 2*802,816*576 = 924,844,032; bias prod(dy) = 802,816
    assert (both.flops, both.model) == (2 * 924_844_032 + 802_816, "conv_bwd")
    data = _work(op_work("aten::convolution_backward", [dy, x, wt], [FP32] * 3,
                         concrete=[*args, "[True, False, False]"]))
    # dy + w read, dx written: (802,816 + 73,728 + 1,605,632)*4 = 9,928,704
    assert (data.flops, data.bytes, data.model) == (924_844_032, 9_928_704, "conv_bwd_data")


def test_ascend_conv_from_output_shapes() -> None:
    w = _work(op_work("c", [(8, 64, 56, 56), (128, 64, 3, 3), (128,)], ["FLOAT"] * 3,
                      op_type="Conv2D", outputs=[(8, 128, 28, 28)],
                      formats=["NCHW", "NCHW", "ND"]))
    assert w.flops == 925_646_848  # as the Kineto case above
    nc1 = op_work("c", [(8, 4, 56, 56, 16), (36, 8, 16, 16)], ["FLOAT16"] * 2,
                  op_type="Conv2D", outputs=[(8, 8, 28, 28, 16)],
                  formats=["NC1HWC0", "FRACTAL_Z"])
    assert isinstance(nc1, NoModel) and "NC1HWC0" in nc1.reason
    # a real row: the size vector in NCHW, the filter in FRACTAL_Z, dy in NC1HWC0
    grad = op_work("c", [(4,), (288, 16, 16, 8), (32, 32, 13, 13, 8)], ["INT32"] + ["FLOAT16"]
                   * 2, op_type="Conv2DBackpropInput", outputs=[(32, 32, 13, 13, 8)],
                   formats=["NCHW", "FRACTAL_Z", "NC1HWC0"])
    assert isinstance(grad, NoModel) and "FRACTAL_Z" in grad.reason
    dx = _work(op_work("c", [(4,), (128, 64, 3, 3), (8, 128, 28, 28)], ["INT32", "FLOAT",
                       "FLOAT"], op_type="Conv2DBackpropInput", outputs=[(8, 64, 56, 56)],
                       formats=["ND", "NCHW", "NCHW"]))
    dw = _work(op_work("c", [(8, 64, 56, 56), (4,), (8, 128, 28, 28)], ["FLOAT", "INT32",
                       "FLOAT"], op_type="Conv2DBackpropFilter", outputs=[(128, 64, 3, 3)],
                       formats=["NCHW", "ND", "NCHW"]))
    assert (dx.flops, dx.model, dw.flops, dw.model) == (
        924_844_032, "conv_bwd_data", 924_844_032, "conv_bwd_weight")


# -- attention ------------------------------------------------------------------------------


def test_sdpa_flash_forward_and_causal() -> None:
    q = (2, 16, 1024, 64)
    args = ["", "", "", "0.0", "False", "False", ""]
    w = _work(op_work("aten::_scaled_dot_product_flash_attention", [q, q, q], [BF16] * 3,
                      concrete=args))
    # 4*B*H*Sq*Sk*D = 4*2*16*1024*1024*64 = 8,589,934,592
    # Q, K, V read, O written: 4 * 2*16*1024*64 * 2 bytes = 16,777,216
    assert (w.flops, w.bytes, w.model) == (8_589_934_592, 16_777_216, "sdpa_fwd")
    causal = _work(op_work("aten::_scaled_dot_product_flash_attention", [q, q, q], [BF16] * 3,
                           concrete=["", "", "", "0.0", "True", "False", ""]))
    assert causal.flops == 8_589_934_592 // 2
    unknown = op_work("aten::_scaled_dot_product_flash_attention", [q, q, q], [BF16] * 3)
    assert isinstance(unknown, NoModel) and "is_causal" in unknown.reason


def test_flash_backward_is_two_and_a_half_forwards() -> None:
    q = (2, 1024, 16, 64)  # _flash_attention_backward's layout is [B, S, H, D]
    args = [""] * 11 + ["False"]
    w = _work(op_work("aten::_flash_attention_backward", [q, q, q, q, q, (2, 16, 1024)],
                      [BF16] * 6, concrete=args))
    # 2.5 * 8,589,934,592 = 21,474,836,480; Q,K,V,dO read + dQ,dK,dV written: 7*2,097,152*2
    assert (w.flops, w.bytes, w.model) == (21_474_836_480, 29_360_128, "sdpa_bwd")


def test_gqa_counts_query_heads() -> None:
    q, kv = (1, 32, 512, 128), (1, 8, 512, 128)
    w = _work(op_work("aten::scaled_dot_product_attention", [q, kv, kv], [BF16] * 3,
                      concrete=["", "", "", "", "0.0", "False", "", "True"]))
    # 4*1*32*512*512*128 = 4,294,967,296; bytes (Q 2,097,152 + K,V 2*524,288 + O 2,097,152)*2
    assert (w.flops, w.bytes) == (4_294_967_296, 10_485_760)


def test_ascend_flash_attention_layout_from_the_mask() -> None:
    # a real kernel_details row: SBH [8192, 2, 640], atten_mask [1,1,8192,8192]
    shapes = [(8192, 2, 640)] * 3 + [None, (83886112,), None, (1, 1, 8192, 8192)]
    dtypes = "DT_BF16;DT_BF16;DT_BF16;FLOAT;UINT8;FLOAT;DT_BF16".split(";")
    w = _work(op_work("FlashAttentionScore", shapes, dtypes, op_type="FlashAttentionScore"))
    # SBH: S=8192, B=2, H=640: 4*2*8192*8192*640 = 343,597,383,680 (dense: sparse_mode is
    # not in the table); Q, K, V, O: 4 * 8192*2*640 * 2 bytes = 83,886,080
    assert (w.flops, w.bytes) == (343_597_383_680, 83_886_080)
    no_mask = op_work("FlashAttentionScore", shapes[:3], dtypes[:3],
                      op_type="FlashAttentionScore")
    assert isinstance(no_mask, NoModel) and "BSH or SBH" in no_mask.reason
    varlen = op_work("FlashAttentionScore", [*shapes, None, (4,), (4,)], [*dtypes, "", "INT64",
                     "INT64"], op_type="FlashAttentionScore")
    assert isinstance(varlen, NoModel)


def test_ascend_flash_attention_bnsd_grad() -> None:
    q = (1, 8, 2048, 128)
    # read as BNSD (S=2048) or BSND (S=8, N=2048) the work differs: without a mask, no model
    alone = op_work("g", [q, q, q, q], ["FLOAT16"] * 4, op_type="FlashAttentionScoreGrad")
    assert isinstance(alone, NoModel) and "BNSD or BSND" in alone.reason
    # the atten_mask (input 7) is [2048, 2048]: BNSD. 4*1*8*2048*2048*128 = 17,179,869,184
    # * 2.5 = 42,949,672,960; Q,K,V,dO + dQ,dK,dV: 7 * 2,097,152 elements * 2 bytes
    w = _work(op_work("g", [q, q, q, q, None, None, None, (2048, 2048)],
                      ["FLOAT16"] * 4 + ["", "", "", "BOOL"], op_type="FlashAttentionScoreGrad"))
    assert (w.flops, w.bytes, w.model) == (42_949_672_960, 29_360_128, "sdpa_bwd")


def test_paged_incre_flash_attention_is_not_guessed() -> None:
    no = op_work("i", [(4, 1, 4096), (512, 128, 512), (512, 128, 512)], ["FLOAT16"] * 3,
                 op_type="IncreFlashAttention")
    assert isinstance(no, NoModel)


# -- vector ops -----------------------------------------------------------------------------


def test_layer_norm_and_rms_norm() -> None:
    w = _work(op_work("aten::layer_norm", [(4, 512, 1024), None, (1024,), (1024,)],
                      [BF16, "", BF16, BF16], concrete=["", "[1024]", "", "", "1e-05", "True"]))
    # n = 2,097,152; 6 + weight + bias = 8 per element; bytes (2n + 2*1024)*2
    assert (w.flops, w.bytes, w.unit) == (16_777_216, 8_392_704, "vector")
    r = _work(op_work("r", [(4, 512, 1024), (1024,)], ["DT_BF16"] * 2, op_type="RmsNorm"))
    assert (r.flops, r.bytes, r.model) == (4 * 2_097_152, 8_390_656, "rms_norm")


def test_softmax() -> None:
    w = _work(op_work("aten::_softmax", [(8, 1024, 1024)], [FP32],
                      concrete=["", "-1", "False"]))
    assert (w.flops, w.bytes) == (5 * 8_388_608, 2 * 8_388_608 * 4)
    half = _work(op_work("aten::_softmax", [(8, 1024, 1024)], ["c10::Half"],
                         concrete=["", "-1", "True"]))
    assert half.bytes == 8_388_608 * (2 + 4)  # half_to_float writes fp32


def test_elementwise_bytes_from_dtypes() -> None:
    w = _work(op_work("aten::add", [(1024, 1024), (1024,), None], [BF16, FP32, "Scalar"]))
    # broadcast [1024,1024]; out dtype the larger (fp32): 1,048,576*2 + 1024*4 + 1,048,576*4
    assert (w.flops, w.bytes, w.dtype) == (1_048_576, 6_295_552, "fp32")
    s = _work(op_work("aten::mul_", [(256, 256), None], [BF16, "Scalar"]))
    assert (s.flops, s.bytes) == (65_536, 2 * 65_536 * 2)
    c = _work(op_work("Cast", [(1000,)], ["FLOAT"], op_type="Cast", output_dtypes=["DT_BF16"]))
    assert (c.flops, c.bytes, c.model) == (0, 6000, "copy")
    z = _work(op_work("ZerosLike", [(232138240,)], ["FLOAT"], op_type="ZerosLike"))
    assert z.bytes == 232138240 * 4


def test_no_model_is_said_never_guessed() -> None:
    assert op_work("aten::foo", [(1,)], [FP32]) == NoModel("no model for aten::foo")
    assert op_work("x", [(2, 3)], ["FLOAT"], op_type="NonZero") == NoModel(
        "no model for NonZero")
    assert op_work("aten::mm", [(4, 4)], [FP32]) == NoModel("aten::mm needs 2 input shapes, "
                                                             "got 1")
    assert isinstance(op_work("aten::mm", [], []), NoModel)
    assert isinstance(op_work("aten::mm", [(4, 3), (4, 5)], [FP32] * 2), NoModel)
    assert isinstance(op_work("aten::mm", [(4, 4), (4, 4)], ["Scalar"] * 2), NoModel)


def test_definitions_page_lists_every_model() -> None:
    page = (ROOT / "docs" / "definitions.md").read_text()
    section = page[page.index("## Op efficiency"):]
    section = section[:section.index("### The hardware's peaks")]
    ids = {m.id for m in MODELS}
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE))
    assert listed == ids
    assert len(RULES) > 80
