# castlab: one command sets up and runs the main job, one sets up and runs every test.
#   make demo   set up, build, run the demo and reproduce RLM's Fig. 8
#   make test   set up, build, run the Rust tests and the Python tests
#   make bench  the engine benchmarks (release, whole-program optimisation) and ns-2 beside them
# Needs python3 (with venv) and a Rust toolchain (1.89 or newer, the workspace's rust-version); everything else is installed into .venv.

VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
OUT    ?= out
export CARGO_TERM_COLOR ?= never

.PHONY: setup system-deps norm build stub demo test test-rust test-rust-build test-python bench reproduce-all clean-out

# System packages: iproute2 (ip, tc), igmpproxy (the testbed's multicast routing), iperf3 (kernel
# TCP cross traffic), ns2 (the independent reference some tests compare with), tshark (reads
# castlab's captures), python3-zmq and libzmq5 (ZeroMQ's epgm: the OpenPGM peers of the PGM
# interop tests, run by the system python3), uftp (UFTP's TFMCC: uftp and uftpd), libnorm-dev and
# g++ (NORM-CC: contrib/norm/castlab_norm.cpp is built against the packaged normApi.h), chromium
# (headless, the browser test of report.html). Installed with apt when root and apt are there and
# something is missing; otherwise the tests that need them skip with the reason.
SYSTEM_TOOLS := ip:iproute2 tc:iproute2 igmpproxy:igmpproxy iperf3:iperf3 ns:ns2 tshark:tshark uftp:uftp uftpd:uftp g++:g++ \
	chromium:chromium
system-deps:
	@missing=""; for t in $(SYSTEM_TOOLS); do command -v $${t%%:*} >/dev/null || missing="$$missing $${t##*:}"; done; \
	/usr/bin/python3 -c "import zmq" 2>/dev/null || missing="$$missing python3-zmq libzmq5"; \
	[ -f /usr/include/normApi.h ] || missing="$$missing libnorm-dev"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing$$missing"; \
		echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
		|| echo "apt-get could not install$$missing: the tests that need them will skip"; \
	else echo "not installing$$missing (needs root and apt): the tests that need them will skip"; fi

$(VENV)/.deps: pyproject.toml
	@command -v cargo >/dev/null || { echo "castlab needs a Rust toolchain (cargo): install it with rustup"; exit 1; }
	python3 -m venv $(VENV) || { command -v apt-get >/dev/null && apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv $(VENV); }
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2" "numpy>=1.23" "pandas>=1.5" "matplotlib>=3.6" "scipy>=1.9" "pyarrow>=12" "tqdm>=4.60" \
		"pytest>=7" "hypothesis>=6" "dask[distributed]>=2023.1"
	touch $@

setup: $(VENV)/.deps system-deps

# The NORM peer of net-peers (castlab-norm, next to the venv's python, where the experiments look
# for it): built from its source when g++ and libnorm's header are there, else skipped with the
# reason (the experiments then skip NORM's row).
NORM_BIN := $(VENV)/bin/castlab-norm
norm: setup
	@if command -v g++ >/dev/null && [ -f /usr/include/normApi.h ]; then \
		$(MAKE) --no-print-directory $(NORM_BIN); \
	else echo "not building castlab-norm (needs g++ and libnorm-dev): NORM's experiments will skip"; fi

$(NORM_BIN): contrib/norm/castlab_norm.cpp
	g++ -O2 -Wall -o $@ $< -lnorm

# Builds the Rust extension in release mode and installs castlab (editable) into .venv.
# PIP_QUIET: maturin runs pip, which its own --quiet does not reach.
build: setup norm
	PIP_QUIET=1 $(VENV)/bin/maturin develop --release --quiet

# The registry's generated stubs (castlab/_registered.pyi, castlab/functions.pyi), rewritten after a
# role, reader or function changes in Rust: tests/api/test_stub.py fails until they are.
stub: build
	$(PY) -m castlab._stub

demo: build
	$(VENV)/bin/castlab run
	$(VENV)/bin/castlab reproduce rlm-fig8 --out $(OUT)/rlm-fig8
	@echo "castlab is installed in $(VENV): run \`. $(VENV)/bin/activate\` once per shell for \`castlab\` and its \`python\`"

# The two compilations (the Rust tests' debug build, and set-up + the extension's release
# build) run side by side: neither uses both cores all the time (pip, single-codegen-unit crates,
# links). The tests then run one after the other, on a quiet machine (some are timed).
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-rust-build build
	cargo test --workspace --exclude castlab-py
	$(VENV)/bin/pytest -q tests

test-rust-build:
	cargo test --workspace --exclude castlab-py --no-run

test-rust:
	cargo test --workspace --exclude castlab-py

test-python: build
	$(VENV)/bin/pytest -q tests

# Then the whole-process comparison (castlab's Rust engine, castlab from Python
# when built, and ns-2 when Debian's `ns2` is installed) on the CBR star: bench/compare.py.
bench:
	cargo bench -p castlab-sim --bench engine
	@# ns per delivered packet on the CBR star at 100 ... 100,000 receivers, about 7.4 M
	@# deliveries each (CASTLAB_BENCH_MILLION=1: also 1,000,000)
	cargo bench -p castlab-sim --bench engine -- scale
	@# ... and the LE-SBCC source's state at 10^4, 10^5 receivers (CASTLAB_BENCH_MILLION=1: also 10^6)
	cargo bench -p castlab-sim --bench protocols
	@# the RLM star's scale table: 10^2, 10^3 receivers for 120 s, 10^4 for 20 s (events, events per
	@# receiver, ns per event, memory per receiver)
	python3 bench/rlm_scale.py
	@# a BCF router's memory and time per request and reply (the BCFS paper's open question)
	cargo bench -p castlab-sim --bench bcfs
	@# the user-space router's sustained packets/s and added latency, and (bcf_router_bench, which the
	@# filter also runs) a hosted BCF router's memory and CPU per frame (root; skips otherwise)
	cargo test --release -p castlab-net --test router -- --ignored --nocapture router_bench
	python3 bench/compare.py

reproduce-all: build
	$(VENV)/bin/castlab reproduce --all --out $(OUT)
