"""RWKV World (``pawlette.formats.rwkv``) against llama.cpp's own template.

Every kind of conversation is generated, tools and calls included (calls-only turns with
``"content": ""``, as the template needs a string there): what the template drops (tools,
calls, tool messages, names, reasoning, every system message but the last) or changes (texts
trimmed, an answer written from after its last ``</think>``) is a documented loss.  Its own
turns parse back as the template keeps them.  The ``enable_thinking`` variants, which
detection cannot tell apart (it names the family), are compared in
:mod:`tests.formats.test_rwkv`.
"""

from __future__ import annotations

from typing import Any

from pawlette.formats.rwkv.content import kept_text

from . import FamilyCase


def kept(message: dict[str, Any]) -> dict[str, Any]:
    """What the template keeps of a turn: its text from after its last ``</think>``,
    trimmed; no reasoning, no calls."""
    result = {"role": message["role"]}
    content = message.get("content")
    result["content"] = kept_text(content) if isinstance(content, str) else ""
    return result


CASES = [FamilyCase("llama-cpp-rwkv-world", "rwkv", empty_content=True, normalise=kept)]
