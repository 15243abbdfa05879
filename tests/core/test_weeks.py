"""`Weeks` names a moment's ISO week as `iso_week` does, worked out once a week per zone: across the
turn of a week, the clocks' jumps of summer time, and a clock set back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.core.clock import Weeks, iso_week

ZONES = [UTC, ZoneInfo("Europe/Berlin"), ZoneInfo("America/Santiago"), ZoneInfo("Pacific/Kiritimati"),
         ZoneInfo("America/St_Johns"), ZoneInfo("Asia/Beirut")]


def test_every_moment_gets_the_same_week_as_iso_week() -> None:
    weeks = Weeks()
    start = datetime(2026, 3, 20, tzinfo=UTC)
    moments = [start + timedelta(minutes=37 * n) for n in range(4_000)]  # about 100 days, every 37 minutes
    moments += [start + timedelta(days=50), start, start + timedelta(days=9)]  # the clock set back and forth
    for zone in ZONES:
        for moment in moments:
            assert weeks.name(moment, zone) == iso_week(moment, zone), (zone, moment)


def test_a_week_is_worked_out_once_per_zone() -> None:
    weeks, zone = Weeks(), ZoneInfo("Europe/Berlin")
    wednesday = datetime(2026, 12, 2, 12, tzinfo=UTC)
    assert weeks.name(wednesday, zone) == "2026-W49"
    known = dict(weeks._known)
    assert weeks.name(wednesday + timedelta(days=2), zone) == "2026-W49" and weeks._known == known
    assert weeks.name(wednesday + timedelta(days=5), zone) == "2026-W50"
