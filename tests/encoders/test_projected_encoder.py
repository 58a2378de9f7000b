import numpy as np

from relkt.encoders.ngram_encoder import NgramEncoder
from relkt.encoders.projected_encoder import ProjectedEncoder


def test_projects_to_teacher_size_and_round_trips():
    enc = ProjectedEncoder(NgramEncoder(dim=8, num_buckets=64), dim=12)
    x = enc.encode(["cat", "ทีม", "猫"])
    assert x.shape == (3, 12) and enc.kind == "ngram+projection"
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-5)
    clone = ProjectedEncoder.from_config(enc.get_config())
    clone.encode(["x"])
    clone.set_weights(enc.get_weights())
    np.testing.assert_allclose(clone.encode(["cat", "ทีม", "猫"]), x, atol=1e-6)
