"""Fixtures for training/train.py: the script loaded as a module, and a runner for it as a process."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from .helpers import TRAIN_PY


@pytest.fixture(scope="session")
def train() -> ModuleType:
    """training/train.py imported by path (it is a standalone script, not part of the planb package)."""
    spec = importlib.util.spec_from_file_location("planb_training_train", TRAIN_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module
