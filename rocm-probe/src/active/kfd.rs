//! Layer 2, actively: open `/dev/kfd` and ask it the read-only questions of [`super::ioctl`].

use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::time::Duration;

use nix::errno::Errno;

use super::ActiveFacts;
use super::ioctl;

/// Time between the two clock-counter reads: the GPU counter runs at 25–100 MHz, so it
/// advances thousands of ticks in this time on a GPU that is up.
const CLOCK_GAP: Duration = Duration::from_millis(2);

/// `ENOENT`, `EACCES`, … as `nix` names them.
pub fn errno_name(e: Errno) -> String {
    format!("{e:?}")
}

/// The GPUs to ask per-GPU questions: those of the topology (`gpu_ids`) that KFD gave this
/// process (`apertures`), or all of them when the apertures are unknown. KFD answers a GPU the
/// device cgroup hides with `EINVAL` (AVAILABLE_MEMORY) and a clock counter of 0
/// (GET_CLOCK_COUNTERS: "node without GPU resource"), which would read as a failing, stopped GPU;
/// the hidden GPU is reported from the apertures instead.
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
/// the topology, less those KFD does not give this process) the available memory and two
/// clock-counter readings. The descriptor is closed before returning, which ends the probe's KFD
/// process.
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
    let mut memory = BTreeMap::new();
    let mut first = BTreeMap::new();
    for &id in &gpu_ids {
        match ioctl::available_memory(fd, id) {
            Ok(bytes) => {
                memory.insert(id.to_string(), bytes);
            }
            // Interface < 1.9 has no AVAILABLE_MEMORY: not an error of the GPU.
            Err(Errno::EINVAL | Errno::ENOTTY) if facts.kfd_version.is_some_and(|v| v[1] < 9) => {}
            Err(e) => errors.push(format!("AVAILABLE_MEMORY {id}: {}", errno_name(e))),
        }
        match ioctl::get_clock_counters(fd, id) {
            Ok(c) => {
                first.insert(id, c.gpu);
            }
            Err(e) => errors.push(format!("GET_CLOCK_COUNTERS {id}: {}", errno_name(e))),
        }
    }
    if !first.is_empty() {
        std::thread::sleep(CLOCK_GAP);
    }
    let mut stuck = Vec::new();
    for (&id, &before) in &first {
        if let Ok(c) = ioctl::get_clock_counters(fd, id)
            && c.gpu <= before
        {
            stuck.push(id);
        }
    }
    if !gpu_ids.is_empty() {
        facts.kfd_available_memory = Some(memory);
        facts.kfd_clock_stuck = Some(stuck);
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
            errors.contains(&"GET_CLOCK_COUNTERS 7: ENOTTY".to_owned()),
            "{errors:?}"
        );
        assert_eq!(f.kfd_clock_stuck, Some(Vec::new()));
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
