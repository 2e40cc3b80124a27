from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="LocaleIn")



@_attrs_define
class LocaleIn:
    """ 
        Attributes:
            html (str):
            subject (str):
            text (str):
     """

    html: str
    subject: str
    text: str





    def to_dict(self) -> dict[str, Any]:
        html = self.html

        subject = self.subject

        text = self.text


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "html": html,
            "subject": subject,
            "text": text,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        html = d.pop("html")

        subject = d.pop("subject")

        text = d.pop("text")

        locale_in = cls(
            html=html,
            subject=subject,
            text=text,
        )

        return locale_in

