//! Layer 7: an ollama installed without its ROCm runner ([`OllamaDir`]). ollama's Linux download
//! is split, and its ROCm runner is a separate package (`ollama-linux-amd64-rocm`; Arch's
//! `ollama-rocm`): with only the main one extracted, ollama finds no HIP backend and runs models
//! on the CPU (ollama/ollama#14927: 0.20.6 on a Radeon AI PRO R9700, `lib/ollama` holding
//! `cuda_v12`, `cuda_v13` and the CPU variants). A Vulkan runner still reaches the GPU, so with one
//! the finding is information.

use crate::facts::Facts;
use crate::facts::bundled::ollama::OllamaDir;
use crate::facts::os_release::Distro;
use crate::finding::{
    Action, Evidence, Finding, OLLAMA_NO_ROCM_RUNNER, RemedyStep, Status, Subject,
};
use crate::{i18n, msg};

/// Where Arch's `ollama` package puts its files; `ollama-rocm` adds the runner there (Arch's
/// `extra/ollama` PKGBUILD: `package_ollama` removes `usr/lib/ollama/rocm*`, `package_ollama-rocm`
/// installs it).
const ARCH_DIR: &str = "/usr/lib/ollama";

/// The findings about every ollama directory without a ROCm runner, on a machine with AMD GPUs.
pub(super) fn check(f: &Facts, out: &mut Vec<Finding>) {
    let Some(gpus) = super::gpu_summary(f) else {
        return;
    };
    let distro = f.os_release.as_ref().and_then(|o| o.distro);
    for dir in f.bundled.ollama.iter().filter(|d| !d.has_rocm()) {
        out.push(finding(dir, distro, gpus.clone()));
    }
}

/// The finding about `dir` on a machine of the family `distro` (from os-release).
fn finding(dir: &OllamaDir, distro: Option<Distro>, gpus: Evidence) -> Finding {
    let runners = if dir.runners.is_empty() {
        msg!("frameworks.ollama-runners-none")
    } else {
        i18n::list(&dir.runners)
    };
    let finding = if dir.has_vulkan() {
        OLLAMA_NO_ROCM_RUNNER.finding_with(
            Status::Info,
            msg!("frameworks.ollama-no-rocm-runner-vulkan", dir = dir.dir),
        )
    } else {
        OLLAMA_NO_ROCM_RUNNER.finding(msg!("frameworks.ollama-no-rocm-runner", dir = dir.dir))
    };
    let arch = dir.dir == ARCH_DIR && distro == Some(Distro::Arch);
    let prefix = dir.prefix();
    let step = if arch {
        RemedyStep::run(
            Action::Install,
            "ollama-rocm",
            Distro::Arch.install("ollama-rocm"),
            msg!("frameworks.ollama-step-arch"),
        )
        .on(Distro::Arch)
    } else {
        // The command of ollama's docs/linux.mdx ("AMD GPU install"), into this prefix.
        RemedyStep::run(
            Action::Install,
            "ollama-linux-amd64-rocm",
            format!(
                "curl -fsSL https://ollama.com/download/ollama-linux-amd64-rocm.tar.zst | sudo tar x -C {prefix}"
            ),
            msg!("frameworks.ollama-step-extract", prefix),
        )
    };
    let remedy = if arch {
        msg!("frameworks.ollama-no-rocm-runner-remedy-arch")
    } else {
        msg!("frameworks.ollama-no-rocm-runner-remedy", prefix)
    };
    finding
        .with(Evidence::new(
            dir.dir.clone(),
            msg!("frameworks.ollama-runners", runners),
        ))
        .with(gpus)
        .remedy(remedy)
        .step(step)
        .about(Subject::framework("ollama", &dir.dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(path: &str, runners: &[&str]) -> OllamaDir {
        OllamaDir {
            dir: path.to_owned(),
            runners: runners.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn gpus() -> Evidence {
        Evidence::new("/sys/class/kfd/kfd/topology", "1 GPU agent(s): gfx1201")
    }

    #[test]
    fn the_official_package_gets_the_documented_extraction_into_its_prefix() {
        let f = finding(
            &dir("/usr/local/lib/ollama", &["cuda_v12", "cuda_v13"]),
            Some(Distro::Debian),
            gpus(),
        );
        assert_eq!(f.status, Status::Warn);
        assert_eq!(
            f.remedy_steps[0].command.as_deref(),
            Some(
                "curl -fsSL https://ollama.com/download/ollama-linux-amd64-rocm.tar.zst | sudo tar x -C /usr/local"
            )
        );
        assert_eq!(f.remedy_steps[0].distro, None);
    }

    #[test]
    fn arch_gets_its_package_and_a_vulkan_runner_makes_it_information() {
        let f = finding(&dir(ARCH_DIR, &["vulkan"]), Some(Distro::Arch), gpus());
        assert_eq!(f.status, Status::Info);
        assert_eq!(
            f.remedy_steps[0].command.as_deref(),
            Some("sudo pacman -S ollama-rocm")
        );
        assert_eq!(f.remedy_steps[0].distro, Some(Distro::Arch));
        // The same directory elsewhere is a manual extraction into /usr.
        let f = finding(&dir(ARCH_DIR, &[]), Some(Distro::Fedora), gpus());
        assert_eq!(f.status, Status::Warn);
        assert!(
            f.remedy_steps[0]
                .command
                .as_deref()
                .unwrap()
                .ends_with("| sudo tar x -C /usr")
        );
    }
}
