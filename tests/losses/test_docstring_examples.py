"""The losses' and the scoring job's docstring Examples run as written (doctest)."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["relkt.losses.triplet_loss", "relkt.losses.distillation_loss"])
def test_a_docstring_example_runs(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
