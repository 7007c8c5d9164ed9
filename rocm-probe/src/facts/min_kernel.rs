//! The first mainline kernel whose amdgpu drives a GPU: rows in `rocm-probe/data/min_kernel.toml`,
//! each citing its source, compiled into [`GPUS`] by `build.rs`; and how a running kernel's
//! release compares with them.

#[allow(dead_code)] // the build script uses all of it, the crate only its parser in tests
mod data;

/// One GPU family's first kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinKernel {
    /// The gfx target.
    pub target: &'static str,
    /// The GC IP version amdgpu's discovery code switches on.
    pub gc: &'static str,
    /// The first mainline release (major, minor) whose amdgpu binds it by default.
    pub kernel: (u32, u32),
    /// PCI device ids.
    pub devices: &'static [u32],
    /// Where `kernel` was read.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/min_kernel.rs"));

/// The row naming a PCI device id.
pub fn lookup(device_id: u32) -> Option<&'static MinKernel> {
    GPUS.iter().find(|g| g.devices.contains(&device_id))
}

/// `major.minor` of a kernel release (`6.8.0-31-generic` → (6, 8)).
pub fn release_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The os-release ids whose kernels backport amdgpu from newer mainline releases: Red Hat
/// Enterprise Linux and its rebuilds (their `5.14.0-*.el9` kernels carry the DRM of much later
/// mainline releases) and SUSE Linux Enterprise. Their mainline number says nothing about which
/// GPUs they drive.
const BACKPORTING: [&str; 7] = ["rhel", "centos", "rocky", "almalinux", "ol", "sles", "sled"];

/// Whether a kernel's mainline number cannot be compared with the table: a RHEL-family release
/// (`.el<N>` in it) or a backporting distribution's os-release id.
pub fn backports(release: &str, os_id: Option<&str>) -> bool {
    let el = release.match_indices(".el").any(|(i, _)| {
        release[i + 3..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    });
    el || os_id.is_some_and(|id| BACKPORTING.contains(&id))
}

/// The row whose kernel is newer than the running `release`, for a GPU of `device_id`: `None`
/// when the GPU is not listed, the release is not a mainline number or its kernel backports.
pub fn too_old(device_id: u32, release: &str, os_id: Option<&str>) -> Option<&'static MinKernel> {
    let row = lookup(device_id)?;
    let running = release_version(release)?;
    (!backports(release, os_id) && running < row.kernel).then_some(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_parses_and_the_table_follows_it() {
        let text = include_str!("../../data/min_kernel.toml");
        let parsed = data::parse(text).unwrap();
        assert_eq!(parsed.rows.len(), GPUS.len());
        for (row, gpu) in parsed.rows.iter().zip(GPUS) {
            assert_eq!(row.target, gpu.target);
            assert_eq!(row.kernel, gpu.kernel);
            assert_eq!(row.devices, gpu.devices);
        }
        assert_eq!(AS_OF, parsed.as_of);
    }

    #[test]
    fn a_row_without_a_source_is_refused() {
        let text = "as_of = \"2026-12-03\"\n[[gpu]]\ntarget = \"gfx1201\"\ngc = \"12.0.1\"\n\
                    kernel = \"6.11\"\ndevices = [0x7550]\ndevices_source = \"amdgpu.ids\"\n";
        assert!(data::parse(text).unwrap_err().contains("no source"));
        let twice = format!(
            "{text}source = \"x\"\n[[gpu]]\ntarget = \"gfx1200\"\ngc = \"12.0.0\"\n\
             kernel = \"6.11\"\ndevices = [0x7550]\nsource = \"x\"\ndevices_source = \"y\"\n"
        );
        assert!(data::parse(&twice).unwrap_err().contains("twice"));
    }

    #[test]
    fn releases_compare_by_mainline_number() {
        assert_eq!(release_version("6.8.0-31-generic"), Some((6, 8)));
        assert_eq!(release_version("6.14.0-24-generic"), Some((6, 14)));
        assert_eq!(
            release_version("5.14.0-427.13.1.el9_4.x86_64"),
            Some((5, 14))
        );
        assert_eq!(release_version("weird"), None);
        // RX 9070 (1002:7550) on Ubuntu 24.04's GA kernel: too old; on its 6.11 HWE kernel, or 6.14: not.
        assert_eq!(
            too_old(0x7550, "6.8.0-31-generic", Some("ubuntu")).map(|r| r.target),
            Some("gfx1201")
        );
        assert_eq!(too_old(0x7550, "6.11.0-19-generic", Some("ubuntu")), None);
        assert_eq!(too_old(0x7550, "6.14.0-24-generic", Some("ubuntu")), None);
        // An RX 7900 XTX is not in the table: never judged.
        assert_eq!(too_old(0x744c, "5.4.0-42-generic", Some("ubuntu")), None);
    }

    #[test]
    fn backporting_kernels_are_not_judged_by_their_number() {
        assert!(backports("5.14.0-427.13.1.el9_4.x86_64", None));
        assert!(backports("4.18.0-553.el8_10.x86_64", Some("rocky")));
        assert!(backports("5.14.21-150500.55.19-default", Some("sles")));
        assert!(!backports("6.8.0-31-generic", Some("ubuntu")));
        assert!(!backports("6.8.0-31-generic-elf", Some("ubuntu")));
        assert_eq!(
            too_old(0x7550, "5.14.0-427.13.1.el9_4.x86_64", Some("rhel")),
            None
        );
    }
}
