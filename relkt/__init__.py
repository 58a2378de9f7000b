"""relkt: CL-ReLKT cross-lingual answer-retrieval training, scored on the LAReQA pool.

Importing relkt changes nothing in the process: the CLIs (`relkt.cli.run_cli`) quiet TensorFlow's start-up logs."""

__version__ = "0.1.0"
