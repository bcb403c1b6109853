// SPDX-License-Identifier: GPL-2.0
/*
 * chorus_kpatch — timestamp ALSA PCM period interrupts at the interrupt.
 *
 * ALSA already timestamps hw_ptr updates, but user space sees them only
 * after scheduling and batching.  This module takes CLOCK_MONOTONIC_RAW the
 * moment a driver reports a period (snd_pcm_period_elapsed), pairs it with
 * the substream's hw_ptr *after* ALSA has updated it for that period, and
 * queues the pair as a struct chorus_kpatch_record in a per-substream FIFO
 * that user space (chorus audiod) reads through /dev/chorus_kpatch.
 *
 * Probes (kernels >= 5.14, where snd_pcm_period_elapsed() is a wrapper that
 * takes the stream lock and calls snd_pcm_period_elapsed_under_stream_lock()):
 *   - a kprobe on snd_pcm_period_elapsed() entry takes the time before the
 *     stream lock, so lock contention with a user-space ioctl does not delay
 *     the timestamp; it parks (substream, time) in a per-CPU stash;
 *   - a kretprobe on snd_pcm_period_elapsed_under_stream_lock(): its entry
 *     handler picks the stash up (or takes the time itself when a driver
 *     calls the _under_stream_lock variant directly) and its return handler,
 *     still under the stream lock the caller holds, reads hw_ptr as
 *     snd_pcm_update_hw_ptr0() left it and queues the record.
 * The return handler takes the time again: hw_ptr is updated by then, so
 * the two times bracket the driver's position read (record version 2,
 * update_ns; chorus_kpatch.h).
 * Older kernels: one kretprobe on snd_pcm_period_elapsed(), whose return
 * handler runs after the lock is dropped (hw_ptr may then already include a
 * concurrent update from user space; documented in README.md).
 *
 * FIFO: one kfifo per (card, device, subdevice, direction), created when a
 * reader first SELECTs it and kept until unload.  The producer is the period
 * interrupt, serialized by the stream lock; the consumer is the one reader
 * allowed per substream (serialized by a per-file mutex), so kfifo needs no
 * lock.  A full FIFO counts the record in `dropped`; `seq` counts every
 * interrupt, so a reader sees loss both ways.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/kfifo.h>
#include <linux/kprobes.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <sound/core.h>
#include <sound/pcm.h>

#include "chorus_kpatch.h"

#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 14, 0)
#define CKP_UNDER_LOCK 1
#else
#define CKP_UNDER_LOCK 0
#endif

static int cards[SNDRV_CARDS];
static int n_cards;
module_param_array(cards, int, &n_cards, 0444);
MODULE_PARM_DESC(cards, "ALSA card numbers whose substreams may be selected (default: all)");

static unsigned int fifo_depth = 256;
module_param(fifo_depth, uint, 0444);
MODULE_PARM_DESC(fifo_depth, "records per substream FIFO, 16..65536, rounded up to a power of two");

/* An outer-entry time older than this is not for the inner call we see. */
#define CKP_STASH_MAX_NS (1 * NSEC_PER_MSEC)

/* Reader attachment of a slot. */
enum { CKP_FREE, CKP_CLAIMED, CKP_ATTACHED };

struct ckp_slot {
	struct hlist_node node;		/* in ckp_slots (RCU readers: the probes) */
	u32 key;			/* ckp_key() */
	u16 card;
	u8 device;
	u8 subdevice;
	u8 stream;			/* SNDRV_PCM_STREAM_* */
	atomic_t state;			/* CKP_FREE/CLAIMED/ATTACHED */
	atomic64_t seq;			/* interrupts seen (next record's seq) */
	atomic_t dropped;		/* records lost to a full FIFO since SELECT */
	wait_queue_head_t wait;		/* readers waiting for records */
	DECLARE_KFIFO_PTR(fifo, struct chorus_kpatch_record);
};

/* Per open file: the selected slot, and the lock that makes it one consumer. */
struct ckp_file {
	struct mutex lock;
	struct ckp_slot *slot;		/* NULL until SELECT */
};

/* Time taken at snd_pcm_period_elapsed() entry, for the inner probe. */
struct ckp_stash {
	struct snd_pcm_substream *substream;
	s64 t_ns;			/* CLOCK_MONOTONIC_RAW, ns */
};

/* kretprobe instance data: what the entry handler hands the return handler. */
struct ckp_call {
	struct snd_pcm_substream *substream;
	s64 t_ns;			/* CLOCK_MONOTONIC_RAW, ns */
};

static DEFINE_HASHTABLE(ckp_slots, 6);
static DEFINE_MUTEX(ckp_slots_lock);	/* serializes slot creation */
static DEFINE_PER_CPU(struct ckp_stash, ckp_stash);

/* Returns the hash key of a substream address. */
static u32 ckp_key(unsigned int card, unsigned int device,
		   unsigned int subdevice, unsigned int stream)
{
	return (card << 17) | (device << 9) | (subdevice << 1) | (stream & 1);
}

/* Returns true when the `cards` parameter lets card be watched. */
static bool ckp_card_watched(int card)
{
	int i;

	if (n_cards == 0)
		return true;
	for (i = 0; i < n_cards; i++)
		if (cards[i] == card)
			return true;
	return false;
}

/* Returns the slot for key or NULL; safe in interrupt context (RCU). */
static struct ckp_slot *ckp_slot_find(u32 key)
{
	struct ckp_slot *s;

	hash_for_each_possible_rcu(ckp_slots, s, node, key)
		if (s->key == key)
			return s;
	return NULL;
}

/* Returns true while a PCM runtime is in a state where periods advance. */
static bool ckp_running(struct snd_pcm_runtime *rt)
{
	snd_pcm_state_t st = READ_ONCE(rt->status->state);

	return st == SNDRV_PCM_STATE_RUNNING || st == SNDRV_PCM_STATE_DRAINING;
}

#if CKP_UNDER_LOCK
/* kprobe pre-handler on snd_pcm_period_elapsed(): take the time first. */
static int ckp_outer_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct ckp_stash *st = this_cpu_ptr(&ckp_stash);

	st->t_ns = ktime_get_raw_ns();
	st->substream = (void *)regs_get_kernel_argument(regs, 0);
	return 0;
}

static struct kprobe ckp_outer = {
	.pre_handler = ckp_outer_pre,
};
#endif

/* kretprobe entry: returns 0 to have the return handler run, 1 to skip. */
static int ckp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct ckp_call *c = (struct ckp_call *)ri->data;
	struct snd_pcm_substream *ss = (void *)regs_get_kernel_argument(regs, 0);
	s64 now = ktime_get_raw_ns();
	struct ckp_stash *st = this_cpu_ptr(&ckp_stash);

	c->t_ns = now;
	/*
	 * Use the outer entry's time when it was for this very call: same
	 * substream, on this CPU, just before.  A nested interrupt on this
	 * CPU between the two probes would have overwritten the stash with
	 * its own substream, so a match cannot be someone else's time.
	 */
	if (st->substream == ss && now - st->t_ns >= 0 &&
	    now - st->t_ns < CKP_STASH_MAX_NS)
		c->t_ns = st->t_ns;
	st->substream = NULL;

	if (!ss || !ss->runtime || !ss->pcm || !ss->pcm->card)
		return 1;
	/* ALSA ignores a period reported on a stopped stream; so do we. */
	if (!ckp_running(ss->runtime))
		return 1;
	c->substream = ss;
	return 0;
}

/* kretprobe return: hw_ptr is updated now; queue the record. */
static int ckp_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct ckp_call *c = (struct ckp_call *)ri->data;
	struct snd_pcm_substream *ss = c->substream;
	struct snd_pcm_runtime *rt = ss->runtime;
	struct chorus_kpatch_record rec;
	struct ckp_slot *s;
	s64 after = ktime_get_raw_ns();
	u32 key;

	if (!rt)
		return 0;
	key = ckp_key(ss->pcm->card->number, ss->pcm->device, ss->number,
		      ss->stream);
	rcu_read_lock();
	s = ckp_slot_find(key);
	if (!s)
		goto out;

	memset(&rec, 0, sizeof(rec));
	rec.magic = CHORUS_KPATCH_MAGIC;
	rec.version = CHORUS_KPATCH_VERSION;
	rec.size = sizeof(rec);
	rec.seq = atomic64_inc_return(&s->seq) - 1;
	rec.time_ns = c->t_ns;
	/* After the update: the frame hw_ptr was reached before this. */
	rec.flags = CHORUS_KPATCH_F_UPDATE_TIME;
	if (after - c->t_ns >= (s64)CHORUS_KPATCH_UPDATE_NS_MAX)
		rec.update_ns = CHORUS_KPATCH_UPDATE_NS_MAX;
	else if (after > c->t_ns)
		rec.update_ns = (u32)(after - c->t_ns);
	rec.hw_ptr = READ_ONCE(rt->status->hw_ptr);
	rec.card = s->card;
	rec.device = s->device;
	rec.subdevice = s->subdevice;
	if (ss->stream == SNDRV_PCM_STREAM_CAPTURE)
		rec.flags |= CHORUS_KPATCH_F_CAPTURE;
	/* snd_pcm_update_hw_ptr0() stops the stream when it finds an xrun. */
	if (READ_ONCE(rt->status->state) == SNDRV_PCM_STATE_XRUN)
		rec.flags |= CHORUS_KPATCH_F_XRUN;
	rec.period_frames = rt->period_size <= 0xffff ? rt->period_size : 0;

	if (atomic_read_acquire(&s->state) != CKP_ATTACHED)
		goto out;	/* nobody reads: count the interrupt only */
	rec.dropped = atomic_read(&s->dropped);
	if (!kfifo_put(&s->fifo, rec))
		atomic_inc(&s->dropped);
	else if (wq_has_sleeper(&s->wait))
		wake_up_interruptible(&s->wait);
out:
	rcu_read_unlock();
	return 0;
}

static struct kretprobe ckp_inner = {
	.entry_handler = ckp_entry,
	.handler = ckp_return,
	.data_size = sizeof(struct ckp_call),
};

/* Returns the slot for a substream, creating it; NULL when out of memory. */
static struct ckp_slot *ckp_slot_get(const struct chorus_kpatch_select *sel)
{
	u32 key = ckp_key(sel->card, sel->device, sel->subdevice, sel->stream);
	struct ckp_slot *s;

	mutex_lock(&ckp_slots_lock);
	s = ckp_slot_find(key);
	if (s)
		goto out;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		goto out;
	if (kfifo_alloc(&s->fifo, fifo_depth, GFP_KERNEL)) {
		kfree(s);
		s = NULL;
		goto out;
	}
	s->key = key;
	s->card = sel->card;
	s->device = sel->device;
	s->subdevice = sel->subdevice;
	s->stream = sel->stream;
	atomic_set(&s->state, CKP_FREE);
	atomic64_set(&s->seq, 0);
	atomic_set(&s->dropped, 0);
	init_waitqueue_head(&s->wait);
	hash_add_rcu(ckp_slots, &s->node, key);
out:
	mutex_unlock(&ckp_slots_lock);
	return s;
}

/* Detaches the file from its slot, if any (caller holds cf->lock). */
static void ckp_detach(struct ckp_file *cf)
{
	if (cf->slot) {
		atomic_set_release(&cf->slot->state, CKP_FREE);
		cf->slot = NULL;
	}
}

/* SELECT: returns 0, or -EFAULT/-EINVAL/-EPERM/-ENODEV/-ENOMEM/-EBUSY. */
static long ckp_select(struct ckp_file *cf, void __user *arg)
{
	struct chorus_kpatch_select sel;
	struct snd_card *card;
	struct ckp_slot *s;

	if (copy_from_user(&sel, arg, sizeof(sel)))
		return -EFAULT;
	if (sel.card >= SNDRV_CARDS || sel.stream > 1 ||
	    sel.pad[0] || sel.pad[1] || sel.pad[2])
		return -EINVAL;
	if (!ckp_card_watched(sel.card))
		return -EPERM;
	card = snd_card_ref(sel.card);
	if (!card)
		return -ENODEV;
	snd_card_unref(card);

	s = ckp_slot_get(&sel);
	if (!s)
		return -ENOMEM;
	if (s == cf->slot)
		ckp_detach(cf);	/* re-select: start afresh */
	if (atomic_cmpxchg(&s->state, CKP_FREE, CKP_CLAIMED) != CKP_FREE)
		return -EBUSY;
	ckp_detach(cf);
	/* Consumer-side reset; the producer queues nothing until ATTACHED. */
	kfifo_reset_out(&s->fifo);
	atomic_set(&s->dropped, 0);
	cf->slot = s;
	atomic_set_release(&s->state, CKP_ATTACHED);
	return 0;
}

/* STATS: returns 0, or -EBADFD before SELECT, -EFAULT. */
static long ckp_stats(struct ckp_file *cf, void __user *arg)
{
	struct chorus_kpatch_stats st;
	struct ckp_slot *s = cf->slot;

	if (!s)
		return -EBADFD;
	memset(&st, 0, sizeof(st));
	st.seq = atomic64_read(&s->seq);
	st.dropped = atomic_read(&s->dropped);
	st.queued = kfifo_len(&s->fifo);
	st.fifo_depth = kfifo_size(&s->fifo);
	st.probe_missed = ckp_inner.nmissed;
#if CKP_UNDER_LOCK
	st.probe_missed += ckp_outer.nmissed;
#endif
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long ckp_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct ckp_file *cf = f->private_data;
	long ret;

	mutex_lock(&cf->lock);
	switch (cmd) {
	case CHORUS_KPATCH_IOC_SELECT:
		ret = ckp_select(cf, (void __user *)arg);
		break;
	case CHORUS_KPATCH_IOC_STATS:
		ret = ckp_stats(cf, (void __user *)arg);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&cf->lock);
	return ret;
}

/* read: whole records only; blocks unless O_NONBLOCK. */
static ssize_t ckp_read(struct file *f, char __user *buf, size_t len,
			loff_t *off)
{
	struct ckp_file *cf = f->private_data;
	struct ckp_slot *s;
	unsigned int copied = 0;
	ssize_t ret;

	if (len < sizeof(struct chorus_kpatch_record))
		return -EINVAL;
	if (mutex_lock_interruptible(&cf->lock))
		return -ERESTARTSYS;
	s = cf->slot;
	if (!s) {
		ret = -EBADFD;
		goto out;
	}
	while (kfifo_is_empty(&s->fifo)) {
		if (f->f_flags & O_NONBLOCK) {
			ret = -EAGAIN;
			goto out;
		}
		if (wait_event_interruptible(s->wait, !kfifo_is_empty(&s->fifo))) {
			ret = -ERESTARTSYS;
			goto out;
		}
	}
	ret = kfifo_to_user(&s->fifo, buf, len, &copied);
	if (!ret)
		ret = copied;
out:
	mutex_unlock(&cf->lock);
	return ret;
}

static __poll_t ckp_poll(struct file *f, poll_table *pt)
{
	struct ckp_file *cf = f->private_data;
	struct ckp_slot *s = READ_ONCE(cf->slot);

	if (!s)
		return EPOLLERR;
	poll_wait(f, &s->wait, pt);
	return kfifo_is_empty(&s->fifo) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static int ckp_open(struct inode *inode, struct file *f)
{
	struct ckp_file *cf = kzalloc(sizeof(*cf), GFP_KERNEL);

	if (!cf)
		return -ENOMEM;
	mutex_init(&cf->lock);
	f->private_data = cf;
	return nonseekable_open(inode, f);
}

static int ckp_release(struct inode *inode, struct file *f)
{
	struct ckp_file *cf = f->private_data;

	ckp_detach(cf);
	mutex_destroy(&cf->lock);
	kfree(cf);
	return 0;
}

static const struct file_operations ckp_fops = {
	.owner = THIS_MODULE,
	.open = ckp_open,
	.release = ckp_release,
	.read = ckp_read,
	.poll = ckp_poll,
	.unlocked_ioctl = ckp_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* 0640: root reads; udev (99-chorus-kpatch.rules) gives the group `audio`. */
static struct miscdevice ckp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = CHORUS_KPATCH_DEV_NAME,
	.fops = &ckp_fops,
	.mode = 0640,
};

static void ckp_free_slots(void)
{
	struct hlist_node *tmp;
	struct ckp_slot *s;
	int bkt;

	hash_for_each_safe(ckp_slots, bkt, tmp, s, node) {
		hash_del(&s->node);
		kfifo_free(&s->fifo);
		kfree(s);
	}
}

static int __init ckp_init(void)
{
	int i, ret;

	BUILD_BUG_ON(sizeof(struct chorus_kpatch_record) != 48);
	BUILD_BUG_ON(sizeof(struct chorus_kpatch_select) != 8);
	BUILD_BUG_ON(sizeof(struct chorus_kpatch_stats) != 32);
	BUILD_BUG_ON(SNDRV_PCM_STREAM_CAPTURE != CHORUS_KPATCH_STREAM_CAPTURE);

	if (fifo_depth < 16 || fifo_depth > 65536) {
		pr_err("fifo_depth=%u out of range 16..65536\n", fifo_depth);
		return -EINVAL;
	}
	fifo_depth = roundup_pow_of_two(fifo_depth);
	for (i = 0; i < n_cards; i++) {
		if (cards[i] < 0 || cards[i] >= SNDRV_CARDS) {
			pr_err("cards: %d is not a card number (0..%d)\n",
			       cards[i], SNDRV_CARDS - 1);
			return -EINVAL;
		}
	}

	/* Taking the addresses makes snd-pcm a dependency of this module. */
#if CKP_UNDER_LOCK
	ckp_inner.kp.addr = (kprobe_opcode_t *)snd_pcm_period_elapsed_under_stream_lock;
#else
	ckp_inner.kp.addr = (kprobe_opcode_t *)snd_pcm_period_elapsed;
#endif
	/* Period interrupts of different cards may nest or run on every CPU. */
	ckp_inner.maxactive = max_t(int, 8, 2 * num_possible_cpus());
	ret = register_kretprobe(&ckp_inner);
	if (ret) {
		pr_err("cannot probe the period interrupt (kprobes disabled?): %d\n",
		       ret);
		return ret;
	}
#if CKP_UNDER_LOCK
	ckp_outer.addr = (kprobe_opcode_t *)snd_pcm_period_elapsed;
	ret = register_kprobe(&ckp_outer);
	if (ret) {
		pr_err("cannot probe snd_pcm_period_elapsed: %d\n", ret);
		goto err_inner;
	}
#endif
	ret = misc_register(&ckp_misc);
	if (ret) {
		pr_err("cannot register /dev/%s: %d\n", CHORUS_KPATCH_DEV_NAME,
		       ret);
		goto err_outer;
	}
	pr_info("timestamping period interrupts, fifo_depth=%u%s\n",
		fifo_depth, n_cards ? ", selected cards" : "");
	return 0;

err_outer:
#if CKP_UNDER_LOCK
	unregister_kprobe(&ckp_outer);
err_inner:
#endif
	unregister_kretprobe(&ckp_inner);
	return ret;
}

static void __exit ckp_exit(void)
{
	misc_deregister(&ckp_misc);
#if CKP_UNDER_LOCK
	unregister_kprobe(&ckp_outer);
#endif
	unregister_kretprobe(&ckp_inner);
	/* No handler can still be walking the slot list after this. */
	synchronize_rcu();
	ckp_free_slots();
}

module_init(ckp_init);
module_exit(ckp_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("chorus project");
MODULE_DESCRIPTION("Timestamp ALSA PCM period interrupts (CLOCK_MONOTONIC_RAW + hw_ptr) for chorus");
