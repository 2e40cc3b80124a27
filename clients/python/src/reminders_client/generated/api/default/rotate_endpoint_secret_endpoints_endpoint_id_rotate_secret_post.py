from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.endpoint_secret_view import EndpointSecretView
from ...models.error_view import ErrorView
from ...models.rotate_secret import RotateSecret
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    endpoint_id: str,
    *,
    body: None | RotateSecret | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/endpoints/{endpoint_id}/rotate-secret".format(endpoint_id=quote(str(endpoint_id), safe=""),),
    }

    
    if isinstance(body, RotateSecret):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EndpointSecretView | ErrorView | None:
    if response.status_code == 200:
        response_200 = EndpointSecretView.from_dict(response.json())



        return response_200

    if response.status_code == 404:
        response_404 = ErrorView.from_dict(response.json())



        return response_404

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
    endpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | RotateSecret | Unset = UNSET,

) -> Response[EndpointSecretView | ErrorView]:
    """ POST /endpoints/{endpoint_id}/rotate-secret

    Args:
        endpoint_id (str):
        body (None | RotateSecret | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointSecretView | ErrorView]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    endpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | RotateSecret | Unset = UNSET,

) -> EndpointSecretView | ErrorView | None:
    """ POST /endpoints/{endpoint_id}/rotate-secret

    Args:
        endpoint_id (str):
        body (None | RotateSecret | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointSecretView | ErrorView
     """


    return sync_detailed(
        endpoint_id=endpoint_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    endpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | RotateSecret | Unset = UNSET,

) -> Response[EndpointSecretView | ErrorView]:
    """ POST /endpoints/{endpoint_id}/rotate-secret

    Args:
        endpoint_id (str):
        body (None | RotateSecret | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointSecretView | ErrorView]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    endpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | RotateSecret | Unset = UNSET,

) -> EndpointSecretView | ErrorView | None:
    """ POST /endpoints/{endpoint_id}/rotate-secret

    Args:
        endpoint_id (str):
        body (None | RotateSecret | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointSecretView | ErrorView
     """


    return (await asyncio_detailed(
        endpoint_id=endpoint_id,
client=client,
body=body,

    )).parsed
