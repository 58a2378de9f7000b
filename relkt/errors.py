"""Error types. Each message names the file/field/option at fault and, where it helps, the valid choices."""


class RelktError(Exception):
    """Base class for errors relkt raises on bad input (data, config, encoder specs)."""


class DataError(RelktError, ValueError):
    """A data file or directory is missing, malformed or lacks a field."""


class ConfigError(RelktError, ValueError):
    """An unknown option or an invalid value."""


class EncoderError(RelktError, ValueError):
    """An encoder spec that cannot be resolved or a model that cannot be loaded."""
