//! amdgpu's binary `device/gpu_metrics` table: a 4-byte header (`u16 structure_size`,
//! `u8 format_revision`, `u8 content_revision`) and one of the versioned layouts of
//! `struct gpu_metrics_vX_Y` in the kernel's `drivers/gpu/drm/amd/include/kgd_pp_interface.h`.
//!
//! The layouts below are written from that header at torvalds/linux commit
//! `00dedab07b52ca16107e82ce5ca7caaaedf6a417`, which defines v1.0–v1.6 (discrete GPUs),
//! v2.0–v2.4 (APUs) and v3.0 (APUs). Each is a list of fields in C order; offsets follow C's
//! natural alignment (the structs are not packed), and the computed size must equal the
//! header's `structure_size` before any field is read: a layout whose size disagrees, a version
//! not listed here, or a file shorter than it says is reported as such, never misread.
//! The kernel fills fields a GPU does not report with all ones (`smu_cmn_init_soft_gpu_metrics`),
//! read here as absent. Little-endian, as on every machine amdgpu drives.

use serde::Serialize;

/// A field's C type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    U8,
    U16,
    U32,
    U64,
}

impl Ty {
    fn size(self) -> usize {
        match self {
            Ty::U8 => 1,
            Ty::U16 => 2,
            Ty::U32 => 4,
            Ty::U64 => 8,
        }
    }
}

use Ty::{U8, U16, U32, U64};

/// `(name, type, array length)`, in declaration order, after the common header.
type Fields = &'static [(&'static str, Ty, usize)];

const V1_0: Fields = &[
    ("system_clock_counter", U64, 1),
    ("temperature_edge", U16, 1),
    ("temperature_hotspot", U16, 1),
    ("temperature_mem", U16, 1),
    ("temperature_vrgfx", U16, 1),
    ("temperature_vrsoc", U16, 1),
    ("temperature_vrmem", U16, 1),
    ("average_gfx_activity", U16, 1),
    ("average_umc_activity", U16, 1),
    ("average_mm_activity", U16, 1),
    ("average_socket_power", U16, 1),
    ("energy_accumulator", U32, 1),
    ("average_gfxclk_frequency", U16, 1),
    ("average_socclk_frequency", U16, 1),
    ("average_uclk_frequency", U16, 1),
    ("average_vclk0_frequency", U16, 1),
    ("average_dclk0_frequency", U16, 1),
    ("average_vclk1_frequency", U16, 1),
    ("average_dclk1_frequency", U16, 1),
    ("current_gfxclk", U16, 1),
    ("current_socclk", U16, 1),
    ("current_uclk", U16, 1),
    ("current_vclk0", U16, 1),
    ("current_dclk0", U16, 1),
    ("current_vclk1", U16, 1),
    ("current_dclk1", U16, 1),
    ("throttle_status", U32, 1),
    ("current_fan_speed", U16, 1),
    ("pcie_link_width", U8, 1),
    ("pcie_link_speed", U8, 1),
];

/// v1.1's fields; v1.2 adds `firmware_timestamp`, v1.3 the voltages and
/// `indep_throttle_status`.
const V1_1: Fields = &[
    ("temperature_edge", U16, 1),
    ("temperature_hotspot", U16, 1),
    ("temperature_mem", U16, 1),
    ("temperature_vrgfx", U16, 1),
    ("temperature_vrsoc", U16, 1),
    ("temperature_vrmem", U16, 1),
    ("average_gfx_activity", U16, 1),
    ("average_umc_activity", U16, 1),
    ("average_mm_activity", U16, 1),
    ("average_socket_power", U16, 1),
    ("energy_accumulator", U64, 1),
    ("system_clock_counter", U64, 1),
    ("average_gfxclk_frequency", U16, 1),
    ("average_socclk_frequency", U16, 1),
    ("average_uclk_frequency", U16, 1),
    ("average_vclk0_frequency", U16, 1),
    ("average_dclk0_frequency", U16, 1),
    ("average_vclk1_frequency", U16, 1),
    ("average_dclk1_frequency", U16, 1),
    ("current_gfxclk", U16, 1),
    ("current_socclk", U16, 1),
    ("current_uclk", U16, 1),
    ("current_vclk0", U16, 1),
    ("current_dclk0", U16, 1),
    ("current_vclk1", U16, 1),
    ("current_dclk1", U16, 1),
    ("throttle_status", U32, 1),
    ("current_fan_speed", U16, 1),
    ("pcie_link_width", U16, 1),
    ("pcie_link_speed", U16, 1),
    ("padding", U16, 1),
    ("gfx_activity_acc", U32, 1),
    ("mem_activity_acc", U32, 1),
    ("temperature_hbm", U16, 4),
];
const V1_2_TAIL: Fields = &[("firmware_timestamp", U64, 1)];
const V1_3_TAIL: Fields = &[
    ("voltage_soc", U16, 1),
    ("voltage_gfx", U16, 1),
    ("voltage_mem", U16, 1),
    ("padding1", U16, 1),
    ("indep_throttle_status", U64, 1),
];

/// v1.4 (MI300): Celsius, Watts, per-instance clocks.
const V1_4: Fields = &[
    ("temperature_hotspot", U16, 1),
    ("temperature_mem", U16, 1),
    ("temperature_vrsoc", U16, 1),
    ("curr_socket_power", U16, 1),
    ("average_gfx_activity", U16, 1),
    ("average_umc_activity", U16, 1),
    ("vcn_activity", U16, 4),
    ("energy_accumulator", U64, 1),
    ("system_clock_counter", U64, 1),
    ("throttle_status", U32, 1),
    ("gfxclk_lock_status", U32, 1),
    ("pcie_link_width", U16, 1),
    ("pcie_link_speed", U16, 1),
    ("xgmi_link_width", U16, 1),
    ("xgmi_link_speed", U16, 1),
    ("gfx_activity_acc", U32, 1),
    ("mem_activity_acc", U32, 1),
    ("pcie_bandwidth_acc", U64, 1),
    ("pcie_bandwidth_inst", U64, 1),
    ("pcie_l0_to_recov_count_acc", U64, 1),
    ("pcie_replay_count_acc", U64, 1),
    ("pcie_replay_rover_count_acc", U64, 1),
    ("xgmi_read_data_acc", U64, 8),
    ("xgmi_write_data_acc", U64, 8),
    ("firmware_timestamp", U64, 1),
    ("current_gfxclk", U16, 8),
    ("current_socclk", U16, 4),
    ("current_vclk0", U16, 4),
    ("current_dclk0", U16, 4),
    ("current_uclk", U16, 1),
    ("padding", U16, 1),
];

/// v1.5: v1.4 with `jpeg_activity[32]` and the PCIe NAK counters.
const V1_5: Fields = &[
    ("temperature_hotspot", U16, 1),
    ("temperature_mem", U16, 1),
    ("temperature_vrsoc", U16, 1),
    ("curr_socket_power", U16, 1),
    ("average_gfx_activity", U16, 1),
    ("average_umc_activity", U16, 1),
    ("vcn_activity", U16, 4),
    ("jpeg_activity", U16, 32),
    ("energy_accumulator", U64, 1),
    ("system_clock_counter", U64, 1),
    ("throttle_status", U32, 1),
    ("gfxclk_lock_status", U32, 1),
    ("pcie_link_width", U16, 1),
    ("pcie_link_speed", U16, 1),
    ("xgmi_link_width", U16, 1),
    ("xgmi_link_speed", U16, 1),
    ("gfx_activity_acc", U32, 1),
    ("mem_activity_acc", U32, 1),
    ("pcie_bandwidth_acc", U64, 1),
    ("pcie_bandwidth_inst", U64, 1),
    ("pcie_l0_to_recov_count_acc", U64, 1),
    ("pcie_replay_count_acc", U64, 1),
    ("pcie_replay_rover_count_acc", U64, 1),
    ("pcie_nak_sent_count_acc", U32, 1),
    ("pcie_nak_rcvd_count_acc", U32, 1),
    ("xgmi_read_data_acc", U64, 8),
    ("xgmi_write_data_acc", U64, 8),
    ("firmware_timestamp", U64, 1),
    ("current_gfxclk", U16, 8),
    ("current_socclk", U16, 4),
    ("current_vclk0", U16, 4),
    ("current_dclk0", U16, 4),
    ("current_uclk", U16, 1),
    ("padding", U16, 1),
];

/// v1.6: v1.5 with the accumulated throttler residencies after `system_clock_counter`.
const V1_6: Fields = &[
    ("temperature_hotspot", U16, 1),
    ("temperature_mem", U16, 1),
    ("temperature_vrsoc", U16, 1),
    ("curr_socket_power", U16, 1),
    ("average_gfx_activity", U16, 1),
    ("average_umc_activity", U16, 1),
    ("vcn_activity", U16, 4),
    ("jpeg_activity", U16, 32),
    ("energy_accumulator", U64, 1),
    ("system_clock_counter", U64, 1),
    ("accumulation_counter", U32, 1),
    ("prochot_residency_acc", U32, 1),
    ("ppt_residency_acc", U32, 1),
    ("socket_thm_residency_acc", U32, 1),
    ("vr_thm_residency_acc", U32, 1),
    ("hbm_thm_residency_acc", U32, 1),
    ("throttle_status", U32, 1),
    ("gfxclk_lock_status", U32, 1),
    ("pcie_link_width", U16, 1),
    ("pcie_link_speed", U16, 1),
    ("xgmi_link_width", U16, 1),
    ("xgmi_link_speed", U16, 1),
    ("gfx_activity_acc", U32, 1),
    ("mem_activity_acc", U32, 1),
    ("pcie_bandwidth_acc", U64, 1),
    ("pcie_bandwidth_inst", U64, 1),
    ("pcie_l0_to_recov_count_acc", U64, 1),
    ("pcie_replay_count_acc", U64, 1),
    ("pcie_replay_rover_count_acc", U64, 1),
    ("pcie_nak_sent_count_acc", U32, 1),
    ("pcie_nak_rcvd_count_acc", U32, 1),
    ("xgmi_read_data_acc", U64, 8),
    ("xgmi_write_data_acc", U64, 8),
    ("firmware_timestamp", U64, 1),
    ("current_gfxclk", U16, 8),
    ("current_socclk", U16, 4),
    ("current_vclk0", U16, 4),
    ("current_dclk0", U16, 4),
    ("current_uclk", U16, 1),
    ("padding", U16, 1),
];

/// v2.0: `system_clock_counter` first (not naturally aligned, the header says).
const V2_0: Fields = &[
    ("system_clock_counter", U64, 1),
    ("temperature_gfx", U16, 1),
    ("temperature_soc", U16, 1),
    ("temperature_core", U16, 8),
    ("temperature_l3", U16, 2),
    ("average_gfx_activity", U16, 1),
    ("average_mm_activity", U16, 1),
    ("average_socket_power", U16, 1),
    ("average_cpu_power", U16, 1),
    ("average_soc_power", U16, 1),
    ("average_gfx_power", U16, 1),
    ("average_core_power", U16, 8),
    ("average_gfxclk_frequency", U16, 1),
    ("average_socclk_frequency", U16, 1),
    ("average_uclk_frequency", U16, 1),
    ("average_fclk_frequency", U16, 1),
    ("average_vclk_frequency", U16, 1),
    ("average_dclk_frequency", U16, 1),
    ("current_gfxclk", U16, 1),
    ("current_socclk", U16, 1),
    ("current_uclk", U16, 1),
    ("current_fclk", U16, 1),
    ("current_vclk", U16, 1),
    ("current_dclk", U16, 1),
    ("current_coreclk", U16, 8),
    ("current_l3clk", U16, 2),
    ("throttle_status", U32, 1),
    ("fan_pwm", U16, 1),
    ("padding", U16, 1),
];

/// v2.1; v2.2 adds `indep_throttle_status`, v2.3 the average temperatures, v2.4 voltages and
/// currents (and states the units: centi-Celsius, centi-percent, mW, MHz).
const V2_1: Fields = &[
    ("temperature_gfx", U16, 1),
    ("temperature_soc", U16, 1),
    ("temperature_core", U16, 8),
    ("temperature_l3", U16, 2),
    ("average_gfx_activity", U16, 1),
    ("average_mm_activity", U16, 1),
    ("system_clock_counter", U64, 1),
    ("average_socket_power", U16, 1),
    ("average_cpu_power", U16, 1),
    ("average_soc_power", U16, 1),
    ("average_gfx_power", U16, 1),
    ("average_core_power", U16, 8),
    ("average_gfxclk_frequency", U16, 1),
    ("average_socclk_frequency", U16, 1),
    ("average_uclk_frequency", U16, 1),
    ("average_fclk_frequency", U16, 1),
    ("average_vclk_frequency", U16, 1),
    ("average_dclk_frequency", U16, 1),
    ("current_gfxclk", U16, 1),
    ("current_socclk", U16, 1),
    ("current_uclk", U16, 1),
    ("current_fclk", U16, 1),
    ("current_vclk", U16, 1),
    ("current_dclk", U16, 1),
    ("current_coreclk", U16, 8),
    ("current_l3clk", U16, 2),
    ("throttle_status", U32, 1),
    ("fan_pwm", U16, 1),
    ("padding", U16, 3),
];
const V2_2_TAIL: Fields = &[("indep_throttle_status", U64, 1)];
const V2_3_TAIL: Fields = &[
    ("average_temperature_gfx", U16, 1),
    ("average_temperature_soc", U16, 1),
    ("average_temperature_core", U16, 8),
    ("average_temperature_l3", U16, 2),
];
const V2_4_TAIL: Fields = &[
    ("average_cpu_voltage", U16, 1),
    ("average_soc_voltage", U16, 1),
    ("average_gfx_voltage", U16, 1),
    ("average_cpu_current", U16, 1),
    ("average_soc_current", U16, 1),
    ("average_gfx_current", U16, 1),
];

/// v3.0 (Strix Point and later APUs).
const V3_0: Fields = &[
    ("temperature_gfx", U16, 1),
    ("temperature_soc", U16, 1),
    ("temperature_core", U16, 16),
    ("temperature_skin", U16, 1),
    ("average_gfx_activity", U16, 1),
    ("average_vcn_activity", U16, 1),
    ("average_ipu_activity", U16, 8),
    ("average_core_c0_activity", U16, 16),
    ("average_dram_reads", U16, 1),
    ("average_dram_writes", U16, 1),
    ("average_ipu_reads", U16, 1),
    ("average_ipu_writes", U16, 1),
    ("system_clock_counter", U64, 1),
    ("average_socket_power", U32, 1),
    ("average_ipu_power", U16, 1),
    ("average_apu_power", U32, 1),
    ("average_gfx_power", U32, 1),
    ("average_dgpu_power", U32, 1),
    ("average_all_core_power", U32, 1),
    ("average_core_power", U16, 16),
    ("average_sys_power", U16, 1),
    ("stapm_power_limit", U16, 1),
    ("current_stapm_power_limit", U16, 1),
    ("average_gfxclk_frequency", U16, 1),
    ("average_socclk_frequency", U16, 1),
    ("average_vpeclk_frequency", U16, 1),
    ("average_ipuclk_frequency", U16, 1),
    ("average_fclk_frequency", U16, 1),
    ("average_vclk_frequency", U16, 1),
    ("average_uclk_frequency", U16, 1),
    ("average_mpipu_frequency", U16, 1),
    ("current_coreclk", U16, 16),
    ("current_core_maxfreq", U16, 1),
    ("current_gfx_maxfreq", U16, 1),
    ("throttle_residency_prochot", U32, 1),
    ("throttle_residency_spl", U32, 1),
    ("throttle_residency_fppt", U32, 1),
    ("throttle_residency_sppt", U32, 1),
    ("throttle_residency_thm_core", U32, 1),
    ("throttle_residency_thm_gfx", U32, 1),
    ("throttle_residency_thm_soc", U32, 1),
    ("time_filter_alphavalue", U32, 1),
];

/// The field lists of a known `(format, content)` revision, in order.
fn fields(format: u8, content: u8) -> Option<Vec<Fields>> {
    Some(match (format, content) {
        (1, 0) => vec![V1_0],
        (1, 1) => vec![V1_1],
        (1, 2) => vec![V1_1, V1_2_TAIL],
        (1, 3) => vec![V1_1, V1_2_TAIL, V1_3_TAIL],
        (1, 4) => vec![V1_4],
        (1, 5) => vec![V1_5],
        (1, 6) => vec![V1_6],
        (2, 0) => vec![V2_0],
        (2, 1) => vec![V2_1],
        (2, 2) => vec![V2_1, V2_2_TAIL],
        (2, 3) => vec![V2_1, V2_2_TAIL, V2_3_TAIL],
        (2, 4) => vec![V2_1, V2_2_TAIL, V2_3_TAIL, V2_4_TAIL],
        (3, 0) => vec![V3_0],
        _ => return None,
    })
}

/// Every `(format, content)` revision this parser knows.
pub const KNOWN: [(u8, u8); 13] = [
    (1, 0),
    (1, 1),
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (1, 6),
    (2, 0),
    (2, 1),
    (2, 2),
    (2, 3),
    (2, 4),
    (3, 0),
];

/// A laid-out struct: each field's offset, type and length, and the struct's size.
struct Layout {
    fields: Vec<(&'static str, Ty, usize, usize)>,
    size: usize,
}

fn align(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// C's layout: the header (`u16, u8, u8`, 4 bytes, alignment 2), then each field at its natural
/// alignment, the whole padded to the largest alignment.
fn layout(parts: &[Fields]) -> Layout {
    let mut offset = 4;
    let mut max_align = 2;
    let mut fields = Vec::new();
    for part in parts {
        for &(name, ty, count) in *part {
            offset = align(offset, ty.size());
            max_align = max_align.max(ty.size());
            fields.push((name, ty, count, offset));
            offset += ty.size() * count;
        }
    }
    Layout {
        fields,
        size: align(offset, max_align),
    }
}

/// The size a known revision's struct has, for tests and for the report.
pub fn struct_size(format: u8, content: u8) -> Option<usize> {
    fields(format, content).map(|f| layout(&f).size)
}

/// Why a table was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetricsStatus {
    /// Parsed with the layout of its revision.
    Parsed,
    /// Shorter than the 4-byte header.
    NoHeader,
    /// A revision this parser does not know (newer than the kernel it was written from).
    UnknownVersion,
    /// The header's `structure_size` differs from the size of the known layout.
    SizeMismatch,
    /// The file is shorter than the header's `structure_size`.
    Truncated,
}

/// What a `gpu_metrics` table says, in fixed units. `None`: not in this layout, or the GPU
/// does not report it (all ones).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GpuMetrics {
    /// `format_revision` (1 discrete, 2 and 3 APUs).
    pub format_revision: Option<u8>,
    /// `content_revision`.
    pub content_revision: Option<u8>,
    /// `structure_size` from the header.
    pub structure_size: Option<u16>,
    /// Whether the layout was read.
    pub status: Option<MetricsStatus>,
    /// Edge temperature, millidegrees Celsius.
    pub temperature_edge_mc: Option<u32>,
    /// Hotspot (junction) temperature, millidegrees Celsius.
    pub temperature_hotspot_mc: Option<u32>,
    /// Memory temperature, millidegrees Celsius.
    pub temperature_mem_mc: Option<u32>,
    /// APU graphics temperature, millidegrees Celsius.
    pub temperature_gfx_mc: Option<u32>,
    /// APU SoC temperature, millidegrees Celsius.
    pub temperature_soc_mc: Option<u32>,
    /// Graphics activity, percent.
    pub gfx_activity_percent: Option<u16>,
    /// Socket power, milliwatts.
    pub socket_power_mw: Option<u32>,
    /// Graphics clock now (the first instance on MI300), MHz; on v3.0 the time-filtered one.
    pub gfxclk_mhz: Option<u16>,
    /// Memory clock, MHz.
    pub uclk_mhz: Option<u16>,
    /// Fan speed, RPM (v1.0–v1.3).
    pub fan_rpm: Option<u16>,
    /// The GFXCLK limit the firmware enforces now, MHz (v3.0).
    pub gfx_max_mhz: Option<u16>,
    /// `throttle_status`: ASIC-dependent bits, kept raw.
    pub throttle_status: Option<u32>,
    /// `indep_throttle_status` (v1.3, v2.2+): ASIC-independent bits (`SMU_THROTTLER_*_BIT`).
    pub indep_throttle_status: Option<u64>,
}

/// The groups of `indep_throttle_status` (`SMU_THROTTLER_*_BIT` in the kernel's
/// `drivers/gpu/drm/amd/pm/swsmu/inc/amdgpu_smu.h`: power 0–15, current 16–31, temperature
/// 32–47, other 48–63).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Throttler {
    /// Package/socket power limits (PPT, SPL, FPPT, SPPT).
    Power,
    /// Current limits (TDC, EDC, APCC).
    Current,
    /// Temperature limits (edge, hotspot, memory, VR, PROCHOT).
    Thermal,
    /// PPM, FIT.
    Other,
}

/// The names of the bits the kernel defines, by bit.
pub const THROTTLER_BITS: [(u32, &str); 34] = [
    (0, "PPT0"),
    (1, "PPT1"),
    (2, "PPT2"),
    (3, "PPT3"),
    (4, "SPL"),
    (5, "FPPT"),
    (6, "SPPT"),
    (7, "SPPT_APU"),
    (16, "TDC_GFX"),
    (17, "TDC_SOC"),
    (18, "TDC_MEM"),
    (19, "TDC_VDD"),
    (20, "TDC_CVIP"),
    (21, "EDC_CPU"),
    (22, "EDC_GFX"),
    (23, "APCC"),
    (32, "TEMP_GPU"),
    (33, "TEMP_CORE"),
    (34, "TEMP_MEM"),
    (35, "TEMP_EDGE"),
    (36, "TEMP_HOTSPOT"),
    (37, "TEMP_SOC"),
    (38, "TEMP_VR_GFX"),
    (39, "TEMP_VR_SOC"),
    (40, "TEMP_VR_MEM0"),
    (41, "TEMP_VR_MEM1"),
    (42, "TEMP_LIQUID0"),
    (43, "TEMP_LIQUID1"),
    (44, "VRHOT0"),
    (45, "VRHOT1"),
    (46, "PROCHOT_CPU"),
    (47, "PROCHOT_GFX"),
    (56, "PPM"),
    (57, "FIT"),
];

/// The group of a bit of `indep_throttle_status`.
pub fn throttler(bit: u32) -> Throttler {
    match bit {
        0..=15 => Throttler::Power,
        16..=31 => Throttler::Current,
        32..=47 => Throttler::Thermal,
        _ => Throttler::Other,
    }
}

/// The set bits of `indep_throttle_status`, named (`bit<N>` for a bit the kernel does not name).
pub fn throttler_names(status: u64) -> Vec<(Throttler, String)> {
    (0..64)
        .filter(|b| status >> b & 1 == 1)
        .map(|b| {
            let name = THROTTLER_BITS
                .iter()
                .find(|(n, _)| *n == b)
                .map_or_else(|| format!("bit{b}"), |(_, n)| (*n).to_owned());
            (throttler(b), name)
        })
        .collect()
}

/// A parsed table's fields by name.
struct Reader<'a> {
    bytes: &'a [u8],
    layout: Layout,
}

impl Reader<'_> {
    /// Element 0 of a field; `None` when the layout lacks it or it is all ones.
    fn get(&self, name: &str) -> Option<u64> {
        let &(_, ty, _, offset) = self.layout.fields.iter().find(|f| f.0 == name)?;
        let raw = self.bytes.get(offset..offset + ty.size())?;
        let (value, ones) = match ty {
            U8 => (u64::from(raw[0]), u64::from(u8::MAX)),
            U16 => (
                u64::from(u16::from_le_bytes(raw.try_into().ok()?)),
                u64::from(u16::MAX),
            ),
            U32 => (
                u64::from(u32::from_le_bytes(raw.try_into().ok()?)),
                u64::from(u32::MAX),
            ),
            U64 => (u64::from_le_bytes(raw.try_into().ok()?), u64::MAX),
        };
        (value != ones).then_some(value)
    }
    fn u16(&self, name: &str) -> Option<u16> {
        self.get(name).and_then(|v| u16::try_from(v).ok())
    }
    fn u32(&self, name: &str) -> Option<u32> {
        self.get(name).and_then(|v| u32::try_from(v).ok())
    }
}

/// Parses a `gpu_metrics` file. Never panics; what it cannot read it says in `status`.
pub fn parse(bytes: &[u8]) -> GpuMetrics {
    let mut m = GpuMetrics::default();
    let Some(header) = bytes.get(..4) else {
        m.status = Some(MetricsStatus::NoHeader);
        return m;
    };
    let size = u16::from_le_bytes([header[0], header[1]]);
    let (format, content) = (header[2], header[3]);
    m.structure_size = Some(size);
    m.format_revision = Some(format);
    m.content_revision = Some(content);
    let Some(parts) = fields(format, content) else {
        m.status = Some(MetricsStatus::UnknownVersion);
        return m;
    };
    let layout = layout(&parts);
    if layout.size != usize::from(size) {
        m.status = Some(MetricsStatus::SizeMismatch);
        return m;
    }
    if bytes.len() < layout.size {
        m.status = Some(MetricsStatus::Truncated);
        return m;
    }
    m.status = Some(MetricsStatus::Parsed);
    let r = Reader { bytes, layout };
    match format {
        1 => {
            // Celsius and Watts (v1.4+ state it; v1.0–v1.3 fill them the same way).
            let c = |n: &str| r.u32(n).map(|v| v.saturating_mul(1000));
            m.temperature_edge_mc = c("temperature_edge");
            m.temperature_hotspot_mc = c("temperature_hotspot");
            m.temperature_mem_mc = c("temperature_mem");
            m.gfx_activity_percent = r.u16("average_gfx_activity");
            m.socket_power_mw = r
                .u32("average_socket_power")
                .or_else(|| r.u32("curr_socket_power"))
                .map(|w| w.saturating_mul(1000));
            m.gfxclk_mhz = r.u16("current_gfxclk");
            m.uclk_mhz = r.u16("current_uclk");
            m.fan_rpm = r.u16("current_fan_speed");
        }
        2 => {
            // centi-Celsius and mW (v2.4 states it; v2.0–v2.3 are filled the same way);
            // activity is in percent, centi-percent from v2.4.
            let c = |n: &str| r.u32(n).map(|v| v.saturating_mul(10));
            m.temperature_gfx_mc = c("temperature_gfx");
            m.temperature_soc_mc = c("temperature_soc");
            m.gfx_activity_percent = r
                .u16("average_gfx_activity")
                .map(|a| if content >= 4 { a / 100 } else { a });
            m.socket_power_mw = r.u32("average_socket_power");
            m.gfxclk_mhz = r.u16("current_gfxclk");
            m.uclk_mhz = r.u16("current_uclk");
        }
        _ => {
            let c = |n: &str| r.u32(n).map(|v| v.saturating_mul(10));
            m.temperature_gfx_mc = c("temperature_gfx");
            m.temperature_soc_mc = c("temperature_soc");
            m.gfx_activity_percent = r.u16("average_gfx_activity");
            m.socket_power_mw = r.u32("average_socket_power");
            m.gfxclk_mhz = r.u16("average_gfxclk_frequency");
            m.uclk_mhz = r.u16("average_uclk_frequency");
            m.gfx_max_mhz = r.u16("current_gfx_maxfreq");
        }
    }
    m.throttle_status = r.u32("throttle_status");
    m.indep_throttle_status = r.get("indep_throttle_status");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(path: &str) -> Vec<u8> {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        std::fs::read(base.join(path)).unwrap()
    }

    #[test]
    fn sizes_of_the_captured_revisions_match_their_headers() {
        // Real captures: v1.3 (RX 7800 XT, LACT), v2.1 (Phoenix), v3.0 (Strix Point).
        assert_eq!(struct_size(1, 3), Some(120));
        assert_eq!(struct_size(2, 1), Some(120));
        assert_eq!(struct_size(3, 0), Some(264));
        // Each later revision only appends to its predecessor (v1.1→1.3, v2.1→2.4).
        assert_eq!(struct_size(1, 2), Some(104));
        assert_eq!(struct_size(2, 2), Some(128));
        assert_eq!(struct_size(2, 3), Some(152));
        assert_eq!(struct_size(2, 4), Some(168));
        assert_eq!(struct_size(1, 0), Some(80));
        for (f, c) in KNOWN {
            let s = struct_size(f, c).unwrap();
            assert_eq!(s % 8, 0, "v{f}.{c}");
            assert!(s <= usize::from(u16::MAX));
        }
        assert_eq!(struct_size(1, 7), None);
    }

    #[test]
    fn parses_the_v2_1_of_a_phoenix_apu() {
        let m = parse(&capture(
            "fixtures/apu-phoenix-780m/sys/class/drm/card1/device/gpu_metrics",
        ));
        assert_eq!(m.status, Some(MetricsStatus::Parsed));
        assert_eq!((m.format_revision, m.content_revision), (Some(2), Some(1)));
        assert_eq!(m.temperature_gfx_mc, Some(25000));
        assert_eq!(m.temperature_soc_mc, Some(27370));
        assert_eq!(m.socket_power_mw, Some(3401));
        assert_eq!(m.gfx_activity_percent, Some(79));
        assert_eq!(m.throttle_status, Some(0));
        assert_eq!(m.indep_throttle_status, None); // v2.1 has none
        assert_eq!(m.fan_rpm, None);
        assert_eq!(m.temperature_edge_mc, None);
    }

    #[test]
    fn parses_the_v3_0_of_a_strix_point_apu() {
        let m = parse(&capture(
            "fixtures/apu-strixpoint/sys/class/drm/card1/device/gpu_metrics",
        ));
        assert_eq!(m.status, Some(MetricsStatus::Parsed));
        assert_eq!((m.format_revision, m.content_revision), (Some(3), Some(0)));
        assert_eq!(m.temperature_gfx_mc, Some(38120));
        assert_eq!(m.temperature_soc_mc, Some(40620));
        assert!(m.socket_power_mw.is_some());
    }

    #[test]
    fn parses_the_v1_3_of_discrete_cards() {
        let m = parse(&capture("tests/data/gpu_metrics/rx7800xt-v1.3"));
        assert_eq!(m.status, Some(MetricsStatus::Parsed));
        assert_eq!(
            (
                m.temperature_edge_mc,
                m.temperature_hotspot_mc,
                m.temperature_mem_mc
            ),
            (Some(24000), Some(31000), Some(48000))
        );
        assert_eq!(m.socket_power_mw, Some(32000));
        assert_eq!(m.gfx_activity_percent, Some(24));
        assert_eq!((m.gfxclk_mhz, m.uclk_mhz), (Some(2011), Some(456)));
        assert_eq!(m.fan_rpm, Some(868));
        assert_eq!(m.indep_throttle_status, Some(0));
        // A 4096-byte NUL-padded page: the header's size governs.
        let padded = parse(&capture("tests/data/gpu_metrics/rx6900xt-v1.3-padded"));
        assert_eq!(padded.status, Some(MetricsStatus::Parsed));
        assert_eq!(padded.structure_size, Some(120));
    }

    #[test]
    fn unknown_short_and_mismatched_tables_are_reported_not_read() {
        assert_eq!(parse(&[]).status, Some(MetricsStatus::NoHeader));
        assert_eq!(parse(&[120, 0, 1]).status, Some(MetricsStatus::NoHeader));
        let unknown = parse(&[0x80, 0, 1, 9, 0xff, 0xff]);
        assert_eq!(unknown.status, Some(MetricsStatus::UnknownVersion));
        assert_eq!(unknown.temperature_edge_mc, None);
        let mut v13 = capture("tests/data/gpu_metrics/rx7800xt-v1.3");
        v13[0] = 124;
        assert_eq!(parse(&v13).status, Some(MetricsStatus::SizeMismatch));
        v13[0] = 120;
        assert_eq!(parse(&v13[..119]).status, Some(MetricsStatus::Truncated));
    }

    #[test]
    fn every_layout_reads_its_fields_where_the_kernel_puts_them() {
        // A table of each known revision filled with 0x11 bytes, then the temperature and
        // throttle fields set by offset: the parser finds them there.
        for (f, c) in KNOWN {
            let parts = fields(f, c).unwrap();
            let l = layout(&parts);
            let mut b = vec![0x11u8; l.size];
            b[..2].copy_from_slice(&(l.size as u16).to_le_bytes());
            b[2] = f;
            b[3] = c;
            let put = |b: &mut Vec<u8>, name: &str, v: u64| {
                let &(_, ty, _, off) = l.fields.iter().find(|x| x.0 == name).unwrap();
                b[off..off + ty.size()].copy_from_slice(&v.to_le_bytes()[..ty.size()]);
            };
            let temp = if f == 1 {
                "temperature_hotspot"
            } else {
                "temperature_gfx"
            };
            put(&mut b, temp, 77);
            let has_indep = l.fields.iter().any(|x| x.0 == "indep_throttle_status");
            if has_indep {
                put(&mut b, "indep_throttle_status", 1 << 36);
            }
            let m = parse(&b);
            assert_eq!(m.status, Some(MetricsStatus::Parsed), "v{f}.{c}");
            let t = if f == 1 {
                m.temperature_hotspot_mc
            } else {
                m.temperature_gfx_mc
            };
            assert_eq!(t, Some(if f == 1 { 77000 } else { 770 }), "v{f}.{c}");
            assert_eq!(m.indep_throttle_status.is_some(), has_indep, "v{f}.{c}");
            if has_indep {
                assert_eq!(
                    throttler_names(m.indep_throttle_status.unwrap()),
                    vec![(Throttler::Thermal, "TEMP_HOTSPOT".to_owned())]
                );
            }
        }
    }

    #[test]
    fn random_bytes_and_truncations_never_panic() {
        // A small xorshift generator: deterministic, no dependency.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut seeds: Vec<Vec<u8>> = vec![
            capture("tests/data/gpu_metrics/rx7800xt-v1.3"),
            capture("fixtures/apu-phoenix-780m/sys/class/drm/card1/device/gpu_metrics"),
            capture("fixtures/apu-strixpoint/sys/class/drm/card1/device/gpu_metrics"),
        ];
        for _ in 0..2000 {
            let len = (next() % 300) as usize;
            let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if b.len() >= 4 && next() % 2 == 0 {
                // A known revision with a random size, to reach the layout code.
                let (f, c) = KNOWN[(next() % KNOWN.len() as u64) as usize];
                b[2] = f;
                b[3] = c;
                if next() % 2 == 0 {
                    let s = struct_size(f, c).unwrap() as u16;
                    b[..2].copy_from_slice(&s.to_le_bytes());
                }
            }
            seeds.push(b);
        }
        for s in &seeds {
            for cut in [
                0,
                1,
                3,
                4,
                5,
                s.len() / 2,
                s.len().saturating_sub(1),
                s.len(),
            ] {
                let m = parse(&s[..cut.min(s.len())]);
                assert!(m.status.is_some());
                if m.status == Some(MetricsStatus::Parsed) {
                    let (f, c) = (m.format_revision.unwrap(), m.content_revision.unwrap());
                    assert!(cut >= struct_size(f, c).unwrap());
                }
            }
        }
    }
}
