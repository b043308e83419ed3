"""The command table: the core's commands, lookbench's own wings', then third-party plugins' from the
`lookbench.commands` entry points, by explicit rules rather than entry-point order."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from lookbench._util.entrypoints import OWN_DISTRIBUTION, distribution_name, is_own, warn_once

GROUP = "lookbench.commands"
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")
"""A command name: lowercase letters and digits, words joined by single hyphens (`snapshot`, `my-eval`)."""


@dataclass(frozen=True)
class CommandEntry:
    """A command name, the module whose `register(app)` adds it, and the distribution that declared it."""

    name: str
    module: str
    distribution: str

    @property
    def plugin(self) -> bool:
        """True for a command another distribution added (its failures are reported and the command left out)."""
        return self.distribution != OWN_DISTRIBUTION


@dataclass(frozen=True)
class CommandTable:
    """The commands in `--help` order, and one line for each plugin command that was left out, saying why."""

    entries: dict[str, CommandEntry]
    ignored: tuple[str, ...]


def build_table(core: dict[str, str], reserved: set[str], points: list[EntryPoint]) -> CommandTable:
    """Core commands first, then lookbench's own entry points, then each plugin command whose name is valid, not
    reserved (a core or own command, or a removed one) and registered by exactly one plugin."""
    entries = {name: CommandEntry(name, module, OWN_DISTRIBUTION) for name, module in core.items()}
    plugins: dict[str, list[EntryPoint]] = defaultdict(list)
    for point in points:
        if is_own(point):
            entries.setdefault(point.name, CommandEntry(point.name, point.value, OWN_DISTRIBUTION))
        else:
            plugins[point.name].append(point)
    ignored = []
    for name in sorted(plugins):
        found = plugins[name]
        owners = " and ".join(sorted({distribution_name(p) for p in found}))
        if not NAME.match(name):
            ignored.append(f"plugin command {name!r} from {owners} ignored: not a valid command name")
        elif name in entries or name in reserved:
            ignored.append(f"plugin command {name!r} from {owners} ignored: lookbench has a command of that name")
        elif len(found) > 1:
            ignored.append(f"plugin command {name!r} ignored: registered by more than one plugin ({owners})")
        else:
            entries[name] = CommandEntry(name, found[0].value, distribution_name(found[0]))
    return CommandTable(entries, tuple(ignored))


@cache
def command_table(core: tuple[tuple[str, str], ...], reserved: frozenset[str]) -> CommandTable:
    """The installed command table (warning once about each plugin command left out)."""
    table = build_table(dict(core), set(reserved), list(entry_points(group=GROUP)))
    for message in table.ignored:
        warn_once(message)
    return table
