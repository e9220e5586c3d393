"""`planb`: every sub-command listed with its help line, and only the running one's package imported."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from planb import cli, paths
from planb.errors import EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE

#: The packages a sub-command may pull in; `planb status` and `planb --help` need none of them.
HEAVY = ("planb.local.gke_emulator", "planb.local.capacity", "planb.local.stack", "planb.local.rayhead")
#: The sub-command packages each one uses itself: `planb status` names a job's and its queue's profile from the
#: accelerator catalog (planb.status.shapes).
USES = {"planb.status": {"planb.catalog"}}


#: What `planb --help` lists: the product's commands, and `local` for everything that runs only on this machine.
PRODUCT = {"status", "profiles", "values", "regions", "completion"}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Sub-command name -> its help line, as `planb --help` lists them."""
    action = cli.subparsers_of(parser)
    assert action is not None
    return {choice.dest: str(choice.help) for choice in action._choices_actions}


def test_each_help_line_is_the_one_its_module_registers() -> None:
    parser = cli.build_parser()
    assert _subcommands(parser) == {c.name: c.help for c in cli.TOP_LEVEL}
    action = cli.subparsers_of(parser)
    assert action is not None
    local = _subcommands(action.choices["local"])
    assert {c.name: c.help for c in cli.COMMANDS if c.parent == "local"}.items() <= local.items()


def test_help_lists_every_subcommand_without_importing_them() -> None:
    assert _subcommands(cli.build_parser(load=[])) == {c.name: c.help for c in cli.TOP_LEVEL}


def test_help_lists_exactly_the_product_commands_and_local() -> None:
    """The stand-ins for Google and Ray are commands of `planb local`, never beside the product's."""
    assert set(_subcommands(cli.build_parser())) == PRODUCT | {"local"}
    assert {c.name for c in cli.COMMANDS if c.parent == "local"} == {"gke-emulator", "capacity", "rayhead"}
    assert {c.module.split(".")[1] for c in cli.TOP_LEVEL if c.name in PRODUCT} <= {"status", "catalog", "regions",
                                                                                      "completion"}  # fmt: skip


def _imported(argv: list[str]) -> tuple[str, set[str]]:
    """`planb ARGV` in a fresh interpreter: what it printed, and every planb module it imported."""
    code = (
        "import json, sys\nfrom planb import cli\ntry:\n    cli.main(json.loads(sys.argv[1]))\nexcept SystemExit:\n"
        "    pass\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('planb.'))), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "src"), "COLUMNS": "200"}  # one help line per command
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True, env=env, timeout=60
    )
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1]))


def _run(argv: list[str]) -> tuple[str, set[str]]:
    """`planb ARGV` in a fresh interpreter: what it printed, and the planb areas it imported (`planb.status`; in the
    local wing one level down, `planb.local.capacity`)."""
    out, loaded = _imported(argv)
    return out, {".".join(m.split(".")[: 3 if m.startswith("planb.local.") else 2]) for m in loaded}


def test_help_in_a_fresh_interpreter_lists_every_subcommand_and_imports_none() -> None:
    out, areas = _run(["--help"])
    assert all(command.name in out and command.help in out for command in cli.TOP_LEVEL), out
    listed = out.split("\n  COMMAND\n", 1)[1].split("\n\n", 1)[0]
    assert {line.split()[0] for line in listed.splitlines() if line.startswith("    ") and line[4] != " "} == {
        *PRODUCT,
        "local",
    }, out
    assert not areas & {*HEAVY, "planb.status", "planb.catalog"}, areas


def test_a_stand_in_command_loads_the_local_stack_s_cli_and_its_own_alone() -> None:
    stand_ins = {c.module for c in cli.COMMANDS if c.parent == "local"}
    out, loaded = _imported(["local", "capacity", "--help"])
    assert "usage: planb local capacity" in out, out
    assert loaded & (stand_ins | {"planb.local.stack.cli"}) == {"planb.local.stack.cli", "planb.local.capacity.cli"}
    out, loaded = _imported(["local", "--help"])
    assert all(name in out for name in ("up", "down", "gke-emulator", "capacity", "rayhead")), out
    assert not loaded & stand_ins, loaded


@pytest.mark.parametrize(
    ("argv", "area"), [(["status", "--help"], "planb.status"), (["values", "-h"], "planb.catalog")]
)
def test_only_the_running_subcommand_is_imported(argv: list[str], area: str) -> None:
    out, areas = _run(argv)
    assert "usage: planb " + argv[0] in out, out
    assert area in areas
    assert not areas & {*HEAVY, "planb.status", "planb.catalog"} - {area} - USES.get(area, set()), areas


def test_a_subcommand_still_gets_its_own_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["local", "gke-emulator", "--help"])
    assert "set-quota" in capsys.readouterr().out


#: Each extra's libraries (pyproject.toml's [project.optional-dependencies]), as the modules planb imports.
EXTRA_MODULES = ("cryptography", "googleapiclient", "matplotlib")


def _run_without_extras(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`planb ARGV` in a fresh interpreter that cannot import any extra's library (as `pip install planb` leaves it)."""
    code = (
        "import json, sys\n"
        f"sys.modules.update(dict.fromkeys({EXTRA_MODULES!r}))\n"  # None in sys.modules: the import fails
        "from planb import cli\nsys.exit(cli.main(json.loads(sys.argv[1])))"
    )
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "src")}
    return subprocess.run(
        [sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.parametrize("command", cli.COMMANDS, ids=lambda c: " ".join(c.path))
def test_a_command_names_an_extra_exactly_when_it_needs_one(command: cli.Command) -> None:
    """Without the extras the product's commands answer, and one that needs an extra's library names the fix."""
    words = " ".join(command.path)
    done = _run_without_extras([*command.path, "--help"])
    if command.extra is None:
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        assert done.stdout.startswith("usage: planb " + words), done.stdout
    else:
        assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
        assert done.stderr.startswith(f"planb: error: planb {words} needs "), done.stderr
        assert done.stderr.rstrip().endswith(f"Fix: pip install 'planb[{command.extra}]'"), done.stderr


def test_the_product_needs_no_extra() -> None:
    assert {c.name for c in cli.COMMANDS if c.extra is None} >= {"status", "values", "profiles", "regions"}


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main([*argv, "--help"])
    assert done.value.code == EXIT_OK
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["status"]], ids=["planb", "planb status"])
def test_help_has_a_description_examples_and_every_exit_code(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = _help(argv, capsys)
    usage, description = out.split("\n\n")[:2]
    assert usage.startswith("usage: planb") and len(description.split()) > 10, out
    examples = out[out.index("\nexamples:\n") :]
    assert examples.count("\n  planb ") >= 4, out
    codes = out.split("\nexit codes:\n")[1].splitlines()
    assert [line.split()[0] for line in codes if line.strip()] == [
        str(c) for c in (EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE)
    ], out
    # RawDescriptionHelpFormatter: each example keeps its own line, as written.
    assert "\n  planb status job-2 -o json " in _help([], capsys)
    assert "\n  planb status job-2 -w " in _help(["status"], capsys)


def test_an_error_s_message_reaches_the_terminal_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A PlanbError can carry an API server's text; control characters in it never reach the terminal raw."""
    from planb.errors import PlanbError

    def hostile(args: argparse.Namespace) -> int:
        raise PlanbError("the server said \x1b]52;c;ZXZpbA==\x07\x1b[2J\rdone")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "_parser_for", lambda path: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv: argparse.Namespace(handler=hostile))
    assert cli.main(["status"]) != EXIT_OK
    err = capsys.readouterr().err
    assert not any(c in err for c in "\x1b\x07\r"), repr(err)
    assert "\\u001b]52;c;ZXZpbA==\\u0007" in err
