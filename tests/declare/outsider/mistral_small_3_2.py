"""Mistral Small 3.2 (Mistral-Small-3.2-24B-Instruct-2506), declared from its chat template."""

import datetime
from dataclasses import dataclass

import pawlette.declare as d

M = d.Marker
HEAD, _, TAIL = (  # the template's default system message, its date read from a clock
    "You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI, a French startup "
    "headquartered in Paris.\nYour knowledge base was last updated on 2023-10-01. The current date "
    "is {today}.\n\nWhen you're not sure about some information or when the user's request requires"
    " up-to-date or specific data, you must use the available tools to fetch the information. Do "
    "not hesitate to use tools whenever they can provide a more accurate or complete response. If "
    "no relevant tools are available, then clearly state that you don't have the information and "
    "avoid making up anything.\n\nIf the user's question is not clear, ambiguous, or does not provi"
    "de enough context for you to accurately answer the question, you do not try to answer it right"
    ' away and you rather ask the user to clarify their request (e.g. "What are some good restauran'
    'ts around me?" => "Where are you?" or "When is the next flight to Tokyo" => "Where do you trav'
    'el from?").\nYou are always very attentive to dates, and when asked about information at speci'
    "fic dates, you discard information that is at another date.\nYou follow these instructions in "
    "all languages, and always respond to the user in the language they use or request.\nNext secti"
    "ons describe the capabilities that you have.\n\n# WEB BROWSING INSTRUCTIONS\n\nYou cannot perf"
    "orm any web search or access internet to open URLs, links etc. If it seems like the user is "
    "expecting you to do so, you clarify the situation and ask the user to copy paste the text dire"
    "ctly in the chat.\n\n# MULTI-MODAL INSTRUCTIONS\n\nYou have the ability to read images, but "
    "you cannot generate images. You also cannot transcribe audio files or videos.\nYou cannot read"
    " nor transcribe audio files or videos.\n\n# TOOL CALLING INSTRUCTIONS\n\nYou may have access "
    "to tools that you can use to fetch information or perform actions. You must use these tools "
    "in the following situations:\n\n1. When the request requires up-to-date information.\n2. When "
    "the request requires specific data that you do not have in your knowledge base.\n3. When the "
    "request involves actions that you cannot perform without tools.\n\nAlways prioritize using "
    "tools to provide the most accurate and helpful response. If tools are not available, inform "
    "the user that you cannot perform the requested action at the moment."
).partition("{today}")


@dataclass(frozen=True)
class Options:
    today: datetime.date = datetime.date(2025, 6, 20)  # the date the template reads, an option


FORMAT = d.declare(
    d.Layout(
        name="outsider-mistral-small-3.2",
        summary="Mistral Small 3.2 24B Instruct 2506, declared from its chat template",
        begin=d.fence(M("<s>")),
        frames={
            "system": d.Frame(
                open=d.fence(M("[SYSTEM_PROMPT]")), end=d.fence(M("[/SYSTEM_PROMPT]"))
            ),
            "user": d.Frame(open=d.fence(M("[INST]")), end=d.fence(M("[/INST]"))),
            "assistant": d.Frame(end=d.fence(M("</s>"))),
            "tool": d.Frame(open=d.fence(M("[TOOL_RESULTS]")), end=d.fence(M("[/TOOL_RESULTS]"))),
        },
        concepts=(
            d.Alternation(system_counts=True),  # the template raises on roles out of order
            d.Ignored(("reasoning", "name")),  # accepted, never written: recorded losses
            d.SystemPrompt(default=d.fence(HEAD, d.Option("today", "%Y-%m-%d"), TAIL)),
            d.ToolsBlock(
                place="before_last_user",  # and before every user message equal to the last
                open=d.fence(M("[AVAILABLE_TOOLS]")),
                close=d.fence(M("[/AVAILABLE_TOOLS]")),
                array=True,
                equal_users=True,
            ),
            d.NamedCalls(
                open=d.fence(M("[TOOL_CALLS]")),
                id_open=d.fence(M("[CALL_ID]")),
                arguments_open=d.fence(M("[ARGS]")),
                content="dropped",  # the template drops text beside calls: a recorded loss
                id_pattern="[A-Za-z0-9]{9}",  # the template refuses ids of another length
            ),
            d.Results(id_close=d.fence(M("[TOOL_CONTENT]")), id_pattern="[A-Za-z0-9]{9}"),
        ),
        options=Options(),
        today="today",
    )
)
