from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.create_endpoint import CreateEndpoint
from ...models.endpoint_secret_view import EndpointSecretView
from ...models.error_view import ErrorView
from typing import cast



def _get_kwargs(
    *,
    body: CreateEndpoint,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/endpoints",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EndpointSecretView | ErrorView | None:
    if response.status_code == 201:
        response_201 = EndpointSecretView.from_dict(response.json())



        return response_201

    if response.status_code == 403:
        response_403 = ErrorView.from_dict(response.json())



        return response_403

    if response.status_code == 409:
        response_409 = ErrorView.from_dict(response.json())



        return response_409

    if response.status_code == 415:
        response_415 = ErrorView.from_dict(response.json())



        return response_415

    if response.status_code == 422:
        response_422 = ErrorView.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EndpointSecretView | ErrorView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreateEndpoint,

) -> Response[EndpointSecretView | ErrorView]:
    """ POST /endpoints

    Args:
        body (CreateEndpoint):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointSecretView | ErrorView]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    body: CreateEndpoint,

) -> EndpointSecretView | ErrorView | None:
    """ POST /endpoints

    Args:
        body (CreateEndpoint):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointSecretView | ErrorView
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreateEndpoint,

) -> Response[EndpointSecretView | ErrorView]:
    """ POST /endpoints

    Args:
        body (CreateEndpoint):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointSecretView | ErrorView]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: CreateEndpoint,

) -> EndpointSecretView | ErrorView | None:
    """ POST /endpoints

    Args:
        body (CreateEndpoint):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointSecretView | ErrorView
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
