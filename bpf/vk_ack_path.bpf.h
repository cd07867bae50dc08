/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vk_ack_path.bpf.h - what the kernel's ACK path does for a controller without
 * cong_control, done by one that has it (docs/DESIGN.md §3.12). A controller
 * that sets cong_control (its four-argument form, Linux >= 6.10) gets one call
 * per ACK, and the kernel then skips tcp_cong_control()'s own work and
 * tcp_end_cwnd_reduction(). Each function here is the kernel's (net/ipv4/
 * tcp_input.c, include/net/tcp.h), read from the netns sysctls where the
 * kernel reads them; the one difference is PRR's count of what was delivered
 * in a reduction, kept by the caller because tp->prr_delivered is not ours to
 * write. Used by the variants' calls=1 form and by the bench floor
 * vk_reno_one, so the floor does exactly the kernel work the variants do.
 */
#ifndef VK_ACK_PATH_BPF_H
#define VK_ACK_PATH_BPF_H

/* tcp_input.c's ACK flags (not in BTF: #defines) */
#define VK_FLAG_DATA_ACKED		0x04
#define VK_FLAG_SYN_ACKED		0x10
#define VK_FLAG_DATA_SACKED		0x20
#define VK_FLAG_SND_UNA_ADVANCED	0x400
#define VK_FLAG_FORWARD_PROGRESS	(VK_FLAG_DATA_ACKED | VK_FLAG_SYN_ACKED | VK_FLAG_DATA_SACKED)
#define VK_INFINITE_SSTHRESH		0x7fffffff

static __always_inline __u32 vk_ap_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline struct net *vk_ap_net(const struct sock *sk)
{
	return sk->__sk_common.skc_net.net;
}

/* tcp_in_cwnd_reduction(): CWR or Recovery */
static __always_inline bool vk_ap_in_reduction(const struct sock *sk)
{
	__u8 state = ((const struct inet_connection_sock *)sk)->icsk_ca_state;

	return state == TCP_CA_CWR || state == TCP_CA_Recovery;
}

/* tcp_may_raise_cwnd(): in-order delivery, or any progress under reordering */
static __always_inline bool vk_ap_may_raise(const struct sock *sk, int flag)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	if (tp->reordering > (__u32)vk_ap_net(sk)->ipv4.sysctl_tcp_reordering)
		return flag & VK_FLAG_FORWARD_PROGRESS;
	return flag & VK_FLAG_DATA_ACKED;
}

/* tcp_cwnd_reduction(): Proportional Rate Reduction (RFC 6937) */
static __always_inline void vk_ap_prr(struct sock *sk, __u32 *prr_delivered, int flag,
				      const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__s32 newly = rs->acked_sacked, delta, sndcnt;
	__u32 in_flight = vk_ap_in_flight(tp);

	if (newly <= 0 || !tp->prior_cwnd)
		return;
	*prr_delivered += newly;
	delta = (__s32)tp->snd_ssthresh - (__s32)in_flight;
	if (delta < 0) {
		sndcnt = (__s32)(((__u64)tp->snd_ssthresh * *prr_delivered +
				  tp->prior_cwnd - 1) / tp->prior_cwnd) - (__s32)tp->prr_out;
	} else {
		sndcnt = (__s32)(*prr_delivered - tp->prr_out);
		if (sndcnt < newly)
			sndcnt = newly;
		if ((flag & VK_FLAG_SND_UNA_ADVANCED) && !rs->losses)
			sndcnt++;
		if (sndcnt > delta)
			sndcnt = delta;
	}
	if (sndcnt < (tp->prr_out ? 0 : 1))	/* a fast retransmit on entering */
		sndcnt = tp->prr_out ? 0 : 1;
	tp->snd_cwnd = in_flight + sndcnt;
}

/* tcp_update_pacing_rate(): 200% of cwnd/srtt in slow start, 120% after */
static __always_inline void vk_ap_pacing(struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct net *net = vk_ap_net(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 inflight = tp->packets_out > cwnd ? tp->packets_out : cwnd;
	__u64 rate = (__u64)tp->mss_cache * ((1000000 / 100) << 3);

	rate *= cwnd < tp->snd_ssthresh / 2 ? net->ipv4.sysctl_tcp_pacing_ss_ratio
					    : net->ipv4.sysctl_tcp_pacing_ca_ratio;
	rate *= inflight;
	if (tp->srtt_us)
		rate /= tp->srtt_us;
	sk->sk_pacing_rate = rate < sk->sk_max_pacing_rate ? rate : sk->sk_max_pacing_rate;
}

/*
 * set_state runs before the kernel stores the new state. A reduction's start:
 * tcp_init_cwnd_reduction() has just zeroed the kernel's count. Its end:
 * tcp_end_cwnd_reduction(), skipped for a controller with cong_control, sets
 * the window to ssthresh in CWR, or in Recovery unless undone.
 */
static __always_inline void vk_ap_set_state(struct sock *sk, __u8 new_state,
					    __u32 *prr_delivered)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u8 old = ((struct inet_connection_sock *)sk)->icsk_ca_state;

	if (new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery) {
		*prr_delivered = 0;
	} else if ((new_state == TCP_CA_Open || new_state == TCP_CA_Disorder) &&
		   (old == TCP_CA_CWR || old == TCP_CA_Recovery) &&
		   tp->snd_ssthresh < VK_INFINITE_SSTHRESH &&
		   (old == TCP_CA_CWR || tp->undo_marker)) {
		tp->snd_cwnd = tp->snd_ssthresh;
		tp->snd_cwnd_stamp = (__u32)bpf_jiffies64();
	}
}

#endif /* VK_ACK_PATH_BPF_H */
