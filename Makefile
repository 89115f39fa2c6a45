# The operator's image with its full registry path, without tag: the one
# name the chart (values.yaml image.repository), kustomize (config/manager,
# so install.yaml) and the OLM bundle's CSV use, tagged VERSION. make release
# and make bump-dev write it into them (docs/releasing.md).
IMAGE_REPO ?= ghcr.io/sunstrider/sunstrider-operator
# Image URL to use all building/pushing image targets
IMG ?= $(IMAGE_REPO):$(VERSION)

# VERSION is the release's semantic version, x.y.z without a "v": the VERSION
# file, which `make release VERSION=x.y.z` writes. REVISION is the commit the
# build is made from. LDFLAGS link both (and `git describe`) into
# internal/version: the binary's version is VERSION alone for a clean checkout
# of the tag vVERSION, else VERSION+<short commit>[.dirty] (README, "Versions
# and releases"). Other targets reuse them: go build -ldflags "$(LDFLAGS)".
VERSION ?= $(shell cat VERSION 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
GIT_DESCRIBE ?= $(shell git describe --tags --always --dirty 2>/dev/null)
VERSION_PKG := sunstrider.cn/operator/internal/version
LDFLAGS ?= -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Revision=$(REVISION) \
	-X $(VERSION_PKG).gitDescribe=$(GIT_DESCRIBE)
# YEAR defines the year value used for substituting the YEAR placeholder in the boilerplate header.
YEAR ?= 2026

# The Go toolchain the operator and its tools are built, tested and scanned
# with: the patched release go.mod names on its toolchain line. The go command
# downloads it once through the module proxy (GOTOOLCHAIN=local on a machine
# would otherwise pin whatever Go is installed, with its known CVEs).
GO_TOOLCHAIN ?= $(shell awk '$$1 == "toolchain" {print $$2}' go.mod)
export GOTOOLCHAIN := $(GO_TOOLCHAIN)
# -trimpath for every go command run here (builds, tests, vet, golangci-lint's
# package loading): what is compiled then depends on the sources alone, not
# on where the tree is checked out, so a fresh clone (CI's) finds its
# packages in the Go build cache instead of compiling all of them again
# (golangci-lint spent 40 s of a fresh clone's lint on that, 2 s in the
# clone it had run in before). Stack traces name module paths; the release
# and image builds used it already.
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
# The operator's module, sunstrider.cn/operator (this folder: cmd/, api/,
# internal/ and the hack/ tools that need nothing more), holds only what
# the manager and its tests import, so its go.mod and go.sum are what the
# manager is built from. What needs more is a module of its own beside it,
# each using the operator's packages from this tree (a replace, no go.work:
# a workspace would merge the graphs again): test/ (the suites, benchmarks,
# test workload and test Gateway), hack/image (make image: go-containerregistry,
# CycloneDX) and hack/bundle (make bundle: operator-framework/api). fmt,
# vet, test, lint and vulncheck run in every one of them (each-module);
# their commands run from here build with `go -C <module>`.
TOOL_MODULES := test hack/image hack/bundle
# each-module runs the shell command $(1) in this module, then in each of
# TOOL_MODULES, and stops at the first that fails.
each-module = for m in . $(TOOL_MODULES); do (cd "$$m" && $(1)) || exit 1; done
# The build tags of the suites (test/<tag>), for lint and vulncheck.
SUITE_TAGS := e2e,chaos,container,release,node
# The Kubernetes and kwok binaries the tests run are upstream code built from
# source, not shipped: they keep the installed Go (or what their go.mod needs).
TEST_INFRA_GOTOOLCHAIN ?= auto

# Get the currently used golang install path (in GOPATH/bin, unless GOBIN is set)
ifeq (,$(shell go env GOBIN))
GOBIN=$(shell go env GOPATH)/bin
else
GOBIN=$(shell go env GOBIN)
endif

# CONTAINER_TOOL defines the container tool to be used for building images:
# docker (the default) or podman (`make test-container` builds the
# Dockerfile with podman).
CONTAINER_TOOL ?= docker

# Setting SHELL to bash allows bash commands to be executed by recipes.
# Options are set to exit when a recipe line exits non-zero or a piped command fails.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

# The help target prints out all targets with their descriptions organized
# beneath their categories. The categories are represented by '##@' and the
# target descriptions by '##'. The awk command is responsible for reading the
# entire set of makefiles included in this invocation, looking for lines of the
# file as xyz: ## something, and then pretty-format the target and help. Then,
# if there's a line with ##@ something, that gets pretty-printed as a category.
# More info on the usage of ANSI control characters for terminal formatting:
# https://en.wikipedia.org/wiki/ANSI_escape_code#SGR_parameters
# More info on the awk command:
# http://linuxcommand.org/lc3_adv_awk.php

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate WebhookConfiguration, ClusterRole and CustomResourceDefinition objects.
	"$(CONTROLLER_GEN)" rbac:roleName=manager-role crd:generateEmbeddedObjectMeta=true webhook paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
# Only the API packages have DeepCopy methods: controller-gen then loads and
# type-checks them alone, not the whole module (make test runs this first).
generate: controller-gen ## Generate code containing DeepCopy, DeepCopyInto, and DeepCopyObject method implementations.
	"$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt",year=$(YEAR) paths="./api/..."

# `make docs` writes the references generated from the code: the API
# reference (crd-ref-docs over api/, hack/crd-ref-docs) and the flags
# reference (hack/flagsdoc, from the help of a manager built for it, run
# with an empty environment). make verify regenerates both into a temporary
# folder and fails when the committed ones differ.
DOCS_DIR ?= docs/reference
DOCS_GENERATED := api.md flags.md
# CONDITIONS_DOC is where make docs writes docs/conditions.md with its
# tables rendered (hack/conditionsdoc); make verify renders it elsewhere.
CONDITIONS_DOC ?= docs/conditions.md
.PHONY: docs
docs: crd-ref-docs ## Generate docs/reference/api.md (from api/), docs/reference/flags.md (from manager --help) and the tables of docs/conditions.md (from the policy and each kind's reasons).
	mkdir -p "$(DOCS_DIR)" "$(LOCALBIN)/docs"
	go run ./hack/conditionsdoc -in docs/conditions.md -out "$(CONDITIONS_DOC)"
	"$(CRD_REF_DOCS)" --log-level=ERROR --source-path=./api --config=hack/crd-ref-docs/config.yaml --renderer=markdown \
		--templates-dir=hack/crd-ref-docs/templates --output-mode=single --output-path="$(DOCS_DIR)/api.md"
	go build -o "$(LOCALBIN)/docs/manager" ./cmd
	go run ./hack/flagsdoc -manager "$(LOCALBIN)/docs/manager" -out "$(DOCS_DIR)/flags.md"

.PHONY: fmt
fmt: ## Run go fmt against code (every module).
	$(call each-module,go fmt ./...)

.PHONY: vet
vet: ## Run go vet against code (every module).
	$(call each-module,go vet ./...)

.PHONY: verify
verify: manifests generate kustomize crd-ref-docs ## Fail when committed generated files (CRDs, RBAC, deepcopy, chart copies, docs/reference) differ from what the code generates.
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		$(MAKE) --no-print-directory docs DOCS_DIR="$$tmp" CONDITIONS_DOC="$$tmp/conditions.md" >/dev/null && \
		for f in $(DOCS_GENERATED); do diff -u "$(DOCS_DIR)/$$f" "$$tmp/$$f" || { \
			echo "$(DOCS_DIR)/$$f is stale: run make docs and commit the result."; exit 1; }; done && \
		diff -u docs/conditions.md "$$tmp/conditions.md" || { \
			echo "docs/conditions.md is stale: run make docs and commit the result."; exit 1; }
	KUSTOMIZE="$(KUSTOMIZE)" ./hack/sync-chart-crds.sh --check
	$(BUNDLE_ENV) ./hack/bundle/bundle.sh --check
	@git diff --exit-code --stat -- config/crd/bases config/rbac/role.yaml ':(glob)api/**/zz_generated.*.go' || { \
		echo "Generated files are stale: run 'make manifests generate' and commit the result."; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard -- config/crd/bases ':(glob)api/**/zz_generated.*.go')" || { \
		git ls-files --others --exclude-standard -- config/crd/bases api; echo "Generated files are not committed."; exit 1; }

# go test runs under hack/fuzzapiserver: the fuzz oracles of the webhook
# packages (testutil.FuzzAPIServer) share the one control plane it starts
# while go test builds, instead of each package starting its own. go run
# reuses its executable from the build cache; go build would link it again.
# TEST_PACKAGES is how many packages' tests run (and link) at once: three
# per core, because an envtest package spends most of its time waiting on
# its control plane (other processes) and on its own conditions: with one
# package per core, or one more than the cores, the CPUs sat idle for a
# good part of the run; more than three per core gained nothing.
TEST_PACKAGES ?= $(shell echo $$(( $$(nproc) * 3 )))
# The tests of TOOL_MODULES (test/bench's, hack/image's, hack/bundle's
# bundle validation...) run beside the operator's, one module after
# another, in the CPU the envtest packages leave while they wait; their
# coverage is appended to cover.out once all have ended, and any failure
# fails the target.
# TEST_LDFLAGS links the test binaries without DWARF and the symbol table
# (-s -w), as the shipped binary is: every package's test binary is linked
# again at each run, DWARF is most of a link's work, and only a debugger
# reads it (stack traces and coverage use neither).
TEST_LDFLAGS ?= -s -w
# TEST_FIRST are the packages whose tests take longest (envtest suites
# that wait on conditions), given to go test first so that it starts them
# first: the CPU is the limit on two cores, and a long package started last
# would run alone at the end.
TEST_FIRST := ./internal/controller/apps ./internal/controller/webapp ./internal/certs \
	./internal/controller/example ./internal/webhook/webhooktest ./internal/controller/poc \
	./internal/apply ./internal/controller/config
# TEST_PACKAGES_LIST is every package of the operator's module, TEST_FIRST first.
TEST_PACKAGES_LIST = $$(go list $(TEST_FIRST) ./... | awk '!seen[$$0]++')
TEST_ENV = KUBEBUILDER_ASSETS="$(K8S_BIN)" PROMTOOL="$(PROMTOOL)" HELM="$(HELM)" KUSTOMIZE="$(KUSTOMIZE)"
.PHONY: test
test: manifests generate fmt vet k8s-test-bins promtool helm kustomize ## Run unit and envtest tests against a real kube-apiserver and etcd built from source (every module).
	$(TEST_ENV) go run ./hack/fuzzapiserver go test $(TEST_PACKAGES_LIST) -p $(TEST_PACKAGES) -ldflags "$(TEST_LDFLAGS)" -coverprofile cover.out $(TEST_ARGS) & root=$$!; \
	rc=0; for m in $(TOOL_MODULES); do \
		$(TEST_ENV) go -C "$$m" test ./... -ldflags "$(TEST_LDFLAGS)" -coverprofile "$(abspath $(LOCALBIN))/cover-$$(echo $$m | tr / -).out" $(TEST_ARGS) || rc=1; \
	done; \
	wait $$root || rc=1; \
	for m in $(TOOL_MODULES); do tail -n +2 "$(LOCALBIN)/cover-$$(echo $$m | tr / -).out" >> cover.out || rc=1; done; \
	exit $$rc

# dev-cluster runs hack/dev-cluster.sh for the cluster in folder $(1) named
# $(2); the suites below start a fresh one and remove it even when they fail.
dev-cluster = K8S_BIN="$(K8S_BIN)" KWOK_BIN="$(KWOK_BIN)" NODE_BIN="$(NODE_BIN)" NODE_IMAGES="$(NODE_IMAGES)" \
	METRICS_SERVER_BIN="$(METRICS_SERVER_BIN)" METRICS_SERVER_MANIFESTS="$(METRICS_SERVER_MANIFESTS)" \
	DEV_DIR="$(1)" DEV_CLUSTER="$(2)" $(3) ./hack/dev-cluster.sh

E2E_DIR ?= $(LOCALBIN)/e2e
E2E_CLUSTER ?= sunstrider-e2e

.PHONY: test-e2e
test-e2e: cluster-suite-bins ## End-to-end suite on a fresh local cluster (kwokctl, no Docker): a benchmark smoke run, then deploy and helm install/upgrade/test, the operator's RBAC and the trust boundary, the seeds' quick start and objects, malformed manifests, metrics, upgrade from the previous release.
	$(call dev-cluster,$(E2E_DIR),$(E2E_CLUSTER)) down >/dev/null 2>&1 || true
	$(call dev-cluster,$(E2E_DIR),$(E2E_CLUSTER),WEBHOOK_CLIENT_CERT=1 $(BATCH_NICE)) up
	@echo "Benchmark smoke run on the fresh cluster (docs/performance.md):"
	rc=0; $(BATCH_NICE) $(BUILD_BENCH) && $(BATCH_NICE) "$(BENCH_BIN)" -n 20 -idle 5s -references=false -quiet-wait 2s -apiserver-profile 1s -kubeconfig "$(E2E_DIR)/kubeconfig" -manager "$(LOCALBIN)/manager" \
		-kubectl "$(KUBECTL)" -kustomize "$(KUSTOMIZE)" -work-dir "$(E2E_DIR)/bench" || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
		KUBECONFIG="$(E2E_DIR)/kubeconfig" KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" MANAGER="$(LOCALBIN)/manager" \
		WEBHOOK_CLIENT_CA="$(E2E_DIR)/webhook-client/ca.crt" $(BATCH_NICE) go -C test test -tags e2e -timeout 15m -count 1 -v ./e2e/ $(TEST_ARGS) || rc=$$?; \
	fi; \
	$(call dev-cluster,$(E2E_DIR),$(E2E_CLUSTER)) down >/dev/null 2>&1; exit $$rc

# Every native fuzz target, as <package>:<target>:<executions> (`go test`
# takes one -fuzz per package run). Plain `make test` runs their seed corpora.
# The budgets are counts, about 5 s each on a 2-core machine (FUZZ_SCALE for
# longer runs; CI's time is what bounds them): a duration
# (-fuzztime=10s) ends in a context deadline that Go 1.26's fuzz coordinator
# can report as a failure with no failing input (go.dev/issue/75804, fixed in
# Go 1.27; seen once in CI here).
# The webhook targets of apps, poc and webapp ask an envtest API server
# about every input (their oracle): 30 to 90 executions a second in CI
# (compiling included), so their budgets take about 10 to 16 s each.
# (Twice these took 16 to 32 s each, 99 s in all, on CI's critical path,
# 2026-12-05; FUZZ_SCALE=2 runs them.) They share one control plane,
# started beside the runs by hack/fuzzapiserver (hack/fuzz.sh runs them).
FUZZ_TARGETS ?= ./api/example/v1:FuzzDrinkConversion:40000 ./internal/webhook/apps/v1:FuzzApplication:500 \
	./internal/webhook/example/v1/fuzz:FuzzDrink:2000 ./internal/webhook/poc/v1:FuzzMyCustomResource:750 \
	./internal/webhook/webapp/v1:FuzzGuestbook:750
# FUZZ_SCALE multiplies every budget (FUZZ_SCALE=10 for a longer run).
# A target that did not fuzz (renamed or removed: go test then passes with
# "no fuzz tests to fuzz", or prints no "fuzz: elapsed" line) fails the run.
FUZZ_SCALE ?= 1

# Beside a cluster suite (make -j test-e2e fuzz vulncheck ...), fuzz and
# vulncheck read the sources only once cluster-suite-bins has regenerated
# them: controller-gen rewrites its files in place, even when unchanged, and
# a package loaded at that moment would see a truncated file (and fuzz takes
# the Kubernetes binaries from that step rather than build them a second
# time beside it). Alone they wait for nothing.
AFTER_SUITE_BINS = $(if $(filter test-e2e test-chaos test-container,$(MAKECMDGOALS)),cluster-suite-bins)
# CI_SCHEDULE=1 is CI's order (.ci/run), for one make -j3 of every cluster
# suite, fuzz and vulncheck: the chaos suite from the start to its end, the
# e2e suite and the release check beside it, then the container suite once
# test-e2e is done, vulncheck once test-chaos is done, and fuzz once
# test-container is done. So neither runs beside the chaos suite's API
# server restart, which comes first and must not wait for a CPU, and fuzz
# never beside the container suite (whose 5 s Lease read once timed out
# beside fuzz).
# Without it each target waits for nothing of the others.
CI_SCHEDULE ?=
# BATCH_NICE prefixes the commands of test-e2e, test-container, test-release,
# fuzz and vulncheck; CI runs them beside the chaos suite and sets
# BATCH_NICE="nice -n 15", so that the chaos suite's control plane, whose
# kube-apiserver must be back within the leader's renew deadline after it is
# killed, never waits behind a compiler or another suite's cluster starting;
# the others take the cores it leaves idle, which is most of them.
BATCH_NICE ?=

.PHONY: fuzz
fuzz: $(or $(AFTER_SUITE_BINS),k8s-test-bins) | $(if $(CI_SCHEDULE),test-container) ## Short fuzz run of every fuzz target (FUZZ_TARGETS: <package>:<target>:<executions>) beside one shared control plane; fails when a target did not fuzz.
	@KUBEBUILDER_ASSETS="$(K8S_BIN)" FUZZ_SCALE="$(FUZZ_SCALE)" $(BATCH_NICE) go run ./hack/fuzzapiserver ./hack/fuzz.sh $(FUZZ_TARGETS)

CHAOS_DIR ?= $(LOCALBIN)/chaos
CHAOS_CLUSTER ?= sunstrider-chaos

.PHONY: test-chaos
test-chaos: cluster-suite-bins ## Fault injection on a fresh local cluster: SIGKILL under load, leader failover, API server restart, drift, foreign objects (docs/reliability.md).
	$(call dev-cluster,$(CHAOS_DIR),$(CHAOS_CLUSTER)) down >/dev/null 2>&1 || true
	$(call dev-cluster,$(CHAOS_DIR),$(CHAOS_CLUSTER)) up
	rc=0; KUBECONFIG="$(CHAOS_DIR)/kubeconfig" KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" MANAGER="$(LOCALBIN)/manager" \
		go -C test test -tags chaos -timeout 20m -count 1 -v ./chaos/ $(TEST_ARGS) || rc=$$?; \
	$(call dev-cluster,$(CHAOS_DIR),$(CHAOS_CLUSTER)) down >/dev/null 2>&1; exit $$rc

# test-container runs the image `make image` builds as the chart's Pod would
# run it, with podman and runc (test/container: its doc comment says what is
# modelled and how the API server reaches the webhooks); the suite starts and
# removes its own cluster, network and containers. Its cluster, folder and
# ports are its own, so it can run beside test-e2e and test-chaos.
CONTAINER_DIR ?= $(LOCALBIN)/container
CONTAINER_CLUSTER ?= sunstrider-container

.PHONY: test-container
test-container: cluster-suite-bins | $(if $(CI_SCHEDULE),test-e2e) ## The shipped image run as the chart's Pod (init container, securityContext, volumes, in-cluster config) on a fresh local cluster: probes, Lease, a sample, conversion, admission, SIGTERM, and the chart's helm test hook (passes against the replicas, fails once they stop); `make docker-build` gives the same files. Needs podman and runc, as root (not rootless).
	archive="$(IMAGE_ARCHIVE)"; $(BATCH_NICE) $(MAKE) --no-print-directory image IMAGE_ARCHIVE="$$archive" && \
	KUBECTL="$(KUBECTL)" HELM="$(HELM)" IMAGE_ARCHIVE="$$archive" K8S_BIN="$(K8S_BIN)" KWOK_BIN="$(KWOK_BIN)" \
		CONTAINER_DIR="$(CONTAINER_DIR)" CONTAINER_CLUSTER="$(CONTAINER_CLUSTER)" \
		$(BATCH_NICE) go -C test test -tags container -timeout 15m -count 1 -v ./container/ $(TEST_ARGS)

# What test-e2e and test-chaos need, made once and one step after another
# even under `make -j` (controller-gen, go fmt and go build read and write
# the same files). The two suites run on clusters and ports of their own and
# spend most of their time waiting (leases to expire, rollouts, windows in
# which nothing may happen), so CI runs them side by side, with the release
# check filling the idle cores:
#   make -j3 --output-sync=target test-e2e test-chaos test-release
.PHONY: cluster-suite-bins
cluster-suite-bins:
	@$(MAKE) --no-print-directory -j1 k8s-cluster-bins manifests generate kustomize helm build

BENCH_N ?= 100,1000
BENCH_DIR ?= $(LOCALBIN)/bench
BENCH_CLUSTER ?= sunstrider-bench
# test/bench is built from the test module (TOOL_MODULES) and run from
# here: it reads config/ and runs hack/devconfig relative to this folder.
BENCH_BIN ?= $(LOCALBIN)/test-bench
BUILD_BENCH = go -C test build -o "$(abspath $(BENCH_BIN))" ./bench

.PHONY: bench
bench: k8s-cluster-bins kustomize build ## Benchmark on a fresh local cluster: the operator vs a plain client and the Application tutorial's design (BENCH_N, BENCH_ARGS; docs/performance.md).
	$(call dev-cluster,$(BENCH_DIR),$(BENCH_CLUSTER)) down >/dev/null 2>&1 || true
	mkdir -p "$(BENCH_DIR)/kwok" && cp test/bench/kwok.yaml "$(BENCH_DIR)/kwok/kwok.yaml"
	$(call dev-cluster,$(BENCH_DIR),$(BENCH_CLUSTER)) up
	rc=0; $(BUILD_BENCH) && "$(BENCH_BIN)" -n "$(BENCH_N)" -kubeconfig "$(BENCH_DIR)/kubeconfig" -manager "$(LOCALBIN)/manager" \
		-kubectl "$(KUBECTL)" -kustomize "$(KUSTOMIZE)" -work-dir "$(BENCH_DIR)/run" -out "$(BENCH_DIR)/table.md" $(BENCH_ARGS) || rc=$$?; \
	$(call dev-cluster,$(BENCH_DIR),$(BENCH_CLUSTER)) down >/dev/null 2>&1; exit $$rc

BENCH_RATES ?= 5,20,50
BENCH_BASE ?= 5000
# The rate search: lo,hi,steps creates per second (test/bench/bisect.go);
# hi must be above what the machine sustains (2 cores: the Application
# floor sustained 16/s once and backlogged at 16/s once), so that the edge
# is bracketed rather than taken as the top of the range; empty skips it. BENCH_IDLE is the idle window on the converged base.
BENCH_BISECT ?= 2,24,3
BENCH_IDLE ?= 5m

.PHONY: bench-steady
bench-steady: k8s-cluster-bins kustomize build ## On a fresh local cluster with BENCH_BASE converged Applications: the steady cost (BENCH_IDLE idle, a restart), open-loop creates and spec changes at each of BENCH_RATES per second against the floors, the rate the Application floor sustains (BENCH_BISECT) (docs/performance.md).
	$(call dev-cluster,$(BENCH_DIR),$(BENCH_CLUSTER)) down >/dev/null 2>&1 || true
	mkdir -p "$(BENCH_DIR)/kwok" && cp test/bench/kwok.yaml "$(BENCH_DIR)/kwok/kwok.yaml"
	$(call dev-cluster,$(BENCH_DIR),$(BENCH_CLUSTER)) up
	rc=0; $(BUILD_BENCH) && "$(BENCH_BIN)" -rates "$(BENCH_RATES)" -base "$(BENCH_BASE)" -steady-idle "$(BENCH_IDLE)" -bisect "$(BENCH_BISECT)" -kubeconfig "$(BENCH_DIR)/kubeconfig" -manager "$(LOCALBIN)/manager" \
		-kubectl "$(KUBECTL)" -kustomize "$(KUSTOMIZE)" -work-dir "$(BENCH_DIR)/run" -out "$(BENCH_DIR)/steady.md" $(BENCH_ARGS) || rc=$$?; \
	$(call dev-cluster,$(BENCH_DIR),$(BENCH_CLUSTER)) down >/dev/null 2>&1; exit $$rc

BENCH_AB_BEFORE ?= HEAD~1
BENCH_AB_AFTER ?= HEAD
BENCH_AB_PAIRS ?= 5
BENCH_AB_N ?= 1000

.PHONY: bench-ab
bench-ab: k8s-cluster-bins kustomize ## Compare the operator's own cost at two commits on one local cluster, in alternating pairs of bursts (BENCH_AB_BEFORE, BENCH_AB_AFTER, BENCH_AB_PAIRS, BENCH_AB_N; docs/performance.md).
	K8S_BIN="$(K8S_BIN)" KWOK_BIN="$(KWOK_BIN)" KUSTOMIZE="$(KUSTOMIZE)" ./hack/bench-ab.sh "$(BENCH_AB_BEFORE)" "$(BENCH_AB_AFTER)" "$(BENCH_AB_PAIRS)" "$(BENCH_AB_N)"

# bench-real measures what users feel on real containers (test/bench/real):
# on a fresh cluster of its own with the real node, the operator run as
# `make dev` runs it (hack/dev.sh), an Application against the same
# Deployment and Service applied directly. It holds the machine's one real
# node, so it runs neither beside test-node nor beside make dev.
BENCH_REAL_DIR ?= $(LOCALBIN)/bench-real
BENCH_REAL_CLUSTER ?= sunstrider-bench-real
BENCH_REAL_N ?= 20
BENCH_REAL_CHANGES ?= 5

.PHONY: bench-real
bench-real: cluster-suite-bins ## On a fresh local cluster with its real node (as root): kubectl apply → first HTTP 200 through the Service and spec changes, an Application against its Deployment and Service applied directly (BENCH_REAL_N pairs, BENCH_REAL_CHANGES, BENCH_REAL_ARGS; docs/performance.md).
	@[ "$$(id -u)" = 0 ] || { echo "make bench-real needs root: it runs the real node (docs/local-cluster.md)." >&2; exit 1; }
	@$(MAKE) --no-print-directory -j1 k8s-node-bins test-images
	$(call dev-cluster,$(BENCH_REAL_DIR),$(BENCH_REAL_CLUSTER)) down >/dev/null 2>&1 || true
	$(call dev-cluster,$(BENCH_REAL_DIR),$(BENCH_REAL_CLUSTER),REAL_NODE=1) up
	rc=0; KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" MANAGER="$(LOCALBIN)/manager" DEV_DIR="$(BENCH_REAL_DIR)" ./hack/dev.sh >/dev/null || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
		go -C test build -o "$(abspath $(LOCALBIN))/test-bench-real" ./bench/real && \
		"$(LOCALBIN)/test-bench-real" -kubeconfig "$(BENCH_REAL_DIR)/kubeconfig" -kubectl "$(KUBECTL)" -n "$(BENCH_REAL_N)" \
			-changes "$(BENCH_REAL_CHANGES)" -work-dir "$(BENCH_REAL_DIR)/run" -out "$(BENCH_REAL_DIR)/table.md" $(BENCH_REAL_ARGS) || rc=$$?; \
	fi; \
	$(call dev-cluster,$(BENCH_REAL_DIR),$(BENCH_REAL_CLUSTER)) down >/dev/null 2>&1; \
	K8S_BIN="$(K8S_BIN)" NODE_BIN="$(NODE_BIN)" ./hack/real-node.sh leftovers >/dev/null || { \
		echo "The real node left something behind: sudo hack/real-node.sh leftovers" >&2; rc=1; }; exit $$rc

SHARDS_N ?= 10000
SHARDS_DIR ?= $(LOCALBIN)/shards
SHARDS_CLUSTER ?= sunstrider-shards

.PHONY: bench-shards
bench-shards: k8s-cluster-bins ## Check and weigh server-side sharded list/watch (KEP-5866) on a fresh local cluster with ShardedListAndWatch on (SHARDS_N; docs/scaling.md).
	$(call dev-cluster,$(SHARDS_DIR),$(SHARDS_CLUSTER)) down >/dev/null 2>&1 || true
	mkdir -p "$(SHARDS_DIR)/kwok" && cp test/bench/kwok.yaml "$(SHARDS_DIR)/kwok/kwok.yaml"
	DEV_FEATURE_GATES=ShardedListAndWatch=true $(call dev-cluster,$(SHARDS_DIR),$(SHARDS_CLUSTER)) up
	rc=0; go -C test build -o "$(abspath $(LOCALBIN))/test-bench-shards" ./bench/shards && "$(LOCALBIN)/test-bench-shards" -kubeconfig "$(SHARDS_DIR)/kubeconfig" -kubectl "$(KUBECTL)" -n $(SHARDS_N) -namespaces 100 || rc=$$?; \
	$(call dev-cluster,$(SHARDS_DIR),$(SHARDS_CLUSTER)) down >/dev/null 2>&1; exit $$rc

.PHONY: lint
lint: golangci-lint verify helm-lint ## Run golangci-lint in every module (e2e, chaos, container, release and node suites included), lint and render the chart, and fail on stale generated files (verify).
	$(call each-module,"$(GOLANGCI_LINT)" run --build-tags $(SUITE_TAGS))

.PHONY: helm-lint
helm-lint: kustomize helm ## Lint the Helm chart and fail if its generated files are stale.
	KUSTOMIZE="$(KUSTOMIZE)" ./hack/sync-chart-crds.sh --check
	"$(HELM)" lint dist/chart --strict
	@# As a user renders it, with no --kube-version: helm's own default
	@# must satisfy the chart's kubeVersion.
	"$(HELM)" template dist/chart >/dev/null

.PHONY: vulncheck
vulncheck: govulncheck indexdb $(AFTER_SUITE_BINS) | $(if $(CI_SCHEDULE),test-chaos) ## Run govulncheck on every package of every module (suites included) against the Go vulnerability database (built from golang.org/x/vulndb via the module proxy).
	db=$$(./hack/vulndb.sh "$(INDEXDB)" "$(LOCALBIN)" "$(VULNDB_VERSION)"); \
	$(call each-module,$(BATCH_NICE) "$(GOVULNCHECK)" -db "file://$$db" -tags $(SUITE_TAGS) ./...)

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint linter and perform fixes (every module)
	$(call each-module,"$(GOLANGCI_LINT)" run --fix --build-tags $(SUITE_TAGS))

.PHONY: lint-config
lint-config: golangci-lint ## Verify golangci-lint linter configuration
	"$(GOLANGCI_LINT)" config verify

##@ Local cluster

DEV_DIR ?= $(LOCALBIN)/dev
DEV_KUBECONFIG ?= $(DEV_DIR)/kubeconfig
# The local cluster's real node needs root (containerd, kubelet, iptables):
# as root, make dev-cluster adds it (REAL_NODE=auto); otherwise the cluster
# has kwok's fake nodes only, and says so. REAL_NODE=0 leaves it out.
IS_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo 1)
REAL_NODE ?= auto
REAL_NODE_BINS = $(if $(filter 0,$(REAL_NODE)),,$(if $(IS_ROOT),k8s-node-bins test-images))
# What the real node's runtime imports when it starts: the sandbox image and
# both versions of the test workload (make test-images).
NODE_IMAGES ?= $(IMAGE_DIR)/sunstrider-pause.tar $(IMAGE_DIR)/sunstrider-testapp-v1.tar $(IMAGE_DIR)/sunstrider-testapp-v2.tar \
	$(IMAGE_DIR)/sunstrider-testapp-v3.tar

.PHONY: dev-cluster
dev-cluster: k8s-cluster-bins $(REAL_NODE_BINS) ## Start a local cluster without Docker (kwokctl binary runtime, 3 fake nodes, and as root a real node: docs/local-cluster.md); kubeconfig in bin/dev/kubeconfig.
	$(call dev-cluster,$(DEV_DIR),sunstrider-dev,REAL_NODE=$(REAL_NODE)) up

.PHONY: dev
dev: dev-cluster manifests kustomize build ## The quickest look: local cluster, CRDs and webhooks, the operator running locally, samples applied, a demo app on the real node.
	KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" MANAGER="$(LOCALBIN)/manager" DEV_DIR="$(DEV_DIR)" ./hack/dev.sh

.PHONY: dev-cluster-down
dev-cluster-down: ## Stop and remove the local cluster, its real node and make dev's operator.
	$(call dev-cluster,$(DEV_DIR),sunstrider-dev) down

# test-node runs `make dev` (hack/dev.sh) on a fresh cluster of its own with
# the real node, then test/node against it: real containers, real Service
# routing. There is one real node per machine, so no other suite has one.
NODE_DIR ?= $(LOCALBIN)/node-e2e
NODE_CLUSTER ?= sunstrider-node
# The operator's own image, as `make image` builds it, imported into the
# node: test/node deploys it with `make deploy` and `helm install`.
NODE_OPERATOR_IMG ?= sunstrider.local/operator:node
NODE_OPERATOR_ARCHIVE ?= $(IMAGE_DIR)/sunstrider-operator-node.tar

.PHONY: test-node
test-node: cluster-suite-bins | $(if $(CI_SCHEDULE),test-release) ## On a fresh local cluster with its real node (as root): make dev, then real Pods through the operator: probes, Service routing, rollouts, crash loops, friend Pods (test/node).
	@$(BATCH_NICE) $(MAKE) --no-print-directory -j1 k8s-node-bins test-images kubectl-plugin test-gateway
	@$(BATCH_NICE) $(MAKE) --no-print-directory image IMG=$(NODE_OPERATOR_IMG) IMAGE_ARCHIVE=$(NODE_OPERATOR_ARCHIVE)
	$(call dev-cluster,$(NODE_DIR),$(NODE_CLUSTER)) down >/dev/null 2>&1 || true
	$(call dev-cluster,$(NODE_DIR),$(NODE_CLUSTER),REAL_NODE=1 NODE_IMAGES="$(NODE_IMAGES) $(NODE_OPERATOR_ARCHIVE)" $(BATCH_NICE)) up
	rc=0; KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" MANAGER="$(LOCALBIN)/manager" DEV_DIR="$(NODE_DIR)" \
		DEV_WEBHOOK_PORT=29443 DEV_PROBE_PORT=28081 $(BATCH_NICE) ./hack/dev.sh || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
		KUBECONFIG="$(NODE_DIR)/kubeconfig" KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" NODE_BIN="$(NODE_BIN)" K8S_BIN="$(K8S_BIN)" \
		DEV_DIR="$(NODE_DIR)" OPERATOR_IMAGE="$(NODE_OPERATOR_IMG)" PATH="$(LOCALBIN):$$PATH" \
		$(BATCH_NICE) go -C test test -tags node -timeout 15m -count 1 -v ./node/ $(TEST_ARGS) || rc=$$?; \
	fi; \
	$(call dev-cluster,$(NODE_DIR),$(NODE_CLUSTER)) down >/dev/null 2>&1; \
	K8S_BIN="$(K8S_BIN)" NODE_BIN="$(NODE_BIN)" ./hack/real-node.sh leftovers || rc=1; exit $$rc

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary into bin/manager (after manifests, generate, fmt, vet).
	go build -ldflags "$(LDFLAGS)" -o bin/manager ./cmd

.PHONY: test-gateway
test-gateway: ## Build the local cluster's test Gateway API implementation into bin/test-gateway (test/gateway; not for production).
	go -C test build -o "$(abspath $(LOCALBIN))/test-gateway" ./gateway

.PHONY: kubectl-plugin
kubectl-plugin: ## Build the kubectl plugin into bin/kubectl-sunstrider (kubectl sunstrider history|rollback; put bin/ on PATH).
	go build -ldflags "$(LDFLAGS)" -o "$(LOCALBIN)/kubectl-sunstrider" ./cmd/kubectl-sunstrider

# `make run` serves the webhooks on https://localhost:$(RUN_WEBHOOK_PORT), where
# `make install` points the Drink CRD's conversion webhook: a local cluster's
# API server (make dev-cluster) reaches it. --cert-mode=local keeps the CA and
# certificate in $(RUN_CERT_DIR) and injects the CA: no operator namespace or
# Secret is needed (docs/drink-versions.md, "Running locally").
RUN_WEBHOOK_PORT ?= 9443
RUN_CERT_DIR ?= $(LOCALBIN)/run-certs
RUN_ARGS ?= --cert-mode=local --webhook-port=$(RUN_WEBHOOK_PORT) --webhook-cert-path=$(RUN_CERT_DIR)
.PHONY: run
run: manifests generate fmt vet ## Run the operator from your host against $KUBECONFIG, after make install (ENABLE_WEBHOOKS=false turns webhooks off).
	go build -ldflags "$(LDFLAGS)" -o "$(LOCALBIN)/run-manager" ./cmd
	"$(LOCALBIN)/run-manager" init-config   # the default OperatorConfiguration, as the Deployment's init container makes it
	exec "$(LOCALBIN)/run-manager" $(RUN_ARGS)

# `make image` builds the operator's image without Docker, a base image or a
# registry (hack/image): FROM scratch, the static binary as /manager, the
# files of distroless/static:nonroot it needs (nonroot 65532 in /etc/passwd and
# /etc/group, /home/nonroot, /tmp; a CA bundle only with IMAGE_CA_CERTS), user
# 65532:65532 and the org.opencontainers.image.* labels; every timestamp is
# SOURCE_DATE_EPOCH (the commit's time), so a commit always gives the same
# digest. The archive, $(IMAGE_ARCHIVE), is an OCI image layout and a
# `docker save` tar at once: `crane push`, `docker load`, `podman load`,
# `kind load image-archive` read it. IMAGE_ARCH builds for another
# architecture; the image is tagged IMG when given, else
# sunstrider-operator:<version> ("+" is not allowed in tags: "_" as Helm does).
IMAGE_VERSION ?= $(VERSION)$(if $(filter v$(VERSION),$(GIT_DESCRIBE)),,+$(shell printf %.7s "$(REVISION)")$(if $(filter %-dirty,$(GIT_DESCRIBE)),.dirty))
IMAGE_ARCH ?= $(shell go env GOARCH)
IMAGE_DIR ?= $(LOCALBIN)/image
IMAGE_ARCHIVE ?= $(IMAGE_DIR)/sunstrider-operator-$(IMAGE_VERSION).tar
IMAGE_TAG ?= $(if $(filter file,$(origin IMG)),sunstrider-operator:$(subst +,_,$(IMAGE_VERSION)),$(IMG))
# IMAGE_CA_CERTS names a PEM file of CA certificates that `make image` and
# `make release` (hack/release-artifacts.sh) copy into the image as
# /etc/ssl/certs/ca-certificates.crt, with SSL_CERT_FILE pointing at it, e.g.
# IMAGE_CA_CERTS=/etc/ssl/certs/ca-certificates.crt. Empty (the default): the
# image has no CA bundle, since the manager dials only the API server and
# trusts it through the ServiceAccount's CA; nothing of the building machine
# goes into the image, so every machine builds the same digest.
# IMAGE_SOURCE, the org.opencontainers.image.source label, is the project's
# repository (the one IMAGE_REPO's registry links packages to), the same
# from any clone.
IMAGE_CA_CERTS ?=
IMAGE_SOURCE ?= https://github.com/sunstrider/sunstrider-operator
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# hack/image is a module of its own (TOOL_MODULES): go run there, so every
# file it is given is an absolute path.
IMAGE_BUILDER = go -C hack/image run .
.PHONY: image
image: ## Build the operator's image without Docker into bin/image/sunstrider-operator-<version>.tar (crane push it).
	mkdir -p "$(IMAGE_DIR)"
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -trimpath -ldflags "-s -w $(LDFLAGS)" \
		-o "$(IMAGE_DIR)/manager-linux-$(IMAGE_ARCH)" ./cmd
	$(IMAGE_BUILDER) -binary "$(abspath $(IMAGE_DIR))/manager-linux-$(IMAGE_ARCH)" -out "$(abspath $(IMAGE_ARCHIVE))" -tag "$(IMAGE_TAG)" \
		-created "$(SOURCE_DATE_EPOCH)" -version "$(IMAGE_VERSION)" -revision "$(REVISION)" -source "$(IMAGE_SOURCE)" \
		-ca-certs "$(if $(IMAGE_CA_CERTS),$(abspath $(IMAGE_CA_CERTS)))" -description "Kubernetes operator for Application, MyCustomResource, Guestbook and Drink"

# `make test-images` builds, the same way, the images the local test
# cluster's real kubelet node runs (no registry is reachable there, so they
# are imported into its containerd with `ctr -n k8s.io images import`): the
# test workload (test/app) as three versions for rollouts and rollbacks, and the pod sandbox
# image (hack/pause) in place of registry.k8s.io/pause.
TESTAPP_IMAGE_V1 ?= sunstrider.local/testapp:v1
TESTAPP_IMAGE_V2 ?= sunstrider.local/testapp:v2
TESTAPP_IMAGE_V3 ?= sunstrider.local/testapp:v3
PAUSE_IMAGE ?= sunstrider.local/pause:1
TESTAPP_ARCHIVE_V1 ?= $(IMAGE_DIR)/sunstrider-testapp-v1.tar
TESTAPP_ARCHIVE_V2 ?= $(IMAGE_DIR)/sunstrider-testapp-v2.tar
TESTAPP_ARCHIVE_V3 ?= $(IMAGE_DIR)/sunstrider-testapp-v3.tar
PAUSE_ARCHIVE ?= $(IMAGE_DIR)/sunstrider-pause.tar
.PHONY: test-images
test-images: ## Build the real test node's images without Docker: bin/image/sunstrider-testapp-v1.tar, -v2.tar, -v3.tar and sunstrider-pause.tar.
	mkdir -p "$(IMAGE_DIR)"
	for v in v1 v2 v3; do \
		CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go -C test build -trimpath -ldflags "-s -w -X main.version=$$v" \
			-o "$(abspath $(IMAGE_DIR))/testapp-$$v-linux-$(IMAGE_ARCH)" ./app || exit 1; \
	done
	$(IMAGE_BUILDER) -binary "$(abspath $(IMAGE_DIR))/testapp-v1-linux-$(IMAGE_ARCH)" -entrypoint /app \
		-out "$(abspath $(TESTAPP_ARCHIVE_V1))" -tag "$(TESTAPP_IMAGE_V1)" -created "$(SOURCE_DATE_EPOCH)" \
		-title sunstrider-testapp -version v1 -description "The operator's test workload (test/app), version v1"
	$(IMAGE_BUILDER) -binary "$(abspath $(IMAGE_DIR))/testapp-v2-linux-$(IMAGE_ARCH)" -entrypoint /app \
		-out "$(abspath $(TESTAPP_ARCHIVE_V2))" -tag "$(TESTAPP_IMAGE_V2)" -created "$(SOURCE_DATE_EPOCH)" \
		-title sunstrider-testapp -version v2 -description "The operator's test workload (test/app), version v2"
	$(IMAGE_BUILDER) -binary "$(abspath $(IMAGE_DIR))/testapp-v3-linux-$(IMAGE_ARCH)" -entrypoint /app \
		-out "$(abspath $(TESTAPP_ARCHIVE_V3))" -tag "$(TESTAPP_IMAGE_V3)" -created "$(SOURCE_DATE_EPOCH)" \
		-title sunstrider-testapp -version v3 -description "The operator's test workload (test/app), version v3"
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -trimpath -ldflags "-s -w" \
		-o "$(IMAGE_DIR)/pause-linux-$(IMAGE_ARCH)" ./hack/pause
	$(IMAGE_BUILDER) -binary "$(abspath $(IMAGE_DIR))/pause-linux-$(IMAGE_ARCH)" -entrypoint /pause \
		-out "$(abspath $(PAUSE_ARCHIVE))" -tag "$(PAUSE_IMAGE)" -created "$(SOURCE_DATE_EPOCH)" \
		-title sunstrider-pause -version 1 -description "The test node's pod sandbox image (hack/pause)"

# `make docker-build` builds, with CONTAINER_TOOL, the files `make image`
# builds: it compiles the same static manager and has hack/image write the
# image's files as one tar (-rootfs-out, from the same layers as `make
# image`'s archive), which the Dockerfile, FROM scratch with no RUN, ADDs.
# There is no base image to pin by digest or patch, and the engine compiles
# nothing. It builds for linux/$(IMAGE_ARCH) (the host's unless IMAGE_ARCH
# says otherwise); IMAGE_CA_CERTS adds the CA bundle as for `make image`.
# The tars are in DOCKER_DIR, where the Dockerfile ADDs them from
# (.dockerignore sends only them as the build context): not a variable to
# override.
DOCKER_DIR := bin/docker
# docker-rootfs builds, for each platform of $(1) (linux/<arch>[/<variant>],
# comma-separated as PLATFORMS), the static manager with `make image`'s
# flags and $(DOCKER_DIR)/rootfs-linux-<arch>.tar.
docker-rootfs = mkdir -p "$(DOCKER_DIR)" && for platform in $$(echo "$(1)" | tr , ' '); do \
	arch=$${platform\#linux/}; arch=$${arch%%/*}; \
	CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags "-s -w $(LDFLAGS)" \
		-o "$(DOCKER_DIR)/manager-linux-$$arch" ./cmd && \
	$(IMAGE_BUILDER) -binary "$(abspath $(DOCKER_DIR))/manager-linux-$$arch" \
		-rootfs-out "$(abspath $(DOCKER_DIR))/rootfs-linux-$$arch.tar" -created "$(SOURCE_DATE_EPOCH)" \
		-ca-certs "$(if $(IMAGE_CA_CERTS),$(abspath $(IMAGE_CA_CERTS)))" || exit 1; \
	done
# The labels the Dockerfile sets from build args, with `make image`'s values.
DOCKER_LABEL_ARGS = --build-arg "VERSION=$(IMAGE_VERSION)" --build-arg "REVISION=$(REVISION)"
.PHONY: docker-build
docker-build: ## Build IMG with CONTAINER_TOOL from the Dockerfile: `make image`'s files, no base image (needs Docker or podman; `make image` needs neither).
	$(call docker-rootfs,linux/$(IMAGE_ARCH))
	$(CONTAINER_TOOL) build --platform linux/$(IMAGE_ARCH) $(DOCKER_LABEL_ARGS) -t ${IMG} .

.PHONY: docker-push
docker-push: ## Push IMG with CONTAINER_TOOL (needs Docker or podman and a registry).
	$(CONTAINER_TOOL) push ${IMG}

# PLATFORMS defines the target platforms for the manager image be built to provide support to multiple
# architectures. (i.e. make docker-buildx IMG=myregistry/mypoperator:0.0.1). To use this option you need to:
# - be able to use docker buildx. More info: https://docs.docker.com/build/buildx/
# - have enabled BuildKit. More info: https://docs.docker.com/develop/develop-images/build_enhancements/
# - be able to push the image to your registry (i.e. if you do not set a valid value via IMG=<myregistry/image:<tag>> then the export will fail)
# To adequately provide solutions that are compatible with multiple platforms, you should consider using this option.
# The Dockerfile has no RUN, so no platform needs emulation: each one's
# rootfs tar (its manager cross-compiled here) is ADDed as it is.
PLATFORMS ?= linux/arm64,linux/amd64,linux/s390x,linux/ppc64le
.PHONY: docker-buildx
docker-buildx: ## Build and push IMG for PLATFORMS with docker buildx, `make image`'s files for each (needs Docker and a registry).
	$(call docker-rootfs,$(PLATFORMS))
	- $(CONTAINER_TOOL) buildx create --name sunstrider-operator-builder
	$(CONTAINER_TOOL) buildx use sunstrider-operator-builder
	- $(CONTAINER_TOOL) buildx build --push --platform=$(PLATFORMS) $(DOCKER_LABEL_ARGS) --tag ${IMG} .
	- $(CONTAINER_TOOL) buildx rm sunstrider-operator-builder

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write dist/install.yaml: CRDs, RBAC, webhooks and the Deployment for IMG, one file to kubectl apply.
	mkdir -p dist
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=${IMG}
	"$(KUSTOMIZE)" build config/default > dist/install.yaml
	KUSTOMIZE="$(KUSTOMIZE)" ./hack/sync-chart-crds.sh

##@ OLM bundle

# The OLM bundle (docs/olm.md): bundle/ and bundle.Dockerfile, generated by
# hack/bundle from `kustomize build config/default` and config/samples;
# `make verify` fails when they are stale. BUNDLE_VERSION is the VERSION file
# (0.2.0 without one), BUNDLE_REPLACES the release it upgrades from
# (hack/previous-release).
BUNDLE_VERSION ?= $(or $(VERSION),0.2.0)
BUNDLE_REPLACES ?= $(shell awk -F= '$$1 == "version" {print $$2}' hack/previous-release 2>/dev/null)
# The operator image the bundle's Deployment runs (`make image` tags it
# so) and the bundle image's own name.
IMAGE_TAG_BASE ?= $(IMAGE_REPO)
BUNDLE_MANAGER_IMG ?= $(IMAGE_TAG_BASE):$(BUNDLE_VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(BUNDLE_VERSION)
BUNDLE_CHANNELS ?= fast
BUNDLE_DEFAULT_CHANNEL ?= fast
BUNDLE_ENV = KUSTOMIZE="$(KUSTOMIZE)" BUNDLE_VERSION="$(BUNDLE_VERSION)" BUNDLE_REPLACES="$(BUNDLE_REPLACES)" \
	BUNDLE_MANAGER_IMG="$(BUNDLE_MANAGER_IMG)" BUNDLE_CHANNELS="$(BUNDLE_CHANNELS)" \
	BUNDLE_DEFAULT_CHANNEL="$(BUNDLE_DEFAULT_CHANNEL)"

.PHONY: bundle
bundle: manifests kustomize ## Generate the OLM bundle (bundle/, bundle.Dockerfile) for BUNDLE_VERSION; make test validates it.
	$(BUNDLE_ENV) ./hack/bundle/bundle.sh

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG (needs Docker or podman).
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG (needs Docker or podman and a registry).
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

##@ Release

# `make release VERSION=x.y.z` (hack/release.sh, docs/releasing.md), run
# twice: first it checks CHANGELOG.md has the release's section and writes
# VERSION, the chart's version and appVersion and the image
# $(IMAGE_REPO):x.y.z into the chart, config/manager and the bundle, for
# you to commit and tag vx.y.z; then, on that clean tagged commit, it builds
# the artifacts into RELEASE_DIR (hack/release-artifacts.sh): the
# linux/amd64+arm64 image index with its SBOM attached (an OCI layout tar),
# the chart, install.yaml, the bundle and SHA256SUMS, the same digests for the
# same commit. `make bump-dev VERSION=x.y.z-dev` moves the tree on after it.
# `make test-release` builds a throwaway release twice in a clone and
# compares (test/release).
RELEASE_DIR ?= $(LOCALBIN)/release/$(VERSION)
RELEASE_ENV = IMAGE_REPO="$(IMAGE_REPO)" KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" RELEASE_DIR="$(RELEASE_DIR)" \
	SOURCE_DATE_EPOCH="$(SOURCE_DATE_EPOCH)" LDFLAGS="$(LDFLAGS)" REVISION="$(REVISION)" \
	IMAGE_SOURCE="$(IMAGE_SOURCE)" IMAGE_CA_CERTS="$(IMAGE_CA_CERTS)"
.PHONY: release
release: kustomize helm ## Release VERSION=x.y.z: prepare the tree (commit and tag it), then build the image index, SBOM, chart, install.yaml, bundle and SHA256SUMS into bin/release/x.y.z.
	$(if $(filter command line,$(origin VERSION)),,$(error make release needs VERSION=x.y.z on its command line))
	$(RELEASE_ENV) ./hack/release.sh "$(VERSION)"

.PHONY: bump-dev
bump-dev: kustomize ## After a release, move the tree to VERSION=x.y.z-dev (VERSION file, chart, image, bundle) for the next commit.
	$(if $(filter command line,$(origin VERSION)),,$(error make bump-dev needs VERSION=x.y.z-dev on its command line))
	$(RELEASE_ENV) ./hack/release.sh --dev "$(VERSION)"

.PHONY: test-release
test-release: kustomize helm controller-gen oras ## Build a throwaway release twice in a clone of HEAD, check the digests are equal and the artifacts agree, then publish it to a registry in the test and pull it back with oras and helm (test/release).
	KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" ORAS="$(ORAS)" LOCALBIN="$(LOCALBIN)" $(BATCH_NICE) go -C test test -tags release -timeout 45m -count 1 -v ./release/ $(TEST_ARGS)

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

# The CRDs make install applies call the conversion webhook of the operator
# run by `make run` (hack/devconfig rewrites config/crd's Service reference);
# `make deploy` applies config/default's CRDs over them (same field manager),
# which call the in-cluster Service instead.
.PHONY: install
install: manifests kustomize ## Install CRDs into the cluster of $KUBECONFIG, Drinks converted by the webhook `make run` serves (https://localhost:9443).
	@out="$$( "$(KUSTOMIZE)" build config/crd 2>/dev/null || true )"; \
	if [ -n "$$out" ]; then echo "$$out" | go run ./hack/devconfig -base https://localhost:$(RUN_WEBHOOK_PORT) | \
		"$(KUBECTL)" apply --server-side --force-conflicts -f -; else echo "No CRDs to install; skipping."; fi

# delete-instances deletes every object of the CRDs on stdin (kustomize
# output) that are installed, in the foreground, before the CRDs go: the
# garbage collector then removes their children while it still serves the
# kinds. Deleting a CRD first races it: a child whose owner's kind is gone
# is kept forever (its owner reference no longer resolves), which left an
# Application's Deployment behind after `make uninstall`.
delete-instances = crds="$$( "$(KUBECTL)" get --ignore-not-found -o name -f - | sed 's|^.*/||' | paste -sd, - )"; \
	if [ -n "$$crds" ]; then "$(KUBECTL)" delete "$$crds" --all --all-namespaces --cascade=foreground --wait --timeout=5m; fi

.PHONY: uninstall
uninstall: manifests kustomize ## Uninstall CRDs (and with them every object of their kinds and those objects' children) from the cluster of $KUBECONFIG. Call with ignore-not-found=true to ignore resource not found errors during deletion.
	@out="$$( "$(KUSTOMIZE)" build config/crd 2>/dev/null || true )"; \
	if [ -z "$$out" ]; then echo "No CRDs to delete; skipping."; exit 0; fi; \
	echo "$$out" | { $(delete-instances); } && \
	echo "$$out" | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator (config/default, image IMG) to the cluster of $KUBECONFIG (kubectl's default: ~/.kube/config).
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=${IMG}
	"$(KUSTOMIZE)" build config/default | "$(KUBECTL)" apply --server-side --force-conflicts -f -

.PHONY: undeploy
undeploy: kustomize ## Undeploy the operator from the cluster of $KUBECONFIG. Call with ignore-not-found=true to ignore resource not found errors during deletion.
	"$(KUSTOMIZE)" build config/crd | { $(delete-instances); }
	"$(KUSTOMIZE)" build config/default | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

##@ Dependencies

## Location to install dependencies to
LOCALBIN ?= $(shell pwd)/bin
$(LOCALBIN):
	mkdir -p "$(LOCALBIN)"

## Tool Binaries
KUBECTL ?= $(K8S_BIN)/kubectl
KUSTOMIZE ?= $(LOCALBIN)/kustomize
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
GOLANGCI_LINT = $(LOCALBIN)/golangci-lint
HELM ?= $(LOCALBIN)/helm

## Tool Versions
KUSTOMIZE_VERSION ?= v5.8.2
CONTROLLER_TOOLS_VERSION ?= v0.23.0

## Kubernetes control plane built from the Go module proxy (see hack/k8s/go.mod).
K8S_VERSION ?= $(shell awk '{for (i = 1; i < NF; i++) if ($$i == "k8s.io/kubernetes") {print $$(i+1); exit}}' hack/k8s/go.mod)
K8S_BIN ?= $(LOCALBIN)/k8s/$(K8S_VERSION)
KWOK_VERSION ?= v0.8.0
KWOK_BIN ?= $(LOCALBIN)/kwok/$(KWOK_VERSION)

GOLANGCI_LINT_VERSION ?= v2.15.0
GOVULNCHECK = $(LOCALBIN)/govulncheck
GOVULNCHECK_VERSION ?= v1.9.0
INDEXDB = $(LOCALBIN)/indexdb
# The Go vulnerability database's source module; "latest" scans against the
# entries published up to now, as govulncheck against vuln.go.dev would.
VULNDB_VERSION ?= latest
HELM_VERSION ?= v3.22.0
CRD_REF_DOCS ?= $(LOCALBIN)/crd-ref-docs
CRD_REF_DOCS_VERSION ?= v0.3.0
# promtool checks and unit-tests the alerts (config/prometheus/rules) in
# make test: a tool, not a dependency of the operator's module.
PROMTOOL ?= $(LOCALBIN)/promtool
PROMTOOL_VERSION ?= v0.316.0
# oras publishes a release's OCI layout (with its SBOM referrer) and reads it
# back from the registry (docs/releasing.md; make test-release runs both).
ORAS ?= $(LOCALBIN)/oras
ORAS_VERSION ?= v1.3.6
.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build kustomize into bin/ from the Go module proxy if necessary.
$(KUSTOMIZE): $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Build controller-gen into bin/ from the Go module proxy if necessary.
$(CONTROLLER_GEN): $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: k8s-test-bins
k8s-test-bins: ## Build kube-apiserver, etcd and kubectl for envtest into bin/k8s/<version> (once; ~10 min cold).
	GOTOOLCHAIN=$(TEST_INFRA_GOTOOLCHAIN) ./hack/build-k8s.sh "$(K8S_BIN)" kube-apiserver etcd kubectl

.PHONY: k8s-cluster-bins
k8s-cluster-bins: kwok ## Build what k8s-test-bins builds and kube-controller-manager, kube-scheduler, kwok and kwokctl for a whole local cluster.
	GOTOOLCHAIN=$(TEST_INFRA_GOTOOLCHAIN) ./hack/build-k8s.sh "$(K8S_BIN)" kube-apiserver etcd kubectl kube-controller-manager kube-scheduler

# The real node of the local cluster (hack/real-node.sh): kubelet and
# kube-proxy of K8S_VERSION, containerd, crictl and the CNI plugins, all
# from the Go module proxy (runc, iptables and conntrack from Debian).
CONTAINERD_VERSION ?= v2.4.2
CNI_PLUGINS_VERSION ?= v1.10.0
CRICTL_VERSION ?= v1.37.0
NODE_BIN ?= $(LOCALBIN)/node/containerd-$(CONTAINERD_VERSION)-crictl-$(CRICTL_VERSION)-cni-$(CNI_PLUGINS_VERSION)
# metrics-server (hack/metrics-server's module), which kwokctl runs beside the
# real node so that HorizontalPodAutoscalers read its containers' CPU.
METRICS_SERVER_VERSION ?= $(shell awk '{for (i = 1; i < NF; i++) if ($$i == "sigs.k8s.io/metrics-server") {print $$(i+1); exit}}' hack/metrics-server/go.mod)
METRICS_SERVER_BIN ?= $(LOCALBIN)/metrics-server/$(METRICS_SERVER_VERSION)/metrics-server
# Its kustomize base (RBAC, APIService, Service), from the module: kwokctl
# would download a release's components.yaml otherwise.
METRICS_SERVER_MANIFESTS = $(shell cd hack/metrics-server && go list -m -f '{{.Dir}}' sigs.k8s.io/metrics-server)/manifests/base
.PHONY: k8s-node-bins
k8s-node-bins: k8s-cluster-bins ## Build what the local cluster's real node runs: kubelet, kube-proxy, containerd, crictl, CNI plugins, and metrics-server for it (once; ~5 min cold).
	GOTOOLCHAIN=$(TEST_INFRA_GOTOOLCHAIN) ./hack/build-k8s.sh "$(K8S_BIN)" kubelet kube-proxy
	test -x "$(METRICS_SERVER_BIN)" || (cd hack/metrics-server && GOTOOLCHAIN=$(TEST_INFRA_GOTOOLCHAIN) CGO_ENABLED=0 \
		go build -trimpath -o "$(METRICS_SERVER_BIN)" sigs.k8s.io/metrics-server/cmd/metrics-server)
	GOTOOLCHAIN=$(TEST_INFRA_GOTOOLCHAIN) CONTAINERD_VERSION=$(CONTAINERD_VERSION) CNI_PLUGINS_VERSION=$(CNI_PLUGINS_VERSION) \
		CRICTL_VERSION=$(CRICTL_VERSION) ./hack/build-node.sh "$(NODE_BIN)"

.PHONY: kwok
kwok: $(KWOK_BIN)/kwok $(KWOK_BIN)/kwokctl ## Build kwok and kwokctl into bin/kwok/<version> (once).
$(KWOK_BIN)/kwok $(KWOK_BIN)/kwokctl:
	mkdir -p "$(KWOK_BIN)"
	GOBIN="$(KWOK_BIN)" GOTOOLCHAIN=$(TEST_INFRA_GOTOOLCHAIN) CGO_ENABLED=0 go install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION) sigs.k8s.io/kwok/cmd/kwokctl@$(KWOK_VERSION)

# helm is built with the version information helm's own Makefile sets: its
# version, and the Kubernetes version `helm template` assumes without a
# cluster (that of the client-go helm is built with; a plain `go install`
# leaves v1.20.0, and the chart's kubeVersion >=1.31.0-0 then fails).
.PHONY: helm
helm: $(HELM) ## Build helm locally (from the Go module proxy) if necessary.
$(HELM): $(LOCALBIN)
	@[ -f "$(HELM)-$(HELM_VERSION)-k8s" ] && [ "$$(readlink -- "$(HELM)" 2>/dev/null)" = "$(HELM)-$(HELM_VERSION)-k8s" ] || { \
	set -e; \
	echo "Building helm.sh/helm/v3@$(HELM_VERSION)"; \
	gomod=$$(go mod download -json helm.sh/helm/v3@$(HELM_VERSION) | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$$/\1/p'); \
	minor=$$(sed -n 's|^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*|\1|p' "$$gomod"); \
	[ -n "$$minor" ] || { echo "no k8s.io/client-go in $$gomod"; exit 1; }; \
	rm -f "$(HELM)"; \
	GOBIN="$(LOCALBIN)" go install -ldflags "-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	  -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$$minor \
	  -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$$minor" \
	  helm.sh/helm/v3/cmd/helm@$(HELM_VERSION); \
	mv "$(LOCALBIN)/helm" "$(HELM)-$(HELM_VERSION)-k8s"; \
	} ; \
	ln -sf "$$(realpath "$(HELM)-$(HELM_VERSION)-k8s")" "$(HELM)"

.PHONY: crd-ref-docs
crd-ref-docs: $(CRD_REF_DOCS) ## Build crd-ref-docs into bin/ from the Go module proxy if necessary.
$(CRD_REF_DOCS): $(LOCALBIN)
	$(call go-install-tool,$(CRD_REF_DOCS),github.com/elastic/crd-ref-docs,$(CRD_REF_DOCS_VERSION))

.PHONY: oras
oras: $(ORAS) ## Build oras (the OCI registry client docs/releasing.md publishes with) into bin/ if necessary.
$(ORAS): $(LOCALBIN)
	$(call go-install-tool,$(ORAS),oras.land/oras/cmd/oras,$(ORAS_VERSION))

.PHONY: promtool
promtool: $(PROMTOOL) ## Build promtool (Prometheus' rule checker) locally if necessary.
$(PROMTOOL): $(LOCALBIN)
	$(call go-install-tool,$(PROMTOOL),github.com/prometheus/prometheus/cmd/promtool,$(PROMTOOL_VERSION))

.PHONY: govulncheck
govulncheck: $(GOVULNCHECK) ## Build govulncheck into bin/ from the Go module proxy if necessary.
$(GOVULNCHECK): $(LOCALBIN)
	$(call go-install-tool,$(GOVULNCHECK),golang.org/x/vuln/cmd/govulncheck,$(GOVULNCHECK_VERSION))

.PHONY: indexdb
indexdb: $(INDEXDB) ## Build the tool that indexes golang.org/x/vulndb's OSV files into a database.
$(INDEXDB): $(LOCALBIN)
	$(call go-install-tool,$(INDEXDB),golang.org/x/vulndb/cmd/indexdb,$(call vulndbver))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Build golangci-lint into bin/ from the Go module proxy if necessary.
$(GOLANGCI_LINT): $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

# go-install-tool will 'go install' any package with custom target and name of binary, if it doesn't exist
# $1 - target path with name of binary
# $2 - package url which can be installed
# $3 - specific version of package
define go-install-tool
@[ -f "$(1)-$(3)" ] && [ "$$(readlink -- "$(1)" 2>/dev/null)" = "$(1)-$(3)" ] || { \
set -e; \
package=$(2)@$(3) ;\
echo "Downloading $${package}" ;\
rm -f "$(1)" ;\
GOBIN="$(LOCALBIN)" go install $${package} ;\
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)" ;\
} ;\
ln -sf "$$(realpath "$(1)-$(3)")" "$(1)"
endef

# vulndbver resolves VULNDB_VERSION ("latest" included) to a pseudo-version.
define vulndbver
$(shell go list -m -f '{{.Version}}' golang.org/x/vulndb@$(VULNDB_VERSION) 2>/dev/null)
endef

define gomodver
$(shell go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' $(1) 2>/dev/null)
endef
