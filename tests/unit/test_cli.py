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


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Sub-command name -> its help line, as `planb --help` lists them."""
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: str(choice.help) for choice in action._choices_actions}


def test_each_help_line_is_the_one_its_module_registers() -> None:
    assert _subcommands(cli.build_parser()) == {c.name: c.help for c in cli.COMMANDS}


def test_help_lists_every_subcommand_without_importing_them() -> None:
    assert _subcommands(cli.build_parser(load=[])) == {c.name: c.help for c in cli.COMMANDS}


def _run(argv: list[str]) -> tuple[str, set[str]]:
    """`planb ARGV` in a fresh interpreter: what it printed, and the planb areas it imported."""
    code = (
        "import json, sys\nfrom planb import cli\ntry:\n    cli.main(json.loads(sys.argv[1]))\nexcept SystemExit:\n"
        "    pass\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('planb.'))), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "src"), "COLUMNS": "200"}  # one help line per command
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True, env=env, timeout=60
    )
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    return done.stdout, {".".join(m.split(".")[:2]) for m in loaded}


def test_help_in_a_fresh_interpreter_lists_every_subcommand_and_imports_none() -> None:
    out, areas = _run(["--help"])
    assert all(command.name in out and command.help in out for command in cli.COMMANDS), out
    assert not areas & {*HEAVY, "planb.status", "planb.catalog"}, areas


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
        cli.main(["gke-emulator", "--help"])
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


@pytest.mark.parametrize("command", cli.COMMANDS, ids=lambda c: c.name)
def test_a_command_names_an_extra_exactly_when_it_needs_one(command: cli.Command) -> None:
    """Without the extras the product's commands answer, and one that needs an extra's library names the fix."""
    done = _run_without_extras([command.name, "--help"])
    if command.extra is None:
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        assert done.stdout.startswith("usage: planb " + command.name), done.stdout
    else:
        assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
        assert done.stderr.startswith(f"planb: error: planb {command.name} needs "), done.stderr
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
