from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error import Error
from ...models.version_view import VersionView
from typing import cast



def _get_kwargs(
    template_id: str,
    version: int,
    *,
    account_id: str,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["account_id"] = account_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/templates/{template_id}/versions/{version}/retire".format(template_id=quote(str(template_id), safe=""),version=quote(str(version), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | VersionView | None:
    if response.status_code == 200:
        response_200 = VersionView.from_dict(response.json())



        return response_200

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())



        return response_404

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | VersionView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    template_id: str,
    version: int,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,

) -> Response[Error | VersionView]:
    """ POST /templates/{template_id}/versions/{version}/retire

    Args:
        template_id (str):
        version (int):
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | VersionView]
     """


    kwargs = _get_kwargs(
        template_id=template_id,
version=version,
account_id=account_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    template_id: str,
    version: int,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,

) -> Error | VersionView | None:
    """ POST /templates/{template_id}/versions/{version}/retire

    Args:
        template_id (str):
        version (int):
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | VersionView
     """


    return sync_detailed(
        template_id=template_id,
version=version,
client=client,
account_id=account_id,

    ).parsed

async def asyncio_detailed(
    template_id: str,
    version: int,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,

) -> Response[Error | VersionView]:
    """ POST /templates/{template_id}/versions/{version}/retire

    Args:
        template_id (str):
        version (int):
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | VersionView]
     """


    kwargs = _get_kwargs(
        template_id=template_id,
version=version,
account_id=account_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    template_id: str,
    version: int,
    *,
    client: AuthenticatedClient | Client,
    account_id: str,

) -> Error | VersionView | None:
    """ POST /templates/{template_id}/versions/{version}/retire

    Args:
        template_id (str):
        version (int):
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | VersionView
     """


    return (await asyncio_detailed(
        template_id=template_id,
version=version,
client=client,
account_id=account_id,

    )).parsed
