"""Issue 31 item 1: the local API verifies SigV4 on IAM routes as API Gateway does (403 otherwise),
and the caller is the principal of the key that signed, never a header it sends."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from reminders_ops.local.http_api import HttpApi
from reminders_ops.local.spec import RouteSpec

SHOP_A = "arn:aws:iam::111111111111:role/shop-a"
OPERATOR_PRINCIPAL = "arn:aws:iam::111111111111:role/reminders-operator"


class EchoCaller:
    """An API function that answers with the caller API Gateway put into the event."""

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        iam = ((event["requestContext"].get("authorizer") or {}).get("iam")) or {}
        return {"statusCode": 200, "body": json.dumps({"caller": iam.get("userArn")})}


@pytest.fixture
def api() -> Iterator[HttpApi]:
    routes = [
        RouteSpec("POST /reminders", "Fn", "AWS_IAM"),
        RouteSpec("GET /reminders/{id}", "Fn", "AWS_IAM"),
        RouteSpec("POST /inbound/receiver", "Fn", "NONE"),
    ]
    server = HttpApi(
        routes,
        {"Fn": EchoCaller()},  # type: ignore[dict-item]
        account_id="111111111111",
        port=0,
        default_principal=OPERATOR_PRINCIPAL,
    ).start()
    try:
        yield server
    finally:
        server.stop()


def call(method: str, url: str, body: bytes = b"", headers: dict[str, str] | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body or None, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def signed(method: str, url: str, body: bytes = b"", **kw: Any) -> dict[str, str]:
    from reminders_ops.local.sigv4 import sign

    return sign(method, url, body=body, headers={"content-type": "application/json"}, **kw)


def test_request_is_refused_when_unsigned(api: HttpApi) -> None:
    status, body = call("GET", f"{api.url}/reminders/r1", headers={"x-reminders-principal": SHOP_A})
    assert status == 403
    assert body == {"message": "Forbidden"}


def test_request_is_refused_when_signed_with_a_wrong_secret(api: HttpApi) -> None:
    from reminders_ops.local.sigv4 import LocalCredentials, credentials_for

    good = credentials_for(SHOP_A)
    url = f"{api.url}/reminders/r1"
    headers = signed("GET", url, credentials=LocalCredentials(good.access_key_id, "not-its-secret"))
    status, body = call("GET", url, headers=headers)
    assert status == 403
    assert "signature we calculated does not match" in body["message"]


def test_request_is_refused_when_body_changed_after_signing(api: HttpApi) -> None:
    from reminders_ops.local.sigv4 import credentials_for

    url = f"{api.url}/reminders"
    headers = signed("POST", url, b'{"key":"a"}', credentials=credentials_for(SHOP_A))
    status, _ = call("POST", url, b'{"key":"b"}', headers)
    assert status == 403


def test_request_is_refused_when_signed_for_another_region(api: HttpApi) -> None:
    from reminders_ops.local.sigv4 import credentials_for

    url = f"{api.url}/reminders/r1"
    status, _ = call(
        "GET", url, headers=signed("GET", url, credentials=credentials_for(SHOP_A), region="eu-west-1")
    )
    assert status == 403


def test_request_is_refused_when_the_access_key_is_unknown(api: HttpApi) -> None:
    from reminders_ops.local.sigv4 import LocalCredentials

    url = f"{api.url}/reminders/r1"
    status, _ = call("GET", url, headers=signed("GET", url, credentials=LocalCredentials("AKIAUNKNOWN", "x")))
    assert status == 403


def test_signed_caller_is_the_principal_of_its_key_not_of_a_header(api: HttpApi) -> None:
    from reminders_ops.local.sigv4 import OPERATOR, credentials_for

    url = f"{api.url}/reminders/r1"
    headers = signed("GET", url, credentials=credentials_for(SHOP_A))
    headers["x-reminders-principal"] = OPERATOR_PRINCIPAL  # unsigned claim: ignored
    assert call("GET", url, headers=headers) == (200, {"caller": SHOP_A})
    assert call("GET", url, headers=signed("GET", url, credentials=OPERATOR)) == (
        200,
        {"caller": OPERATOR_PRINCIPAL},
    )


def test_unauthenticated_route_needs_no_signature(api: HttpApi) -> None:
    status, _ = call("POST", f"{api.url}/inbound/receiver", b"{}")
    assert status == 200


def test_request_is_refused_when_its_signature_is_older_than_five_minutes() -> None:
    from datetime import UTC, datetime, timedelta

    from reminders_ops.local.sigv4 import LocalIam, Refused, credentials_for

    url = "http://127.0.0.1:9/reminders/r1"
    headers = {**signed("GET", url, credentials=credentials_for(SHOP_A)), "host": "127.0.0.1:9"}
    later = LocalIam(
        region="us-east-1",
        operator_principal=OPERATOR_PRINCIPAL,
        now=lambda: datetime.now(UTC) + timedelta(minutes=6),
    )
    with pytest.raises(Refused, match="expired"):
        later.verify("GET", url, headers, b"")
    now = LocalIam(region="us-east-1", operator_principal=OPERATOR_PRINCIPAL)
    assert now.verify("GET", url, headers, b"") == SHOP_A


def test_request_is_refused_when_host_is_not_signed() -> None:
    from reminders_ops.local.sigv4 import LocalIam, Refused, credentials_for

    url = "http://127.0.0.1:9/reminders/r1"
    headers = {**signed("GET", url, credentials=credentials_for(SHOP_A)), "host": "127.0.0.1:9"}
    auth = headers["Authorization"]
    assert "SignedHeaders=content-type;host;x-amz-date," in auth
    headers["Authorization"] = auth.replace("SignedHeaders=content-type;host;", "SignedHeaders=content-type;")
    iam = LocalIam(region="us-east-1", operator_principal=OPERATOR_PRINCIPAL)
    with pytest.raises(Refused, match="host"):
        iam.verify("GET", url, headers, b"")


def test_support_explain_is_answered_when_it_asks_the_api_signed_with_the_callers_credentials(
    api: HttpApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reminders support explain --api-url``: an unsigned request is refused (403, as API Gateway's
    IAM authorization refuses it); the CLI's, signed with the caller's boto3 credentials, acts as
    the principal of those credentials."""
    import argparse

    from reminders_ops.cli.support import fetch_view
    from reminders_ops.local.sigv4 import credentials_for

    rid = "rem_" + "0" * 32
    assert call("GET", f"{api.url}/reminders/{rid}")[0] == 403
    creds = credentials_for(SHOP_A)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", creds.access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", creds.secret_access_key)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    assert fetch_view(argparse.Namespace(ref=rid, api_url=api.url + "/")) == {"caller": SHOP_A}


def test_support_explain_is_refused_when_the_callers_credentials_are_wrong(
    api: HttpApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from reminders_ops.cli.support import fetch_view
    from reminders_ops.local.sigv4 import credentials_for

    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", credentials_for(SHOP_A).access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-its-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with pytest.raises(urllib.error.HTTPError) as refused:
        fetch_view(argparse.Namespace(ref="rem_" + "0" * 32, api_url=api.url))
    assert refused.value.code == 403
