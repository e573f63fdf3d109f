/* runqlat: run-queue latency, from becoming runnable to running on a CPU.
 *
 * Overhead: sched_wakeup / sched_wakeup_new do one shared-hash update;
 * sched_switch does one hash update when the outgoing task was preempted
 * (still runnable), and for the incoming task one hash lookup+delete, one
 * per-CPU array increment and one per-CPU hash lookup-or-init. Expected cost:
 * ~100-250 ns per context switch, ~50-100 ns per wakeup.
 *
 * Keying: tracepoints name the wakee only by its thread id (args->pid), and
 * bpf_get_current_*() describes the waker, so the kernel keys the per-task
 * histogram by tid and user space groups tids into jobs (it lists
 * /proc/<pid>/task of each job pid). Grouping by tgid or by cgroup is a
 * user-space grouping of the same per-tid data. An in-kernel cgroup view
 * would record bpf_get_current_cgroup_id() at switch-out, the one moment the
 * task is current, in the start value and key a second histogram by it.
 */

#define MAX_SLOT 63
/* prev_state carries TASK_REPORT_MAX (0x100) for a preempted task; the low
 * byte is the reported state, 0 meaning runnable (TASK_RUNNING). */
#define STATE_MASK 0xff

static __always_inline u32 log2_slot(u64 v)
{
    u32 s = bpf_log2l(v);
    s = s ? s - 1 : 0;
    return s > MAX_SLOT ? MAX_SLOT : s;
}

struct tid_slot {
    u32 tid;
    u32 slot;
};

BPF_HASH(start, u32, u64, 32768);
BPF_PERCPU_ARRAY(hist, u64, 64);
BPF_PERCPU_HASH(tid_hist, struct tid_slot, u64, 16384);
BPF_PERCPU_ARRAY(drops, u64, 1);

static __always_inline void drop(void)
{
    int zero = 0;
    u64 *d = drops.lookup(&zero);
    if (d)
        (*d)++;
}

static __always_inline void enqueue(u32 tid)
{
    if (tid == 0)
        return;
    u64 ts = bpf_ktime_get_ns();
    if (start.update(&tid, &ts) < 0)
        drop();
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
    u64 *tsp = start.lookup(&tid);
    if (!tsp)
        return 0;
    u64 delta = bpf_ktime_get_ns() - *tsp;
    start.delete(&tid);

    u32 slot = log2_slot(delta);
    u64 *h = hist.lookup(&slot);
    if (h)
        (*h)++;
    struct tid_slot k = {.tid = tid, .slot = slot};
    u64 zero64 = 0;
    u64 *c = tid_hist.lookup_or_try_init(&k, &zero64);
    if (c)
        (*c)++;
    else
        drop();
    return 0;
}

/* A task woken while still on a CPU keeps a start entry; drop it at exit so
 * the map does not fill with dead tids. */
TRACEPOINT_PROBE(sched, sched_process_exit)
{
    u32 tid = args->pid;
    start.delete(&tid);
    return 0;
}
