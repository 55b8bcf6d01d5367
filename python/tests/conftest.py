"""Shared fixtures: the CLI binary the Python results are checked against."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The host-dependent fields of a results document (everything else is deterministic).
WALL_CLOCK_KEYS = {"wall_time_s", "sim_s_per_wall_s"}


def find_cli():
    """The `schedlab` binary: $SCHEDLAB_BIN, else the newest of target/{ci-debug,release,debug}."""
    if os.environ.get("SCHEDLAB_BIN"):
        return Path(os.environ["SCHEDLAB_BIN"])
    found = [ROOT / "target" / p / "schedlab" for p in ("ci-debug", "release", "debug")]
    found = [p for p in found if p.exists()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


@pytest.fixture(scope="session")
def cli():
    path = find_cli()
    if path is None:
        pytest.fail("no schedlab binary: build it (cargo build) or set SCHEDLAB_BIN")

    def run(*args, check=True):
        out = subprocess.run([str(path), *args], capture_output=True, text=True, cwd=ROOT)
        if check and out.returncode != 0:
            raise AssertionError(f"schedlab {' '.join(args)} failed: {out.stderr}")
        return out

    return run


def strip_wall_clock(value):
    """`value` (a parsed results document) without its wall-clock fields."""
    if isinstance(value, dict):
        return {k: strip_wall_clock(v) for k, v in value.items() if k not in WALL_CLOCK_KEYS}
    if isinstance(value, list):
        return [strip_wall_clock(v) for v in value]
    return value


def load_stripped(text):
    return strip_wall_clock(json.loads(text))
