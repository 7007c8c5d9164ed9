//! ARCHITECTURE.md §9: a run reads each file at most once (`generation_id`, read before and after the
//! scan, excepted), and lists each directory at most once.

use std::collections::BTreeMap;

use rocm_probe::report::Options;
use rocm_probe::source::record::Record;
use rocm_probe::{Report, Source};
use rocm_probe_tests::fixtures;

#[test]
fn every_file_is_read_at_most_once_per_report() {
    for (name, dir) in fixtures() {
        let (source, recorder) = Source::fixture(&dir).unwrap().record();
        let _ = Report::collect(&source, Options::default());
        let mut reads: BTreeMap<String, usize> = BTreeMap::new();
        for r in recorder.records() {
            let key = match r {
                Record::File { path, .. } | Record::Failed { path, .. } => format!("file {path}"),
                Record::Dir { path, .. } => format!("dir {path}"),
                Record::Link { path, .. } => format!("link {path}"),
                _ => continue,
            };
            *reads.entry(key).or_default() += 1;
        }
        for (key, n) in &reads {
            let allowed = if key.ends_with("/topology/generation_id") {
                2
            } else {
                1
            };
            assert!(*n <= allowed, "{name}: {key} read {n} times");
        }
        assert!(!reads.is_empty(), "{name}: nothing recorded");
    }
}
