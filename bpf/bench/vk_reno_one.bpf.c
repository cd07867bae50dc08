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
 * reduction's end, and the pacing rate. This floor does each with the code
 * the variants' calls=1 form uses (bpf/vk_ack_path.bpf.h). It answers one
 * question: what does one call per ACK cost beside vk_reno_min's two kernel
 * calls (issue 15's goal is 1.3x)? Built for the bench only; the bench
 * registers it with bpftool where the kernel takes it.
 */
#define RF_MIN_RTT
#define RF_CONG_CONTROL
#include "reno_floor.bpf.h"

#include "vk_ack_path.bpf.h"

SEC("struct_ops")
void BPF_PROG(ro_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	rf_rtt_sample(sk, rs->rtt_us);
	if (vk_ap_in_reduction(sk)) {
		vk_ap_prr(sk, &rf_ca(sk)->prr_delivered, flag, rs);
	} else if (vk_ap_may_raise(sk, flag)) {
		tcp_reno_cong_avoid(sk, ack, rs->acked_sacked);
		tp->snd_cwnd_stamp = (__u32)bpf_jiffies64();
	}
	vk_ap_pacing(sk);
}

SEC("struct_ops")
void BPF_PROG(ro_set_state, struct sock *sk, __u8 new_state)
{
	vk_ap_set_state(sk, new_state, &rf_ca(sk)->prr_delivered);
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
