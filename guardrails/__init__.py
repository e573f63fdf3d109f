"""Safety gate, leases, journal and rollback, effect tracking, PID, safe mode."""
