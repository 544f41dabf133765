# Quick start:   make demo   (push the bundled example dump)
#                make test   (the whole test suite)
SWIFT ?= swift
PREFIX ?= /usr/local
RELEASE_BIN = .build/release/cbl-attachments

.PHONY: demo test build release install deps bench fuzz format clean

deps:
	@scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## Push the bundled cbexport-style dump: the pushed documents on standard output, a --stats
## summary on standard error.
demo: release
	$(RELEASE_BIN) --push --stats examples/data/dump.ndjson

## Every suite on a debug build; the golden, fuzz-regression, differential, invariant and CLI
## suites again on the release build that ships (no testable imports: the same compilation as
## `make release`); then every example script with that binary.
test: deps
	$(SWIFT) build
	$(SWIFT) test --disable-xctest
	$(SWIFT) test -c release --disable-testable-imports --disable-xctest \
	  --filter 'ConformanceTests|CLITests'
	examples/run-all.sh $(RELEASE_BIN)

install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(RELEASE_BIN) $(DESTDIR)$(PREFIX)/bin/cbl-attachments
	install -m 644 man/cbl-attachments.1 $(DESTDIR)$(PREFIX)/share/man/man1/

bench:
	CBL_WITH_TOOLS=1 scripts/ensure-deps.sh
	bench/run.sh

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build
