from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_view import ErrorView
from ...models.reminder_view import ReminderView
from typing import cast



def _get_kwargs(
    reminder_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/reminders/{reminder_id}".format(reminder_id=quote(str(reminder_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorView | ReminderView | None:
    if response.status_code == 200:
        response_200 = ReminderView.from_dict(response.json())



        return response_200

    if response.status_code == 404:
        response_404 = ErrorView.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = ErrorView.from_dict(response.json())



        return response_409

    if response.status_code == 422:
        response_422 = ErrorView.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorView | ReminderView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    reminder_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[ErrorView | ReminderView]:
    """ DELETE /reminders/{reminder_id}

    Args:
        reminder_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | ReminderView]
     """


    kwargs = _get_kwargs(
        reminder_id=reminder_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    reminder_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> ErrorView | ReminderView | None:
    """ DELETE /reminders/{reminder_id}

    Args:
        reminder_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | ReminderView
     """


    return sync_detailed(
        reminder_id=reminder_id,
client=client,

    ).parsed

async def asyncio_detailed(
    reminder_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[ErrorView | ReminderView]:
    """ DELETE /reminders/{reminder_id}

    Args:
        reminder_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | ReminderView]
     """


    kwargs = _get_kwargs(
        reminder_id=reminder_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    reminder_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> ErrorView | ReminderView | None:
    """ DELETE /reminders/{reminder_id}

    Args:
        reminder_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | ReminderView
     """


    return (await asyncio_detailed(
        reminder_id=reminder_id,
client=client,

    )).parsed
