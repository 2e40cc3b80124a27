"""A fault mode of the stores (issue 25 item 8): eventually consistent reads served stale, within a
bound. DynamoDB's ``ConsistentRead=False`` may answer an item as it was before its latest writes (a
just-created item as absent, a just-re-enabled one as disabled); moto and the in-memory twins are
always consistent, so the send path is tested under this mode instead.

``StaleImages(lag)`` keeps, per key, the item as it was before each of its last ``lag`` writes; an
eventually consistent read answers the oldest of them — the item as it was ``lag`` writes ago (None:
it did not exist then), the worst a read within that bound can see. Consistent reads and writes see
the item as it is. ``lag`` 0 (the default): always consistent, nothing kept. With ``seconds`` (and
the store's ``now``) the lag is bounded in time as well: a write older than ``seconds`` has reached
every replica, so the image from before it is no longer answered (DynamoDB's index and replica lag
is bounded in time; the dispatcher's ``INDEX_LAG_MARGIN_SECONDS`` assumes it).
"""

from __future__ import annotations

import copy
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

MISSING: Any = object()  # no image kept for the key: the read answers the item as it is


class StaleImages:
    def __init__(
        self, lag: int = 0, *, seconds: float | None = None, now: Callable[[], float] | None = None
    ) -> None:
        self.lag = lag
        self.seconds, self._now = seconds, now
        self._before: dict[str, deque[tuple[float, Any]]] = {}
        self._lock = threading.Lock()

    def _at(self) -> float:
        return self._now() if self._now is not None else 0.0

    def _live(self, past: deque[tuple[float, Any]]) -> deque[tuple[float, Any]]:
        """Drops the images of writes older than ``seconds`` (every replica has those writes)."""
        if self.seconds is not None:
            horizon = self._at() - self.seconds
            while past and past[0][0] < horizon:
                past.popleft()
        return past

    def written(self, key: str, before: Any) -> None:
        """Called before each write of ``key`` with the item as it is (None: absent)."""
        if self.lag <= 0:
            return
        with self._lock:
            self._before.setdefault(key, deque(maxlen=self.lag)).append((self._at(), copy.deepcopy(before)))

    def eventual(self, key: str) -> Any:
        """What an eventually consistent read of ``key`` answers: an old image, or ``MISSING``."""
        with self._lock:
            past = self._before.get(key)
            if self.lag <= 0 or not past or not self._live(past):
                return MISSING
            return past[0][1]

    def lagging(self) -> list[str]:
        """The keys an eventually consistent read may answer from an old image (a query's or a scan's
        candidates beyond the items as they are)."""
        if self.lag <= 0:
            return []
        with self._lock:
            for k in [k for k, past in self._before.items() if not self._live(past)]:
                del self._before[k]  # caught up
            return list(self._before)

    def settle(self) -> None:
        """Every replica caught up: eventually consistent reads see the items as they are again."""
        with self._lock:
            self._before.clear()


class StaleReadsClient:
    """A DynamoDB client (moto's, in tests) whose eventually consistent ``get_item`` on ``table``
    answers the item as it was up to ``lag`` writes ago (``put_item``, ``update_item``,
    ``delete_item`` and the items of ``transact_write_items``). Everything else passes through."""

    def __init__(
        self, client: Any, table: str, key_of: Callable[[dict[str, Any]], dict[str, Any]], lag: int
    ) -> None:
        self._client = client
        self._table = table
        self._key_of = key_of  # an item -> its key attributes (the table's key schema)
        self.images = StaleImages(lag)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    @staticmethod
    def _id(key: dict[str, Any]) -> str:
        return repr(sorted((k, sorted(v.items())) for k, v in key.items()))

    def _before_write(self, table: str, key: dict[str, Any]) -> None:
        if table != self._table or self.images.lag <= 0:
            return
        now = self._client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        self.images.written(self._id(key), now)

    def get_item(self, **params: Any) -> Any:
        resp = self._client.get_item(**params)  # the read is made (and metered) all the same
        if params.get("TableName") == self._table and not params.get("ConsistentRead", False):
            old = self.images.eventual(self._id(params["Key"]))
            if old is not MISSING:
                resp = {k: v for k, v in resp.items() if k != "Item"}
                if old is not None:
                    resp["Item"] = old
        return resp

    def put_item(self, **params: Any) -> Any:
        self._before_write(params["TableName"], self._key_of(params["Item"]))
        return self._client.put_item(**params)

    def update_item(self, **params: Any) -> Any:
        self._before_write(params["TableName"], params["Key"])
        return self._client.update_item(**params)

    def delete_item(self, **params: Any) -> Any:
        self._before_write(params["TableName"], params["Key"])
        return self._client.delete_item(**params)

    def transact_write_items(self, **params: Any) -> Any:
        for item in params["TransactItems"]:
            for kind in ("Put", "Update", "Delete"):
                op = item.get(kind)
                if op is not None:
                    key = self._key_of(op["Item"]) if kind == "Put" else op["Key"]
                    self._before_write(op["TableName"], key)
        return self._client.transact_write_items(**params)
