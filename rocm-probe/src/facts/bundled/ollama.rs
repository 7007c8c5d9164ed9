//! An ollama installation directory (`lib/ollama`) and the runner directories it holds.
//!
//! ollama's Linux packages are split: `ollama-linux-amd64` carries the CPU part (`libggml-base.so`
//! and the `libggml-cpu-*.so` variants in `lib/ollama`) and the CUDA and Vulkan runners; the ROCm
//! runner (`lib/ollama/rocm`, `rocm_v7_2` since 2026-05) comes only in `ollama-linux-amd64-rocm`
//! (ollama `scripts/build_linux.sh`: the main archive is tarred `--exclude rocm`), which
//! `docs/linux.mdx` says to extract as well for an AMD GPU and `scripts/install.sh` fetches only
//! when `lspci` or `lshw` shows one. Arch splits the same way (`ollama`, `ollama-rocm`,
//! `ollama-cuda`, `ollama-vulkan`). Without the ROCm runner ollama never loads HIP.

use serde::Serialize;

/// The CPU part of ollama's main package: its presence says the directory is an ollama install
/// of the layout whose runners are subdirectories (ollama's CMakeLists.txt since 0.5.8,
/// llama/server/CMakeLists.txt since 2026-05).
pub const GGML_BASE: &str = "libggml-base.so";

/// The prefixes of ollama's runner directories (`cuda_v12`, `cuda_v13`, `cuda_jetpack6`,
/// `rocm`, `rocm_v7_2`, `vulkan`, `mlx_cuda_v13`).
const RUNNER_PREFIXES: [&str; 4] = ["cuda", "rocm", "vulkan", "mlx"];

/// Whether a name in `lib/ollama` is a ROCm runner directory (`rocm`, `rocm_v<major>_<minor>`).
pub fn is_rocm_runner(name: &str) -> bool {
    name == "rocm" || name.starts_with("rocm_v")
}

/// One `lib/ollama` directory of ollama's current layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OllamaDir {
    /// The directory (`/usr/local/lib/ollama`).
    pub dir: String,
    /// Its runner directories, sorted.
    pub runners: Vec<String>,
}

impl OllamaDir {
    /// The directory from its listing, when it is an ollama install of the current layout.
    pub fn read(dir: &str, names: &[String]) -> Option<Self> {
        if !names
            .iter()
            .any(|n| n == GGML_BASE || n.starts_with(&format!("{GGML_BASE}.")))
        {
            return None;
        }
        let mut runners: Vec<String> = names
            .iter()
            .filter(|n| RUNNER_PREFIXES.iter().any(|p| n.starts_with(p)))
            .filter(|n| !n.contains(".so"))
            .cloned()
            .collect();
        runners.sort();
        Some(Self {
            dir: dir.to_owned(),
            runners,
        })
    }

    /// Whether a ROCm runner directory is here.
    pub fn has_rocm(&self) -> bool {
        self.runners.iter().any(|n| is_rocm_runner(n))
    }

    /// Whether a Vulkan runner directory is here: ollama reaches an AMD GPU through it too
    /// (by default since 0.30, with `OLLAMA_VULKAN=1` before).
    pub fn has_vulkan(&self) -> bool {
        self.runners.iter().any(|n| n.starts_with("vulkan"))
    }

    /// The prefix the packages are extracted into (`/usr/local` for `/usr/local/lib/ollama`).
    pub fn prefix(&self) -> &str {
        self.dir
            .strip_suffix("/lib/ollama")
            .filter(|p| !p.is_empty())
            .unwrap_or("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_main_package_without_rocm_is_told_apart() {
        let d = OllamaDir::read(
            "/usr/local/lib/ollama",
            &names(&[
                "cuda_v13",
                "libggml-base.so",
                "cuda_v12",
                "libggml-cpu-haswell.so",
                "libllama.so",
            ]),
        )
        .unwrap();
        assert_eq!(d.runners, ["cuda_v12", "cuda_v13"]);
        assert!(!d.has_rocm() && !d.has_vulkan());
        assert_eq!(d.prefix(), "/usr/local");
        let with = OllamaDir::read(
            "/usr/lib/ollama",
            &names(&["libggml-base.so.0", "rocm_v7_2", "vulkan"]),
        )
        .unwrap();
        assert!(with.has_rocm() && with.has_vulkan());
        assert_eq!(with.prefix(), "/usr");
    }

    #[test]
    fn other_layouts_are_not_judged() {
        // ollama before 0.5.8 kept its runners under `runners/`.
        assert_eq!(
            OllamaDir::read("/usr/lib/ollama", &names(&["runners", "rocm"])),
            None
        );
        assert_eq!(OllamaDir::read("/usr/lib/ollama", &[]), None);
    }
}
