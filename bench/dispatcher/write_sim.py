"""Writes the simulated campaign's inputs into WORK: chips.json (CHIPS CPU chips with their lock
files) and script.json (the fake author: one run_on_chip of CHIP_S seconds, an edit, a commit, a
finish; the model paced at PACE_MS per event). Shared by bench/dispatcher and bench/mcp.
Usage: write_sim.py WORK CHIPS CHIP_S PACE_MS"""
import json
import sys

work, chips, chip_s, pace = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
json.dump({"chips": [{"id": str(i), "kind": "cpu", "lock": f"{work}/chip{i}.lock"}
                     for i in range(chips)]}, open(f"{work}/chips.json", "w"))
row = "| cand1 | kernel-authored | {{result.c1.sha}} | 0 / 0 | - | - | - | the one candidate of the simulation |"
ledger = ("loaded: [index; BRIEFS.md]\n| candidate | class | committed SHA | parity (max abs / max rel) "
          "| p50 ms (author-side) | vs naive | receipt | why kept/rejected |\n|---|---|---|---|---|---|---|---|\n" + row)
turns = [
  {"text": "Measuring the first candidate on the chip.",
   "tool_calls": [{"id": "m1", "name": "run_on_chip", "input": {"command": ["sleep", str(chip_s)]}}]},
  {"tool_calls": [{"id": "w1", "name": "edit_file", "input": {"path": "normkit/rms_norm.py",
     "old_text": "import numpy as np", "new_text": "import numpy as np  # one pass"}}]},
  {"tool_calls": [{"id": "c1", "name": "commit", "input": {"message": "cand1({{experiment}}): one pass — simulated"}}]},
  {"tool_calls": [{"id": "f", "name": "finish", "input": {
     "ledger": ledger, "final_candidate": {"path": "normkit/rms_norm.py", "sha": "{{result.c1.sha}}"},
     "mechanism": "A simulated single pass.", "escalations": [], "blockers": [],
     "abandoned": [{"candidate": "cand2", "reason": "simulation"}, {"candidate": "cand3", "reason": "simulation"}],
     "compliance": "no-peek respected"}}]}]
json.dump({"model": "fake-campaign", "pace_ms": pace, "turns": turns}, open(f"{work}/script.json", "w"))
