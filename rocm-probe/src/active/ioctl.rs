//! The `/dev/kfd` ioctls the active probe uses: one safe function per ioctl, each taking a
//! borrowed file descriptor (drm-ffi's pattern). Only ioctls that change no device state and
//! need no VM are here (`kfd_ioctl.h`): `GET_VERSION`, `GET_PROCESS_APERTURES_NEW`,
//! `AVAILABLE_MEMORY`.
//!
//! Opening `/dev/kfd` creates a KFD process for the caller (visible as
//! `/sys/class/kfd/kfd/proc/<pid>`), with per-GPU process data for every GPU but no VM and no
//! queue; closing the descriptor ends it. The argument structs are Debian's `kfd_ioctl.h`
//! (interface 1.11); newer kernels zero-fill what an older, smaller struct lacks.

#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use hsakmt_sys::ioctl::{
    AMDKFD_IOC_AVAILABLE_MEMORY, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, AMDKFD_IOC_GET_VERSION,
};
use hsakmt_sys::kfd::{
    kfd_ioctl_get_available_memory_args, kfd_ioctl_get_process_apertures_new_args,
    kfd_ioctl_get_version_args, kfd_process_device_apertures,
};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

/// More GPUs than any machine has: bounds the aperture buffer whatever the kernel reports.
const MAX_NODES: u32 = 4096;

/// Opens `/dev/kfd` (or `path`) read-write, as every ROCm process does.
pub fn open(path: &str) -> Result<OwnedFd, Errno> {
    nix::fcntl::open(path, OFlag::O_RDWR | OFlag::O_CLOEXEC, Mode::empty())
}

/// Issues `request` with `arg`. The request's size field is the size of `T`, so the kernel
/// copies exactly `T`'s bytes in and out.
fn call<T>(fd: BorrowedFd<'_>, request: u32, arg: &mut T) -> Result<(), Errno> {
    debug_assert_eq!(hsakmt_sys::ioctl::ioc_size(request), size_of::<T>());
    // SAFETY: `fd` is a valid open descriptor for the duration of the borrow; `arg` is a live,
    // exclusively borrowed `T`, and `request` encodes `size_of::<T>()` (checked above and by
    // the const assertions in hsakmt-sys), so the kernel reads and writes only within it.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::c_ulong::from(request), arg as *mut T) };
    Errno::result(r).map(drop)
}

/// `AMDKFD_IOC_GET_VERSION`: the KFD ioctl interface version `(major, minor)`.
pub fn get_version(fd: BorrowedFd<'_>) -> Result<(u32, u32), Errno> {
    let mut args = kfd_ioctl_get_version_args::default();
    call(fd, AMDKFD_IOC_GET_VERSION, &mut args)?;
    Ok((args.major_version, args.minor_version))
}

/// `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`: this process's apertures on every GPU it can use.
/// A first call with no buffer learns the count; the second fills a buffer of that size.
pub fn get_process_apertures(
    fd: BorrowedFd<'_>,
) -> Result<Vec<kfd_process_device_apertures>, Errno> {
    let mut args = kfd_ioctl_get_process_apertures_new_args::default();
    call(fd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut args)?;
    let count = args.num_of_nodes.min(MAX_NODES);
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut buf = vec![kfd_process_device_apertures::default(); count as usize];
    let mut args = kfd_ioctl_get_process_apertures_new_args {
        kfd_process_device_apertures_ptr: buf.as_mut_ptr() as u64,
        num_of_nodes: count,
        pad: 0,
    };
    // The kernel writes at most `num_of_nodes` entries through the pointer: `buf` has room
    // for exactly that many, and it stays alive and unaliased across the call.
    call(fd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut args)?;
    buf.truncate(args.num_of_nodes.min(count) as usize);
    Ok(buf)
}

/// `AMDKFD_IOC_AVAILABLE_MEMORY` (interface ≥ 1.9): VRAM bytes this process could still
/// allocate on the GPU with KFD id `gpu_id`.
pub fn available_memory(fd: BorrowedFd<'_>, gpu_id: u32) -> Result<u64, Errno> {
    let mut args = kfd_ioctl_get_available_memory_args {
        gpu_id,
        ..Default::default()
    };
    call(fd, AMDKFD_IOC_AVAILABLE_MEMORY, &mut args)?;
    Ok(args.available)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// Every wrapper on a descriptor that is not `/dev/kfd` fails with the kernel's `ENOTTY`
    /// ("inappropriate ioctl for device"), never touching memory it was not given: the path
    /// every non-KFD fd takes, checked on the real kernel.
    #[test]
    fn wrappers_on_a_non_kfd_descriptor_fail_cleanly() {
        let file = std::fs::File::open("/dev/null").unwrap();
        let fd = file.as_fd();
        assert_eq!(get_version(fd), Err(Errno::ENOTTY));
        assert_eq!(get_process_apertures(fd).err(), Some(Errno::ENOTTY));
        assert_eq!(available_memory(fd, 1), Err(Errno::ENOTTY));
    }

    #[test]
    fn opening_a_missing_device_is_enoent() {
        assert_eq!(open("/nonexistent/kfd").map(drop), Err(Errno::ENOENT));
    }
}
