"""Transformer networks: BERT-base, the base Transformer of "Attention Is All You Need"
and SET's variant of it (Cai et al., ISCA 2023).

Conventions shared by the builders (see :mod:`chipsched.workload`):

* A sequence of T tokens with d features is the tensor ``(d, T, 1)``; every ``fc`` is
  applied per token (M = T rows).
* Multi-head attention is two grouped matmuls with ``groups = heads``: the scores
  ``Q·Kᵀ`` take ``a = Q (d, Tq, 1)`` and ``b = K`` and give ``(heads·Tk, Tq, 1)``
  (T_q·T_k·d MACs); the context ``P·V`` takes the probabilities ``(heads·Tk, Tq, 1)``
  and ``b = V`` and gives ``(d, Tq, 1)`` (T_q·T_k·d MACs). The 1/√d_k scale and any
  attention mask are folded into the softmax layer.
* Activations (GELU, ReLU, tanh) are folded into the preceding ``fc``; dropout is
  absent (inference).
* Layers are numbered from 1: ``enc1_attn_q`` … ``enc12_norm2``.
"""

from __future__ import annotations

from chipsched.workload import Layer, OpKind, Workload, WorkloadBuilder

# ---------------------------------------------------------------------------------------
# Shared blocks


def _attention(b: WorkloadBuilder, stem: str, x_q: str, x_kv: str, d: int, heads: int,
               cross: bool = False) -> str:
    """Multi-head attention of ``x_q`` over ``x_kv``; returns the output projection.

    Layers (``t`` is ``"x"`` for cross-attention, empty otherwise):
    ``{stem}_{t}attn_q``, ``_k``, ``_v`` (fc d→d with bias), ``{stem}_{t}scores`` and
    ``{stem}_{t}context`` (grouped matmuls, ``groups = heads``), ``{stem}_{t}softmax``
    and ``{stem}_{t}attn_out`` (fc d→d); e.g. ``enc3_scores``, ``dec3_xattn_k``.
    """
    t = "x" if cross else ""
    q = b.fc(f"{stem}_{t}attn_q", x_q, K=d)
    k = b.fc(f"{stem}_{t}attn_k", x_kv, K=d)
    v = b.fc(f"{stem}_{t}attn_v", x_kv, K=d)
    t_kv = b.shape(x_kv)[1]
    s = b.matmul(f"{stem}_{t}scores", q, k, N=heads * t_kv, groups=heads)
    s = b.softmax(f"{stem}_{t}softmax", s)
    c = b.matmul(f"{stem}_{t}context", s, v, N=d, groups=heads)
    return b.fc(f"{stem}_{t}attn_out", c, K=d)


def _ffn(b: WorkloadBuilder, p: str, x: str, d_ff: int) -> str:
    """Position-wise feed-forward: fc d→d_ff (activation folded), fc d_ff→d."""
    d = b.shape(x)[0]
    h = b.fc(f"{p}_ffn1", x, K=d_ff)
    return b.fc(f"{p}_ffn2", h, K=d)


def _residual_norm(b: WorkloadBuilder, p: str, n: int, x: str, y: str) -> str:
    """Post-LN residual: ``{p}_add{n}`` = x + y, then ``{p}_norm{n}`` = LayerNorm."""
    return b.norm(f"{p}_norm{n}", b.add(f"{p}_add{n}", x, y))


# ---------------------------------------------------------------------------------------
# BERT


#: bert-base-uncased hyper-parameters (HF ``BertConfig`` defaults).
BERT_BASE = {"vocab": 30522, "hidden": 768, "layers": 12, "heads": 12, "ffn": 3072,
             "max_positions": 512, "type_vocab": 2}


def bert_base(seq_len: int = 128, precision_bytes: int = 1, layers: int = 12) -> Workload:
    """BERT-base encoder with its pooler, on one sequence of ``seq_len`` tokens
    (``layers`` encoder layers: 12 is BERT-base; more make the deep stacks the scaling
    benchmarks use, e.g. ``bert-base:layers=437`` — about 20 K ops on the SoC).

    Source: J. Devlin, M.-W. Chang, K. Lee, K. Toutanova, "BERT: Pre-training of Deep
    Bidirectional Transformers for Language Understanding", NAACL 2019 (BERT-base:
    L=12, H=768, A=12, "110M" parameters); configuration of the Hugging Face
    checkpoint ``bert-base-uncased`` (vocab 30522, FFN 3072, 512 positions, 2 token
    types). Published total: ≈110 M parameters; ``BertModel`` with the pooler has
    109,482,240, which this workload reproduces exactly (the MLM/NSP heads are not
    included).

    Structure: three embedding lookups (word, position, token type) summed inside
    ``word_embed`` (2·d·T ops) and a LayerNorm ``embed_norm``; 12 post-LN encoder
    layers (``encN_attn_q/k/v``, ``encN_scores``, ``encN_softmax``, ``encN_context``,
    ``encN_attn_out``, ``encN_add1``, ``encN_norm1``, ``encN_ffn1`` (GELU folded),
    ``encN_ffn2``, ``encN_add2``, ``encN_norm2``); the ``pooler`` fc d→d (tanh
    folded) on the [CLS] token.

    The builder cannot slice tokens, so the pooler is added as an explicit
    :class:`Layer` with H = 1 that reads only the first token's 768 elements of the
    last encoder output (``edge_elems``).

    MACs per sample: 12·(4·T·d² + 2·T²·d + 2·T·d·d_ff) + d² (T = ``seq_len``).
    """
    c = BERT_BASE
    d, heads, d_ff, n_layers = c["hidden"], c["heads"], c["ffn"], int(layers)
    if not 1 <= seq_len <= c["max_positions"]:
        raise ValueError(f"seq_len must be in 1..{c['max_positions']}, got {seq_len}")
    if not 1 <= n_layers <= 5000:
        raise ValueError(f"layers must be in 1..5000, got {layers}")
    T = seq_len
    published = {"params": 110_000_000, "params_hf_bertmodel": 109_482_240} \
        if n_layers == c["layers"] else {}
    b = WorkloadBuilder(
        f"bert-base-T{T}" if n_layers == c["layers"] else f"bert-base-L{n_layers}-T{T}",
        precision_bytes,
        meta={
            "source": "Devlin et al., BERT, NAACL 2019 (BERT-base); HF bert-base-uncased config"
                      + ("" if n_layers == c["layers"] else f", {n_layers} encoder layers"),
            "published": published,
            "seq_len": T,
            "config": {**c, "layers": n_layers},
        },
    )
    ids = b.input("input_ids", (1, T, 1))
    pos_ids = b.input("position_ids", (1, T, 1))
    type_ids = b.input("token_type_ids", (1, T, 1))
    pos = b.embed("pos_embed", pos_ids, c["max_positions"], d)
    typ = b.embed("type_embed", type_ids, c["type_vocab"], d)
    x = b.embed("word_embed", ids, c["vocab"], d, pos, typ)
    x = b.norm("embed_norm", x)

    for i in range(1, n_layers + 1):
        p = f"enc{i}"
        a = _attention(b, p, x, x, d, heads)
        x = _residual_norm(b, p, 1, x, a)
        f = _ffn(b, p, x, d_ff)
        x = _residual_norm(b, p, 2, x, f)

    pooler = Layer("pooler", OpKind.FC, K=d, C=d, H=1, W=1, in_elems=d,
                   weight_elems=d * d + d)
    b.add_layer(pooler, [x], edge_elems={x: d})
    return b.build()


# ---------------------------------------------------------------------------------------
# Transformer (Vaswani et al.)


#: Base model of Vaswani et al. 2017, Table 3.
TRANSFORMER_BASE = {"d_model": 512, "heads": 8, "ffn": 2048, "enc_layers": 6, "dec_layers": 6}


def transformer_base(src_len: int = 128, tgt_len: int = 128, vocab: int = 37000,
                     precision_bytes: int = 1) -> Workload:
    """The base Transformer (encoder–decoder) for one sentence pair.

    Source: A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, Table 3
    row "base": N = 6, d_model = 512, d_ff = 2048, h = 8, d_k = d_v = 64; published
    total 65 M parameters. ``vocab`` defaults to the shared source–target BPE
    vocabulary of about 37000 tokens of WMT 2014 English–German (Section 5.1).

    Modelling choices:

    * Shared embeddings (Section 3.4): one vocab×d_model table serves the source
      embedding, the target embedding and the pre-softmax projection. It is counted
      once, in ``logits`` — the one layer that reads it whole (no bias, as in the tied
      tensor2tensor implementation); ``src_embed`` and ``tgt_embed`` gather T rows of
      it (``weight_elems = 0``: the cost model reads their gathered rows, not a table,
      docs/cost-model.md §3). The √d_model scaling of the embeddings is not counted.
    * Sinusoidal positional encodings have no parameters: they are network inputs
      ``src_pos_enc`` / ``tgt_pos_enc`` of shape ``(d_model, T, 1)`` (a constant
      table), added inside the embed layers (d_model·T ops each).
    * Post-LN residuals (``LayerNorm(x + Sublayer(x))``), no final LayerNorm.
    * The decoder runs once over all ``tgt_len`` target tokens (teacher forcing /
      training-style single pass), not token by token with a KV cache. The causal
      mask of the decoder self-attention is folded into its softmax; the scores and
      context are computed densely (T_tgt² entries, not T_tgt·(T_tgt+1)/2).
    * Cross-attention: the K and V projections of the encoder output are computed in
      every decoder layer (each has its own weights), on ``src_len`` tokens.
    * Output: ``logits`` fc d_model→vocab on every target position, then
      ``out_softmax``.

    With these choices the count is 63,082,496 parameters at vocab 37000 (2.95 %
    below the published, rounded 65 M; the paper does not state its exact count).

    MACs per sample (Ts = ``src_len``, Tt = ``tgt_len``, d = d_model):
    6·(4·Ts·d² + 2·Ts²·d + 2·Ts·d·d_ff)
    + 6·(6·Tt·d² + 2·Ts·d² + 2·Tt²·d + 2·Tt·Ts·d + 2·Tt·d·d_ff) + Tt·d·vocab.
    """
    c = TRANSFORMER_BASE
    d, heads, d_ff = c["d_model"], c["heads"], c["ffn"]
    Ts, Tt = src_len, tgt_len
    if Ts < 1 or Tt < 1 or vocab < 1:
        raise ValueError("src_len, tgt_len and vocab must be positive")
    b = WorkloadBuilder(
        f"transformer-base-S{Ts}-T{Tt}", precision_bytes,
        meta={
            "source": "Vaswani et al., Attention Is All You Need, NeurIPS 2017, Table 3 (base)",
            "published": {"params": 65_000_000},
            "src_len": Ts, "tgt_len": Tt, "vocab": vocab,
            "config": dict(c),
            "notes": "shared embedding/pre-softmax table counted once (logits); "
                     "decoder modelled as one teacher-forced pass over tgt_len tokens",
        },
    )
    # Encoder.
    src_ids = b.input("src_ids", (1, Ts, 1))
    src_pos = b.input("src_pos_enc", (d, Ts, 1))
    # the lookups gather rows of the shared table, which is counted in ``logits``
    src_embed = Layer("src_embed", OpKind.EMBED, K=d, C=1, H=Ts, W=1,
                      in_elems=Ts + d * Ts, weight_elems=0, ops=d * Ts)
    x = b.add_layer(src_embed, [src_ids, src_pos])
    for i in range(1, c["enc_layers"] + 1):
        p = f"enc{i}"
        a = _attention(b, p, x, x, d, heads)
        x = _residual_norm(b, p, 1, x, a)
        f = _ffn(b, p, x, d_ff)
        x = _residual_norm(b, p, 2, x, f)
    memory = x

    # Decoder: the target embedding gathers rows of the same table.
    tgt_ids = b.input("tgt_ids", (1, Tt, 1))
    tgt_pos = b.input("tgt_pos_enc", (d, Tt, 1))
    tgt_embed = Layer("tgt_embed", OpKind.EMBED, K=d, C=1, H=Tt, W=1,
                      in_elems=Tt + d * Tt, weight_elems=0, ops=d * Tt)
    y = b.add_layer(tgt_embed, [tgt_ids, tgt_pos])
    for i in range(1, c["dec_layers"] + 1):
        p = f"dec{i}"
        a = _attention(b, p, y, y, d, heads)  # masked self-attention
        y = _residual_norm(b, p, 1, y, a)
        a = _attention(b, p, y, memory, d, heads, cross=True)  # encoder-decoder attention
        y = _residual_norm(b, p, 2, y, a)
        f = _ffn(b, p, y, d_ff)
        y = _residual_norm(b, p, 3, y, f)

    # Pre-softmax projection: the shared table itself (read whole), no bias.
    logits = Layer("logits", OpKind.FC, K=vocab, C=d, H=Tt, W=1, in_elems=d * Tt,
                   weight_elems=vocab * d)
    z = b.add_layer(logits, [y])
    b.softmax("out_softmax", z)
    return b.build()


# ---------------------------------------------------------------------------------------
# SET's Transformer (Cai et al., ISCA 2023)


def transformer_set_isca23(seq_len: int = 512, out_features: int = 1000,
                    precision_bytes: int = 1) -> Workload:
    """The Transformer of SET's evaluation: base dimensions, 512-token sequences.

    (SET is the scheduler of Cai et al.; this is not the "Set Transformer" of Lee et al.
    2019.)

    Source: J. Cai et al., "Inter-layer Scheduling Space Definition and Exploration for
    Tiled Accelerators", ISCA 2023, and its tool (github.com/SET-Scheduling-Project/
    SET-ISCA2023, ``src/nns/transformer.cpp``); dimensions of the base Transformer of
    Vaswani et al. 2017: d_model 512, 8 heads of 64, FFN 2048, 6 encoder and 6 decoder
    layers. What SET models, and this workload follows:

    * no embedding table and no positional-encoding weights: the inputs ``src`` and
      ``tgt`` are already-embedded ``(512, T, 1)`` sequences, each passed through one
      element-wise op (``src_embed`` / ``tgt_embed``, ``eltwise``, d·T ops; SET's
      ``word_embed_enc`` / ``_dec`` point-wise layers);
    * encoder and decoder both run over ``seq_len`` = 512 positions; the decoder
      self-attention is dense over 512 target positions (no causal mask, no KV cache,
      one pass), and its cross-attention takes K and V from the last encoder layer;
    * attention as in :func:`transformer_base`: fc Q, K, V (d→d), ``scores`` Q·Kᵀ and
      ``context`` P·V as grouped ``matmul`` (groups = heads), a ``softmax`` between
      them (SET's point-wise layer on the scores), the output fc. SET builds K as 8
      per-head 512→64 convs, 8 transposes and a gather; one fc d→d has the same MACs;
    * residual sums (``add``) but **no LayerNorm** (SET has none), so no norm layers;
    * the output projection ``proj`` is an fc d→``out_features`` (1000) applied at
      every one of the 512 positions, with no softmax after it.

    Our fc layers keep a bias (the convention of this library); SET's weights have none.

    Derivation (T = ``seq_len``, d = 512, f = 2048, o = ``out_features``):
    weight×activation MACs (fc) = 6·(4·T·d² + 2·T·d·f) [encoder: Q, K, V, out, FFN]
    + 6·(8·T·d² + 2·T·d·f) [decoder: two attentions, FFN] + T·d·o [proj]; at T = 512
    T·d² = 512³ = 134,217,728 and T·d·f = 536,870,912, so 6·1,610,612,736 +
    6·2,147,483,648 + 262,144,000 = 22,810,722,304. Activation×activation MACs
    (matmul) = 18 attentions × 2·T²·d = 18·268,435,456 = 4,831,838,208. Total
    27,642,560,512 MACs per sample: SET's tool gives the same 22.8 G + 4.83 G.
    Parameters = 6·(4·(d² + d) + 2·d·f + f + d) + 6·(8·(d² + d) + 2·d·f + f + d)
    + (d·o + o) = 6·3,150,336 + 6·4,200,960 + 513,000 = 44,620,776 (SET's bias-free
    count: 44,552,192, 68,584 fewer).

    183 layers: 2 input ops, 6 × 11 encoder layers (7 attention layers, 2 adds, 2 FFN
    fcs), 6 × 19 decoder layers (14 attention layers, 3 adds, 2 FFN fcs), ``proj``. SET's
    own list has 471: 23 per attention (its per-head K convs, transposes and gather)
    instead of our 7.
    """
    c = TRANSFORMER_BASE
    d, heads, d_ff = c["d_model"], c["heads"], c["ffn"]
    T = seq_len
    if T < 1 or out_features < 1:
        raise ValueError("seq_len and out_features must be positive")
    b = WorkloadBuilder(
        f"transformer-set-isca23-T{T}", precision_bytes,
        meta={
            "source": "Cai et al., ISCA 2023 (SET), SET-ISCA2023 src/nns/transformer.cpp; "
                      "base dimensions of Vaswani et al. 2017",
            "published": {"macs": 27_640_000_000, "weight_macs": 22_810_000_000,
                          "attention_macs": 4_830_000_000,
                          "note": "per sample at T = 512, measured with SET's tool; "
                                  "the paper prints no totals"},
            "seq_len": T, "out_features": out_features,
            "config": dict(c),
            "notes": "no embedding table, no LayerNorm; decoder dense over seq_len "
                     "target positions; proj on every position",
        },
    )
    src = b.input("src", (d, T, 1))
    x = b.eltwise("src_embed", src)
    for i in range(1, c["enc_layers"] + 1):
        p = f"enc{i}"
        a = _attention(b, p, x, x, d, heads)
        x = b.add(f"{p}_add1", x, a)
        f = _ffn(b, p, x, d_ff)
        x = b.add(f"{p}_add2", x, f)
    memory = x

    tgt = b.input("tgt", (d, T, 1))
    y = b.eltwise("tgt_embed", tgt)
    for i in range(1, c["dec_layers"] + 1):
        p = f"dec{i}"
        a = _attention(b, p, y, y, d, heads)
        y = b.add(f"{p}_add1", y, a)
        a = _attention(b, p, y, memory, d, heads, cross=True)
        y = b.add(f"{p}_add2", y, a)
        f = _ffn(b, p, y, d_ff)
        y = b.add(f"{p}_add3", y, f)
    b.fc("proj", y, K=out_features)
    return b.build()
