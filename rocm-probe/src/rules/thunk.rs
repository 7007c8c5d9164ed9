//! Layer 3 (thunk) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    THUNK_RULES;
    THUNK_NOT_CAPTURED = "thunk.not-captured", Thunk, Skip,
        "ROCm installs not captured",
        "The fixture holds neither an `opt` directory nor a system library directory \
         (usr/lib/x86_64-linux-gnu, usr/lib64) nor etc/ld.so.conf, so whether a libhsakmt exists, \
         shared or inside ROCr, cannot be decided. This is not a finding about the machine: the \
         capture left the installs out. Live runs always read /opt and the loader's directories.";
    THUNK_NO_RUNTIME = "thunk.no-runtime", Thunk, Skip,
        "No ROCr install to check the thunk of",
        "libhsakmt is only ever used by ROCr (libhsa-runtime64). No ROCr was found in /opt, in the \
         directories named by ROCM_PATH or LD_LIBRARY_PATH, or in the loader's directories, so \
         there is no thunk to check; runtime.no-rocm (layer 4) says what is missing. A lone \
         libhsakmt.so.1 without ROCr does nothing.";
    THUNK_BUILT_IN = "thunk.built-into-rocr", Thunk, Pass,
        "libhsakmt is linked into ROCr",
        "The thunk (libhsakmt, the library that turns ROCr calls into /dev/kfd ioctls) is part of \
         libhsa-runtime64 itself: AMD's packages link the static libhsakmt.a into ROCr since ROCm \
         4.3 (ROCT-Thunk-Interface commit 88a5e02, \"Build thunk as static by default\", 2021), \
         and since ROCm 6.3 the thunk's sources live in the ROCr project (compatibility matrix: \
         \"As of ROCm 6.3.0, the ROCT Thunk Interface is now included as part of the ROCr runtime \
         package\"). Nothing else needs to be installed, and a separate libhsakmt.so.1 on the \
         system is not used by this ROCr. Detected from the install's version (.info/version, \
         rocm_version.h or the library file names) and where ROCr lives (/opt vs a distribution's \
         library directory); no library is opened.";
    THUNK_SHARED = "thunk.libhsakmt-shared", Thunk, Pass,
        "The shared libhsakmt ROCr needs is present",
        "Distribution builds of ROCr before 6.3 (Debian and Ubuntu's libhsa-runtime64-1 5.x, Fedora \
         before 6.3) and AMD's packages before ROCm 4.3 link libhsakmt dynamically: the process \
         loads libhsakmt.so.1 next to libhsa-runtime64.so.1. It was found in ROCr's directory or \
         on the loader's search path; its file name (libhsakmt.so.1.0.6 for Debian's 5.2.3) is in \
         the evidence. Detected by probing the soname and reading the link's target name.";
    THUNK_MISSING = "thunk.missing", Thunk, Fail,
        "ROCr needs a shared libhsakmt.so.1 that is not there",
        "This ROCr is a build that loads the thunk as a shared library (a distribution's ROCr \
         before 6.3, or AMD's packages before ROCm 4.3), but libhsakmt.so.1 is neither in ROCr's \
         directory nor anywhere on the loader's search path (LD_LIBRARY_PATH, the ld.so.conf \
         directories, the default directories). Every ROCm program then fails before main with \
         `error while loading shared libraries: libhsakmt.so.1: cannot open shared object file: \
         No such file or directory` (rocminfo included; ROCm/rocminfo#35, \
         ROCm/legacy-rocm-build#1284). Install the thunk package of the same release (Debian/Ubuntu \
         libhsakmt1, AMD hsakmt-roct) or repair the install; copying a libhsakmt from another \
         release risks an ABI mismatch.";
}

declare_rules! {
    THUNK_ACTIVE_RULES;
    HSAKMT_ANSWERS = "thunk.hsakmt-answers", Thunk, Pass,
        "libhsakmt opens KFD and lists the same nodes as sysfs (--active)",
        "The active probe loaded the shared libhsakmt a process would load (the loader's search \
         order), called hsaKmtOpenKFD, hsaKmtGetVersion and hsaKmtAcquireSystemProperties, and \
         per node hsaKmtGetNodeProperties, reading only the fields whose offsets are the same in \
         every release (NumCPUCores, NumFComputeCores; ROCm 6.3 changed the struct after them), \
         then compared node count and order with the KFD topology in sysfs. It closes what it \
         opens. hsaKmtAcquireSystemProperties acquires a VM on every GPU, which wakes a \
         runtime-suspended GPU.";
    HSAKMT_FAILED = "thunk.hsakmt-failed", Thunk, Fail,
        "libhsakmt could not open KFD or read the system (--active)",
        "hsaKmtOpenKFD or hsaKmtAcquireSystemProperties returned an error status, named with its \
         meaning: KERNEL_IO_CHANNEL_NOT_OPENED (20) means /dev/kfd could not be opened (no KFD, \
         or no permission: see layer 2), DRIVER_MISMATCH (2) a KFD interface major other than \
         1, KERNEL_COMMUNICATION_ERROR (21) an ioctl failed. Every ROCr built on this thunk \
         fails the same way.";
    HSAKMT_NOT_INSTALLED = "thunk.hsakmt-not-installed", Thunk, Info,
        "No shared libhsakmt to load (--active)",
        "There is no libhsakmt.so.1 in the loader's search path (or the path given with \
         --hsakmt-lib does not exist), and no ROCr install with the thunk built in was found. \
         AMD's packages have not shipped a shared libhsakmt since ROCm 4.3 (it is linked into \
         ROCr), so this is information: layer 4's ROCr probe proves the thunk.";
    HSAKMT_LOAD_FAILED = "thunk.hsakmt-load-failed", Thunk, Warn,
        "libhsakmt exists but could not be loaded (--active)",
        "The file is there but the dynamic loader refused it (a missing dependency such as \
         libnuma.so.1 or libdrm_amdgpu.so.1, a wrong architecture, a truncated file); the \
         loader's message is shown. A ROCr that uses this shared thunk cannot start either.";
    HSAKMT_NODE_MISMATCH = "thunk.hsakmt-node-mismatch", Thunk, Warn,
        "libhsakmt lists other nodes than sysfs (--active)",
        "hsaKmtAcquireSystemProperties reported a different number of nodes than the KFD \
         topology, or a node's CPU-core or SIMD count differs at the same position. libhsakmt \
         skips a GPU whose render node is absent (ENOENT: a container given /dev/kfd but not \
         that /dev/dri node) or refused by a device cgroup (EPERM) — a plain permission error \
         (EACCES) makes hsaKmtAcquireSystemProperties fail instead, thunk.hsakmt-failed — and \
         newer releases also drop GPUs filtered by ROCR_VISIBLE_DEVICES; ROCr and HIP then \
         number the remaining GPUs differently from sysfs. The evidence lists both views.";
}
