"""Running a one-off playbook against the checkout's roles, as the kueue role tests do: on localhost, with the
checkout's ansible.cfg and the collection's roles, the extra variables as JSON; or once for several inputs, one local
host each (`run_for_hosts`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planb import paths
from tests.support.shared.kueue.run_once import keep, take_ahead
from tests.support.shared.leftovers import assert_nothing_left


def run_playbook(playbook: Path, text: str, extra_vars: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """Write `text` to `playbook` and run it with `extra_vars` (and this interpreter as the target's Python)."""
    playbook.write_text(text)
    variables = {"ansible_python_interpreter": sys.executable, **extra_vars}
    return _ansible_playbook("-i", "localhost,", "-c", "local", "-e", json.dumps(variables), str(playbook))


def run_for_hosts(folder: Path, text: str, hosts: dict[str, dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """Run the play `text` (its ``hosts: localhost`` made ``hosts: all``) once for several inputs: an inventory in
    `folder` of one local host per
    name in `hosts`, its variables the host's own (the level planb's inventories give a role's variables). Each host
    runs the play apart, its facts its own, as separate runs would; Ansible's start (about a CPU-second: its
    modules, its configuration's plugin documentation) is paid once instead of once per input."""
    folder.mkdir(parents=True, exist_ok=True)
    common = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {"all": {"hosts": {name: {**common, **variables} for name, variables in hosts.items()}}}
    (folder / "inventory.json").write_text(json.dumps(inventory))  # YAML's superset: the inventory's yaml plugin
    (folder / "playbook.yml").write_text(text.replace("hosts: localhost", "hosts: all", 1))
    # The run's temporary folder is its own: a file the play leaves there fails the test (leftovers.py).
    temporary = folder / "tmp"
    temporary.mkdir(exist_ok=True)
    done = _ansible_playbook("-i", str(folder / "inventory.json"), str(folder / "playbook.yml"), tmpdir=temporary)
    assert_nothing_left(temporary, "the play")
    return done


def run_declared(kind: str, folder: Path, text: str, variables: Callable[[Any, Path], dict[str, Any]]) -> None:
    """The play `text` for every input declared for `kind` whose result
    `once` lacks (run_once.py), in one run of one host each: `variables(inputs, out)` are the host's, and the JSON
    the play writes to `out` is kept as the result. An input whose host fails is not kept (its test runs it alone
    and shows why); nothing runs for fewer than two."""
    pending = take_ahead(kind)
    if len(pending) < 2:
        return
    outs = [folder / f"result-{i}.json" for i in range(len(pending))]
    hosts = {f"input-{i}": variables(inputs, out) for i, (inputs, out) in enumerate(zip(pending, outs, strict=True))}
    run_for_hosts(folder, text, hosts)
    for inputs, out in zip(pending, outs, strict=True):
        if out.is_file():
            keep(kind, inputs, json.loads(out.read_text()))


#: A host's failed result in the default callback's output (``fatal: [input-0]: FAILED! =>``, ``failed: [input-1]
#: (item=...) =>``, its fields indented below it), printed right after the ``[ERROR]: Task failed: ...`` block that
#: explains it.
FAILED_RESULT = re.compile(r"^(?:fatal|failed): \[([^\]]+)\]")
#: A host's line of the PLAY RECAP.
RECAP = re.compile(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", re.MULTILINE)


def failures_by_host(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Each host of a `run_for_hosts` run that failed or was unreachable (its PLAY RECAP line), with what the output
    says of its failures: for each failed result of the host, the lines after the previous failed result (the
    ``[ERROR]`` block Ansible prints before it) and the result itself. A host that is no key passed."""
    blocks: dict[str, list[str]] = {}
    pending: list[str] = []
    owner: str | None = None  # the host whose failed result's indented fields are being read
    for line in done.stdout.splitlines():
        if owner and line.startswith(" "):
            blocks[owner].append(line)
            continue
        owner = None
        if found := FAILED_RESULT.match(line):
            owner = found.group(1)
            blocks.setdefault(owner, []).extend([*pending, line])
            pending = []
        else:
            pending.append(line)
    recap = {host: int(unreachable) + int(failed) for host, unreachable, failed in RECAP.findall(done.stdout)}
    assert recap, done.stdout[-3000:] + done.stderr[-2000:]  # the run reached its recap
    return {host: "\n".join(blocks.get(host, [])) for host, count in recap.items() if count}


def _ansible_playbook(*args: str, tmpdir: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), *args],
        cwd=paths.REPO,
        env={
            **os.environ,
            "ANSIBLE_CONFIG": str(paths.REPO / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(paths.REPO / "collections/ansible_collections/planb/gke/roles"),
            "ANSIBLE_NOCOLOR": "1",
            **({"TMPDIR": str(tmpdir)} if tmpdir else {}),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
