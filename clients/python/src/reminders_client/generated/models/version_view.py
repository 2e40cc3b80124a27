from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.version_view_locales import VersionViewLocales
  from ..models.version_view_variables import VersionViewVariables





T = TypeVar("T", bound="VersionView")



@_attrs_define
class VersionView:
    """ 
        Attributes:
            account_id (str):
            created_at (str):
            default_locale (str):
            locales (VersionViewLocales):
            retired_at (None | str):
            template_id (str):
            variables (VersionViewVariables):
            version (int):
            webhook_rendered (bool):
     """

    account_id: str
    created_at: str
    default_locale: str
    locales: VersionViewLocales
    retired_at: None | str
    template_id: str
    variables: VersionViewVariables
    version: int
    webhook_rendered: bool





    def to_dict(self) -> dict[str, Any]:
        from ..models.version_view_locales import VersionViewLocales # noqa: PLC0415
        from ..models.version_view_variables import VersionViewVariables # noqa: PLC0415
        account_id = self.account_id

        created_at = self.created_at

        default_locale = self.default_locale

        locales = self.locales.to_dict()

        retired_at: None | str
        retired_at = self.retired_at

        template_id = self.template_id

        variables = self.variables.to_dict()

        version = self.version

        webhook_rendered = self.webhook_rendered


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account_id": account_id,
            "created_at": created_at,
            "default_locale": default_locale,
            "locales": locales,
            "retired_at": retired_at,
            "template_id": template_id,
            "variables": variables,
            "version": version,
            "webhook_rendered": webhook_rendered,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.version_view_locales import VersionViewLocales # noqa: PLC0415
        from ..models.version_view_variables import VersionViewVariables # noqa: PLC0415
        d = dict(src_dict)
        account_id = d.pop("account_id")

        created_at = d.pop("created_at")

        default_locale = d.pop("default_locale")

        locales = VersionViewLocales.from_dict(d.pop("locales"))




        def _parse_retired_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        retired_at = _parse_retired_at(d.pop("retired_at"))


        template_id = d.pop("template_id")

        variables = VersionViewVariables.from_dict(d.pop("variables"))




        version = d.pop("version")

        webhook_rendered = d.pop("webhook_rendered")

        version_view = cls(
            account_id=account_id,
            created_at=created_at,
            default_locale=default_locale,
            locales=locales,
            retired_at=retired_at,
            template_id=template_id,
            variables=variables,
            version=version,
            webhook_rendered=webhook_rendered,
        )

        return version_view

