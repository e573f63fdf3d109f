"""The deploy files load and carry the fields a fleet needs: unit, DaemonSet, scrape config, dashboard."""

from __future__ import annotations

import configparser
import json
import re
from pathlib import Path
from typing import Any

import yaml

from agent.service.metrics import PREFIX, family_name
from core.vocabulary import METRICS

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def test_systemd_unit() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(DEPLOY / "idletune.service")
    svc = unit["Service"]
    assert "idletune serve" in svc["ExecStart"] and "--host 127.0.0.1" in svc["ExecStart"]
    assert svc["Environment"] == "IDLETUNE_STATE_DIR=/var/lib/idletune"
    assert svc["UMask"] == "0077" and svc["StateDirectoryMode"] == "0755"
    assert svc["Restart"] == "on-failure" and svc["KillSignal"] == "SIGTERM"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    assert unit["Unit"]["Description"]


def _mounts(pod: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """mount path -> (host path, volume name) of the first container."""
    host = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
    return {m["mountPath"]: (host[m["name"]], m["name"]) for m in pod["containers"][0]["volumeMounts"]}


def test_daemonset_is_privileged_with_host_pid_and_the_host_mounts() -> None:
    ds = yaml.safe_load((DEPLOY / "k8s/daemonset.yaml").read_text())
    assert ds["apiVersion"] == "apps/v1" and ds["kind"] == "DaemonSet"
    spec = ds["spec"]
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    pod = spec["template"]["spec"]
    assert pod["hostPID"] is True
    c = pod["containers"][0]
    assert c["securityContext"]["privileged"] is True
    assert c["args"][0] == "serve"
    port = c["ports"][0]["containerPort"]
    assert str(port) in c["args"]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["IDLETUNE_STATE_DIR"] == "/var/lib/idletune"
    mounts = _mounts(pod)
    assert mounts["/sys"][0] == "/sys"
    assert mounts["/host/proc"][0] == "/proc"
    assert mounts["/lib/modules"][0] == "/lib/modules" and mounts["/usr/src"][0] == "/usr/src"
    assert mounts["/var/lib/idletune"][0] == "/var/lib/idletune"
    ann = spec["template"]["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and ann["prometheus.io/port"] == str(port)
    assert c["readinessProbe"]["httpGet"]["path"] == "/v1/status"


def test_prometheus_scrape_config() -> None:
    doc = yaml.safe_load((DEPLOY / "prometheus/scrape.yaml").read_text())
    jobs = {j["job_name"]: j for j in doc["scrape_configs"]}
    k8s = jobs["idletune"]
    assert k8s["metrics_path"] == "/metrics"
    assert k8s["kubernetes_sd_configs"][0]["role"] == "pod"
    keep = [r for r in k8s["relabel_configs"] if r.get("action") == "keep"]
    assert any(r["regex"] == "idletune" for r in keep)
    assert jobs["idletune-hosts"]["static_configs"][0]["targets"] == ["127.0.0.1:8786"]


def test_grafana_dashboard_queries_metrics_the_service_exports() -> None:
    doc = json.loads((DEPLOY / "grafana/idletune.json").read_text())
    assert doc["title"] and doc["uid"] == "idletune" and isinstance(doc["schemaVersion"], int)
    assert {v["name"] for v in doc["templating"]["list"]} >= {"datasource", "instance"}
    exported = {family_name(d) for d in METRICS} | {
        PREFIX + n
        for n in ("cause_confidence", "source_live", "pending_approvals", "actions_total", "verdicts_total")
    } | {PREFIX + "rollbacks_total"}
    ids = set()
    for p in doc["panels"]:
        assert p["id"] not in ids and p["title"] and p["targets"]
        ids.add(p["id"])
        assert {"h", "w", "x", "y"} <= p["gridPos"].keys()
        for t in p["targets"]:
            names = set(re.findall(r"\b(idletune_[a-z0-9_]+)", t["expr"]))
            assert names and names <= exported, names - exported


def test_bootstrap_installs_chromium_through_the_idempotent_path() -> None:
    text = (DEPLOY / "bootstrap.sh").read_text()
    pkgs = re.search(r"^APT_PKGS=\(([^)]*)\)", text, re.M)
    assert pkgs is not None and "chromium" in pkgs.group(1).split()
    assert 'apt_install "${APT_PKGS[@]}"' in text
