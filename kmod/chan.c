// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command channel to roxed: requests queue here until roxed read()s
 * them from /dev/roxe, then wait (bounded) for its write()n reply. A dead
 * channel (roxed gone) fails everything at once, so no verb ever waits on
 * a daemon that will not answer.
 */
#include <linux/cred.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include "roxe.h"

/*
 * A tenant of the channel: the user a verb runs for (its real uid, as the
 * kernel counts a user's processes), or the kernel (its threads: ULPs).
 * It lives while it has commands queued.
 */
struct roxe_chan_owner {
	struct hlist_node	node;	/* chan->owners */
	u64			key;
	u32			users;	/* its commands queued */
	u64			reads;	/* its commands roxed read */
};

#define ROXE_CHAN_KERNEL	(1ULL << 32)	/* no uid's key */

struct roxe_req {
	struct list_head	list;	/* chan->queue, then chan->sent */
	bool			sent;	/* read by roxed: on chan->sent */
	struct roxe_chan_owner	*owner;	/* a call's, until roxed reads it */
	u64			mark;	/* chan->reads when queued */
	u64			own_mark;	/* owner->reads when queued */
	struct roxe_kabi_cmd	cmd;
	struct completion	done;
	int			status;
};

void roxe_chan_init(struct roxe_chan *ch)
{
	spin_lock_init(&ch->lock);
	INIT_LIST_HEAD(&ch->queue);
	INIT_LIST_HEAD(&ch->sent);
	hash_init(ch->owners);
	init_waitqueue_head(&ch->wq);
	ch->next_seq = 0;
	ch->dead = false;
	ch->reads = 0;
	ch->turn_max = 0;
}

static u64 chan_owner_key(void)
{
	if (current->flags & PF_KTHREAD)
		return ROXE_CHAN_KERNEL;
	return __kuid_val(current_uid());
}

/* r's tenant, made from *spare (then NULL) if it has nothing queued. */
static void chan_own(struct roxe_chan *ch, struct roxe_req *r, u64 key,
		     struct roxe_chan_owner **spare)
{
	struct roxe_chan_owner *o;

	hash_for_each_possible(ch->owners, o, node, key)
		if (o->key == key)
			goto found;
	o = *spare;
	*spare = NULL;
	o->key = key;
	hash_add(ch->owners, &o->node, key);
found:
	o->users++;
	r->owner = o;
	r->mark = ch->reads;
	r->own_mark = o->reads;
}

static void chan_disown(struct roxe_req *r)
{
	struct roxe_chan_owner *o = r->owner;

	r->owner = NULL;
	if (!o || --o->users)
		return;
	hash_del(&o->node);
	kfree(o);
}

/*
 * roxed reads r: cmd_turn_max is the most commands of other tenants it
 * read while one waited, per command of its own tenant it read then
 * (that one included).
 */
static void chan_count_read(struct roxe_chan *ch, struct roxe_req *r)
{
	struct roxe_chan_owner *o = r->owner;
	u64 own, others, turn;

	if (o) {
		own = o->reads - r->own_mark + 1;
		others = ch->reads - r->mark - (own - 1);
		turn = DIV64_U64_ROUND_UP(others, own);
		if (turn > ch->turn_max)
			WRITE_ONCE(ch->turn_max, turn);
		o->reads++;
		chan_disown(r);
	}
	ch->reads++;
}

u64 roxe_chan_turn_max(struct roxe_chan *ch)
{
	return READ_ONCE(ch->turn_max);
}

static struct roxe_req *req_new(const struct roxe_kabi_cmd *cmd)
{
	struct roxe_req *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	INIT_LIST_HEAD(&r->list);
	r->cmd = *cmd;
	init_completion(&r->done);
	return r;
}

/* Queue a command that wants no reply (roxed frees nothing for us). */
int roxe_chan_post(struct roxe_chan *ch, const struct roxe_kabi_cmd *cmd)
{
	struct roxe_req *r = req_new(cmd);

	if (!r)
		return -ENOMEM;
	r->cmd.seq = 0;
	spin_lock(&ch->lock);
	if (ch->dead) {
		spin_unlock(&ch->lock);
		kfree(r);
		return -ENODEV;
	}
	list_add_tail(&r->list, &ch->queue);
	spin_unlock(&ch->lock);
	wake_up_interruptible(&ch->wq);
	return 0;
}

/* Send a command and wait for roxed's answer: its status, -ETIMEDOUT after
 * ROXE_KABI_TIMEOUT_MS, -ENODEV once the daemon is gone. Sleeps. With keep,
 * a command roxed has not even read when the wait ends stays queued as a
 * post (no reply): a destroy must reach roxed however late, or it keeps
 * serving an object the module forgot (an MR whose pages went back).
 */
static int chan_call(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd, bool keep)
{
	struct roxe_chan_owner *spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	struct roxe_req *r = req_new(cmd);
	u64 key = chan_owner_key();
	int status;

	if (!r || !spare) {
		kfree(spare);
		kfree(r);
		return -ENOMEM;
	}
	spin_lock(&ch->lock);
	if (ch->dead) {
		spin_unlock(&ch->lock);
		kfree(spare);
		kfree(r);
		return -ENODEV;
	}
	if (++ch->next_seq == 0)
		ch->next_seq = 1;
	r->cmd.seq = ch->next_seq;
	chan_own(ch, r, key, &spare);
	list_add_tail(&r->list, &ch->queue);
	spin_unlock(&ch->lock);
	kfree(spare);
	wake_up_interruptible(&ch->wq);

	wait_for_completion_timeout(&r->done,
				    msecs_to_jiffies(ROXE_KABI_TIMEOUT_MS));
	spin_lock(&ch->lock);
	if (!list_empty(&r->list)) {
		r->status = -ETIMEDOUT;
		chan_disown(r);
		if (keep && !r->sent) {
			/* roxed's read frees it (or the channel's death) */
			r->cmd.seq = 0;
			spin_unlock(&ch->lock);
			return -ETIMEDOUT;
		}
		/* no answer in time: a late reply finds nothing */
		list_del_init(&r->list);
	}
	status = r->status;
	spin_unlock(&ch->lock);
	kfree(r);
	return status;
}

int roxe_chan_call(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd)
{
	return chan_call(ch, cmd, false);
}

/* A destroy: roxed learns of it even when it answers too late. */
int roxe_chan_call_destroy(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd)
{
	return chan_call(ch, cmd, true);
}

/* roxed is gone: fail what waits, refuse what comes. */
void roxe_chan_kill(struct roxe_chan *ch)
{
	struct roxe_req *r, *t;
	LIST_HEAD(drop);

	spin_lock(&ch->lock);
	ch->dead = true;
	list_for_each_entry_safe(r, t, &ch->sent, list) {
		list_del_init(&r->list);
		r->status = -ENODEV;
		complete(&r->done);
	}
	list_for_each_entry_safe(r, t, &ch->queue, list) {
		list_del_init(&r->list);
		chan_disown(r);
		r->status = -ENODEV;
		if (r->cmd.seq)
			complete(&r->done);
		else
			list_add(&r->list, &drop);	/* posts: nobody waits */
	}
	spin_unlock(&ch->lock);
	list_for_each_entry_safe(r, t, &drop, list)
		kfree(r);
	wake_up_interruptible(&ch->wq);
}

bool roxe_chan_readable(struct roxe_chan *ch)
{
	return !list_empty_careful(&ch->queue);
}

/* read(): one command. */
ssize_t roxe_chan_read(struct roxe_chan *ch, char __user *buf, size_t len,
		       bool nonblock)
{
	struct roxe_kabi_cmd cmd;
	struct roxe_req *r;
	int err;

	if (len < sizeof(cmd))
		return -EINVAL;
	for (;;) {
		spin_lock(&ch->lock);
		r = list_first_entry_or_null(&ch->queue, struct roxe_req, list);
		if (r)
			break;
		spin_unlock(&ch->lock);
		if (nonblock)
			return -EAGAIN;
		err = wait_event_interruptible(ch->wq, roxe_chan_readable(ch) ||
					       READ_ONCE(ch->dead));
		if (err)
			return err;
		if (READ_ONCE(ch->dead))
			return -ENODEV;
	}
	chan_count_read(ch, r);
	cmd = r->cmd;
	if (cmd.seq) {
		list_move_tail(&r->list, &ch->sent);
		r->sent = true;
		r = NULL;
	} else {
		list_del_init(&r->list);
	}
	spin_unlock(&ch->lock);
	kfree(r);
	if (copy_to_user(buf, &cmd, sizeof(cmd)))
		return -EFAULT;
	return sizeof(cmd);
}

/* write(): one reply. */
ssize_t roxe_chan_write(struct roxe_chan *ch, const char __user *buf, size_t len)
{
	struct roxe_kabi_reply rep;
	struct roxe_req *r;

	if (len != sizeof(rep))
		return -EINVAL;
	if (copy_from_user(&rep, buf, sizeof(rep)))
		return -EFAULT;
	if (rep.status > 0 || rep.status < -4095)
		return -EINVAL;
	spin_lock(&ch->lock);
	list_for_each_entry(r, &ch->sent, list) {
		if (r->cmd.seq != rep.seq)
			continue;
		list_del_init(&r->list);
		r->status = rep.status;
		complete(&r->done);
		break;
	}
	spin_unlock(&ch->lock);
	/* a reply to a request that timed out is dropped quietly */
	return sizeof(rep);
}
