"""The language-model script's tests need JAX (``pip install -r requirements-lm.txt``).

Without it they skip with the reason, unless ``REQUIRE_JAX=1`` (CI), where they fail. They
live outside tests/core, which CI runs twice (once on baseline kernels).
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "scripts" / "train_char_lm.py"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def need_jax() -> None:
    """Skip (or fail under REQUIRE_JAX=1) when JAX is not installed."""
    if importlib.util.find_spec("jax") is None:
        reason = "jax not installed (pip install -r requirements-lm.txt)"
        if os.environ.get("REQUIRE_JAX") == "1":
            pytest.fail(f"REQUIRE_JAX=1 but {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def train_script():
    """The script as a module (it sets XLA to one thread before importing JAX)."""
    need_jax()
    spec = importlib.util.spec_from_file_location("train_char_lm", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_char_lm"] = module
    spec.loader.exec_module(module)
    return module
