// SPDX-License-Identifier: GPL-2.0
/*
 * vk_reno_one - the third floor of `make bench`'s per-call cost stage
 * (docs/DESIGN.md §9.1): vk_reno_rtt's work, Reno plus the per-ACK minimum
 * RTT, in ONE struct_ops call per ACK. A controller that sets cong_control
 * gets the ACK's RTT sample in the rate sample (rs->rtt_us, the sample
 * pkts_acked would have had), and the kernel then leaves to it what it does
 * for the others after cong_avoid: the window's reduction in CWR and
 * Recovery, and the pacing rate. So this floor does both, as the least a
 * one-call controller must: the pacing rate each ACK, as the kernel's
 * tcp_update_pacing_rate() (at the default ratios, 200% in slow start and
 * 120% after), and, instead of PRR, the window held in a reduction until the
 * kernel sets ssthresh at its end. It answers one question: can a
 * delay-based controller reach vk_reno_min's per-ACK cost with one call
 * (issue 15's goal is 1.3x)? Built for the bench only; the bench registers
 * it with bpftool.
 */
#define RF_MIN_RTT
#define RF_CONG_CONTROL
#include "reno_floor.bpf.h"

#define FLAG_DATA_ACKED		0x04	/* the kernel's, tcp_input.c */
#define PACING_SS_RATIO		200	/* sysctl tcp_pacing_ss_ratio's default */
#define PACING_CA_RATIO		120	/* sysctl tcp_pacing_ca_ratio's default */

SEC("struct_ops")
void BPF_PROG(ro_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u32 cwnd, inflight;
	__u64 rate;

	rf_rtt_sample(sk, rs->rtt_us);
	if (((struct inet_connection_sock *)sk)->icsk_ca_state < TCP_CA_CWR &&
	    (flag & FLAG_DATA_ACKED))
		tcp_reno_cong_avoid(sk, ack, rs->acked_sacked);

	cwnd = tp->snd_cwnd;
	inflight = tp->packets_out > cwnd ? tp->packets_out : cwnd;
	rate = (__u64)tp->mss_cache * ((1000000 / 100) << 3);
	rate *= cwnd < tp->snd_ssthresh / 2 ? PACING_SS_RATIO : PACING_CA_RATIO;
	rate *= inflight;
	if (tp->srtt_us)
		rate /= tp->srtt_us;
	sk->sk_pacing_rate = rate < sk->sk_max_pacing_rate ? rate : sk->sk_max_pacing_rate;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops vk_reno_one = {
	.init		= (void *)rf_init,
	.cong_control	= (void *)ro_cong_control,
	.ssthresh	= (void *)rf_ssthresh,
	.undo_cwnd	= (void *)rf_undo_cwnd,
	.name		= "vk_reno_one",
};
