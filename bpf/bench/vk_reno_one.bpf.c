// SPDX-License-Identifier: GPL-2.0
/*
 * vk_reno_one - the third floor of `make bench`'s per-call cost stage
 * (docs/DESIGN.md §9.1): vk_reno_rtt's work, Reno plus the per-ACK minimum
 * RTT, in ONE struct_ops call per ACK. A controller that sets cong_control
 * (this four-argument form: Linux >= 6.10) gets the ACK's RTT sample in the
 * rate sample (rs->rtt_us, the sample pkts_acked would have had), and the
 * kernel then leaves to it all that tcp_cong_control() and
 * tcp_end_cwnd_reduction() do for the others: growth where the state allows
 * it, PRR's reduction in CWR and Recovery, the window set to ssthresh at a
 * reduction's end, and the pacing rate. This floor does each as the kernel
 * does (tcp_input.c), at the sysctls' default pacing ratios, and leaves out
 * only growth on any forward progress under heavy reordering. It answers one
 * question: can a delay-based controller reach vk_reno_min's per-ACK cost with
 * one call (issue 15's goal is 1.3x)? Built for the bench only; the bench
 * registers it with bpftool where the kernel takes it.
 */
#define RF_MIN_RTT
#define RF_CONG_CONTROL
#include "reno_floor.bpf.h"

/* the kernel's (tcp_input.c, include/net/tcp.h) */
#define FLAG_DATA_ACKED		0x04
#define FLAG_SND_UNA_ADVANCED	0x400
#define TCP_INFINITE_SSTHRESH	0x7fffffff
#define PACING_SS_RATIO		200	/* sysctl tcp_pacing_ss_ratio's default */
#define PACING_CA_RATIO		120	/* sysctl tcp_pacing_ca_ratio's default */

static __always_inline __u32 ro_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* tcp_cwnd_reduction(): PRR, with our own count of what was delivered in it */
static __always_inline void ro_prr(struct sock *sk, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct rf_ca *ca = rf_ca(sk);
	__s32 newly = rs->acked_sacked, delta, sndcnt;
	__u32 in_flight = ro_in_flight(tp);

	if (newly <= 0 || !tp->prior_cwnd)
		return;
	ca->prr_delivered += newly;
	delta = (__s32)tp->snd_ssthresh - (__s32)in_flight;
	if (delta < 0) {
		sndcnt = (__s32)(((__u64)tp->snd_ssthresh * ca->prr_delivered +
				  tp->prior_cwnd - 1) / tp->prior_cwnd) - (__s32)tp->prr_out;
	} else {
		sndcnt = (__s32)(ca->prr_delivered - tp->prr_out);
		if (sndcnt < newly)
			sndcnt = newly;
		if ((flag & FLAG_SND_UNA_ADVANCED) && !rs->losses)
			sndcnt++;
		if (sndcnt > delta)
			sndcnt = delta;
	}
	if (sndcnt < (tp->prr_out ? 0 : 1))	/* a fast retransmit on entering */
		sndcnt = tp->prr_out ? 0 : 1;
	tp->snd_cwnd = in_flight + sndcnt;
}

SEC("struct_ops")
void BPF_PROG(ro_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u8 state = ((struct inet_connection_sock *)sk)->icsk_ca_state;
	__u32 cwnd, inflight;
	__u64 rate;

	rf_rtt_sample(sk, rs->rtt_us);
	if (state == TCP_CA_CWR || state == TCP_CA_Recovery) {
		ro_prr(sk, flag, rs);
	} else if (flag & FLAG_DATA_ACKED) {	/* tcp_may_raise_cwnd() */
		tcp_reno_cong_avoid(sk, ack, rs->acked_sacked);
		tp->snd_cwnd_stamp = (__u32)bpf_jiffies64();
	}

	/* tcp_update_pacing_rate() */
	cwnd = tp->snd_cwnd;
	inflight = tp->packets_out > cwnd ? tp->packets_out : cwnd;
	rate = (__u64)tp->mss_cache * ((1000000 / 100) << 3);
	rate *= cwnd < tp->snd_ssthresh / 2 ? PACING_SS_RATIO : PACING_CA_RATIO;
	rate *= inflight;
	if (tp->srtt_us)
		rate /= tp->srtt_us;
	sk->sk_pacing_rate = rate < sk->sk_max_pacing_rate ? rate : sk->sk_max_pacing_rate;
}

/*
 * A reduction's start (tcp_init_cwnd_reduction() zeroes the kernel's count just
 * before CWR or Recovery is set) and end: tcp_end_cwnd_reduction(), skipped for a
 * controller with cong_control, sets ssthresh in CWR, or in Recovery unless undone.
 * set_state runs before the kernel stores the new state.
 */
SEC("struct_ops")
void BPF_PROG(ro_set_state, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u8 old = ((struct inet_connection_sock *)sk)->icsk_ca_state;

	if (new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery) {
		rf_ca(sk)->prr_delivered = 0;
	} else if ((new_state == TCP_CA_Open || new_state == TCP_CA_Disorder) &&
		   (old == TCP_CA_CWR || old == TCP_CA_Recovery) &&
		   tp->snd_ssthresh < TCP_INFINITE_SSTHRESH &&
		   (old == TCP_CA_CWR || tp->undo_marker)) {
		tp->snd_cwnd = tp->snd_ssthresh;
		tp->snd_cwnd_stamp = (__u32)bpf_jiffies64();
	}
}

SEC(".struct_ops.link")
struct tcp_congestion_ops vk_reno_one = {
	.init		= (void *)rf_init,
	.cong_control	= (void *)ro_cong_control,
	.set_state	= (void *)ro_set_state,
	.ssthresh	= (void *)rf_ssthresh,
	.undo_cwnd	= (void *)rf_undo_cwnd,
	.name		= "vk_reno_one",
};
