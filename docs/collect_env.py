"""Print the ROCm environment of this machine (or of a fixture: collect_env.py FIXTURE), the
way a bug report wants it."""
import sys
from collections import Counter

import rocm_probe

root = sys.argv[1] if len(sys.argv) > 1 else None
doc = rocm_probe.report(root=root)
config = doc["facts"]["config"]

print(f"rocm-probe:      {rocm_probe.__version__} (schema {doc['schema_version']})")
print(f"ROCm:            {config['rocm'] or 'not found'}")
print(f"Kernel:          {config['kernel'] or 'unknown'}")
print(f"amdgpu:          {config['amdgpu'] or 'unknown'}")
targets = Counter(rocm_probe.targets(root=root, full=True))
print(f"Targets:         {', '.join(f'{n} x {t}' for t, n in targets.items()) or 'none'}")
for gpu in doc["facts"]["gpus"]:
    name = gpu["marketing_name"] or f"device {gpu['device_id']}"
    print(f"GPU {gpu['index']}:           {name} ({gpu['gfx']}) at {gpu['pci_address']}")
for name, version in sorted(config["libraries"].items()):
    print(f"{name + ':':<17}{version}")
verdict = doc["verdict"]
print(f"Verdict:         {verdict['status']}: {verdict['summary']}")
for f in doc["findings"]:
    if f["status"] in ("fail", "warn"):
        print(f"  [{f['status']}] {f['id']}: {f['summary']}")
