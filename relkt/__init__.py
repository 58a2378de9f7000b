"""relkt: CL-ReLKT cross-lingual answer-retrieval training, scored on the LAReQA pool.

Importing relkt changes nothing in the process: the CLIs (`relkt.cli.run_cli`) quiet TensorFlow's start-up logs."""

__version__ = "0.1.0"

# CL-ReLKT's Eq. 2 weights at the paper's values, by their `distill.weights` keys: the one fact the config's defaults
# (relkt.config) and the loss (relkt.losses) both read, kept here because neither may import the other.
PAPER_WEIGHTS = {"beta": 0.001, "lam": 1.0, "omega": 0.01}

# What a setting that names languages or sources writes for "every one found" (relkt.config.sections.Names): an empty
# list never means it. Read such a setting with `chosen` (the config and the data code both do; neither imports the
# other).
ALL = "all"


def chosen(value, found):
    """The names a `Names` setting lists, or every one of `found` when it says `all`."""
    return list(found) if value == ALL else list(value)


def named(value):
    """The names a `Names` setting lists, or None when it says `all`."""
    return None if value == ALL else list(value)
