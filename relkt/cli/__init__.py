"""The command lines: one module a command (flags in, one library call, an exit code out), the argparse types and
shared flags, and the `relkt` console command (`__main__.py`). No library module imports this package."""
