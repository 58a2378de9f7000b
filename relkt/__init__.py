"""relkt: CL-ReLKT cross-lingual answer-retrieval training, scored on the LAReQA pool."""

__version__ = "0.1.0"
