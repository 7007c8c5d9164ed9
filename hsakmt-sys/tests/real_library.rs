//! Loads Debian's real libhsakmt (5.2.3, package `libhsakmt1`) and exercises its error paths.
//! No GPU is needed: without `/dev/kfd` the thunk fails with known statuses.
//!
//! When the library is not installed the tests print a `skipped: ...` line and pass, except
//! under CI (`CI` set), which installs it, where its absence is a failure.

use std::path::Path;

use hsakmt_sys::hsakmt::{
    HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED, HsaKmt, HsaSystemProperties, HsaVersionInfo,
};
use hsakmt_sys::{DEFAULT_SONAME, load, load_from};

/// Where Debian's `libhsakmt1` installs the library `load()` finds by soname.
const DEBIAN_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1";

/// Loads the library through [`load`], or returns `None` after printing why the test is
/// skipped. Fails the test when the library is absent under CI.
fn real_library(test: &str) -> Option<HsaKmt> {
    if !Path::new(DEBIAN_LIBRARY).exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: {DEBIAN_LIBRARY} is missing, but CI installs Debian's libhsakmt1"
        );
        println!("skipped: {test}: {DEBIAN_LIBRARY} is not installed (Debian package libhsakmt1)");
        return None;
    }
    match load() {
        Ok(lib) => Some(lib),
        Err(e) => panic!("{test}: {DEBIAN_LIBRARY} exists but load() failed: {e}"),
    }
}

#[test]
fn default_soname_is_versioned() {
    assert_eq!(DEFAULT_SONAME, "libhsakmt.so.1");
}

#[test]
fn real_library_resolves_the_probe_symbols() {
    let Some(lib) = real_library("real_library_resolves_the_probe_symbols") else {
        return;
    };
    assert!(lib.hsaKmtOpenKFD.is_ok());
    assert!(lib.hsaKmtCloseKFD.is_ok());
    assert!(lib.hsaKmtGetVersion.is_ok());
    assert!(lib.hsaKmtAcquireSystemProperties.is_ok());
    assert!(lib.hsaKmtReleaseSystemProperties.is_ok());
    assert!(lib.hsaKmtGetNodeProperties.is_ok());
    assert!(lib.hsaKmtGetClockCounters.is_ok());
    assert!(lib.hsaKmtGetXNACKMode.is_ok());
}

/// `hsaKmtReportQueue` is declared in Debian's 5.2.3 `hsakmt.h` but not exported by its
/// `libhsakmt.so.1`: a real missing symbol, which must be an `Err` in its field while the load
/// and every other symbol succeed.
#[test]
fn real_library_symbol_missing_from_the_build_is_err() {
    let Some(lib) = real_library("real_library_symbol_missing_from_the_build_is_err") else {
        return;
    };
    assert!(lib.hsaKmtReportQueue.is_err());
    assert!(lib.hsaKmtOpenKFD.is_ok());
}

#[test]
fn open_kfd_without_dev_kfd_reports_io_channel_not_opened() {
    let test = "open_kfd_without_dev_kfd_reports_io_channel_not_opened";
    let Some(lib) = real_library(test) else {
        return;
    };
    if Path::new("/dev/kfd").exists() {
        println!("skipped: {test}: /dev/kfd exists; this test only runs on machines without it");
        return;
    }
    let open = lib.hsaKmtOpenKFD.as_ref().expect("hsaKmtOpenKFD resolves");
    // SAFETY: `hsaKmtOpenKFD(void)` takes no arguments and its signature is unchanged since
    // ROCm 1.x. Without /dev/kfd it fails its open(2) and returns without allocating state.
    let status = unsafe { open() };
    assert_eq!(status, HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED);
    assert_eq!(status, 20);

    // Before a successful open, queries fail the same way and leave their output untouched.
    let get_version = lib
        .hsaKmtGetVersion
        .as_ref()
        .expect("hsaKmtGetVersion resolves");
    let mut version = HsaVersionInfo::default();
    // SAFETY: `version` is a valid, writable `HsaVersionInfo` (8 bytes, the same in every
    // release) that outlives the call.
    let status = unsafe { get_version(&mut version) };
    assert_eq!(status, HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED);
    assert_eq!(version.KernelInterfaceMajorVersion, 0);

    let acquire = lib
        .hsaKmtAcquireSystemProperties
        .as_ref()
        .expect("hsaKmtAcquireSystemProperties resolves");
    let mut props = HsaSystemProperties::default();
    // SAFETY: `props` is a valid, writable `HsaSystemProperties` (16 bytes, unchanged from 5.2
    // to 7.x) that outlives the call.
    let status = unsafe { acquire(&mut props) };
    assert_eq!(status, HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED);
}

#[test]
fn missing_library_is_err_not_panic() {
    let result = load_from("/nonexistent/libhsakmt.so.1");
    let Err(e) = result else {
        panic!("loading a nonexistent path succeeded");
    };
    assert!(
        e.to_string().contains("/nonexistent/libhsakmt.so.1"),
        "error names the path: {e}"
    );
}

/// A real library without any `hsaKmt*` symbol loads, and every symbol field is `Err`.
#[test]
fn library_without_the_symbols_gives_err_fields() {
    let lib = match load_from("libc.so.6") {
        Ok(lib) => lib,
        Err(e) => panic!("libc.so.6 must load: {e}"),
    };
    assert!(lib.hsaKmtOpenKFD.is_err());
    assert!(lib.hsaKmtCloseKFD.is_err());
    assert!(lib.hsaKmtGetVersion.is_err());
    assert!(lib.hsaKmtAcquireSystemProperties.is_err());
    assert!(lib.hsaKmtGetNodeProperties.is_err());
    let debug = format!("{lib:?}");
    assert!(debug.starts_with("HsaKmt"), "{debug}");
}
