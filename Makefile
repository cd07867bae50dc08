# vegaskit: build, deps, test, demo, bench, results.
# `make` builds; `sudo make test` and `sudo make demo` are the two commands a
# newcomer needs (both install what they need through `make deps`).

CLANG	?= clang
BPFTOOL	?= bpftool
CC	?= gcc
BUILD	:= build
VENV	:= .venv
PY	:= $(VENV)/bin/python
PYTEST_ARGS ?=

VARIANTS	:= $(patsubst bpf/%.bpf.c,%,$(wildcard bpf/bpf_*.bpf.c))
HELPERS		:= vk_flows_iter vk_swap_iter vk_probe
BPF_HDRS	:= $(wildcard bpf/*.h)
BPF_OBJS	:= $(VARIANTS:%=$(BUILD)/%.bpf.o) $(HELPERS:%=$(BUILD)/%.bpf.o)
LOADER_SRCS	:= $(wildcard loader/*.c)
LOADER_HDRS	:= $(wildcard loader/*.h)
LINKEMU_SRCS	:= $(wildcard tools/linkemu/*.c tools/linkemu/*.h)
# Python constants generated from the BPF/userspace contract (tools/gen_intf.py)
INTF_PY		:= tools/vegaskit/intf.py
CFLAGS		?= -O2 -g -Wall -Wextra -Wno-unused-parameter
LIBBPF_LIBS	= $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)

.PHONY: all deps deps-vm deps-ns2 install uninstall test test-unit demo results ns2 vegas-plus model-validation bench clean vm-test vm-systemd native-ab concurrency fifo-ab fuzz reliability
.DELETE_ON_ERROR:

all: $(BUILD)/vegasctl $(BUILD)/vegasctl.8 $(BUILD)/libvkcore.so $(BUILD)/linkemu $(INTF_PY) \
     $(BUILD)/bench/vk_reno_min.bpf.o $(BUILD)/bench/vk_reno_rtt.bpf.o $(BUILD)/bench/vk_reno_one.bpf.o

$(BUILD):
	mkdir -p $@

# CO-RE: the one header of kernel types, from the running kernel's BTF.
$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_x86 -I$(BUILD) -Ibpf -c $< -o $@

# The manual, from vegasctl's own --help texts (tools/gen_man.py).
$(BUILD)/vegasctl.8: $(BUILD)/vegasctl tools/gen_man.py
	python3 tools/gen_man.py $(BUILD)/vegasctl > $@

# make install [PREFIX=/usr/local] [DESTDIR=...]: vegasctl, its manual, the trace
# tools, vegaskit.service and an example configuration (docs/DESIGN.md §4.8).
# The configuration itself is the operator's: never written, never removed.
PREFIX		?= /usr/local
SYSCONFDIR	?= /etc
SBINDIR		:= $(PREFIX)/sbin
UNITDIR		?= $(PREFIX)/lib/systemd/system
SHAREDIR	:= $(PREFIX)/share/vegaskit
TRACE_TOOLS	:= $(notdir $(wildcard tools/trace/*.py tools/trace/*.bt))
INSTALLED	:= $(SBINDIR)/vegasctl $(PREFIX)/share/man/man8/vegasctl.8 \
		   $(UNITDIR)/vegaskit.service $(SHAREDIR)/vegaskit.toml.example \
		   $(SHAREDIR)/vegaskit.default \
		   $(TRACE_TOOLS:%=$(SHAREDIR)/trace/%) \
		   $(patsubst %,$(SBINDIR)/vegaskit-%,$(basename $(filter-out tracecommon.py,$(TRACE_TOOLS))))

install: $(BUILD)/vegasctl $(BUILD)/vegasctl.8
	install -D -m 0755 $(BUILD)/vegasctl $(DESTDIR)$(SBINDIR)/vegasctl
	install -D -m 0644 $(BUILD)/vegasctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/vegasctl.8
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SHAREDIR)/trace
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		tools/systemd/vegaskit.service.in > $(DESTDIR)$(UNITDIR)/vegaskit.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/vegaskit.service
	install -m 0644 tools/systemd/vegaskit.toml.example tools/systemd/vegaskit.default \
		$(DESTDIR)$(SHAREDIR)/
	install -m 0755 $(addprefix tools/trace/,$(TRACE_TOOLS)) $(DESTDIR)$(SHAREDIR)/trace/
	chmod 0644 $(DESTDIR)$(SHAREDIR)/trace/tracecommon.py
	# the tools by name: .bt are bpftrace's, .py bcc's (tcpcwnd -> vegaskit-tcpcwnd, -bt)
	for t in $(basename $(filter %.py,$(filter-out tracecommon.py,$(TRACE_TOOLS)))); do \
		ln -sf ../share/vegaskit/trace/$$t.py $(DESTDIR)$(SBINDIR)/vegaskit-$$t; done
	for t in $(basename $(filter %.bt,$(TRACE_TOOLS))); do \
		ln -sf ../share/vegaskit/trace/$$t.bt $(DESTDIR)$(SBINDIR)/vegaskit-$$t-bt; done
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/vegaskit $(DESTDIR)$(SYSCONFDIR)/default
	test -e $(DESTDIR)$(SYSCONFDIR)/default/vegaskit || \
		install -m 0644 tools/systemd/vegaskit.default $(DESTDIR)$(SYSCONFDIR)/default/vegaskit
	@echo "installed under $(DESTDIR)$(PREFIX); configure $(SYSCONFDIR)/vegaskit/vegaskit.toml" \
		"(example: $(SHAREDIR)/vegaskit.toml.example), then: systemctl enable --now vegaskit"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) \
		$(patsubst %,$(DESTDIR)$(SBINDIR)/vegaskit-%-bt,$(basename $(filter %.bt,$(TRACE_TOOLS))))
	-rmdir $(DESTDIR)$(SHAREDIR)/trace $(DESTDIR)$(SHAREDIR) 2>/dev/null
	@echo "left alone: $(SYSCONFDIR)/vegaskit and $(SYSCONFDIR)/default/vegaskit (the operator's)"

# The bench's floors: a minimal BPF reno, and that plus a per-ACK minimum RTT; never
# embedded (tools/vegaskit/bench/opcost.py).
$(BUILD)/bench/%.bpf.o: bpf/bench/%.bpf.c bpf/bench/reno_floor.bpf.h bpf/vk_ack_path.bpf.h $(BUILD)/vmlinux.h
	mkdir -p $(BUILD)/bench
	$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_x86 -I$(BUILD) -Ibpf -c $< -o $@

# vegasctl embeds the objects (loader/embed.h), so it runs from anywhere.
$(BUILD)/vegasctl: $(LOADER_SRCS) $(LOADER_HDRS) bpf/vk_intf.h $(BPF_OBJS)
	$(CC) $(CFLAGS) -I$(BUILD) $(LOADER_SRCS) -o $@ $(LIBBPF_LIBS)

# The pure-C decision core as a shared library, driven by the unit tests.
$(BUILD)/libvkcore.so: bpf/tests/vk_core_shim.c $(BPF_HDRS) | $(BUILD)
	$(CC) $(CFLAGS) -shared -fPIC -Ibpf $< -o $@

$(INTF_PY): bpf/vk_intf.h tools/gen_intf.py
	python3 tools/gen_intf.py $< $@

# The testbed's link emulator (delay line, rate, drop-tail queue, loss).
$(BUILD)/linkemu: $(LINKEMU_SRCS) | $(BUILD)
	$(CC) $(CFLAGS) $(filter %.c,$^) -o $@ -lm

deps:
	@bash tools/deps.sh

# What make vm-test needs on top: qemu, busybox, kmod and virtme-ng (tools/deps.sh).
deps-vm:
	@WITH_VM=1 bash tools/deps.sh

test: deps all
	$(PY) -m pytest $(PYTEST_ARGS)

# The fuzz stage at length: generated scenario files and vegasctl command lines
# (make test runs a fixed, shorter set of the same). FUZZ_EXAMPLES per test.
FUZZ_EXAMPLES ?= 5000
fuzz: deps all
	VK_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tools/tests/test_fuzz_scenarios.py \
		netns-tests/tests/test_fuzz_vegasctl.py $(PYTEST_ARGS)

# The hardening figures (issue 12): every test marked `reliability` run and
# counted into results/reliability/report.md (bad inputs, races, kill points).
reliability: deps all
	$(PY) -m vegaskit.cli.reliability $(PYTEST_ARGS)

# Pure logic only (no root, no kernel, no BTF): the decision core, metrics, the model.
test-unit: $(BUILD)/libvkcore.so $(INTF_PY) $(BUILD)/vegasctl $(BUILD)/vegasctl.8
	$(PY) -m pytest -m "not kernel" $(PYTEST_ARGS)

demo: deps all
	$(PY) -m vegaskit.cli.demo

# The papers' experiments: every scenario (or SCENARIOS=a.toml b.toml), full profile.
PROFILE   ?= full
SCENARIOS ?= $(filter-out demo.toml model_validation%.toml,$(notdir $(wildcard netns-tests/scenarios/*.toml)))
# JOBS=N runs N at once (docs/DESIGN.md §7.1); REPS=N overrides the profile's;
# RUNS="a b" reruns only those runs, merged into the reports beside the others.
# TRACE_ALL=1 traces every repetition, not only the first: decisions per rule and alpha.
JOBS      ?= 1
results: deps all
	$(PY) -m vegaskit.cli.results $(addprefix netns-tests/scenarios/,$(SCENARIOS)) \
		--profile $(PROFILE) --out results --jobs $(JOBS) $(if $(REPS),--reps $(REPS)) \
		$(foreach r,$(RUNS),--run $(r)) $(if $(TRACE_ALL),--trace-all)

# The same runs in ns-2, the simulator the papers used, beside the paper's figures and
# Linux's (docs/DESIGN.md §7.2): the stock agents in Debian's ns, and Vegas-A and PIPE
# (ours, tools/ns2agent/) in an ns built from Debian's source. Only the deps need root.
# Writes results/ns2/. NS2_VARIANTS="text open_window" reruns only those settings (not
# VARIANTS: that is the BPF controllers' list above), RUNS="a b" only those runs; a
# diagnostic variant (newreno_quarter, newreno_abc, linux_like_ack_every, vegas_halve)
# runs only when named there.
NS2_VARIANTS ?=
NS2_TARBALL := $(BUILD)/ns2/deb/ns2_2.35+dfsg.orig.tar.xz
ns2: deps deps-ns2 all $(BUILD)/ns2/ns
	$(PY) -m vegaskit.cli.ns2 $(addprefix netns-tests/scenarios/,$(SCENARIOS)) \
		--profile $(PROFILE) $(foreach v,$(NS2_VARIANTS),--variant $(v)) \
		$(foreach r,$(RUNS),--run $(r))

# What the ns-2 build needs: the compilers' libraries and Debian's source (tools/deps.sh).
deps-ns2:
	@WITH_NS2=1 NS2_SRC=$(dir $(NS2_TARBALL)) bash tools/deps.sh

$(BUILD)/ns2/ns: tools/ns2agent/build.sh tools/ns2agent/vk_adaptive.cc
	sh tools/ns2agent/build.sh $(NS2_TARBALL) tools/ns2agent/vk_adaptive.cc $(BUILD)/ns2

# vegas_plus against issue 17's goals beside vegas, vegas_a, cubic and bbr
# (docs/DESIGN.md §7.3): CASES, NETS, CCS rerun only those and merge into
# results/vegas_plus/; JOBS=N runs N at once; TRACE_ALL=1 traces every
# repetition, not only the first.
CASES ?=
NETS ?=
CCS ?=
vegas-plus: deps all
	$(PY) -m vegaskit.cli.vegas_plus $(foreach c,$(CASES),--case $(c)) \
		$(foreach n,$(NETS),--net $(n)) $(foreach c,$(CCS),--cc $(c)) \
		$(if $(TRACE_ALL),--trace-all)

# Whether runs side by side change results (decides JOBS; docs/DESIGN.md §7.1).
concurrency: deps all
	$(PY) -m vegaskit.cli.concurrency

# Whether SCHED_FIFO for the emulators changes the runs (decision 42; docs/DESIGN.md §7.1).
fifo-ab: deps all
	$(PY) -m vegaskit.cli.fifo_ab

# The Samios-Vernon model against our own flows (seed 001, section 4). JOBS=N runs N at once.
model-validation: deps all
	$(PY) -m vegaskit.cli.model_validation --profile $(PROFILE) --jobs $(JOBS) \
		$(foreach f,$(FAMILIES),--family $(f))

# Speed: per-call cost, CPU per GB vs reno/cubic, tracing cost, emulator, swap time, flows.
# BENCH_ROUNDS=N, BENCH_SECONDS=S; STAGES="swap flows" reruns only those stages.
BENCH_ROUNDS  ?= 6
BENCH_SECONDS ?= 4
bench: deps all
	$(PY) -m vegaskit.cli.bench --rounds $(BENCH_ROUNDS) --seconds $(BENCH_SECONDS) \
		$(foreach s,$(STAGES),--stage $(s))

clean:
	rm -rf $(BUILD) $(INTF_PY)

# Other kernels, each booted under qemu (TCG) by virtme-ng with this host's root fs:
# KERNEL=bookworm|backports|host|linux-image-... (several: KERNEL="bookworm host";
# default: bookworm's 6.1, bookworm-backports' 6.12 and the running kernel's features).
# VM_TESTS= pytest arguments (default: the core's tests, the feature probe, test_vegasctl.py and the
# other kernel tests that fit TCG: tools/vegaskit/cli/vm_test.py SMOKE);
# VM_TIMEOUT= seconds per kernel. Writes results/kernels/report.md.
# make deps-vm installs qemu, busybox and virtme-ng, only for this target.
KERNEL     ?=
VM_TESTS   ?=
VM_TIMEOUT ?= 1800
vm-test: export VM_TESTS := $(VM_TESTS)
vm-test: export VM_TIMEOUT := $(VM_TIMEOUT)
vm-test: deps-vm all
	$(PY) -m vegaskit.cli.vm_test $(KERNEL)

# vegaskit.service on a real systemd boot, twice (docs/DESIGN.md §4.8): a Debian kernel
# (KERNEL=, default bookworm-backports' 6.12) booted like vm-test with systemd as PID 1
# and vegaskit installed and enabled in a stage overlaid on the guest's /etc and
# /usr/local. Writes results/systemd/report.md.
vm-systemd: deps-vm all
	$(PY) -m vegaskit.cli.vm_systemd

# bpf_vegas against the kernel's own tcp_vegas (docs/DESIGN.md §10.1), in a Debian kernel
# that ships tcp_vegas.ko (KERNEL=, default bookworm-backports' 6.12) booted like vm-test;
# AB_REPS= runs per arm and scenario (default 8). Writes results/native-ab/.
AB_REPS ?= 8
native-ab: deps-vm all
	$(PY) -m vegaskit.cli.native_ab $(or $(KERNEL),backports) --reps $(AB_REPS)
