/* sched: run-queue latency, blocked (off-CPU) time, context switches and
 * migrations, per thread and per cgroup, in one program per tracepoint.
 *
 * Run-queue latency runs from becoming runnable (a wakeup, or a preemption
 * that leaves the task runnable) to running on a CPU. Blocked time runs from
 * a switch-out in a sleeping state to the wakeup; the wait on the run queue
 * after the wakeup is run-queue latency and is not counted twice.
 *
 * Overhead: sched_switch reads the clock once, increments a per-CPU array
 * and looks up the outgoing and the incoming task; sched_wakeup /
 * sched_wakeup_new read the clock once and look up the wakee; idle (pid 0)
 * costs no lookup. A thread's entry lives in a direct-mapped array slot
 * (tid modulo NSLOTS, tagged with the tid), so a lookup is an inlined array
 * access plus a tag compare instead of a hash walk; a tid whose slot is held
 * by another live thread goes to the overflow hash. With pid_max at or below
 * NSLOTS nothing ever overflows; with a larger pid_max (4194304 under
 * systemd) a new thread overflows with probability (live threads / NSLOTS).
 * sched_migrate_task increments a per-CPU array.
 * The per-cgroup hash is touched only when a thread's pending counts are
 * flushed, at most once per FLUSH_NS of that thread (and at its exit), so a
 * thread switching 100k times a second flushes ~1 switch in 800. A thread's
 * entry is taken the first time it is seen and released when the task is
 * freed; a cgroup's entry is inserted once per interval (user space drains
 * them). Kernel memory: NSLOTS x 360 bytes (11.25 MiB) for the slots plus the
 * preallocated overflow hash (3.0 MiB).
 *
 * Measured cost of the programs themselves (kernel.bpf_stats_enabled
 * run_time_ns, its own clock reads included; 2-CPU Firecracker VM, AMD
 * EPYC, pipe ping-pong): ~130 ns per sched_switch, ~120 ns per wakeup
 * (with a hash per thread instead of the slots: ~200 and ~165 ns). bcc's
 * runqlat-bpfcc, same host and workload: ~600 and ~470 ns (a hash insert at
 * each wakeup and a delete at each switch-in, plus task_struct reads).
 *
 * Whole-workload slowdown: bench/overhead.py (figures in the README).
 *
 * Regular tracepoints cost more to dispatch than the raw (or BTF) tracepoints
 * bcc's runqlat-bpfcc attaches to: before any program runs, perf_trace_*
 * takes a per-CPU buffer and fills the whole trace record (sched_switch:
 * both comms, pids, prios, state) whether the program reads it or not. Raw
 * tracepoints hand the program the task_struct pointers instead, which this
 * project does not read (no kernel struct reads, no header dependency).
 *
 * Keying: tracepoints name the wakee only by its thread id (args->pid), and
 * bpf_get_current_*() describes the waker, so the kernel keeps one entry per
 * tid holding its pending enqueue time, its own run-queue histogram and its
 * running total of blocked ns; user space groups tids into jobs (it lists
 * /proc/<pid>/task of each job pid) and reads only those tids, in their slot
 * (when the tag matches) or else in the overflow hash. A sleep still in
 * progress is visible too (slept_ns).
 *
 * Per cgroup: a thread's entry accumulates pending counts (run-queue waits
 * with their sum and sum of squares, switch-outs, time on CPU, time blocked);
 * at a switch-out, the one moment the thread is current, they are added to
 * its cgroup (v2 id from bpf_get_current_cgroup_id()) once FLUSH_NS have
 * passed since its previous flush, and at thread exit. So a cgroup's interval
 * lags by at most FLUSH_NS of each thread's activity: shifted into the next
 * interval, never lost (except for a thread that neither switches out nor
 * exits again). The cgroup map is a per-CPU hash, so no two CPUs write one
 * value and no atomics are needed; user space sums the CPUs and drains it.
 *
 * A thread's entry is written by the wakeup path and by the CPU the task runs
 * on, never by two CPUs for the same event, so plain (non-atomic) updates hold.
 *
 * Per-run costs above are of the programs alone; bench/overhead.py measures
 * the slowdown of whole workloads, tracepoint dispatch included.
 *
 * Duty cycle (agent/sources/bpf_source.py): user space detaches the wakeup,
 * switch and migration programs while the host is healthy and attaches them
 * again for a span (the `gate`, common.h), keeping this object and its maps
 * loaded. Counts, histograms and blocked, running and waiting time accrue
 * only inside the span. A thread's entry remembers the span its stamps were
 * taken in (`epoch`, the span's open_ns); the first event of a thread in a
 * new span drops the old stamps, since the thread may have slept, woken and
 * run unseen meanwhile, and infers the thread's state at the opening from
 * what that first event is: a wakeup means it slept since the opening (its
 * blocked time counts from there); a switch-out, that it ran since the
 * opening; a switch-in, that it waited since the opening (a wait whose start
 * was not seen, so not measured). A wakeup of a thread that had marked itself
 * sleeping but not yet switched out is taken for the end of a sleep too: it
 * adds the time since the opening, at most as long as the thread went
 * without a switch. The exit and free programs stay attached (rare events),
 * so entries of threads that end while the others are detached are released.
 * Cost of the gate: one array lookup (inlined) per event.
 */

#include "common.h"

/* Per-thread histograms keep 32 slots starting at 2^8 ns: run-queue waits
 * under 256 ns count in the first slot, waits over 2^39 ns in the last. */
#define TID_SLOTS 32
#define TID_SLOT_BASE 8
/* prev_state carries TASK_REPORT_MAX (0x100) for a preempted task; the low
 * byte is the reported state, 0 meaning runnable (TASK_RUNNING). */
#define STATE_MASK 0xff
/* Reported exit states (EXIT_DEAD 'X', EXIT_ZOMBIE 'Z'): the task never wakes. */
#define STATE_EXITING 0x30
/* How long a thread's per-cgroup counts may stay pending: 8 ms. */
#define FLUSH_NS 8000000ULL

#define CTR_SWITCHES 0
#define CTR_MIGRATIONS 1

/* Counts of one thread not yet added to its cgroup (struct cg_rq's fields). */
struct pending {
    u64 waits;
    u64 wait_ns;
    u64 wait_sq_us;
    u64 switches;
    u64 run_ns;
    u64 blocked_ns;
};

struct task_rq {
    u32 tid;         /* the thread this entry is for; in a slot, 0 when free */
    u32 pad;
    u64 enqueued_ns; /* 0 when the task is not waiting on a run queue */
    u64 slept_ns;    /* start of a sleep in progress, 0 when none */
    u64 oncpu_ns;    /* when the task went on CPU, 0 while it is off */
    u64 blocked_ns;  /* running total of the sleeps that ended */
    u64 flushed_ns;  /* when the pending counts were last added to the cgroup */
    /* When the entry was taken. An instance loaded while the thread slept
     * first sees it at its wakeup, so user space learns there when a sleep
     * that began under the previous instance ended (agent BlockedCarry). */
    u64 born_ns;
    u64 epoch; /* the gate's open_ns when the stamps above were taken */
    struct pending p;
    u64 hist[TID_SLOTS];
};

struct cg_rq {
    u64 waits;      /* run-queue waits that ended */
    u64 wait_ns;
    u64 wait_sq_us; /* sum of squared waits in us^2: ns^2 would overflow */
    u64 switches;   /* switch-outs */
    u64 run_ns;     /* on CPU, counted at switch-out */
    u64 blocked_ns; /* asleep, counted at wakeup */
};

/* A power of two: the slot is the tid's low bits. Tests compile it smaller to
 * force threads into the overflow hash. */
#ifndef NSLOTS
#define NSLOTS 32768
#endif
BPF_ARRAY(slots, struct task_rq, NSLOTS);
BPF_HASH(tasks, u32, struct task_rq, 8192); /* overflow: tids whose slot is taken */
BPF_PERCPU_HASH(cgroups, u64, struct cg_rq, 4096);
BPF_PERCPU_ARRAY(hist, u64, 64);
BPF_PERCPU_ARRAY(counters, u64, 2);
BPF_PERCPU_ARRAY(drops, u64, 1);
BPF_ARRAY(gate, struct span, 1);

static __always_inline struct span span_now(void)
{
    int zero = 0;
    struct span out = {};
    struct span *s = gate.lookup(&zero);
    if (s)
        out = *s;
    return out;
}

/* The first event of a thread in a span: stamps of an earlier span are dropped.
 * True when they were. */
static __always_inline int rebase(struct task_rq *t, u64 open)
{
    if (t->epoch == open)
        return 0;
    t->epoch = open;
    t->enqueued_ns = 0;
    t->slept_ns = 0;
    t->oncpu_ns = 0;
    return 1;
}

static __always_inline void dropped(void)
{
    int zero = 0;
    u64 *d = drops.lookup(&zero);
    if (d)
        (*d)++;
}

static __always_inline void count(int idx, const struct span *s, u64 now)
{
    if (!in_span(s, now))
        return;
    u64 *c = counters.lookup(&idx);
    if (c)
        (*c)++;
}

/* The entry of `tid`: its slot when the tag matches, else the overflow hash. */
static __always_inline struct task_rq *task_get(u32 tid)
{
    u32 idx = tid & (NSLOTS - 1);
    struct task_rq *t = slots.lookup(&idx);
    if (t && t->tid == tid)
        return t;
    return tasks.lookup(&tid);
}

/* A new entry for `tid` holding `fresh`: its slot when free, else the
 * overflow hash. NULL (and a drop) when both are full. Two CPUs taking one
 * free slot for two different tids at once is possible in principle; the
 * later tag wins and the other thread moves to the overflow hash at its next
 * event, so one event may be counted to the wrong thread. */
static __always_inline struct task_rq *task_new(u32 tid, struct task_rq *fresh)
{
    u32 idx = tid & (NSLOTS - 1);
    fresh->tid = tid;
    struct task_rq *t = slots.lookup(&idx);
    if (t && t->tid == 0) {
        __builtin_memcpy(t, fresh, sizeof(*t));
        return t;
    }
    if (tasks.update(&tid, fresh) < 0) {
        dropped();
        return 0;
    }
    return tasks.lookup(&tid);
}

/* Add the current thread's pending counts to its cgroup. */
static __always_inline void flush(struct task_rq *t, u64 now)
{
    u64 cgid = bpf_get_current_cgroup_id();
    struct cg_rq zero = {};
    struct cg_rq *c = cgroups.lookup_or_try_init(&cgid, &zero);
    if (!c) {
        dropped();
        return;
    }
    c->waits += t->p.waits;
    c->wait_ns += t->p.wait_ns;
    c->wait_sq_us += t->p.wait_sq_us;
    c->switches += t->p.switches;
    c->run_ns += t->p.run_ns;
    c->blocked_ns += t->p.blocked_ns;
    __builtin_memset(&t->p, 0, sizeof(t->p));
    t->flushed_ns = now;
}

static __always_inline void enqueue(u32 tid)
{
    if (tid == 0)
        return;
    u64 now = bpf_ktime_get_ns();
    struct span s = span_now();
    struct task_rq *t = task_get(tid);
    if (t) {
        /* Asleep since the opening when this wakeup is its first event of the span. */
        u64 since = rebase(t, s.open_ns) ? s.open_ns : t->slept_ns;
        if (since && now > since && in_span(&s, now)) {
            u64 b = now - since;
            t->blocked_ns += b;
            t->p.blocked_ns += b;
        }
        t->slept_ns = 0;
        t->enqueued_ns = now;
        return;
    }
    struct task_rq fresh = {};
    fresh.epoch = s.open_ns;
    fresh.enqueued_ns = now;
    fresh.flushed_ns = now;
    fresh.born_ns = now;
    task_new(tid, &fresh);
}

/* The outgoing task is current: the moment to learn its cgroup. */
static __always_inline void switch_out(u32 tid, long state, u64 now, const struct span *s)
{
    struct task_rq *t = task_get(tid);
    u64 ran_from = 0;
    if (!t) {
        if (state & STATE_EXITING)
            return; /* its last switch: an entry now would never be deleted */
        struct task_rq fresh = {};
        fresh.epoch = s->open_ns;
        fresh.flushed_ns = now;
        fresh.born_ns = now;
        t = task_new(tid, &fresh);
        if (!t)
            return;
    } else {
        /* On CPU since the opening when this switch-out is its first event of the span. */
        ran_from = rebase(t, s->open_ns) ? s->open_ns : t->oncpu_ns;
    }
    if (in_span(s, now)) {
        t->p.switches++;
        if (ran_from && now > ran_from)
            t->p.run_ns += now - ran_from;
    }
    t->oncpu_ns = 0;
    if (state == 0)
        t->enqueued_ns = now;
    else if (!(state & STATE_EXITING))
        t->slept_ns = now;
    if (now - t->flushed_ns >= FLUSH_NS)
        flush(t, now);
}

static __always_inline void switch_in(u32 tid, u64 now, const struct span *s)
{
    struct task_rq *t = task_get(tid);
    if (!t)
        return;
    rebase(t, s->open_ns); /* a wait that began before the opening is not measured */
    t->oncpu_ns = now;
    u64 enqueued = t->enqueued_ns;
    t->enqueued_ns = 0;
    if (enqueued == 0 || now < enqueued || !in_span(s, now))
        return;
    u64 delta = now - enqueued;

    u32 slot = log2_slot(delta);
    u64 *h = hist.lookup(&slot);
    if (h)
        (*h)++;
    u32 ts = slot > TID_SLOT_BASE ? slot - TID_SLOT_BASE : 0;
    if (ts >= TID_SLOTS)
        ts = TID_SLOTS - 1;
    t->hist[ts & (TID_SLOTS - 1)]++;

    u64 us = delta / 1000;
    t->p.waits++;
    t->p.wait_ns += delta;
    t->p.wait_sq_us += us * us;
}

TRACEPOINT_PROBE(sched, sched_wakeup)
{
    enqueue(args->pid);
    return 0;
}

TRACEPOINT_PROBE(sched, sched_wakeup_new)
{
    enqueue(args->pid);
    return 0;
}

TRACEPOINT_PROBE(sched, sched_switch)
{
    u32 prev = args->prev_pid;
    u32 next = args->next_pid;
    u64 now = bpf_ktime_get_ns();
    struct span s = span_now();
    count(CTR_SWITCHES, &s, now);
    if (prev != 0)
        switch_out(prev, args->prev_state & STATE_MASK, now, &s);
    if (next != 0)
        switch_in(next, now, &s);
    return 0;
}

TRACEPOINT_PROBE(sched, sched_migrate_task)
{
    struct span s = span_now();
    count(CTR_MIGRATIONS, &s, bpf_ktime_get_ns());
    return 0;
}

/* Current is the exiting thread, still in its cgroup: its last counts go there.
 * The entry stays until the task is freed: the thread still switches out
 * (at least once more, to die), and an entry deleted now would be inserted
 * again by that switch-out and never deleted. */
TRACEPOINT_PROBE(sched, sched_process_exit)
{
    u32 tid = args->pid;
    struct task_rq *t = task_get(tid);
    if (!t)
        return 0;
    u64 now = bpf_ktime_get_ns();
    struct span s = span_now();
    u64 ran_from = rebase(t, s.open_ns) ? s.open_ns : t->oncpu_ns;
    if (ran_from && now > ran_from && in_span(&s, now))
        t->p.run_ns += now - ran_from;
    t->oncpu_ns = now;
    flush(t, now);
    return 0;
}

/* After the last switch-out, before the tid can be reused. */
TRACEPOINT_PROBE(sched, sched_process_free)
{
    u32 tid = args->pid;
    u32 idx = tid & (NSLOTS - 1);
    struct task_rq *t = slots.lookup(&idx);
    if (t && t->tid == tid)
        t->tid = 0; /* the slot is free; the next owner overwrites it whole */
    else
        tasks.delete(&tid);
    return 0;
}
