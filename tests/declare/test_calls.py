"""CallConcept.served_id with live arguments: a call written without an id is given one at
its opening; when that call is then refused, the id is kept as the spare of the next call, so
the ids served match the whole parse's (which never gave the refused call one).  Found by
``bench/fuzz.py`` on mistral."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pawlette
from pawlette.engine.fold import fold, merge_assistant

# The first call holds a1b2c3d4e; the second, written without an id, is refused (NaN is no
# JSON); the third repeats the first's id, so it is served a new one.
MISTRAL_REFUSED_THEN_REPEATED = (
    '[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{"k": 1}'
    '[TOOL_CALLS]f[ARGS]{"k": NaN}'
    '[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{"k": 3}</s>'
)


def _ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def _served_ids(text: str, *, stream_arguments: bool) -> list[str]:
    fmt = pawlette.get_format("mistral")
    parser = fmt.parser(id_factory=_ids(), stream_arguments=stream_arguments)
    events = parser.feed(text) + parser.finish()
    message = merge_assistant(fold(events, fmt.grammar.fields).messages)
    return [call.id or "" for call in message.tool_calls or ()]


def _whole_ids(text: str) -> list[str]:
    message = pawlette.get_format("mistral").parse(text, id_factory=_ids()).message
    return [call["id"] for call in message["tool_calls"]]


def test_a_repeated_id_is_replaced_by_the_first_minted_id_in_the_whole_parse() -> None:
    assert _whole_ids(MISTRAL_REFUSED_THEN_REPEATED) == ["a1b2c3d4e", "call_0"]
    assert _served_ids(MISTRAL_REFUSED_THEN_REPEATED, stream_arguments=False) == [
        "a1b2c3d4e",
        "call_0",
    ]


def test_a_repeated_id_takes_the_spare_id_of_a_refused_call_with_live_arguments() -> None:
    assert _served_ids(MISTRAL_REFUSED_THEN_REPEATED, stream_arguments=True) == _whole_ids(
        MISTRAL_REFUSED_THEN_REPEATED
    )


# The second call repeats the first's id and is refused (NaN is no JSON); the third, written
# without an id, is given the id a whole read gives it: the one the refused call was served.
MISTRAL_REPEATED_REFUSED_THEN_BARE = (
    '[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{"k": 1}'
    '[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{"k": NaN}'
    '[TOOL_CALLS]f[ARGS]{"k": 3}</s>'
)


def test_a_refused_call_served_under_a_new_id_hands_it_to_the_next_call() -> None:
    whole = _whole_ids(MISTRAL_REPEATED_REFUSED_THEN_BARE)
    assert whole == ["a1b2c3d4e", "call_0"]
    assert _served_ids(MISTRAL_REPEATED_REFUSED_THEN_BARE, stream_arguments=True) == whole
