"""Settings no server can run with are refused before a socket or process is made; every
bound has a setting with a default ``pawlette serve --help`` shows."""

from __future__ import annotations

import argparse
import logging

import pytest

from pawlette.serve.config import ServeConfig, add_arguments, config_from_arguments, serve_main


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--port", "99999"], "--port: 99999; expected a port number"),
        (["--port", "-5"], "--port: -5; expected a port number"),
        (["--workers", "0"], "--workers: 0; expected at least 1"),
        (["--timeout", "0"], "--timeout: 0.0; expected a number of seconds"),
        (["--head-timeout", "0"], "--head-timeout: 0.0; expected a number of seconds"),
        (["--max-head-bytes", "10"], "--max-head-bytes: 10; expected at least 1024"),
        (["--max-client-connections", "0"], "--max-client-connections: 0; expected at least"),
        (["--allowed-host", "a b"], "--allowed-host: 'a b'; expected a host name"),
        (
            ["--upstream", "http://127.0.0.1:9", "--upstream", "notaurl"],
            "--upstream #2: not a URL; expected an http:// or https:// URL",
        ),
        (
            ["--upstream", "http://admin:s3cret@127.0.0.1:9", "--upstream-api-key", "k"],
            "--upstream #1: credentials in the URL and --upstream-api-key both",
        ),
    ],
)
def test_bad_settings_are_one_line_and_status_2(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("uvicorn")
    if "--upstream" not in arguments:
        arguments = ["--upstream", "http://127.0.0.1:9", *arguments]
    assert serve_main(["-f", "pcml", *arguments]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
    assert "s3cret" not in error  # a URL's password is never printed


def test_every_bound_is_a_setting_with_its_default_in_the_help() -> None:
    parser = argparse.ArgumentParser(prog="pawlette serve")
    add_arguments(parser)
    text = parser.format_help()
    for flag, default in (
        ("--max-head-bytes", "16K"),
        ("--head-timeout", "10"),
        ("--keep-alive", "5"),
        ("--body-timeout", "60"),
        ("--send-timeout", "30"),
        ("--request-timeout", "3600"),
        ("--max-client-connections", "2048"),
        ("--max-requests-per-connection", "100"),
        ("--max-answer-bytes", "16M"),
        ("--max-upstream-connections", "1024"),
        ("--allowed-host", "localhost"),
        ("--schema-default", "strict"),
    ):
        position = text.index(flag, text.index("options:"))
        assert f"default: {default}" in " ".join(text[position : position + 600].split()), flag
    config = config_from_arguments(
        parser.parse_args(["-f", "pcml", "--upstream", "http://e", "--max-answer-bytes", "2M"])
    )
    assert config == ServeConfig("pcml", "http://e", max_answer_bytes=2 << 20)


def test_allowed_hosts_default_to_loopback_names_on_a_loopback_address() -> None:
    assert ServeConfig("pcml", "http://e").hosts == ("localhost", "127.0.0.1", "::1")
    assert ServeConfig("pcml", "http://e", host="::1").hosts[0] == "localhost"
    assert ServeConfig("pcml", "http://e", host="0.0.0.0").hosts == ("*",)
    assert ServeConfig("pcml", "http://e", allowed_hosts=("api.example",)).hosts == ("api.example",)


def test_the_serving_guide_describes_every_setting_with_its_default() -> None:
    """docs/guides/serving.md has a table row for every option of ``pawlette serve --help``,
    and the default it gives is the option's."""
    import pathlib

    from pawlette.serve.config import _size

    guide = pathlib.Path(__file__).parents[2] / "docs" / "guides" / "serving.md"
    rows: dict[str, str] = {}
    for line in guide.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `-") and len(cells) >= 2:
            for spelling in cells[0].split(","):
                rows[spelling.strip().strip("`").split(" ")[0]] = cells[1].strip("`")
    parser = argparse.ArgumentParser(prog="pawlette serve")
    add_arguments(parser)
    for action in parser._actions:
        for flag in action.option_strings:
            if not flag.startswith("--") or flag == "--help":
                continue
            assert flag in rows, f"{flag} is not described in {guide.name}"
            default, written = action.default, rows[flag]
            if isinstance(default, bool) or default is None:
                continue
            if action.type is _size:
                assert _size(written) == default, (flag, written, default)
            elif isinstance(default, (int, float)):
                assert float(written.removesuffix(" s")) == default, (flag, written, default)
            else:
                assert written == default, (flag, written, default)


def test_the_servers_own_log_prints_at_its_level(capsys: pytest.CaptureFixture[str]) -> None:
    """``pawlette serve``'s info lines (which grammar syntax a replica gets, as the serving
    guide shows one) print at the default level, as uvicorn's do."""
    from pawlette.serve.app import uvicorn_config

    uvicorn_config(ServeConfig(format="pcml", upstream="http://127.0.0.1:9"))
    logging.getLogger("pawlette.serve").info("upstream u: built with llguidance")
    logging.getLogger("pawlette.serve").debug("not at info")
    printed = capsys.readouterr().err
    assert "built with llguidance" in printed
    assert "not at info" not in printed
