"""relkt: CL-ReLKT cross-lingual answer-retrieval training, scored on the LAReQA pool."""

from relkt import quiet_tensorflow

__version__ = "0.1.0"

quiet_tensorflow.install()  # TensorFlow's C++ start-up logs off unless RELKT_VERBOSE=1 (see relkt/quiet_tensorflow.py)
