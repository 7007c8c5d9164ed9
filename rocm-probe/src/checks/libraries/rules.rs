//! Layer 5 (libraries) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::finding::declare_rules;

declare_rules! {
    LIBRARIES_RULES;
    LIBRARIES_NOT_CAPTURED = "libraries.not-captured", Libraries, Skip;
    ROCBLAS_NO_KERNELS_FOR_TARGET = "libraries.rocblas-no-kernels-for-target", Libraries, Fail;
    HIPBLASLT_NO_KERNELS_FOR_TARGET = "libraries.hipblaslt-no-kernels-for-target", Libraries, Warn;
    MIOPEN_NO_KDB_FOR_TARGET = "libraries.miopen-no-kdb-for-target", Libraries, Info;
    HIP_WRAPPER_WITHOUT_BACKEND = "libraries.hip-wrapper-without-backend", Libraries, Fail;
    NO_CODE_OBJECT_FOR_TARGET = "libraries.no-code-object-for-target", Libraries, Fail;
    CODE_OBJECT_NEEDS_FEATURE_CHANGE = "libraries.code-object-needs-feature-change", Libraries, Fail;
    LIBRARY_FILES_UNREADABLE = "libraries.files-unreadable", Libraries, Skip;
    LIBRARY_FILES_MALFORMED = "libraries.files-malformed", Libraries, Warn;
    COVERAGE = "libraries.coverage", Libraries, Pass;
    MIOPEN_DB_LOCATION = "libraries.miopen-db-location", Libraries, Warn;
    AMDSMI_PYTHON_MISMATCH = "libraries.amdsmi-python-mismatch", Libraries, Warn;
    ENV_SETTING = "libraries.env-setting", Libraries, Info;
}

declare_rules! {
    LIBRARIES_EXPECT_RULES;
    EXPECT_LIBRARIES = "libraries.expect-libraries", Libraries, Fail;
}
