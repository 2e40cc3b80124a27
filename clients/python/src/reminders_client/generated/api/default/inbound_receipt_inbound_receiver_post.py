from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_view import ErrorView
from ...models.receipt_accepted import ReceiptAccepted
from typing import cast



def _get_kwargs(
    
) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/inbound/receiver",
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorView | ReceiptAccepted | None:
    if response.status_code == 202:
        response_202 = ReceiptAccepted.from_dict(response.json())



        return response_202

    if response.status_code == 400:
        response_400 = ErrorView.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = ErrorView.from_dict(response.json())



        return response_401

    if response.status_code == 409:
        response_409 = ErrorView.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = ErrorView.from_dict(response.json())



        return response_413

    if response.status_code == 422:
        response_422 = ErrorView.from_dict(response.json())



        return response_422

    if response.status_code == 503:
        response_503 = ErrorView.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorView | ReceiptAccepted]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,

) -> Response[ErrorView | ReceiptAccepted]:
    """ POST /inbound/receiver

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | ReceiptAccepted]
     """


    kwargs = _get_kwargs(
        
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,

) -> ErrorView | ReceiptAccepted | None:
    """ POST /inbound/receiver

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | ReceiptAccepted
     """


    return sync_detailed(
        client=client,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,

) -> Response[ErrorView | ReceiptAccepted]:
    """ POST /inbound/receiver

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | ReceiptAccepted]
     """


    kwargs = _get_kwargs(
        
    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,

) -> ErrorView | ReceiptAccepted | None:
    """ POST /inbound/receiver

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | ReceiptAccepted
     """


    return (await asyncio_detailed(
        client=client,

    )).parsed
