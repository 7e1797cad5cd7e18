"""What the app tests share: waiting until the app has settled."""

from __future__ import annotations

from os import PathLike

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


async def press_again(app, pilot, key: str, times: int) -> None:
    """Press `key` `times` times: the first through Pilot (the app's routing of the key), the
    rest by running the action that first press reached (the focused widget's or a parent's
    binding of it), then the screen catches up once. A key through Pilot costs two waits for
    the app to go idle (~40 ms of wall) and a frame; a long run of arrows need not."""
    await pilot.press(key)
    node, binding = _bound(app, key)
    for _ in range(times - 1):
        await app.run_action(binding.action, node)
    await pilot.pause()


async def wait_for(pilot, done, timeout_s: float = 30.0) -> None:
    """Let the app run until `done()` (a worker's answer shown), failing after `timeout_s`."""
    import time

    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not done after {timeout_s:g} s")
        await pilot.pause(0.02)


async def press_until(app, pilot, key: str, done, limit: int = 500) -> None:
    """Press `key` until `done()`, as press_again does (the first through Pilot)."""
    if done():
        return
    await pilot.press(key)
    node, binding = _bound(app, key)
    for _ in range(limit):
        if done():
            break
        await app.run_action(binding.action, node)
    else:
        raise AssertionError(f"{key} pressed {limit} times and still not there")
    await pilot.pause()


def _bound(app, key: str):
    """The node that a press of `key` reaches, as Textual routes it: a priority binding of the
    app or the screen first, then the focused widget's and its parents' bindings."""
    chain = []
    node = app.focused
    while node is not None:
        chain.append(node)
        node = node.parent
    for priority in (True, False):
        for node in ([app, app.screen] if priority else chain):
            for binding in node._bindings.key_to_bindings.get(key, ()):
                if binding.priority == priority:
                    return node, binding
    raise AssertionError(f"nothing on the focus chain binds {key}")


def run_cli(capsys, *argv: str | PathLike[str]) -> tuple[int, str, str]:
    """Run `proftui ARGV` in process: its exit status (argparse's too), stdout and stderr."""
    from proftui.tui.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse: bad usage
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


async def first_screen_rows(path: str | PathLike[str], size: tuple[int, int]
                            ) -> tuple[int, int]:
    """Open a profile in the app at `size`: how many track rows (lines of slices, counters
    or instants, not process headers) the timeline's first screen shows, and how many the
    profile has in all."""
    from proftui.tui.app import ProftuiApp
    from proftui.tui.widgets.lines import PROCESS

    app = ProftuiApp(str(path))
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        timeline = app.query_one("#timeline")
        lines = timeline.lines
        shown = [n for n in timeline.state.visible_lines() if lines[n].kind != PROCESS]
        return len(shown), sum(1 for n in range(len(lines)) if lines[n].kind != PROCESS)
