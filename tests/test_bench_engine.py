"""The real-engine table's counts (``bench/engine.py``): a forced call to tools the format
leaves out is refused by design, counted apart from passes and failures; any other 4xx, or
such a call served, is a failure."""

from __future__ import annotations

from typing import Any

import httpx
import openai

import pawlette
from bench.engine import Cell, Row, cell_text, refused_by_design, result_text, table
from tests.serve.scenarios import tools_left_out


def bad_request(param: str | None, status: int = 400) -> openai.APIStatusError:
    response = httpx.Response(status, request=httpx.Request("POST", "http://pawlette/v1"))
    body: dict[str, Any] = {"message": "refused", "type": "invalid_request_error"}
    body["param"] = param
    kind = openai.BadRequestError if status == 400 else openai.UnprocessableEntityError
    return kind("refused", response=response, body=body)


def test_only_the_tool_choice_400_of_a_refusing_case_is_refused_by_design() -> None:
    assert refused_by_design(bad_request("tool_choice"), True)
    assert not refused_by_design(bad_request("tool_choice"), False)  # not a case that refuses
    assert not refused_by_design(bad_request("messages[0].content"), True)
    assert not refused_by_design(bad_request("tool_choice", 422), True)


def test_the_formats_that_leave_tools_out_are_those_the_bench_expects_refused() -> None:
    assert tools_left_out(pawlette.get_format("deepseek"))
    assert not tools_left_out(pawlette.get_format("chatml"))


def test_a_refused_cell_is_labelled_and_counted_in_its_own_column() -> None:
    refused = Cell(requests=3, refused=3)
    part = Cell(requests=3, passed=1, refused=2)
    served = Cell(requests=3, passed=2)
    assert [cell_text(cell) for cell in (refused, part, served)] == [
        "refused",
        "1/1 (2 refused)",
        "2/3",
    ]
    row = Row("deepseek", {"required": refused, "named": part, "none": served, "auto": served})
    assert table([row]).splitlines() == [
        "| format | required | named | none | auto | refused | engine errors | length cuts"
        " | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
        "| deepseek | refused | 1/1 (2 refused) | 2/3 | 2/3 | 5 | 0 | 0 | 0 |",
    ]
    assert result_text(row, False) == (
        "required refused, named 1/1 (2 refused), none 2/3, auto 2/3 (not streamed)"
    )
