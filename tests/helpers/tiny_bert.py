"""A 2-layer BERT with a 40-word vocabulary, built in the test: no download, no pretrained weights."""

import keras_hub

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "cats",
    "dog",
    "sleep",
    "sleeps",
    "hunt",
    "mice",
    "river",
    "flows",
    "sea",
    "bread",
    "flour",
    "how",
    "what",
    "where",
    "is",
    "do",
    "does",
    "long",
    "into",
    "made",
    "from",
    "at",
    "night",
    "?",
    ".",
    "##s",
    "un",
    "##known",
    "a",
    "day",
    "hours",
    "katze",
    "cafe",
]


def tiny_bert(seed: int = 0, max_length: int = 16, extra_vocab: tuple[str, ...] = ()):
    """`extra_vocab`: more words, e.g. the synthetic data's (else every synthetic text is [UNK]s, and all of its
    questions embed to one vector, which scoring refuses)."""
    import keras

    from relkt.encoders.bert_encoder import BertEncoder

    keras.utils.set_random_seed(seed)
    vocab = VOCAB + [w for w in extra_vocab if w not in VOCAB]
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=len(vocab),
        num_layers=2,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=32,
    )
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocab, lowercase=True, strip_accents=True)
    return BertEncoder(backbone, tokenizer, max_length=max_length)
