//! The structs the active probe passes to the kernel and to libhsakmt, cross-checked with gcc
//! compiling Debian's headers at test time: every size and every field offset the probe uses
//! must be what the C compiler computes, not only what bindgen (clang) wrote.

mod support;

use std::mem::{offset_of, size_of};

use hsakmt_sys::hsakmt::{HsaNodeProperties, HsaSystemProperties, HsaVersionInfo};
use hsakmt_sys::kfd::{
    kfd_ioctl_get_available_memory_args, kfd_ioctl_get_clock_counters_args,
    kfd_ioctl_get_process_apertures_new_args, kfd_ioctl_get_version_args,
    kfd_process_device_apertures,
};

use support::{parse_values, present, run_c};

/// `(C expression, value in Rust)`.
fn facts() -> Vec<(&'static str, usize)> {
    macro_rules! size {
        ($c:literal, $t:ty) => {
            (concat!("sizeof(", $c, ")"), size_of::<$t>())
        };
    }
    macro_rules! off {
        ($c:literal, $t:ty, $f:ident) => {
            (
                concat!("offsetof(", $c, ",", stringify!($f), ")"),
                offset_of!($t, $f),
            )
        };
    }
    vec![
        size!(
            "struct kfd_ioctl_get_version_args",
            kfd_ioctl_get_version_args
        ),
        off!(
            "struct kfd_ioctl_get_version_args",
            kfd_ioctl_get_version_args,
            major_version
        ),
        off!(
            "struct kfd_ioctl_get_version_args",
            kfd_ioctl_get_version_args,
            minor_version
        ),
        size!(
            "struct kfd_ioctl_get_process_apertures_new_args",
            kfd_ioctl_get_process_apertures_new_args
        ),
        off!(
            "struct kfd_ioctl_get_process_apertures_new_args",
            kfd_ioctl_get_process_apertures_new_args,
            kfd_process_device_apertures_ptr
        ),
        off!(
            "struct kfd_ioctl_get_process_apertures_new_args",
            kfd_ioctl_get_process_apertures_new_args,
            num_of_nodes
        ),
        size!(
            "struct kfd_process_device_apertures",
            kfd_process_device_apertures
        ),
        off!(
            "struct kfd_process_device_apertures",
            kfd_process_device_apertures,
            gpuvm_limit
        ),
        off!(
            "struct kfd_process_device_apertures",
            kfd_process_device_apertures,
            gpu_id
        ),
        size!(
            "struct kfd_ioctl_get_available_memory_args",
            kfd_ioctl_get_available_memory_args
        ),
        off!(
            "struct kfd_ioctl_get_available_memory_args",
            kfd_ioctl_get_available_memory_args,
            available
        ),
        off!(
            "struct kfd_ioctl_get_available_memory_args",
            kfd_ioctl_get_available_memory_args,
            gpu_id
        ),
        size!(
            "struct kfd_ioctl_get_clock_counters_args",
            kfd_ioctl_get_clock_counters_args
        ),
        off!(
            "struct kfd_ioctl_get_clock_counters_args",
            kfd_ioctl_get_clock_counters_args,
            gpu_clock_counter
        ),
        off!(
            "struct kfd_ioctl_get_clock_counters_args",
            kfd_ioctl_get_clock_counters_args,
            system_clock_freq
        ),
        off!(
            "struct kfd_ioctl_get_clock_counters_args",
            kfd_ioctl_get_clock_counters_args,
            gpu_id
        ),
    ]
}

fn hsakmt_facts() -> Vec<(&'static str, usize)> {
    vec![
        ("sizeof(HsaVersionInfo)", size_of::<HsaVersionInfo>()),
        (
            "offsetof(HsaVersionInfo,KernelInterfaceMinorVersion)",
            offset_of!(HsaVersionInfo, KernelInterfaceMinorVersion),
        ),
        (
            "sizeof(HsaSystemProperties)",
            size_of::<HsaSystemProperties>(),
        ),
        (
            "offsetof(HsaSystemProperties,NumNodes)",
            offset_of!(HsaSystemProperties, NumNodes),
        ),
        (
            "offsetof(HsaNodeProperties,NumCPUCores)",
            offset_of!(HsaNodeProperties, NumCPUCores),
        ),
        (
            "offsetof(HsaNodeProperties,NumFComputeCores)",
            offset_of!(HsaNodeProperties, NumFComputeCores),
        ),
        ("sizeof(HsaNodeProperties)", size_of::<HsaNodeProperties>()),
    ]
}

fn check(test: &str, include: &str, facts: &[(&str, usize)], flags: &[&str]) {
    let mut src = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n{include}\nint main(void) {{\n"
    );
    for (expr, _) in facts {
        src.push_str(&format!(
            "    printf(\"{expr}=%zu\\n\", (size_t)({expr}));\n"
        ));
    }
    src.push_str("    return 0;\n}\n");
    let gcc = parse_values(&run_c(test, &src, flags));
    for (expr, rust) in facts {
        assert_eq!(gcc[*expr], *rust as i128, "{expr}: gcc vs bindgen");
    }
}

#[test]
fn kfd_ioctl_args_match_gcc() {
    let test = "kfd_ioctl_args_match_gcc";
    if !present(test, "/usr/include/linux/kfd_ioctl.h", "linux-libc-dev") {
        return;
    }
    if !present(test, "/usr/include/libdrm/drm.h", "libdrm-dev") {
        return;
    }
    // kfd_ioctl.h includes <drm/drm.h>, which Debian ships as libdrm/drm.h (the generator
    // does the same).
    let inc = std::env::temp_dir().join(format!("hsakmt-sys-drm-{}", std::process::id()));
    std::fs::create_dir_all(&inc).unwrap();
    let link = inc.join("drm");
    if !link.exists() {
        std::os::unix::fs::symlink("/usr/include/libdrm", &link).unwrap();
    }
    let flag = format!("-I{}", inc.display());
    check(test, "#include <linux/kfd_ioctl.h>", &facts(), &[&flag]);
    let _ = std::fs::remove_dir_all(&inc);
}

#[test]
fn hsakmt_structs_used_match_gcc() {
    let test = "hsakmt_structs_used_match_gcc";
    if !present(test, "/usr/include/hsakmt.h", "libhsakmt-dev") {
        return;
    }
    check(test, "#include <hsakmt.h>", &hsakmt_facts(), &[]);
}
