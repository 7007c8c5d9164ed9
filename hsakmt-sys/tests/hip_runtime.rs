//! Loads Debian's real HIP runtime (5.2.3, package `libamdhip64-5`) and exercises its error
//! paths. No GPU is needed: without `/dev/kfd`, HIP finds no device and says so.
//!
//! Its own test binary (HIP loads and initialises ROCr, which is process-global state); the
//! tests of this file that call into HIP take [`HIP`] so that they run one at a time.

mod support;

use std::ffi::{CStr, c_char, c_int};
use std::path::Path;
use std::sync::Mutex;

use hsakmt_sys::hip::{
    DEVICE_PROP_BUFFER_SIZE, Hip, hipDeviceAttributeMultiprocessorCount, hipDeviceProp_t,
    hipError_t, hipErrorInvalidDevice, hipErrorNoDevice, hipSuccess,
};
use hsakmt_sys::{HIP_SONAMES, load_hip, load_hip_from};

use support::{HIP_HEADER, HIP_LIBRARY, parse_values, present, run_c};

/// Serialises the calls into HIP made by this binary's tests.
static HIP: Mutex<()> = Mutex::new(());

/// Loads Debian's HIP 5 by its soname, or returns `None` after printing why the test is
/// skipped. Fails the test when the library is absent under CI.
fn hip5(test: &str) -> Option<Hip> {
    if !present(test, HIP_LIBRARY, "libamdhip64-5") {
        return None;
    }
    match load_hip_from("libamdhip64.so.5") {
        Ok(lib) => Some(lib),
        Err(e) => panic!("{test}: {HIP_LIBRARY} exists but does not load: {e}"),
    }
}

/// `hipGetErrorName` or `hipGetErrorString` of `error`.
fn error_text(f: unsafe extern "C" fn(hipError_t) -> *const c_char, error: hipError_t) -> String {
    // SAFETY: both functions take any `hipError_t` value and return a pointer to a static
    // NUL-terminated string (`"hipErrorUnknown"` for values they do not know).
    let text = unsafe { f(error) };
    assert!(!text.is_null());
    // SAFETY: non-null, static and NUL-terminated, as above.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn sonames_newest_first() {
    assert_eq!(
        HIP_SONAMES,
        ["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"]
    );
}

#[test]
fn load_hip_finds_an_installed_hip() {
    let test = "load_hip_finds_an_installed_hip";
    if !present(test, HIP_LIBRARY, "libamdhip64-5") {
        return;
    }
    let lib = load_hip().unwrap_or_else(|e| panic!("{test}: load_hip() failed: {e}"));
    assert!(lib.hipGetDeviceCount.is_ok());
    let debug = format!("{lib:?}");
    assert!(debug.starts_with("Hip"), "{debug}");
}

/// Every HIP 4.2+ symbol resolves; `hipGetDevicePropertiesR0600` (HIP 6.0+) is a real missing
/// symbol in HIP 5, an `Err` in its field while the load succeeds.
#[test]
fn hip5_resolves_all_but_the_r0600_symbol() {
    let Some(lib) = hip5("hip5_resolves_all_but_the_r0600_symbol") else {
        return;
    };
    assert!(lib.hipGetDeviceCount.is_ok());
    assert!(lib.hipRuntimeGetVersion.is_ok());
    assert!(lib.hipDriverGetVersion.is_ok());
    assert!(lib.hipDeviceGetName.is_ok());
    assert!(lib.hipGetErrorName.is_ok());
    assert!(lib.hipGetErrorString.is_ok());
    assert!(lib.hipDeviceGetAttribute.is_ok());
    assert!(lib.hipGetDeviceProperties.is_ok());
    assert!(lib.hipGetDevicePropertiesR0600.is_err());
}

/// `hipRuntimeGetVersion` reports `HIP_VERSION` of Debian's `hip/hip_version.h`, as gcc
/// evaluates it (50221153 for 5.2.21153). It needs no device.
#[test]
fn runtime_version_is_the_headers_hip_version() {
    let test = "runtime_version_is_the_headers_hip_version";
    let Some(lib) = hip5(test) else {
        return;
    };
    if !present(test, HIP_HEADER, "libamdhip64-dev") {
        return;
    }
    let src = "#include <stdio.h>\n#include <hip/hip_version.h>\n\
               int main(void) { printf(\"HIP_VERSION=%d\\n\", HIP_VERSION); return 0; }\n";
    let expected = parse_values(&run_c(test, src, &[]))["HIP_VERSION"];

    let _guard = HIP.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = lib.hipRuntimeGetVersion.as_ref().expect("resolves");
    let mut version: c_int = -1;
    // SAFETY: `version` is a valid, writable `int` for the duration of the call.
    let rc = unsafe { runtime(&mut version) };
    assert_eq!(rc, hipSuccess);
    assert_eq!(i128::from(version), expected);
    println!("hipRuntimeGetVersion: {version}");

    let driver = lib.hipDriverGetVersion.as_ref().expect("resolves");
    let mut version: c_int = -1;
    // SAFETY: as above.
    let rc = unsafe { driver(&mut version) };
    assert_eq!(rc, hipSuccess);
    println!("hipDriverGetVersion: {version}");
}

/// Without `/dev/kfd` HIP 5.2 counts no device: `hipGetDeviceCount` fails with
/// `hipErrorNoDevice` (100) and a count of 0, and per-device calls for device 0 fail with
/// `hipErrorInvalidDevice` (101) without writing their outputs.
#[test]
fn no_device_without_dev_kfd() {
    let test = "no_device_without_dev_kfd";
    let Some(lib) = hip5(test) else {
        return;
    };
    if Path::new("/dev/kfd").exists() {
        println!("skipped: {test}: /dev/kfd exists; this test only runs on machines without it");
        return;
    }
    let _guard = HIP.lock().unwrap_or_else(|e| e.into_inner());
    let count = lib.hipGetDeviceCount.as_ref().expect("resolves");
    let mut n: c_int = -1;
    // SAFETY: `n` is a valid, writable `int` for the duration of the call.
    let rc = unsafe { count(&mut n) };
    assert_eq!(rc, hipErrorNoDevice, "hipGetDeviceCount: {rc}");
    assert_eq!(rc, 100);
    assert_eq!(n, 0);

    let name = *lib.hipGetErrorName.as_ref().expect("resolves");
    let string = *lib.hipGetErrorString.as_ref().expect("resolves");
    assert_eq!(error_text(name, rc), "hipErrorNoDevice");
    // HIP 5 returns the name here too (documented in its header).
    assert_eq!(error_text(string, rc), "hipErrorNoDevice");
    assert_eq!(error_text(name, hipSuccess), "hipSuccess");
    assert_eq!(
        error_text(name, hipErrorInvalidDevice),
        "hipErrorInvalidDevice"
    );
    assert_eq!(error_text(name, 12345), "hipErrorUnknown");

    let get_name = lib.hipDeviceGetName.as_ref().expect("resolves");
    let mut buf = [0 as c_char; 256];
    // SAFETY: `buf` is writable for the 256 bytes passed as its length.
    let rc = unsafe { get_name(buf.as_mut_ptr(), 256, 0) };
    assert_eq!(rc, hipErrorInvalidDevice);
    assert!(buf.iter().all(|&b| b == 0));

    let attribute = lib.hipDeviceGetAttribute.as_ref().expect("resolves");
    let mut value: c_int = -5;
    // SAFETY: `value` is a valid, writable `int` for the duration of the call.
    let rc = unsafe { attribute(&mut value, hipDeviceAttributeMultiprocessorCount, 0) };
    assert_eq!(rc, hipErrorInvalidDevice);
    assert_eq!(value, -5);

    let properties = lib.hipGetDeviceProperties.as_ref().expect("resolves");
    // Zeroed, 8 KiB, and 8-byte aligned (as `u64`s) like `hipDeviceProp_t`.
    let mut buffer = vec![0u64; DEVICE_PROP_BUFFER_SIZE / 8];
    // SAFETY: the buffer is writable for 8 KiB, more than the 792 bytes of the
    // `hipDeviceProp_t` (R0000 layout) this symbol fills, and aligned for it.
    let rc = unsafe { properties(buffer.as_mut_ptr().cast::<hipDeviceProp_t>(), 0) };
    assert_eq!(rc, hipErrorInvalidDevice);
    assert!(buffer.iter().all(|&b| b == 0));
}

#[test]
fn missing_library_is_err_not_panic() {
    let Err(e) = load_hip_from("/nonexistent/libamdhip64.so.5") else {
        panic!("loading a nonexistent path succeeded");
    };
    assert!(
        e.to_string().contains("/nonexistent/libamdhip64.so.5"),
        "error names the path: {e}"
    );
}

/// A real library without any `hip*` symbol loads, and every symbol field is `Err`.
#[test]
fn library_without_the_symbols_gives_err_fields() {
    let lib = match load_hip_from("libc.so.6") {
        Ok(lib) => lib,
        Err(e) => panic!("libc.so.6 must load: {e}"),
    };
    assert!(lib.hipGetDeviceCount.is_err());
    assert!(lib.hipRuntimeGetVersion.is_err());
    assert!(lib.hipGetDevicePropertiesR0600.is_err());
}
