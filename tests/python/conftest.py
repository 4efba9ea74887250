"""pytest configuration for the black-box suite (helpers: dongle_client.py).

Async tests run on anyio's pytest plugin, which ships with anyio (an `mcp`
dependency); they are marked `pytest.mark.anyio` and run on asyncio.
"""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
