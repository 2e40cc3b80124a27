from enum import StrEnum

class PutVersionVariablesAdditionalProperty(StrEnum):
    BOOLEAN = "boolean"
    DATE_TIME = "date-time"
    DECIMAL = "decimal"
    INTEGER = "integer"
    LIST = "list"
    STRING = "string"

    def __str__(self) -> str:
        return str(self.value)
