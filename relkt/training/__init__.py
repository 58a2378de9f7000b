"""What both stages share: the run machinery (strategy, harness, checkpoint, schedule, log, run folder, the tf.data
builder and epoch loop, the distributed loop). The stages themselves are relkt.stages."""
