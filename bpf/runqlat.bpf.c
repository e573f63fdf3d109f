/* runqlat: run-queue latency, from becoming runnable to running on a CPU.
 *
 * Overhead: sched_wakeup / sched_wakeup_new do one hash lookup and an
 * in-place write, plus one per-CPU hash lookup when the wakee was asleep;
 * sched_switch does, for the outgoing task, one hash lookup, one per-CPU hash
 * lookup and in-place writes, and for the incoming task one hash lookup, in-
 * place increments, one per-CPU array increment and one per-CPU hash lookup
 * when it waited. A thread's entry is inserted the first time it is seen and
 * deleted at thread exit; a cgroup's entry is inserted once per interval
 * (user space drains them). Estimated cost: ~200-350 ns per context switch
 * and ~100-200 ns per wakeup, most of it the perf tracepoint itself.
 *
 * Keying: tracepoints name the wakee only by its thread id (args->pid), and
 * bpf_get_current_*() describes the waker, so the kernel keeps one entry per
 * tid holding its pending enqueue time and its own histogram; user space
 * groups tids into jobs (it lists /proc/<pid>/task of each job pid) and reads
 * only those tids. Grouping by tgid or cgroup is a user-space grouping of the
 * same entries.
 *
 * Per cgroup, in the kernel: a thread's entry keeps its cgroup (v2) id, read
 * with bpf_get_current_cgroup_id() at switch-out, the one moment the thread
 * is current; wakeups and switch-ins charge that cgroup. Each cgroup's entry
 * counts run-queue waits with their sum and sum of squares (mean and standard
 * deviation), switch-outs, time on CPU and time blocked (asleep, counted when
 * the sleep ends). It is a per-CPU hash, so no two CPUs write one value and
 * no atomics are needed; user space sums the CPUs and drains it each
 * interval. A thread not yet switched out since it was created has no cgroup
 * (0) and charges none.
 *
 * An entry is written by the wakeup path and by the CPU the task runs on,
 * never by two CPUs for the same event, so plain (non-atomic) updates hold.
 *
 * Costs are estimates of the program itself; bench/overhead.py measures the
 * slowdown of whole workloads, tracepoint dispatch included.
 */

#define MAX_SLOT 63
/* Per-thread histograms keep 32 slots starting at 2^8 ns: run-queue waits
 * under 256 ns count in the first slot, waits over 2^39 ns in the last. */
#define TID_SLOTS 32
#define TID_SLOT_BASE 8
/* prev_state carries TASK_REPORT_MAX (0x100) for a preempted task; the low
 * byte is the reported state, 0 meaning runnable (TASK_RUNNING). */
#define STATE_MASK 0xff

static __always_inline u32 log2_slot(u64 v)
{
    u32 s = bpf_log2l(v);
    s = s ? s - 1 : 0;
    return s > MAX_SLOT ? MAX_SLOT : s;
}

/* Reported exit states (EXIT_DEAD 'X', EXIT_ZOMBIE 'Z'): the task never wakes. */
#define STATE_EXITING 0x30

struct task_rq {
    u64 enqueued_ns; /* 0 when the task is not waiting on a run queue */
    u64 hist[TID_SLOTS];
    u64 cgid;        /* cgroup v2 id at the last switch-out, 0 before the first */
    u64 slept_ns;    /* start of a sleep in progress, 0 when none */
    u64 oncpu_ns;    /* when the task went on CPU, 0 while it is off */
};

struct cg_rq {
    u64 waits;      /* run-queue waits that ended */
    u64 wait_ns;
    u64 wait_sq_us; /* sum of squared waits in us^2: ns^2 would overflow */
    u64 switches;   /* switch-outs */
    u64 run_ns;     /* on CPU, counted at switch-out */
    u64 blocked_ns; /* asleep, counted at wakeup */
};

BPF_HASH(tasks, u32, struct task_rq, 16384);
BPF_PERCPU_HASH(cgroups, u64, struct cg_rq, 4096);
BPF_PERCPU_ARRAY(hist, u64, 64);
BPF_PERCPU_ARRAY(drops, u64, 1);

static __always_inline void dropped(void)
{
    int zero = 0;
    u64 *d = drops.lookup(&zero);
    if (d)
        (*d)++;
}

static __always_inline struct cg_rq *cgroup_of(u64 cgid)
{
    if (cgid == 0)
        return 0;
    struct cg_rq zero = {};
    struct cg_rq *c = cgroups.lookup_or_try_init(&cgid, &zero);
    if (!c)
        dropped();
    return c;
}

static __always_inline void enqueue(u32 tid)
{
    if (tid == 0)
        return;
    u64 now = bpf_ktime_get_ns();
    struct task_rq *t = tasks.lookup(&tid);
    if (t) {
        if (t->slept_ns && now > t->slept_ns) {
            struct cg_rq *c = cgroup_of(t->cgid);
            if (c)
                c->blocked_ns += now - t->slept_ns;
        }
        t->slept_ns = 0;
        t->enqueued_ns = now;
        return;
    }
    struct task_rq fresh = {};
    fresh.enqueued_ns = now;
    if (tasks.update(&tid, &fresh) < 0)
        dropped();
}

/* The outgoing task is current: the moment to learn its cgroup. */
static __always_inline void switch_out(u32 tid, long state, u64 now)
{
    struct task_rq *t = tasks.lookup(&tid);
    if (!t) {
        struct task_rq fresh = {};
        if (tasks.update(&tid, &fresh) < 0) {
            dropped();
            return;
        }
        t = tasks.lookup(&tid);
        if (!t)
            return;
    }
    u64 cgid = bpf_get_current_cgroup_id();
    t->cgid = cgid;
    struct cg_rq *c = cgroup_of(cgid);
    if (c) {
        c->switches++;
        if (t->oncpu_ns && now > t->oncpu_ns)
            c->run_ns += now - t->oncpu_ns;
    }
    t->oncpu_ns = 0;
    if (state == 0)
        t->enqueued_ns = now;
    else if (!(state & STATE_EXITING))
        t->slept_ns = now;
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
    u64 now = bpf_ktime_get_ns();
    u32 prev = args->prev_pid;
    if (prev != 0)
        switch_out(prev, args->prev_state & STATE_MASK, now);

    u32 tid = args->next_pid;
    if (tid == 0)
        return 0;
    struct task_rq *t = tasks.lookup(&tid);
    if (!t)
        return 0;
    t->oncpu_ns = now;
    if (t->enqueued_ns == 0 || now < t->enqueued_ns)
        return 0;
    u64 delta = now - t->enqueued_ns;
    t->enqueued_ns = 0;

    u32 slot = log2_slot(delta);
    u64 *h = hist.lookup(&slot);
    if (h)
        (*h)++;
    u32 ts = slot > TID_SLOT_BASE ? slot - TID_SLOT_BASE : 0;
    if (ts >= TID_SLOTS)
        ts = TID_SLOTS - 1;
    t->hist[ts & (TID_SLOTS - 1)]++;

    struct cg_rq *c = cgroup_of(t->cgid);
    if (c) {
        u64 us = delta / 1000;
        c->waits++;
        c->wait_ns += delta;
        c->wait_sq_us += us * us;
    }
    return 0;
}

TRACEPOINT_PROBE(sched, sched_process_exit)
{
    u32 tid = args->pid;
    tasks.delete(&tid);
    return 0;
}
