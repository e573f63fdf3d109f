/* offcpu: time tasks spend off-CPU and not runnable (blocked), context
 * switches and task migrations.
 *
 * Blocked time runs from a switch-out in a sleeping state to the wakeup; the
 * wait on the run queue after the wakeup is run-queue latency (runqlat) and is
 * not counted twice. Time of a sleep still in progress is read by user space
 * from `sleep_start` so a thread blocked for a whole interval shows it.
 *
 * Overhead: sched_switch does one per-CPU array increment and, when the
 * outgoing task blocks, one shared-hash update; sched_wakeup does one hash
 * lookup (+delete and one per-CPU hash lookup-or-init when found);
 * sched_migrate_task one per-CPU array increment. Expected cost: ~60-150 ns
 * per context switch, ~50-120 ns per wakeup, ~20 ns per migration.
 */

#define STATE_MASK 0xff
/* Reported exit states (EXIT_DEAD 'X', EXIT_ZOMBIE 'Z'): the task never wakes. */
#define STATE_EXITING 0x30

#define CTR_SWITCHES 0
#define CTR_MIGRATIONS 1

BPF_HASH(sleep_start, u32, u64, 32768);
BPF_PERCPU_HASH(offcpu_ns, u32, u64, 16384);
BPF_PERCPU_ARRAY(counters, u64, 2);
BPF_PERCPU_ARRAY(drops, u64, 1);

static __always_inline void drop(void)
{
    int zero = 0;
    u64 *d = drops.lookup(&zero);
    if (d)
        (*d)++;
}

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
    u64 ts = bpf_ktime_get_ns();
    if (sleep_start.update(&tid, &ts) < 0)
        drop();
    return 0;
}

TRACEPOINT_PROBE(sched, sched_wakeup)
{
    u32 tid = args->pid;
    u64 *tsp = sleep_start.lookup(&tid);
    if (!tsp)
        return 0;
    u64 delta = bpf_ktime_get_ns() - *tsp;
    sleep_start.delete(&tid);
    u64 zero64 = 0;
    u64 *sum = offcpu_ns.lookup_or_try_init(&tid, &zero64);
    if (sum)
        *sum += delta;
    else
        drop();
    return 0;
}

TRACEPOINT_PROBE(sched, sched_migrate_task)
{
    count(CTR_MIGRATIONS);
    return 0;
}
