// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threaded NAPI while the receive side livelocks (module option
 * auto_threaded; the decisions are policy/threaded.c's).
 *
 * The first receive poll that ends window_ns after the device's window
 * began closes it and judges it; the state machine says whether threaded
 * mode is wanted, and a work item switches it (dev_set_threaded() sleeps
 * and wants RTNL).  The user's own setting wins: threaded mode the user
 * turned on is never turned off here, and if the user turns off what we
 * turned on, automatic switching stops for the device.
 */
#include <linux/kernel_stat.h>
#include <linux/rtnetlink.h>
#include <linux/tick.h>
#include "vnet.h"

/* A window longer than this many window lengths spans a pause: no verdict. */
#define VNET_THR_STALE_WINDOWS	10

/*
 * The device's counters now: receive interrupts and those that found a
 * task, packets received, bytes received and sent on the active pairs,
 * the online CPUs' idle time (0 CPUs where the kernel does not account it).
 */
static void vnet_thr_counts(struct vnet *vi, struct vnet_thr_window *w)
{
	unsigned int q;
	int cpu;

	memset(w, 0, sizeof(*w));
	for (q = 0; q < vi->curr_pairs; q++) {
		struct vnet_rq *rq = &vi->qp[q].rq;
		struct vnet_sq *sq = &vi->qp[q].sq;

		w->irqs += vnet_stat_read(&rq->irq.syncp, &rq->irq.interrupts);
		w->busy += vnet_stat_read(&rq->irq.syncp,
					  &rq->irq.interrupted_task);
		w->packets += vnet_stat_read(&rq->stats.syncp,
					     &rq->stats.packets);
		w->bytes += vnet_stat_read(&rq->stats.syncp, &rq->stats.bytes);
		w->bytes += vnet_stat_read(&sq->stats.syncp, &sq->stats.bytes);
	}
	for_each_online_cpu(cpu) {
		u64 us = get_cpu_idle_time_us(cpu, NULL);

		if (us == (u64)-1) {
			w->cpus = 0;
			return;
		}
		w->idle_ns += us * NSEC_PER_USEC;
		w->cpus++;
	}
}

static u64 vnet_thr_delta(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

/* The device's window is due at @now (a receive poll, NAPI context). */
void vnet_thr_window_end(struct vnet *vi, u64 now)
{
	struct vnet_thr_window cur, w;
	enum vnet_thr_verdict v;
	u64 age;

	/* Another queue's poll is closing it. */
	if (!spin_trylock(&vi->thr.lock))
		return;
	age = vnet_ns_since(now, vi->thr.start);
	if (!vi->thr.enabled || age < vi->thr.cfg.window_ns)
		goto out;
	vnet_thr_counts(vi, &cur);
	if (vi->thr.start &&
	    age <= VNET_THR_STALE_WINDOWS * vi->thr.cfg.window_ns) {
		/* Counters only grow; a queue pair removed meanwhile may not. */
		w.ns = age;
		w.irqs = vnet_thr_delta(cur.irqs, vi->thr.at_start.irqs);
		w.busy = vnet_thr_delta(cur.busy, vi->thr.at_start.busy);
		w.packets = vnet_thr_delta(cur.packets,
					   vi->thr.at_start.packets);
		w.bytes = vnet_thr_delta(cur.bytes, vi->thr.at_start.bytes);
		w.idle_ns = vnet_thr_delta(cur.idle_ns, vi->thr.at_start.idle_ns);
		w.cpus = cur.cpus == vi->thr.at_start.cpus ? cur.cpus : 0;
		v = vnet_thr_judge(&vi->thr.cfg, &w);
		if (vnet_thr_step(&vi->thr.cfg, &vi->thr.st, v,
				  vnet_thr_rate(&w), now))
			schedule_work(&vi->thr.work);
	}
	WRITE_ONCE(vi->thr.start, now);
	vi->thr.at_start = cur;
out:
	spin_unlock(&vi->thr.lock);
}

/* The device counters, in ethtool -S order (stats.c's vnet_thr_names). */
void vnet_thr_counters(struct vnet *vi, u64 *data)
{
	spin_lock_bh(&vi->thr.lock);
	data[0] = vi->thr.st.trials;
	data[1] = vi->thr.st.switches;
	data[2] = vi->thr.st.livelock_windows;
	spin_unlock_bh(&vi->thr.lock);
}

/* Switch to @want (RTNL held); true: automatic switching must stop. */
static bool vnet_thr_apply(struct vnet *vi, bool want)
{
	struct net_device *dev = vi->dev;
	int err;

	if (want) {
		/* Already threaded: the user's, left alone (applied stays off). */
		if (vnet_threaded(dev))
			return false;
		err = vnet_set_threaded(dev, true);
		if (err) {
			netdev_warn(dev, "auto_threaded: threaded NAPI could not be turned on (%d), automatic switching stops\n",
				    err);
			return true;
		}
		vi->thr.applied = true;
		netdev_dbg(dev, "auto_threaded: receive livelock, threaded NAPI on\n");
		return false;
	}
	vi->thr.applied = false;
	if (!vnet_threaded(dev)) {
		netdev_info(dev, "auto_threaded: threaded NAPI was turned off by someone else, automatic switching stops\n");
		return true;
	}
	err = vnet_set_threaded(dev, false);
	if (err) {
		netdev_warn(dev, "auto_threaded: threaded NAPI could not be turned off (%d), automatic switching stops\n",
			    err);
		return true;
	}
	netdev_dbg(dev, "auto_threaded: threaded NAPI off\n");
	return false;
}

static void vnet_thr_work(struct work_struct *work)
{
	struct vnet *vi = container_of(work, struct vnet, thr.work);
	bool want, stop = false;

	spin_lock_bh(&vi->thr.lock);
	want = vnet_thr_on(&vi->thr.st);
	spin_unlock_bh(&vi->thr.lock);

	rtnl_lock();
	/*
	 * Only while every pair's NAPI is on: from 6.17 turning threaded mode
	 * off waits for each instance to go idle, which a disabled one never
	 * does (a switch queued just before ifdown would then hold RTNL for
	 * ever).  Open and restore queue the work again.  The deferred refill
	 * turns instances off for a moment, so it waits meanwhile.
	 */
	if (want != vi->thr.applied && vi->pairs_enabled) {
		vnet_refill_disable(vi);
		stop = vnet_thr_apply(vi, want);
		vnet_refill_enable(vi, false);
	}
	rtnl_unlock();
	if (stop) {
		spin_lock_bh(&vi->thr.lock);
		WRITE_ONCE(vi->thr.enabled, false);
		spin_unlock_bh(&vi->thr.lock);
	}
}

void vnet_thr_init(struct vnet *vi)
{
	spin_lock_init(&vi->thr.lock);
	vnet_thr_cfg_default(&vi->thr.cfg);
	INIT_WORK(&vi->thr.work, vnet_thr_work);
}

/* Probe: switch automatically if the option asks for it and can. */
void vnet_thr_start(struct vnet *vi)
{
	if (!vnet_opts.auto_threaded)
		return;
	if (!VNET_CAN_THREADED) {
		netdev_warn(vi->dev, "auto_threaded needs kernel 5.12 or later (dev_set_threaded); it stays off\n");
		return;
	}
	spin_lock_bh(&vi->thr.lock);
	WRITE_ONCE(vi->thr.enabled, true);
	spin_unlock_bh(&vi->thr.lock);
}

/*
 * The pairs are up again (open, restore): a switch that found them down
 * is made now.  Caller holds RTNL; the work waits for it.
 */
void vnet_thr_resume(struct vnet *vi)
{
	if (READ_ONCE(vi->thr.enabled))
		schedule_work(&vi->thr.work);
}

/* Remove: no more switches; the device's NAPI threads go with it. */
void vnet_thr_stop(struct vnet *vi)
{
	spin_lock_bh(&vi->thr.lock);
	WRITE_ONCE(vi->thr.enabled, false);
	spin_unlock_bh(&vi->thr.lock);
	cancel_work_sync(&vi->thr.work);
}
