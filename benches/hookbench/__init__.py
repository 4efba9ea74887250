"""What the Python benches share: the Claude Code PreToolUse hook seen from
outside (`hook`: the payload a tool call is sent as, a hook process per
call, what its answer means, safety-dongle set up as a hook) and the peers'
labelled suites (`suites`: their rows, and a guard's answers scored against
their labels).

The scripts beside this folder import it (`from hookbench import ...`): run
them as `python3 benches/NAME.py` so the folder is on the import path.
"""
