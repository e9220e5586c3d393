"""`planb completion bash|zsh`: a shell completion script generated from planb's own argparse parser.

The script is data, not logic copied by hand: ``levels`` walks the parser (every sub-command, nested ones too,
with its options, the options that take a value and their choices, and the choices of its positionals), and
each shell's template turns the walk into ``case`` tables. A new option or sub-command is in the next script
without an edit here. No dependency (argcomplete, shtab) and nothing runs at completion time but the shell.

The parser is the full one (``planb.cli.build_parser``), the stand-ins' commands under ``planb local`` included; a
sub-command whose module needs an extra that is not installed (``[local]``) is completed by name only, as
``planb --help`` lists it, and its own commands not at all.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from planb import cli
from planb.errors import EXIT_OK

SHELLS = ("bash", "zsh")
#: Words a script may offer: a completion word list splits on blanks and a case pattern must not need quoting.
_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/=+,-]*$|^--?[A-Za-z0-9][A-Za-z0-9_-]*$")


@dataclass
class Level:
    """One parser of the tree: ``path`` is its command words (``planb local up``)."""

    path: str
    subcommands: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    #: An option that takes a value -> its choices (empty: any value, the shell completes file names).
    values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    positionals: tuple[str, ...] = ()


def _help(text: str | None) -> str:
    return " ".join((text or "").split())


def _words(choices: Iterable[Any] | None) -> tuple[str, ...]:
    return tuple(str(c) for c in choices or () if _WORD.match(str(c)))


def levels(parser: argparse.ArgumentParser, path: str = "planb") -> Iterator[Level]:
    """Each parser of the tree, this one first, its sub-commands' after it (depth first)."""
    level = Level(path)
    children: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: _help(choice.help) for choice in action._choices_actions}
            for name, child in action.choices.items():
                if _WORD.match(name):
                    level.subcommands[name] = helps.get(name, "")
                    children.append((name, child))
        elif action.option_strings:
            if action.help == argparse.SUPPRESS:
                continue
            for option in action.option_strings:
                level.options[option] = _help(action.help)
                if action.nargs != 0:
                    level.values[option] = _words(action.choices)
        else:
            level.positionals += _words(action.choices)
    yield level
    for name, child in children:
        yield from levels(child, f"{path} {name}")


def full_parser() -> argparse.ArgumentParser:
    """planb's parser with every sub-command's module that imports here (an extra missing leaves a stub)."""
    loadable = []
    for module in dict.fromkeys(c.module for c in cli.COMMANDS):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if (exc.name or "planb").split(".")[0] == "planb":
                raise
            continue
        loadable.append(module)
    return cli.build_parser(loadable)


def _case(branches: Iterable[tuple[Iterable[str], str]]) -> str:
    """A ``case "$key" in`` table's branches, one per line: ``"key1"|"key2") body;;``."""
    return "\n".join("        " + "|".join(f'"{key}"' for key in keys) + f") {body};;" for keys, body in branches)


def _choice_branches(tree: Iterable[Level], body: Callable[[tuple[str, ...]], str]) -> list[tuple[list[str], str]]:
    """The ``$path $option`` keys of the options with choices, one branch per level and choices."""
    branches = []
    for level in tree:
        by_choices: dict[tuple[str, ...], list[str]] = {}
        for option, choices in level.values.items():
            if choices:
                by_choices.setdefault(choices, []).append(f"{level.path} {option}")
        branches += [(keys, body(choices)) for choices, keys in by_choices.items()]
    return branches


def _words_out(words: Iterable[str]) -> str:
    """A shell command that prints ``words`` (printf, not echo: a first word ``-n`` or ``-e`` is printed too)."""
    return "printf '%s\\n' \"" + " ".join(words) + '"'


def _zsh_item(word: str, text: str) -> str:
    """One ``word:description`` entry for _describe, single-quoted (a colon in the word or text escaped)."""
    entry = word.replace(":", r"\:") + (":" + text.replace(":", r"\:") if text else "")
    return "'" + entry.replace("'", "'\\''") + "'"


#: The lookup tables both shells' scripts carry: a level's sub-commands, options, valued options, their choices and
#: positionals, each a shell `case` on the command path (the branches are written per shell).
TABLES = """\
_planb_subcommands() {{
    case "$1" in
{subcommands}
    esac
}}

_planb_options() {{
    case "$1" in
{options}
    esac
}}

# The options that take a value, and the choices of those that have a fixed set (others: file names).
_planb_valued() {{
    case "$1" in
{valued}
    esac
}}

_planb_choices() {{
    case "$1 $2" in
{choices}
    esac
}}

_planb_positionals() {{
    case "$1" in
{positionals}
    esac
}}

"""

BASH = """\
# bash completion for planb, generated from its argparse parser by `planb completion bash`.
# This shell: source <(planb completion bash)
# Every shell: planb completion bash > ~/.local/share/bash-completion/completions/planb

{tables}_planb() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local cmd="planb" word i
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        if [[ " $(_planb_subcommands "$cmd") " == *" $word "* ]]; then
            cmd="$cmd $word"
        fi
    done
    COMPREPLY=()
    if [[ "$prev" == -* && " $(_planb_valued "$cmd") " == *" $prev "* ]]; then
        COMPREPLY=($(compgen -W "$(_planb_choices "$cmd" "$prev")" -- "$cur"))
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_planb_options "$cmd")" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_planb_subcommands "$cmd") $(_planb_positionals "$cmd")" -- "$cur"))
    fi
    return 0
}}

complete -o default -F _planb planb
"""

ZSH = """\
#compdef planb
# zsh completion for planb, generated from its argparse parser by `planb completion zsh`.
# This shell (after compinit): source <(planb completion zsh)
# Every shell: planb completion zsh > "${{fpath[1]}}/_planb"

{tables}_planb() {{
    local cmd="planb" word i
    local -a reply subs
    for ((i = 2; i < CURRENT; i++)); do
        word="${{words[i]}}"
        reply=()
        _planb_subcommands "$cmd"
        if (( ${{reply[(I)${{(b)word}}(|:*)]}} )); then
            cmd="$cmd $word"
        fi
    done
    reply=()
    _planb_valued "$cmd"
    if (( ${{reply[(Ie)${{words[CURRENT-1]}}]}} )); then
        reply=()
        _planb_choices "$cmd" "${{words[CURRENT-1]}}"
        if (( ${{#reply}} )); then compadd -a reply; else _files; fi
        return
    fi
    reply=()
    if [[ "$PREFIX" == -* ]]; then
        _planb_options "$cmd"
        _describe -t options option reply
        return
    fi
    _planb_subcommands "$cmd"
    subs=("${{reply[@]}}")
    reply=()
    _planb_positionals "$cmd"
    if (( ${{#subs}} )); then
        _describe -t commands command subs
    elif (( ${{#reply}} )); then
        compadd -a reply
    else
        _files
    fi
}}

if [[ "${{funcstack[1]}}" == _planb ]]; then
    _planb "$@"
else
    compdef _planb planb
fi
"""


def script(shell: str, parser: argparse.ArgumentParser | None = None) -> str:
    """The completion script for ``shell`` (bash or zsh) of ``parser`` (default: planb's full parser)."""
    tree = list(levels(parser or full_parser()))

    def tables(named: Callable[[Any], str], plain: Callable[[Any], str]) -> str:
        """The five lookup tables: ``named`` renders the words that carry a help line (sub-commands, options),
        ``plain`` the bare words (valued options, choices, positionals)."""

        def per_level(attr: str, body: Callable[[Any], str]) -> list[tuple[list[str], str]]:
            return [([lv.path], body(getattr(lv, attr))) for lv in tree if getattr(lv, attr)]

        return TABLES.format(
            subcommands=_case(per_level("subcommands", named)),
            options=_case(per_level("options", named)),
            valued=_case(per_level("values", plain)),
            choices=_case(_choice_branches(tree, plain)),
            positionals=_case(per_level("positionals", plain)),
        )

    if shell == "bash":
        return BASH.format(tables=tables(_words_out, _words_out))
    if shell == "zsh":

        def described(items: dict[str, str]) -> str:
            return "reply=(" + " ".join(_zsh_item(word, text) for word, text in items.items()) + ")"

        def plain(words: tuple[str, ...]) -> str:
            return "reply=(" + " ".join(words) + ")"

        return ZSH.format(tables=tables(described, plain))
    raise ValueError(f"no completion for {shell!r}: choose one of {', '.join(SHELLS)}")


def _completion(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell))
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb completion`."""
    parser = sub.add_parser(
        "completion",
        help="print a bash or zsh completion script for planb",
        description="Print a completion script for SHELL, generated from planb's own parser: its sub-commands, "
        "their options and the values an option offers.",
        epilog="""\
examples:
  source <(planb completion bash)      bash: completion in this shell
  source <(planb completion zsh)       zsh: the same (after compinit)
  planb completion bash > ~/.local/share/bash-completion/completions/planb    bash: every new shell
  planb completion zsh > "${fpath[1]}/_planb"                                 zsh: every new shell
""",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash or zsh")
    parser.set_defaults(handler=_completion)
