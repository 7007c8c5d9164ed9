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
