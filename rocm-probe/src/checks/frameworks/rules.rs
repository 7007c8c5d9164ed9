//! Layer 7 (frameworks) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::finding::declare_rules;

declare_rules! {
    FRAMEWORKS_RULES;
    FRAMEWORKS_NOT_CAPTURED = "frameworks.not-captured", Frameworks, Skip;
    FRAMEWORKS_UNREADABLE = "frameworks.files-unreadable", Frameworks, Skip;
    FRAMEWORKS_NONE = "frameworks.none", Frameworks, Info;
    FRAMEWORKS_FOUND = "frameworks.found", Frameworks, Pass;
    TORCH_CPU_BUILD = "frameworks.torch-cpu-build", Frameworks, Warn;
    TORCH_CUDA_BUILD = "frameworks.torch-cuda-build", Frameworks, Warn;
    BUNDLED_ROCM_DIFFERS = "frameworks.bundled-rocm-differs", Frameworks, Info;
    BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET = "frameworks.bundled-rocblas-no-kernels-for-target", Frameworks, Fail;
    FRAMEWORK_NO_CODE_OBJECT_FOR_TARGET = "frameworks.no-code-object-for-target", Frameworks, Fail;
    // Its remedy, `torch[device-<target>]`, brings the ROCm device wheel too.
    TORCH_DEVICE_WHEEL_MISSING = "frameworks.torch-device-wheel-missing", Frameworks, Fail => [
        BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET,
    ];
    FRAMEWORK_CODE_OBJECT_NEEDS_FEATURE_CHANGE = "frameworks.code-object-needs-feature-change", Frameworks, Fail;
    FRAMEWORK_FILES_MALFORMED = "frameworks.files-malformed", Frameworks, Warn;
    TENSORFLOW_NOT_ROCM = "frameworks.tensorflow-not-rocm", Frameworks, Warn;
    VLLM_NOT_ROCM = "frameworks.vllm-not-rocm", Frameworks, Fail;
    TENSORFLOW_UNVALIDATED = "frameworks.tensorflow-unvalidated", Frameworks, Info;
    JAX_PLUGIN_MISMATCH = "frameworks.jax-plugin-mismatch", Frameworks, Warn;
    JAX_NO_ROCM_PLUGIN = "frameworks.jax-no-rocm-plugin", Frameworks, Info;
    ONNXRUNTIME_NO_ROCM_PROVIDER = "frameworks.onnxruntime-no-rocm-provider", Frameworks, Info;
    BUNDLED_APP_FOUND = "frameworks.bundled-runtime-found", Frameworks, Pass;
    OLLAMA_GPU_DROPPED = "frameworks.ollama-gpu-dropped", Frameworks, Warn;
    OLLAMA_NO_ROCM_RUNNER = "frameworks.ollama-no-rocm-runner", Frameworks, Warn;
}

declare_rules! {
    FRAMEWORKS_EXPECT_RULES;
    EXPECT_FRAMEWORKS = "frameworks.expect-frameworks", Frameworks, Fail;
}
