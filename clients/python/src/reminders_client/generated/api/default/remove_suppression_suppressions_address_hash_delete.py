from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_view import ErrorView
from ...models.suppressions_removed import SuppressionsRemoved
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    address_hash: str,
    *,
    account_id: str,
    scope: None | str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["account_id"] = account_id

    json_scope: None | str | Unset
    if isinstance(scope, Unset):
        json_scope = UNSET
    else:
        json_scope = scope
    params["scope"] = json_scope


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/suppressions/{address_hash}".format(address_hash=quote(str(address_hash), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorView | SuppressionsRemoved | None:
    if response.status_code == 200:
        response_200 = SuppressionsRemoved.from_dict(response.json())



        return response_200

    if response.status_code == 403:
        response_403 = ErrorView.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = ErrorView.from_dict(response.json())



        return response_404

    if response.status_code == 422:
        response_422 = ErrorView.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorView | SuppressionsRemoved]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    address_hash: str,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    scope: None | str | Unset = UNSET,

) -> Response[ErrorView | SuppressionsRemoved]:
    """ DELETE /suppressions/{address_hash}

    Args:
        address_hash (str):
        account_id (str):
        scope (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | SuppressionsRemoved]
     """


    kwargs = _get_kwargs(
        address_hash=address_hash,
account_id=account_id,
scope=scope,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    address_hash: str,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    scope: None | str | Unset = UNSET,

) -> ErrorView | SuppressionsRemoved | None:
    """ DELETE /suppressions/{address_hash}

    Args:
        address_hash (str):
        account_id (str):
        scope (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | SuppressionsRemoved
     """


    return sync_detailed(
        address_hash=address_hash,
client=client,
account_id=account_id,
scope=scope,

    ).parsed

async def asyncio_detailed(
    address_hash: str,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    scope: None | str | Unset = UNSET,

) -> Response[ErrorView | SuppressionsRemoved]:
    """ DELETE /suppressions/{address_hash}

    Args:
        address_hash (str):
        account_id (str):
        scope (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | SuppressionsRemoved]
     """


    kwargs = _get_kwargs(
        address_hash=address_hash,
account_id=account_id,
scope=scope,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    address_hash: str,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    scope: None | str | Unset = UNSET,

) -> ErrorView | SuppressionsRemoved | None:
    """ DELETE /suppressions/{address_hash}

    Args:
        address_hash (str):
        account_id (str):
        scope (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | SuppressionsRemoved
     """


    return (await asyncio_detailed(
        address_hash=address_hash,
client=client,
account_id=account_id,
scope=scope,

    )).parsed
