"""relkt: CL-ReLKT cross-lingual answer-retrieval training, scored on the LAReQA pool.

Importing relkt changes nothing in the process: the CLIs (`relkt.cli.run_cli`) quiet TensorFlow's start-up logs."""

__version__ = "0.1.0"

# CL-ReLKT's Eq. 2 weights at the paper's values, by their `distill.weights` keys: the one fact the config's defaults
# (relkt.config) and the loss (relkt.losses) both read, kept here because neither may import the other.
PAPER_WEIGHTS = {"beta": 0.001, "lam": 1.0, "omega": 0.01}
