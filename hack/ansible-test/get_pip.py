"""Stand-in for the pip bootstrap script ansible-test downloads from ci-files.testing.ansible.com.

That host is not reachable from this workplace (only the package registries are), so
`hack/sanity.sh` puts this file where ansible-test caches its download. It does what the real
script does for ansible-test's empty virtual environments: install pip (from Python's own
ensurepip, in a child process because ensurepip points PIP_CONFIG_FILE at /dev/null), then the
requested pip version from the package index the machine's pip configuration names.
"""

import subprocess
import sys

GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}

subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"], stdout=subprocess.DEVNULL)
args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY]
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *args])
