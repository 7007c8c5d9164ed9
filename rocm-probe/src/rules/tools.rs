//! Layer 8 (tools) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    TOOLS_RULES;
    TOOLS_NOT_CAPTURED = "tools.not-captured", Tools, Skip,
        "Neither PATH nor the ROCm installs captured: tool checks skipped",
        "The fixture has no PATH in its [env] and holds neither an `opt` directory nor a system \
         library directory nor etc/ld.so.conf, so there is nowhere to look for rocprofv3, \
         rocprof-compute, rocprof-sys, rocgdb, amd-smi, rocminfo or rocm-smi. Live runs always \
         look: in every PATH directory, each install's bin and /usr/bin.";
    TOOLS_NONE = "tools.none", Tools, Info,
        "No ROCm tool found",
        "None of rocprofv3, rocprof-compute, rocprof-sys-*, rocgdb, amd-smi, rocminfo, rocm-smi, \
         rocprof, rocprofv2, omniperf or omnitrace-* exists in a PATH directory, an install's \
         bin or /usr/bin. Running GPU code needs none of them, so this is information only: \
         they are what you profile (rocprofv3, rocprof-compute, rocprof-sys), debug (rocgdb) \
         and monitor (amd-smi, rocm-smi, rocminfo) with. AMD's packages install them under \
         /opt/rocm-X.Y.Z/bin, which is not on PATH unless you add it (AMD's post-install \
         instructions do); Debian and Ubuntu package rocminfo and rocm-smi. The probe checks \
         existence only and never runs a tool.";
    TOOLS_FOUND = "tools.found", Tools, Pass,
        "The ROCm tools found, with their installs and versions",
        "Lists every tool command found, grouped by where it comes from: the install whose \
         prefix holds it or its symlink target (with that install's ROCm release), or the \
         directory it is in. A tool's own version is read from the file its package installs: \
         libexec/rocprofiler-compute/VERSION (rocprof-compute, ROCm >= 6.3), \
         libexec/omniperf/VERSION (omniperf, ROCm 6.2), libexec/amdsmi_cli/_version.py \
         (amd-smi), the modulefile under share/modulefiles/rocprofiler-systems or \
         share/modulefiles/omnitrace (rocprof-sys, omnitrace) — the install layouts of the \
         CMakeLists.txt of github.com/ROCm/rocprofiler-compute, ROCm/amdsmi, \
         ROCm/rocprofiler-systems and ROCm/omnitrace. Other tools carry their install's \
         release only; a version no file gives is left out, never guessed. With -v the evidence \
         lists each command, its symlink, and whether it is the one PATH runs.";
    TOOLS_RENAMED_PROFILER = "tools.renamed-profiler", Tools, Info,
        "A profiler under its name from before ROCm 6.3 (omniperf, omnitrace)",
        "ROCm 6.3 renamed two profilers: Omniperf became ROCm Compute Profiler (package \
         rocprofiler-compute, command rocprof-compute, version 3.0.0) and Omnitrace became ROCm \
         Systems Profiler (package rocprofiler-systems, commands rocprof-sys-run, \
         rocprof-sys-instrument, rocprof-sys-sample, rocprof-sys-avail, rocprof-sys-causal; \
         configuration variables OMNITRACE_* became ROCPROFSYS_*). So `apt install omniperf` \
         finds nothing from 6.3 on, guides written for 6.3 and later say rocprof-compute where \
         a 6.2 install has omniperf, and upgrading 6.2 to 6.3.0 left the old \
         /opt/rocm-6.2.x/.../omniperf and omnitrace files behind (AMD's known issues \
         github.com/ROCm/legacy-rocm-build/issues/4082 and /4083, fixed in 6.3.1; \
         rocprofiler-compute's CMakeLists.txt at tags rocm-6.2.0 and rocm-6.3.0). The finding \
         names each old command with its new name and says whether the new tool is installed \
         too. It is information, not a warning: the old command still works with the install \
         it came with; what goes wrong is a user looking for the other name (or, with both, \
         running the older one). Use the new name on ROCm >= 6.3 and remove a left-over \
         package (sudo apt remove omniperf omnitrace).";
    TOOLS_DEPRECATED_PROFILER = "tools.deprecated-profiler", Tools, Info,
        "Only the legacy profilers (rocprof, rocprofv2) are installed, not rocprofv3",
        "rocprof (ROCProfiler v1) and rocprofv2 are being phased out in favour of rocprofv3, \
         the command-line tool of ROCprofiler-SDK, which ships from ROCm 6.2 (rocprofiler-sdk \
         0.4.0, tag rocm-6.2.0 of github.com/ROCm/rocprofiler-sdk). AMD's ROCProfiler \
         documentation for ROCm 6.3 says development and support for roctracer, rocprofiler, \
         rocprof and rocprofv2 are phasing out in favour of rocprofiler-sdk and rocprofv3, with \
         only critical defect fixes (rocm.docs.amd.com/projects/rocprofiler/en/docs-6.3.2/); \
         its current \
         page calls them deprecated with end of support expected by the end of 2026 Q2 \
         (rocm.docs.amd.com/projects/rocprofiler/). Reported when rocprof or rocprofv2 is \
         found and rocprofv3 is not: on ROCm >= 6.2 install rocprofiler-sdk; older releases \
         have no rocprofv3.";
    TOOLS_ROCM_SMI_WITHOUT_AMD_SMI = "tools.rocm-smi-without-amd-smi", Tools, Info,
        "rocm-smi is installed but not its successor amd-smi",
        "AMD SMI (amd-smi, package amd-smi-lib) is the successor of ROCm SMI: AMD's ROCm SMI \
         documentation says the ROCm SMI library is planned to be deprecated and recommends \
         migrating to AMD SMI, which will replace it over time \
         (rocm.docs.amd.com/projects/rocm_smi_lib/en/docs-6.3.3/install/install.html and \
         rocm.docs.amd.com/projects/rocm_smi_lib/). rocm-smi keeps working for monitoring, \
         so this is information only: new scripts and monitoring (partitions, metrics, \
         process lists) are better written against amd-smi. Debian 12 packages rocm-smi and no \
         amd-smi; AMD's repositories have both.";
    TOOLS_VERSION_MISMATCH = "tools.version-mismatch", Tools, Info,
        "A tool on PATH comes from another install than the runtime a process loads",
        "The command PATH runs (its first PATH directory holding it) belongs to one ROCm \
         install, while a process loads ROCr from another (the install of runtime.installs-found: \
         the one libhsa-runtime64.so.1 is loaded from, else the one /opt/rocm names). A \
         profiler or debugger works inside the runtime of the process it runs, so rocprofv3 or \
         rocgdb of one release attached to the ROCr of another is a combination no release was \
         tested with, and rocminfo or amd-smi report what their own release knows (an older \
         one may not know a newer GPU). Usually an old \
         /opt/rocm-X/bin or /usr/bin (a distribution's rocminfo) earlier in PATH than the \
         install in use. Put the bin directory of the install in use first in PATH, or remove \
         the other install.";
    TOOLS_FILES_UNREADABLE = "tools.files-unreadable", Tools, Skip,
        "A tool's link or version file could not be read",
        "A symlink of a tool command, a VERSION or _version.py file, or a modulefile directory \
         exists but could not be read (permission denied, not a regular file, a symlink loop). \
         The tool is still listed; what the file would have told (its target, its version) is \
         unknown. The evidence names each path and the error.";
    TOOLS_FILES_MALFORMED = "tools.files-malformed", Tools, Warn,
        "A tool's version file holds no version",
        "A VERSION file whose first line is not a version, binary content, or an amd-smi \
         _version.py without a `__version__ = \"…\"` line: the tool's version is unknown (never \
         guessed). A warning about the input, like every layer's malformed-file finding: the tool \
         itself may work, but a file that is not what its package installed means an \
         interrupted install, a disk problem or a hand edit. Reinstall the tool's package.";
}
