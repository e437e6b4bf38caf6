"""ONNX import: models built in memory with onnx.helper (no downloaded files)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from chipsched.errors import InputError
from chipsched.instances.onnx_import import load_onnx
from chipsched.workload import OpKind

OPSET = 17


def init(name: str, shape, dtype=np.float32, value=None) -> onnx.TensorProto:
    if value is None:
        arr = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    else:
        arr = np.asarray(value, dtype=dtype).reshape(shape)
    return numpy_helper.from_array(arr, name)


def inp(name: str, shape, elem=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, list(shape))


def out(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def model(nodes, inputs, outputs, inits=(), name="net", opset=OPSET) -> onnx.ModelProto:
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return m


def conv(name, x, w, y, b=None, **attrs) -> onnx.NodeProto:
    ins = [x, w] + ([b] if b else [])
    return helper.make_node("Conv", ins, [y], name=name, **attrs)


def kinds(wl):
    return [ly.kind for ly in wl.layers]


# (1) conv → relu → maxpool → flatten → gemm --------------------------------------------
def cnn_chain() -> onnx.ModelProto:
    nodes = [
        conv("conv1", "x", "w1", "c1", "b1", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p1"], ["f1"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f1", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    inits = [init("w1", (16, 3, 3, 3)), init("b1", (16,)), init("wf", (10, 16 * 16 * 16)),
             init("bf", (10,))]
    return model(nodes, [inp("x", ["N", 3, 32, 32])], [out("y")], inits, name="cnn")


def test_cnn_chain_kinds_macs_weights():
    wl = load_onnx(cnn_chain())
    assert [ly.name for ly in wl.layers] == ["conv1", "pool1", "fc"]
    assert kinds(wl) == [OpKind.CONV, OpKind.POOL, OpKind.FC]
    c, p, f = wl.layers
    assert (c.K, c.C, c.H, c.W, c.R, c.S, c.stride, c.groups) == (16, 3, 32, 32, 3, 3, 1, 1)
    assert c.macs == 32 * 32 * 16 * 3 * 3 * 3
    assert c.weight_elems == 16 * 3 * 3 * 3 + 16
    assert c.in_elems == 3 * 32 * 32
    assert (p.K, p.H, p.W, p.R, p.S, p.stride) == (16, 16, 16, 2, 2, 2)
    assert p.ops == 16 * 16 * 16 * 4
    assert (f.K, f.C, f.H) == (10, 4096, 1)
    assert f.weight_elems == 10 * 4096 + 10
    assert f.macs == 10 * 4096
    assert wl.edges == ((0, 1, 16 * 32 * 32), (1, 2, 4096))
    assert wl.is_chain()
    assert wl.meta == {"source": "onnx:cnn"}
    assert wl.name == "cnn"
    assert wl.precision_bytes == 1


def test_precision_and_name_are_passed_through():
    wl = load_onnx(cnn_chain(), name="mine", precision_bytes=2)
    assert wl.name == "mine" and wl.precision_bytes == 2


# (2) residual block --------------------------------------------------------------------
def residual_block(bn_after_add: bool = False) -> onnx.ModelProto:
    pads = {"pads": [1, 1, 1, 1]}
    nodes = [
        conv("stem", "x", "w0", "c0", "b0", **pads),
        helper.make_node("Relu", ["c0"], ["r0"], name="stem_relu"),
        conv("conv_a", "r0", "wa", "ca", **pads),
        helper.make_node("BatchNormalization", ["ca", "g", "be", "mu", "var"], ["na"],
                         name="bn_a"),
        helper.make_node("Relu", ["na"], ["ra"], name="relu_a"),
        conv("conv_b", "ra", "wb", "cb", "bb", **pads),
        helper.make_node("Add", ["cb", "r0"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["y0"], name="out_relu"),
    ]
    inits = [init("w0", (16, 8, 3, 3)), init("b0", (16,)), init("wa", (16, 16, 3, 3)),
             init("wb", (16, 16, 3, 3)), init("bb", (16,)), init("g", (16,)),
             init("be", (16,)), init("mu", (16,)), init("var", (16,), value=np.ones(16))]
    y = "y0"
    if bn_after_add:
        nodes.append(helper.make_node("BatchNormalization", ["y0", "g", "be", "mu", "var"],
                                      ["y"], name="bn_out"))
        y = "y"
    return model(nodes, [inp("x", [1, 8, 16, 16])], [out(y)], inits, name="resblock")


def test_residual_add_is_eltwise_with_two_producers():
    wl = load_onnx(residual_block())
    assert [ly.name for ly in wl.layers] == ["stem", "conv_a", "conv_b", "add"]
    assert kinds(wl) == [OpKind.CONV] * 3 + [OpKind.ELTWISE]
    add = wl.index("add")
    assert wl.preds[add] == (wl.index("stem"), wl.index("conv_b"))
    t = 16 * 16 * 16
    assert set(wl.edges) == {(0, 1, t), (1, 2, t), (2, 3, t), (0, 3, t)}
    a = wl.layers[add]
    assert a.in_elems == 2 * t and a.ops == t and a.out_elems == t
    assert a.weight_elems == 0
    # the batch norm after conv_a is folded: conv_a had no bias, gains K shift terms
    assert wl.layers[1].weight_elems == 16 * 16 * 9 + 16
    assert wl.sinks == (add,)


def test_batch_norm_not_after_a_mac_op_is_a_norm_layer():
    wl = load_onnx(residual_block(bn_after_add=True))
    assert kinds(wl)[-1] is OpKind.NORM
    bn = wl.layers[-1]
    assert (bn.K, bn.H, bn.W) == (16, 16, 16)
    assert bn.weight_elems == 4 * 16
    assert wl.preds[len(wl) - 1] == (wl.index("add"),)


# (3) attention block -------------------------------------------------------------------
T, D, HEADS = 8, 16, 4
DH = D // HEADS


def attention() -> onnx.ModelProto:
    nodes, inits = [], []
    heads_shape = init("heads_shape", (4,), np.int64, [0, T, HEADS, DH])
    merged_shape = init("merged_shape", (3,), np.int64, [0, T, D])
    inits += [heads_shape, merged_shape, init("scale", (), value=1 / np.sqrt(DH))]
    for p in "qkv":
        inits += [init(f"W{p}", (D, D)), init(f"b{p}", (D,))]
        nodes += [
            helper.make_node("MatMul", ["x", f"W{p}"], [f"{p}0"], name=f"{p}_proj"),
            helper.make_node("Add", [f"{p}0", f"b{p}"], [f"{p}1"], name=f"{p}_bias"),
            helper.make_node("Reshape", [f"{p}1", "heads_shape"], [f"{p}2"], name=f"{p}_split"),
        ]
    nodes += [
        helper.make_node("Transpose", ["q2"], ["q"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k2"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v2"], ["v"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"], name="scores"),
        helper.make_node("Mul", ["s0", "scale"], ["s1"], name="scale_mul"),
        helper.make_node("Softmax", ["s1"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o0"], name="context"),
        helper.make_node("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["o1", "merged_shape"], ["o2"]),
        helper.make_node("MatMul", ["o2", "Wo"], ["y"], name="out_proj"),
    ]
    inits.append(init("Wo", (D, D)))
    return model(nodes, [inp("x", ["batch", T, D])], [out("y")], inits, name="attn")


def test_attention_matmul_groups_and_softmax():
    wl = load_onnx(attention())
    names = [ly.name for ly in wl.layers]
    assert names == ["q_proj", "k_proj", "v_proj", "scores", "softmax", "context", "out_proj"]
    assert kinds(wl) == [OpKind.FC] * 3 + [OpKind.MATMUL, OpKind.SOFTMAX, OpKind.MATMUL,
                                           OpKind.FC]
    q = wl.layers[0]
    assert (q.K, q.C, q.H) == (D, D, T)
    assert q.weight_elems == D * D + D  # separate bias Add folded into the fc
    scores = wl.layers[wl.index("scores")]
    assert scores.groups == HEADS
    assert scores.macs == T * T * D
    assert scores.dims == {"G": HEADS, "M": T, "K": DH, "N": T}
    assert scores.out_elems == HEADS * T * T
    assert scores.in_elems == 2 * T * D
    sm = wl.layers[wl.index("softmax")]
    assert sm.ops == 3 * HEADS * T * T
    ctx = wl.layers[wl.index("context")]
    assert ctx.groups == HEADS and ctx.macs == T * T * D
    i = wl.index
    assert wl.preds[i("scores")] == (i("q_proj"), i("k_proj"))
    assert wl.preds[i("context")] == (i("v_proj"), i("softmax"))
    assert wl.edge_elems[(i("softmax"), i("context"))] == HEADS * T * T
    assert wl.layers[-1].weight_elems == D * D
    assert wl.total_macs == 4 * T * D * D + 2 * T * T * D


def test_erf_gelu_between_two_fcs_is_folded():
    f = 32
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Div", ["h1", "sqrt2"], ["g0"]),
        helper.make_node("Erf", ["g0"], ["g1"]),
        helper.make_node("Add", ["g1", "one"], ["g2"]),
        helper.make_node("Mul", ["h1", "g2"], ["g3"]),
        helper.make_node("Mul", ["g3", "half"], ["g4"]),
        helper.make_node("MatMul", ["g4", "W2"], ["y"], name="fc2"),
    ]
    inits = [init("W1", (D, f)), init("b1", (f,)), init("W2", (f, D)),
             init("sqrt2", (), value=np.sqrt(2)), init("one", (), value=1.0),
             init("half", (), value=0.5)]
    wl = load_onnx(model(nodes, [inp("x", [1, T, D])], [out("y")], inits))
    assert [ly.name for ly in wl.layers] == ["fc1", "fc2"]
    assert wl.edges == ((0, 1, T * f),)
    assert wl.layers[0].weight_elems == D * f + f
    assert wl.layers[1].weight_elems == f * D


def test_embedding_layer_norm_and_unnamed_nodes():
    vocab = 100
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["e"]),
        helper.make_node("LayerNormalization", ["e", "ln_g", "ln_b"], ["n"], axis=-1),
        helper.make_node("MatMul", ["n", "W"], ["y"]),
        helper.make_node("MatMul", ["y", "W"], ["z"]),
    ]
    inits = [init("table", (vocab, D)), init("ln_g", (D,)), init("ln_b", (D,)),
             init("W", (D, D))]
    m = model(nodes, [inp("ids", ["b", T], TensorProto.INT64)], [out("z")], inits)
    wl = load_onnx(m)
    assert [ly.name for ly in wl.layers] == ["Gather_0", "LayerNormalization_1", "MatMul_2",
                                            "MatMul_3"]
    e, n = wl.layers[0], wl.layers[1]
    assert e.kind is OpKind.EMBED and (e.K, e.H) == (D, T)
    assert e.weight_elems == vocab * D and e.in_elems == T and e.macs == 0
    assert n.kind is OpKind.NORM and n.weight_elems == 2 * D and n.ops == 5 * T * D
    assert wl.layers[2].weight_elems == wl.layers[3].weight_elems == D * D  # shared weight


def test_depthwise_grouped_concat_and_duplicate_names():
    nodes = [
        conv("c", "x", "wd", "d", group=8, pads=[1, 1, 1, 1]),
        conv("c", "x", "wg", "g", group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["d"], ["dp"], name="p", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["dp", "g"], ["y"], name="cat", axis=1),
        helper.make_node("GlobalAveragePool", ["y"], ["z"], name="gap"),
    ]
    inits = [init("wd", (8, 1, 3, 3)), init("wg", (16, 4, 3, 3))]
    wl = load_onnx(model(nodes, [inp("x", [1, 8, 16, 16])], [out("z")], inits))
    assert [ly.name for ly in wl.layers] == ["c", "c_2", "p", "cat", "gap"]
    dw, gc, _, cat, gap = wl.layers
    assert dw.kind is OpKind.DEPTHWISE and dw.groups == 8 and dw.macs == 16 * 16 * 8 * 9
    assert gc.kind is OpKind.CONV and gc.groups == 2 and (gc.H, gc.stride) == (8, 2)
    assert gc.macs == 8 * 8 * 16 * 4 * 9
    assert cat.kind is OpKind.CONCAT and (cat.K, cat.H, cat.W) == (24, 8, 8)
    assert wl.preds[3] == (1, 2)
    assert gap.kind is OpKind.POOL and (gap.R, gap.S, gap.H, gap.W) == (8, 8, 1, 1)


# (4) unsupported ops -----------------------------------------------------------------------
def topk_model() -> onnx.ModelProto:
    nodes = [
        conv("conv", "x", "w", "c"),
        helper.make_node("Flatten", ["c"], ["f"]),
        helper.make_node("TopK", ["f", "k"], ["vals", "idx"], name="top5"),
    ]
    inits = [init("w", (4, 3, 3, 3)), init("k", (1,), np.int64, [5])]
    ys = [out("vals"), helper.make_tensor_value_info("idx", TensorProto.INT64, None)]
    return model(nodes, [inp("x", [1, 3, 8, 8])], ys, inits, name="topk")


def test_unsupported_op_raises_naming_the_op():
    with pytest.raises(InputError) as err:
        load_onnx(topk_model())
    assert err.value.field == "topk node top5 (TopK)"
    assert err.value.problem == "unsupported ONNX op"
    assert "fallback=True" in err.value.fix and "Conv" in err.value.fix
    assert "\n" not in str(err.value)


def test_unsupported_op_with_fallback_is_an_eltwise_layer():
    wl = load_onnx(topk_model(), fallback=True)
    assert [ly.name for ly in wl.layers] == ["conv", "top5"]
    top = wl.layers[1]
    assert top.kind is OpKind.ELTWISE
    assert top.ops == top.out_elems == 10  # values and indices, 5 each
    assert top.in_elems == 4 * 6 * 6
    assert wl.edges == ((0, 1, 4 * 6 * 6),)


def test_fallback_with_data_dependent_output_shape():
    nodes = [conv("conv", "x", "w", "c"), helper.make_node("NonZero", ["c"], ["nz"], name="nz")]
    m = model(nodes, [inp("x", [1, 3, 8, 8])],
              [helper.make_tensor_value_info("nz", TensorProto.INT64, None)],
              [init("w", (4, 3, 3, 3))])
    with pytest.raises(InputError, match=r"node nz \(NonZero\): unsupported ONNX op"):
        load_onnx(m)
    wl = load_onnx(m, fallback=True)
    assert wl.layers[1].ops == 4 * 6 * 6  # sized like its input


# (5) files ----------------------------------------------------------------------------------
def test_garbage_file_is_an_input_error(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x00\xffthis is not a protobuf\x13\x37" * 3)
    with pytest.raises(InputError) as err:
        load_onnx(path)
    assert err.value.field == str(path)
    assert err.value.problem.startswith("not a valid ONNX model: ")
    assert err.value.__cause__ is None and err.value.__suppress_context__


@pytest.mark.parametrize("content", [b"", b"hello world"])
def test_file_without_a_graph_is_an_input_error(tmp_path, content):
    path = tmp_path / "empty.onnx"
    path.write_bytes(content)
    with pytest.raises(InputError, match="not a valid ONNX model"):
        load_onnx(str(path))


def test_missing_file_and_bad_source(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_onnx(tmp_path / "nope.onnx")
    with pytest.raises(InputError, match="must be a path or an onnx.ModelProto"):
        load_onnx(42)  # type: ignore[arg-type]


def test_saved_model_round_trips(tmp_path):
    m = cnn_chain()
    path = tmp_path / "chain.onnx"
    onnx.save(m, str(path))
    wl = load_onnx(str(path))
    ref = load_onnx(m)
    assert wl.layers == ref.layers and wl.edges == ref.edges
    assert wl.name == "chain"
    assert wl.meta["source"] == f"onnx:{path}"
    assert wl.summary()["source"] == f"onnx:{path}"


# batch handling ------------------------------------------------------------------------
def test_symbolic_batch_is_one_and_the_callers_model_is_untouched():
    m = cnn_chain()
    before = m.SerializeToString()
    load_onnx(m)
    assert m.SerializeToString() == before
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"


def test_fixed_batch_above_one_is_rejected():
    m = cnn_chain()
    dim = m.graph.input[0].type.tensor_type.shape.dim[0]
    dim.Clear()
    dim.dim_value = 4
    with pytest.raises(InputError) as err:
        load_onnx(m)
    assert err.value.field == "cnn input 'x'"
    assert "batch dimension (the first) is 4" in err.value.problem


def test_symbolic_non_batch_dim_is_rejected():
    m = attention()
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "seq"
    with pytest.raises(InputError, match=r"dimension 1 is 'seq'"):
        load_onnx(m)


def test_exporter_shapes_with_symbolic_batch_size_custom_ops():
    nodes = [conv("conv", "x", "w", "c"),
             helper.make_node("MyOp", ["c"], ["y"], name="mine", domain="example.custom")]
    m = model(nodes, [inp("x", ["N", 3, 8, 8])], [out("y")], [init("w", (4, 3, 3, 3))])
    m.opset_import.append(helper.make_opsetid("example.custom", 1))
    m.graph.value_info.append(inp("y", ["N", 2, 6, 6]))  # only the exporter knows it
    with pytest.raises(InputError, match=r"node mine \(example.custom.MyOp\): unsupported"):
        load_onnx(m)
    wl = load_onnx(onnx.shape_inference.infer_shapes(m), fallback=True)
    assert [ly.kind for ly in wl.layers] == [OpKind.CONV, OpKind.ELTWISE]
    assert wl.layers[1].ops == 2 * 6 * 6


# (7) what today's exporters write (torch.export / dynamo style) ------------------------
def _cnn_head(pool_nodes):
    nodes = [conv("conv1", "x", "w1", "c1", "b1", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"), *pool_nodes,
             helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    inits = [init("w1", (16, 3, 3, 3)), init("b1", (16,)), init("wf", (10, 16)),
             init("bf", (10,)), init("axes", (2,), np.int64, [2, 3])]
    return model(nodes, [inp("x", ["N", 3, 32, 32])], [out("y")], inits, opset=18)


def test_reduce_mean_over_spatial_axes_is_a_global_pool():
    gap = load_onnx(_cnn_head([helper.make_node("GlobalAveragePool", ["r1"], ["p"],
                                                name="gap")]))
    dyn = load_onnx(_cnn_head([helper.make_node("ReduceMean", ["r1", "axes"], ["p"],
                                                name="gap", keepdims=1)]))
    assert kinds(dyn) == kinds(gap) == [OpKind.CONV, OpKind.POOL, OpKind.FC]
    assert dyn.total_macs == gap.total_macs == 16 * 27 * 32 * 32 + 16 * 10
    assert dyn.total_params == gap.total_params == 16 * 27 + 16 + 16 * 10 + 10
    assert dyn.layers[1].R * dyn.layers[1].S == 32 * 32 and dyn.layers[1].ops == 16 * 1024
    # opset < 18 gives the axes as an attribute
    old = model([conv("conv1", "x", "w1", "c1", "b1", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
                 helper.make_node("ReduceMean", ["c1"], ["p"], axes=[-2, -1], keepdims=0)],
                [inp("x", [1, 3, 32, 32])], [out("p")], [init("w1", (16, 3, 3, 3)),
                                                         init("b1", (16,))])
    assert kinds(load_onnx(old)) == [OpKind.CONV, OpKind.POOL]


def test_other_reductions_are_eltwise_over_their_input():
    nodes = [conv("conv", "x", "w", "c"),
             helper.make_node("ReduceSum", ["c"], ["s"], name="sum", axes=[1], keepdims=1),
             helper.make_node("Add", ["c", "s"], ["y"], name="add")]
    wl = load_onnx(model(nodes, [inp("x", [1, 3, 8, 8])], [out("y")], [init("w", (4, 3, 3, 3))]))
    red = wl.layers[wl.index("sum")]
    assert red.kind is OpKind.ELTWISE and red.ops == 4 * 6 * 6 and red.out_elems == 36


def test_attention_mask_logic_and_indexed_gathers_import_with_correct_totals():
    """A BERT-like block the way torch.export writes it: the embedding by GatherND, the
    mask from IsNaN / Not / And / Where, GatherElements by constant indices, Range and
    ConstantOfShape of constants."""
    T, d, V = 8, 16, 50
    nodes = [
        helper.make_node("Unsqueeze", ["ids", "ax2"], ["ids_u"], name="unsq"),
        helper.make_node("GatherND", ["table", "ids_u"], ["emb"], name="embed", batch_dims=0),
        helper.make_node("Gather", ["pos_table", "pos_ids"], ["pos"], name="pos", axis=0),
        helper.make_node("Add", ["emb", "pos"], ["h"], name="add_pos"),
        helper.make_node("MatMul", ["h", "wq"], ["q"], name="q"),
        helper.make_node("MatMul", ["h", "wk"], ["k"], name="k"),
        helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"], name="scores"),
        helper.make_node("IsNaN", ["scores"], ["nan"], name="isnan"),
        helper.make_node("Not", ["nan"], ["ok"], name="not"),
        helper.make_node("Cast", ["mask_in"], ["mask_b"], name="cast", to=TensorProto.BOOL),
        helper.make_node("And", ["ok", "mask_b"], ["keep"], name="and"),
        helper.make_node("Where", ["keep", "scores", "neg"], ["masked"], name="where"),
        helper.make_node("Softmax", ["masked"], ["p"], name="softmax", axis=-1),
        helper.make_node("GatherElements", ["p", "ge_idx"], ["sel"], name="ge", axis=2),
        helper.make_node("MatMul", ["sel", "wo"], ["y"], name="out"),
        helper.make_node("Range", ["zero", "tlen", "one"], ["r"], name="range"),
        helper.make_node("ConstantOfShape", ["shape"], ["zeros"], name="cos"),
    ]
    rev = np.tile(np.arange(T)[::-1], (1, T, 1))
    inits = [init("table", (V, d)), init("pos_table", (T, d)),
             init("pos_ids", (1, T), np.int64, np.arange(T)[None, :]),
             init("ax2", (1,), np.int64, [2]),
             init("wq", (d, d)), init("wk", (d, d)), init("wo", (T, d)),
             init("neg", (1,), value=[-1e4]), init("ge_idx", (1, T, T), np.int64, rev),
             init("zero", (), np.int64, 0), init("tlen", (), np.int64, T),
             init("one", (), np.int64, 1), init("shape", (1,), np.int64, [T])]
    m = model(nodes, [inp("ids", [1, T], TensorProto.INT64),
                      inp("mask_in", [1, T, T], TensorProto.INT64)],
              [out("y"), out("r"), out("zeros")], inits, opset=17)
    wl = load_onnx(m)
    names = {ly.name for ly in wl.layers}
    assert {"embed", "q", "k", "scores", "softmax", "out"} <= names
    assert wl.total_macs == 2 * T * d * d + T * T * d + T * T * d
    assert wl.total_params == V * d + T * d + 2 * d * d + T * d
    assert wl.layers[wl.index("embed")].kind is OpKind.EMBED
    # the mask logic meets the mask input in one eltwise op; IsNaN / Not fold
    assert [ly.name for ly in wl.layers if ly.kind is OpKind.ELTWISE] == ["and", "where"]


def test_fallback_is_reachable_from_the_command_line(tmp_path):
    from tests.cli_helpers import one_line_error, run

    f = tmp_path / "topk.onnx"
    onnx.save(topk_model(), f)
    one_line_error(run("show", "network", str(f)), "TopK", ":fallback=true")
    res = run("show", "network", f"{f}:fallback=true", "--json")
    assert res.exit_code == 0, res.output
    import json

    assert [ly["name"] for ly in json.loads(res.stdout)["layers"]] == ["conv", "top5"]
    one_line_error(run("show", "network", f"{f}:fallback=maybe"), "fallback", "true or false")
    one_line_error(run("show", "network", f"{f}:colour=red"), "colour", "fallback")


def test_index_tensors_are_not_weights_and_layernorm_means_are_not_pools():
    nodes = [conv("c1", "x", "w", "a"), conv("c2", "x", "w2", "b"),
             helper.make_node("ScatterElements", ["a", "idx", "b"], ["s"], name="scatter",
                              axis=1)]
    m = model(nodes, [inp("x", [1, 3, 6, 6])], [out("s")],
              [init("w", (8, 3, 3, 3)), init("w2", (8, 3, 3, 3)),
               init("idx", (1, 8, 4, 4), np.int64, np.zeros((1, 8, 4, 4)))])
    wl = load_onnx(m)
    assert wl.layers[wl.index("scatter")].weight_elems == 0
    assert wl.total_params == 2 * 8 * 27
    # a (B, T, D) mean over D (LayerNorm written out) is element-wise, not a pool
    ln = model([helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
                helper.make_node("ReduceMean", ["h"], ["mu"], name="mean", axes=[-1]),
                helper.make_node("Sub", ["h", "mu"], ["y"], name="center")],
               [inp("x", [1, 16, 64])], [out("y")], [init("w", (64, 64))])
    red = load_onnx(ln).layers[1]
    assert red.name == "mean" and red.kind is OpKind.ELTWISE and red.ops == 16 * 64


def _attention_block(static_target: bool) -> onnx.ModelProto:
    """A projection, then the heads split by Reshape and a Q·Kᵀ MatMul. With
    ``static_target`` the reshape target is a constant; otherwise it is computed as a
    TorchScript export does: Shape → Gather → Div (hidden // heads) → Cast → Unsqueeze →
    Concat, with a Slice of the shape for the leading dims — arithmetic ONNX's own data
    propagation does not follow (Div)."""
    from onnx import numpy_helper

    def const(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    inits = [numpy_helper.from_array(np.zeros((64, 64), np.float32), "W"),
             const("c2", 2), const("c4", 4), const("ax", [0]), const("heads", [4]),
             const("s0", [0]), const("s2", [2]), const("target", [1, 16, 4, 16])]
    nodes = [helper.make_node("MatMul", ["x", "W"], ["y"], name="proj")]
    if static_target:
        target = "target"
    else:
        target = "newshape"
        nodes += [
            helper.make_node("Shape", ["y"], ["s"], name="shape"),
            helper.make_node("Slice", ["s", "s0", "s2"], ["lead"], name="lead"),
            helper.make_node("Gather", ["s", "c2"], ["hid"], name="g2", axis=0),
            helper.make_node("Div", ["hid", "c4"], ["hd"], name="div"),
            helper.make_node("Cast", ["hd"], ["hdc"], name="cast", to=TensorProto.INT64),
            helper.make_node("Unsqueeze", ["hdc", "ax"], ["d1"], name="u2"),
            helper.make_node("Concat", ["lead", "heads", "d1"], ["newshape"], name="cat",
                             axis=0)]
    nodes += [
        helper.make_node("Reshape", ["y", target], ["z"], name="split_heads"),
        helper.make_node("Transpose", ["z"], ["q"], name="tq", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["z"], ["k"], name="tk", perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["q", "k"], ["att"], name="qk")]
    return model(nodes, [inp("x", [1, 16, 64])], [out("att")], inits)


def test_torchscript_shape_arithmetic_is_folded():
    """A reshape target computed from the graph's own shapes imports as the same layers
    and MACs as the constant target (issue 29: TorchScript exports of ViT, BERT, GPT-2
    were refused with "shape … unknown after shape inference")."""
    want = load_onnx(_attention_block(True))
    got = load_onnx(_attention_block(False))
    assert [(ly.name, ly.kind, ly.macs) for ly in got.layers] == \
        [(ly.name, ly.kind, ly.macs) for ly in want.layers]
    assert [ly.kind for ly in got.layers] == ["fc", "matmul"]
    assert got.layers[1].macs == 4 * 16 * 16 * 16


def test_dynamo_exports_name_layers_by_their_module_path():
    """Dynamo names nodes ``node_Conv_292``; its name-scope metadata gives the module
    path, which becomes the layer name (repeats numbered, malformed metadata ignored)."""
    def scoped(node, scopes):
        p = node.metadata_props.add()
        p.key, p.value = "pkg.torch.onnx.name_scopes", scopes
        return node

    nodes = [
        scoped(conv("node_Conv_0", "x", "w1", "c1", "b1", pads=[1, 1, 1, 1],
                    kernel_shape=[3, 3]), "['', 'features', 'features.0', 'conv2d']"),
        scoped(helper.make_node("Relu", ["c1"], ["r1"], name="node_Relu_1"),
               "['', 'features', 'features.1', 'relu']"),
        scoped(conv("node_Conv_2", "r1", "w2", "c2", kernel_shape=[1, 1]),
               "['', 'features', 'features.0', 'conv2d_1']"),  # same module again
        scoped(conv("node_Conv_3", "c2", "w3", "y", kernel_shape=[1, 1]), "not a list ["),
    ]
    inits = [init("w1", (8, 3, 3, 3)), init("b1", (8,)), init("w2", (8, 8, 1, 1)),
             init("w3", (4, 8, 1, 1))]
    wl = load_onnx(model(nodes, [inp("x", [1, 3, 8, 8])], [out("y")], inits))
    assert [ly.name for ly in wl.layers] == ["features.0", "features.0_2", "node_Conv_3"]
