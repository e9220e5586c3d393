# planb: one entry point for people and for CI.
#   make demo   the seed's whole flow on this machine (sets up what it needs first)
#   make test   all tests: pytest and molecule, on the real local stack (sets up what it needs first)
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV      := $(CURDIR)/.venv
PY        := $(VENV)/bin/python
STAMP     := $(VENV)/.planb-installed
export PATH := $(CURDIR)/.tools/bin:$(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg

.PHONY: help setup venv lock tools chart-tools operator-venv up down status demo test test-fast lint sanity chart-lint bench values golden collection dist chart chart-docs clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# requirements-all.lock is the whole tree of requirements.txt and training/requirements.txt (pip and
# setuptools included) with hashes; pip refuses anything unhashed or with another hash. planb itself is
# built from this checkout with the locked setuptools.
$(STAMP): requirements-all.lock pyproject.toml
	@echo "[planb setup] Python environment in .venv (hash-checked from requirements-all.lock) ..."
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --require-hashes -r requirements-all.lock
	@$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	@touch $@

venv: $(STAMP) ## Python environment (.venv), hash-checked from requirements-all.lock

# requirements.lock is requirements.txt's tree alone (an ops controller's), constrained to the same
# versions. Both keep the locked versions of what did not change; LOCK_ARGS=--upgrade moves every
# unpinned one to the newest.
LOCK := $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	--custom-compile-command "make lock" $(LOCK_ARGS)
lock: venv ## re-resolve requirements-all.lock and requirements.lock (hashes, every platform) after changing a pin
	@$(LOCK) -o requirements-all.lock requirements.txt training/requirements.txt
	@$(LOCK) -c requirements-all.lock -o requirements.lock requirements.txt

tools: ## build the pinned toolchain from the Go module proxy (cached in ~/.cache/planb)
	@hack/build-tools.sh

chart-tools: ## build only helm and the chart's tools (ct, helm-docs; hack/chart-tools.env): what lint needs
	@hack/build-tools.sh chart

operator-venv: ## the operator's virtual environment from requirements.lock alone, outside the checkout (the rehearsal test's; cached)
	@hack/operator-venv.sh

setup: venv tools operator-venv ## everything demo and test need

up: setup ## start the local stack (kwok control plane + Kueue)
	@planb local up

down: venv ## stop the local stack (and a regions demo's stacks) and remove its state
	@planb local down
	@planb local down --regions

status: venv ## local stack status
	@planb local status

demo: setup ## the seed's whole flow on this machine
	@hack/demo.sh

test: setup ## all tests (pytest, molecule): the stack tests and the others side by side (hack/test.sh)
	@PY=$(PY) PYTEST_ARGS="$(PYTEST_ARGS)" hack/test.sh

test-fast: setup ## the unit tier, tests/unit: no server, no binary beyond helm template (60 s or less)
	@$(PY) -m pytest -ra -p no:cacheprovider tests/unit $(PYTEST_ARGS)

lint: venv chart-tools ## yamllint, ansible-lint (production profile), ruff, mypy, sanity, the chart (ct lint, helm lint --strict)
	@yamllint -s .
	@ansible-lint --profile production
	@ruff check src tests collections training
	@ruff format --check src tests collections training
	@mypy
	@hack/sanity.sh
	@$(MAKE) --no-print-directory chart-lint

# ct lint: chart-testing with ct.yaml (every chart under charts/, offline: no remote, no maintainer lookup), which runs
# yamale on Chart.yaml, yamllint on Chart.yaml and values.yaml, and helm lint --strict. Then helm lint --strict with
# each shipped values file, in both modes.
CHART_VALUES := $(wildcard charts/planb/values/*.yaml)
chart-lint: venv chart-tools ## the chart alone: ct lint (chart-testing, ct.yaml) and helm lint --strict with every values file
	@ct lint --config ct.yaml
	@for values in $(CHART_VALUES); do for mode in job queues; do \
	  helm lint --strict --quiet charts/planb -f "$$values" --set mode=$$mode || \
	  { echo "[planb chart-lint] failed: helm lint --strict charts/planb -f $$values --set mode=$$mode"; exit 1; }; \
	done; done
	@echo "[planb chart-lint] helm lint --strict: $(words $(CHART_VALUES)) values files x 2 modes passed"

sanity: venv ## ansible-test sanity on the planb.gke collection (part of lint)
	@hack/sanity.sh

bench: setup ## measure the figures in BENCHMARKS.md (BENCH=loop: only the local loop: up, memory, no-op converge, demo; BENCH=regions: the regions' up, memory and demo; BENCH=concurrent: the ladder's three columns; BENCH=dispatch: advice-ordered dispatch against the race and an oracle, written to BENCHMARKS.md; hack/bench.sh concurrent ARGS passes arguments)
	@hack/bench.sh $(BENCH)

values: venv ## regenerate charts/planb/values/*.yaml and the collection's catalog facts from the catalog
	@planb values --write-all charts/planb/values
	@$(PY) -m planb.build.chart_files
	@$(PY) -m planb.build.collection

golden: venv values ## regenerate golden files (values, helm template, CLI output)
	@$(PY) -m planb.build.golden

collection: venv ## the planb.gke collection's tarball with its roles, playbooks and the queues chart, in dist/
	@$(PY) -m planb.build.collection_tarball --output-path dist

# The wheel is built with the locked setuptools, its dependencies left to the installer: the core (PyYAML,
# urllib3) and the extras [timeline] (matplotlib) and [local] (the stand-ins' libraries), as pyproject.toml says.
dist: collection ## the planb wheel (pip install dist/planb-*.whl; extras [timeline], [local]) and the collection's tarball, in dist/
	@$(PY) -m pip wheel -q --no-deps --no-build-isolation -w dist .

chart: values ## the chart packaged for a registry: dist/planb-<version>.tgz (helm package; charts/planb/README.md shows helm push)
	@$(PY) -m planb.build.chart_package --output-path dist

chart-docs: venv chart-tools ## regenerate charts/planb/README.md (helm-docs: README.md.gotmpl and values.yaml's `# --` comments)
	@$(PY) -m planb.build.chart_docs

clean: ## stop the stack and remove the venv and the .tools link (the tool cache stays)
	-@planb local down 2>/dev/null
	rm -rf $(VENV) .tools
