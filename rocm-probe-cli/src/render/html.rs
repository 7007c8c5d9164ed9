//! `report --format html`: one self-contained page. (Being written: issue 8 item 2.)

use std::io::{self, Write};

use rocm_probe::{Facts, Report, Source};

/// Writes the page.
pub fn html(
    report: &Report,
    facts: &Facts,
    source: &Source,
    out: &mut dyn Write,
) -> io::Result<()> {
    let _ = (facts, source);
    writeln!(
        out,
        "<!doctype html><title>rocm-probe</title><p>{}</p>",
        report.verdict.summary
    )
}
