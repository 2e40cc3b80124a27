"""Bad and hostile input: malformed JSON, unknown fields, naive datetimes, oversized data and bodies,
invalid URLs and addresses, SSRF targets, and forged or replayed webhook signatures. Each gets a
clear 4xx (never a 5xx) naming the field, and nothing is written: no reminder row, no message."""

from __future__ import annotations

import http.client
import ipaddress
import json
import math
import re
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reminders import runtime
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from standardwebhooks.webhooks import Webhook

from tests.support.aws import table
from tests.support.lambda_runtime import call_api

PUBLIC = "93.184.216.34"
FAKE_DNS = {
    "hooks.example.com": [PUBLIC],
    "internal.example.com": ["10.0.0.5"],
    "mixed.example.com": [PUBLIC, "10.0.0.5"],  # one private answer is enough to refuse
    "metadata.example.com": ["169.254.169.254"],
    "localhost": ["127.0.0.1"],
}


@pytest.fixture(autouse=True)
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real DNS in tests: names resolve from FAKE_DNS (unknown names resolve publicly)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        try:
            ipaddress.ip_address(str(host))
        except ValueError:
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
                for ip in FAKE_DNS.get(str(host).lower(), [PUBLIC])
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def _valid(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "key": "renewal-reminder:acct-1:2026-12-20:webhook",
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (datetime.now(UTC) + timedelta(hours=2)).isoformat(),
        "channels": [
            {"type": "webhook", "url": "https://hooks.example.com/reminders"},
            {"type": "email", "to": "customer@example.com"},
        ],
        "template": {"id": "renewal", "version": 1},
        "data": {"renewal_date": "2026-12-20"},
    }
    body.update(overrides)
    return body


@pytest.fixture(scope="module")
def api() -> Iterator[dict[str, str]]:
    """One moto stack for the module: these requests must write nothing, so they can share it
    (the few tests that create a reminder use keys of their own; "nothing written" is a delta)."""
    from moto import mock_aws

    from tests.support.aws import create_resources

    with mock_aws(), pytest.MonkeyPatch.context() as patches:
        env = create_resources()
        for k, v in env.items():
            patches.setenv(k, v)
        runtime.reset()
        yield env
        runtime.reset()


def _written(env: dict[str, str]) -> tuple[int, int]:
    """(reminder rows, messages in the channel queues)."""
    items = table().scan(ProjectionExpression="pk")["Items"]
    rows = sum(1 for i in items if str(i["pk"]).startswith("R#"))
    sqs = boto3.client("sqs")
    counts = (
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesDelayed",
        "ApproximateNumberOfMessagesNotVisible",
    )
    messages = 0
    for name in ("WEBHOOK_QUEUE_URL", "EMAIL_QUEUE_URL"):
        attrs = sqs.get_queue_attributes(QueueUrl=env[name], AttributeNames=["All"])["Attributes"]
        messages += sum(int(attrs[a]) for a in counts)
    return rows, messages


def _names(payload: Any, field: str) -> bool:
    """The error names the field: ``field`` in a validation ``loc`` or the ``field`` attribute."""
    if isinstance(payload, dict) and payload.get("field") == field:
        return True
    dotted = field.split(".")
    for d in (payload or {}).get("detail", []) if isinstance(payload, dict) else []:
        loc = [str(x) for x in d.get("loc", []) if not str(x).isdigit()]
        if all(part in loc for part in dotted):
            return True
    return False


def _rejected(env: dict[str, str], body: Any = None, raw: str | None = None, field: str | None = None) -> Any:
    """A 4xx (never a 5xx), naming ``field``; no reminder row and no message written."""
    before = _written(env)
    status, payload = call_api("POST", "/reminders", body, raw=raw)
    assert 400 <= status < 500, (status, payload)
    if field is not None:
        assert _names(payload, field), payload
    assert _written(env) == before
    return payload


# -- malformed requests ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw",
    ['{"key": "k", ', "not json at all", "", "[1, 2", '{"key": "k"} trailing', "\x00\x01"],
    ids=["truncated", "text", "empty", "bad-array", "trailing", "binary"],
)
def test_malformed_json_is_a_4xx_and_writes_nothing(api: dict[str, str], raw: str) -> None:
    _rejected(api, raw=raw)


@pytest.mark.parametrize("body", [[_valid()], "a string", 42, None], ids=["list", "string", "number", "null"])
def test_a_body_that_is_not_an_object_is_a_4xx(api: dict[str, str], body: Any) -> None:
    _rejected(api, raw=json.dumps(body))


def test_a_json_array_of_reminders_is_refused_not_truncated_to_its_first(api: dict[str, str]) -> None:
    """Powertools' validator took a list body's first element as the model: ``[a, b]`` created ``a``
    with 201 and dropped ``b`` silently. A body is one object (handlers/api.py)."""
    second = _valid(key="renewal-reminder:acct-1:2026-12-21:webhook")
    payload = _rejected(api, raw=json.dumps([_valid(), second]), field="body")
    assert payload["message"] == "body: must be a single JSON object"
    status, created = call_api("POST", "/reminders", _valid(key="bad-input:array-patch"))
    assert status == 201
    later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    status, payload = call_api("PATCH", f"/reminders/{created['id']}", raw=json.dumps([{"due_at": later}]))
    assert status == 422 and payload["field"] == "body"
    _, after = call_api("GET", f"/reminders/{created['id']}")
    assert after["version"] == 1 and after["due_at"] == created["due_at"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (_valid(priority="high"), "priority"),
        (_valid(template={"id": "renewal", "version": 1, "locale": "de"}), "template.locale"),
        (
            _valid(channels=[{"type": "webhook", "url": "https://hooks.example.com/x", "secret": "s"}]),
            "secret",
        ),
        (_valid(channels=[{"type": "sms", "to": "+15550100"}]), "channels"),
    ],
    ids=["top-level", "template", "channel", "unknown-channel-type"],
)
def test_unknown_fields_are_refused_naming_the_field(api: dict[str, str], body: Any, field: str) -> None:
    _rejected(api, body, field=field)


@pytest.mark.parametrize(
    "due_at",
    ["2026-12-20T10:00:00", "2026-12-20 10:00", "2026-12-20", "tomorrow", "2026-13-01T00:00:00Z", ""],
    ids=["naive", "naive-space", "date-only", "word", "bad-month", "empty"],
)
def test_naive_or_invalid_due_times_are_refused_naming_due_at(api: dict[str, str], due_at: str) -> None:
    _rejected(api, _valid(due_at=due_at), field="due_at")


def test_reschedule_with_a_naive_datetime_is_refused_and_changes_nothing(api: dict[str, str]) -> None:
    status, created = call_api("POST", "/reminders", _valid(key="bad-input:naive-patch"))
    assert status == 201
    status, payload = call_api("PATCH", f"/reminders/{created['id']}", {"due_at": "2026-12-24T09:00:00"})
    assert status == 422 and _names(payload, "due_at")
    status, payload = call_api("PATCH", f"/reminders/{created['id']}", {"due_at": created["due_at"], "x": 1})
    assert status == 422 and _names(payload, "x")
    _, after = call_api("GET", f"/reminders/{created['id']}")
    assert after["version"] == 1 and after["due_at"] == created["due_at"]


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
def test_a_malformed_reminder_id_is_a_4xx(api: dict[str, str], method: str) -> None:
    body = {"due_at": datetime.now(UTC).isoformat()} if method == "PATCH" else None
    before = _written(api)
    status, payload = call_api(method, "/reminders/../../etc/passwd", body)
    assert 400 <= status < 500, payload
    status, payload = call_api(method, "/reminders/rem_XYZ", body)
    assert status == 422 and _names(payload, "reminder_id"), payload
    assert _written(api) == before


# -- past-the-limit data and oversized bodies -----------------------------------------------------
def test_data_over_4_kib_is_refused_and_exactly_4_kib_is_accepted(api: dict[str, str]) -> None:
    def data_of(size: int) -> dict[str, str]:
        overhead = len(json.dumps({"blob": ""}, separators=(",", ":")).encode())
        return {"blob": "x" * (size - overhead)}

    _rejected(api, _valid(data=data_of(4097)), field="data")
    status, created = call_api("POST", "/reminders", _valid(key="bad-input:4kib", data=data_of(4096)))
    assert status == 201, created


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (_valid(key="k" * 1_000_000), "key"),
        (_valid(filler="x" * 1_000_000), "filler"),
        (_valid(channels=[{"type": "email", "to": f"u{i}@example.com"} for i in range(500)]), "channels"),
        (_valid(data={f"k{i}": i for i in range(5000)}), "data"),
        (_valid(data={"k" * 65: 1}), "data"),
        (_valid(data={"nested": {"a": 1}}), "data"),
        (_valid(account_id="a" * 129), "account_id"),
    ],
    ids=[
        "1MiB-key",
        "1MiB-unknown",
        "500-channels",
        "5000-data-keys",
        "long-data-key",
        "nested",
        "long-account",
    ],
)
def test_oversized_bodies_and_values_are_refused(api: dict[str, str], body: Any, field: str) -> None:
    _rejected(api, body, field=field)


# -- invalid destinations and SSRF targets ----------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "not a url at all",
        "ftp://hooks.example.com/x",
        "https://user:password@hooks.example.com/x",
        "http://hooks.example.com/plain-http",
        "https:///no-host",
        "https://hooks.example.com:99999/bad-port",
        "javascript:alert(1)",
        "https://" + "a" * 2050 + ".example.com/",
        "short",
    ],
    ids=[
        "text",
        "ftp",
        "credentials",
        "plain-http",
        "no-host",
        "bad-port",
        "javascript",
        "too-long",
        "short",
    ],
)
def test_invalid_webhook_urls_are_refused_naming_the_url(api: dict[str, str], url: str) -> None:
    _rejected(api, _valid(channels=[{"type": "webhook", "url": url}]), field="channels.url")


@pytest.mark.parametrize(
    "address",
    [
        "not-an-email",
        "user@",
        "@example.com",
        "user@localhost",
        "a b@example.com",
        "x" * 250 + "@example.com",
    ],
)
def test_invalid_email_addresses_are_refused_naming_the_address(api: dict[str, str], address: str) -> None:
    _rejected(api, _valid(channels=[{"type": "email", "to": address}]), field="channels.to")


@pytest.fixture
def no_local_networks(api: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Outside local mode: ALLOW_DESTINATION_NETWORKS unset, so loopback is refused too."""
    monkeypatch.delenv("ALLOW_DESTINATION_NETWORKS", raising=False)
    runtime.reset()
    yield api
    runtime.reset()


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "http://127.0.0.1:8080/hook",
        "https://localhost/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://metadata.example.com/latest/meta-data/",
        "https://10.0.0.1/hook",
        "https://10.255.255.254/hook",
        "https://172.16.0.1/hook",
        "https://192.168.1.1/hook",
        "https://100.64.0.1/hook",
        "https://0.0.0.0/hook",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[fd00::1]/hook",
        "https://internal.example.com/hook",
        "https://mixed.example.com/hook",
    ],
)
def test_ssrf_targets_are_refused_outside_local_mode(no_local_networks: dict[str, str], url: str) -> None:
    payload = _rejected(no_local_networks, _valid(channels=[{"type": "webhook", "url": url}]))
    assert payload["field"] == "channels.url"
    assert "loopback, private, link-local or reserved" in payload["message"] or "https" in payload["message"]


def test_a_public_destination_is_accepted_outside_local_mode(no_local_networks: dict[str, str]) -> None:
    status, created = call_api("POST", "/reminders", _valid(key="bad-input:public"))
    assert status == 201, created


# -- values DynamoDB cannot store, times outside the calendar, URLs that can never be sent (issue 12 #4) --
def _with_data(key: str, data_json: str) -> str:
    """A valid create body whose ``data`` is the given JSON text (NaN and friends are not JSON)."""
    return json.dumps(_valid(key=key, data={"PLACEHOLDER": 0})).replace('{"PLACEHOLDER": 0}', data_json)


UNSTORABLE_NUMBERS = {
    "nan": "NaN",
    "infinity": "Infinity",
    "minus-infinity": "-Infinity",
    "1e200": "1e200",
    "minus-1e200": "-1e200",
    "1e-200": "1e-200",
    "1e126": "1e126",
    "42-digit-integer": "1" + "2" * 41,
    "39-digit-integer": "9" * 39,
    "10-to-the-40": "1" + "0" * 40,
    # DynamoDB stores these but answers them as their full digit strings (126, 41 and 126 digits),
    # which boto3's 38-digit decoder refuses (issue 25 item 13)
    "1e125": "1e125",
    "1.5e40": "1.5e40",
    "minus-9.99e125": "-9.99e125",
}


@pytest.mark.parametrize("number", list(UNSTORABLE_NUMBERS.values()), ids=list(UNSTORABLE_NUMBERS))
def test_numbers_dynamodb_cannot_store_exactly_are_422_naming_data(api: dict[str, str], number: str) -> None:
    payload = _rejected(api, raw=_with_data("bad-input:number", '{"amount": ' + number + "}"), field="data")
    assert "amount" in json.dumps(payload)


STORABLE_NUMBERS = {
    "38-digit-integer": "9" * 38,
    "1e37": "1e37",
    "minus-9.99e37": "-9.99e37",
    "1.5e-5": "1.5e-5",
    "1e-128": "1e-128",
    "zero": "0",
    "minus-zero": "-0.0",
    "pi": "3.141592653589793",
}


@pytest.mark.parametrize("text", list(STORABLE_NUMBERS.values()), ids=list(STORABLE_NUMBERS))
def test_numbers_at_dynamodbs_limits_are_stored_and_read_back_equal(api: dict[str, str], text: str) -> None:
    """Equal as decimal numbers: ``1e37`` reads back as the integer 10**37, which is what it says."""
    raw = _with_data(f"bad-input:number-ok-{text}", '{"amount": ' + text + "}")
    status, created = call_api("POST", "/reminders", raw=raw)
    assert status == 201, created
    _, got = call_api("GET", f"/reminders/{created['id']}")
    assert Decimal(str(got["data"]["amount"])) == Decimal(text)


def test_a_string_that_is_not_unicode_text_is_422_naming_data(api: dict[str, str]) -> None:
    _rejected(api, raw=_with_data("bad-input:surrogate", '{"name": "\\ud800"}'), field="data")


def test_an_empty_data_key_is_422_naming_data(api: dict[str, str]) -> None:
    _rejected(api, _valid(key="bad-input:empty-data-key", data={"": 1}), field="data")


OUT_OF_RANGE_DUE = {
    "calendar-end-minus-offset": "9999-12-31T23:59:59-23:59",  # UTC would be year 10000: OverflowError
    "calendar-start-plus-offset": "0001-01-01T00:00:00+23:59",  # UTC would be year 0: OverflowError
    "year-999": "0999-06-01T00:00:00Z",
    "year-1": "0001-01-01T00:00:00Z",
    "before-2000": "1999-12-31T23:59:59Z",
    "year-9999": "9999-12-31T23:59:59Z",
    "eleven-years-ahead": (datetime.now(UTC) + timedelta(days=11 * 366)).isoformat(),
}


@pytest.mark.parametrize("due_at", list(OUT_OF_RANGE_DUE.values()), ids=list(OUT_OF_RANGE_DUE))
def test_due_times_outside_the_documented_range_are_422_naming_due_at(
    api: dict[str, str], due_at: str
) -> None:
    payload = _rejected(api, _valid(key="bad-input:due-range", due_at=due_at), field="due_at")
    assert "due_at" in payload["message"]


@pytest.mark.parametrize("due_at", list(OUT_OF_RANGE_DUE.values()), ids=list(OUT_OF_RANGE_DUE))
def test_reschedule_outside_the_documented_range_is_422_and_changes_nothing(
    api: dict[str, str], due_at: str
) -> None:
    key = "bad-input:due-range-patch:" + re.sub(r"[^0-9A-Za-z]", "", due_at)
    status, created = call_api("POST", "/reminders", _valid(key=key))
    assert status == 201, created
    status, payload = call_api("PATCH", f"/reminders/{created['id']}", {"due_at": due_at})
    assert status == 422 and _names(payload, "due_at"), (status, payload)
    _, after = call_api("GET", f"/reminders/{created['id']}")
    assert after["version"] == created["version"] and after["due_at"] == created["due_at"]


def test_a_reminder_already_beyond_the_maximum_age_is_422_naming_due_at(api: dict[str, str]) -> None:
    too_old = (datetime.now(UTC) - timedelta(hours=25)).isoformat()
    payload = _rejected(api, _valid(key="bad-input:too-old", due_at=too_old), field="due_at")
    assert "maximum age" in payload["message"]


def test_an_overdue_reminder_inside_the_maximum_age_is_accepted_and_queued(api: dict[str, str]) -> None:
    overdue = (datetime.now(UTC) - timedelta(hours=23)).isoformat()
    status, created = call_api("POST", "/reminders", _valid(key="bad-input:overdue-ok", due_at=overdue))
    assert status == 201 and created["state"] == "queued", created


UNSENDABLE_URLS = {
    "space-in-path": "https://hooks.example.com/a b",
    "space-in-query": "https://hooks.example.com/a?b=c d",
    "tab": "https://hooks.example.com/a\tb",
    "newline-header-injection": "https://hooks.example.com/a\r\nX-Injected: 1",
    "nul": "https://hooks.example.com/a\x00",
    "non-ascii-path": "https://hooks.example.com/caf\u00e9",
    "non-ascii-host": "https://b\u00fccher.example.com/hooks",
    "port-zero": "https://hooks.example.com:0/hooks",
}


@pytest.mark.parametrize("url", list(UNSENDABLE_URLS.values()), ids=list(UNSENDABLE_URLS))
def test_urls_that_can_never_be_sent_are_refused_at_creation_naming_the_url(
    api: dict[str, str], url: str
) -> None:
    _rejected(
        api,
        _valid(key="bad-input:unsendable", channels=[{"type": "webhook", "url": url}]),
        field="channels.url",
    )


EMBEDDED_SSRF = [
    "https://[64:ff9b::7f00:1]/hook",  # NAT64 of 127.0.0.1
    "https://[64:ff9b::a9fe:a9fe]/latest/meta-data/",  # NAT64 of the metadata address
    "https://[64:ff9b:1::a00:1]/hook",  # local-use NAT64 prefix
    "https://[2002:a9fe:a9fe::]/hook",  # 6to4 of 169.254.169.254
    "https://[::7f00:1]/hook",  # IPv4-compatible 127.0.0.1
]


@pytest.mark.parametrize("url", EMBEDDED_SSRF)
def test_ipv6_forms_embedding_internal_ipv4_are_refused_at_creation(
    no_local_networks: dict[str, str], url: str
) -> None:
    payload = _rejected(no_local_networks, _valid(channels=[{"type": "webhook", "url": url}]))
    assert payload["field"] == "channels.url"
    assert "loopback, private, link-local or reserved" in payload["message"]


# -- hypothesis: generated malformed create requests ------------------------------------------------
KEY = re.compile(r"^[A-Za-z0-9:_.\-]{1,256}$")
NAME = re.compile(r"^[A-Za-z0-9:_.\-]{1,64}$")
ALLOWED = {"key", "account_id", "kind", "due_at", "channels", "template", "data"}
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
)
not_a_string = st.one_of(st.none(), st.booleans(), st.integers(), st.lists(json_scalars, max_size=2))


def _bad_text(pattern: re.Pattern[str], max_len: int) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.just(""),
        st.just("a" * (max_len + 1)),
        st.text(min_size=1, max_size=30).filter(lambda s: not pattern.fullmatch(s)),
        not_a_string,
    )


bad_due = st.one_of(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(lambda d: d.isoformat()),
    st.sampled_from(["tomorrow", "2026-02-30T10:00:00Z", "2026-12-20", "12/20/2026 10:00", "", "T10:00Z"]),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
bad_channel = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("webhook"),
            "url": st.text(max_size=40).filter(lambda u: not u.lower().startswith(("http://", "https://"))),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("email"), "to": st.text(max_size=30).filter(lambda a: "@" not in a)}
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["sms", "push", "", "WEBHOOK"]), "to": st.text(max_size=10)}
    ),
    st.fixed_dictionaries({"type": st.just("email"), "to": st.just("u@example.com"), "extra": json_scalars}),
    json_scalars,
)
bad_template = st.one_of(
    st.fixed_dictionaries({"id": st.just("renewal"), "version": st.integers(max_value=0)}),
    st.fixed_dictionaries({"id": _bad_text(NAME, 64), "version": st.just(1)}),
    st.fixed_dictionaries({"id": st.just("renewal"), "version": st.text(max_size=3)}),
    st.fixed_dictionaries({"id": st.just("renewal")}),
    json_scalars,
)
bad_data = st.one_of(
    st.dictionaries(
        st.text(max_size=8),
        st.dictionaries(st.text(max_size=3), json_scalars, max_size=2),
        min_size=1,
        max_size=3,
    ),
    st.dictionaries(st.text(max_size=8), st.lists(json_scalars, max_size=2), min_size=1, max_size=3),
    st.integers(min_value=4100, max_value=9000).map(lambda n: {"blob": "x" * n}),
    st.lists(json_scalars, max_size=3),
    st.text(max_size=10),
)


@st.composite
def malformed_requests(draw: st.DrawFn) -> tuple[str, str]:
    """(what was broken, raw request body): always invalid in at least one way."""
    body = _valid()
    how = draw(
        st.sampled_from(
            [
                "drop",
                "unknown",
                "key",
                "account_id",
                "kind",
                "due_at",
                "channels",
                "template",
                "data",
                "shape",
                "raw",
            ]
        )
    )
    if how == "drop":
        del body[draw(st.sampled_from(sorted(ALLOWED - {"data"})))]
    elif how == "unknown":
        body[draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in ALLOWED))] = draw(json_values)
    elif how == "key":
        body["key"] = draw(_bad_text(KEY, 256))
    elif how in ("account_id", "kind"):
        body[how] = draw(_bad_text(NAME if how == "kind" else KEY, 64 if how == "kind" else 128))
    elif how == "due_at":
        body["due_at"] = draw(bad_due)
    elif how == "channels":
        body["channels"] = draw(
            st.one_of(
                st.just([]),
                st.lists(bad_channel, min_size=1, max_size=3),
                st.just([{"type": "email", "to": f"u{i}@example.com"} for i in range(11)]),
                json_scalars,
            )
        )
    elif how == "template":
        body["template"] = draw(bad_template)
    elif how == "data":
        body["data"] = draw(bad_data)
    elif how == "shape":
        return how, json.dumps(draw(st.one_of(json_scalars, st.lists(json_values, max_size=3))))
    else:
        text = json.dumps(body)
        return how, text[: draw(st.integers(min_value=0, max_value=len(text) - 1))]
    return how, json.dumps(body)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(request=malformed_requests())
def test_generated_malformed_create_requests_get_a_4xx_and_write_nothing(
    api: dict[str, str], request: tuple[str, str]
) -> None:
    how, raw = request
    before = _written(api)
    status, payload = call_api("POST", "/reminders", raw=raw)
    assert 400 <= status < 500, (how, raw[:200], status, payload)
    if how in ALLOWED:
        assert _names(payload, how) or (how == "channels" and _names(payload, "channels.url")), payload
    assert _written(api) == before


# -- webhook signatures at the receiver (Standard Webhooks) ---------------------------------------
def _post(receiver: Any, body: bytes, headers: dict[str, str]) -> int:
    host, port = receiver.server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        conn.request("POST", "/hooks", body=body, headers={"content-type": "application/json", **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def _signed(body: bytes, msg_id: str, at: datetime, secret: str = DEV_WEBHOOK_SECRET) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, at, body.decode()),
    }


def test_receiver_rejects_forged_stale_and_tampered_signatures_and_dedupes_replays(receiver: Any) -> None:
    body = json.dumps({"type": "reminder.due", "id": "rem_1"}).encode()
    now = datetime.now(UTC)
    other_secret = "whsec_" + "b3RoZXItc2VjcmV0LW5vdC1vdXJz"
    cases = {
        "forged": (body, _signed(body, "dlv_forged", now, secret=other_secret)),
        "tampered": (body + b" ", _signed(body, "dlv_tampered", now)),
        "stale": (body, _signed(body, "dlv_stale", now - timedelta(minutes=10))),
        "future": (body, _signed(body, "dlv_future", now + timedelta(minutes=10))),
        "unsigned": (body, {"webhook-id": "dlv_unsigned", "webhook-timestamp": str(int(now.timestamp()))}),
        "garbage": (body, {**_signed(body, "dlv_garbage", now), "webhook-signature": "v1,AAAA"}),
    }
    for name, (raw, headers) in cases.items():
        assert _post(receiver, raw, headers) == 401, name
    snap = receiver.snapshot()
    assert snap["rejected_signatures"] == len(cases)
    assert snap["accepted"] == {} and snap["posts"] == {}

    good = _signed(body, "dlv_good", now)
    assert _post(receiver, body, good) == 200
    assert _post(receiver, body, good) == 409  # a replay inside the tolerance: the id is known
    snap = receiver.snapshot()
    assert snap["accepted"] == {"dlv_good": 1} and snap["posts"] == {"dlv_good": 2}
    # A replay captured long ago fails the timestamp check before any dedupe.
    old = _signed(body, "dlv_good", now - timedelta(minutes=6))
    assert _post(receiver, body, old) == 401


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    number=st.one_of(
        st.integers(min_value=-(10**45), max_value=10**45),
        st.floats(allow_nan=True),
        st.sampled_from([1e125, 1.5e40, -9.99e125, 1e37, 1e38, 1.5e-5, 123.25]),
    )
)
def test_every_number_the_api_accepts_is_one_boto3_serializes_for_dynamodb(number: float) -> None:
    """The API's number rule agrees with what actually reaches DynamoDB (boto3's serializer, the
    store's own float conversion): accepted ones serialize, refused ones would not or would be inexact."""
    from boto3.dynamodb.types import TypeSerializer
    from reminders.adapters.codec import to_dynamo
    from reminders.handlers.api import _number_problem

    problem = _number_problem(number)
    try:
        TypeSerializer().serialize(to_dynamo(number))
        serializes = True
    except (TypeError, ArithmeticError):
        serializes = False
    if problem is None:
        assert serializes, number
        # ... and boto3's own decoder reads back what DynamoDB answers: the full digit expansion
        # (issue 25 item 13: 1e125 is answered as 126 digits, which a 38-digit decoder refuses).
        from decimal import Context, Decimal

        from boto3.dynamodb.types import TypeDeserializer

        sent = Decimal(TypeSerializer().serialize(to_dynamo(number))["N"])
        answered = format(sent.normalize(Context(prec=200)), "f")
        assert TypeDeserializer().deserialize({"N": answered}) == Decimal(str(to_dynamo(number))), number
    elif serializes:  # refused although boto3 would send it: infinities (DynamoDB refuses them),
        # the sliver of DynamoDB's range below boto3's 38-digit floor of 1e-128, and numbers DynamoDB
        # would answer with more than 38 digits (boto3 could not read them back)
        assert isinstance(number, float) and (
            math.isinf(number) or abs(number) < 1e-127 or "would return it as" in str(problem)
        ), (number, problem)
