from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.preview_view_per_minute import PreviewViewPerMinute
  from ..models.preview_view_queues_type_0 import PreviewViewQueuesType0
  from ..models.preview_view_totals import PreviewViewTotals





T = TypeVar("T", bound="PreviewView")



@_attrs_define
class PreviewView:
    """ What fires in the next minutes (support.preview): read-only counts and the first ids.

        Attributes:
            account_id (None | str):
            first_ids (list[str]):
            from_ (str):
            minutes (int):
            per_minute (PreviewViewPerMinute):
            totals (PreviewViewTotals):
            until (str):
            queues (None | PreviewViewQueuesType0 | Unset):
     """

    account_id: None | str
    first_ids: list[str]
    from_: str
    minutes: int
    per_minute: PreviewViewPerMinute
    totals: PreviewViewTotals
    until: str
    queues: None | PreviewViewQueuesType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.preview_view_per_minute import PreviewViewPerMinute # noqa: PLC0415
        from ..models.preview_view_queues_type_0 import PreviewViewQueuesType0 # noqa: PLC0415
        from ..models.preview_view_totals import PreviewViewTotals # noqa: PLC0415
        account_id: None | str
        account_id = self.account_id

        first_ids = self.first_ids



        from_ = self.from_

        minutes = self.minutes

        per_minute = self.per_minute.to_dict()

        totals = self.totals.to_dict()

        until = self.until

        queues: dict[str, Any] | None | Unset
        if isinstance(self.queues, Unset):
            queues = UNSET
        elif isinstance(self.queues, PreviewViewQueuesType0):
            queues = self.queues.to_dict()
        else:
            queues = self.queues


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "account_id": account_id,
            "first_ids": first_ids,
            "from": from_,
            "minutes": minutes,
            "per_minute": per_minute,
            "totals": totals,
            "until": until,
        })
        if queues is not UNSET:
            field_dict["queues"] = queues

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.preview_view_per_minute import PreviewViewPerMinute # noqa: PLC0415
        from ..models.preview_view_queues_type_0 import PreviewViewQueuesType0 # noqa: PLC0415
        from ..models.preview_view_totals import PreviewViewTotals # noqa: PLC0415
        d = dict(src_dict)
        def _parse_account_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        account_id = _parse_account_id(d.pop("account_id"))


        first_ids = cast(list[str], d.pop("first_ids"))


        from_ = d.pop("from")

        minutes = d.pop("minutes")

        per_minute = PreviewViewPerMinute.from_dict(d.pop("per_minute"))




        totals = PreviewViewTotals.from_dict(d.pop("totals"))




        until = d.pop("until")

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


        preview_view = cls(
            account_id=account_id,
            first_ids=first_ids,
            from_=from_,
            minutes=minutes,
            per_minute=per_minute,
            totals=totals,
            until=until,
            queues=queues,
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
