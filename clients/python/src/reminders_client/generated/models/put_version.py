from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.put_version_locales import PutVersionLocales
  from ..models.put_version_variables import PutVersionVariables





T = TypeVar("T", bound="PutVersion")



@_attrs_define
class PutVersion:
    """ A version: per locale (BCP 47) a subject, a text and an HTML body (Jinja2, sandboxed), the
    default locale, the variables it uses with their types. Immutable once written.

        Attributes:
            account_id (str):
            default_locale (str):
            locales (PutVersionLocales):
            variables (PutVersionVariables | Unset):
            webhook_rendered (bool | Unset):  Default: False.
     """

    account_id: str
    default_locale: str
    locales: PutVersionLocales
    variables: PutVersionVariables | Unset = UNSET
    webhook_rendered: bool | Unset = False





    def to_dict(self) -> dict[str, Any]:
        from ..models.put_version_locales import PutVersionLocales # noqa: PLC0415
        from ..models.put_version_variables import PutVersionVariables # noqa: PLC0415
        account_id = self.account_id

        default_locale = self.default_locale

        locales = self.locales.to_dict()

        variables: dict[str, Any] | Unset = UNSET
        if not isinstance(self.variables, Unset):
            variables = self.variables.to_dict()

        webhook_rendered = self.webhook_rendered


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account_id": account_id,
            "default_locale": default_locale,
            "locales": locales,
        })
        if variables is not UNSET:
            field_dict["variables"] = variables
        if webhook_rendered is not UNSET:
            field_dict["webhook_rendered"] = webhook_rendered

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.put_version_locales import PutVersionLocales # noqa: PLC0415
        from ..models.put_version_variables import PutVersionVariables # noqa: PLC0415
        d = dict(src_dict)
        account_id = d.pop("account_id")

        default_locale = d.pop("default_locale")

        locales = PutVersionLocales.from_dict(d.pop("locales"))




        _variables = d.pop("variables", UNSET)
        variables: PutVersionVariables | Unset
        if isinstance(_variables,  Unset):
            variables = UNSET
        else:
            variables = PutVersionVariables.from_dict(_variables)




        webhook_rendered = d.pop("webhook_rendered", UNSET)

        put_version = cls(
            account_id=account_id,
            default_locale=default_locale,
            locales=locales,
            variables=variables,
            webhook_rendered=webhook_rendered,
        )

        return put_version

