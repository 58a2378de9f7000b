"""Run trainer CLIs in a process whose CPU is split into 2 logical devices (for MirroredStrategy tests).

Use one mirrored run per process: two MirroredStrategy objects in a process share collective keys.

    python tests/training/two_cpus.py teacher CONFIG [teacher|student CONFIG ...]
"""

import sys

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

from relkt.cli import train_student, train_teacher  # noqa: E402

args = sys.argv[1:]
for stage, config in zip(args[::2], args[1::2]):
    main = train_teacher.main if stage == "teacher" else train_student.main
    if main(["--config", config]) != 0:
        sys.exit(f"{stage} {config} failed")
