"""`idletune testbed list|run|stop`: fault scenarios around a real PyTorch CPU training job."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.errors import fail

testbed_app = typer.Typer(
    help="Reproducible fault scenarios (needs root and the testbed extra).", no_args_is_help=True
)


@testbed_app.command("list")
def list_command() -> None:
    """The scenarios, the cause each injects, and what its fix changes."""
    from evals.testbed.scenarios import SCENARIOS

    for sc in SCENARIOS.values():
        typer.echo(f"{sc.name:<12} {sc.cause:<22} {sc.title}")
        typer.echo(f"{'':<12} {'fix:':<22} {sc.fix_note}")


@testbed_app.command("run")
def run_command(
    scenario: Annotated[str, typer.Argument(help="a scenario from `idletune testbed list`")],
    phase: Annotated[str, typer.Option("--phase", help="fault or fix")] = "fault",
    seconds: Annotated[float, typer.Option("--seconds", min=1.0, help="seconds to measure")] = 8.0,
    do_measure: Annotated[
        bool, typer.Option("--measure", help="run fault then fix, print both and tear down")
    ] = False,
    lifetime: Annotated[
        float, typer.Option("--lifetime", min=10.0, help="seconds the job may run before it ends itself")
    ] = 900.0,
) -> None:
    """Set a scenario up and measure its KPI; it stays up for the agent until `testbed stop`."""
    from evals.testbed.runner import TestbedError, measure, movement, run_scenario

    if phase not in ("fault", "fix"):
        fail("--phase must be fault or fix")
    try:
        if do_measure:
            fault, fix = measure(scenario, seconds)
            typer.echo(f"{scenario} fault: {fault.line()}")
            typer.echo(f"{scenario} fix:   {fix.line()}")
            typer.echo(f"{scenario} samples/s moved {100 * movement(fault, fix):+.0f}% from fault to fix")
            return
        kpi = run_scenario(
            scenario, "fault" if phase == "fault" else "fix", seconds, keep=True, lifetime_s=lifetime
        )
    except TestbedError as e:
        fail(str(e))
    except KeyboardInterrupt:
        fail("interrupted; the scenario was torn down")
    from evals.testbed.runner import current

    info = current() or {}
    typer.echo(f"{scenario} {phase}: {kpi.line()}")
    typer.echo(f"data device {info.get('device', '?')}; running until `idletune testbed stop`")


@testbed_app.command("stop")
def stop_command() -> None:
    """Undo what a testbed run set up (processes, cgroups, loop device, knobs); safe to repeat."""
    from evals.testbed.runner import TestbedError, current, stop

    info = current()
    try:
        problems = stop()
    except TestbedError as e:
        fail(str(e))
    for line in problems:
        typer.echo(f"could not undo {line}", err=True)
    if info is None:
        typer.echo("nothing was set up")
    elif problems:
        fail(f"{len(problems)} step(s) could not be undone; see above")
    else:
        typer.echo(f"stopped {info.get('scenario', 'scenario')}: host restored")


def register(app: typer.Typer) -> None:
    app.add_typer(testbed_app, name="testbed")
