// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe_attrs_test.ko: the kernel's view of each device's attributes, for
 * kmod_attrs.sh to compare roxe0 with rxe0 (issue #39). A kernel ULP sees
 * struct ib_device_attr, not what ibv_devinfo prints: send and receive
 * SGEs apart, the kernel capability flags, fast-registration and
 * signature limits. Loading it prints one line per field and device,
 *
 *   roxe_attrs_test: attr DEVICE FIELD VALUE
 *
 * then one "roxe_attrs_test: done N" line, and stays loaded (rmmod it);
 * a device it cannot find fails the load (ENODEV).
 *
 *   insmod roxe_attrs_test.ko devs=rxe0,roxe0
 */
#include <linux/module.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include "ktest.h"

static char *devs = "rxe0,roxe0";
module_param(devs, charp, 0444);

#define P(field) \
	pr_info(KBUILD_MODNAME ": attr %s " #field " %llu\n", name, (u64)a->field)
#define PX(field) \
	pr_info(KBUILD_MODNAME ": attr %s " #field " 0x%llx\n", name, (u64)a->field)

static void print_attrs(const char *name, const struct ib_device_attr *a)
{
	P(max_mr_size);
	PX(page_size_cap);
	P(max_qp);
	P(max_qp_wr);
	PX(device_cap_flags);
	PX(kernel_cap_flags);
	P(max_send_sge);
	P(max_recv_sge);
	P(max_sge_rd);
	P(max_cq);
	P(max_cqe);
	P(max_mr);
	P(max_pd);
	P(max_qp_rd_atom);
	P(max_ee_rd_atom);
	P(max_res_rd_atom);
	P(max_qp_init_rd_atom);
	P(max_ee_init_rd_atom);
	P(atomic_cap);
	P(masked_atomic_cap);
	P(max_ee);
	P(max_rdd);
	P(max_mw);
	P(max_raw_ipv6_qp);
	P(max_raw_ethy_qp);
	P(max_mcast_grp);
	P(max_mcast_qp_attach);
	P(max_total_mcast_qp_attach);
	P(max_ah);
	P(max_srq);
	P(max_srq_wr);
	P(max_srq_sge);
	P(max_fast_reg_page_list_len);
	P(max_pi_fast_reg_page_list_len);
	P(max_pkeys);
	P(local_ca_ack_delay);
	PX(sig_prot_cap);
	PX(sig_guard_cap);
	PX(odp_caps.general_caps);
	PX(odp_caps.per_transport_caps.rc_odp_caps);
	PX(odp_caps.per_transport_caps.uc_odp_caps);
	PX(odp_caps.per_transport_caps.ud_odp_caps);
	PX(odp_caps.per_transport_caps.xrc_odp_caps);
	PX(timestamp_mask);
	P(hca_core_clock);
	P(max_wq_type_rq);
	PX(raw_packet_caps);
	P(cq_caps.max_cq_moderation_count);
	P(cq_caps.max_cq_moderation_period);
	P(max_dm_size);
	P(max_sgl_rd);
}

static int __init attrs_init(void)
{
	char *list, *rest, *name;
	int n = 0;

	list = kstrdup(devs, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	rest = list;
	while ((name = strsep(&rest, ",")) != NULL) {
		struct ib_device *dev = kt_device_get_by_name(name);

		CHECK(dev, "device %s", name);
		if (!dev)
			continue;
		print_attrs(name, &dev->attrs);
		ib_device_put(dev);
		n++;
	}
	kfree(list);
	pr_info(KBUILD_MODNAME ": done %d\n", n);
	return failed ? -ENODEV : 0;
}

static void __exit attrs_exit(void)
{
}

module_init(attrs_init);
module_exit(attrs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("roxe VM suite: a device's ib_device_attr, field by field");
