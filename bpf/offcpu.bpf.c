/* offcpu: time tasks spend off-CPU and not runnable (blocked), context
 * switches and task migrations.
 *
 * Blocked time runs from a switch-out in a sleeping state to the wakeup; the
 * wait on the run queue after the wakeup is run-queue latency (runqlat) and is
 * not counted twice. Each thread has one entry with the start of its sleep in
 * progress and its running total of blocked ns; user space reads the entries
 * of the threads it watches, so a sleep still in progress is seen too.
 *
 * Overhead: sched_switch does one per-CPU array increment and, when the
 * outgoing task blocks, one hash lookup and an in-place write; sched_wakeup
 * one hash lookup and an in-place update; sched_migrate_task one per-CPU
 * array increment. Inserts happen only for a thread's first sleep, deletes
 * only at exit. Estimated cost: ~80-150 ns per context switch and per wakeup,
 * ~20 ns per migration.
 *
 * Costs are estimates of the program itself; bench/overhead.py measures the
 * slowdown of whole workloads, tracepoint dispatch included.
 */

#define STATE_MASK 0xff
/* Reported exit states (EXIT_DEAD 'X', EXIT_ZOMBIE 'Z'): the task never wakes. */
#define STATE_EXITING 0x30

#define CTR_SWITCHES 0
#define CTR_MIGRATIONS 1

struct task_off {
    u64 sleep_ns;   /* start of the sleep in progress, 0 when none */
    u64 blocked_ns; /* total of the sleeps that ended */
};

BPF_HASH(tasks, u32, struct task_off, 32768);
BPF_PERCPU_ARRAY(counters, u64, 2);
BPF_PERCPU_ARRAY(drops, u64, 1);

static __always_inline void count(int idx)
{
    u64 *c = counters.lookup(&idx);
    if (c)
        (*c)++;
}

TRACEPOINT_PROBE(sched, sched_switch)
{
    count(CTR_SWITCHES);
    long state = args->prev_state & STATE_MASK;
    u32 tid = args->prev_pid;
    if (state == 0 || (state & STATE_EXITING) || tid == 0)
        return 0;
    u64 now = bpf_ktime_get_ns();
    struct task_off *t = tasks.lookup(&tid);
    if (t) {
        t->sleep_ns = now;
        return 0;
    }
    struct task_off fresh = {.sleep_ns = now};
    if (tasks.update(&tid, &fresh) < 0) {
        int zero = 0;
        u64 *d = drops.lookup(&zero);
        if (d)
            (*d)++;
    }
    return 0;
}

TRACEPOINT_PROBE(sched, sched_wakeup)
{
    u32 tid = args->pid;
    struct task_off *t = tasks.lookup(&tid);
    if (!t || t->sleep_ns == 0)
        return 0;
    t->blocked_ns += bpf_ktime_get_ns() - t->sleep_ns;
    t->sleep_ns = 0;
    return 0;
}

TRACEPOINT_PROBE(sched, sched_migrate_task)
{
    count(CTR_MIGRATIONS);
    return 0;
}

TRACEPOINT_PROBE(sched, sched_process_exit)
{
    u32 tid = args->pid;
    tasks.delete(&tid);
    return 0;
}
