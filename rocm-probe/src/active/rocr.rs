//! Layer 4, actively: load ROCr (`libhsa-runtime64.so.1`) from the install a process would use,
//! `hsa_init`, list the agents with their ISAs and memory pools, optionally dispatch one
//! barrier-AND packet per GPU, and `hsa_shut_down` — always, whatever `hsa_init` returned.
//!
//! Only entry points and structs of `hsa.h` / `hsa_ext_amd.h` that are identical from ROCm 5.2
//! to 7.x are used (hsakmt-sys's crate documentation says how that was checked).

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use hsakmt_sys::hsa::{
    AQL_PACKET_SIZE, HSA_AGENT_INFO_DEVICE, HSA_AGENT_INFO_NAME, HSA_AGENT_INFO_NODE,
    HSA_AGENT_INFO_QUEUE_MIN_SIZE, HSA_DEVICE_TYPE_CPU, HSA_DEVICE_TYPE_GPU, HSA_ISA_INFO_NAME,
    HSA_ISA_INFO_NAME_LENGTH, HSA_QUEUE_TYPE_SINGLE, HSA_SIGNAL_CONDITION_LT, HSA_STATUS_SUCCESS,
    HSA_SYSTEM_INFO_VERSION_MAJOR, HSA_SYSTEM_INFO_VERSION_MINOR, HSA_WAIT_STATE_ACTIVE,
    HsaRuntime, QUEUE_SEGMENT_SIZE_DEFAULT, hsa_agent_t, hsa_amd_memory_pool_t,
    hsa_barrier_and_packet_t, hsa_isa_t, hsa_queue_t, hsa_signal_t, hsa_status_t,
};

use super::dispatch::{QueueSlot, publish};
use super::status::hsa_name;
use super::{ActiveOptions, DispatchOutcome, DispatchResult, RocrAgent, RocrResult};

/// More agents than any machine has (64 partitions and their CPUs fit easily).
const MAX_AGENTS: usize = 1024;
/// ISA names are short (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`).
const MAX_ISA_NAME: u32 = 256;
/// Default time a dispatch may take.
pub const DISPATCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Loads ROCr and asks it for its agents (and, with `options.dispatch`, runs a barrier packet
/// on each GPU agent).
pub fn probe(
    library: Result<PathBuf, super::LoadError>,
    options: &ActiveOptions,
) -> (RocrResult, Option<Vec<DispatchResult>>) {
    let mut result = RocrResult::default();
    let path = match library {
        Ok(path) => path,
        Err(e) => {
            result.load_error = Some(e);
            return (result, None);
        }
    };
    let lib = match hsakmt_sys::load_hsa_from(&path) {
        Ok(lib) => lib,
        Err(e) => {
            result.load_error = Some(super::load_error(&path, &e));
            return (result, None);
        }
    };
    result.library = Some(path.display().to_string());
    let (Ok(init), Ok(shut_down)) = (&lib.hsa_init, &lib.hsa_shut_down) else {
        result.load_error = Some(super::LoadError::EntryPointsMissing(
            "hsa_init or hsa_shut_down".to_owned(),
        ));
        return (result, None);
    };
    // SAFETY: hsa_init takes no arguments (hsa.h).
    let status = unsafe { init() };
    result.init = Some(hsa_name(status));
    let mut dispatched = None;
    if status == HSA_STATUS_SUCCESS {
        result.version = version(&lib);
        let agents = agents(&lib);
        result.agents = Some(agents.iter().map(|(_, a)| a.clone()).collect());
        if options.dispatch {
            let timeout = options
                .dispatch_timeout_ms
                .map_or(DISPATCH_TIMEOUT, Duration::from_millis);
            dispatched = Some(
                agents
                    .iter()
                    .filter(|(_, a)| a.device == "gpu")
                    .map(|(h, a)| dispatch(&lib, *h, a, timeout))
                    .collect(),
            );
        }
    }
    // SAFETY: no arguments. After a failed hsa_init it returns NOT_INITIALIZED and does
    // nothing; after a successful one it balances it.
    result.shut_down = Some(hsa_name(unsafe { shut_down() }));
    (result, dispatched)
}

fn version(lib: &HsaRuntime) -> Option<[u32; 2]> {
    let get = lib.hsa_system_get_info.as_ref().ok()?;
    let mut major: u16 = 0;
    let mut minor: u16 = 0;
    // SAFETY: VERSION_MAJOR and VERSION_MINOR are uint16_t attributes (hsa.h); each pointer is
    // to a live u16.
    let ok = unsafe {
        get(HSA_SYSTEM_INFO_VERSION_MAJOR, (&raw mut major).cast()) == HSA_STATUS_SUCCESS
            && get(HSA_SYSTEM_INFO_VERSION_MINOR, (&raw mut minor).cast()) == HSA_STATUS_SUCCESS
    };
    ok.then_some([u32::from(major), u32::from(minor)])
}

unsafe extern "C" fn collect_agent(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the `&mut Vec<hsa_agent_t>` passed to hsa_iterate_agents below, alive
    // and not otherwise borrowed for the duration of the iteration.
    let list = unsafe { &mut *data.cast::<Vec<hsa_agent_t>>() };
    if list.len() < MAX_AGENTS {
        list.push(agent);
    }
    HSA_STATUS_SUCCESS
}

unsafe extern "C" fn collect_isa(isa: hsa_isa_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: as for collect_agent, with a `Vec<hsa_isa_t>`.
    let list = unsafe { &mut *data.cast::<Vec<hsa_isa_t>>() };
    if list.len() < 64 {
        list.push(isa);
    }
    HSA_STATUS_SUCCESS
}

unsafe extern "C" fn count_pool(_pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the `&mut u32` passed below.
    let n = unsafe { &mut *data.cast::<u32>() };
    *n = n.saturating_add(1);
    HSA_STATUS_SUCCESS
}

/// A NUL-terminated C string in `buf`, lossily.
fn c_string(buf: &[u8]) -> String {
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn agents(lib: &HsaRuntime) -> Vec<(hsa_agent_t, RocrAgent)> {
    let (Ok(iterate), Ok(info)) = (&lib.hsa_iterate_agents, &lib.hsa_agent_get_info) else {
        return Vec::new();
    };
    let mut handles: Vec<hsa_agent_t> = Vec::new();
    // SAFETY: the callback matches hsa_iterate_agents' type and `data` points at `handles`,
    // which outlives the call (the iteration is synchronous).
    unsafe { iterate(Some(collect_agent), (&raw mut handles).cast()) };
    handles
        .into_iter()
        .map(|h| {
            let mut name = [0u8; 64];
            let mut device: u32 = u32::MAX;
            let mut node: u32 = u32::MAX;
            // SAFETY: NAME fills char[64], DEVICE an hsa_device_type_t (u32), NODE a uint32_t
            // (hsa.h); each pointer is to a live buffer of that size.
            let (name_ok, device_ok, node_ok) = unsafe {
                (
                    info(h, HSA_AGENT_INFO_NAME, name.as_mut_ptr().cast()) == HSA_STATUS_SUCCESS,
                    info(h, HSA_AGENT_INFO_DEVICE, (&raw mut device).cast()) == HSA_STATUS_SUCCESS,
                    info(h, HSA_AGENT_INFO_NODE, (&raw mut node).cast()) == HSA_STATUS_SUCCESS,
                )
            };
            let device = match (device_ok, device) {
                (true, HSA_DEVICE_TYPE_GPU) => "gpu",
                (true, HSA_DEVICE_TYPE_CPU) => "cpu",
                _ => "other",
            };
            let agent = RocrAgent {
                name: if name_ok {
                    c_string(&name)
                } else {
                    String::new()
                },
                device: device.to_owned(),
                node: node_ok.then_some(node),
                isas: isas(lib, h),
                pools: pools(lib, h),
            };
            (h, agent)
        })
        .collect()
}

fn isas(lib: &HsaRuntime, agent: hsa_agent_t) -> Vec<String> {
    let (Ok(iterate), Ok(info)) = (&lib.hsa_agent_iterate_isas, &lib.hsa_isa_get_info_alt) else {
        return Vec::new();
    };
    let mut list: Vec<hsa_isa_t> = Vec::new();
    // SAFETY: as in `agents`, for ISAs.
    unsafe { iterate(agent, Some(collect_isa), (&raw mut list).cast()) };
    list.into_iter()
        .filter_map(|isa| {
            let mut len: u32 = 0;
            // SAFETY: NAME_LENGTH fills a uint32_t.
            let ok = unsafe { info(isa, HSA_ISA_INFO_NAME_LENGTH, (&raw mut len).cast()) };
            if ok != HSA_STATUS_SUCCESS || len == 0 || len > MAX_ISA_NAME {
                return None;
            }
            let mut buf = vec![0u8; len as usize + 1];
            // SAFETY: NAME fills `len` bytes (hsa.h: "with the length equal to the value of
            // HSA_ISA_INFO_NAME_LENGTH"); the buffer has one more.
            let ok = unsafe { info(isa, HSA_ISA_INFO_NAME, buf.as_mut_ptr().cast()) };
            (ok == HSA_STATUS_SUCCESS).then(|| c_string(&buf))
        })
        .collect()
}

fn pools(lib: &HsaRuntime, agent: hsa_agent_t) -> Option<u32> {
    let iterate = lib.hsa_amd_agent_iterate_memory_pools.as_ref().ok()?;
    let mut n: u32 = 0;
    // SAFETY: the callback matches the iterator's type; `data` points at `n`.
    let status = unsafe { iterate(agent, Some(count_pool), (&raw mut n).cast()) };
    (status == HSA_STATUS_SUCCESS).then_some(n)
}

/// One barrier-AND packet on a fresh queue of `agent`: create the smallest queue and a
/// completion signal, publish the packet, ring the doorbell, wait up to `timeout`; then
/// destroy both.
fn dispatch(
    lib: &HsaRuntime,
    agent: hsa_agent_t,
    a: &RocrAgent,
    timeout: Duration,
) -> DispatchResult {
    let mut out = DispatchResult {
        node: a.node,
        agent: a.name.clone(),
        result: DispatchOutcome::Ok,
        microseconds: None,
    };
    let needed = (
        &lib.hsa_agent_get_info,
        &lib.hsa_queue_create,
        &lib.hsa_queue_destroy,
        &lib.hsa_signal_create,
        &lib.hsa_signal_destroy,
        &lib.hsa_queue_add_write_index_relaxed,
        &lib.hsa_signal_store_screlease,
        &lib.hsa_signal_wait_scacquire,
    );
    let (
        Ok(info),
        Ok(create),
        Ok(destroy),
        Ok(sig_create),
        Ok(sig_destroy),
        Ok(add_index),
        Ok(store),
        Ok(wait),
    ) = needed
    else {
        out.result = DispatchOutcome::Failed(
            "queue or signal functions missing from the library".to_owned(),
        );
        return out;
    };
    let mut min_size: u32 = 0;
    // SAFETY: QUEUE_MIN_SIZE fills a uint32_t.
    unsafe {
        info(
            agent,
            HSA_AGENT_INFO_QUEUE_MIN_SIZE,
            (&raw mut min_size).cast(),
        )
    };
    let size = min_size.max(64).next_power_of_two();
    let mut queue: *mut hsa_queue_t = std::ptr::null_mut();
    // SAFETY: arguments per hsa_queue_create's documentation: a power-of-two size at least the
    // agent's minimum, a single-producer queue, no error callback, default segment sizes, and
    // a pointer to receive the queue.
    let status = unsafe {
        create(
            agent,
            size,
            HSA_QUEUE_TYPE_SINGLE,
            None,
            std::ptr::null_mut(),
            QUEUE_SEGMENT_SIZE_DEFAULT,
            QUEUE_SEGMENT_SIZE_DEFAULT,
            &raw mut queue,
        )
    };
    if status != HSA_STATUS_SUCCESS || queue.is_null() {
        out.result = DispatchOutcome::Failed(format!("hsa_queue_create: {}", hsa_name(status)));
        return out;
    }
    let mut signal = hsa_signal_t { handle: 0 };
    // SAFETY: initial value 1, no consumer list (any agent may wait), a live out-pointer.
    let status = unsafe { sig_create(1, 0, std::ptr::null(), &raw mut signal) };
    if status != HSA_STATUS_SUCCESS {
        out.result = DispatchOutcome::Failed(format!("hsa_signal_create: {}", hsa_name(status)));
        // SAFETY: `queue` was created above and nothing was submitted to it.
        unsafe { destroy(queue) };
        return out;
    }
    // SAFETY: `queue` is live; reading its fields (base address, size, doorbell) is how every
    // HSA client finds its ring buffer.
    let (base, ring, doorbell) = unsafe {
        (
            (*queue).base_address,
            (*queue).size,
            (*queue).doorbell_signal,
        )
    };
    // SAFETY: reserves one slot; the queue is ours alone (single producer).
    let index = unsafe { add_index(queue, 1) };
    let offset = (index % u64::from(ring.max(1))) as usize * AQL_PACKET_SIZE;
    // SAFETY: base + offset is the reserved, 64-aligned slot of the ring (the runtime allocates
    // the ring 64-aligned with `size` slots); nothing else writes it before the doorbell.
    let mut slot = unsafe {
        QueueSlot::new(
            base.cast::<u8>()
                .add(offset)
                .cast::<hsa_barrier_and_packet_t>(),
        )
    };
    publish(&mut slot, signal);
    let start = Instant::now();
    // SAFETY: the doorbell takes the index of the packet just published.
    unsafe { store(doorbell, index as i64) };
    let mut done = false;
    while start.elapsed() < timeout {
        // SAFETY: `signal` is live; a short hint keeps the loop responsive to the timeout.
        let value = unsafe {
            wait(
                signal,
                HSA_SIGNAL_CONDITION_LT,
                1,
                1_000_000,
                HSA_WAIT_STATE_ACTIVE,
            )
        };
        if value < 1 {
            done = true;
            break;
        }
    }
    if done {
        out.result = DispatchOutcome::Ok;
        out.microseconds = Some(start.elapsed().as_micros() as u64);
    } else {
        out.result = DispatchOutcome::Timeout;
    }
    // The queue first (it may still reference the signal), then the signal. On a GPU that
    // timed out, tearing the queue down is what the process's exit would do anyway; the driver
    // may then recover the hung GPU, which the probe reports rather than causes.
    // SAFETY: both were created above and are destroyed once.
    unsafe {
        destroy(queue);
        sig_destroy(signal);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_that_does_not_exist_is_not_installed() {
        let options = ActiveOptions {
            hsa_runtime_lib: Some(PathBuf::from("/nonexistent/libhsa-runtime64.so.1")),
            ..Default::default()
        };
        let (r, d) = probe(Ok(options.hsa_runtime_lib.clone().unwrap()), &options);
        assert_eq!(
            r.load_error,
            Some(super::super::LoadError::NotInstalledAt(
                "/nonexistent/libhsa-runtime64.so.1".into()
            ))
        );
        assert_eq!((r.init, d), (None, None));
    }

    #[test]
    fn no_install_is_not_installed() {
        let installs = crate::facts::install::InstallFacts::default();
        let (r, _) = probe(installs.rocr_library(None), &ActiveOptions::default());
        assert!(r.load_error.unwrap().is_not_installed());
    }

    #[test]
    fn c_strings() {
        assert_eq!(c_string(b"gfx90a\0\0\0"), "gfx90a");
        assert_eq!(c_string(b"no-nul"), "no-nul");
    }
}
