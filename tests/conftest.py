"""Shared test options: ``--update-golden`` rewrites golden outputs (review the diff)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "pawlette",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# The test command (.ci/run) runs the same examples every time, so a red run is a change's
# doing and can be rerun; exploring new inputs is the long fuzz runs' job (bench.fuzz) and a
# developer's plain ``pytest`` (random examples, as hypothesis does by default).
settings.register_profile(
    "ci", parent=settings.get_profile("pawlette"), derandomize=True, database=None
)
settings.load_profile("pawlette")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite rendered.txt, mask.txt and parsed.json from the current code",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
