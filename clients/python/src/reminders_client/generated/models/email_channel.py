from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import Literal, cast






T = TypeVar("T", bound="EmailChannel")



@_attrs_define
class EmailChannel:
    """ 
        Attributes:
            to (str):
            type_ (Literal['email']):
     """

    to: str
    type_: Literal['email']





    def to_dict(self) -> dict[str, Any]:
        to = self.to

        type_ = self.type_


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "to": to,
            "type": type_,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        to = d.pop("to")

        type_ = cast(Literal['email'] , d.pop("type"))
        if type_ != 'email':
            raise ValueError(f"type must match const 'email', got '{type_}'")

        email_channel = cls(
            to=to,
            type_=type_,
        )

        return email_channel

