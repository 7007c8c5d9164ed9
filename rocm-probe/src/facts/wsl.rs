//! What ROCm on WSL needs instead of amdgpu and KFD, read passively (issue 15 item 4).
//!
//! Under WSL2 the GPU is the Windows driver's, reached through the paravirtual device
//! `/dev/dxg` and Microsoft's user-mode library `libdxcore.so`, which WSL mounts from the
//! Windows host into `/usr/lib/wsl/lib` (numtide/nix-gl-host#16: "WSL mounts drivers under
//! `/usr/lib/wsl/lib`"). ROCm reaches it in one of two ways:
//!
//! - ROCm 6.1 to 6.4 (AMD's "ROCm on WSL" releases): the package `hsa-runtime-rocr4wsl-amdgpu`
//!   replaces ROCr by a WSL build of `libhsa-runtime64.so.1` (`dpkg -L` in
//!   ROCm/legacy-rocm-build#4682: `/opt/rocm-6.4.0/lib/libhsa-runtime64.so.1.14.0`) that links
//!   `libdxcore.so` (`DT_NEEDED`): on a machine without it, `rocminfo: error while loading
//!   shared libraries: libdxcore.so: cannot open shared object file` (ROCm/legacy-rocm-build#4053).
//!   The package is gone from ROCm 7.0 (legacy-rocm-build#5361, #5509;
//!   ROCm/rocm-install-on-linux#589 "Remove hsa-runtime-rocr4wsl-amdgpu").
//! - ROCm 7.2 and later: the standard ROCr loads `librocdxg` (ROCm/librocdxg, the DXG backend
//!   of libhsakmt) — `librocdxg.so`, the versioned `librocdxg.so.1` since
//!   ROCm/rocm-systems#11241 — when DXG detection is on: `HSA_ENABLE_DXG_DETECTION=1` before
//!   ROCm 7.13 (librocdxg#34: "`export HSA_ENABLE_DXG_DETECTION=1` is to pair with rocm prev
//!   7.13"), on by default unless `0` from then on (ROCm/rocm-systems#3863).
//!
//! A standard ROCr without either says `WSL environment detected.` and fails with
//! `HSA_STATUS_ERROR_OUT_OF_RESOURCES` (nix-community/NixOS-WSL#655,
//! ROCm/rocm-systems#1153, ROCm/librocdxg#17).
//!
//! Which GPU sits behind `/dev/dxg` is not visible passively (no PCI function, no KFD node).

use serde::Serialize;

use crate::codeobject::CodeObjectFile;
use crate::facts::Collect;
use crate::facts::frameworks::FrameworkFacts;
use crate::facts::install::InstallFacts;
use crate::facts::platform::{DXG, PlatformFacts};
use crate::source::Source;
use crate::source::fixture::DeviceNode;
use crate::source::problem::Problem;
use crate::source::root::SysRoot;

/// Where WSL mounts the Windows host's user-mode GPU libraries.
pub const WSL_LIB_DIR: &str = "/usr/lib/wsl/lib";
/// Microsoft's DXCore, mounted by WSL from the Windows host.
pub const DXCORE: &str = "/usr/lib/wsl/lib/libdxcore.so";
/// The name the WSL build of ROCr links.
pub const DXCORE_SONAME: &str = "libdxcore.so";
/// librocdxg's names: the versioned one ROCr loads since rocm-systems#11241, then the plain one.
pub const ROCDXG_NAMES: [&str; 2] = ["librocdxg.so.1", "librocdxg.so"];
/// The variable that turns ROCr's DXG detection on (`1`) or off (`0`).
pub const DXG_DETECTION: &str = "HSA_ENABLE_DXG_DETECTION";
/// A file read for its dynamic section at most this large (ROCr is a few MB).
const ELF_CAP: u64 = 64 << 20;

/// The ROCr a process would load, and whether it is the WSL build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RocrBuild {
    /// The soname link's path (`/opt/rocm-6.4.0/lib/libhsa-runtime64.so.1`).
    pub path: String,
    /// Whether its directory is in the loader's search order; when not, it is the install's
    /// ROCr, which ROCm's own programs still load through their RUNPATH (rocminfo in
    /// ROCm/librocdxg#35 starts and only then fails to find librocdxg).
    pub on_search_path: bool,
    /// Its `DT_NEEDED` entries; `None` when the file could not be read as a shared library (an
    /// empty stand-in in a fixture, a file too large or malformed).
    pub needed: Option<Vec<String>>,
    /// The directories of its `DT_RUNPATH` (else `DT_RPATH`) as written (`$ORIGIN` kept): where
    /// the loader looks for what ROCr opens by name, librocdxg included; `None` when not read.
    pub runpath: Option<Vec<String>>,
}

impl RocrBuild {
    /// Whether it is the WSL build (links `libdxcore.so`); `None` when unknown.
    pub fn wsl(&self) -> Option<bool> {
        self.needed
            .as_ref()
            .map(|n| n.iter().any(|s| s == DXCORE_SONAME))
    }
}

/// The WSL pieces; collected only when the platform shows WSL markers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WslFacts {
    /// `/dev/dxg`; `None` when it does not exist.
    pub dxg: Option<DeviceNode>,
    /// Where `libdxcore.so` is: [`WSL_LIB_DIR`] and the loader's search order (a container
    /// given it by a bind mount has it in `/usr/lib`, ROCm/librocdxg#1); `None` when `/usr/lib`
    /// was not captured.
    pub dxcore: Option<Vec<String>>,
    /// Whether one of them is in a directory of the loader's search order; `None` when the
    /// installs were not captured.
    pub dxcore_on_path: Option<bool>,
    /// librocdxg files found in ROCr's directory and the loader's search order.
    pub rocdxg: Vec<String>,
    /// librocdxg files in a ROCm library directory outside the loader's search order
    /// (`/opt/rocm/lib`, then each install's): where `make install` puts it without registering
    /// the directory with ldconfig (ROCm/librocdxg#35, #46; fixed by librocdxg#47).
    pub rocdxg_unsearched: Vec<String>,
    /// librocdxg files beside the ROCr of a Python wheel (TheRock's `_rocm_sdk_core/lib`,
    /// `torch/lib`), which that ROCr finds through its `$ORIGIN` RUNPATH.
    pub rocdxg_in_wheels: Vec<String>,
    /// The Windows driver-store directories WSL mounts (`/usr/lib/wsl/drivers/*`), as named.
    pub driver_store: Vec<String>,
}

/// The ROCr a process would load, read for its `DT_NEEDED` entries on every machine: AMD's WSL
/// build installed outside WSL cannot start (ROCm/legacy-rocm-build#4053), and under WSL it is
/// one of the two ways ROCm reaches the GPU.
impl Collect for RocrBuild {
    type Needs<'a> = &'a InstallFacts;
    type Output = Option<Self>;

    fn collect(source: &Source, installs: &InstallFacts, _: &mut Vec<Problem>) -> Option<Self> {
        let loaded = installs.loaded_rocr().and_then(|d| d.libs.rocr.as_ref());
        let on_search_path = loaded.is_some();
        let lib = loaded.or_else(|| installs.effective()?.libs.rocr.as_ref())?;
        let path = lib.path();
        // The real file, where the soname link (read by the install collector) leads: a
        // snapshot records it there, so that the link stays a link.
        let real = lib.file.as_ref().map_or_else(
            || path.clone(),
            |f| crate::facts::install::resolve_link(&path, f),
        );
        let dynamic = read_dynamic(source.root(), &real);
        Some(Self {
            needed: dynamic.as_ref().map(|d| d.needed.clone()),
            runpath: dynamic.map(|d| d.runpath),
            path,
            on_search_path,
        })
    }
}

impl Collect for WslFacts {
    type Needs<'a> = (&'a PlatformFacts, &'a InstallFacts, &'a FrameworkFacts);
    type Output = Option<Self>;

    fn collect(
        source: &Source,
        (platform, installs, frameworks): Self::Needs<'_>,
        problems: &mut Vec<Problem>,
    ) -> Option<Self> {
        if platform.wsl_markers.is_empty() {
            return None;
        }
        let root = source.root();
        let search_dirs = || installs.search_path.iter().map(|d| d.dir.as_str());
        let in_dir = |dir: &str| format!("{}/{DXCORE_SONAME}", dir.trim_end_matches('/'));
        let dxcore = root.exists("/usr/lib").then(|| {
            let mut found: Vec<String> = Vec::new();
            for path in std::iter::once(WSL_LIB_DIR)
                .chain(search_dirs())
                .map(in_dir)
            {
                if !found.contains(&path) && root.exists(&path) {
                    found.push(path);
                }
            }
            found
        });
        let dxcore_on_path = installs.captured.then(|| {
            search_dirs().any(|d| dxcore.as_ref().is_some_and(|f| f.contains(&in_dir(d))))
        });
        let loaded = installs.loaded_rocr();
        let mut dirs: Vec<&str> = loaded.map(|d| d.dir.as_str()).into_iter().collect();
        dirs.extend(installs.search_path.iter().map(|d| d.dir.as_str()));
        let mut rocdxg = Vec::new();
        for dir in dirs {
            rocdxg_in(root, dir, &mut rocdxg);
        }
        // `/opt/rocm/lib` is where AMD's instructions install librocdxg; the install it names
        // is not looked at again (the same files under a second name).
        let opt_rocm_lib = installs
            .opt_rocm
            .as_ref()
            .map(|o| format!("{}/lib", o.target.trim_end_matches('/')));
        let mut rocdxg_unsearched = Vec::new();
        let install_dirs = installs
            .installs
            .iter()
            .map(|i| i.lib_dir.as_str())
            .filter(|d| opt_rocm_lib.as_deref() != Some(*d));
        for dir in std::iter::once("/opt/rocm/lib").chain(install_dirs) {
            if !search_dirs().any(|d| d.trim_end_matches('/') == dir.trim_end_matches('/')) {
                rocdxg_in(root, dir, &mut rocdxg_unsearched);
            }
        }
        let mut rocdxg_in_wheels = Vec::new();
        for wheel in frameworks.wheel_runtimes() {
            if wheel.bundled.has("hsa-runtime64") {
                rocdxg_in(root, &wheel.bundled.lib_dir, &mut rocdxg_in_wheels);
            }
        }
        let driver_store =
            crate::source::problem::optional(root.read_dir("/usr/lib/wsl/drivers"), problems)
                .unwrap_or_default();
        Some(Self {
            dxg: source.host().device(DXG),
            dxcore,
            dxcore_on_path,
            rocdxg,
            rocdxg_unsearched,
            rocdxg_in_wheels,
            driver_store,
        })
    }
}

/// Appends the librocdxg files of `dir` not already in `out`.
fn rocdxg_in(root: &SysRoot, dir: &str, out: &mut Vec<String>) {
    for name in ROCDXG_NAMES {
        let path = format!("{}/{name}", dir.trim_end_matches('/'));
        if !out.contains(&path) && root.exists(&path) {
            out.push(path);
        }
    }
}

/// The dynamic section of the shared library at `abs` (a real file, not a link); `None` when it
/// is not one that can be read (an empty fixture stand-in included). A snapshot records the file
/// whole when small, else a minimal ELF with the same entries ([`dynamic_stand_in`]).
fn read_dynamic(root: &SysRoot, abs: &str) -> Option<Dynamic> {
    let file = CodeObjectFile::open_in(root, abs).ok()?;
    if file.len() > ELF_CAP {
        return None;
    }
    let dynamic = dynamic(file.bytes());
    if root.recording() {
        root.record_file(abs, || match &dynamic {
            Some(d) if file.len() > crate::facts::fatbin::COPY_LIMIT => {
                dynamic_stand_in(&d.needed, &d.runpath)
            }
            _ => file.bytes().to_vec(),
        });
    }
    dynamic
}

/// What the probe reads of a shared library's dynamic section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dynamic {
    /// `DT_NEEDED` names.
    pub needed: Vec<String>,
    /// `DT_RUNPATH` directories, else `DT_RPATH`'s (glibc ignores `DT_RPATH` when `DT_RUNPATH`
    /// is present), split at `:`.
    pub runpath: Vec<String>,
}

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;
/// At most this many dynamic entries are looked at.
const MAX_ENTRIES: usize = 4096;

/// The `DT_NEEDED` names and run path of an ELF64 shared library, from its program headers
/// (`PT_DYNAMIC`, and the `PT_LOAD` segment that maps `DT_STRTAB`), read with the `object`
/// crate; `None` when `data` is not one or is malformed.
pub fn dynamic(data: &[u8]) -> Option<Dynamic> {
    use object::Endianness;
    use object::elf::FileHeader64;
    use object::read::elf::{Dyn, FileHeader, ProgramHeader};
    let header = FileHeader64::<Endianness>::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let segments = header.program_headers(endian, data).ok()?;
    let dynamic = segments
        .iter()
        .find_map(|s| s.dynamic(endian, data).ok().flatten())?;
    let (mut strtab, mut strsz, mut offsets) = (None, None, Vec::new());
    let (mut runpath, mut rpath) = (Vec::new(), Vec::new());
    for d in dynamic.iter().take(MAX_ENTRIES) {
        let value = d.val(endian);
        match u64::try_from(d.tag(endian).0).ok()? {
            DT_NULL => break,
            DT_NEEDED => offsets.push(usize::try_from(value).ok()?),
            DT_RUNPATH => runpath.push(usize::try_from(value).ok()?),
            DT_RPATH => rpath.push(usize::try_from(value).ok()?),
            DT_STRTAB => strtab = Some(value),
            DT_STRSZ => strsz = Some(value),
            _ => {}
        }
    }
    let (address, size) = (strtab?, strsz?);
    let strings = segments
        .iter()
        .filter(|s| s.p_type(endian) == object::elf::PT_LOAD)
        .find_map(|s| s.data_range(endian, data, address, size).ok().flatten())?;
    let string = |o: usize| {
        let rest = strings.get(o..)?;
        let end = rest.iter().position(|b| *b == 0)?;
        String::from_utf8(rest[..end].to_vec()).ok()
    };
    let needed = offsets
        .into_iter()
        .map(string)
        .collect::<Option<Vec<_>>>()?;
    let path = if runpath.is_empty() { rpath } else { runpath };
    let mut dirs = Vec::new();
    for o in path {
        dirs.extend(
            string(o)?
                .split(':')
                .filter(|d| !d.is_empty())
                .map(str::to_owned),
        );
    }
    Some(Dynamic {
        needed,
        runpath: dirs,
    })
}

/// A minimal little-endian ELF64 shared object whose dynamic section lists `needed` and, when
/// `runpath` is not empty, a `DT_RUNPATH` of it joined by `:`, and nothing else: what a snapshot
/// records of a large library read only for those, and what tests read back. One `PT_LOAD` maps
/// the whole file at address 0.
pub fn dynamic_stand_in(needed: &[String], runpath: &[String]) -> Vec<u8> {
    const EHDR: usize = 64;
    const PHDR: usize = 56;
    let dyn_off = EHDR + 2 * PHDR;
    let with_runpath = usize::from(!runpath.is_empty());
    let dyn_len = (needed.len() + with_runpath + 3) * 16;
    let str_off = dyn_off + dyn_len;
    let mut strings = vec![0u8];
    let mut entries: Vec<(u64, u64)> = Vec::new();
    for n in needed {
        entries.push((DT_NEEDED, strings.len() as u64));
        strings.extend_from_slice(n.as_bytes());
        strings.push(0);
    }
    if with_runpath == 1 {
        entries.push((DT_RUNPATH, strings.len() as u64));
        strings.extend_from_slice(runpath.join(":").as_bytes());
        strings.push(0);
    }
    entries.push((DT_STRTAB, str_off as u64));
    entries.push((DT_STRSZ, strings.len() as u64));
    entries.push((DT_NULL, 0));
    let total = (str_off + strings.len()) as u64;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    out.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
    out.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes()); // entry
    out.extend_from_slice(&(EHDR as u64).to_le_bytes()); // phoff
    out.extend_from_slice(&0u64.to_le_bytes()); // shoff
    out.extend_from_slice(&0u32.to_le_bytes()); // flags
    for v in [EHDR as u16, PHDR as u16, 2, 64, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (kind, off, size) in [
        (PT_LOAD, 0u64, total),
        (PT_DYNAMIC, dyn_off as u64, dyn_len as u64),
    ] {
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&4u32.to_le_bytes()); // PF_R
        for v in [off, off, off, size, size, 8] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for (tag, value) in entries {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&strings);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stand_in_reads_back_and_garbage_does_not() {
        let names = vec!["libdxcore.so".to_owned(), "libnuma.so.1".to_owned()];
        let needed = |data: &[u8]| dynamic(data).map(|d| d.needed);
        let elf = dynamic_stand_in(&names, &[]);
        assert_eq!(needed(&elf), Some(names.clone()));
        assert_eq!(needed(&dynamic_stand_in(&[], &[])), Some(vec![]));
        assert_eq!(dynamic(&elf).unwrap().runpath, Vec::<String>::new());
        let runpath = vec!["$ORIGIN".to_owned(), "$ORIGIN/../lib64".to_owned()];
        let with = dynamic_stand_in(&names, &runpath);
        assert_eq!(
            dynamic(&with),
            Some(Dynamic {
                needed: names.clone(),
                runpath
            })
        );
        for cut in 0..with.len() {
            let _ = dynamic(&with[..cut]);
        }
        assert_eq!(needed(b""), None);
        assert_eq!(needed(b"\x7fELF\x02\x01"), None);
        // Every prefix is refused or read without panicking.
        for cut in 0..elf.len() {
            let _ = needed(&elf[..cut]);
        }
        let rocr = RocrBuild {
            path: String::new(),
            needed: Some(vec!["libnuma.so.1".to_owned()]),
            runpath: Some(vec![]),
            on_search_path: true,
        };
        assert_eq!(rocr.wsl(), Some(false));
    }

    /// binutils' readelf as the oracle: Debian's ROCr 5.2 (the real library, where installed)
    /// and this test binary list the same DT_NEEDED names and run path either way.
    #[test]
    fn needed_agrees_with_readelf() {
        let rocr = std::path::PathBuf::from("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1");
        let this = std::env::current_exe().unwrap();
        for path in [rocr, this].iter().filter(|p| p.exists()) {
            // binutils is one of the packages scripts/test installs.
            let out = std::process::Command::new("readelf")
                .arg("-dW")
                .arg(path)
                .output()
                .expect("readelf runs (binutils)");
            let text = String::from_utf8_lossy(&out.stdout);
            let want: Vec<String> = text
                .lines()
                .filter(|l| l.contains("(NEEDED)"))
                .filter_map(|l| Some(l.split_once('[')?.1.split_once(']')?.0.to_owned()))
                .collect();
            assert!(!want.is_empty(), "{}", path.display());
            let bracketed = |tag: &str| -> Vec<String> {
                text.lines()
                    .filter(|l| l.contains(tag))
                    .filter_map(|l| Some(l.split_once('[')?.1.split_once(']')?.0.to_owned()))
                    .flat_map(|v| v.split(':').map(str::to_owned).collect::<Vec<_>>())
                    .filter(|d| !d.is_empty())
                    .collect()
            };
            let runpath = bracketed("(RUNPATH)");
            let runpath = if runpath.is_empty() {
                bracketed("(RPATH)")
            } else {
                runpath
            };
            let got = dynamic(&std::fs::read(path).unwrap());
            assert_eq!(
                got,
                Some(Dynamic {
                    needed: want,
                    runpath
                }),
                "{}",
                path.display()
            );
        }
    }
}
