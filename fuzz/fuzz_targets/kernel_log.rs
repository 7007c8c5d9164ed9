//! Kernel log lines: any text, as another kernel, a hostile process writing to /dev/kmsg, or a
//! damaged capture might give. The signature matcher and the event parser (PCI address, process,
//! firmware file, error code, the oops header and its RIP line) must not panic on any of it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::facts::kernel_log;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<(String, Option<u64>)> = text
        .lines()
        .take(64)
        .enumerate()
        .map(|(i, l)| (l.to_owned(), (i % 2 == 0).then_some(i as u64)))
        .collect();
    for (l, _) in &lines {
        let _ = (kernel_log::wanted(l), kernel_log::signature(l));
        let _ = (kernel_log::pci_address(l), kernel_log::process(l));
    }
    let _ = kernel_log::parse(&lines);
});
