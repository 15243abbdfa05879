"""Delivery: how a reply reaches a platform without a triggering event (the Outbox every adapter
implements), which platform a reply is for, and `deliver`, which sends or edits one reply and
reports a tagged message back to the core."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from bot.core.messages import MessageRef, Reply
from bot.runtime import metrics

if TYPE_CHECKING:
    from bot.runtime.app import StudyBot


class Outbox(Protocol):
    """How the core reaches a platform without a triggering event."""

    async def send(self, reply: Reply) -> MessageRef | None:
        """Post a reply: in `reply.place` when public, to `reply.to` when private or dm."""

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        """Replace an earlier message."""


def platform_of(reply: Reply) -> str | None:
    """The platform a reply is for: the one of the message it edits, else of its place, else of its recipient."""
    if reply.edit is not None:
        return reply.edit.platform
    if reply.place is not None:
        return reply.place.platform
    return reply.to.platform if reply.to is not None else None


async def deliver(bot: StudyBot, outbox: Outbox, reply: Reply) -> MessageRef | None:
    """Send or edit one reply, and report a tagged message's ref back to the core."""
    try:
        if reply.edit is not None:
            await outbox.edit(reply.edit, reply)
            return reply.edit
        ref = await outbox.send(reply)
    except Exception:
        metrics.delivery_failed(platform_of(reply))
        raise
    if reply.tag and ref is not None:
        await bot.message_posted(reply.tag, ref)
    return ref
