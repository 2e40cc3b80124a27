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
