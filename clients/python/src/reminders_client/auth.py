"""SigV4 for httpx with botocore's signer, as API Gateway's IAM authorization expects it."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

#: What is signed besides ``host`` (botocore adds it): headers a proxy does not rewrite.
_SIGNED = ("content-type", "if-match")


class SigV4(httpx.Auth):
    """Signs each request (and each retry, afresh) with the current credentials of ``credentials``:
    a botocore/boto3 credentials object (refreshable ones refresh), e.g. ``boto3.Session().get_credentials()``."""

    requires_request_body = True

    def __init__(self, credentials: Any, region: str, service: str = "execute-api") -> None:
        if credentials is None:
            raise ValueError("no AWS credentials: configure boto3 (env, profile, role) or pass a session")
        self.credentials = credentials
        self.region = region
        self.service = service

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        frozen = self.credentials.get_frozen_credentials()
        headers = {k: request.headers[k] for k in _SIGNED if k in request.headers}
        aws = AWSRequest(method=request.method, url=str(request.url), data=request.content, headers=headers)
        SigV4Auth(frozen, self.service, self.region).add_auth(aws)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in aws.headers:
                request.headers[name] = aws.headers[name]
        yield request
