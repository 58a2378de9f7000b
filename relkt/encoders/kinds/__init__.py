"""The built-in encoder kinds; every module here registers its kinds (relkt.encoders.encoder_kind)."""
