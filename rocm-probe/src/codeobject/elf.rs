//! ELF: the header of an AMDGPU code object (processor and target features from `e_flags`),
//! and the sections of a host ELF file that hold offload bundles.
//!
//! Source: LLVM AMDGPUUsage "ELF Code Object" (the `EF_AMDGPU_*` values and their meaning per
//! code-object version) and ROCr `amd_hsa_elf.h`; the v3 reading follows comgr's
//! `getElfIsaNameFromElfHeader` (a feature bit clear means "off" where the processor has the
//! feature).

use object::Endianness;
use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use serde::Serialize;

use super::target_id::{FeatureSetting, GENERICS, Processor, TargetId};
use super::{Malformed, ParseError};

/// `e_machine` of AMDGPU code objects.
pub const EM_AMDGPU: u16 = 224;
/// `EI_OSABI` of code objects for the HSA runtime (ROCr).
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `EI_OSABI` of PAL (graphics drivers) code objects.
pub const ELFOSABI_AMDGPU_PAL: u8 = 65;
/// `EI_OSABI` of Mesa code objects.
pub const ELFOSABI_AMDGPU_MESA3D: u8 = 66;

const EF_AMDGPU_MACH: u32 = 0xff;
const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;
const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
const EF_AMDGPU_GENERIC_VERSION_SHIFT: u32 = 24;

/// The name of the section the HIP toolchain puts offload bundles in.
pub const HIP_FATBIN_SECTION: &[u8] = b".hip_fatbin";

/// The size of an ELF64 file header.
pub const ELF64_HEADER_SIZE: usize = 64;

/// `EF_AMDGPU_MACH` values (LLVM `ELF.h`, ROCr `amd_hsa_elf.h`). Generic processors come from
/// [`GENERICS`].
const MACHS: &[(u32, &str)] = &[
    (0x20, "gfx600"),
    (0x21, "gfx601"),
    (0x22, "gfx700"),
    (0x23, "gfx701"),
    (0x24, "gfx702"),
    (0x25, "gfx703"),
    (0x26, "gfx704"),
    (0x28, "gfx801"),
    (0x29, "gfx802"),
    (0x2a, "gfx803"),
    (0x2b, "gfx810"),
    (0x2c, "gfx900"),
    (0x2d, "gfx902"),
    (0x2e, "gfx904"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x31, "gfx909"),
    (0x32, "gfx90c"),
    (0x33, "gfx1010"),
    (0x34, "gfx1011"),
    (0x35, "gfx1012"),
    (0x36, "gfx1030"),
    (0x37, "gfx1031"),
    (0x38, "gfx1032"),
    (0x39, "gfx1033"),
    (0x3a, "gfx602"),
    (0x3b, "gfx705"),
    (0x3c, "gfx805"),
    (0x3d, "gfx1035"),
    (0x3e, "gfx1034"),
    (0x3f, "gfx90a"),
    (0x40, "gfx940"),
    (0x41, "gfx1100"),
    (0x42, "gfx1013"),
    (0x43, "gfx1150"),
    (0x44, "gfx1103"),
    (0x45, "gfx1036"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x49, "gfx1250"),
    (0x4a, "gfx1151"),
    (0x4b, "gfx941"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
    (0x50, "gfx1310"),
    (0x55, "gfx1152"),
    (0x58, "gfx1153"),
    (0x5a, "gfx1251"),
];

/// Every processor LLVM gives an `EF_AMDGPU_MACH` value, generic ones aside: the processors a
/// code object can be built for, and so the names a GPU can have.
pub fn processors() -> impl Iterator<Item = &'static str> {
    MACHS.iter().map(|(_, n)| *n)
}

/// The processor of an `EF_AMDGPU_MACH` value.
pub fn mach_name(mach: u32) -> Option<&'static str> {
    MACHS
        .iter()
        .find(|(m, _)| *m == mach)
        .map(|(_, n)| *n)
        .or_else(|| GENERICS.iter().find(|g| g.mach == mach).map(|g| g.name))
}

/// What the ELF header of an AMDGPU code object says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeObjectHeader {
    /// `EI_OSABI`: 64 HSA (ROCm), 65 PAL, 66 Mesa.
    pub os_abi: u8,
    /// Code-object version (2–6) from `EI_ABIVERSION`, for HSA code objects.
    pub version: Option<u8>,
    /// `e_type`: 1 relocatable, 2 executable, 3 shared object (what ROCr loads).
    pub elf_type: u16,
    /// `e_flags`.
    pub e_flags: u32,
    /// `EF_AMDGPU_MACH`.
    pub mach: u32,
    /// The target ID the flags describe; `None` when the `EF_AMDGPU_MACH` value is unknown.
    pub target: Option<TargetId>,
    /// Generic version (`e_flags` bits 24–31) of a generic code object (v6 and later);
    /// `None` for other code objects.
    pub generic_version: Option<u8>,
}

impl CodeObjectHeader {
    /// The triple ROCr would print for this code object.
    pub fn triple(&self) -> &'static str {
        match self.os_abi {
            ELFOSABI_AMDGPU_HSA => "amdgcn-amd-amdhsa",
            ELFOSABI_AMDGPU_PAL => "amdgcn-amd-amdpal",
            ELFOSABI_AMDGPU_MESA3D => "amdgcn-amd-mesa3d",
            _ => "amdgcn-amd-unknown",
        }
    }
}

/// Whether `data` starts like an ELF file.
pub fn is_elf(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF")
}

fn u16_at(d: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([d[at], d[at + 1]])
}

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]])
}

/// Decodes the header of an AMDGPU code object; `Ok(None)` when `data` is an ELF file for
/// another machine. Only the first 64 bytes are read.
pub fn code_object_header(data: &[u8]) -> Result<Option<CodeObjectHeader>, ParseError> {
    if !is_elf(data) {
        return Err(ParseError::at(0, Malformed::NotElf));
    }
    if data.len() < ELF64_HEADER_SIZE {
        return Err(ParseError::at(
            0,
            Malformed::Truncated {
                what: "ELF header",
                need: ELF64_HEADER_SIZE as u64,
                have: data.len() as u64,
            },
        ));
    }
    // EI_CLASS 2 (64-bit) and EI_DATA 1 (little-endian): what every amdgcn object is.
    if data[4] != 2 || data[5] != 1 || u16_at(data, 18) != EM_AMDGPU {
        return Ok(None);
    }
    let os_abi = data[7];
    let abi_version = data[8];
    let e_flags = u32_at(data, 48);
    let mach = e_flags & EF_AMDGPU_MACH;
    let version = (os_abi == ELFOSABI_AMDGPU_HSA).then_some(abi_version.saturating_add(2));
    // v2 objects (EI_ABIVERSION 0) name their processor in a note, not in e_flags (whose low
    // bits then mean XNACK and trap handler): ROCm dropped them long ago and comgr refuses
    // them, so their target stays unknown.
    let processor = (abi_version >= 1)
        .then(|| mach_name(mach).and_then(Processor::parse))
        .flatten();
    let target = processor.map(|p| {
        let (sramecc, xnack) = features(&p, abi_version, e_flags);
        TargetId {
            processor: p,
            sramecc,
            xnack,
        }
    });
    // v6 (EI_ABIVERSION 4) introduced the generic version field; it means something only for
    // generic processors (where 0 is invalid and loads nowhere).
    let generic = target.as_ref().is_some_and(TargetId::is_generic);
    let generic_version =
        (abi_version >= 4 && generic).then_some((e_flags >> EF_AMDGPU_GENERIC_VERSION_SHIFT) as u8);
    Ok(Some(CodeObjectHeader {
        os_abi,
        version,
        elf_type: u16_at(data, 16),
        e_flags,
        mach,
        target,
        generic_version,
    }))
}

/// The feature settings that `e_flags` encode, by code-object version.
fn features(p: &Processor, abi_version: u8, flags: u32) -> (FeatureSetting, FeatureSetting) {
    let bit = |supported: bool, set: bool| match (supported, set) {
        (false, _) => FeatureSetting::Unsupported,
        (true, true) => FeatureSetting::On,
        (true, false) => FeatureSetting::Off,
    };
    match abi_version {
        // v3: a bit per feature, clear meaning off.
        1 => (
            bit(
                p.supports_sramecc(),
                flags & EF_AMDGPU_FEATURE_SRAMECC_V3 != 0,
            ),
            bit(p.supports_xnack(), flags & EF_AMDGPU_FEATURE_XNACK_V3 != 0),
        ),
        // v4 and later: two bits per feature (unsupported, any, off, on).
        _ => {
            let two = |v: u32| match v {
                1 => FeatureSetting::Any,
                2 => FeatureSetting::Off,
                3 => FeatureSetting::On,
                _ => FeatureSetting::Unsupported,
            };
            (
                two((flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10),
                two((flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
            )
        }
    }
}

/// A byte range of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Start, bytes from the start of the data.
    pub offset: u64,
    /// Length in bytes.
    pub size: u64,
}

/// Where a host ELF file keeps its offload bundles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostSections {
    /// The `.hip_fatbin` section.
    HipFatbin(Range),
    /// No `.hip_fatbin`: the allocated, non-executable sections with data, which may embed
    /// bundles some other way.
    Data(Vec<Range>),
}

/// Finds the `.hip_fatbin` section of a host ELF file (any class and byte order), or lists
/// the sections to search for embedded bundles. Reads only the ELF header, the section header
/// table and the section name table.
pub fn host_sections(data: &[u8]) -> Result<HostSections, ParseError> {
    if data.len() > 4 && data[4] == 1 {
        sections_of::<elf::FileHeader32<Endianness>>(data)
    } else {
        sections_of::<elf::FileHeader64<Endianness>>(data)
    }
}

fn sections_of<H: FileHeader<Endian = Endianness>>(
    data: &[u8],
) -> Result<HostSections, ParseError> {
    let bad = |e: object::read::Error| ParseError::at(0, Malformed::BadElf(e.to_string()));
    let header = H::parse(data).map_err(bad)?;
    let endian = header.endian().map_err(bad)?;
    let sections = header.sections(endian, data).map_err(bad)?;
    let range = |s: &H::SectionHeader| {
        s.file_range(endian)
            .map(|(offset, size)| Range { offset, size })
    };
    if let Some((_, s)) = sections.section_by_name(endian, HIP_FATBIN_SECTION) {
        let r = range(s).unwrap_or(Range { offset: 0, size: 0 });
        return Ok(HostSections::HipFatbin(r));
    }
    let data_sections = sections
        .iter()
        .filter(|s| {
            let flags = s.sh_flags(endian);
            flags.contains(elf::SHF_ALLOC) && !flags.contains(elf::SHF_EXECINSTR)
        })
        .filter_map(range)
        .filter(|r| r.size > 0)
        .collect();
    Ok(HostSections::Data(data_sections))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(os_abi: u8, abi: u8, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[7] = os_abi;
        h[8] = abi;
        h[16..18].copy_from_slice(&3u16.to_le_bytes());
        h[18..20].copy_from_slice(&EM_AMDGPU.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h
    }

    fn target(abi: u8, flags: u32) -> String {
        code_object_header(&header(64, abi, flags))
            .unwrap()
            .unwrap()
            .target
            .unwrap()
            .to_string()
    }

    #[test]
    fn features_per_code_object_version() {
        // v5: gfx90a, xnack off, sramecc any.
        assert_eq!(target(3, 0x3f | 0x200 | 0x400), "gfx90a:xnack-");
        assert_eq!(target(3, 0x3f | 0x300 | 0xc00), "gfx90a:sramecc+:xnack+");
        assert_eq!(target(2, 0x3f | 0x100 | 0x400), "gfx90a");
        assert_eq!(target(2, 0x36), "gfx1030");
        // v3: bits clear mean off.
        assert_eq!(target(1, 0x2f), "gfx906:sramecc-:xnack-");
        assert_eq!(target(1, 0x2f | 0x100), "gfx906:sramecc-:xnack+");
        assert_eq!(target(1, 0x36), "gfx1030");
        // v2: the target is in a note, not in e_flags.
        let v2 = code_object_header(&header(64, 0, 0x2c | 0x01))
            .unwrap()
            .unwrap();
        assert_eq!((v2.version, v2.target), (Some(2), None));
    }

    #[test]
    fn generic_version_and_machs() {
        let h = code_object_header(&header(64, 4, 0x0100_0000 | 0x54))
            .unwrap()
            .unwrap();
        assert_eq!(h.target.unwrap().to_string(), "gfx11-generic");
        assert_eq!(h.generic_version, Some(1));
        assert_eq!(h.version, Some(6));
        assert_eq!(mach_name(0x5f), Some("gfx9-4-generic"));
        assert_eq!(mach_name(0x4c), Some("gfx942"));
        assert_eq!(mach_name(0x27), None);
        // Every named processor parses.
        for (_, name) in MACHS {
            assert!(Processor::parse(name).is_some(), "{name}");
        }
    }

    #[test]
    fn non_amdgpu_and_short_headers() {
        let mut x86 = header(0, 0, 0);
        x86[18..20].copy_from_slice(&62u16.to_le_bytes());
        assert_eq!(code_object_header(&x86).unwrap(), None);
        assert!(code_object_header(&header(64, 3, 0x3f)[..40]).is_err());
        assert!(code_object_header(b"not an elf").is_err());
        // An unknown mach is a header without a target, not an error.
        let h = code_object_header(&header(64, 3, 0x27)).unwrap().unwrap();
        assert_eq!(h.target, None);
    }
}
