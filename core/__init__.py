"""The bottom layer: the pipeline's stage types and host access, importing nothing else of idletune.

Sample, Window, HealthReport, Diagnosis, Proposal, the knob key and value, the metric
vocabulary, the state directory, HostFS, the CPU-list format and the recorded-incident
format. Every other package may import these; they import none of them.
"""
