// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command channel to roxed: requests queue here until roxed read()s
 * them from /dev/roxe, then wait (bounded) for its write()n reply. A dead
 * channel (roxed gone) fails everything at once, so no verb ever waits on
 * a daemon that will not answer.
 *
 * Tenants (issue #33): a call queues on its tenant's own queue, and roxed
 * reads the tenants with calls queued in turn, one call each, so a flood
 * delays only its own tenant. A tenant has at most ROXE_CHAN_CAP calls
 * queued; its further callers wait for room, in order, within the call's
 * one timeout. Orphans (posts, destroys whose callers stopped waiting) are
 * read before any tenant's call and in order: the module reuses their
 * numbers at once, and the next object with that number must reach roxed
 * after them.
 */
#include <linux/cred.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include "roxe.h"

/*
 * A tenant: the user a verb runs for (its real uid, as the kernel counts a
 * user's processes; more processes or contexts earn no more turns), or the
 * kernel (its threads: ULPs). It lives while it has calls queued or
 * waiting for room: no more tenants than sleeping callers.
 */
struct roxe_chan_owner {
	struct hlist_node	node;	/* chan->owners */
	struct list_head	turn;	/* on chan->ring while it has calls queued */
	struct list_head	queue;	/* its calls roxed has not read */
	wait_queue_head_t	room;	/* its callers over the cap */
	u64			key;
	u32			queued;	/* on queue */
	u32			waiting;	/* on room */
	u64			reads;	/* its calls roxed read */
};

struct roxe_req {
	struct list_head	list;	/* owner's queue or orphans, then sent */
	bool			sent;	/* read by roxed: on chan->sent */
	struct roxe_chan_owner	*owner;	/* while on its owner's queue */
	u64			mark;	/* chan->reads when queued */
	u64			own_mark;	/* owner->reads when queued */
	struct roxe_kabi_cmd	cmd;
	struct completion	done;
	int			status;
};

void roxe_chan_init(struct roxe_chan *ch)
{
	spin_lock_init(&ch->lock);
	INIT_LIST_HEAD(&ch->orphans);
	INIT_LIST_HEAD(&ch->ring);
	INIT_LIST_HEAD(&ch->sent);
	hash_init(ch->owners);
	init_waitqueue_head(&ch->wq);
	ch->next_seq = 0;
	ch->dead = false;
	ch->reads = 0;
	ch->turn_max = 0;
	ch->cap_waits = 0;
}

/* The caller's tenant: its key here, and what create commands tell roxed
 * (kabi.h: ROXE_KABI_TENANT_KERNEL is no uid's).
 */
u64 roxe_chan_tenant(void)
{
	if (current->flags & PF_KTHREAD)
		return ROXE_KABI_TENANT_KERNEL;
	return __kuid_val(current_uid());
}

static struct roxe_chan_owner *owner_new(void)
{
	struct roxe_chan_owner *o = kzalloc(sizeof(*o), GFP_KERNEL);

	if (!o)
		return NULL;
	INIT_LIST_HEAD(&o->turn);
	INIT_LIST_HEAD(&o->queue);
	init_waitqueue_head(&o->room);
	return o;
}

/* The caller's tenant; *spare (then NULL) becomes it if it has none. */
static struct roxe_chan_owner *chan_owner(struct roxe_chan *ch,
					  struct roxe_chan_owner **spare)
{
	u64 key = roxe_chan_tenant();
	struct roxe_chan_owner *o;

	hash_for_each_possible(ch->owners, o, node, key)
		if (o->key == key)
			return o;
	o = *spare;
	*spare = NULL;
	o->key = key;
	hash_add(ch->owners, &o->node, key);
	return o;
}

static void chan_owner_put(struct roxe_chan_owner *o)
{
	if (o->queued || o->waiting)
		return;
	hash_del(&o->node);
	kfree(o);
}

static void chan_queue(struct roxe_chan *ch, struct roxe_chan_owner *o,
		       struct roxe_req *r)
{
	if (++ch->next_seq == 0)
		ch->next_seq = 1;
	r->cmd.seq = ch->next_seq;
	r->owner = o;
	r->mark = ch->reads;
	r->own_mark = o->reads;
	list_add_tail(&r->list, &o->queue);
	if (!o->queued++)
		list_add_tail(&o->turn, &ch->ring);
}

/* r leaves its owner's queue, read or not: room for one more. */
static void chan_unqueue(struct roxe_req *r)
{
	struct roxe_chan_owner *o = r->owner;

	list_del_init(&r->list);
	r->owner = NULL;
	if (!--o->queued)
		list_del_init(&o->turn);
	if (o->waiting)
		wake_up(&o->room);	/* one: exclusive waits */
	chan_owner_put(o);
}

/*
 * roxed reads r: cmd_turn_max is the most calls of other tenants (and
 * orphans) it read while one waited, per call of its own tenant it read
 * then (that one included). Taking turns keeps it at most the number of
 * other tenants with calls queued, orphans aside.
 */
static void chan_count_turn(struct roxe_chan *ch, struct roxe_req *r)
{
	struct roxe_chan_owner *o = r->owner;
	u64 own = o->reads - r->own_mark + 1;
	u64 others = ch->reads - r->mark - (own - 1);
	u64 turn = DIV64_U64_ROUND_UP(others, own);

	if (turn > ch->turn_max)
		WRITE_ONCE(ch->turn_max, turn);
	o->reads++;
}

/* The next request for roxed: an orphan, else the next tenant's call. */
static struct roxe_req *chan_pop(struct roxe_chan *ch)
{
	struct roxe_chan_owner *o;
	struct roxe_req *r;

	r = list_first_entry_or_null(&ch->orphans, struct roxe_req, list);
	if (r) {
		list_del_init(&r->list);
	} else {
		o = list_first_entry_or_null(&ch->ring, struct roxe_chan_owner,
					     turn);
		if (!o)
			return NULL;
		r = list_first_entry(&o->queue, struct roxe_req, list);
		list_move_tail(&o->turn, &ch->ring);	/* its turn is over */
		chan_count_turn(ch, r);
		chan_unqueue(r);
	}
	ch->reads++;
	return r;
}

u64 roxe_chan_turn_max(struct roxe_chan *ch)
{
	return READ_ONCE(ch->turn_max);
}

u64 roxe_chan_cap_waits(struct roxe_chan *ch)
{
	return READ_ONCE(ch->cap_waits);
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
	list_add_tail(&r->list, &ch->orphans);
	spin_unlock(&ch->lock);
	wake_up_interruptible(&ch->wq);
	return 0;
}

/*
 * Wait, at most until deadline, for room on o's queue after the callers
 * that waited before (they are woken one per call that leaves it). A
 * destroy (keep) waits through signals: it must reach roxed, and a killed
 * process's destroys must not all skip the cap.
 */
static int chan_wait_room(struct roxe_chan *ch, struct roxe_chan_owner *o,
			  unsigned long deadline, bool keep)
	__must_hold(&ch->lock)
{
	DEFINE_WAIT(w);
	bool woken = false;
	long left;
	int err;

	o->waiting++;
	WRITE_ONCE(ch->cap_waits, ch->cap_waits + 1);
	for (;;) {
		prepare_to_wait_exclusive(&o->room, &w, keep ?
					  TASK_UNINTERRUPTIBLE : TASK_KILLABLE);
		err = -ENODEV;
		if (ch->dead)
			break;
		/* the first look is the caller's: room then is an earlier
		 * waiter's, woken for it
		 */
		err = 0;
		if (woken && o->queued < ROXE_CHAN_CAP)
			break;
		err = -ETIMEDOUT;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			break;
		err = -EINTR;
		if (!keep && fatal_signal_pending(current))
			break;
		spin_unlock(&ch->lock);
		schedule_timeout(left);
		spin_lock(&ch->lock);
		woken = true;
	}
	finish_wait(&o->room, &w);
	o->waiting--;
	return err;
}

/* Send a command and wait for roxed's answer: its status, -ETIMEDOUT after
 * ROXE_KABI_TIMEOUT_MS (the wait for room included), -EINTR if killed
 * while waiting for room, -ENODEV once the daemon is gone. Sleeps. With
 * keep, a command roxed has not even read when the wait ends becomes an
 * orphan (no reply): a destroy must reach roxed however late, or it keeps
 * serving an object the module forgot (an MR whose pages went back).
 * *read: whether roxed read it.
 */
static int chan_call(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd,
		     bool keep, bool *read)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ROXE_KABI_TIMEOUT_MS);
	struct roxe_chan_owner *o, *spare = owner_new();
	struct roxe_req *r = req_new(cmd);
	int status = -ENOMEM;
	long left;

	*read = false;
	if (!r || !spare)
		goto free;
	spin_lock(&ch->lock);
	status = -ENODEV;
	if (ch->dead)
		goto unlock;
	o = chan_owner(ch, &spare);
	status = 0;
	if (o->waiting || o->queued >= ROXE_CHAN_CAP)
		status = chan_wait_room(ch, o, deadline, keep);
	if (status) {
		chan_owner_put(o);
		if (!keep || status == -ENODEV)
			goto unlock;
		/* no room in time: roxed's read frees it (or the death) */
		r->cmd.seq = 0;
		list_add_tail(&r->list, &ch->orphans);
		spin_unlock(&ch->lock);
		kfree(spare);
		wake_up_interruptible(&ch->wq);
		return status;
	}
	chan_queue(ch, o, r);
	if (o->waiting && o->queued < ROXE_CHAN_CAP)
		wake_up(&o->room);	/* room left for the next waiter */
	spin_unlock(&ch->lock);
	kfree(spare);
	wake_up_interruptible(&ch->wq);

	left = (long)(deadline - jiffies);
	wait_for_completion_timeout(&r->done, left > 0 ? left : 0);
	spin_lock(&ch->lock);
	*read = r->sent;
	if (!list_empty(&r->list)) {
		r->status = -ETIMEDOUT;
		if (r->sent) {
			/* no answer in time: a late reply finds nothing */
			list_del_init(&r->list);
		} else {
			chan_unqueue(r);
			if (keep) {
				/* roxed's read frees it (or the death) */
				r->cmd.seq = 0;
				list_add_tail(&r->list, &ch->orphans);
				spin_unlock(&ch->lock);
				return -ETIMEDOUT;
			}
		}
	}
	status = r->status;
	spin_unlock(&ch->lock);
	kfree(r);
	return status;

unlock:
	spin_unlock(&ch->lock);
free:
	kfree(spare);
	kfree(r);
	return status;
}

int roxe_chan_call(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd)
{
	bool read;

	return chan_call(ch, cmd, false, &read);
}

/* A destroy: roxed learns of it even when it answers too late. */
int roxe_chan_call_destroy(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd)
{
	bool read;

	return chan_call(ch, cmd, true, &read);
}

/*
 * Tell roxed about a new object; if that fails after roxed read it (its
 * answer or none), it forgets the object again: undo_op on id, waited for
 * (a destroy's wait: the caller frees what roxed may map) or posted. A
 * command roxed never read needs no undo.
 */
int roxe_chan_call_undo(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd,
			u32 undo_op, u32 id, bool wait)
{
	struct roxe_kabi_cmd undo = { .op = undo_op, .id = id };
	bool read;
	int err = chan_call(ch, cmd, false, &read);

	if (!err || !read || err == -ENODEV)
		return err;
	if (wait)
		roxe_chan_call_destroy(ch, &undo);
	else
		roxe_chan_post(ch, &undo);
	return err;
}

/* roxed is gone: fail what waits, refuse what comes. */
void roxe_chan_kill(struct roxe_chan *ch)
{
	struct roxe_chan_owner *o;
	struct roxe_req *r, *t;
	LIST_HEAD(drop);
	int bkt;

	spin_lock(&ch->lock);
	ch->dead = true;
	list_for_each_entry_safe(r, t, &ch->sent, list) {
		list_del_init(&r->list);
		r->status = -ENODEV;
		complete(&r->done);
	}
	/* each pass takes one request off */
	while ((r = chan_pop(ch))) {
		r->status = -ENODEV;
		if (r->cmd.seq)
			complete(&r->done);
		else
			list_add(&r->list, &drop);	/* posts: nobody waits */
	}
	/* left: tenants whose callers wait for room; they see dead */
	hash_for_each(ch->owners, bkt, o, node)
		wake_up_all(&o->room);
	spin_unlock(&ch->lock);
	list_for_each_entry_safe(r, t, &drop, list)
		kfree(r);
	wake_up_interruptible(&ch->wq);
}

bool roxe_chan_readable(struct roxe_chan *ch)
{
	/* dead: roxed's read() says ENODEV, so that it goes */
	return !list_empty_careful(&ch->orphans) ||
	       !list_empty_careful(&ch->ring) || READ_ONCE(ch->dead);
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
		r = chan_pop(ch);
		if (r)
			break;
		spin_unlock(&ch->lock);
		/* the device went (rdma link delete): roxed's cue to go */
		if (READ_ONCE(ch->dead))
			return -ENODEV;
		if (nonblock)
			return -EAGAIN;
		err = wait_event_interruptible(ch->wq, roxe_chan_readable(ch) ||
					       READ_ONCE(ch->dead));
		if (err)
			return err;
		if (READ_ONCE(ch->dead))
			return -ENODEV;
	}
	cmd = r->cmd;
	if (cmd.seq) {
		list_add_tail(&r->list, &ch->sent);
		r->sent = true;
		r = NULL;
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
