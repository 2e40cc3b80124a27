from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="EndpointHealthView")



@_attrs_define
class EndpointHealthView:
    """ The endpoint's health (issue 16): ``active`` | ``held`` (its deliveries parked, one probe at a
    time) | ``disabled`` (its deliveries dead-letter ``endpoint_disabled``; enable, then redrive).

        Attributes:
            backlog (int):
            last_error_class (str):
            next_probe_at (None | str):
            oldest_pending_age_seconds (float | None):
            recent_success_ratio (float | None):
            since (None | str):
            state (str):
            transitions (int):
            why (str):
     """

    backlog: int
    last_error_class: str
    next_probe_at: None | str
    oldest_pending_age_seconds: float | None
    recent_success_ratio: float | None
    since: None | str
    state: str
    transitions: int
    why: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        backlog = self.backlog

        last_error_class = self.last_error_class

        next_probe_at: None | str
        next_probe_at = self.next_probe_at

        oldest_pending_age_seconds: float | None
        oldest_pending_age_seconds = self.oldest_pending_age_seconds

        recent_success_ratio: float | None
        recent_success_ratio = self.recent_success_ratio

        since: None | str
        since = self.since

        state = self.state

        transitions = self.transitions

        why = self.why


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "backlog": backlog,
            "last_error_class": last_error_class,
            "next_probe_at": next_probe_at,
            "oldest_pending_age_seconds": oldest_pending_age_seconds,
            "recent_success_ratio": recent_success_ratio,
            "since": since,
            "state": state,
            "transitions": transitions,
            "why": why,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        backlog = d.pop("backlog")

        last_error_class = d.pop("last_error_class")

        def _parse_next_probe_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        next_probe_at = _parse_next_probe_at(d.pop("next_probe_at"))


        def _parse_oldest_pending_age_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        oldest_pending_age_seconds = _parse_oldest_pending_age_seconds(d.pop("oldest_pending_age_seconds"))


        def _parse_recent_success_ratio(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        recent_success_ratio = _parse_recent_success_ratio(d.pop("recent_success_ratio"))


        def _parse_since(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        since = _parse_since(d.pop("since"))


        state = d.pop("state")

        transitions = d.pop("transitions")

        why = d.pop("why")

        endpoint_health_view = cls(
            backlog=backlog,
            last_error_class=last_error_class,
            next_probe_at=next_probe_at,
            oldest_pending_age_seconds=oldest_pending_age_seconds,
            recent_success_ratio=recent_success_ratio,
            since=since,
            state=state,
            transitions=transitions,
            why=why,
        )


        endpoint_health_view.additional_properties = d
        return endpoint_health_view

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
