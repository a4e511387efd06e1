"""Cross-check outside Python: the golden cases render identically in transformers.js.

Not part of the test suite: it needs node and ``npm install @huggingface/jinja``, and the
test command installs from PyPI only (llama.cpp's engine, a Jinja outside Python too, is in the
suite: ``test_jinja_llama_cpp.py``).  Run it by hand after changing a template::

    mkdir -p /tmp/jinja-js && (cd /tmp/jinja-js && npm install @huggingface/jinja)
    PAWLETTE_JINJA_JS=/tmp/jinja-js python -m tests.export.check_jinja_js
"""

from __future__ import annotations

import sys

from pawlette.export import export_jinja

from .support import (
    golden_cases,
    jinja_js_directory,
    load_case,
    render_with_jinja_js,
    template_messages,
)
from .test_jinja import TEMPLATED


def main() -> int:
    directory = jinja_js_directory()
    if directory is None:
        print("set PAWLETTE_JINJA_JS to a directory with node_modules/@huggingface/jinja")
        return 2
    failures = 0
    for name in TEMPLATED:
        cases = golden_cases(name)
        inputs = [
            {
                "messages": template_messages(name, load_case(case)["messages"]),
                "tools": load_case(case).get("tools"),
                "add_generation_prompt": bool(load_case(case).get("add_generation_prompt", False)),
            }
            for case in cases
        ]
        results = render_with_jinja_js(directory, export_jinja(name), inputs)
        for case, result in zip(cases, results, strict=True):
            expected = (case / "rendered.txt").read_text(encoding="utf-8")
            if result.get("text") != expected:
                failures += 1
                print(f"{name}/{case.name}: differs: {result}")
    print(f"{failures} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
