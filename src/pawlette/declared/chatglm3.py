"""ChatGLM3 (seed 002): role tokens with a metadata line, calls as fenced Python.

Declared with the headed-turns concept (:mod:`pawlette.legacy.headed`), from which the
writer, the parse table, the Jinja chat template and the turn grammars are derived.

The wire format, as rendered (``[gMASK]``, ``sop`` and the four role tokens are special
tokens; the rest is text)::

    [gMASK]sop<|system|>
    Answer the following questions as best as you can. You have access to the following tools:
    [
        {
            "name": "get_current_weather",
            "parameters": {...}
        }
    ]<|user|>
    What's the weather in Beijing today?<|assistant|>
    Okay, let's look up the weather in Bejing today.<|assistant|>get_current_weather
    ```python
    tool_call(location="beijing", unit="celsius")
    ```<|observation|>
    {"temperature": 22}<|assistant|>
    According to the query results, the temperature in Beijing today is 22 degrees Celsius.

Each turn is ``<|role|>{metadata}\\n{content}`` and ends where the next role token begins;
the layout is the reference tokenizer's ``build_chat_input`` (``[gMASK]sop`` first, no newline
after content, a bare ``<|assistant|>`` as the generation prompt: the model writes the
metadata line itself).

Decisions:

- **Tools** are the request's ``function`` objects (not the whole OpenAI tool dicts).  The
  reference tokenizer dumps whatever list it is given; the seed's example, the reference
  ``tools_using_demo`` and the ``functions`` version of its ``openai_api_demo`` give it
  function objects (only a later demo passed OpenAI's ``tools`` through unchanged):
  ``"\\n" + json.dumps(tools, indent=4, ensure_ascii=False)``
  after the first system message's text; with no system message, an empty one is written to
  hold them (and dropped again by parsing).  Parsing takes the list from the first line that
  is ``[`` alone; trailing commas (as in the seed's hand-written list) are accepted.
- **Calls**: one turn per call, ``<|assistant|>name\\n```python\\ntool_call(k=v, ...)\\n```
  ``, values as Python literals with double-quoted strings (the seed's style; see
  :mod:`pawlette.codecs.python_calls`).  An OpenAI message with content and calls is a text
  turn and then its call turns; parsing joins call turns to the assistant message before
  them, so it comes back as one message (a calls-only message right after an assistant
  message joins it too).  ChatGLM3 writes no call ids: parsing numbers them and pairs each
  observation with the calls of the latest assistant message, in order.
- **Code interpreter**: ``<|assistant|>interpreter\\n```python\\n<code>\\n```\\ `` is a call to
  the built-in tool ``code_interpreter`` with arguments ``{"code": "<code>"}``; its result is
  the next observation, verbatim (the seed's ```` ```result ```` fence is the result's text).
  It needs no tool declaration (ChatGLM3 enables it by its system prompt).
- **Metadata** is a system or user message's ``name``, and an observation's ``name`` when
  parsing; rendering writes none for observations (the reference writes none; the call it
  answers names it).  An assistant message cannot have a ``name`` (its metadata is the call).
- **Readability newlines**: the reference's prompt document puts a newline before each role
  token for readability and says real prompts have none.  Parsing keeps every newline, from
  text as from token ids (the reference tokenizer's own layout), so content ending in a
  newline round-trips; a prompt document is read once those layout newlines are removed.
  Markers are special tokens and are not escaped: text containing a role token's spelling
  parses exactly only from token ids.
- **Training mask**: the model produces everything after the first ``<|assistant|>`` of its
  message, the ``<|assistant|>`` of each continuation turn, and the ``<|user|>`` or
  ``<|observation|>`` right after its message (its stop token).
- **The last assistant turn's stop token**: a conversation that ends with an assistant
  message (and no generation prompt) ends with the stop token the model writes there at
  inference, ``<|observation|>`` after a call and ``<|user|>`` after text, learned: without
  it single-turn training data would never teach the model to stop.  (ChatGLM3's own
  fine-tuning script appends ``</s>`` instead; the role token keeps one stop per situation,
  the one pawlette's server stops on, and keeps every render a prefix of the render of the
  conversation continued.)  Parsing reads a role token with nothing after it, at the end of
  a conversation, as that stop token, not as an empty turn.
- **Token ids** are ``build_chat_input``'s (ChatGLM3's ``tokenization_chatglm.py``): it
  encodes each turn's ``{metadata}\\n`` and its content with separate SentencePiece calls,
  each with its own dummy prefix, so this format declares ``encode_cuts={"metadata"}``
  (:attr:`pawlette.Format.encode_cuts`; the concept's ``encode_cuts``): text after a role
  token, and the content after the metadata line (a call turn's fenced body too), is
  encoded by a call of its own; a system message's tools stay with its content, as the
  reference appends them to it.  Tested
  against a re-statement of ``build_chat_input`` with a SentencePiece model trained with
  ChatGLM3's settings and special tokens.  (A chat template's text encoded whole, as
  transformers' ``apply_chat_template`` does, gives other ids at the start of turns.)
- **Role order**: ``with_options(check_roles=True)`` refuses what the seed rules out (system
  messages after others, two user messages in a row, an assistant before any user, an
  observation not answering a call), naming the message.
"""

from __future__ import annotations

from dataclasses import dataclass

from pawlette.blocks.role_order import RoleOrder
from pawlette.legacy import Frame, Layout, Marker, Results, declare, fence
from pawlette.legacy.headed import HeadedTurns

GMASK, SOP = Marker("[gMASK]"), Marker("sop")  # one marker in text: the word "sop" is none
SYSTEM, USER = Marker("<|system|>"), Marker("<|user|>")
ASSISTANT, OBSERVATION = Marker("<|assistant|>"), Marker("<|observation|>")


@dataclass(frozen=True)
class ChatGLM3Options:
    """Render options (``FORMAT.with_options(check_roles=True)``)."""

    check_roles: bool = False
    """Refuse role orders the seed rules out (see :mod:`pawlette.blocks.role_order`)."""


def layout(options: ChatGLM3Options) -> Layout:
    return Layout(
        name="chatglm3",
        summary="ChatGLM3: [gMASK]sop, <|role|>metadata lines, fenced tool_call(...), interpreter",
        begin=fence(GMASK, SOP),
        frames={
            "system": Frame(open=fence(SYSTEM), end=()),
            "user": Frame(open=fence(USER), end=()),
            # The model ends a reply with <|user|> and a turn of calls with <|observation|>.
            "assistant": Frame(
                open=fence(ASSISTANT), end=fence(USER), also_end=(fence(OBSERVATION),)
            ),
        },
        results=Results(frame=Frame(open=fence(OBSERVATION), end=())),
        headed=HeadedTurns(role_order=RoleOrder() if options.check_roles else None),
        options=options,
        from_options=layout,
    )


FORMAT = declare(layout(ChatGLM3Options()))
