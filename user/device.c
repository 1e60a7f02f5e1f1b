// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The device: engines and their ports, the QP and MR tables, addressing,
 * and what query_device/query_port report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "engine.h"

static void dev_free(struct roxe_device *dev)
{
	for (unsigned i = 0; i < dev->nengines; i++)
		if (dev->engines[i].efd > 0)
			close(dev->engines[i].efd);
	if (dev->async_efd > 0)
		close(dev->async_efd);
	free((void *)dev->qps);
	free((void *)dev->mrs);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->async_lock);
	free(dev);
}

int roxe_device_open(const struct roxe_device_attr *attr, struct roxe_device **out)
{
	struct roxe_device *dev;
	unsigned n;
	int err;

	if (!attr || !out)
		return -EINVAL;
	if (attr->backend != ROXE_BACKEND_PORTS)
		return -EOPNOTSUPP;	/* AF_XDP and UDP ports: user/port_afxdp.c, port_udp.c */
	n = attr->engines ? attr->engines : 1;
	if (n > ROXE_MAX_ENGINES || !attr->ports)
		return -EINVAL;
	if (attr->mtu && (attr->mtu < 256 || attr->mtu > 4096 || (attr->mtu & (attr->mtu - 1))))
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->async_lock, NULL);
	dev->backend = attr->backend;
	dev->mtu = attr->mtu ? attr->mtu : 1024;
	memcpy(dev->gid, attr->gid, 16);
	memcpy(dev->mac, attr->mac, 6);
	dev->next_qpn = 2;
	dev->next_mr = 1;
	dev->key_gen = 0x5a;
	dev->qps = calloc(ROXE_MAX_QP, sizeof(*dev->qps));
	dev->mrs = calloc(ROXE_MAX_MR, sizeof(*dev->mrs));
	dev->async_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!dev->qps || !dev->mrs || dev->async_efd < 0) {
		dev_free(dev);
		return -ENOMEM;
	}
	dev->nengines = n;
	for (unsigned i = 0; i < n; i++) {
		struct roxe_engine *e = &dev->engines[i];

		e->dev = dev;
		e->id = i;
		e->port = attr->ports[i];
		e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (e->efd < 0 || !e->port || e->port->frame_size < dev->mtu + 128) {
			dev_free(dev);
			return e->efd < 0 ? -ENOMEM : -EINVAL;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		err = roxe_engine_start(&dev->engines[i]);
		if (err) {
			while (i--)
				roxe_engine_stop(&dev->engines[i]);
			dev_free(dev);
			return err;
		}
	}
	*out = dev;
	return 0;
}

void roxe_device_close(struct roxe_device *dev)
{
	if (!dev)
		return;
	for (unsigned i = 0; i < dev->nengines; i++)
		roxe_engine_stop(&dev->engines[i]);
	dev_free(dev);
}

/* Destination MAC for a GID. Ports made by the caller form a point-to-point
 * wire where the MAC only has to be well formed: the GID's low bytes. */
void roxe_dev_resolve_mac(struct roxe_device *dev, const uint8_t gid[16], uint8_t mac[6])
{
	(void)dev;
	mac[0] = 0x02;		/* locally administered, unicast */
	memcpy(mac + 1, gid + 11, 5);
}

int roxe_query_device(struct roxe_device *dev, struct ibv_device_attr *a)
{
	if (!dev || !a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	strcpy(a->fw_ver, "roxe");
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 4096;
	a->vendor_id = 0xffffff;
	a->max_qp = ROXE_MAX_QP - 2;
	a->max_qp_wr = ROXE_MAX_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE |
			      IBV_DEVICE_PORT_ACTIVE_EVENT;
	a->max_sge = ROXE_MAX_SGE;
	a->max_sge_rd = ROXE_MAX_SGE;
	a->max_cq = 1 << 16;
	a->max_cqe = ROXE_MAX_CQE;
	a->max_mr = ROXE_MAX_MR - 1;
	a->max_pd = 1 << 16;
	a->max_qp_rd_atom = ROXE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = ROXE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = ROXE_MAX_RD_ATOMIC * (ROXE_MAX_QP - 2);
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = 1 << 16;
	a->max_srq = 1 << 16;
	a->max_srq_wr = ROXE_MAX_WR;
	a->max_srq_sge = ROXE_MAX_SGE;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
	return 0;
}

static enum ibv_mtu ibv_mtu_of(uint32_t bytes)
{
	enum ibv_mtu m = IBV_MTU_256;

	while (m < IBV_MTU_4096 && (128u << (m + 1)) <= bytes)
		m++;
	return m;
}

int roxe_query_port(struct roxe_device *dev, struct ibv_port_attr *a)
{
	if (!dev || !a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = ibv_mtu_of(dev->mtu);
	a->gid_tbl_len = 1;
	a->max_msg_sz = 0x80000000u;
	a->pkey_tbl_len = 1;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->phys_state = 5;	/* LinkUp */
	a->active_width = 1;
	a->active_speed = 1;
	return 0;
}

int roxe_query_gid(struct roxe_device *dev, int index, union ibv_gid *gid)
{
	if (!dev || !gid || index != 0)
		return -EINVAL;
	memcpy(gid->raw, dev->gid, 16);
	return 0;
}
