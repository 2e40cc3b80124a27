"""Review 31: the local runtime's SigV4 check against a signer who declares its own payload hash."""

from __future__ import annotations

import hashlib

import pytest
from reminders_ops.local.sigv4 import LocalIam, Refused, credentials_for, sign

SHOP_A = "arn:aws:iam::111111111111:role/shop-a"
OPERATOR_PRINCIPAL = "arn:aws:iam::111111111111:role/reminders-operator"
URL = "http://127.0.0.1:9/reminders"


def _iam() -> LocalIam:
    return LocalIam(region="us-east-1", operator_principal=OPERATOR_PRINCIPAL)


@pytest.mark.parametrize(
    "declared",
    ["UNSIGNED-PAYLOAD", hashlib.sha256(b'{"key":"a"}').hexdigest()],
    ids=["unsigned-payload", "hash-of-the-signed-body"],
)
def test_request_is_refused_when_its_body_is_not_the_one_its_declared_hash_names(declared: str) -> None:
    """botocore's canonical request takes a signed ``x-amz-content-sha256`` as the payload hash
    without hashing the body: a signature made over one body (or none) would carry another."""
    headers = sign(
        "POST",
        URL,
        body=b'{"key":"a"}',
        headers={"content-type": "application/json", "x-amz-content-sha256": declared},
        credentials=credentials_for(SHOP_A),
    )
    headers["host"] = "127.0.0.1:9"
    with pytest.raises(Refused, match="signature"):
        _iam().verify("POST", URL, headers, b'{"key":"b"}')


def test_request_is_accepted_when_its_declared_hash_is_its_bodys() -> None:
    body = b'{"key":"a"}'
    headers = sign(
        "POST",
        URL,
        body=body,
        headers={
            "content-type": "application/json",
            "x-amz-content-sha256": hashlib.sha256(body).hexdigest(),
        },
        credentials=credentials_for(SHOP_A),
    )
    headers["host"] = "127.0.0.1:9"
    assert _iam().verify("POST", URL, headers, body) == SHOP_A


def _raw_botocore_headers(url: str) -> dict[str, str]:
    """Signed as a naive client signs (awscurl before its fix): botocore over the URL as written,
    its query not percent-encoded."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    creds = credentials_for(SHOP_A)
    request = AWSRequest(method="GET", url=url, data=b"", headers={})
    SigV4Auth(Credentials(creds.access_key_id, creds.secret_access_key), "execute-api", "us-east-1").add_auth(
        request
    )
    return {**dict(request.headers.items()), "host": "127.0.0.1:9"}


def test_request_is_refused_when_its_query_was_signed_without_percent_encoding() -> None:
    """API Gateway decodes the query and URI-encodes each name and value (RFC 3986) before checking:
    a signature over ``key=renewal:acct-1,2027`` as written fails there (awscurl issue 138), so here too."""
    url = "http://127.0.0.1:9/reminders?account_id=acct-a&key=renewal:acct-1,2027"
    with pytest.raises(Refused, match="signature"):
        _iam().verify("GET", url, _raw_botocore_headers(url), b"")


def test_request_is_accepted_when_its_query_was_signed_percent_encoded() -> None:
    url = "http://127.0.0.1:9/reminders?key=renewal%3Aacct-1%2C2027&account_id=acct-a"
    assert _iam().verify("GET", url, _raw_botocore_headers(url), b"") == SHOP_A


def test_local_sign_helper_is_accepted_when_its_url_query_is_not_percent_encoded() -> None:
    """The local tools sign URLs as they write them: the helper signs the canonical query."""
    url = "http://127.0.0.1:9/reminders?account_id=acct-a&key=renewal:acct-1,2027"
    headers = {**sign("GET", url, credentials=credentials_for(SHOP_A)), "host": "127.0.0.1:9"}
    assert _iam().verify("GET", url, headers, b"") == SHOP_A


def test_request_is_refused_when_an_unsigned_duplicate_joins_a_signed_header() -> None:
    """The API's event joins a header sent twice (any case) with commas, as API Gateway does: a
    relayed request given a second ``if-match`` reaches the app as ``"5","3"``. The check must see
    the same value, not only the last one."""
    url = "http://127.0.0.1:9/reminders/rem_1"
    signed_headers = sign(
        "PATCH",
        url,
        body=b"{}",
        headers={"content-type": "application/json", "if-match": '"3"'},
        credentials=credentials_for(SHOP_A),
    )
    headers = {"if-match": '"5"', **{k: v for k, v in signed_headers.items() if k.lower() != "if-match"}}
    headers["If-Match"] = '"3"'
    headers["host"] = "127.0.0.1:9"
    with pytest.raises(Refused, match="signature"):
        _iam().verify("PATCH", url, headers, b"{}")
