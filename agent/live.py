"""The live host, assembled once: sources, job discovery, collection, knobs, report.

Every command that watches the real host (report, why, propose, record, auto)
builds one LiveHost, so they all see the same sources, jobs and knobs.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from agent.collection import CollectionConfig, DutyCycle, HotPath, LevelPolicy
from agent.collector import Collector, UnavailableSource, one_line
from agent.cost import CostBudget, CostConfig, CostReading, process_usage
from agent.host import detect_host
from agent.jobs import JobRegistry, OperatorJob
from agent.sources.base import Source
from agent.sources.nvml import NvmlSource
from agent.sources.procfs import ProcfsSource
from agent.sources.trainer import TrainerSource
from agent.sources.trainer_control import TrainerControl
from core.collection import CollectionLevel
from core.hostfs import HostFS
from core.knob import KnobValue
from core.report import HealthReport, build_report
from core.sample import Sample, SourceStatus
from core.window import Window

# A command that watches for a few seconds to answer a person measures all of them.
ONE_SHOT = "a person asked: a one-shot command measures without a break"


class LiveHost:
    """Sources in precedence order (eBPF before procfs), with jobs found from NVML,
    the operator and the trainer hook, and the loader workers of each job.

    With `collection` (the daemon), the hot-path eBPF collectors run on a duty
    cycle while the host looks healthy and without a break while a trigger is open
    or a person asks (agent/collection.py), decided at every collect; without it
    (a one-shot command), without a break.
    """

    def __init__(
        self,
        fs: HostFS | None = None,
        *,
        interval_s: float = 1.0,
        bpf: bool = True,
        operator_jobs: Sequence[OperatorJob] = (),
        state_dir: str | None = None,
        collection: CollectionConfig | None = None,
        cost: CostConfig | None = None,
    ) -> None:
        self.fs = fs or HostFS()
        self.budget = CostBudget(cost)
        self.cost: CostReading | None = None  # as of the last tick()
        # Called when the agent goes over its budget (with why) and back under it (with None):
        # where collection drops to its cheaper level.
        self.on_budget: Callable[[str | None], object] | None = None
        self.nvml = NvmlSource()
        self.trainer = TrainerSource(state_dir)
        self.jobs = JobRegistry(
            self.fs,
            operator=operator_jobs,
            gpu_processes=self._gpu_processes,
            announced=self.trainer.jobs,
        )
        self.trainer_control = TrainerControl(self.trainer)
        sources: list[Source] = []
        self._bpf: Source | None = self._bpf_source() if bpf else None
        sources.append(self._bpf or UnavailableSource("bpf", "turned off by the operator"))
        sources += [self.nvml, self.trainer, ProcfsSource(self.fs)]
        self.collector = Collector(sources, interval_s)
        self._nvml_live = False
        policy = LevelPolicy(
            collection or CollectionConfig(),
            clock=self.collector.now,
            fixed=None if collection is not None else ONE_SHOT,
        )
        self.duty = DutyCycle(policy, interval_s)
        self.collector.after_tick.append(self.duty.on_sample)

    def _gpu_processes(self) -> dict[int, list[int]]:
        return self.nvml.gpu_processes() if self._nvml_live else {}

    def _bpf_source(self) -> Source:
        try:
            # By name, here: it pulls in bcc, which is optional and slow to import,
            # and a host without it must still get a report.
            module = importlib.import_module("agent.sources.bpf_source")
            src: Source = module.BpfSource(
                fs=self.fs, jobs=self.jobs.pids_by_job, run_time_stats=self.budget.config.bpf_stats
            )
            return src
        except Exception as exc:
            return UnavailableSource("bpf", f"eBPF source unavailable ({one_line(exc)})")

    def start(self) -> dict[str, SourceStatus]:
        statuses = self.collector.start()
        self._nvml_live = statuses.get("nvml", SourceStatus(live=False)).live
        bpf = next((s for s in self.collector.sources if s.name == "bpf"), None)
        if statuses.get("bpf", SourceStatus(live=False)).live and isinstance(bpf, HotPath):
            hot = getattr(bpf, "hot_collectors", None)
            if not callable(hot) or hot():
                self.duty.attach(bpf)
        return statuses

    @property
    def level(self) -> CollectionLevel:
        """The collection level now, and why."""
        return self.duty.level

    def reconfigure_collection(self, config: CollectionConfig) -> CollectionLevel:
        """A reload's `collection:` section, applied to the running duty cycle: the collectors stay
        loaded, the usual levels and an open trigger carry over. Call it on the collecting thread."""
        return self.duty.reconfigure(config)

    def ask(self, who: str) -> CollectionLevel:
        """A person asked (`why`, `ask`, the dashboard): the hot path measures without a break for a while."""
        return self.duty.ask(who)

    def tick(self) -> Sample:
        """Collect one interval, then measure what the agent costs (see check_cost)."""
        sample = self.collector.tick()
        self.check_cost()
        return sample

    def steady(self) -> None:
        """Start-up is over (the agent's other parts are up): its budget's window starts now."""
        self.budget.restart()

    def check_cost(self) -> str | None:
        """Read the agent's cost and compare it with the budget; why it is over budget, or None.

        On a change either way on_budget is told, with the reason or None.
        """
        was = self.budget.over_budget()
        cpu_s, rss = process_usage()
        programs_of = getattr(self._bpf, "program_costs", None)
        status_of = getattr(self._bpf, "run_time_status", None)
        programs = programs_of() if callable(programs_of) else {}
        measured, how = status_of() if callable(status_of) else (False, "no eBPF programs")
        reading = CostReading(cpu_s, rss, programs, bpf_measured=measured, bpf_how=how)
        share = self.budget.observe(cpu_s, reading.bpf_s)
        over = self.budget.over_budget()
        self.cost = replace(reading, share=share, budget_cores=self.budget.config.budget_cores, over=over)
        self.duty.policy.over_budget(over)  # the cheaper level while over, from the next sample
        if (over is None) != (was is None) and self.on_budget is not None:
            self.on_budget(over)
        return over

    def collect(self, duration_s: float, on_sample: Callable[[Sample], None] | None = None) -> Window:
        """Watch for `duration_s` (or until SIGINT/SIGTERM). Sources stay open for report()."""
        return self.collector.run(duration_s, on_sample=on_sample, close=False)

    def knobs(self, devices: Sequence[str], gpus: Sequence[int]) -> dict[str, KnobValue]:
        from primitives.catalog import read_knobs
        from primitives.channels import open_nvml_power

        gpu = open_nvml_power()[0] if self._nvml_live else None
        try:
            jobs = [j.name for j in self.jobs.job_infos()]
            return dict(read_knobs(self.fs, devices, jobs, gpus, trainer=self.trainer_control, gpu=gpu))
        except (OSError, LookupError, ValueError):
            return {}

    def report(self, window: Window) -> HealthReport:
        return self.report_later(window)()

    def report_later(self, window: Window) -> Callable[[], HealthReport]:
        """The report of `window` as it stands now, to be made when first wanted.

        The window's samples, the jobs, the sources' states, the drops, the notes and the
        collection level are taken now, on the collecting thread; the host's description,
        the knobs' values and the summaries (most of a report's cost) when the returned
        function is called, from any thread. The service keeps one of these per tick and
        makes the report only for a tick somebody reads.
        """
        frozen = window.copy()
        gpus = self.nvml.gpu_count if self._nvml_live else 0
        names = self.nvml.gpu_names() if self._nvml_live else {}
        jobs = self.jobs.job_infos()
        sources = dict(self.collector.statuses)
        drops = self.collector.drops()
        notes = [*self.jobs.notes, *self._cost_notes()]
        level = self.level

        def make() -> HealthReport:
            host = detect_host(self.fs, gpus=gpus, gpu_model=next(iter(names.values()), None))
            return build_report(
                frozen,
                host,
                knobs=self.knobs(host.block_devices, list(range(gpus))),
                jobs=jobs,
                sources=sources,
                drops=drops,
                notes=notes,
                collection=level,
            )

        return make

    def _cost_notes(self) -> list[str]:
        c = self.cost
        if c is None or c.over is None:
            return []
        return [f"cost: {c.over}"]

    def reload_collectors(self) -> tuple[bool, str]:
        """Replace the running eBPF programs with fresh builds, counts carried over.

        The other sources, the jobs and the window are untouched, and the next
        sample covers its whole interval. True when every source that can be
        reloaded was; the text has one line per source.
        """
        # The compile is a one-off the operator asked for, not what collection costs.
        cpu0 = time.thread_time()
        done = self.collector.reload()
        self.budget.exclude(time.thread_time() - cpu0)
        return all(ok for _, ok, _ in done), "\n".join(f"{name}: {line}" for name, _, line in done)

    def close(self) -> None:
        self.collector.close()

    def observe(
        self, duration_s: float, on_sample: Callable[[Sample], None] | None = None
    ) -> tuple[Window, HealthReport]:
        """Start, watch, summarise and close: what one-shot commands want."""
        try:
            with self.collector.stopping_on_signals():
                self.start()
                window = self.collect(duration_s, on_sample)
            return window, self.report(window)
        finally:
            self.close()
