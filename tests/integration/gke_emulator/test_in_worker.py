"""The planb.gke API modules run inside the task's worker (plugins/plugin_utils/in_worker.py) with the results,
failures and masking the same module gives when Ansible runs it in an interpreter of its own.

The same play runs twice, each time against a fresh emulator: as planb's plays run (local connection, the
controller's Python), and with an ``environment`` keyword, which sends every module the usual way (AnsiballZ,
a new interpreter). ``-vvv`` shows which: Ansible names each AnsiballZ payload it runs.
"""

from __future__ import annotations

import http.server
import json
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.modules import CLUSTER, LOCATION, PROJECT, ansible_playbook

SECRET = "ya29.in-worker-test-token"  # an access token; the module refuses it over http before sending it


class _NotJson(http.server.BaseHTTPRequestHandler):
    """An endpoint that answers 200 with a body that is not JSON: the client's json.loads raises, an exception the
    module does not handle."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"not json")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def not_json() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotJson)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _play(endpoint: str, out: Path, usual_way: bool, junk: str) -> list[dict[str, Any]]:
    auth = {"project": PROJECT, "location": LOCATION, "api_endpoint": endpoint, "poll_interval": 0.05}
    keep = {"register": "result", "ignore_errors": True}
    tasks: list[dict[str, Any]] = [
        {"name": "create", "planb.gke.gke_cluster": {**auth, "auth_kind": "none", "name": CLUSTER, "version": "1.34"}},
        {"name": "read", "planb.gke.gke_cluster_info": {**auth, "auth_kind": "none", "name": CLUSTER}},
        {"name": "unknown option", "planb.gke.gke_cluster_info": {**auth, "auth_kind": "none", "bogus": 1}},
        {"name": "token over http", "planb.gke.gke_cluster_info": {**auth, "auth_kind": "accesstoken",
                                                                    "access_token": SECRET, "name": CLUSTER}},
        {"name": "not JSON", "planb.gke.gke_cluster_info": {**auth, "auth_kind": "none", "api_endpoint": junk}},
        # async: the usual way either way (as ansible.builtin.normal runs it)
        {"name": "async", "planb.gke.gke_cluster_info": {**auth, "auth_kind": "none", "name": CLUSTER},
         "async": 60, "poll": 1},
    ]  # fmt: skip
    steps: list[dict[str, Any]] = []
    for task in tasks:
        steps += [
            {**task, **keep},
            {"ansible.builtin.set_fact": {"results": "{{ (results | default([])) + [result] }}"}},
        ]
    steps.append({"ansible.builtin.copy": {"content": "{{ results | to_json }}", "dest": str(out)}})
    play = {
        "hosts": "localhost",
        "gather_facts": False,
        "connection": "local",
        "vars": {"ansible_python_interpreter": sys.executable},
        "environment": {"PLANB_USUAL_WAY": "1"} if usual_way else {},
        "tasks": steps,
    }
    return [play]


def _run(tmp_path: Path, name: str, usual_way: bool, junk: str) -> tuple[list[dict[str, Any]], str]:
    emulator = RunningEmulator(tmp_path / name / "state", port=0, op_seconds=0.05, kubeconfig=tmp_path / "none")
    try:
        playbook, out = tmp_path / f"{name}.yml", tmp_path / f"{name}.json"
        playbook.write_text(yaml.safe_dump(_play(emulator.url, out, usual_way, junk)))
        done = ansible_playbook(str(playbook), "-i", "localhost,", "-vvv")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        return json.loads(out.read_text()), done.stdout + done.stderr
    finally:
        emulator.stop()


def _stable(result: dict[str, Any]) -> dict[str, Any]:
    """What does not change from one emulator to the next: no operation names, times or poll counts, and the
    emulator's address (a free port) as ENDPOINT."""
    kept = {key: result.get(key) for key in ("changed", "failed", "actions", "invocation", "exception")}
    msg = re.sub(r"http://127\.0\.0\.1:\d+", "ENDPOINT", str(result.get("msg")))
    # "waited for GKE operations: CREATE_CLUSTER 1 polls/0.1s": the wait's length is a time too.
    kept["msg"] = re.sub(r"(\d+ polls)/[\d.]+s", r"\1/Ns", msg)
    cluster = result.get("cluster") or (result.get("clusters") or [{}])[0]
    kept["cluster"] = {key: cluster.get(key) for key in ("name", "status", "location", "initialClusterVersion")}
    return kept


def test_the_modules_run_in_the_worker_and_answer_as_in_their_own_interpreter(tmp_path: Path, not_json: str) -> None:
    here, here_out = _run(tmp_path, "in-worker", usual_way=False, junk=not_json)
    usual, usual_out = _run(tmp_path, "usual", usual_way=True, junk=not_json)

    # Which way each run took: the usual one sent an AnsiballZ payload for each task, the in-worker one only for
    # the async task.
    def payloads(output: str, module: str) -> int:
        return len(re.findall(rf"PUT \S+ TO \S+/AnsiballZ_{module}\.py", output))

    assert (payloads(usual_out, "gke_cluster"), payloads(usual_out, "gke_cluster_info")) == (1, 5)
    assert (payloads(here_out, "gke_cluster"), payloads(here_out, "gke_cluster_info")) == (0, 1), here_out[-3000:]
    assert [_stable(r) for r in here] == [_stable(r) for r in usual]

    made, read, unknown, token, junk, in_async = here
    assert made["changed"] is True and made["cluster"]["status"] == "RUNNING"
    assert read["changed"] is False and [c["name"] for c in read["clusters"]] == [CLUSTER]
    assert unknown["failed"] is True
    assert unknown["msg"].startswith("Unsupported parameters for (planb.gke.gke_cluster_info) module: bogus")
    assert token["failed"] is True and "plain http://" in token["msg"]
    # An exception the module does not handle: a failed result naming it, as AnsiballZ's loader makes it.
    assert junk["failed"] is True and "Module failed: Expecting value" in junk["msg"], junk
    assert in_async["finished"] == 1 and [c["name"] for c in in_async["clusters"]] == [CLUSTER]
    # The no_log option: printed nowhere, either way (-vvv prints every result).
    assert SECRET not in here_out and SECRET not in usual_out
