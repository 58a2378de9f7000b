"""Build the configured tf.distribute strategy and precision policy; tell the chief from the other workers."""

from __future__ import annotations

import json
import os

import keras
import tensorflow as tf

from relkt.errors import ConfigError
from relkt.names import named

POLICIES = {"none": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}


def make_strategy(section) -> tf.distribute.Strategy:
    """`default` | `mirrored` (local devices) | `multi_worker` (TF_CONFIG) | `tpu` (TPUClusterResolver).
    Create it before any other TensorFlow work: multi-worker collectives are configured at startup."""
    if section.strategy == "default":
        return tf.distribute.get_strategy()
    if section.strategy == "mirrored":
        devices = named(section.devices)
        have = {d.name.lower().replace("/device:", "/") for d in tf.config.list_logical_devices()}
        have |= {name.rsplit("/", 1)[-1] for name in have}
        missing = [d for d in devices or [] if d.lower().replace("/device:", "/").split("/")[-1] not in have]
        if missing:
            raise ConfigError(
                f"distribute.devices: {', '.join(missing)} not on this machine (it has "
                f"{', '.join(d.name for d in tf.config.list_logical_devices())})"
            )
        return tf.distribute.MirroredStrategy(devices)
    if section.strategy == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise ConfigError("distribute.strategy=multi_worker needs TF_CONFIG describing the cluster and this task")
        return tf.distribute.MultiWorkerMirroredStrategy()
    try:
        return _tpu_strategy(section)
    except (ValueError, tf.errors.OpError) as e:
        raise ConfigError(f"distribute.strategy=tpu: no TPU to connect to ({str(e).splitlines()[0]})") from None


def _tpu_strategy(section) -> tf.distribute.Strategy:
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=section.tpu_address or None)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def set_precision(mixed_precision: str) -> None:
    """Layers compute in bfloat16/float16 with float32 variables; relkt's embeddings and losses stay
    float32, and `compile` wraps the optimizer in a LossScaleOptimizer for float16."""
    keras.mixed_precision.set_dtype_policy(POLICIES[mixed_precision])


def worker(strategy: tf.distribute.Strategy) -> tuple[bool, int]:
    """(is_chief, task index). Single-host strategies have one worker, the chief."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or resolver is None:
        return True, 0
    task_type, task_id = resolver.task_type, resolver.task_id or 0
    cluster = json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster", {})
    if task_type == "chief" or (task_type == "worker" and task_id == 0 and "chief" not in cluster):
        return True, task_id
    return False, task_id
