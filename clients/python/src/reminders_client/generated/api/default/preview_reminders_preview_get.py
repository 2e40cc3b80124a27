from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_view import ErrorView
from ...models.preview_view import PreviewView
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    next_minutes: int | Unset = 30,
    account_id: None | str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["next_minutes"] = next_minutes

    json_account_id: None | str | Unset
    if isinstance(account_id, Unset):
        json_account_id = UNSET
    else:
        json_account_id = account_id
    params["account_id"] = json_account_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/reminders/preview",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorView | PreviewView | None:
    if response.status_code == 200:
        response_200 = PreviewView.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorView | PreviewView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    next_minutes: int | Unset = 30,
    account_id: None | str | Unset = UNSET,

) -> Response[ErrorView | PreviewView]:
    """ GET /reminders/preview

    Args:
        next_minutes (int | Unset):  Default: 30.
        account_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | PreviewView]
     """


    kwargs = _get_kwargs(
        next_minutes=next_minutes,
account_id=account_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    next_minutes: int | Unset = 30,
    account_id: None | str | Unset = UNSET,

) -> ErrorView | PreviewView | None:
    """ GET /reminders/preview

    Args:
        next_minutes (int | Unset):  Default: 30.
        account_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | PreviewView
     """


    return sync_detailed(
        client=client,
next_minutes=next_minutes,
account_id=account_id,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    next_minutes: int | Unset = 30,
    account_id: None | str | Unset = UNSET,

) -> Response[ErrorView | PreviewView]:
    """ GET /reminders/preview

    Args:
        next_minutes (int | Unset):  Default: 30.
        account_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | PreviewView]
     """


    kwargs = _get_kwargs(
        next_minutes=next_minutes,
account_id=account_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    next_minutes: int | Unset = 30,
    account_id: None | str | Unset = UNSET,

) -> ErrorView | PreviewView | None:
    """ GET /reminders/preview

    Args:
        next_minutes (int | Unset):  Default: 30.
        account_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | PreviewView
     """


    return (await asyncio_detailed(
        client=client,
next_minutes=next_minutes,
account_id=account_id,

    )).parsed
