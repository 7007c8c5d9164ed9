//! Layer 2, actively: open `/dev/kfd` and ask it the read-only questions of [`super::ioctl`].

use std::collections::BTreeMap;
use std::os::fd::AsFd;

use nix::errno::Errno;

use super::ActiveFacts;
use super::ioctl;

/// `ENOENT`, `EACCES`, … as `nix` names them.
pub fn errno_name(e: Errno) -> String {
    format!("{e:?}")
}

/// The GPUs to ask per-GPU questions: those of the topology (`gpu_ids`) that KFD gave this
/// process (`apertures`), or all of them when the apertures are unknown. KFD answers
/// AVAILABLE_MEMORY for a GPU the device cgroup hides with `EINVAL`, which would read as a failing
/// GPU; the hidden GPU is reported from the apertures instead.
fn usable(gpu_ids: &[u32], apertures: Option<&[u32]>) -> Vec<u32> {
    match apertures {
        Some(seen) => gpu_ids
            .iter()
            .copied()
            .filter(|id| seen.contains(id))
            .collect(),
        None => gpu_ids.to_vec(),
    }
}

/// Opens `path`, reads the interface version and apertures, and per usable GPU (`gpu_ids`, from
/// the topology, less those KFD does not give this process) the available memory. The descriptor is
/// closed before returning, which ends the probe's KFD process.
///
/// AVAILABLE_MEMORY is sent only to an interface that says it has it (1.9 on): before that its
/// number (0x23) is no ioctl upstream, but ROCm 1.5's own kernel numbered IPC_EXPORT_HANDLE there,
/// and the probe sends no request whose meaning it does not know. The GPU clock counters are not
/// read: GET_CLOCK_COUNTERS does not wake a runtime-suspended GPU, so a counter that stands still
/// tells nothing on an idle machine.
pub fn probe(path: &str, gpu_ids: &[u32]) -> ActiveFacts {
    let mut facts = ActiveFacts::default();
    let fd = match ioctl::open(path) {
        Ok(fd) => fd,
        Err(e) => {
            facts.kfd_open = Some(super::KfdOpen::Errno(errno_name(e)));
            return facts;
        }
    };
    facts.kfd_open = Some(super::KfdOpen::Ok);
    let fd = fd.as_fd();
    let mut errors = Vec::new();
    match ioctl::get_version(fd) {
        Ok((major, minor)) => facts.kfd_version = Some([major, minor]),
        Err(e) => errors.push(format!("GET_VERSION: {}", errno_name(e))),
    }
    match ioctl::get_process_apertures(fd) {
        Ok(apertures) => facts.kfd_gpus = Some(apertures.iter().map(|a| a.gpu_id).collect()),
        Err(e) => errors.push(format!("GET_PROCESS_APERTURES_NEW: {}", errno_name(e))),
    }
    let gpu_ids = usable(gpu_ids, facts.kfd_gpus.as_deref());
    let has_available_memory = facts
        .kfd_version
        .is_some_and(|[major, minor]| major == 1 && minor >= 9);
    if has_available_memory && !gpu_ids.is_empty() {
        let mut memory = BTreeMap::new();
        for &id in &gpu_ids {
            match ioctl::available_memory(fd, id) {
                Ok(bytes) => {
                    memory.insert(id.to_string(), bytes);
                }
                Err(e) => errors.push(format!("AVAILABLE_MEMORY {id}: {}", errno_name(e))),
            }
        }
        facts.kfd_available_memory = Some(memory);
    }
    if !errors.is_empty() {
        facts.kfd_errors = Some(errors);
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_is_reported_by_errno_name_and_nothing_else_runs() {
        let f = probe("/nonexistent/kfd", &[1234]);
        assert_eq!(
            f.kfd_open,
            Some(super::super::KfdOpen::Errno("ENOENT".into()))
        );
        assert_eq!(f.kfd_version, None);
        assert_eq!(f.kfd_gpus, None);
    }

    /// A device that opens but is not KFD (`/dev/null`): every ioctl fails with ENOTTY and is
    /// listed; nothing is invented.
    #[test]
    fn ioctls_on_a_non_kfd_device_are_listed_as_errors() {
        let f = probe("/dev/null", &[7]);
        assert_eq!(f.kfd_open, Some(super::super::KfdOpen::Ok));
        assert_eq!(f.kfd_version, None);
        let errors = f.kfd_errors.unwrap();
        assert!(
            errors.contains(&"GET_VERSION: ENOTTY".to_owned()),
            "{errors:?}"
        );
        assert!(
            errors.contains(&"GET_PROCESS_APERTURES_NEW: ENOTTY".to_owned()),
            "{errors:?}"
        );
        // No interface version, so AVAILABLE_MEMORY's number means nothing known: not sent.
        assert!(
            !errors.iter().any(|e| e.starts_with("AVAILABLE_MEMORY")),
            "{errors:?}"
        );
        assert_eq!(f.kfd_available_memory, None);
    }

    /// A GPU the device cgroup hides is not in the apertures: it is not asked, so KFD's EINVAL
    /// and zero counter for it are not taken for a failing GPU.
    #[test]
    fn only_gpus_in_the_apertures_are_asked() {
        assert_eq!(usable(&[11, 22, 33], Some(&[22])), [22]);
        assert_eq!(usable(&[11, 22], Some(&[])), Vec::<u32>::new());
        assert_eq!(usable(&[11, 22], None), [11, 22]);
    }
}
