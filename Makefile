# lbdns — see README.md. Every target installs what it needs first.
NODE_MODULES := node_modules/.package-lock.json
BUNDLE := dist/lbdns.mjs
SOURCES := $(shell find cmd lib templates -type f) $(wildcard scripts/*.mjs) package.json

.PHONY: all install build bundle example test test-deps peers lint bench clean manifests cluster-manifests

all: build

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES)

$(BUNDLE): $(NODE_MODULES) $(SOURCES)
	node scripts/bundle.mjs $(dir $@)

bundle: $(BUNDLE)

build: lint bundle

example: $(BUNDLE)
	node $(BUNDLE) render-corefile --example

# Debian tools the tests use (scripts/test-deps.sh lists them); installed when missing and apt-get is usable.
test-deps:
	@bash scripts/test-deps.sh

# The real CoreDNS and kube-apiserver (with etcd) the tests drive, built from their Go
# modules at pinned versions into .peers/ (test/peers/build.sh); kept until a pin changes.
peers:
	@bash test/peers/build.sh

# Type-checked first: the tests run through tsx, which strips types without checking them.
test: lint $(BUNDLE) test-deps peers
	node test/run.mjs

# Types, then the import graph: no cycle, stages import only earlier stages (lib/README.md).
lint: $(NODE_MODULES)
	npx tsc -p tsconfig.json
	node scripts/check-imports.mjs

# The manifests derived from others (scripts/manifests.ts says which); a test fails when they drift.
manifests: $(NODE_MODULES)
	node --import tsx scripts/manifests.ts

# This cluster's MachineConfigs, with the internal API LB as --api-int-seed for a node's first
# boot (scripts/cluster-manifests.ts): make cluster-manifests KUBECONFIG=~/.kube/config OUT=DIR
cluster-manifests: $(NODE_MODULES)
	node --import tsx scripts/cluster-manifests.ts --kubeconfig "$(KUBECONFIG)" --out "$(OUT)"

bench: $(BUNDLE) test-deps peers
	node --import tsx bench/run.ts

clean:
	rm -rf dist
