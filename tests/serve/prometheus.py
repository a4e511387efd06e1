"""A strict reader of Prometheus' text exposition format, for the metrics tests."""

from __future__ import annotations

import math
import re

import httpx

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Every sample, checked: each family declared once with HELP and TYPE before its samples,
    histogram buckets cumulative and ending at +Inf equal to ``_count``."""
    assert text.endswith("\n")
    samples: Samples = {}
    types: dict[str, str] = {}
    helped: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert name not in helped, f"HELP twice for {name}"
            helped.add(name)
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge", "histogram") and name not in types
            assert name in helped, f"TYPE before HELP for {name}"
            types[name] = kind
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, raw_labels, raw_value = match.groups()
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        assert family in types, f"sample {name} before its TYPE"
        labels = frozenset(LABEL.findall(raw_labels or ""))
        value = math.inf if raw_value == "+Inf" else float(raw_value)
        key = (name, labels)
        assert key not in samples, f"duplicate sample {line!r}"
        samples[key] = value
    for (name, labels), count in samples.items():
        if types.get(name[: -len("_count")]) == "histogram" and name.endswith("_count"):
            family = name[: -len("_count")]
            buckets = sorted(
                (math.inf if dict(key)["le"] == "+Inf" else float(dict(key)["le"]), value)
                for (sample, key), value in samples.items()
                if sample == family + "_bucket" and key - {("le", dict(key)["le"])} == labels
            )
            values = [value for _, value in buckets]
            assert values == sorted(values), f"{family} buckets not cumulative"
            assert buckets[-1] == (math.inf, count), f"{family}: +Inf bucket is not _count"
    return samples


def scrape(url: str) -> Samples:
    response = httpx.get(url + "/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(response.text)


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value (0 when absent: a counter not yet incremented)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str) -> float:
    """The sum of a family's samples over all label values."""
    return sum(value for (sample, _), value in samples.items() if sample == name)
