/*
 * Vegas-A (seed 000, section IV) and PIPE (seed 002, section IV) as ns-2.35
 * agents: our reading of the papers, written for `make ns2` so that their
 * experiments can be replayed in the simulator they ran (docs/DESIGN.md §7.2).
 * The papers' own modified agent is not published with them; this is not it.
 *
 * Everything but the decision in congestion avoidance is ns-2's Vegas agent
 * (tcp/tcp-vegas.cc): the round, its average RTT, the rounded backlog `delta`,
 * the every-other-round slow start, the loss response. build.sh adds two
 * hooks to that agent: vk_round() just before a measured round's actual rate
 * (v_actual_) is computed, so the rate of the previous round is still there
 * to keep as Th'; and vk_decide(delta, rtt), asked first in congestion
 * avoidance, which takes the decision when it returns 1.
 *
 * The rules are the table of docs/DESIGN.md §3.6, as bpf/vk_core.h's
 * vk_adaptive_decide() applies them:
 *   alpha < diff < beta:  Th > Th' -> cwnd+1, alpha+1, beta+1; else hold
 *   diff < alpha (PIPE <=): alpha == 1 or Th > Th' -> cwnd+1;
 *                           Th < Th' (PIPE: <=)   -> cwnd-1, alpha-1, beta-1;
 *                           Th == Th'             -> hold
 *   diff > beta (PIPE >=):  cwnd-1, alpha-1, beta-1
 *   otherwise:              hold
 * cwnd+1 is spread over the round's ACKs (v_incr_ = 1/cwnd) and cwnd-1 taken
 * at once, as the agent does for Vegas. Th is the agent's v_actual_, packets
 * sent in the round over its RTT; Th and Th' tie when rtt * |Th - Th'|, in
 * packets per round, is under th_tie_ (0: only equal doubles tie, which on
 * ns-2's jitterless clock is what a saturated link gives round after round;
 * docs/DESIGN.md §3.10 on why the kernel needs a band).
 */
#include <stdio.h>
#include <string.h>

#include "tcp.h"

namespace {

enum Rule { R_HOLD, R_INC, R_INC_ADAPT, R_DEC_ADAPT, R_COUNT };
const char *const RULE_NAMES[R_COUNT] = {"hold", "inc", "inc_adapt", "dec_adapt"};

class AdaptiveVegasAgent : public VegasTcpAgent {
public:
	explicit AdaptiveVegasAgent(bool pipe) : pipe_(pipe), alpha_max_(64), th_tie_(0),
		rounds_(0), th_prev_(0), alpha_peak_(0), alpha_area_(0), alpha_since_(-1),
		alpha_first_(0)
	{
		memset(counts_, 0, sizeof counts_);
	}

protected:
	void delay_bind_init_all()
	{
		delay_bind_init_one("alpha_max_");
		delay_bind_init_one("th_tie_");
		VegasTcpAgent::delay_bind_init_all();
	}

	int delay_bind_dispatch(const char *var, const char *local, TclObject *tracer)
	{
		if (delay_bind(var, local, "alpha_max_", &alpha_max_, tracer))
			return TCL_OK;
		if (delay_bind(var, local, "th_tie_", &th_tie_, tracer))
			return TCL_OK;
		return VegasTcpAgent::delay_bind_dispatch(var, local, tracer);
	}

	void vk_round()
	{
		/* v_actual_ still holds the previous measured round's rate: Th' */
		th_prev_ = rounds_++ ? v_actual_ : 0;
	}

	/* Th against Th', as bpf/vk_core.h's vk_cmp_throughput_paper() */
	int th_cmp(double rtt) const
	{
		if (rounds_ < 2)
			return v_actual_ > 0 ? 1 : 0;	/* no Th' yet: 0 */
		double d = rtt * (v_actual_ - th_prev_);	/* packets per round */
		if (d > 0 && d >= th_tie_)
			return 1;
		if (d < 0 && -d >= th_tie_)
			return -1;
		return 0;
	}

	int vk_decide(int delta, double rtt)
	{
		int th = th_cmp(rtt);
		bool below = pipe_ ? delta <= v_alpha_ : delta < v_alpha_;
		bool above = pipe_ ? delta >= v_beta_ : delta > v_beta_;
		Rule r;

		if (delta > v_alpha_ && delta < v_beta_)
			r = th > 0 ? R_INC_ADAPT : R_HOLD;
		else if (below)
			r = v_alpha_ <= 1 || th > 0 ? R_INC :
			    th < 0 || pipe_ ? R_DEC_ADAPT : R_HOLD;
		else if (above)
			r = R_DEC_ADAPT;
		else
			r = R_HOLD;

		weigh_alpha();
		v_incr_ = 0;
		if (r == R_INC || r == R_INC_ADAPT)
			v_incr_ = 1 / cwnd_;
		if (r == R_INC_ADAPT && v_alpha_ < alpha_max_) {
			v_alpha_++;
			v_beta_++;
		}
		if (r == R_DEC_ADAPT) {
			--cwnd_;
			if (cwnd_ < 2)
				cwnd_ = 2;
			if (v_alpha_ > 1) {
				v_alpha_--;
				v_beta_--;
			}
		}
		if (v_alpha_ > alpha_peak_)
			alpha_peak_ = v_alpha_;
		counts_[r]++;
		return 1;
	}

	/* `$agent vk-stats`: decisions per rule, and alpha's largest, last and
	 * time-weighted mean since the first decision, as one JSON object */
	int command(int argc, const char *const *argv)
	{
		if (argc == 2 && strcmp(argv[1], "vk-stats") == 0) {
			char buf[256];
			int n = 0;
			weigh_alpha();
			double span = Scheduler::instance().clock() - alpha_first_;
			for (int i = 0; i < R_COUNT; i++)
				n += snprintf(buf + n, sizeof buf - n, "%s\"%s\": %d",
					      i ? ", " : "{", RULE_NAMES[i], counts_[i]);
			snprintf(buf + n, sizeof buf - n,
				 ", \"alpha_peak\": %d, \"alpha_last\": %d, \"alpha_mean\": %.4f}",
				 alpha_peak_, int(v_alpha_), span > 0 ? alpha_area_ / span : double(v_alpha_));
			Tcl::instance().resultf("%s", buf);	/* copied: buf is ours */
			return TCL_OK;
		}
		return VegasTcpAgent::command(argc, argv);
	}

private:
	void weigh_alpha()
	{
		double now = Scheduler::instance().clock();
		if (alpha_since_ < 0)
			alpha_first_ = now;
		else
			alpha_area_ += v_alpha_ * (now - alpha_since_);
		alpha_since_ = now;
	}

	bool pipe_;
	int alpha_max_;
	double th_tie_;
	long rounds_;
	double th_prev_;
	int counts_[R_COUNT];
	int alpha_peak_;
	double alpha_area_, alpha_since_, alpha_first_;
};

class VegasAClass : public TclClass {
public:
	VegasAClass() : TclClass("Agent/TCP/Vegas/A") {}
	TclObject *create(int, const char *const *) { return new AdaptiveVegasAgent(false); }
} class_vk_vegas_a;

class PipeClass : public TclClass {
public:
	PipeClass() : TclClass("Agent/TCP/Vegas/Pipe") {}
	TclObject *create(int, const char *const *) { return new AdaptiveVegasAgent(true); }
} class_vk_pipe;

}	/* namespace */
