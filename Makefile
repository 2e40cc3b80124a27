# Two entry points for a newcomer: `make run` and `make test`. Everything installs itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
UV_VERSION := 0.13.8
STACK := RemindersStack
export CDK_DISABLE_CLI_TELEMETRY := 1
export CDK_DISABLE_VERSION_CHECK := 1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1
export AWS_DEFAULT_REGION ?= us-east-1
CDK := node_modules/.bin/cdk
SEED ?= 7
N ?= 5000
WIRE_N ?= 300
BURST ?= 100000

.PHONY: install client docs test lint synth sam-test run local invoke bench verify explore-regressions mutate deploy layer clean

$(VENV)/.installed: pyproject.toml requirements.lock clients/python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	$(VENV)/bin/uv pip install -q --python $(PY) -c requirements.lock -e '.[dev]' -e clients/python
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# pip --platform takes exact tags: every manylinux glibc up to 2.34 (Lambda's Amazon Linux 2023).
MANYLINUX_AARCH64 := --platform manylinux2014_aarch64 \
  $(foreach v,17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34,--platform manylinux_2_$(v)_aarch64)

# The arm64 dependency layer, built without Docker: wheels for manylinux aarch64 up to glibc 2.34
# (Lambda's Amazon Linux 2023), no .pyc of this machine's Python, nothing that shadows the
# Powertools layer's pydantic (layers/check_layer.py).
layers/build/deps/python: layers/requirements.txt layers/check_layer.py | $(VENV)/.installed
	rm -rf layers/build/deps && mkdir -p layers/build/deps/python
	$(PY) layers/check_layer.py --requirements layers/requirements.txt layers/build/deps/python
	$(PY) -m pip install -q --disable-pip-version-check --no-compile $(MANYLINUX_AARCH64) \
	  --implementation cp --python-version 3.13 --only-binary=:all: \
	  --target layers/build/deps/python -r layers/requirements.txt
	$(PY) layers/check_layer.py --deps layers/build/deps/python || { rm -rf layers/build/deps; exit 1; }

install: $(VENV)/.installed node_modules/.installed layers/build/deps/python

layer: layers/build/deps/python

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check functions infra tests tools clients/python
	$(VENV)/bin/ruff format --check functions infra tests tools clients/python
	$(VENV)/bin/mypy functions infra
	$(VENV)/bin/lint-imports --no-cache  # [tool.importlinter]: layers, no import circles
	$(PY) tools/module_size.py  # no module over 600 lines unless allowed, with its reason

# The typed client's generated code, from the API's /openapi.json (commit the result; a test fails
# while it is stale).
client: $(VENV)/.installed
	$(PY) clients/python/regenerate.py

synth: install
	$(CDK) synth --no-notices --quiet $(STACK) >/dev/null
	@echo "template: cdk.out/$(STACK).template.json"

# The documentation site (mkdocs.yml), offline and strict (a broken link or anchor fails) into site/;
# the API reference is rendered from the app's own /openapi.json, in-process.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

test: install
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory synth
	$(MAKE) --no-print-directory docs
	$(PY) -m pytest -n 2 -q --durations=15
	$(MAKE) --no-print-directory sam-test

# `sam local invoke` of every function of the template on a container engine of its own (root:
# installs Debian's docker.io/qemu-user-static/debootstrap and SAM CLI; see tests/sam/run.sh).
sam-test: install synth
	bash tests/sam/run.sh

run: install synth
	$(PY) -m reminders_ops.cli local --demo

local: install synth
	$(PY) -m reminders_ops.cli local --no-demo

# sam local invoke in the stand-in container when this machine can run the engine (tests/sam/run.sh),
# else the handler in-process on moto; it says which.
invoke: install synth
	@bash tests/sam/run.sh --invoke --function $(FN) --event $(EVENT) --template cdk.out/$(STACK).template.json; \
	rc=$$?; if [ $$rc -eq 3 ]; then \
	  $(PY) -m reminders_ops.cli invoke --mode in-process --function $(FN) --event $(EVENT) \
	    --template cdk.out/$(STACK).template.json; \
	else exit $$rc; fi

bench: install synth
	$(PY) -m reminders_ops.bench --burst $(BURST)

# The explorer (issue 26: every route, operator action and tenant, faults, the whole promise; then the
# platform settles and every delivery's end is judged) for N steps, the email residual curve over N
# email reminders (bench/email_residual.py: one run per ambiguous-email wait), send
# windows against the wall-clock stepper over every DST transition of every year, then the wire fault
# run at WIRE_N against moto server and the receiver behind fault proxies (real time), then the queue
# and event-source-mapping contracts on LocalStack's own SQS (tests/localstack/run.sh: Python 3.13 venv).
verify: install
	$(PY) -m reminders_ops.proof.explorer.engine --seed $(SEED) --steps $(N)
	$(PY) -m reminders_ops.bench.email_residual --seed $(SEED) -n $(N)
	REMINDERS_SLOW=1 $(PY) -m pytest -q -p no:randomly -m slow tests/unit/test_window_dst.py
	$(PY) -m reminders_ops.proof.wirerun --seed $(SEED) -n $(WIRE_N)
	bash tests/localstack/run.sh

# Each issue-24/25 fix reverted on a temporary copy, one at a time: steps to the explorer's first
# violation of its class and the shrunk trace's length (REGRESSION_BUDGET steps per class).
REGRESSION_BUDGET ?= 6000
explore-regressions: install
	$(PY) -m reminders_ops.proof.explorer.regressions --budget $(REGRESSION_BUDGET)

# Mutation score of the delivery core (MISSION §8; not part of `make test`): mutmut's mutants of FILE
# (one module or several, space-separated; default every module of [tool.mutmut] only_mutate), each
# run against its module's fast tests only ([tool.reminders.mutate.tests]; about a second a mutant).
# Only mutants not killed yet run (a stopped run resumes; survivors are tried again), a large module
# on its stated sample ([tool.reminders.mutate.sample]), every module on SAMPLE mutants if given, a
# sample of 20 with QUICK=1; then the per-module table (Wilson 95 %), failing below 90 %.
mutate: $(VENV)/.installed
	$(PY) -m reminders_ops.proof.mutate $(if $(QUICK),quick,run) $(if $(FILE),--file "$(FILE)") $(if $(SAMPLE),--sample $(SAMPLE))

deploy: install synth
	$(CDK) deploy --no-notices $(STACK)

clean:
	rm -rf cdk.out site layers/build .venv-localstack .pytest_cache .mypy_cache .ruff_cache
