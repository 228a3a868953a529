# `make run` and `make test` work on a fresh Debian machine with the Swift toolchain:
# they install what is missing, build, and run.
SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# libcurl4-openssl-dev: the release build links Foundation in, and its URLSession (the delivery client, `herald simulate`) needs libcurl to link against.
SYSTEM_PACKAGES := pkg-config libmicrohttpd-dev libsqlite3-dev libcurl4-openssl-dev zlib1g-dev
# Chromium, its driver, and fonts for the console's languages (Noto: Arabic script for Persian and Arabic;
# CJK for Japanese), so screenshots and layout checks see real glyphs, not boxes.
BROWSER_PACKAGES := chromium chromium-driver fonts-noto-core fonts-noto-cjk
# nginx, which the feed-cache test runs with packaging/nginx/herald.conf on a loopback port of its own;
# PostgreSQL, which Tools/with-postgres.sh starts in a temporary folder for the storage contract suite;
# wrk, whose rounds of a thousand keep-alive connections the slow-clients test sends (skipped without it);
# Prometheus, which Tests/operations/test_prometheus.py runs on a loopback port to scrape a running Herald and
# evaluate every query of docs/grafana-dashboard.json.
SERVICE_PACKAGES := nginx postgresql wrk prometheus
# PyPI packages the Python tests use (browser, API contract and fuzz, reliability, metrics), installed when missing;
# selenium-axe-python ships axe-core (axe.min.js) for the accessibility checks.
PYTHON_PACKAGES := selenium pytest PyYAML jsonschema referencing openapi-spec-validator schemathesis selenium-axe-python prometheus-client

.PHONY: run test build install deb soak system-deps test-deps swift-test python-test fuzz fuzz-build fuzz-check clean

run: build
	.build/release/herald serve

# The Swift runtime and Foundation are linked in, so the binary runs where no toolchain is installed.
# Quietly (Tools/quietly.sh): a line saying what is built and how long it takes, then its progress; the
# compiler's output is in .build/logs/ and shown when it fails (VERBOSE=1 shows it as it comes).
# The first build compiles every dependency (SwiftNIO, swift-crypto, postgres-nio, GRDB, …).
BUILD_LOGS := .build/logs
build: system-deps
	@Tools/quietly.sh $(BUILD_LOGS)/release.log "Building Herald (release)" \
		"$(if $(wildcard .build/release/herald),a minute or two after a change,about 10 to 15 minutes on 2 cores the first time, then a minute or two after a change)" \
		$(SWIFT) build -c release --product herald --static-swift-stdlib

# What `make install` puts under $(DESTDIR)$(PREFIX): the binary, stripped of its symbol table and debug
# information (half its size; .build/release/herald keeps them, to read a backtrace by); its templates, static files, catalogs,
# migrations and web client in share/herald (where it finds them from its own place, so `herald serve`
# works from any folder); the manual; bash, zsh and fish completions; a hardened systemd unit.
PREFIX ?= /usr/local
DESTDIR ?=
RELEASE_BIN := .build/release/herald
RESOURCE_FOLDERS := Templates Public Locales migrations Clients/web
MANUAL_TOOL := .build/tools/debug/generate-manual

# ArgumentParser's manual writer, built from the checkout the build already resolved.
$(MANUAL_TOOL): build
	$(SWIFT) build --package-path .build/checkouts/swift-argument-parser --scratch-path .build/tools --product generate-manual

install: build $(MANUAL_TOOL)
	@root="$(DESTDIR)$(PREFIX)"; set -e; \
	install -d "$$root/bin" "$$root/share/herald" "$$root/share/man/man1" "$$root/share/bash-completion/completions" \
		"$$root/share/zsh/site-functions" "$$root/share/fish/vendor_completions.d" "$$root/lib/systemd/system"; \
	install -m 0755 --strip $(RELEASE_BIN) "$$root/bin/herald"; \
	for folder in $(RESOURCE_FOLDERS); do \
		install -d "$$root/share/herald/$$folder"; cp -R "$$folder/." "$$root/share/herald/$$folder/"; \
	done; \
	chmod -R u=rwX,go=rX "$$root/share/herald"; \
	$(MANUAL_TOOL) $(RELEASE_BIN) --date "$$(git log -1 --format=%cs 2>/dev/null || date +%F)" --output-directory "$$root/share/man/man1"; \
	gzip -9nf "$$root/share/man/man1/herald.1"; \
	$(RELEASE_BIN) --generate-completion-script bash > "$$root/share/bash-completion/completions/herald"; \
	$(RELEASE_BIN) --generate-completion-script zsh > "$$root/share/zsh/site-functions/_herald"; \
	$(RELEASE_BIN) --generate-completion-script fish > "$$root/share/fish/vendor_completions.d/herald.fish"; \
	sed 's|@BINDIR@|$(PREFIX)/bin|' packaging/herald.service > "$$root/lib/systemd/system/herald.service"; \
	chmod 0644 "$$root/lib/systemd/system/herald.service"; \
	echo "Installed herald $$(cat VERSION) under $$root"

# A Debian package of the same tree under /usr, with /etc/herald/herald.conf (all commented out) as its
# conffile; its dependencies are the packages that hold the libraries the binary names (ELF NEEDED).
DEB_ROOT := .build/deb/root
deb:
	rm -rf $(DEB_ROOT)
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(DEB_ROOT) PREFIX=/usr
	@set -e; version=$$(cat VERSION); arch=$$(dpkg --print-architecture); \
	install -d $(DEB_ROOT)/DEBIAN $(DEB_ROOT)/etc/herald; \
	install -m 0644 packaging/herald.conf $(DEB_ROOT)/etc/herald/herald.conf; \
	echo /etc/herald/herald.conf > $(DEB_ROOT)/DEBIAN/conffiles; \
	depends=$$(for soname in $$(readelf -d $(RELEASE_BIN) | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do \
		library=$$(ldd $(RELEASE_BIN) | awk -v name="$$soname" '$$1 == name {print $$3}'); [ -n "$$library" ] || continue; \
		dpkg -S "$$library" 2>/dev/null || dpkg -S "$$(realpath "$$library")" 2>/dev/null || dpkg -S "/usr$$library"; \
	done | cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g'); \
	{ echo "Package: herald"; echo "Version: $$version"; echo "Architecture: $$arch"; \
	  echo "Maintainer: Herald developers <herald@localhost>"; echo "Depends: $$depends"; \
	  echo "Section: net"; echo "Priority: optional"; \
	  echo "Installed-Size: $$(du -sk --exclude=DEBIAN $(DEB_ROOT) | cut -f1)"; \
	  echo "Description: self-hosted console for in-app messaging and push campaigns"; \
	  echo " Herald composes in-app messages and push notifications, serves the feed delivery clients"; \
	  echo " poll, sends pushes through APNs and FCM, ingests events and reports on them."; \
	} > $(DEB_ROOT)/DEBIAN/control; \
	dpkg-deb --root-owner-group --build $(DEB_ROOT) .build/herald_$${version}_$${arch}.deb; \
	echo "Built .build/herald_$${version}_$${arch}.deb"

# The builds one after another: on 2 cores, the debug and fuzz builds side by side took 30.5 minutes, more
# than the about 26 they take one after the other (12, and about 14).
test: test-deps
	@Tools/quietly.sh $(BUILD_LOGS)/tests.log "Building Herald and its tests (debug)" \
		"$(if $(wildcard .build/debug/herald),a minute or two after a change,about 10 to 15 minutes on 2 cores the first time)" \
		$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory swift-test python-test fuzz-check

# The storage contract runs on SQLite and on a PostgreSQL server of its own, started and stopped around the tests.
swift-test:
	Tools/with-postgres.sh $(SWIFT) test --skip-build

# Mixed load on the release build for SOAK_MINUTES: zero errors, memory growth < 10 % (not part of `make test`).
SOAK_MINUTES ?= 10
soak: build
	$(PYTHON) bench/soak.py --minutes $(SOAK_MINUTES)

# Browser tests (Selenium, headless Chromium), the API contract and schemathesis fuzz against openapi.yaml,
# and the bad-input reliability suite, each against the real server binary.
# Then the API contract again with Herald on PostgreSQL, and two instances sharing one PostgreSQL database.
# First, in well under a second: the committed web client, Clients/web/herald.js, is what its modules in Clients/web/src/ give.
python-test:
	$(PYTHON) Tools/web-client-bundle.py --check
	HERALD_BIN=$(CURDIR)/.build/debug/herald $(PYTHON) -m pytest -q --durations=20
	Tools/with-postgres.sh env HERALD_TEST_ENGINE=postgres HERALD_BIN=$(CURDIR)/.build/debug/herald \
		$(PYTHON) -m pytest -q Tests/contract Tests/operations/test_instances.py

# libFuzzer targets (Fuzz/): one binary, HERALD_FUZZ_TARGET chooses the parser; each target's corpus is
# Tests/fuzz/corpus/<target>/. The fuzz package builds apart, into .build-fuzz, so the main build never
# sees -sanitize=fuzzer.
FUZZ_TARGETS := event-batch form-urlencoded multipart cookies percent-decoding request-target json-body campaign-json utc-time retry-after web-origin installation-body accept-encoding postgres-array apns-key entity-tag
FUZZ_BIN := .build-fuzz/debug/herald-fuzz
FUZZ_CORPUS := Tests/fuzz/corpus
# Per target: `make fuzz` runs FUZZ_SECONDS; `make test` replays the corpus, then runs FUZZ_CHECK_SECONDS.
FUZZ_SECONDS ?= 300
FUZZ_CHECK_SECONDS ?= 6
# `make fuzz` also runs the generated-input properties of `swift test` this many times longer.
PROPERTY_SCALE ?= 10
# Swift's own crash reporter would stall libFuzzer's; libFuzzer prints the stack and keeps the input.
FUZZ_RUN = SWIFT_BACKTRACE=enable=no HERALD_FUZZ_TARGET=$$target $(FUZZ_BIN) -timeout=10 -rss_limit_mb=2048

fuzz-build:
	@Tools/quietly.sh $(BUILD_LOGS)/fuzz.log "Building the fuzz targets (debug, with libFuzzer and AddressSanitizer)" \
		"$(if $(wildcard $(FUZZ_BIN)),a minute or two after a change,about 10 to 15 minutes on 2 cores the first time)" \
		$(SWIFT) build --package-path Fuzz --scratch-path .build-fuzz --product herald-fuzz --disable-index-store -Xswiftc -sanitize=fuzzer,address

# Every corpus file once, then each target for FUZZ_CHECK_SECONDS on a scratch copy (the committed
# corpus is grown only by `make fuzz`), two targets at a time; a crash fails the build and leaves its
# input in test-artifacts/fuzz/<target>/.
fuzz-check: fuzz-build
	@$(MAKE) --no-print-directory -j2 -O $(addprefix fuzz-check-,$(FUZZ_TARGETS))

fuzz-check-%:
	@work=test-artifacts/fuzz/$*; target=$*; rm -rf $$work; mkdir -p $$work; cp -R $(FUZZ_CORPUS)/$* $$work/corpus; \
	$(FUZZ_RUN) -artifact_prefix=$$work/ -max_total_time=$(FUZZ_CHECK_SECONDS) -print_final_stats=1 $$work/corpus > $$work/log 2>&1 \
		|| { tail -40 $$work/log; echo "fuzz $*: a crash; its input is in $$work/"; exit 1; }; \
	echo "fuzz $*: $$(ls $(FUZZ_CORPUS)/$* | wc -l) corpus files replayed, then $$(grep -o '[0-9]*' <<< "$$(grep number_of_executed_units $$work/log)") executions in $(FUZZ_CHECK_SECONDS) s"

# Each target for FUZZ_SECONDS, two at a time, growing its corpus, which is then minimized (libFuzzer's
# merge keeps the smallest inputs that reach all the coverage) back into Tests/fuzz/corpus/<target>/;
# then the generated-input properties of `swift test`, PROPERTY_SCALE times longer. Commit the corpus
# changes it leaves; a crash stops it with the input in test-artifacts/fuzz/<target>/.
fuzz: system-deps fuzz-build
	@$(MAKE) --no-print-directory -j2 -O $(addprefix fuzz-run-,$(FUZZ_TARGETS))
	$(SWIFT) build --build-tests
	HERALD_PROPERTY_SCALE=$(PROPERTY_SCALE) $(SWIFT) test --skip-build --filter 'Generated.*Propert'

fuzz-run-%:
	@work=test-artifacts/fuzz/$*; target=$*; rm -rf $$work; mkdir -p $$work/minimized; cp -R $(FUZZ_CORPUS)/$* $$work/grown; \
	$(FUZZ_RUN) -artifact_prefix=$$work/ -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$work/grown > $$work/log 2>&1 \
		|| { tail -40 $$work/log; echo "fuzz $*: a crash; fix it and add its input (in $$work/) to $(FUZZ_CORPUS)/$*/"; exit 1; }; \
	$(FUZZ_RUN) -merge=1 $$work/minimized $$work/grown > $$work/merge.log 2>&1; \
	rm -rf $(FUZZ_CORPUS)/$*; cp -R $$work/minimized $(FUZZ_CORPUS)/$*; \
	echo "fuzz $*: $$(grep -o '[0-9]*' <<< "$$(grep number_of_executed_units $$work/log)") executions in $(FUZZ_SECONDS) s; corpus now $$(ls $(FUZZ_CORPUS)/$* | wc -l) files"

# Installs only the Debian packages that are missing, so a ready machine needs no network or root.
# A policy-rc.d that refuses keeps a server package (nginx) from starting its system service on port 80
# as it installs: the tests start their own, on loopback, and stop it.
define install_missing
	@missing=""; for package in $(1); do dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; done; \
	if [ -n "$$missing" ]; then \
		policy=/usr/sbin/policy-rc.d; made=""; \
		if [ ! -e $$policy ]; then printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee $$policy >/dev/null && $(SUDO) chmod 755 $$policy && made=yes; fi; \
		Tools/quietly.sh $(BUILD_LOGS)/apt.log "Installing Debian packages:$$missing" "a minute or a few, depending on the network" \
			$(SUDO) env DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing"; \
		status=$$?; if [ -n "$$made" ]; then $(SUDO) rm -f $$policy; fi; exit $$status; \
	fi
endef

system-deps:
	$(call install_missing,$(SYSTEM_PACKAGES))

test-deps: system-deps
	$(call install_missing,$(BROWSER_PACKAGES) $(SERVICE_PACKAGES))
	@for package in $(PYTHON_PACKAGES); do \
		$(PYTHON) -m pip show -q $$package >/dev/null 2>&1 || $(PYTHON) -m pip install -q $$package; \
	done

clean:
	rm -rf .build .build-fuzz test-artifacts
