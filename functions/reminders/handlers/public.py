"""PublicFunction: the unauthenticated routes that act on stored data (issue 24 item 8).

``POST /unsubscribe/{token}`` and ``POST /inbound/receiver`` are authorized by what they carry (an
HMAC token, a Standard Webhooks signature), not by IAM, so they run in a function of their own whose
role reaches only the table partitions these two routes use (``dynamodb:LeadingKeys``: reminders and
endpoints read, receipts and suppression entries written; infra/api.py). The handler composes the
API's own resolver — the same routes, models, validation and error mapping, one OpenAPI document —
and serves only these routes: any other route key answers as a route API Gateway does not have.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from . import api
from .entry import entry_point

#: The route keys API Gateway sends to this function (infra/api.py ``PUBLIC_FUNCTION_ROUTES``).
ROUTES = frozenset({"POST /unsubscribe/{token}", "POST /inbound/receiver"})
NOT_FOUND = {
    "statusCode": 404,
    "headers": {"Content-Type": "application/json"},
    "body": json.dumps({"message": "Not Found"}),
    "isBase64Encoded": False,
}


@entry_point
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("routeKey") not in ROUTES:
        return dict(NOT_FOUND)
    event, refused = api.refuse_unsupported_media(event)  # the API function's own guard
    return refused if refused is not None else api.app.resolve(event, context)
