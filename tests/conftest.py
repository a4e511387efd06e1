"""Shared test options: ``--update-golden`` rewrites golden outputs (review the diff); the
heavy per-format checks marked ``sampled`` run on a drawn share of the formats
(tests/support/sampling.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from .support import sampling

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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sampled(parameter='name', group=None, always=()): a heavy per-format check; one test "
        "run checks the formats drawn by tests/support/sampling.py for the test (or for its "
        "group, which the tests sharing a costly fixture name), and the formats named in "
        "always; PAWLETTE_SAMPLE=all: every format",
    )
    config.addinivalue_line(
        "markers",
        "deep: a property check on every format, with its full count of examples on the "
        "formats drawn for it and a few on the others (tests/support/sampling.py's examples)",
    )
    config.stash[_SEED] = sampling.seed()


_SEED = pytest.StashKey[str]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # In the summary, not the header: the test command runs pytest with -q, which hides it.
    config = terminalreporter.config
    if sampling.run_every_format():
        terminalreporter.write_line("heavy per-format checks: every format (PAWLETTE_SAMPLE=all)")
        return
    if _narrowed(config):
        return  # the run named its tests, and ran them all
    terminalreporter.write_line(
        f"heavy per-format checks: {', '.join(sampling.ALWAYS)} and a drawn "
        f"{sampling.SHARE:.0%} of the other formats (deep property checks: every format, "
        f"their full examples on those and {sampling.SHALLOW} on the rest), "
        f"seed {config.stash[_SEED]} "
        "(PAWLETTE_SAMPLE_SEED=... draws the same again, PAWLETTE_SAMPLE=all runs every format)"
    )


def _narrowed(config: pytest.Config) -> bool:
    """Whether the run names the tests it wants (``-k``, or a test id): it gets all of them."""
    return bool(config.option.keyword) or any("::" in str(path) for path in config.args)


# First, so that the draw is made from every format the check has, whatever -m then keeps.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    sampling.narrowed = _narrowed(config)
    if sampling.run_every_format() or sampling.narrowed:
        return
    by_check: dict[str, list[tuple[pytest.Item, str]]] = {}
    for item in items:
        marker = item.get_closest_marker("sampled")
        if marker is None:
            continue
        parameter = marker.kwargs.get("parameter", "name")
        callspec = getattr(item, "callspec", None)
        if callspec is None or parameter not in callspec.params:
            raise pytest.UsageError(
                f"{item.nodeid}: marked sampled, but has no parameter {parameter!r} naming a format"
            )
        name = str(callspec.params[parameter])
        if name in marker.kwargs.get("always", ()):
            continue  # (a format the check names as always run is kept, and not drawn from)
        check = marker.kwargs.get("group") or item.nodeid.split("[", 1)[0]
        by_check.setdefault(check, []).append((item, name))
    if not by_check:
        return
    dropped: set[pytest.Item] = set()
    for check, members in by_check.items():
        chosen = sampling.chosen_formats(check, (name for _, name in members), config.stash[_SEED])
        dropped.update(item for item, name in members if name not in chosen)
    config.hook.pytest_deselected(items=[item for item in items if item in dropped])
    items[:] = [item for item in items if item not in dropped]
