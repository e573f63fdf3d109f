"""The HTTP service: API, dashboard, metrics, per-cgroup features."""
