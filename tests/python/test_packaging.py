"""The package's metadata, declared twice: pyproject.toml for pip, entry_points.txt for
the build trees (which torch's autoload reads from PYTHONPATH). They must agree."""

import configparser
import os

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

import pytest

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python >= 3.11")
def test_pyproject_and_build_tree_entry_points_agree():
    with open(os.path.join(PYTHON_DIR, "pyproject.toml"), "rb") as f:
        declared = tomllib.load(f)["project"]["entry-points"]
    tree = configparser.ConfigParser()
    tree.optionxform = str  # entry point names keep their case
    tree.read(os.path.join(PYTHON_DIR, "entry_points.txt"))
    assert {g: dict(tree[g]) for g in tree.sections()} == declared
    assert declared["torch.backends"] == {"hostccl": "_hostccl_autoload:load"}
