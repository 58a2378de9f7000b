"""relkt: CL-ReLKT cross-lingual answer-retrieval training, scored on the LAReQA pool.

Two wings: the library below (`relkt.api` lists every job, each a function returning a result object) and the
command lines above it (`relkt.cli`, one module a command; the `relkt` console command). Importing relkt changes
nothing in the process: the command lines quiet TensorFlow's start-up logs."""

__version__ = "0.5.0"
