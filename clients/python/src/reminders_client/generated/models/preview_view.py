from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.preview_view_attempts_type_0_item import PreviewViewAttemptsType0Item
  from ..models.preview_view_may_attempt_type_0_item import PreviewViewMayAttemptType0Item
  from ..models.preview_view_not_attempted_type_0_item import PreviewViewNotAttemptedType0Item
  from ..models.preview_view_per_minute import PreviewViewPerMinute
  from ..models.preview_view_queues_type_0 import PreviewViewQueuesType0
  from ..models.preview_view_totals import PreviewViewTotals





T = TypeVar("T", bound="PreviewView")



@_attrs_define
class PreviewView:
    """ What fires in the next minutes (support.preview). Every account's: the due index's entries
    counted (``counts_of: due_index_entries``). An account's (``counts_of: consumer_rules``): each
    attempt the consumer's rules foresee, when and why it moved (``attempts``), those a held
    endpoint may take (``may_attempt``), the certain dead letters (``not_attempted``).

        Attributes:
            account_id (None | str):
            counts_of (str):
            first_ids (list[str]):
            from_ (str):
            minutes (int):
            per_minute (PreviewViewPerMinute):
            totals (PreviewViewTotals):
            until (str):
            attempts (list[PreviewViewAttemptsType0Item] | None | Unset):
            may_attempt (list[PreviewViewMayAttemptType0Item] | None | Unset):
            not_attempted (list[PreviewViewNotAttemptedType0Item] | None | Unset):
            queues (None | PreviewViewQueuesType0 | Unset):
            truncated (bool | None | Unset):
     """

    account_id: None | str
    counts_of: str
    first_ids: list[str]
    from_: str
    minutes: int
    per_minute: PreviewViewPerMinute
    totals: PreviewViewTotals
    until: str
    attempts: list[PreviewViewAttemptsType0Item] | None | Unset = UNSET
    may_attempt: list[PreviewViewMayAttemptType0Item] | None | Unset = UNSET
    not_attempted: list[PreviewViewNotAttemptedType0Item] | None | Unset = UNSET
    queues: None | PreviewViewQueuesType0 | Unset = UNSET
    truncated: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.preview_view_attempts_type_0_item import PreviewViewAttemptsType0Item # noqa: PLC0415
        from ..models.preview_view_may_attempt_type_0_item import PreviewViewMayAttemptType0Item # noqa: PLC0415
        from ..models.preview_view_not_attempted_type_0_item import PreviewViewNotAttemptedType0Item # noqa: PLC0415
        from ..models.preview_view_per_minute import PreviewViewPerMinute # noqa: PLC0415
        from ..models.preview_view_queues_type_0 import PreviewViewQueuesType0 # noqa: PLC0415
        from ..models.preview_view_totals import PreviewViewTotals # noqa: PLC0415
        account_id: None | str
        account_id = self.account_id

        counts_of = self.counts_of

        first_ids = self.first_ids



        from_ = self.from_

        minutes = self.minutes

        per_minute = self.per_minute.to_dict()

        totals = self.totals.to_dict()

        until = self.until

        attempts: list[dict[str, Any]] | None | Unset
        if isinstance(self.attempts, Unset):
            attempts = UNSET
        elif isinstance(self.attempts, list):
            attempts = []
            for attempts_type_0_item_data in self.attempts:
                attempts_type_0_item = attempts_type_0_item_data.to_dict()
                attempts.append(attempts_type_0_item)


        else:
            attempts = self.attempts

        may_attempt: list[dict[str, Any]] | None | Unset
        if isinstance(self.may_attempt, Unset):
            may_attempt = UNSET
        elif isinstance(self.may_attempt, list):
            may_attempt = []
            for may_attempt_type_0_item_data in self.may_attempt:
                may_attempt_type_0_item = may_attempt_type_0_item_data.to_dict()
                may_attempt.append(may_attempt_type_0_item)


        else:
            may_attempt = self.may_attempt

        not_attempted: list[dict[str, Any]] | None | Unset
        if isinstance(self.not_attempted, Unset):
            not_attempted = UNSET
        elif isinstance(self.not_attempted, list):
            not_attempted = []
            for not_attempted_type_0_item_data in self.not_attempted:
                not_attempted_type_0_item = not_attempted_type_0_item_data.to_dict()
                not_attempted.append(not_attempted_type_0_item)


        else:
            not_attempted = self.not_attempted

        queues: dict[str, Any] | None | Unset
        if isinstance(self.queues, Unset):
            queues = UNSET
        elif isinstance(self.queues, PreviewViewQueuesType0):
            queues = self.queues.to_dict()
        else:
            queues = self.queues

        truncated: bool | None | Unset
        if isinstance(self.truncated, Unset):
            truncated = UNSET
        else:
            truncated = self.truncated


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "account_id": account_id,
            "counts_of": counts_of,
            "first_ids": first_ids,
            "from": from_,
            "minutes": minutes,
            "per_minute": per_minute,
            "totals": totals,
            "until": until,
        })
        if attempts is not UNSET:
            field_dict["attempts"] = attempts
        if may_attempt is not UNSET:
            field_dict["may_attempt"] = may_attempt
        if not_attempted is not UNSET:
            field_dict["not_attempted"] = not_attempted
        if queues is not UNSET:
            field_dict["queues"] = queues
        if truncated is not UNSET:
            field_dict["truncated"] = truncated

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.preview_view_attempts_type_0_item import PreviewViewAttemptsType0Item # noqa: PLC0415
        from ..models.preview_view_may_attempt_type_0_item import PreviewViewMayAttemptType0Item # noqa: PLC0415
        from ..models.preview_view_not_attempted_type_0_item import PreviewViewNotAttemptedType0Item # noqa: PLC0415
        from ..models.preview_view_per_minute import PreviewViewPerMinute # noqa: PLC0415
        from ..models.preview_view_queues_type_0 import PreviewViewQueuesType0 # noqa: PLC0415
        from ..models.preview_view_totals import PreviewViewTotals # noqa: PLC0415
        d = dict(src_dict)
        def _parse_account_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        account_id = _parse_account_id(d.pop("account_id"))


        counts_of = d.pop("counts_of")

        first_ids = cast(list[str], d.pop("first_ids"))


        from_ = d.pop("from")

        minutes = d.pop("minutes")

        per_minute = PreviewViewPerMinute.from_dict(d.pop("per_minute"))




        totals = PreviewViewTotals.from_dict(d.pop("totals"))




        until = d.pop("until")

        def _parse_attempts(data: object) -> list[PreviewViewAttemptsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                attempts_type_0 = []
                _attempts_type_0 = data
                for attempts_type_0_item_data in (_attempts_type_0):
                    attempts_type_0_item = PreviewViewAttemptsType0Item.from_dict(attempts_type_0_item_data)



                    attempts_type_0.append(attempts_type_0_item)

                return attempts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[PreviewViewAttemptsType0Item] | None | Unset, data)

        attempts = _parse_attempts(d.pop("attempts", UNSET))


        def _parse_may_attempt(data: object) -> list[PreviewViewMayAttemptType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                may_attempt_type_0 = []
                _may_attempt_type_0 = data
                for may_attempt_type_0_item_data in (_may_attempt_type_0):
                    may_attempt_type_0_item = PreviewViewMayAttemptType0Item.from_dict(may_attempt_type_0_item_data)



                    may_attempt_type_0.append(may_attempt_type_0_item)

                return may_attempt_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[PreviewViewMayAttemptType0Item] | None | Unset, data)

        may_attempt = _parse_may_attempt(d.pop("may_attempt", UNSET))


        def _parse_not_attempted(data: object) -> list[PreviewViewNotAttemptedType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                not_attempted_type_0 = []
                _not_attempted_type_0 = data
                for not_attempted_type_0_item_data in (_not_attempted_type_0):
                    not_attempted_type_0_item = PreviewViewNotAttemptedType0Item.from_dict(not_attempted_type_0_item_data)



                    not_attempted_type_0.append(not_attempted_type_0_item)

                return not_attempted_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[PreviewViewNotAttemptedType0Item] | None | Unset, data)

        not_attempted = _parse_not_attempted(d.pop("not_attempted", UNSET))


        def _parse_queues(data: object) -> None | PreviewViewQueuesType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                queues_type_0 = PreviewViewQueuesType0.from_dict(data)



                return queues_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PreviewViewQueuesType0 | Unset, data)

        queues = _parse_queues(d.pop("queues", UNSET))


        def _parse_truncated(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        truncated = _parse_truncated(d.pop("truncated", UNSET))


        preview_view = cls(
            account_id=account_id,
            counts_of=counts_of,
            first_ids=first_ids,
            from_=from_,
            minutes=minutes,
            per_minute=per_minute,
            totals=totals,
            until=until,
            attempts=attempts,
            may_attempt=may_attempt,
            not_attempted=not_attempted,
            queues=queues,
            truncated=truncated,
        )


        preview_view.additional_properties = d
        return preview_view

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
