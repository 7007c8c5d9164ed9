//! Loads Debian's real HSA runtime (ROCr 5.2.3, package `libhsa-runtime64-1`) and exercises its
//! error paths. No GPU is needed: without `/dev/kfd`, `hsa_init` fails with a known status.
//!
//! Its own test binary: ROCr is process-global state, so nothing else here calls into it, and
//! the tests of this file that call it take [`ROCR`] so that they run one at a time.

mod support;

use std::ffi::{CStr, c_char, c_void};
use std::path::Path;
use std::sync::Mutex;

use hsakmt_sys::hsa::{
    HSA_STATUS_ERROR_INVALID_ARGUMENT, HSA_STATUS_ERROR_NOT_INITIALIZED,
    HSA_STATUS_ERROR_OUT_OF_RESOURCES, HSA_STATUS_SUCCESS, HsaRuntime, hsa_agent_t, hsa_status_t,
};
use hsakmt_sys::{HSA_RUNTIME_SONAME, load_hsa, load_hsa_from};

use support::{HSA_LIBRARY, present};

/// Serialises the calls into ROCr made by this binary's tests.
static ROCR: Mutex<()> = Mutex::new(());

/// Loads the runtime through [`load_hsa`], or returns `None` after printing why the test is
/// skipped. Fails the test when the library is absent under CI.
fn real_runtime(test: &str) -> Option<HsaRuntime> {
    if !present(test, HSA_LIBRARY, "libhsa-runtime64-1") {
        return None;
    }
    match load_hsa() {
        Ok(lib) => Some(lib),
        Err(e) => panic!("{test}: {HSA_LIBRARY} exists but load_hsa() failed: {e}"),
    }
}

/// `hsa_status_string`'s text for `status`, or the status the call itself returned.
fn status_string(lib: &HsaRuntime, status: hsa_status_t) -> Result<String, hsa_status_t> {
    let f = lib
        .hsa_status_string
        .as_ref()
        .expect("hsa_status_string resolves");
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: `text` is a valid place for the `const char*` the runtime stores; the call reads
    // nothing else.
    let rc = unsafe { f(status, &mut text) };
    if rc != HSA_STATUS_SUCCESS {
        return Err(rc);
    }
    assert!(
        !text.is_null(),
        "hsa_status_string succeeded with a NULL string"
    );
    // SAFETY: on success `text` points to a NUL-terminated static string owned by the runtime.
    Ok(unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned())
}

unsafe extern "C" fn count_agent(_agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the `&mut u32` passed to `hsa_iterate_agents` below, alive during it.
    unsafe { *data.cast::<u32>() += 1 };
    HSA_STATUS_SUCCESS
}

#[test]
fn soname_is_versioned() {
    assert_eq!(HSA_RUNTIME_SONAME, "libhsa-runtime64.so.1");
}

#[test]
fn real_runtime_resolves_every_symbol() {
    let Some(lib) = real_runtime("real_runtime_resolves_every_symbol") else {
        return;
    };
    let fields = [
        ("hsa_init", lib.hsa_init.is_ok()),
        ("hsa_shut_down", lib.hsa_shut_down.is_ok()),
        ("hsa_status_string", lib.hsa_status_string.is_ok()),
        ("hsa_system_get_info", lib.hsa_system_get_info.is_ok()),
        ("hsa_iterate_agents", lib.hsa_iterate_agents.is_ok()),
        ("hsa_agent_get_info", lib.hsa_agent_get_info.is_ok()),
        ("hsa_agent_iterate_isas", lib.hsa_agent_iterate_isas.is_ok()),
        ("hsa_isa_get_info_alt", lib.hsa_isa_get_info_alt.is_ok()),
        ("hsa_queue_create", lib.hsa_queue_create.is_ok()),
        ("hsa_queue_destroy", lib.hsa_queue_destroy.is_ok()),
        (
            "hsa_queue_load_read_index_relaxed",
            lib.hsa_queue_load_read_index_relaxed.is_ok(),
        ),
        (
            "hsa_queue_load_read_index_scacquire",
            lib.hsa_queue_load_read_index_scacquire.is_ok(),
        ),
        (
            "hsa_queue_load_write_index_relaxed",
            lib.hsa_queue_load_write_index_relaxed.is_ok(),
        ),
        (
            "hsa_queue_load_write_index_scacquire",
            lib.hsa_queue_load_write_index_scacquire.is_ok(),
        ),
        (
            "hsa_queue_add_write_index_relaxed",
            lib.hsa_queue_add_write_index_relaxed.is_ok(),
        ),
        (
            "hsa_queue_add_write_index_scacq_screl",
            lib.hsa_queue_add_write_index_scacq_screl.is_ok(),
        ),
        (
            "hsa_queue_add_write_index_acq_rel",
            lib.hsa_queue_add_write_index_acq_rel.is_ok(),
        ),
        ("hsa_signal_create", lib.hsa_signal_create.is_ok()),
        ("hsa_signal_destroy", lib.hsa_signal_destroy.is_ok()),
        (
            "hsa_signal_load_relaxed",
            lib.hsa_signal_load_relaxed.is_ok(),
        ),
        (
            "hsa_signal_load_scacquire",
            lib.hsa_signal_load_scacquire.is_ok(),
        ),
        (
            "hsa_signal_store_relaxed",
            lib.hsa_signal_store_relaxed.is_ok(),
        ),
        (
            "hsa_signal_store_screlease",
            lib.hsa_signal_store_screlease.is_ok(),
        ),
        (
            "hsa_signal_wait_relaxed",
            lib.hsa_signal_wait_relaxed.is_ok(),
        ),
        (
            "hsa_signal_wait_scacquire",
            lib.hsa_signal_wait_scacquire.is_ok(),
        ),
        (
            "hsa_signal_wait_acquire",
            lib.hsa_signal_wait_acquire.is_ok(),
        ),
        (
            "hsa_amd_agent_iterate_memory_pools",
            lib.hsa_amd_agent_iterate_memory_pools.is_ok(),
        ),
        (
            "hsa_amd_memory_pool_get_info",
            lib.hsa_amd_memory_pool_get_info.is_ok(),
        ),
    ];
    let missing: Vec<&str> = fields
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(n, _)| *n)
        .collect();
    assert!(
        missing.is_empty(),
        "not exported by {HSA_LIBRARY}: {missing:?}"
    );
}

/// Without `/dev/kfd`, ROCr 5.2.3's `hsa_init` fails with `HSA_STATUS_ERROR_OUT_OF_RESOURCES`
/// (0x1008) — the status rocminfo reports on such machines — leaves the runtime uninitialised
/// (`hsa_shut_down` and every query then say `HSA_STATUS_ERROR_NOT_INITIALIZED`, 0x100B), and
/// `hsa_status_string` still describes both.
#[test]
fn init_without_dev_kfd_fails_with_out_of_resources() {
    let test = "init_without_dev_kfd_fails_with_out_of_resources";
    let Some(lib) = real_runtime(test) else {
        return;
    };
    if Path::new("/dev/kfd").exists() {
        println!("skipped: {test}: /dev/kfd exists; this test only runs on machines without it");
        return;
    }
    let _guard = ROCR.lock().unwrap_or_else(|e| e.into_inner());
    let init = lib.hsa_init.as_ref().expect("hsa_init resolves");
    let shut_down = lib.hsa_shut_down.as_ref().expect("hsa_shut_down resolves");
    let iterate = lib
        .hsa_iterate_agents
        .as_ref()
        .expect("hsa_iterate_agents resolves");

    let mut agents = 0u32;
    // SAFETY: `count_agent` matches the callback type and `agents` outlives the call; before
    // `hsa_init` the runtime returns without calling it.
    let status = unsafe { iterate(Some(count_agent), (&raw mut agents).cast()) };
    assert_eq!(status, HSA_STATUS_ERROR_NOT_INITIALIZED);

    // SAFETY: `hsa_init(void)`; on failure it releases what it acquired and stays at
    // reference count 0.
    let status = unsafe { init() };
    assert_eq!(
        status, HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        "hsa_init: {status:#x}"
    );
    assert_eq!(status, 0x1008);
    let text = status_string(&lib, status).expect("hsa_status_string(0x1008) succeeds");
    assert!(
        text.starts_with("HSA_STATUS_ERROR_OUT_OF_RESOURCES: "),
        "hsa_status_string(0x1008) = {text:?}"
    );

    // A second attempt fails the same way.
    // SAFETY: as above.
    assert_eq!(unsafe { init() }, HSA_STATUS_ERROR_OUT_OF_RESOURCES);

    // SAFETY: `iterate` as above: the failed init left the runtime uninitialised.
    let status = unsafe { iterate(Some(count_agent), (&raw mut agents).cast()) };
    assert_eq!(status, HSA_STATUS_ERROR_NOT_INITIALIZED);
    assert_eq!(agents, 0);

    // SAFETY: `hsa_shut_down(void)`; with reference count 0 it only reports that.
    let status = unsafe { shut_down() };
    assert_eq!(
        status, HSA_STATUS_ERROR_NOT_INITIALIZED,
        "hsa_shut_down: {status:#x}"
    );
    assert_eq!(status, 0x100B);
    let text = status_string(&lib, status).expect("hsa_status_string(0x100B) succeeds");
    assert!(
        text.starts_with("HSA_STATUS_ERROR_NOT_INITIALIZED: "),
        "hsa_status_string(0x100B) = {text:?}"
    );

    // Not a status: rejected.
    assert_eq!(
        status_string(&lib, 0x7777),
        Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    );
}

#[test]
fn missing_library_is_err_not_panic() {
    let Err(e) = load_hsa_from("/nonexistent/libhsa-runtime64.so.1") else {
        panic!("loading a nonexistent path succeeded");
    };
    assert!(
        e.to_string().contains("/nonexistent/libhsa-runtime64.so.1"),
        "error names the path: {e}"
    );
}

/// A real library without any `hsa_*` symbol loads, and every symbol field is `Err`.
#[test]
fn library_without_the_symbols_gives_err_fields() {
    let lib = match load_hsa_from("libc.so.6") {
        Ok(lib) => lib,
        Err(e) => panic!("libc.so.6 must load: {e}"),
    };
    assert!(lib.hsa_init.is_err());
    assert!(lib.hsa_shut_down.is_err());
    assert!(lib.hsa_queue_create.is_err());
    assert!(lib.hsa_amd_agent_iterate_memory_pools.is_err());
    let debug = format!("{lib:?}");
    assert!(debug.starts_with("HsaRuntime"), "{debug}");
}
