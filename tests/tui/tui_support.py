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


def run_cli(capsys, *argv: str | PathLike[str]) -> tuple[int, str, str]:
    """Run `proftui ARGV` in process: its exit status (argparse's too), stdout and stderr."""
    from proftui.tui.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse: bad usage
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err
