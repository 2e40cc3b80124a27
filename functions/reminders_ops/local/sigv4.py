"""SigV4 on the local API, as API Gateway's IAM authorization checks it (issue 31).

A route with ``AWS_IAM`` authorization answers 403 to a request that is unsigned, signed for another
region or service, signed too long ago, signed with an unknown access key, or whose signature does
not match; a good signature makes the key's principal the caller (``requestContext.authorizer.iam``),
whose accounts the grants table decides, exactly as in AWS. The check recomputes the signature with
botocore's own ``SigV4Auth`` over the headers the caller signed (not a signer of our own).

Local credentials are fixed and public (like moto's ``testing``): they prove nothing outside this
process. :data:`OPERATOR` is the deployment's bootstrap principal (every account);
:func:`credentials_for` gives any other principal ARN its own key pair, derived from the ARN, so a
test or a developer can act as ``arn:aws:iam::111111111111:role/shop-a`` by signing with
``credentials_for("arn:aws:iam::111111111111:role/shop-a")``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote, urlsplit, urlunsplit

SERVICE = "execute-api"
#: How far a signature's X-Amz-Date may be from now (SigV4's limit).
MAX_SKEW = timedelta(minutes=5)
_ROOT = b"reminders-local-sigv4-not-a-secret"
_DERIVED_PREFIX = "LOCAL"
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<akid>[^/,\s]+)/(?P<date>\d{8})/(?P<region>[^/,\s]+)/"
    r"(?P<service>[^/,\s]+)/aws4_request,\s*SignedHeaders=(?P<signed>[a-z0-9;\-]+),\s*"
    r"Signature=(?P<signature>[0-9a-f]{64})$"
)


@dataclass(frozen=True, slots=True)
class LocalCredentials:
    access_key_id: str
    secret_access_key: str


#: The local operator's key pair: the caller is the runtime's bootstrap principal.
OPERATOR = LocalCredentials("AKIALOCALOPERATOR000", "local-operator-secret-not-a-secret")


def credentials_for(principal_arn: str) -> LocalCredentials:
    """The fixed local key pair of ``principal_arn`` (its access key id names the principal)."""
    akid = _DERIVED_PREFIX + base64.b32encode(principal_arn.encode()).decode().rstrip("=")
    secret = hmac.new(_ROOT, principal_arn.encode(), hashlib.sha256).hexdigest()
    return LocalCredentials(akid, secret)


def _principal_of(akid: str, operator_principal: str) -> tuple[str, LocalCredentials] | None:
    if akid == OPERATOR.access_key_id:
        return operator_principal, OPERATOR
    if not akid.startswith(_DERIVED_PREFIX):
        return None
    encoded = akid[len(_DERIVED_PREFIX) :]
    try:
        arn = base64.b32decode(encoded + "=" * (-len(encoded) % 8)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    if not arn.startswith("arn:aws:iam::") and not arn.startswith("arn:aws:sts::"):
        return None
    return arn, credentials_for(arn)


def canonical_url(url: str) -> str:
    """``url`` with its query as SigV4 canonicalises it (API Gateway too): each name and value
    decoded, then URI-encoded (RFC 3986 unreserved kept). botocore's signer takes the query as
    written, so a signature over ``a=x:y`` would pass here and fail in AWS."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = []
    for pair in parts.query.split("&"):
        if pair:
            name, _, value = pair.partition("=")
            pairs.append(f"{quote(unquote(name), safe='-_.~')}={quote(unquote(value), safe='-_.~')}")
    return urlunsplit(parts._replace(query="&".join(pairs)))


class Refused(Exception):
    """403: the request is not (well) signed. ``message`` is what API Gateway would answer."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LocalIam:
    """Verifies SigV4 like API Gateway's IAM authorization; answers the caller's principal ARN."""

    def __init__(self, *, region: str, operator_principal: str, now: object = None) -> None:
        self.region = region
        self.operator_principal = operator_principal
        self._now = now  # a callable returning an aware datetime (tests); None: the wall clock

    def _clock(self) -> datetime:
        return self._now() if callable(self._now) else datetime.now(UTC)

    def verify(self, method: str, url: str, headers: dict[str, str], body: bytes) -> str:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        lowered: dict[str, str] = {}
        for k, v in headers.items():  # a header sent twice (any case): joined, as the API's event joins it
            key = k.lower()
            lowered[key] = f"{lowered[key]},{v}" if key in lowered else v
        auth = lowered.get("authorization")
        if not auth:
            raise Refused("Forbidden")
        m = _AUTH.match(auth.strip())
        if m is None:
            raise Refused("Authorization header requires 'Credential', 'Signature' and 'SignedHeaders'.")
        found = _principal_of(m["akid"], self.operator_principal)
        if found is None:
            raise Refused("The security token included in the request is invalid.")
        principal, creds = found
        if m["service"] != SERVICE or m["region"] != self.region:
            raise Refused(f"Credential should be scoped to a valid region and service '{SERVICE}'.")
        amz_date = lowered.get("x-amz-date", "")
        try:
            signed_at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        except ValueError:
            raise Refused(
                "Authorization header requires existence of either a 'X-Amz-Date' header."
            ) from None
        if m["date"] != amz_date[:8]:
            raise Refused("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date.")
        if abs(self._clock() - signed_at) > MAX_SKEW:
            raise Refused("Signature expired")
        signed = m["signed"].split(";")
        if "host" not in signed or any(h not in lowered for h in signed):
            raise Refused("Authorization header requires 'host' among SignedHeaders.")
        declared = lowered.get("x-amz-content-sha256")
        if declared is not None and not hmac.compare_digest(declared, hashlib.sha256(body).hexdigest()):
            # botocore's canonical request takes this header as the payload's hash without hashing
            # the body: a declared hash (or UNSIGNED-PAYLOAD) must be the body's, or the signature
            # would carry any body.
            raise Refused(
                "The request signature we calculated does not match the signature you provided. "
                "Check your AWS Secret Access Key and signing method."
            )
        request = AWSRequest(
            method=method, url=canonical_url(url), data=body, headers={h: lowered[h] for h in signed}
        )
        request.context["timestamp"] = amz_date
        signer = SigV4Auth(Credentials(creds.access_key_id, creds.secret_access_key), SERVICE, self.region)
        canonical = signer.canonical_request(request)
        expected = signer.signature(signer.string_to_sign(request, canonical), request)
        if not hmac.compare_digest(expected, m["signature"]):
            raise Refused(
                "The request signature we calculated does not match the signature you provided. "
                "Check your AWS Secret Access Key and signing method."
            )
        return principal


def sign(
    method: str,
    url: str,
    *,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    credentials: LocalCredentials = OPERATOR,
    region: str = "us-east-1",
) -> dict[str, str]:
    """The headers of a request signed for the local API (botocore's signer), for local tools/tests."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method=method, url=canonical_url(url), data=body, headers=dict(headers or {}))
    SigV4Auth(
        Credentials(credentials.access_key_id, credentials.secret_access_key), SERVICE, region
    ).add_auth(request)
    return dict(request.headers.items())
