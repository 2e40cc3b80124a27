from enum import StrEnum

class PutEventEndpointEventTypesItem(StrEnum):
    ENDPOINT_DISABLED = "endpoint.disabled"
    ENDPOINT_HELD = "endpoint.held"
    ENDPOINT_RESUMED = "endpoint.resumed"
    REMINDER_DEAD_LETTERED = "reminder.dead_lettered"
    REMINDER_DELIVERED = "reminder.delivered"

    def __str__(self) -> str:
        return str(self.value)
