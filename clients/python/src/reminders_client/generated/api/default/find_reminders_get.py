from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_view import ErrorView
from ...models.find_reminders_get_state_type_0 import FindRemindersGetStateType0
from ...models.list_view import ListView
from ...models.reminder_view import ReminderView
from ...types import UNSET, Unset
from typing import cast
import datetime



def _get_kwargs(
    *,
    account_id: str,
    key: None | str | Unset = UNSET,
    state: FindRemindersGetStateType0 | None | Unset = UNSET,
    due_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["account_id"] = account_id

    json_key: None | str | Unset
    if isinstance(key, Unset):
        json_key = UNSET
    else:
        json_key = key
    params["key"] = json_key

    json_state: None | str | Unset
    if isinstance(state, Unset):
        json_state = UNSET
    elif isinstance(state, FindRemindersGetStateType0):
        json_state = state.value
    else:
        json_state = state
    params["state"] = json_state

    json_due_before: None | str | Unset
    if isinstance(due_before, Unset):
        json_due_before = UNSET
    elif isinstance(due_before, datetime.datetime):
        json_due_before = due_before.isoformat()
    else:
        json_due_before = due_before
    params["due_before"] = json_due_before

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/reminders",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorView | ListView | ReminderView | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> ListView | ReminderView:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_200_type_0 = ReminderView.from_dict(data)



                return response_200_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_200_type_1 = ListView.from_dict(data)



            return response_200_type_1

        response_200 = _parse_response_200(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorView | ListView | ReminderView]:
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
    key: None | str | Unset = UNSET,
    state: FindRemindersGetStateType0 | None | Unset = UNSET,
    due_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> Response[ErrorView | ListView | ReminderView]:
    """ GET /reminders

    Args:
        account_id (str):
        key (None | str | Unset):
        state (FindRemindersGetStateType0 | None | Unset):
        due_before (datetime.datetime | None | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | ListView | ReminderView]
     """


    kwargs = _get_kwargs(
        account_id=account_id,
key=key,
state=state,
due_before=due_before,
limit=limit,
cursor=cursor,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    key: None | str | Unset = UNSET,
    state: FindRemindersGetStateType0 | None | Unset = UNSET,
    due_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> ErrorView | ListView | ReminderView | None:
    """ GET /reminders

    Args:
        account_id (str):
        key (None | str | Unset):
        state (FindRemindersGetStateType0 | None | Unset):
        due_before (datetime.datetime | None | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | ListView | ReminderView
     """


    return sync_detailed(
        client=client,
account_id=account_id,
key=key,
state=state,
due_before=due_before,
limit=limit,
cursor=cursor,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    key: None | str | Unset = UNSET,
    state: FindRemindersGetStateType0 | None | Unset = UNSET,
    due_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> Response[ErrorView | ListView | ReminderView]:
    """ GET /reminders

    Args:
        account_id (str):
        key (None | str | Unset):
        state (FindRemindersGetStateType0 | None | Unset):
        due_before (datetime.datetime | None | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorView | ListView | ReminderView]
     """


    kwargs = _get_kwargs(
        account_id=account_id,
key=key,
state=state,
due_before=due_before,
limit=limit,
cursor=cursor,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    account_id: str,
    key: None | str | Unset = UNSET,
    state: FindRemindersGetStateType0 | None | Unset = UNSET,
    due_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> ErrorView | ListView | ReminderView | None:
    """ GET /reminders

    Args:
        account_id (str):
        key (None | str | Unset):
        state (FindRemindersGetStateType0 | None | Unset):
        due_before (datetime.datetime | None | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorView | ListView | ReminderView
     """


    return (await asyncio_detailed(
        client=client,
account_id=account_id,
key=key,
state=state,
due_before=due_before,
limit=limit,
cursor=cursor,

    )).parsed
