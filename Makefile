# `make run` and `make test` work on a fresh Debian machine with the Swift toolchain:
# they install what is missing, build, and run.
SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

SYSTEM_PACKAGES := pkg-config libmicrohttpd-dev libsqlite3-dev
BROWSER_PACKAGES := chromium chromium-driver
# PyPI packages the Python tests use (browser, API contract and fuzz, reliability), installed when missing.
PYTHON_PACKAGES := selenium pytest PyYAML jsonschema referencing openapi-spec-validator schemathesis

.PHONY: run test build soak system-deps test-deps swift-test python-test clean

run: build
	.build/release/herald serve

build: system-deps
	$(SWIFT) build -c release --product herald

test: test-deps
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory swift-test python-test

swift-test:
	$(SWIFT) test --skip-build

# Mixed load on the release build for SOAK_MINUTES: zero errors, memory growth < 10 % (not part of `make test`).
SOAK_MINUTES ?= 10
soak: build
	$(PYTHON) bench/soak.py --minutes $(SOAK_MINUTES)

# Browser tests (Selenium, headless Chromium), the API contract and schemathesis fuzz against openapi.yaml,
# and the bad-input reliability suite, each against the real server binary.
python-test:
	HERALD_BIN=$(CURDIR)/.build/debug/herald $(PYTHON) -m pytest -q

# Installs only the Debian packages that are missing, so a ready machine needs no network or root.
define install_missing
	@missing=""; for package in $(1); do dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

system-deps:
	$(call install_missing,$(SYSTEM_PACKAGES))

test-deps: system-deps
	$(call install_missing,$(BROWSER_PACKAGES))
	@for package in $(PYTHON_PACKAGES); do \
		$(PYTHON) -m pip show -q $$package >/dev/null 2>&1 || $(PYTHON) -m pip install -q $$package; \
	done

clean:
	rm -rf .build test-artifacts
