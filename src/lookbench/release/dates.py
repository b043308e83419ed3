"""Parsing the dates sources give (ISO dates and datetimes) into UTC datetimes."""

from __future__ import annotations

from datetime import datetime, timezone


def parse_when(value: object) -> datetime | None:
    """A UTC datetime from an ISO date/datetime string or datetime; None if absent or unparseable."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
