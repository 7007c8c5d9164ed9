//! Building small machine trees in unit tests: a file with its parents, a symlink with its
//! parents. (Integration tests have `rocm_probe_tests::copy_fixture` for whole fixtures.)

use std::path::Path;

/// Writes `text` to `base/rel`, creating the directories on the way.
pub(crate) fn write(base: &Path, rel: &str, text: &str) {
    let p = base.join(rel);
    std::fs::create_dir_all(p.parent().expect("a relative path with a parent"))
        .expect("directories created");
    std::fs::write(p, text).expect("file written");
}

/// Creates the symlink `base/rel` → `target`, creating the directories on the way.
pub(crate) fn link(base: &Path, rel: &str, target: &str) {
    let p = base.join(rel);
    std::fs::create_dir_all(p.parent().expect("a relative path with a parent"))
        .expect("directories created");
    std::os::unix::fs::symlink(target, p).expect("symlink created");
}
