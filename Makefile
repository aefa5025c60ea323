# ibscope build, test, benchmark and demo.
#   make demo   build, then run the main jobs on bundled captures (no RDMA hardware needed)
#   make test   install what is missing, then lint, unit + interop tests, fuzz smoke run, VM bench
#   make vmtest the SoftRoCE bench alone: Debian's kernel under qemu, rdma_rxe traffic checked
#   make bench  Go benchmarks plus comparisons against tshark/tcpdump (figures on stdout)
#   make bench-ab REF=<commit>  paired speed comparison of ibanalyze at REF against the work tree
#   make pgo    rewrite the profile ibanalyze is built with (cmd/ibanalyze/default.pgo)
#   make install  the commands, man pages and bash/zsh/fish completions under PREFIX (/usr/local)
# Every target installs what it needs (apt-get, Go modules, npm) when it is missing.

SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(HOME)/go/bin:$(PATH)
GO ?= go
BIN := bin
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# What the tests and demo use, as command:Debian-package pairs: tshark for interop,
# tcpreplay/tcpdump/ip for live capture tests, gcc + libibverbs-dev (verbs.h) to build the
# libibverbs test double the verbs sniffer's tests and bench run against (internal/fakeverbs;
# build and demo need neither), node/npm for the independent Parquet reader, GNU time for
# bench, Debian's pandas (no pyarrow) for the README's CSV and JSON Lines lines, mandoc and groff to lint
# the man pages, bash-completion, fish and zsh to run the completion scripts as those shells do. chromium to render
# 'ibanalyze report' headless, gzip and zstd to compress bench/cores.sh's capture. A command that is
# already there (whatever installed it) is not reinstalled.
NEEDS := tshark:tshark mandoc:mandoc groff:groff-base tcpreplay:tcpreplay tcpdump:tcpdump ip:iproute2 gcc:gcc prometheus:prometheus \
	/usr/include/infiniband/verbs.h:libibverbs-dev node:nodejs npm:npm /usr/bin/time:time \
	/usr/lib/python3/dist-packages/pandas:python3-pandas \
	/usr/share/bash-completion/bash_completion:bash-completion fish:fish zsh:zsh hyperfine:hyperfine chromium:chromium curl:curl \
	gzip:gzip zstd:zstd
# The VM bench (vmbench/, internal/vm) boots Debian's stock kernel under qemu with a busybox
# initramfs, shares the host's root with the guest, and runs rxe traffic with perftest, rping and
# its own RDMA WRITE with immediate tool (vmbench/testdata/immwrite, built with gcc against
# libibverbs-dev and librdmacm-dev: Debian 12's perftest cannot post one).
# The kernel package itself is fetched by the bench (apt-get download, into a cache folder).
VM_NEEDS := qemu-system-x86_64:qemu-system-x86 /bin/busybox:busybox-static rdma-ndd:rdma-core \
	ibv_devices:ibverbs-utils /etc/libibverbs.d/rxe.driver:ibverbs-providers ib_write_bw:perftest \
	rping:rdmacm-utils tshark:tshark tc:iproute2 ss:iproute2 gcc:gcc \
	/usr/include/infiniband/verbs.h:libibverbs-dev /usr/include/rdma/rdma_cma.h:librdmacm-dev
# The demo's live capture replays traffic through a veth pair, and it reads its Parquet files back
# with DuckDB through node: as root it installs these.
DEMO_NEEDS := tcpreplay:tcpreplay ip:iproute2 node:nodejs npm:npm
FUZZTIME ?= 4s
# Generators under testdata/, which ./... leaves out.
TESTDATA_CMDS := ./testdata/gen ./correlate/testdata/benchtel

.PHONY: all build deps node-deps vm-deps demo-deps test lint unit race fuzz-smoke vmtest bench bench-ab pgo demo clean man install dashboard

all: build

# build links ibanalyze and ibsim static, without cgo: nothing in them calls C, and linked with libc
# (the default where a C compiler is) each run began in ld.so and libc's start, 2 to 3 ms of CPU, 8 %
# of decode --summary --no-crc on 500,000 frames. ibcap keeps go build's default, the way the VM bench
# tests it: with cgo, purego's calls into libibverbs run on threads runtime/cgo set up.
build:
	@mkdir -p $(BIN)
	@# -buildvcs=auto: a clone's commit goes into --version even where GOFLAGS turns stamping off.
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -o $(BIN)/ ./cmd/ibanalyze ./cmd/ibsim
	$(GO) build -buildvcs=auto -o $(BIN)/ ./cmd/ibcap

# install_missing installs, with apt-get, the packages of those command:package pairs whose
# command (or file) is missing; cheap on a machine that has everything.
define install_missing
	@missing=""; for n in $(1); do c=$${n%%:*}; p=$${n#*:}; \
	  if [ "$${c:0:1}" = / ]; then [ -e "$$c" ]; else command -v "$$c" >/dev/null; fi || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(NEEDS))
	$(GO) mod download
	@$(MAKE) --no-print-directory node-deps

# node-deps installs the packages of the independent Parquet and Arrow readers (correlate/testdata).
node-deps:
	@# npm install, not npm ci: the lock holds only the platform packages the registry here serves
	@# (DuckDB's linux-x64 binding, not darwin/win32), and npm ci refuses a lock without all of them.
	@# --no-save installs the locked versions and leaves the lock as it is.
	@for d in $$(git ls-files '*package-lock.json' | xargs -r -n1 dirname); do \
	  [ -d $$d/node_modules ] || (cd $$d && npm install --no-save --no-audit --no-fund --loglevel=error) || exit 1; done

# test runs the demo too: the README's first command, kept working by CI rather than found broken
# by a new user.
test: deps lint demo unit race fuzz-smoke vmtest

lint:
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt needed: $$bad"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./... $(TESTDATA_CMDS)
	$(GO) run $(STATICCHECK) ./... $(TESTDATA_CMDS)
	CGO_ENABLED=0 $(GO) build ./... $(TESTDATA_CMDS)
	@# The verbs layer's struct layouts and batch-poll assembly exist for amd64 and arm64 (BlueField).
	GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./cmd/...
	GOARCH=arm64 $(GO) vet ./capture/...

unit:
	@GO=$(GO) bash scripts/unit.sh

# race runs the tests of what shares memory between goroutines under the race detector: the
# read-ahead (its workers, the file's cut lock, the spin before sleeping, the pieces the workers
# cut at once), the stream merge, and the -j comparisons. A data race there would give a wrong frame without failing any other test.
race:
	$(GO) test -race -count=1 -run 'ReadAhead|NextBatch|Prefetch|Workers|Stream|Solo|Meta|Jobs|Split|KeyOnly' ./capfile/ ./analyze/ ./cmd/ibanalyze/

# vm-deps installs what the VM bench needs; apt-get download needs the package lists, which a
# fresh machine may not have yet.
vm-deps:
	$(call install_missing,$(VM_NEEDS))
	@apt-cache show linux-image-amd64 >/dev/null 2>&1 || apt-get update -qq

# vmtest runs the SoftRoCE bench (vmbench/): one guest booted, the traffic matrix, its table.
# go test ./... alone skips it (IBSCOPE_VMBENCH unset).
vmtest: vm-deps
	IBSCOPE_VMBENCH=1 $(GO) test -count=1 -timeout 15m -v ./vmbench/

# fuzz-smoke runs every fuzz target briefly; the seed corpora also run in `unit`.
fuzz-smoke:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz-smoke.sh

bench: deps build
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	@for s in bench/*.sh; do [ -f "$$s" ] && { echo "== $$s"; bash "$$s" || exit 1; }; done; true

# bench-ab compares ibanalyze at REF (A) with the work tree (B) on a generated capture, runs of A
# and B alternating, each run timed by hyperfine (scripts/bench-ab.sh says what it prints and
# which BENCH_* variables it reads; BENCH_GO=1 adds the Go benchmarks through benchstat).
BENCH_AB_NEEDS := hyperfine:hyperfine git:git
bench-ab:
	@[ -n "$(REF)" ] || { echo "usage: make bench-ab REF=<commit>"; exit 2; }
	$(call install_missing,$(BENCH_AB_NEEDS))
	@GO=$(GO) bash scripts/bench-ab.sh "$(REF)"

# pgo rewrites cmd/ibanalyze/default.pgo, the CPU profile of the benchmarked commands with which
# go build optimises ibanalyze (scripts/pgo.sh); rerun it when the hot paths change much.
pgo:
	@GO=$(GO) bash scripts/pgo.sh

# demo-deps installs what the live capture and the DuckDB read-back need when it can (apt-get as
# root, npm when node is there); otherwise the demo says why it skips those parts.
demo-deps:
ifeq ($(shell id -u),0)
	$(call install_missing,$(DEMO_NEEDS))
endif
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory node-deps; fi

demo: demo-deps build
	@bash scripts/demo.sh

# man writes the man pages and shell completions each command generates from its own flags
# (cobra), into $(BIN)/docs: man1/*.1 and completions/{bash,zsh,fish}.
COMMANDS := ibcap ibanalyze ibsim
man: build
	@rm -rf $(BIN)/docs
	@for c in $(COMMANDS); do $(BIN)/$$c __docs $(BIN)/docs || exit 1; done

# dashboard writes the Grafana dashboard of the ibcap --metrics agents (package dashboard, built
# with Grafana's foundation SDK) to import into Grafana: README, "A Grafana dashboard".
dashboard:
	@mkdir -p $(BIN)
	$(GO) run ./dashboard/gen -o $(BIN)/ibscope-dashboard.json

# install copies the commands, man pages and completions under $(DESTDIR)$(PREFIX), links ibcap
# into Wireshark's extcap folder (ibcap answers Wireshark's extcap calls, so its devices appear in
# Wireshark's interface list), and gives ibcap the capabilities a capture needs (setcap, when it
# is there and allowed). Wireshark looks for extcap programs in the folder tshark -G folders
# names "Extcap path" (/usr/lib/x86_64-linux-gnu/wireshark/extcap on Debian): a system install
# (PREFIX /usr/local or /usr) links ibcap there; any other PREFIX, under it in lib/wireshark/extcap
# (and it says that Wireshark does not look there).
# EXTCAP_DIR=DIR chooses the folder (~/.config/wireshark/extcap is Wireshark 4.0's personal one).
PREFIX ?= /usr/local
EXTCAP_DIR ?=
install: man dashboard
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/ibscope \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(addprefix $(BIN)/,$(COMMANDS)) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BIN)/docs/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(BIN)/docs/completions/bash/* $(DESTDIR)$(PREFIX)/share/bash-completion/completions/
	install -m 644 $(BIN)/docs/completions/zsh/* $(DESTDIR)$(PREFIX)/share/zsh/site-functions/
	install -m 644 $(BIN)/docs/completions/fish/* $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/
	install -m 644 $(BIN)/ibscope-dashboard.json $(DESTDIR)$(PREFIX)/share/ibscope/
	@echo "Grafana dashboard: $(PREFIX)/share/ibscope/ibscope-dashboard.json (Dashboards > New > Import)"
	@ext="$(EXTCAP_DIR)"; sys=$$(tshark -G folders 2>/dev/null | sed -n 's/^Extcap path:[[:space:]]*//p'); \
	if [ -z "$$ext" ]; then case "$(PREFIX)" in /usr|/usr/local) ext=$$sys;; esac; fi; \
	[ -n "$$ext" ] || ext="$(PREFIX)/lib/wireshark/extcap"; \
	install -d "$(DESTDIR)$$ext" && ln -sfn "$(PREFIX)/bin/ibcap" "$(DESTDIR)$$ext/ibcap" && \
	case "$$ext" in "$$sys"|"$$HOME/.config/wireshark/extcap") \
	  echo "Wireshark extcap: $$ext/ibcap -> $(PREFIX)/bin/ibcap: Wireshark and tshark -D list ibcap's devices as ibcap-DEVICE";; \
	*) echo "Wireshark extcap: $$ext/ibcap -> $(PREFIX)/bin/ibcap; Wireshark does not look there but in $${sys:-its extcap folder (tshark -G folders)} and a user's ~/.config/wireshark/extcap: link it there, or make install EXTCAP_DIR=DIR";; esac
	@if command -v setcap >/dev/null; then \
	  setcap cap_net_raw,cap_net_admin,cap_ipc_lock+ep $(DESTDIR)$(PREFIX)/bin/ibcap \
	    || echo "setcap failed: run it as root to capture without root: setcap cap_net_raw,cap_net_admin,cap_ipc_lock+ep $(PREFIX)/bin/ibcap"; \
	else echo "no setcap (libcap2-bin): ibcap needs root, or those capabilities, to capture"; fi

clean:
	rm -rf $(BIN)
