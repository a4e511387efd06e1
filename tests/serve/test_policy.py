"""Which Host, Origin and body type the server answers (serve/policy.py), unit by unit; the
live refusals are in test_hostile.py."""

from __future__ import annotations

import pytest

from pawlette.serve.errors import ServerError
from pawlette.serve.policy import RequestPolicy, host_name


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8000", "localhost"),
        ("API.Example.com.", "api.example.com"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("::1", "::1"),  # bare IPv6 (no port can be told apart): taken whole
    ],
)
def test_host_names(header: str, name: str) -> None:
    assert host_name(header) == name


def test_allowed_hosts_exact_suffix_and_any() -> None:
    policy = RequestPolicy(("localhost", ".example.com"))
    assert policy.allows("localhost") and policy.allows("example.com")
    assert policy.allows("api.example.com") and not policy.allows("evil-example.com")
    assert not policy.allows("attacker.example")
    assert RequestPolicy(("*",)).allows("anything")


def test_origin_must_be_an_allowed_host_or_the_addressed_one() -> None:
    local = RequestPolicy(("localhost", "127.0.0.1"))
    assert local.check(b"localhost:8000", None, False) is None
    assert local.check(b"localhost:8000", b"http://localhost:3000", False) is None
    refused = local.check(b"localhost:8000", b"http://attacker.example", False)
    assert refused is not None and (refused.status, refused.code) == (403, "forbidden_origin")
    null = local.check(b"localhost:8000", b"null", False)  # a sandboxed page, a file
    assert null is not None and null.status == 403
    anywhere = RequestPolicy(("*",))
    assert anywhere.check(b"api.example.com", b"https://api.example.com", False) is None
    other = anywhere.check(b"api.example.com", b"https://attacker.example", False)
    assert other is not None and other.status == 403
    foreign = local.check(b"attacker.example", None, False)
    assert foreign is not None and (foreign.status, foreign.code) == (400, "invalid_host")
    assert local.check(b"10.0.0.7:8000", None, True) is None  # /health: any Host


@pytest.mark.parametrize(
    ("content_type", "accepted"),
    [
        (None, True),
        ("application/json", True),
        ("application/json; charset=utf-8", True),
        ("application/vnd.api+json", True),
        ("text/plain", False),
        ("application/x-www-form-urlencoded", False),
        ("multipart/form-data; boundary=x", False),
    ],
)
def test_body_types(content_type: str | None, accepted: bool) -> None:
    if accepted:
        RequestPolicy.check_body(content_type)
    else:
        with pytest.raises(ServerError) as refused:
            RequestPolicy.check_body(content_type)
        assert (refused.value.status, refused.value.code) == (415, "unsupported_media_type")
