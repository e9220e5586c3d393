"""`planb completion bash|zsh`: the script is generated from planb's own parser, the shell parses it, and it
completes what the parser accepts (each shell's completion function run with the words of a command line)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from planb import cli, completion, paths

BASH = shutil.which("bash")
ZSH = shutil.which("zsh")


def _status_options() -> list[str]:
    (sub,) = (a for a in cli.build_parser(["planb.status.cli"])._actions if isinstance(a, argparse._SubParsersAction))
    return [o for action in sub.choices["status"]._actions for o in action.option_strings]


@pytest.fixture(scope="module")
def bash_script() -> str:
    return completion.script("bash")


def _table(script: str, function: str) -> dict[str, list[str]]:
    """One of the bash script's case tables: ``"key") printf '%s\\n' "words";;`` as key -> words."""
    body = script.split(f"\n{function}() {{\n", 1)[1].split("\n}\n", 1)[0]
    return {
        line.split('"')[1]: line.split('"')[-2].split() for line in body.splitlines() if line.strip().startswith('"')
    }


def test_the_bash_script_names_every_subcommand_and_status_s_options(bash_script: str) -> None:
    assert _table(bash_script, "_planb_subcommands")["planb"] == [c.name for c in cli.TOP_LEVEL]
    stand_ins = [c.name for c in cli.COMMANDS if c.parent == "local"]
    assert _table(bash_script, "_planb_subcommands")["planb local"][-len(stand_ins) :] == stand_ins
    status = _table(bash_script, "_planb_options")["planb status"]
    assert status == _status_options()
    assert {"-o", "--output", "--timeline", "--context", "-A"} <= set(status)
    assert _table(bash_script, "_planb_choices")["planb status -o"] == ["json", "yaml"]


@pytest.mark.skipif(BASH is None, reason="no bash")
def test_bash_parses_the_script(bash_script: str, tmp_path: Path) -> None:
    path = tmp_path / "planb.bash"
    path.write_text(bash_script)
    done = subprocess.run([str(BASH), "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def _bash_complete(script: str, tmp_path: Path, line: str) -> list[str]:
    """What the script's function offers for ``line`` (its last word the one being completed)."""
    path = tmp_path / "planb.bash"
    path.write_text(script)
    words = line.split(" ")
    driver = (
        f"source {path}\nCOMP_WORDS=({' '.join(repr(w) for w in words)})\nCOMP_CWORD={len(words) - 1}\n"
        '_planb\nprintf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run([str(BASH), "--norc", "-c", driver], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.skipif(BASH is None, reason="no bash")
@pytest.mark.parametrize(
    ("line", "offered"),
    [
        ("planb st", ["status"]),
        ("planb status --out", ["--output"]),
        ("planb status -o ", ["json", "yaml"]),
        ("planb status job-2 -n team-a --time", ["--timeout", "--timeline"]),
        ("planb status --kubeconfig ", []),  # a free value: bash's own file names (complete -o default)
        ("planb completion ", ["bash", "zsh"]),
        ("planb regions ", ["keep", "renew-tokens"]),
        ("planb regions keep --once --kube", ["--kubeconfig"]),
        ("planb local ca", ["capacity"]),
        ("planb local gke-emulator st", ["start", "stop", "status"]),
        ("planb gke", []),  # a stand-in is a command of `planb local` only
    ],
)
def test_bash_completes_what_the_parser_accepts(
    bash_script: str, tmp_path: Path, line: str, offered: list[str]
) -> None:
    assert _bash_complete(bash_script, tmp_path, line) == offered


def test_a_new_option_is_in_the_next_script_without_an_edit() -> None:
    parser = argparse.ArgumentParser(prog="planb")
    sub = parser.add_subparsers(dest="command")
    late = sub.add_parser("late", help="a: command")
    late.add_argument("--colour", choices=("red", "green"), help="its 'colour'")
    late.add_argument("--hidden", help=argparse.SUPPRESS)
    bash = completion.script("bash", parser)
    assert '"planb late") printf \'%s\\n\' "-h --help --colour";;' in bash
    assert '"planb late --colour") printf \'%s\\n\' "red green";;' in bash
    assert "--hidden" not in bash
    zsh = completion.script("zsh", parser)
    assert "'late:a\\: command'" in zsh and "'--colour:its '\\''colour'\\'''" in zsh


def test_without_the_local_extra_the_script_still_names_every_subcommand() -> None:
    """`pip install planb` alone: the local wing's commands are completed by name, the product's in full."""
    code = (
        "import sys\nsys.modules.update(dict.fromkeys(('cryptography', 'googleapiclient', 'matplotlib')))\n"
        "from planb import cli\nsys.exit(cli.main(['completion', 'bash']))"
    )
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert all(f" {c.name}" in done.stdout for c in cli.TOP_LEVEL)
    assert '"planb status")' in done.stdout and '"planb status -o"|"planb status --output")' in done.stdout
    assert '"planb local up")' not in done.stdout  # planb.local.stack.cli needs the [local] extra: a stub


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["completion", "fish"])
    assert done.value.code == 2 and "invalid choice: 'fish'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="choose one of bash, zsh"):
        completion.script("fish", argparse.ArgumentParser())


ZSH_STUBS = """\
compdef() { :; }
compadd() { [[ $1 == -a ]] && print -rl -- ${(P)2}; }
_files() { print -r -- FILES; }
_describe() { print -rl -- ${${(P)4}%%:*}; }
"""


@pytest.mark.skipif(ZSH is None, reason="no zsh")
@pytest.mark.parametrize(
    ("words", "offered"),
    [
        (["planb", "st"], [c.name for c in cli.TOP_LEVEL]),  # zsh filters by the prefix itself
        (["planb", "status", "-o", ""], ["json", "yaml"]),
        (["planb", "status", "--kubeconfig", ""], ["FILES"]),
        (["planb", "completion", ""], ["bash", "zsh"]),
    ],
)
def test_zsh_parses_the_script_and_completes_what_the_parser_accepts(
    tmp_path: Path, words: list[str], offered: list[str]
) -> None:
    """compsys itself is stubbed (compadd, _describe, _files): the script's own logic runs under zsh."""
    path = tmp_path / "_planb"
    path.write_text(completion.script("zsh"))
    assert subprocess.run([str(ZSH), "-n", str(path)], capture_output=True, timeout=30).returncode == 0
    quoted = " ".join("'" + w + "'" for w in words)
    driver = f"{ZSH_STUBS}source {path}\nwords=({quoted})\nCURRENT={len(words)}\nPREFIX={words[-1]!r}\n_planb\n"
    done = subprocess.run([str(ZSH), "-f", "-c", driver], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == offered, done.stderr
