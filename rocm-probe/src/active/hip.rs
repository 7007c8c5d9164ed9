//! Layer 4, actively: load HIP (`libamdhip64.so.N`) from the install a process would use and
//! ask for the device count, the runtime and driver versions and each device's `gcnArchName`.
//!
//! `hipDeviceProp_t` grew between releases; `hipGetDeviceProperties` (the R0000 entry point,
//! exported by every HIP from 4.x to 7.x) is given an oversized zeroed buffer and only
//! `gcnArchName` is read from it, at the offset hsakmt-sys pins.

#![allow(unsafe_code)]

use std::path::PathBuf;

use hsakmt_sys::hip::{
    DEVICE_PROP_BUFFER_SIZE, GCN_ARCH_NAME_LEN, GCN_ARCH_NAME_OFFSET_R0000, Hip, hipDeviceProp_t,
    hipSuccess,
};

use super::HipResult;
use super::status::hip_name;

/// More devices than any machine has.
const MAX_DEVICES: i32 = 1024;

#[repr(C, align(16))]
struct PropBuffer([u8; DEVICE_PROP_BUFFER_SIZE]);

/// Loads HIP and asks it what it sees.
pub fn probe(library: Result<PathBuf, super::LoadError>) -> HipResult {
    let mut result = HipResult::default();
    let path = match library {
        Ok(path) => path,
        Err(e) => {
            result.load_error = Some(e);
            return result;
        }
    };
    let lib = match hsakmt_sys::load_hip_from(&path) {
        Ok(lib) => lib,
        Err(e) => {
            result.load_error = Some(super::load_error(&path, &e));
            return result;
        }
    };
    result.library = Some(path.display().to_string());
    talk(&lib, &mut result);
    result
}

fn talk(lib: &Hip, result: &mut HipResult) {
    let version = |f: &Result<unsafe extern "C" fn(*mut i32) -> u32, libloading::Error>| {
        let f = f.as_ref().ok()?;
        let mut v: i32 = 0;
        // SAFETY: the function writes one int through the pointer (hip_runtime_api.h).
        (unsafe { f(&mut v) } == hipSuccess).then_some(v)
    };
    result.runtime_version = version(&lib.hipRuntimeGetVersion);
    result.driver_version = version(&lib.hipDriverGetVersion);
    let Ok(count_fn) = &lib.hipGetDeviceCount else {
        return;
    };
    let mut count: i32 = 0;
    // SAFETY: writes one int.
    let status = unsafe { count_fn(&mut count) };
    result.count_status = Some(hip_name(status as i32));
    if status != hipSuccess {
        return;
    }
    result.device_count = Some(count);
    let Ok(props) = &lib.hipGetDeviceProperties else {
        return;
    };
    let mut devices = Vec::new();
    for device in 0..count.clamp(0, MAX_DEVICES) {
        let mut buf = PropBuffer([0; DEVICE_PROP_BUFFER_SIZE]);
        // SAFETY: the buffer is zeroed, 16-aligned and larger than any release's
        // hipDeviceProp_t, so the library's write stays inside it; only bytes are read back.
        let status = unsafe { props(buf.0.as_mut_ptr().cast::<hipDeviceProp_t>(), device) };
        if status != hipSuccess {
            devices.push(format!(
                "(hipGetDeviceProperties: {})",
                hip_name(status as i32)
            ));
            continue;
        }
        let name =
            &buf.0[GCN_ARCH_NAME_OFFSET_R0000..GCN_ARCH_NAME_OFFSET_R0000 + GCN_ARCH_NAME_LEN];
        let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
        devices.push(String::from_utf8_lossy(&name[..end]).into_owned());
    }
    result.devices = Some(devices);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_that_does_not_exist_is_not_installed() {
        let r = probe(Ok(PathBuf::from("/nonexistent/libamdhip64.so.6")));
        assert_eq!(
            r.load_error,
            Some(super::super::LoadError::NotInstalledAt(
                "/nonexistent/libamdhip64.so.6".into()
            ))
        );
        assert_eq!(r.count_status, None);
    }
}
