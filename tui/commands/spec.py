"""A command's declaration (its arguments, help and examples) and the parser made from it."""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from proftui import __version__
from proftui.tui.text.safe import safe

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
# argparse actions that take no value (the rest read the word after the option).
FLAG_ACTIONS = ("store_true", "store_false", "store_const", "append_const", "count", "help",
                "version")


def version_text() -> str:
    """What --version prints: the version, and which event reader reads Chrome traces (and
    why not the native one, when not)."""
    from proftui.core.importers.chrome import native

    reason = native.unavailable_reason()
    reader = native.reader_name() + (f"; native reader {reason}" if reason else "")
    return f"proftui {__version__}\nevent reader: {reader}\n"


class ShowVersion(argparse.Action):
    """`--version`: :func:`version_text`, made when asked (not when the parser is)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        sys.stdout.write(version_text())
        parser.exit()


class Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and one sentence on bad usage."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "version", ShowVersion)

    def error(self, message: str) -> None:  # type: ignore[override]
        # The message quotes the arguments, and a file name may hold escape sequences.
        self.exit(EXIT_USAGE, f"{self.prog}: {safe(message)} (see {self.prog} --help)\n")


class Help(argparse.RawDescriptionHelpFormatter):
    """Help text whose one-line paragraphs are filled to the terminal's width, while text
    written over several lines (examples, a list of terms) is kept as it is written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join(
            p if "\n" in p else textwrap.fill(p, width, initial_indent=indent,
                                              subsequent_indent=indent)
            for p in text.split("\n\n"))


class Arg:
    """One argument, declared as argparse's add_argument takes it: an option's strings or a
    positional's name, its help, and argparse's keywords (type, default, action, metavar ...).

    `choices` may be a function, called only when a parser or a completion script is made, so
    that declaring a command imports nothing heavy (the grouping names live beside numpy).
    `files`: its value names a file or folder (shells complete it as one). `check`: called with
    the parser and the parsed value after parsing, for a bad value argparse cannot see."""

    def __init__(self, *flags: str, help: str,
                 choices: Sequence[str] | Callable[[], Sequence[str]] | None = None,
                 files: bool = False,
                 check: Callable[[argparse.ArgumentParser, Any], None] | None = None,
                 **keywords: Any) -> None:
        self.flags, self.help, self.files, self.check = flags, help, files, check
        self._choices, self.keywords = choices, keywords

    @property
    def is_option(self) -> bool:
        return self.flags[0].startswith("-")

    @property
    def takes_value(self) -> bool:
        """Whether an option reads the word after it (a positional always is one)."""
        return self.keywords.get("action", "store") not in FLAG_ACTIONS

    @property
    def repeats(self) -> bool:
        return self.keywords.get("action") == "append"

    @property
    def dest(self) -> str:
        """The attribute of the parsed arguments holding its value."""
        if "dest" in self.keywords:
            return self.keywords["dest"]
        longest = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return longest.lstrip("-").replace("-", "_")

    @property
    def metavar(self) -> str:
        """How help and usage name its value: PATH, N, FILE ..."""
        return self.keywords.get("metavar") or self.dest.upper()

    def choices(self) -> tuple[str, ...] | None:
        """The values it takes when they are a fixed set, else None."""
        found = self._choices() if callable(self._choices) else self._choices
        return None if found is None else tuple(found)

    def add_to(self, parser: Any) -> None:
        """Add it to `parser` (an ArgumentParser or a group of one)."""
        choices = self.choices()
        extra = {} if choices is None else {"choices": choices}
        parser.add_argument(*self.flags, help=self.help, **extra, **self.keywords)


@dataclass(frozen=True)
class Group:
    """Options of which at most one may be given (exactly one when `required`)."""

    args: tuple[Arg, ...]
    required: bool = False


HELP = Arg("-h", "--help", action="help", help="show this help message and exit")
VERSION = Arg("-V", "--version", action="version",
              help="show the version and the event reader, and exit")


@dataclass(frozen=True)
class Command:
    """A command as the command line declares it: `proftui NAME ARGUMENTS`.

    `name` is "" for the viewer (`proftui PATH`). `summary` is its line in `proftui --help`;
    `description`, `notes` (after the options) and `examples` make its own --help. `forms`
    are other ways to call it, each (usage, summary), listed after it in `proftui --help`."""

    name: str
    summary: str
    description: str
    arguments: tuple[Arg | Group, ...]
    examples: tuple[str, ...]
    notes: str = ""
    forms: tuple[tuple[str, str], ...] = ()

    @property
    def prog(self) -> str:
        return f"proftui {self.name}".strip()

    def items(self) -> tuple[Arg | Group, ...]:
        """Its arguments as the parser holds them: --help first, --version last."""
        return (HELP, *self.arguments, VERSION)

    def args(self) -> Iterator[Arg]:
        """Every argument, those of groups in their place."""
        for item in self.items():
            yield from item.args if isinstance(item, Group) else (item,)

    def parser(self) -> Parser:
        """The argparse parser of this declaration."""
        epilog = (f"{self.notes}\n\n" if self.notes else "") + "examples:\n" + "\n".join(
            f"  {line}" for line in self.examples)
        parser = Parser(prog=self.prog, description=self.description, epilog=epilog,
                        formatter_class=Help, add_help=False)
        for item in self.items():
            if isinstance(item, Group):
                group = parser.add_mutually_exclusive_group(required=item.required)
                for arg in item.args:
                    arg.add_to(group)
            else:
                item.add_to(parser)
        return parser

    def parse(self, argv: list[str], error: Callable[[str], Any] | None = None
              ) -> tuple[Parser, argparse.Namespace]:
        """The parser and the arguments of `argv`, their checks passed (else exit 2, or, given
        `error`, what it does with argparse's message: raise, for a caller that must not
        exit)."""
        parser = self.parser()
        if error is not None:
            parser.error = error  # type: ignore[method-assign]
        args = parser.parse_args(argv)
        for arg in self.args():
            if arg.check is not None:
                arg.check(parser, getattr(args, arg.dest))
        return parser, args

    def synopsis(self) -> str:
        """How to call it in one short line: its positionals, then [options] when it has any
        beyond --help and --version (`proftui CMD --help` lists them)."""
        words = [self.prog]
        for arg in self.args():
            if not arg.is_option:
                word = "|".join(arg.choices() or ()) or arg.metavar
                words.append(f"[{word}]" if arg.keywords.get("nargs") == "?" else word)
        if any(a.is_option for a in self.args() if a not in (HELP, VERSION)):
            words.append("[options]")
        return " ".join(words)
