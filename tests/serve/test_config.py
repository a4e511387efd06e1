"""Settings no server can run with are refused before a socket or process is made."""

from __future__ import annotations

import pytest

from pawlette.serve.config import serve_main


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--port", "99999"], "--port: 99999; expected a port number"),
        (["--port", "-5"], "--port: -5; expected a port number"),
        (["--workers", "0"], "--workers: 0; expected at least 1"),
        (["--timeout", "0"], "--timeout: 0.0; expected a number of seconds"),
        (["--upstream", "http://127.0.0.1:9", "--upstream", "notaurl"], "'notaurl'; expected an"),
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
