//! Layer 3, actively: load the shared libhsakmt a process would load, open KFD through it, and
//! read the system and node properties it reports.
//!
//! libhsakmt's structs are not ABI-stable (ROCm 6.3 inserted a field into
//! `HsaNodeProperties`): node properties are read into an oversized, zeroed buffer and only the
//! fields before the first change (`NumCPUCores`, `NumFComputeCores`) are used.
//! `hsaKmtAcquireSystemProperties` acquires a VM on every GPU (waking a runtime-suspended one):
//! this runs only under `--active`. Whatever is opened is closed again.

#![allow(unsafe_code)]

use std::mem::offset_of;
use std::path::PathBuf;

use hsakmt_sys::hsakmt::{
    HSAKMT_STATUS_SUCCESS, HsaKmt, HsaNodeProperties, HsaSystemProperties, HsaVersionInfo,
};

use super::status::hsakmt_name;
use super::{ThunkNode, ThunkResult};

/// Bytes given to `hsaKmtGetNodeProperties`: more than any release's struct (356 bytes in 5.2,
/// under 512 in 7.x), so a newer library never writes past it.
const NODE_BUFFER: usize = 4096;
/// More nodes than any machine has.
const MAX_NODES: u32 = 4096;

#[repr(C, align(16))]
struct NodeBuffer([u8; NODE_BUFFER]);

/// Which libhsakmt to load, as decided from the installs (`install.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThunkLibrary {
    /// Load `path`; show `shown` (the real file: its name carries the version).
    Load {
        /// What to load.
        path: PathBuf,
        /// What to call it.
        shown: String,
    },
    /// No shared libhsakmt, and ROCr (described) has it built in: nothing to load.
    BuiltIntoRocr(String),
    /// Neither.
    Missing(super::LoadError),
}

/// Loads libhsakmt and asks it what it sees.
pub fn probe(library: ThunkLibrary) -> ThunkResult {
    let mut result = ThunkResult::default();
    let (path, file) = match library {
        ThunkLibrary::Load { path, shown } => (path, shown),
        // AMD's packages link libhsakmt into ROCr (from 4.3; everyone from 6.3): there is
        // nothing to load, and ROCr's own init proves the thunk.
        ThunkLibrary::BuiltIntoRocr(rocr) => {
            result.built_into_rocr = Some(rocr);
            return result;
        }
        ThunkLibrary::Missing(e) => {
            result.load_error = Some(e);
            return result;
        }
    };
    let lib = match hsakmt_sys::load_from(&path) {
        Ok(lib) => lib,
        Err(e) => {
            result.load_error = Some(super::load_error(&path, &e));
            return result;
        }
    };
    result.library = Some(file);
    talk(&lib, &mut result);
    result
}

fn talk(lib: &HsaKmt, result: &mut ThunkResult) {
    let (Ok(open), Ok(close)) = (&lib.hsaKmtOpenKFD, &lib.hsaKmtCloseKFD) else {
        result.open = Some("symbol hsaKmtOpenKFD or hsaKmtCloseKFD missing".to_owned());
        return;
    };
    // SAFETY: hsaKmtOpenKFD takes no arguments; the library was loaded from a file that exports
    // the symbol with this signature (hsakmt.h, stable since ROCm 1.x).
    let status = unsafe { open() };
    result.open = Some(hsakmt_name(status));
    if status != HSAKMT_STATUS_SUCCESS {
        return;
    }
    if let Ok(get_version) = &lib.hsaKmtGetVersion {
        let mut v = HsaVersionInfo::default();
        // SAFETY: `v` is a live HsaVersionInfo (two u32s, unchanged in every release) that the
        // call fills.
        if unsafe { get_version(&mut v) } == HSAKMT_STATUS_SUCCESS {
            result.version = Some([v.KernelInterfaceMajorVersion, v.KernelInterfaceMinorVersion]);
        }
    }
    if let Ok(acquire) = &lib.hsaKmtAcquireSystemProperties {
        let mut sys = HsaSystemProperties::default();
        // SAFETY: `sys` is a live HsaSystemProperties (four u32s, unchanged 5.2 → 7.x).
        let status = unsafe { acquire(&mut sys) };
        result.acquire = Some(hsakmt_name(status));
        if status == HSAKMT_STATUS_SUCCESS {
            result.nodes = Some(nodes(lib, sys.NumNodes.min(MAX_NODES)));
            if let Ok(release) = &lib.hsaKmtReleaseSystemProperties {
                // SAFETY: no arguments; releases what the successful acquire took.
                unsafe { release() };
            }
        }
    }
    // SAFETY: no arguments; balances the successful hsaKmtOpenKFD above.
    unsafe { close() };
}

fn nodes(lib: &HsaKmt, count: u32) -> Vec<ThunkNode> {
    let Ok(get) = &lib.hsaKmtGetNodeProperties else {
        return Vec::new();
    };
    let u32_at = |b: &NodeBuffer, at: usize| {
        u32::from_ne_bytes([b.0[at], b.0[at + 1], b.0[at + 2], b.0[at + 3]])
    };
    let mut out = Vec::new();
    for node in 0..count {
        let mut buf = NodeBuffer([0; NODE_BUFFER]);
        // SAFETY: the pointer is to NODE_BUFFER zeroed, 16-aligned bytes, more than any
        // release's HsaNodeProperties, so the library's write stays inside it whatever its
        // version; only bytes are read back from it.
        let status = unsafe { get(node, buf.0.as_mut_ptr().cast::<HsaNodeProperties>()) };
        if status != HSAKMT_STATUS_SUCCESS {
            break;
        }
        out.push(ThunkNode {
            cpu_cores: u32_at(&buf, offset_of!(HsaNodeProperties, NumCPUCores)),
            simds: u32_at(&buf, offset_of!(HsaNodeProperties, NumFComputeCores)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two fields read sit before the first ABI change (ROCm 6.3's OverrideEngineId).
    #[test]
    fn stable_prefix_offsets() {
        assert_eq!(offset_of!(HsaNodeProperties, NumCPUCores), 0);
        assert_eq!(offset_of!(HsaNodeProperties, NumFComputeCores), 4);
        assert!(size_of::<HsaNodeProperties>() < NODE_BUFFER);
    }

    #[test]
    fn a_library_that_does_not_exist_is_not_installed() {
        let r = probe(ThunkLibrary::Load {
            path: PathBuf::from("/nonexistent/libhsakmt.so.1"),
            shown: "/nonexistent/libhsakmt.so.1".into(),
        });
        assert_eq!(
            r.load_error,
            Some(super::super::LoadError::NotInstalledAt(
                "/nonexistent/libhsakmt.so.1".into()
            ))
        );
        assert_eq!(r.open, None);
    }
}
