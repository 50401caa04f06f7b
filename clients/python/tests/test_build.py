"""The build says what is missing (the proto folder, protoc, its plugin) instead of failing in a traceback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parent.parent / "setup.py"


def generate(**env):
    return subprocess.run([sys.executable, str(SETUP), "-q", "generate"], cwd=SETUP.parent, capture_output=True,
                          text=True, env=dict(os.environ, **env))


def test_no_proto_folder(tmp_path):
    result = generate(GPUCLOUD_PROTO_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "no gpucloud/v1/*.proto under " + str(tmp_path) in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("variable, package", [("PROTOC", "protobuf-compiler"),
                                               ("GRPC_PYTHON_PLUGIN", "protobuf-compiler-grpc")])
def test_a_missing_tool_names_its_debian_package(tmp_path, variable, package):
    result = generate(**{variable: str(tmp_path / "nothing-here")})
    assert result.returncode != 0
    assert "apt-get install " + package in result.stderr and "Traceback" not in result.stderr
