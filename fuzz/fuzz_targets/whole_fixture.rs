//! A whole fixture built from fuzz bytes: chunks separated by 0xFF, each written to one of the
//! paths the collectors read (chosen by its first byte); then the full report, agents and
//! targets run on it. Any combination must give findings, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::report::{Options, Report};
use rocm_probe::{Inventory, Source};

const PATHS: &[&str] = &[
    "sys/class/kfd/kfd/topology/generation_id",
    "sys/class/kfd/kfd/topology/system_properties",
    "sys/class/kfd/kfd/topology/nodes/0/properties",
    "sys/class/kfd/kfd/topology/nodes/1/properties",
    "sys/class/kfd/kfd/topology/nodes/1/gpu_id",
    "sys/class/kfd/kfd/topology/nodes/1/name",
    "sys/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties",
    "sys/class/kfd/kfd/topology/nodes/1/caches/0/properties",
    "sys/class/kfd/kfd/topology/nodes/1/io_links/0/properties",
    "sys/class/kfd/kfd/topology/nodes/2/properties",
    "sys/class/drm/renderD128/device/revision",
    "sys/class/drm/renderD128/device/mem_info_vram_total",
    "sys/class/drm/renderD128/device/ras/umc_err_count",
    "sys/module/amdgpu/parameters/noretry",
    "sys/bus/pci/devices/0000:03:00.0/vendor",
    "sys/bus/pci/devices/0000:03:00.0/class",
    "usr/share/libdrm/amdgpu.ids",
    "proc/cmdline",
    "etc/group",
    "fixture.toml",
];

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    for chunk in data.split(|b| *b == 0xff).take(32) {
        let Some((&pick, content)) = chunk.split_first() else { continue };
        let path = dir.path().join(PATHS[usize::from(pick) % PATHS.len()]);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&path, content);
    }
    let Ok(source) = Source::fixture(dir.path()) else { return };
    let report = Report::collect(&source, Options::default());
    let _ = report.exit_code(false);
    if let Ok(inv) = Inventory::collect(&source) {
        let _ = inv.targets(true);
    }
});
