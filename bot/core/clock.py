"""Time, injected: the real clock in production, a fixed one that tests advance."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime | str = "2026-11-30T09:00:00+00:00") -> None:
        self._now = datetime.fromisoformat(start) if isinstance(start, str) else start

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        self._now += timedelta(seconds=seconds)
        return self._now

    def set(self, when: datetime | str) -> None:
        self._now = datetime.fromisoformat(when) if isinstance(when, str) else when


def iso_week(moment: datetime, zone: tzinfo) -> str:
    """The ISO week name (2026-W48) of a moment in a time zone: weeks run Monday to Sunday."""
    year, week, _ = moment.astimezone(zone).isocalendar()
    return f"{year}-W{week:02d}"


class Weeks:
    """`iso_week`, worked out once a week per time zone: every event asks for this week's name. A moment
    within an hour of a week's ends (where a zone's clock may jump) is worked out afresh."""

    MARGIN = timedelta(hours=1)

    def __init__(self) -> None:
        self._known: dict[tzinfo, tuple[datetime, datetime, str]] = {}  # zone: (from, until, name)

    def name(self, moment: datetime, zone: tzinfo) -> str:
        known = self._known.get(zone)
        if known is not None and known[0] <= moment < known[1]:
            return known[2]
        local = moment.astimezone(zone)
        year, week, _ = local.isocalendar()
        name = f"{year}-W{week:02d}"
        monday = datetime.combine(local.date() - timedelta(days=local.weekday()), time(0), zone)
        # the bounds in UTC, as the clock's moments are: comparing them then skips the zone's offsets
        self._known[zone] = ((monday + self.MARGIN).astimezone(UTC),
                             (monday + timedelta(days=7) - self.MARGIN).astimezone(UTC), name)
        return name
