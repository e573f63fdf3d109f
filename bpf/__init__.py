"""eBPF tracepoint collectors and their bcc loader."""
