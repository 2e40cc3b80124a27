from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_view import ErrorView
from ...models.suppressions_view import SuppressionsView
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    account_id: str,
    limit: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["account_id"] = account_id

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/suppressions",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorView | SuppressionsView | None:
    if response.status_code == 200:
        response_200 = SuppressionsView.from_dict(response.json())



        return response_200

    if response.status_code == 403:
        response_403 = ErrorView.from_dict(response.json())



        return response_403

    if response.status_code == 422:
        response_422 = ErrorView.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorView | SuppressionsView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    limit: int | Unset = 100,

) -> Response[ErrorView | SuppressionsView]:
    """ GET /suppressions

    Args:
        account_id (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | SuppressionsView]
     """


    kwargs = _get_kwargs(
        account_id=account_id,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    limit: int | Unset = 100,

) -> ErrorView | SuppressionsView | None:
    """ GET /suppressions

    Args:
        account_id (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | SuppressionsView
     """


    return sync_detailed(
        client=client,
account_id=account_id,
limit=limit,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    limit: int | Unset = 100,

) -> Response[ErrorView | SuppressionsView]:
    """ GET /suppressions

    Args:
        account_id (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | SuppressionsView]
     """


    kwargs = _get_kwargs(
        account_id=account_id,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    limit: int | Unset = 100,

) -> ErrorView | SuppressionsView | None:
    """ GET /suppressions

    Args:
        account_id (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | SuppressionsView
     """


    return (await asyncio_detailed(
        client=client,
account_id=account_id,
limit=limit,

    )).parsed
