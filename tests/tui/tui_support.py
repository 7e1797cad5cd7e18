"""What the app tests share: waiting until the app has settled."""

from __future__ import annotations

from textual.worker import WorkerCancelled


async def settle(app, pilot) -> None:
    """Wait for every worker (again when an exclusive one was cancelled by the next), then
    for the screen to catch up with their results."""
    for _ in range(10):
        try:
            await app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()
    await pilot.pause()
