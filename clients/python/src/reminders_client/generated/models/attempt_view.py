from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="AttemptView")



@_attrs_define
class AttemptView:
    """ 
        Attributes:
            at (str):
            event (str):
            decision (None | str | Unset):
            delay_seconds (float | None | Unset):
            detail (None | str | Unset):
            fingerprint (None | str | Unset):
            outcome (None | str | Unset):
            policy_version (None | str | Unset):
            receipt (None | str | Unset):
            repeat (int | None | Unset):
            status (int | None | Unset):
     """

    at: str
    event: str
    decision: None | str | Unset = UNSET
    delay_seconds: float | None | Unset = UNSET
    detail: None | str | Unset = UNSET
    fingerprint: None | str | Unset = UNSET
    outcome: None | str | Unset = UNSET
    policy_version: None | str | Unset = UNSET
    receipt: None | str | Unset = UNSET
    repeat: int | None | Unset = UNSET
    status: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at

        event = self.event

        decision: None | str | Unset
        if isinstance(self.decision, Unset):
            decision = UNSET
        else:
            decision = self.decision

        delay_seconds: float | None | Unset
        if isinstance(self.delay_seconds, Unset):
            delay_seconds = UNSET
        else:
            delay_seconds = self.delay_seconds

        detail: None | str | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        else:
            detail = self.detail

        fingerprint: None | str | Unset
        if isinstance(self.fingerprint, Unset):
            fingerprint = UNSET
        else:
            fingerprint = self.fingerprint

        outcome: None | str | Unset
        if isinstance(self.outcome, Unset):
            outcome = UNSET
        else:
            outcome = self.outcome

        policy_version: None | str | Unset
        if isinstance(self.policy_version, Unset):
            policy_version = UNSET
        else:
            policy_version = self.policy_version

        receipt: None | str | Unset
        if isinstance(self.receipt, Unset):
            receipt = UNSET
        else:
            receipt = self.receipt

        repeat: int | None | Unset
        if isinstance(self.repeat, Unset):
            repeat = UNSET
        else:
            repeat = self.repeat

        status: int | None | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "event": event,
        })
        if decision is not UNSET:
            field_dict["decision"] = decision
        if delay_seconds is not UNSET:
            field_dict["delay_seconds"] = delay_seconds
        if detail is not UNSET:
            field_dict["detail"] = detail
        if fingerprint is not UNSET:
            field_dict["fingerprint"] = fingerprint
        if outcome is not UNSET:
            field_dict["outcome"] = outcome
        if policy_version is not UNSET:
            field_dict["policy_version"] = policy_version
        if receipt is not UNSET:
            field_dict["receipt"] = receipt
        if repeat is not UNSET:
            field_dict["repeat"] = repeat
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = d.pop("at")

        event = d.pop("event")

        def _parse_decision(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decision = _parse_decision(d.pop("decision", UNSET))


        def _parse_delay_seconds(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        delay_seconds = _parse_delay_seconds(d.pop("delay_seconds", UNSET))


        def _parse_detail(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))


        def _parse_fingerprint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fingerprint = _parse_fingerprint(d.pop("fingerprint", UNSET))


        def _parse_outcome(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        outcome = _parse_outcome(d.pop("outcome", UNSET))


        def _parse_policy_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        policy_version = _parse_policy_version(d.pop("policy_version", UNSET))


        def _parse_receipt(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        receipt = _parse_receipt(d.pop("receipt", UNSET))


        def _parse_repeat(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        repeat = _parse_repeat(d.pop("repeat", UNSET))


        def _parse_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))


        attempt_view = cls(
            at=at,
            event=event,
            decision=decision,
            delay_seconds=delay_seconds,
            detail=detail,
            fingerprint=fingerprint,
            outcome=outcome,
            policy_version=policy_version,
            receipt=receipt,
            repeat=repeat,
            status=status,
        )


        attempt_view.additional_properties = d
        return attempt_view

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
