"""BERT-base, Transformer-base and SET's Transformer against published totals and closed forms."""

from __future__ import annotations

import pytest

from chipsched.instances.networks.transformer import (
    bert_base,
    transformer_base,
    transformer_set_isca23,
)
from chipsched.workload import OpKind

# Hyper-parameters written out here on purpose (not imported from the module).
BERT_D, BERT_FF, BERT_L, BERT_HEADS, BERT_VOCAB = 768, 3072, 12, 12, 30522
TF_D, TF_FF, TF_N, TF_HEADS, TF_VOCAB = 512, 2048, 6, 8, 37000


def within(value: float, target: float, rel: float) -> bool:
    return abs(value - target) <= rel * target


# ---------------------------------------------------------------------------------------
# Closed forms


def bert_macs(T: int) -> int:
    d, f = BERT_D, BERT_FF
    per_layer = 4 * T * d * d + 2 * T * T * d + 2 * T * d * f
    return BERT_L * per_layer + d * d  # + pooler on the [CLS] token


def transformer_macs(Ts: int, Tt: int, vocab: int = TF_VOCAB) -> int:
    d, f = TF_D, TF_FF
    enc = 4 * Ts * d * d + 2 * Ts * Ts * d + 2 * Ts * d * f
    dec_self = 4 * Tt * d * d + 2 * Tt * Tt * d
    dec_cross = 2 * Tt * d * d + 2 * Ts * d * d + 2 * Tt * Ts * d  # q,out | k,v | QK^T, PV
    dec_ffn = 2 * Tt * d * f
    return TF_N * enc + TF_N * (dec_self + dec_cross + dec_ffn) + Tt * d * vocab


def attention_macs(w) -> int:
    return sum(ly.macs for ly in w.layers if ly.kind is OpKind.MATMUL)


# ---------------------------------------------------------------------------------------
# Parameters


def test_bert_params_match_published():
    p = bert_base().total_params
    assert within(p, 110e6, 0.03), p
    # Hugging Face BertModel (bert-base-uncased, with pooler): 109,482,240.
    assert p == 109_482_240


def test_bert_params_do_not_depend_on_seq_len():
    assert bert_base(64).total_params == bert_base(512).total_params


def test_transformer_params_match_published():
    p = transformer_base().total_params
    assert within(p, 65e6, 0.03), p


def test_transformer_shared_table_counted_once():
    w = transformer_base()
    table = TF_VOCAB * TF_D
    # in the pre-softmax projection, the one layer that reads it whole; the lookups
    # gather rows of it (the cost model charges T·d per sample, not the table)
    assert [ly.name for ly in w.layers if ly.weight_elems == table] == ["logits"]
    for name in ("src_embed", "tgt_embed"):
        ly = w.layers[w.index(name)]
        assert ly.kind is OpKind.EMBED and ly.weight_elems == 0
        assert ly.gathered_elems == TF_D * ly.H and ly.resident_weight_elems == 0
    logits = w.layers[w.index("logits")]
    assert logits.kind is OpKind.FC and logits.resident_weight_elems == table
    # Untied, the count would be ~101 M, far from the paper's 65 M.
    assert not within(w.total_params + 2 * table, 65e6, 0.03)


# ---------------------------------------------------------------------------------------
# MACs


@pytest.mark.parametrize("T", [1, 32, 128, 384, 512])
def test_bert_macs_closed_form(T):
    assert bert_base(T).total_macs == bert_macs(T)


@pytest.mark.parametrize("Ts,Tt", [(128, 128), (64, 100), (100, 64), (1, 1), (256, 31)])
def test_transformer_macs_closed_form(Ts, Tt):
    assert transformer_base(Ts, Tt).total_macs == transformer_macs(Ts, Tt)


def test_transformer_macs_vocab():
    assert transformer_base(50, 60, vocab=1000).total_macs == transformer_macs(50, 60, 1000)


def test_bert_macs_scaling_when_seq_len_doubles():
    a, b = bert_base(128), bert_base(256)
    att_a, att_b = attention_macs(a), attention_macs(b)
    assert att_a == BERT_L * 2 * 128 * 128 * BERT_D
    assert att_b == 4 * att_a  # attention is quadratic in T
    pool = BERT_D * BERT_D  # the pooler reads one token whatever T is
    lin_a = a.total_macs - att_a - pool
    lin_b = b.total_macs - att_b - pool
    assert lin_b == 2 * lin_a  # projections and FFN are linear in T
    assert 2 * a.total_macs < b.total_macs < 4 * a.total_macs


def test_transformer_macs_scaling_when_lengths_double():
    a, b = transformer_base(64, 64), transformer_base(128, 128)
    assert attention_macs(b) == 4 * attention_macs(a)
    assert b.total_macs - attention_macs(b) == 2 * (a.total_macs - attention_macs(a))


def test_transformer_cross_attention_scales_with_both_lengths():
    # Doubling only the source: decoder cross-attention matmuls double (Tt·Ts·d).
    a, b = transformer_base(64, 32), transformer_base(128, 32)
    xa = sum(ly.macs for ly in a.layers if ly.name.endswith(("_xscores", "_xcontext")))
    xb = sum(ly.macs for ly in b.layers if ly.name.endswith(("_xscores", "_xcontext")))
    assert xa == TF_N * 2 * 32 * 64 * TF_D
    assert xb == 2 * xa


# ---------------------------------------------------------------------------------------
# Structure


def test_bert_structure():
    T = 128
    w = bert_base(T)
    softmaxes = [ly for ly in w.layers if ly.kind is OpKind.SOFTMAX]
    assert [ly.name for ly in softmaxes] == [f"enc{i}_softmax" for i in range(1, 13)]
    assert all(ly.out_elems == BERT_HEADS * T * T for ly in softmaxes)
    matmuls = [ly for ly in w.layers if ly.kind is OpKind.MATMUL]
    assert len(matmuls) == 2 * BERT_L
    assert all(ly.groups == BERT_HEADS for ly in matmuls)
    assert all(ly.dims == {"G": 12, "M": T, "K": 64, "N": T}
               for ly in matmuls if ly.name.endswith("_scores"))
    assert all(ly.dims == {"G": 12, "M": T, "K": T, "N": 64}
               for ly in matmuls if ly.name.endswith("_context"))
    assert sum(ly.kind is OpKind.NORM for ly in w.layers) == 1 + 2 * BERT_L
    assert sum(ly.kind is OpKind.FC for ly in w.layers) == 6 * BERT_L + 1
    # Single output: the pooler, one token of 768 features reading 768 elements.
    assert [w.layers[i].name for i in w.sinks] == ["pooler"]
    pooler = w.index("pooler")
    assert w.layers[pooler].out_elems == BERT_D
    assert w.preds[pooler] == (w.index("enc12_norm2"),)
    assert w.edge_elems[(w.index("enc12_norm2"), pooler)] == BERT_D
    # Word + position + token type embeddings all feed the summed embedding.
    assert set(w.preds[w.index("word_embed")]) == {w.index("pos_embed"), w.index("type_embed")}
    assert w.layers[w.index("word_embed")].weight_elems == BERT_VOCAB * BERT_D


def test_bert_residuals():
    w = bert_base(16)
    for i in range(1, 13):
        prev = "embed_norm" if i == 1 else f"enc{i - 1}_norm2"
        assert set(w.preds[w.index(f"enc{i}_add1")]) == {w.index(prev), w.index(f"enc{i}_attn_out")}
        assert set(w.preds[w.index(f"enc{i}_add2")]) == {
            w.index(f"enc{i}_norm1"), w.index(f"enc{i}_ffn2")}


def test_transformer_structure():
    Ts, Tt = 100, 60
    w = transformer_base(Ts, Tt)
    softmaxes = [ly.name for ly in w.layers if ly.kind is OpKind.SOFTMAX]
    assert len(softmaxes) == TF_N + 2 * TF_N + 1
    assert sum(n.startswith("enc") for n in softmaxes) == TF_N
    assert sum(n.endswith("_xsoftmax") for n in softmaxes) == TF_N
    matmuls = [ly for ly in w.layers if ly.kind is OpKind.MATMUL]
    assert len(matmuls) == 2 * (TF_N + 2 * TF_N)
    assert all(ly.groups == TF_HEADS for ly in matmuls)
    # Score widths: encoder Ts, decoder self Tt, decoder cross Ts (keys from the source).
    for i in range(1, TF_N + 1):
        assert w.layers[w.index(f"enc{i}_scores")].dims["N"] == Ts
        assert w.layers[w.index(f"dec{i}_scores")].dims["N"] == Tt
        x = w.layers[w.index(f"dec{i}_xscores")]
        assert (x.dims["M"], x.dims["N"]) == (Tt, Ts)
        # Cross-attention K and V read the encoder output.
        for kv in ("k", "v"):
            assert w.preds[w.index(f"dec{i}_xattn_{kv}")] == (w.index("enc6_norm2"),)
    assert sum(ly.kind is OpKind.NORM for ly in w.layers) == 2 * TF_N + 3 * TF_N
    # Single output: softmax over the vocabulary at every target position.
    assert [w.layers[i].name for i in w.sinks] == ["out_softmax"]
    assert w.layers[w.sinks[0]].out_elems == Tt * TF_VOCAB
    assert w.preds[w.sinks[0]] == (w.index("logits"),)


def test_precision_and_meta():
    for w in (bert_base(precision_bytes=2), transformer_base(precision_bytes=2)):
        assert w.precision_bytes == 2
        assert "source" in w.meta and "params" in w.meta["published"]
        assert w.summary()["weight_bytes"] == 2 * w.total_params


def test_round_trip_through_file_form():
    from chipsched.workload import Workload

    w = bert_base(32)
    w2 = Workload.from_dict(w.to_dict())
    assert w2.layers == w.layers and w2.edges == w.edges
    # Tied weights (weight_elems = 0 on the lookups) survive the file form too.
    w = transformer_base(16, 24)
    w2 = Workload.from_dict(w.to_dict())
    assert w2.layers == w.layers and w2.edges == w.edges
    assert w2.total_params == w.total_params


def test_bad_lengths():
    with pytest.raises(ValueError):
        bert_base(513)
    with pytest.raises(ValueError):
        transformer_base(0, 10)


# ---------------------------------------------------------------------------------------
# SET's Transformer (Cai et al., ISCA 2023; SET-ISCA2023 src/nns/transformer.cpp)
#
# Hand derivation (T = 512 positions in both encoder and decoder, d = 512, f = 2048,
# o = 1000 output features, 6 + 6 layers, no embedding table, no LayerNorm):
#   T·d² = 512³ = 134,217,728;  T·d·f = 536,870,912;  T²·d = 134,217,728
#   fc MACs      encoder layer 4·T·d² + 2·T·d·f = 1,610,612,736 (Q, K, V, out; FFN)
#                decoder layer 8·T·d² + 2·T·d·f = 2,147,483,648 (two attentions; FFN)
#                proj T·d·o = 262,144,000 (every position)
#                6·1,610,612,736 + 6·2,147,483,648 + 262,144,000 = 22,810,722,304
#   matmul MACs  18 attentions × (Q·Kᵀ + P·V) = 18·2·T²·d = 4,831,838,208
#   SET's tool: 22.8 G weight×activation + 4.83 G activation×activation MACs.
#   Weights (fc with bias): encoder layer 4·(d² + d) + (d·f + f) + (f·d + d) = 3,150,336;
#   decoder layer 8·(d² + d) + 2,099,712 = 4,200,960; proj d·o + o = 513,000;
#   6·3,150,336 + 6·4,200,960 + 513,000 = 44,620,776 (bias-free, as SET counts:
#   44,552,192).
#   Layers: 2 input ops + 6·(7 attention + 2 adds + 2 FFN) + 6·(14 + 3 + 2) + proj = 183.

SET_T, SET_OUT = 512, 1000
SET_FC_MACS = 22_810_722_304
SET_MATMUL_MACS = 4_831_838_208
SET_PARAMS = 44_620_776
SET_LAYERS = 183


def transformer_set_isca23_macs(T: int, out: int = SET_OUT) -> tuple[int, int]:
    """(fc MACs, matmul MACs) per sample; SET runs the decoder over T positions too."""
    d, f = TF_D, TF_FF
    fc = TF_N * (4 * T * d * d + 2 * T * d * f) + TF_N * (8 * T * d * d + 2 * T * d * f)
    return fc + T * d * out, 3 * TF_N * 2 * T * T * d


def test_transformer_set_isca23_derivation_is_stable():
    assert transformer_set_isca23_macs(SET_T) == (SET_FC_MACS, SET_MATMUL_MACS)
    d, f = TF_D, TF_FF
    enc = 4 * (d * d + d) + (d * f + f) + (f * d + d)
    dec = 8 * (d * d + d) + (d * f + f) + (f * d + d)
    assert (enc, dec) == (3_150_336, 4_200_960)
    assert TF_N * (enc + dec) + d * SET_OUT + SET_OUT == SET_PARAMS
    assert 2 + TF_N * 11 + TF_N * 19 + 1 == SET_LAYERS


def test_transformer_set_isca23_totals():
    w = transformer_set_isca23()
    fc = sum(ly.macs for ly in w.layers if ly.kind is OpKind.FC)
    assert (fc, attention_macs(w)) == (SET_FC_MACS, SET_MATMUL_MACS)
    assert w.total_macs == SET_FC_MACS + SET_MATMUL_MACS
    assert w.total_params == SET_PARAMS
    assert len(w) == SET_LAYERS
    # Against SET's tool: 22.8 G + 4.83 G (rounded there).
    assert within(fc, 22.8e9, 0.001) and within(attention_macs(w), 4.83e9, 0.001)
    # SET's weights have no biases: one per fc output feature fewer.
    bias = sum(ly.K for ly in w.layers if ly.kind is OpKind.FC)
    assert w.total_params - bias == 44_552_192


@pytest.mark.parametrize("T,out", [(64, 1000), (100, 37), (1, 1)])
def test_transformer_set_isca23_macs_closed_form(T, out):
    w = transformer_set_isca23(T, out)
    fc = sum(ly.macs for ly in w.layers if ly.kind is OpKind.FC)
    assert (fc, attention_macs(w)) == transformer_set_isca23_macs(T, out)


def test_transformer_set_isca23_differs_from_transformer_base_as_set_does():
    w = transformer_set_isca23()
    kinds = {ly.kind for ly in w.layers}
    assert OpKind.EMBED not in kinds  # no embedding table (inputs are embedded already)
    assert OpKind.NORM not in kinds  # SET has residual sums but no LayerNorm
    assert sum(ly.kind is OpKind.SOFTMAX for ly in w.layers) == 3 * TF_N  # attention only
    # Decoder self- and cross-attention both span 512 × 512 positions, 8 heads of 64.
    for name in ("enc1_scores", "dec6_scores", "dec3_xscores"):
        assert w.layers[w.index(name)].dims == {"G": TF_HEADS, "M": SET_T, "K": 64,
                                                "N": SET_T}
    for kv in ("k", "v"):
        assert w.preds[w.index(f"dec2_xattn_{kv}")] == (w.index("enc6_add2"),)
    # One output: the 1000-way projection at every position, no softmax after it.
    assert [w.layers[i].name for i in w.sinks] == ["proj"]
    proj = w.layers[w.index("proj")]
    assert proj.kind is OpKind.FC and proj.dims == {"M": SET_T, "K": TF_D, "N": SET_OUT}
    assert w.preds[w.index("proj")] == (w.index("dec6_add3"),)
    assert [ly.name for ly in w.layers if ly.kind is OpKind.ELTWISE and
            not ly.name.split("_")[-1].startswith("add")] == ["src_embed", "tgt_embed"]


def test_transformer_set_isca23_registry():
    from chipsched.instances.networks import get_network, network_params

    assert get_network("transformer-set-isca23") == transformer_set_isca23()
    assert get_network("transformer_set_isca23:seq_len=64").total_macs == sum(
        transformer_set_isca23_macs(64))
    assert network_params("transformer-set-isca23") == {"seq_len": 512, "out_features": 1000,
                                                  "precision_bytes": 1}
    assert get_network("transformer").name == "transformer-base-S128-T128"
    with pytest.raises(ValueError):
        transformer_set_isca23(0)
