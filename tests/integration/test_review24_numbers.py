"""Hostile review of issues 24/25 (review24): an endpoint's rate that boto3 cannot store."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.lambda_runtime import call_api

# A float above 0 whose Decimal underflows boto3's DynamoDB context (Emin -128; DynamoDB's own floor
# is 1e-130): ``Rate`` only says gt=0, so it reaches the store.
UNSTORABLE_RATES = [1e-300, 5e-200]


@pytest.mark.parametrize("rate", UNSTORABLE_RATES)
def test_endpoint_create_is_refused_naming_rate_per_second_when_the_rate_is_below_what_dynamodb_stores(
    aws: dict[str, str], receiver: Any, rate: float
) -> None:
    status, body = call_api(
        "POST",
        "/endpoints",
        {"account_id": "acct-1", "url": receiver.url + "/hooks", "rate_per_second": rate},
    )
    assert status == 422 and "rate_per_second" in json.dumps(body), (status, body)


@pytest.mark.parametrize("rate", UNSTORABLE_RATES)
def test_endpoint_patch_is_refused_naming_rate_per_second_when_the_rate_is_below_what_dynamodb_stores(
    aws: dict[str, str], receiver: Any, rate: float
) -> None:
    status, created = call_api("POST", "/endpoints", {"account_id": "acct-1", "url": receiver.url + "/hooks"})
    assert status == 201, created
    status, body = call_api("PATCH", f"/endpoints/{created['id']}", {"rate_per_second": rate})
    assert status == 422 and "rate_per_second" in json.dumps(body), (status, body)
    status, got = call_api("GET", f"/endpoints/{created['id']}")
    assert status == 200 and got["rate_per_second"] is None, got
