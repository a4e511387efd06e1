"""RWKV World's system turn: the last system message's text, when it has any."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import LastSystemPrompt

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class LastSystemText(LastSystemPrompt):
    """The last system message's text, written at the start of the conversation in a
    system turn of its own, and no system turn when that text is empty (the template
    keeps only the last system text and writes it only when it is not empty).  The other
    system messages are recorded losses, and so is an empty last one.  Placed
    ``"gathered"``."""

    def check(self, out: Render) -> None:
        last = self.check_last(out)
        if last >= 0 and not out.message_text(last):
            out.lose(f"messages[{last}]", "a system message with empty text, written as none")

    def write_start(self, out: Render) -> None:
        # (A system message is there: the base's gathered turn, without its walk to find one.)
        last = self.last_system(out)
        if last >= 0 and out.message_text(last):
            out.turn(-1, "system")

    def jinja_start(self, out: Template) -> None:
        # The base's gathered texts (which its content writes), here the last system
        # message's text alone, and none when that text is empty.
        texts = out.ns("system_texts", "[]")
        last = out.ns("system_last", '""')
        out.out("{%- for message in messages -%}")
        out.out('{%- if message.role in ["system", "developer"] -%}')
        out.out(f"{{%- set {last} = text_of(message, loop.index0, '') -%}}")
        out.out("{%- endif -%}")
        out.out("{%- endfor -%}")
        out.out(f"{{%- if {last} -%}}")
        out.out(f"{{%- set {texts} = [{last}] -%}}")
        out.out("{%- set message = none -%}{%- set index = -1 -%}")
        out.turn("system", message=False)
        out.out("{%- endif -%}")
