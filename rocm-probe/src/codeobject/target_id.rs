//! Target IDs of code objects (`gfx90a:xnack-`, `gfx9-generic`), the generic processors and
//! the processors each one covers.
//!
//! Sources: LLVM AMDGPUUsage "Target ID", "AMDGPU Generic Processors" and "ELF Header"; ROCr
//! `isa.cpp` (the ISA table with each processor's generic family and the minimum generic
//! version it needs).

use std::fmt;

use serde::{Serialize, Serializer};

use crate::msg;
use crate::target::GfxVersion;

/// How a code object was built for one target feature (`xnack` or `sramecc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureSetting {
    /// The feature is not named in the target ID: the code runs with it on or off.
    Any,
    /// `+`: the code runs only with the feature on.
    On,
    /// `-`: the code runs only with the feature off.
    Off,
    /// The processor has no such feature (code-object v4+ e_flags say so explicitly).
    Unsupported,
}

impl FeatureSetting {
    /// Whether code built this way runs on a GPU whose feature is `gpu` (`None`: the GPU's
    /// processor has no such feature). ROCr `Isa::IsCompatible`: a code object that names
    /// the feature (on or off) needs the GPU's setting to equal it; any and unsupported match
    /// everything.
    pub fn accepts(self, gpu: Option<bool>) -> bool {
        match self {
            Self::Any | Self::Unsupported => true,
            Self::On => gpu == Some(true),
            Self::Off => gpu == Some(false),
        }
    }

    fn suffix(self) -> Option<char> {
        match self {
            Self::On => Some('+'),
            Self::Off => Some('-'),
            Self::Any | Self::Unsupported => None,
        }
    }
}

/// A generic processor: code for it runs on every processor of its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generic {
    /// Its name, e.g. `gfx9-generic`.
    pub name: &'static str,
    /// `EF_AMDGPU_MACH` value.
    pub mach: u32,
    /// The processors it covers, each with the lowest generic version that runs on it.
    pub members: &'static [(&'static str, u8)],
    /// Whether it has the `sramecc` feature.
    pub sramecc: bool,
    /// Whether it has the `xnack` feature.
    pub xnack: bool,
}

/// The generic processors that ROCr knows, with their members. Every member joined its family
/// in generic version 1 (ROCr's ISA table: "minimum generic code object version" is 1 for all
/// of them); the version is kept per member so that a later addition can raise it.
/// gfx908 and gfx90a belong to no family.
pub const GENERICS: &[Generic] = &[
    Generic {
        name: "gfx9-generic",
        mach: 0x51,
        members: &[
            ("gfx900", 1),
            ("gfx902", 1),
            ("gfx904", 1),
            ("gfx906", 1),
            ("gfx909", 1),
            ("gfx90c", 1),
        ],
        // gfx906 has sramecc, but the generic target does not.
        sramecc: false,
        xnack: true,
    },
    Generic {
        name: "gfx9-4-generic",
        mach: 0x5f,
        members: &[("gfx940", 1), ("gfx941", 1), ("gfx942", 1), ("gfx950", 1)],
        sramecc: true,
        xnack: true,
    },
    Generic {
        name: "gfx10-1-generic",
        mach: 0x52,
        members: &[
            ("gfx1010", 1),
            ("gfx1011", 1),
            ("gfx1012", 1),
            ("gfx1013", 1),
        ],
        sramecc: false,
        xnack: true,
    },
    Generic {
        name: "gfx10-3-generic",
        mach: 0x53,
        members: &[
            ("gfx1030", 1),
            ("gfx1031", 1),
            ("gfx1032", 1),
            ("gfx1033", 1),
            ("gfx1034", 1),
            ("gfx1035", 1),
            ("gfx1036", 1),
        ],
        sramecc: false,
        xnack: false,
    },
    Generic {
        name: "gfx11-generic",
        mach: 0x54,
        members: &[
            ("gfx1100", 1),
            ("gfx1101", 1),
            ("gfx1102", 1),
            ("gfx1103", 1),
            ("gfx1150", 1),
            ("gfx1151", 1),
            ("gfx1152", 1),
            ("gfx1153", 1),
        ],
        sramecc: false,
        xnack: false,
    },
    Generic {
        name: "gfx12-generic",
        mach: 0x59,
        members: &[("gfx1200", 1), ("gfx1201", 1)],
        sramecc: false,
        xnack: false,
    },
];

/// The generic processor named `name`, if ROCr knows it.
pub fn generic(name: &str) -> Option<&'static Generic> {
    GENERICS.iter().find(|g| g.name == name)
}

/// The generic family of a processor, with the lowest generic version that runs on it.
pub fn family_of(processor: GfxVersion) -> Option<(&'static Generic, u8)> {
    let name = processor.name();
    GENERICS.iter().find_map(|g| {
        g.members
            .iter()
            .find(|(m, _)| *m == name)
            .map(|(_, min)| (g, *min))
    })
}

/// The processor part of a target ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Processor {
    /// A real processor such as `gfx90a`.
    Gfx(GfxVersion),
    /// A generic processor such as `gfx11-generic` (known to ROCr or not).
    Generic(String),
}

impl Processor {
    /// Parses `gfx90a`, `gfx1100` or `gfx11-generic`.
    pub fn parse(name: &str) -> Option<Self> {
        if name.ends_with("-generic") && name.starts_with("gfx") {
            let family = &name[3..name.len() - "-generic".len()];
            let ok = !family.is_empty()
                && family
                    .split('-')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            return ok.then(|| Self::Generic(name.to_owned()));
        }
        let version = GfxVersion::from_name(name)?;
        // Only the canonical spelling (`gfx90a`, not `gfx090a` or `gfx90A`).
        (version.name() == name).then_some(Self::Gfx(version))
    }

    /// Whether the processor has the `sramecc` feature.
    pub fn supports_sramecc(&self) -> bool {
        match self {
            Self::Gfx(g) => g.supports_sramecc(),
            Self::Generic(name) => generic(name).is_some_and(|g| g.sramecc),
        }
    }

    /// Whether the processor has the `xnack` feature.
    pub fn supports_xnack(&self) -> bool {
        match self {
            Self::Gfx(g) => g.supports_xnack(),
            Self::Generic(name) => generic(name).is_some_and(|g| g.xnack),
        }
    }
}

impl fmt::Display for Processor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gfx(g) => write!(f, "{g}"),
            Self::Generic(name) => f.write_str(name),
        }
    }
}

/// A target ID: a processor and the setting of each of its features.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TargetId {
    /// The processor.
    pub processor: Processor,
    /// `sramecc`.
    pub sramecc: FeatureSetting,
    /// `xnack`.
    pub xnack: FeatureSetting,
}

/// Why a string is not a target ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetIdError {
    /// The string as given.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for TargetIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&msg!(
            "codeobject-error.target.not-a-target-id",
            input = format!("{:?}", self.input),
            reason = &self.reason
        ))
    }
}

impl std::error::Error for TargetIdError {}

impl TargetId {
    /// Parses `<processor>(:<feature>(+|-))*` (LLVM's grammar). Features may come in any
    /// order but at most once each, and only those the processor has; unknown features are
    /// refused, since ROCr would not know what they mean either.
    pub fn parse(input: &str) -> Result<Self, TargetIdError> {
        let err = |reason: String| TargetIdError {
            input: input.to_owned(),
            reason,
        };
        let mut parts = input.split(':');
        let name = parts.next().unwrap_or_default();
        let processor = Processor::parse(name).ok_or_else(|| {
            err(msg!(
                "codeobject-error.target.unknown-processor",
                name = format!("{name:?}")
            ))
        })?;
        let mut id = Self {
            processor,
            sramecc: FeatureSetting::Any,
            xnack: FeatureSetting::Any,
        };
        for feature in parts {
            let (name, setting) = match feature.as_bytes().last() {
                Some(b'+') => (&feature[..feature.len() - 1], FeatureSetting::On),
                Some(b'-') => (&feature[..feature.len() - 1], FeatureSetting::Off),
                _ => {
                    return Err(err(msg!(
                        "codeobject-error.target.no-sign",
                        feature = format!("{feature:?}")
                    )));
                }
            };
            let (slot, supported) = match name {
                "sramecc" => (&mut id.sramecc, id.processor.supports_sramecc()),
                "xnack" => (&mut id.xnack, id.processor.supports_xnack()),
                _ => {
                    return Err(err(msg!(
                        "codeobject-error.target.unknown-feature",
                        name = format!("{name:?}")
                    )));
                }
            };
            if !supported {
                return Err(err(msg!(
                    "codeobject-error.target.feature-unsupported",
                    processor = id.processor,
                    name
                )));
            }
            if *slot != FeatureSetting::Any {
                return Err(err(msg!("codeobject-error.target.given-twice", name)));
            }
            *slot = setting;
        }
        Ok(id)
    }

    /// Whether the processor is a generic one.
    pub fn is_generic(&self) -> bool {
        matches!(self.processor, Processor::Generic(_))
    }
}

impl fmt::Display for TargetId {
    /// The canonical spelling: features in alphabetical order (`sramecc` before `xnack`), a
    /// feature left out when it is any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.processor)?;
        if let Some(c) = self.sramecc.suffix() {
            write!(f, ":sramecc{c}")?;
        }
        if let Some(c) = self.xnack.suffix() {
            write!(f, ":xnack{c}")?;
        }
        Ok(())
    }
}

impl Serialize for TargetId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_canonically() {
        for (input, canonical) in [
            ("gfx90a", "gfx90a"),
            ("gfx90a:xnack-", "gfx90a:xnack-"),
            ("gfx90a:xnack+:sramecc-", "gfx90a:sramecc-:xnack+"),
            ("gfx1100", "gfx1100"),
            (
                "gfx9-4-generic:sramecc+:xnack-",
                "gfx9-4-generic:sramecc+:xnack-",
            ),
            ("gfx10-3-generic", "gfx10-3-generic"),
            ("gfx13-generic", "gfx13-generic"),
        ] {
            assert_eq!(TargetId::parse(input).unwrap().to_string(), canonical);
        }
        assert!(TargetId::parse("gfx9-4-generic").unwrap().is_generic());
    }

    #[test]
    fn refuses_what_llvm_refuses() {
        for bad in [
            "",
            "gfx",
            "sm_80",
            "gfx90a:xnack",
            "gfx90a:xnack+:xnack-",
            "gfx1030:xnack+",
            "gfx10-3-generic:xnack-",
            "gfx90a:tgsplit+",
            "gfx090a",
            "gfx-generic",
            "gfxa-generic",
        ] {
            assert!(TargetId::parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn settings_accept_per_rocr() {
        use FeatureSetting::*;
        assert!(Any.accepts(Some(true)) && Any.accepts(Some(false)) && Any.accepts(None));
        assert!(Unsupported.accepts(Some(true)));
        assert!(On.accepts(Some(true)) && !On.accepts(Some(false)) && !On.accepts(None));
        assert!(Off.accepts(Some(false)) && !Off.accepts(Some(true)) && !Off.accepts(None));
    }

    #[test]
    fn families() {
        let g = |n| GfxVersion::from_name(n).unwrap();
        assert_eq!(family_of(g("gfx906")).unwrap().0.name, "gfx9-generic");
        assert_eq!(family_of(g("gfx950")).unwrap().0.name, "gfx9-4-generic");
        assert_eq!(family_of(g("gfx1013")).unwrap().0.name, "gfx10-1-generic");
        assert_eq!(family_of(g("gfx1036")).unwrap().0.name, "gfx10-3-generic");
        assert_eq!(family_of(g("gfx1151")).unwrap().0.name, "gfx11-generic");
        assert_eq!(family_of(g("gfx1201")).unwrap().0.name, "gfx12-generic");
        assert!(family_of(g("gfx908")).is_none());
        assert!(family_of(g("gfx90a")).is_none());
        assert!(family_of(g("gfx803")).is_none());
        // Every member is a processor name the rest of the crate understands.
        for family in GENERICS {
            for (m, min) in family.members {
                assert!(GfxVersion::from_name(m).is_some(), "{m}");
                assert!(*min >= 1);
            }
        }
    }
}
