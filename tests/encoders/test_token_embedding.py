import keras
import numpy as np
import tensorflow as tf

from relkt.encoders.token_embedding import TokenEmbedding


def pair(rows: int = 7, width: int = 3):
    """A TokenEmbedding and a keras Embedding holding the same table."""
    ours, theirs = TokenEmbedding(rows, width, name="t"), keras.layers.Embedding(rows, width, name="k")
    ours.build((None, None))
    theirs.build((None, None))
    theirs.embeddings.assign(ours.embeddings.numpy())
    return ours, theirs


def test_same_rows_and_gradient_as_keras_embedding_for_any_id_dtype():
    ours, theirs = pair()
    for dtype in ("int32", "int64", "float32"):
        ids = tf.constant([[0, 3, 3], [6, 1, 0]], dtype)
        np.testing.assert_array_equal(ours(ids).numpy(), theirs(ids).numpy())
    ids = tf.constant([[0, 3, 3], [6, 1, 0]])
    weights = tf.constant(np.arange(18, dtype="float32").reshape(2, 3, 3))
    grads = []
    for layer in (ours, theirs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(ids) * weights)
        grads.append(tape.gradient(loss, layer.trainable_variables)[0])
    assert isinstance(grads[0], tf.IndexedSlices)  # sparse, for lazy Adam
    np.testing.assert_array_equal(tf.convert_to_tensor(grads[0]).numpy(), tf.convert_to_tensor(grads[1]).numpy())


def test_reads_rows_written_in_place_and_the_config_round_trips(tmp_path):
    ours, _ = pair()
    ours.embeddings.value.scatter_update(tf.IndexedSlices(tf.fill([1, 3], 9.0), tf.constant([4])))  # as lazy Adam
    lookup = tf.function(lambda ids: ours(ids))
    np.testing.assert_array_equal(lookup(tf.constant([4, 4]))[1].numpy(), [9.0, 9.0, 9.0])
    again = TokenEmbedding.from_config(ours.get_config())
    assert (again.input_dim, again.output_dim, again.name) == (7, 3, "t")
    model = keras.Sequential([keras.Input((2,), dtype="int32"), ours])
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(loaded.layers[0], TokenEmbedding)
    np.testing.assert_array_equal(loaded(np.array([[4, 0]])).numpy(), model(np.array([[4, 0]])).numpy())


def test_bert_word_table_reads_sparsely_with_the_same_embeddings_and_a_sparse_gradient():
    """keras-hub's BERT word table (a ReversibleEmbedding) inside relkt's BertEncoder: the same embeddings as
    keras-hub's own lookup gives, and the table's gradient is IndexedSlices."""
    from relkt.encoders.token_embedding import read_rows_sparsely
    from tests.helpers.tiny_bert import tiny_bert

    enc = tiny_bert()
    layer = enc.backbone.token_embedding
    assert getattr(type(layer), "_relkt_sparse_reads", False)
    texts = ["the cat sleeps", "a dog runs far"]
    ids = enc.preprocess(texts)["token_ids"]
    ours = layer(ids).numpy()
    np.testing.assert_array_equal(ours, tf.gather(tf.convert_to_tensor(layer.embeddings), ids).numpy())
    assert read_rows_sparsely(layer) is layer  # a second call changes nothing
    table = layer.embeddings
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(enc(enc.preprocess(texts), training=True))
    grads = dict(zip([v.path for v in enc.trainable_variables], tape.gradient(loss, enc.trainable_variables)))
    assert isinstance(grads[table.path], tf.IndexedSlices)
