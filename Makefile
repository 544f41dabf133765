# Quick start:   make demo   (push the bundled example dump)
#                make test   (the whole test suite)
SWIFT ?= swift
PREFIX ?= /usr/local
RELEASE_BIN = .build/release/cbl-attachments
# The binary that is installed and shipped: the Swift runtime linked in (--static-swift-stdlib),
# built in its own scratch directory so that it never replaces the test build.
STATIC_BIN = .build/static/release/cbl-attachments
VERSION = $(shell sed -n 's/.*static let current = "\(.*\)"/\1/p' Sources/LegacyAttachments/API/Version.swift)
DIST = cbl-attachments-$(VERSION)-linux-$(shell uname -m)

.PHONY: demo test build release static install dist check-binary check-client deps bench fuzz format man clean \
  interop litecore docs

deps:
	@scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## Push the bundled cbexport-style dump into .build/demo/pushed.ndjson, with a --stats summary,
## and show what push did to one document.
demo: release
	@scripts/demo.sh $(RELEASE_BIN)

## Every suite on a debug build; the golden, fuzz-regression, differential, invariant and CLI
## suites again on the release build that ships (no testable imports: the same compilation as
## `make release`); then every example script with that binary.
# Only failures and each run's summary are printed; `make test TEST_OUTPUT=` prints every test.
TEST_OUTPUT ?= --quiet
test: deps
	$(SWIFT) build
	$(SWIFT) test --disable-xctest $(TEST_OUTPUT)
	$(SWIFT) test -c release --disable-testable-imports --disable-xctest $(TEST_OUTPUT) \
	  --filter 'ConformanceTests|CLITests'
	examples/run-all.sh $(RELEASE_BIN)

## The interop suite against a real CouchDB 3.5 (../shared/peers/couchdb; Interop/README.md):
## loads, reads back, pulls and compares, with default settings and compression_level = 0. Without
## the peer it says so and succeeds.
interop: release
	Interop/run-couchdb.sh $(RELEASE_BIN)

## The differential suite against Couchbase Lite's own code (../shared/peers/litecore;
## Interop/README.md): push, pull and blob file names compared with litecore-harness, every
## difference in the table of Interop/litecore.py. Without the peer it says so and succeeds.
litecore: release
	Interop/run-litecore.sh $(RELEASE_BIN)

## The library's reference (DocC) from its `///` comments, as a static website:
## .build/docs/LegacyAttachments (open index.html through a web server, or host the folder).
## The toolchain has `docc` but not the package plugin (swift-docc-plugin, which a package
## would have to fetch): the symbol graph is emitted by the compiler and converted here.
docs: deps
	rm -rf .build/symbol-graphs .build/docs && mkdir -p .build/symbol-graphs .build/docs .build/docc-catalog
	$(SWIFT) build --target LegacyAttachments -Xswiftc -emit-symbol-graph \
	  -Xswiftc -emit-symbol-graph-dir -Xswiftc .build/symbol-graphs
	docc convert .build/docc-catalog --fallback-display-name LegacyAttachments \
	  --fallback-bundle-identifier cbl-attachments.LegacyAttachments \
	  --fallback-bundle-version $(VERSION) --additional-symbol-graph-dir .build/symbol-graphs \
	  --transform-for-static-hosting --warnings-as-errors \
	  --output-path .build/docs/LegacyAttachments

static: deps
	$(SWIFT) build -c release --static-swift-stdlib --scratch-path .build/static \
	  --product cbl-attachments

## The binary runs without the Swift toolchain: it needs libc, libyajl2, libssl3 (libcrypto),
## libstdc++6 and libgcc-s1 (README, "Install").
install: static
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(STATIC_BIN) $(DESTDIR)$(PREFIX)/bin/cbl-attachments
	install -m 644 man/cbl-attachments.1 $(DESTDIR)$(PREFIX)/share/man/man1/

## A tarball to unpack under /usr/local (or anywhere): bin/, share/man/man1/, the docs.
dist: static
	rm -rf .build/dist/$(DIST)
	$(MAKE) install DESTDIR=$(CURDIR)/.build/dist/$(DIST) PREFIX= STATIC_BIN=$(STATIC_BIN)
	install -d .build/dist/$(DIST)/share/doc/cbl-attachments
	install -m 644 README.md CHANGELOG.md .build/dist/$(DIST)/share/doc/cbl-attachments/
	tar -C .build/dist -czf $(DIST).tar.gz $(DIST)
	@echo $(DIST).tar.gz

## The installed binary depends on no toolchain library, and runs with an empty environment.
check-binary: static
	scripts/check-binary.sh $(STATIC_BIN)

## A separate package depending on this one by version builds and runs (a tagged bare clone).
check-client:
	scripts/check-client-package.sh $(VERSION)

bench:
	CBL_WITH_TOOLS=1 scripts/ensure-deps.sh
	bench/run.sh

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

# The man page's OPTIONS items, written from the option table (Sources/CBLAttachmentsCLI/Options).
man:
	UPDATE_MANUAL=1 $(SWIFT) test --filter ManualPageTests

clean:
	rm -rf .build
