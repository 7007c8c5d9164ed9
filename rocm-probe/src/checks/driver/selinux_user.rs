//! Layer 2 under an SELinux-confined login: `/dev/kfd` carries `hsa_device_t`, and the stock
//! policy grants that type to no confined user domain.
//!
//! fedora-selinux/selinux-policy declares `hsa_device_t` for `/dev/kfd` (devices.fc, devices.te)
//! and uses it only in file-transition patterns: no interface allows a domain to open it, so only
//! domains with blanket device access (unconfined ones) can. A login mapped to `staff_u` or
//! `user_u` runs as `staff_t` or `user_t`, and its stat and open of /dev/kfd are refused with
//! EACCES — silently, since a stock `dontaudit` rule hides the denial from `ausearch`
//! (fedora-selinux/selinux-policy#3238, flatpak/flatpak#6690, Fedora 44, 2026).

use crate::facts::Facts;
use crate::facts::KFD_DEVICE;
use crate::facts::container::{ATTR_CURRENT, SELINUX_ENFORCE, SELINUX_XATTR, selinux_type};
use crate::finding::{Evidence, Finding, SELINUX_USER_KFD_DENIED};
use crate::msg;

/// The label the reference policy gives `/dev/kfd` (devices.fc).
const HSA_DEVICE: &str = "hsa_device_t";
/// The confined login domains: none is granted `hsa_device_t`. Administrative domains
/// (`sysadm_t`, …) are left out: they are granted device access more broadly.
const CONFINED_USERS: [&str; 4] = ["user_t", "staff_t", "guest_t", "xguest_t"];

/// `driver.selinux-user-kfd-denied`: SELinux not known to be off or permissive, the probe in a
/// confined login domain, `/dev/kfd` labelled `hsa_device_t`. A warning, not a failure: a local
/// policy module can grant the access, and the loaded policy is not read.
pub fn check(f: &Facts, out: &mut Vec<Finding>) {
    let c = &f.container;
    let Some((label, domain)) = c
        .selinux_process()
        .filter(|(_, t)| CONFINED_USERS.contains(t))
    else {
        return;
    };
    let Some(kfd_label) = c
        .labels
        .get(KFD_DEVICE)
        .filter(|l| selinux_type(l) == Some(HSA_DEVICE))
    else {
        return;
    };
    let user = label.split(':').next().unwrap_or_default();
    let mut finding = SELINUX_USER_KFD_DENIED
        .finding(msg!(
            "driver.selinux-user-kfd-denied",
            domain,
            path = KFD_DEVICE
        ))
        .with(Evidence::new(ATTR_CURRENT, label))
        .with(Evidence::new(
            format!("device:{KFD_DEVICE} {SELINUX_XATTR}"),
            kfd_label.clone(),
        ));
    if c.selinux_enforcing == Some(true) {
        finding = finding.with(Evidence::new(
            SELINUX_ENFORCE,
            msg!("driver.selinux-enforcing"),
        ));
    }
    out.push(finding.remedy(msg!("driver.selinux-user-kfd-denied-remedy", domain, user)));
}
