from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.error_detail_type_0_item import ErrorDetailType0Item





T = TypeVar("T", bound="Error")



@_attrs_define
class Error:
    """ The API's error body (as ``api.ErrorView``): ``detail`` lists each schema problem.

        Attributes:
            message (str):
            detail (list[ErrorDetailType0Item] | None | Unset):
            error (None | str | Unset):
            field (None | str | Unset):
     """

    message: str
    detail: list[ErrorDetailType0Item] | None | Unset = UNSET
    error: None | str | Unset = UNSET
    field: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.error_detail_type_0_item import ErrorDetailType0Item # noqa: PLC0415
        message = self.message

        detail: list[dict[str, Any]] | None | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        elif isinstance(self.detail, list):
            detail = []
            for detail_type_0_item_data in self.detail:
                detail_type_0_item = detail_type_0_item_data.to_dict()
                detail.append(detail_type_0_item)


        else:
            detail = self.detail

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        field: None | str | Unset
        if isinstance(self.field, Unset):
            field = UNSET
        else:
            field = self.field


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "message": message,
        })
        if detail is not UNSET:
            field_dict["detail"] = detail
        if error is not UNSET:
            field_dict["error"] = error
        if field is not UNSET:
            field_dict["field"] = field

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.error_detail_type_0_item import ErrorDetailType0Item # noqa: PLC0415
        d = dict(src_dict)
        message = d.pop("message")

        def _parse_detail(data: object) -> list[ErrorDetailType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                detail_type_0 = []
                _detail_type_0 = data
                for detail_type_0_item_data in (_detail_type_0):
                    detail_type_0_item = ErrorDetailType0Item.from_dict(detail_type_0_item_data)



                    detail_type_0.append(detail_type_0_item)

                return detail_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ErrorDetailType0Item] | None | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))


        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        def _parse_field(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field = _parse_field(d.pop("field", UNSET))


        error = cls(
            message=message,
            detail=detail,
            error=error,
            field=field,
        )


        error.additional_properties = d
        return error

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
