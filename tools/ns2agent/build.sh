#!/bin/sh
# Build ns-2.35 with our Vegas-A and PIPE agents (vk_adaptive.cc) from Debian's
# source tarball, which `make deps-ns2` downloads: `make ns2` runs this.
#   build.sh TARBALL AGENT.cc OUT_DIR     -> OUT_DIR/ns
# Debian's own patches are not served here, so the few fixes modern g++ and
# Debian's tcl/otcl/tclcl need are made below (docs/DESIGN.md §7.2).
set -eu
[ -s "$1" ] || { echo "build.sh: no $1 (make deps-ns2 fetches it)" >&2; exit 1; }
mkdir -p "$3"
TARBALL=$(realpath "$1") AGENT=$(realpath "$2") OUT=$(realpath "$3")
MA=/usr/lib/$(gcc -print-multiarch)
WORK=$OUT/src
rm -rf "$WORK"
mkdir -p "$WORK"
tar xf "$TARBALL" -C "$WORK"
cd "$WORK/ns-2.35"

# edit FILE PATTERN SED: a sed that must change FILE (the tarball is fixed, so
# an edit that no longer applies is an error, not a silent no-op)
edit() {
	grep -q -- "$2" "$1" || { echo "build.sh: $1 has no '$2'" >&2; exit 1; }
	sed -i "$3" "$1"
}

# Our agents' two hooks in ns-2's Vegas agent (vk_adaptive.cc says what each is for)
edit tcp/tcp.h 'void vegas_inflate_cwnd(int win, double current_time);' \
	'/void vegas_inflate_cwnd(int win, double current_time);/a\
	virtual void vk_round() {}\
	virtual int vk_decide(int, double) { return 0; }'
edit tcp/tcp-vegas.cc 'v_actual_ = double(rttLen)/rtt;' \
	's|v_actual_ = double(rttLen)/rtt;|vk_round(); &|'
edit tcp/tcp-vegas.cc '} else { // congestion avoidance' \
	's|} else { // congestion avoidance|} else if (vk_decide(delta, rtt)) { } else {|'
# vk_halve_ (default 0): the agent's fast-retransmit cut at a half instead of its quarter,
# a diagnostic of alpha_beta_sweep's windows (ns2/script.py's vegas_halve variant)
edit tcp/tcp.h 'virtual void vk_round() {}' '/virtual void vk_round() {}/i\
	int vk_halve_;'
edit tcp/tcp-vegas.cc 'delay_bind_init_one("v_rtt_");' \
	's|delay_bind_init_one("v_rtt_");|&\n\tdelay_bind_init_one("vk_halve_");|'
edit tcp/tcp-vegas.cc '"v_rtt_", &v_rtt_, tracer)' \
	's|^\( *\)if (delay_bind(varName, localName, "v_rtt_", &v_rtt_, tracer))|\1if (delay_bind(varName, localName, "vk_halve_", \&vk_halve_, tracer)) return TCL_OK;\n&|'
edit tcp/tcp-vegas.cc 'win -= (win>>2);' 's|win -= (win>>2);|win -= vk_halve_ ? (win>>1) : (win>>2);|'
edit tcl/lib/ns-default.tcl 'Agent/TCP/Vegas set v_rtt_ 0' \
	'/Agent\/TCP\/Vegas set v_rtt_ 0/a\
Agent/TCP/Vegas set vk_halve_ 0'
cp "$AGENT" tcp/vk_adaptive.cc
edit Makefile.in 'tcp/tcp-vegas.o ' 's|tcp/tcp-vegas.o |& tcp/vk_adaptive.o |'

# configure probes allinone paths: tclcl's headers are under /usr/include/tclcl,
# the tcl/tk/otcl/tclcl libraries under the multiarch directory
edit configure '^TCLCL_H_PLACES="' 's|^TCLCL_H_PLACES="|&/usr/include/tclcl |'
x_libs=$MA ./configure --x-libraries="$MA" >configure.log 2>&1 ||
	{ tail -n 5 configure.log >&2; exit 1; }

# Debian's tclcl binds no int64_t: bind those counters as int, as Debian's ns does
edit packmime/packmime_OL.h 'int64_t maxpkts_;' 's/int64_t maxpkts_;/int maxpkts_;/'
edit packmime/packmime_OL.cc 'int64_t maxpkts_;' 's/int64_t maxpkts_;/int maxpkts_;/'
edit tools/queue-monitor.h 'defined(HAVE_INT64)' 's/defined(HAVE_INT64)/0/'
edit tools/flowmon.cc 'STRTOI64_FMTSTR' 's/STRTOI64_FMTSTR/"%d"/g'

# -O2: configure's gcc version test drops it for gcc 12; USE_INTERP_RESULT: tclcl.h
# still reads interp->result; gnu++98 and -fpermissive: the 2011 sources
CFLAGS="-O2 -DUSE_INTERP_RESULT" make -j"$(nproc)" ns CPP="g++ -std=gnu++98 -fpermissive" \
	>make.log 2>&1 || { grep -m5 -i error make.log >&2; exit 1; }
cp ns "$OUT/ns.new"
mv "$OUT/ns.new" "$OUT/ns"
