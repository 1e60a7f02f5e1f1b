// SPDX-License-Identifier: GPL-2.0-only
/*
 * Port counters (`rdma statistic show link roxe0/1`, sysfs hw_counters):
 * roxed's per-port totals, which it stores in the shared area about once
 * a second (struct roxe_kabi_port_stats). Reading them never waits for
 * roxed: a stopped roxed leaves the last values. They are only numbers
 * to us, whatever roxed wrote. Names are rxe's where they mean the same.
 * After them, the module's own: the command channel's (chan.c), and the
 * doorbells that found their engine's ring full (datapath.c).
 */
#include "roxe.h"

enum {
	ROXE_MSTAT_TURN_MAX = ROXE_KSTAT__COUNT,
	ROXE_MSTAT_CAP_WAITS,
	ROXE_MSTAT_DB_OVERFLOWS,
	ROXE_MSTAT__END
};

static const struct rdma_stat_desc roxe_counter_descs[] = {
	[ROXE_KSTAT_SENT_PKTS].name		= "sent_pkts",
	[ROXE_KSTAT_RCVD_PKTS].name		= "rcvd_pkts",
	[ROXE_KSTAT_SENT_BYTES].name		= "sent_bytes",
	[ROXE_KSTAT_RCVD_BYTES].name		= "rcvd_bytes",
	[ROXE_KSTAT_DUP_REQ].name		= "duplicate_request",
	[ROXE_KSTAT_OOS_REQ].name		= "out_of_seq_request",
	[ROXE_KSTAT_RCVD_RNR].name		= "rcvd_rnr_err",
	[ROXE_KSTAT_SEND_RNR].name		= "send_rnr_err",
	[ROXE_KSTAT_RCVD_SEQ_ERR].name		= "rcvd_seq_err",
	[ROXE_KSTAT_SENT_SEQ_ERR].name		= "send_seq_err",
	[ROXE_KSTAT_RCVD_NAKS].name		= "rcvd_naks",
	[ROXE_KSTAT_SENT_NAKS].name		= "sent_naks",
	[ROXE_KSTAT_RETRANSMITS].name		= "retransmits",
	[ROXE_KSTAT_TIMEOUTS].name		= "ack_timeouts",
	[ROXE_KSTAT_ICRC_ERR].name		= "icrc_err",
	[ROXE_KSTAT_RX_DROP_ADDR].name		= "rx_drop_addr",
	[ROXE_KSTAT_RX_DROP_NO_SOCKET].name	= "rx_drop_no_socket",
	[ROXE_KSTAT_RX_DROP_MALFORMED].name	= "rx_drop_malformed",
	[ROXE_KSTAT_LOOPBACK].name		= "loopback_pkts",
	[ROXE_KSTAT_LOOPBACK_DROP].name		= "loopback_drop",
	[ROXE_KSTAT_ECN_MARKED].name		= "ecn_marked",
	[ROXE_KSTAT_CNP_SENT].name		= "cnp_sent",
	[ROXE_KSTAT_CNP_RCVD].name		= "cnp_received",
	[ROXE_KSTAT_UPDATES].name		= "stats_updates",
	[ROXE_KSTAT_CC_RATE_CUTS].name		= "cc_rate_cuts",
	[ROXE_MSTAT_TURN_MAX].name		= "cmd_turn_max",
	[ROXE_MSTAT_CAP_WAITS].name		= "cmd_cap_waits",
	[ROXE_MSTAT_DB_OVERFLOWS].name		= "db_overflows",
};

static_assert(ARRAY_SIZE(roxe_counter_descs) == ROXE_MSTAT__END);
static_assert(ROXE_KSTAT__COUNT <= ROXE_KABI_MAX_STATS);

struct rdma_hw_stats *roxe_alloc_hw_port_stats(struct ib_device *ib, u32 port)
{
	return rdma_alloc_hw_stats_struct(roxe_counter_descs, ARRAY_SIZE(roxe_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int roxe_get_hw_stats(struct ib_device *ib, struct rdma_hw_stats *stats, u32 port, int index)
{
	struct roxe_dev *rdev = to_rdev(ib);
	u64 overflows = 0;
	int i;

	if (!stats || port != 1)
		return -EINVAL;
	/* the area lives as long as the device (roxe_shared_alloc) */
	for (i = 0; i < ROXE_KSTAT__COUNT && i < stats->num_counters; i++)
		stats->value[i] = READ_ONCE(rdev->shared->stats.val[i]);
	if (stats->num_counters < ROXE_MSTAT__END)
		return i;
	stats->value[ROXE_MSTAT_TURN_MAX] = roxe_chan_turn_max(&rdev->chan);
	stats->value[ROXE_MSTAT_CAP_WAITS] = roxe_chan_cap_waits(&rdev->chan);
	/* a doorbell's count, read without its lock: only a number */
	for (i = 0; i < ROXE_KABI_MAX_ENGINES; i++)
		overflows += READ_ONCE(rdev->db[i].overflows);
	stats->value[ROXE_MSTAT_DB_OVERFLOWS] = overflows;
	return ROXE_MSTAT__END;
}
