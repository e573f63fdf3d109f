/* runqlat: run-queue latency, from becoming runnable to running on a CPU.
 *
 * Overhead: sched_wakeup / sched_wakeup_new do one hash lookup and an
 * in-place write; sched_switch does the same for a preempted outgoing task,
 * and for the incoming task one hash lookup, two in-place increments and one
 * per-CPU array increment. A hash insert happens only the first time a
 * thread is seen and a delete only at thread exit, so the switch path never
 * takes the map's allocation locks. Estimated cost: ~100-200 ns per context
 * switch and per wakeup, most of it the perf tracepoint itself.
 *
 * Keying: tracepoints name the wakee only by its thread id (args->pid), and
 * bpf_get_current_*() describes the waker, so the kernel keeps one entry per
 * tid holding its pending enqueue time and its own histogram; user space
 * groups tids into jobs (it lists /proc/<pid>/task of each job pid) and reads
 * only those tids. Grouping by tgid or cgroup is a user-space grouping of the
 * same entries. An in-kernel cgroup view would store
 * bpf_get_current_cgroup_id() in the entry at switch-out, the one moment the
 * task is current, and add a histogram keyed by it.
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

struct task_rq {
    u64 enqueued_ns; /* 0 when the task is not waiting on a run queue */
    u64 hist[TID_SLOTS];
};

BPF_HASH(tasks, u32, struct task_rq, 16384);
BPF_PERCPU_ARRAY(hist, u64, 64);
BPF_PERCPU_ARRAY(drops, u64, 1);

static __always_inline void enqueue(u32 tid)
{
    if (tid == 0)
        return;
    u64 now = bpf_ktime_get_ns();
    struct task_rq *t = tasks.lookup(&tid);
    if (t) {
        t->enqueued_ns = now;
        return;
    }
    struct task_rq fresh = {};
    fresh.enqueued_ns = now;
    if (tasks.update(&tid, &fresh) < 0) {
        int zero = 0;
        u64 *d = drops.lookup(&zero);
        if (d)
            (*d)++;
    }
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
    if ((args->prev_state & STATE_MASK) == 0)
        enqueue(args->prev_pid);

    u32 tid = args->next_pid;
    if (tid == 0)
        return 0;
    struct task_rq *t = tasks.lookup(&tid);
    if (!t || t->enqueued_ns == 0)
        return 0;
    u64 delta = bpf_ktime_get_ns() - t->enqueued_ns;
    t->enqueued_ns = 0;

    u32 slot = log2_slot(delta);
    u64 *h = hist.lookup(&slot);
    if (h)
        (*h)++;
    u32 ts = slot > TID_SLOT_BASE ? slot - TID_SLOT_BASE : 0;
    if (ts >= TID_SLOTS)
        ts = TID_SLOTS - 1;
    t->hist[ts & (TID_SLOTS - 1)]++;
    return 0;
}

TRACEPOINT_PROBE(sched, sched_process_exit)
{
    u32 tid = args->pid;
    tasks.delete(&tid);
    return 0;
}
