# planb.gke: one GET to the local GKE emulator, answered as ansible.builtin.uri would register it.
"""Ansible lookup ``planb.gke.emulator_reply``: the emulator's answer to one GET, its status and reason included.

The gke_cluster role asks the local GKE emulator for the kubeconfig of the local stack it serves, and, when it
hands out none, why. ``ansible.builtin.url`` drops the status and the error body, and ``ansible.builtin.uri`` is a
module run of its own (about 0.7 CPU-seconds of packing and unpacking per play); this asks once, on the
controller, where planb's plays run (``ansible_connection=local``).
"""

DOCUMENTATION = r"""
name: emulator_reply
author:
  - planb engineers (@planb)
version_added: "0.1.0"
short_description: The local GKE emulator's answer to one GET, its status and error body included
description:
  - Sends one GET to the URL given, on the controller, and returns what C(ansible.builtin.uri) with
    C(return_content) would register for it, C(status), C(content), C(json) and C(msg), without a module run.
  - Any status is an answer, not an error; an address that does not answer is status 0 and C(msg) says why.
  - For the local GKE emulator on a loopback address (the gke_cluster role in C(local) kubeconfig mode, on a
    play whose connection is local); it sends no credentials and follows no redirect.
options:
  _terms:
    description: The one URL to GET (http or https).
    type: list
    elements: str
    required: true
  timeout:
    description: Seconds to wait for the answer.
    type: float
    default: 30
"""

EXAMPLES = r"""
- name: Fetch the kubeconfig the GKE emulator hands out, or why it hands out none
  ansible.builtin.set_fact:
    reply: "{{ lookup('planb.gke.emulator_reply', 'http://127.0.0.1:8765/planb/v1/clusters/tpu-cluster/kubeconfig') }}"
  no_log: true
"""

RETURN = r"""
_raw:
  description: The answer, as one mapping (a list of one, as lookups return).
  type: list
  elements: dict
  contains:
    status:
      description: The HTTP status; 0 when nothing answered.
      type: int
      sample: 404
    content:
      description: The body, as text.
      type: str
      sample: '{"error": {"code": 404, "message": "no local stack runs"}}'
    json:
      description: The body parsed, when it is JSON; absent otherwise.
      type: dict
      sample: {"error": {"code": 404, "message": "no local stack runs"}}
    msg:
      description: The reason phrase, or why nothing answered.
      type: str
      sample: Not Found
"""


import contextlib  # noqa: E402
import json  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
from typing import Any  # noqa: E402

from ansible.errors import AnsibleLookupError  # noqa: E402
from ansible.plugins.lookup import LookupBase  # noqa: E402


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def reply(url: str, timeout: float) -> dict[str, Any]:
    """The answer to GET `url` as uri registers it: status, content, json (when the body parses), msg."""
    if not url.startswith(("http://", "https://")):
        raise AnsibleLookupError(f"planb.gke.emulator_reply takes an http or https URL, not {url!r}")
    opener = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, method="GET"), timeout=timeout) as resp:
            status, reason, body = resp.status, str(resp.reason), resp.read()
    except urllib.error.HTTPError as exc:
        status, reason, body = exc.code, str(exc.reason), exc.read()
    except (urllib.error.URLError, OSError) as exc:
        return {"status": 0, "content": "", "msg": f"nothing answered at {url}: {exc}"}
    answer: dict[str, Any] = {"status": status, "content": body.decode(errors="replace"), "msg": reason}
    with contextlib.suppress(ValueError):
        answer["json"] = json.loads(body)
    return answer


class LookupModule(LookupBase):  # type: ignore[misc]  # ansible-core ships no type hints
    def run(self, terms: list[Any], variables: dict[str, Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
        self.set_options(var_options=variables, direct=kwargs)
        if len(terms) != 1:
            raise AnsibleLookupError(f"planb.gke.emulator_reply takes one URL, not {len(terms)}")
        return [reply(str(terms[0]), float(self.get_option("timeout")))]
