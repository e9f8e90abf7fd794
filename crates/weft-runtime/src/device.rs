//! Device selection (ARCHITECTURE.md, "Decisions already taken", "OpenCL everywhere"):
//! `--device` or `WEFT_DEVICE` holds `gpu`, `cpu` or `PLATFORM:DEVICE` (indices as
//! `weft-runner devices` lists them); without one, the first GPU of any platform,
//! else the first CPU device.
//!
//! Listing platforms never panics: `ocl::Platform::list()` does when no ICD is
//! installed, so this module calls `ocl::core::get_platform_ids`, which returns a
//! `Result`. That call retries for ten seconds when the ICD loader reports no
//! platform (`CL_PLATFORM_NOT_FOUND_KHR`), so on Linux, where the loaders read their
//! vendor files from `/etc/OpenCL/vendors` (or the directory `OCL_ICD_VENDORS` /
//! `OPENCL_VENDOR_PATH` names), an empty or missing vendor directory is reported at
//! once instead.

use std::fmt;
use std::str::FromStr;

use ocl::core::{DeviceInfo, DeviceInfoResult, DeviceType, Status};

use crate::error::RunError;

/// The environment variable that selects a device when `--device` is absent.
pub const DEVICE_ENV: &str = "WEFT_DEVICE";

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    /// The first GPU of any platform.
    Gpu,
    /// The first CPU device of any platform.
    Cpu,
    /// Device `device` of platform `platform` (0-based, as `weft-runner devices` lists).
    Index { platform: usize, device: usize },
}

/// The kind of an OpenCL device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    Gpu,
    Cpu,
    Accelerator,
    Other,
}

/// One platform and its devices, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformInfo {
    pub index: usize,
    pub name: String,
    pub vendor: String,
    pub version: String,
    pub devices: Vec<DeviceInfoEntry>,
}

/// One device of a platform, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfoEntry {
    /// `(platform, device)` indices: the `P:D` of `--device`.
    pub platform: usize,
    pub index: usize,
    pub name: String,
    /// `CL_DEVICE_VENDOR` (what device profiles match with the name).
    pub vendor: String,
    pub kind: DeviceKind,
}

/// The message for a machine without any OpenCL platform.
pub const NO_PLATFORM_HELP: &str = "install an OpenCL driver: on Debian, `apt-get install \
     pocl-opencl-icd ocl-icd-opencl-dev` runs kernels on the CPU; for a GPU, install its \
     vendor's OpenCL driver";

impl DeviceSpec {
    /// The spec from a `--device` flag, else from the value of `WEFT_DEVICE`
    /// (`weft-runner` reads the environment, this library does not), else `None` (the
    /// default choice). An empty `WEFT_DEVICE` counts as unset.
    pub fn from_flag_or_env(
        flag: Option<&str>,
        env: Option<&str>,
    ) -> Result<Option<DeviceSpec>, RunError> {
        if let Some(flag) = flag {
            return flag.parse().map(Some);
        }
        match env {
            Some(text) if !text.trim().is_empty() => text.parse().map(Some).map_err(|error| {
                RunError::Device(format!("in the environment variable `{DEVICE_ENV}`: {error}"))
            }),
            _ => Ok(None),
        }
    }
}

impl FromStr for DeviceSpec {
    type Err = RunError;

    fn from_str(text: &str) -> Result<DeviceSpec, RunError> {
        let text = text.trim();
        let invalid = || {
            RunError::Device(format!(
                "invalid device `{text}`: expected `gpu`, `cpu` or `PLATFORM:DEVICE` \
                 (indices as `weft-runner devices` lists them, e.g. `0:1`)"
            ))
        };
        if text.eq_ignore_ascii_case("gpu") {
            return Ok(DeviceSpec::Gpu);
        }
        if text.eq_ignore_ascii_case("cpu") {
            return Ok(DeviceSpec::Cpu);
        }
        let (platform, device) = text.split_once(':').ok_or_else(invalid)?;
        let index = |s: &str| {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid());
            }
            s.parse::<usize>().map_err(|_| invalid())
        };
        Ok(DeviceSpec::Index { platform: index(platform)?, device: index(device)? })
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Gpu => f.write_str("gpu"),
            DeviceSpec::Cpu => f.write_str("cpu"),
            DeviceSpec::Index { platform, device } => write!(f, "{platform}:{device}"),
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "gpu",
            DeviceKind::Cpu => "cpu",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Other => "other",
        })
    }
}

/// Every platform and its devices. Fails with [`RunError::NoPlatform`] (and the
/// install hint) when there is none.
pub fn list_devices() -> Result<Vec<PlatformInfo>, RunError> {
    Ok(describe(&platforms()?))
}

/// The `(platform, device)` indices that `spec` selects among `platforms`; `None`
/// selects the first GPU, else the first CPU device.
pub fn choose_device(
    platforms: &[PlatformInfo],
    spec: Option<DeviceSpec>,
) -> Result<(usize, usize), RunError> {
    let first_of_kind = |kind: DeviceKind| {
        platforms
            .iter()
            .flat_map(|platform| &platform.devices)
            .find(|device| device.kind == kind)
            .map(|device| (device.platform, device.index))
    };
    match spec {
        None => first_of_kind(DeviceKind::Gpu)
            .or_else(|| first_of_kind(DeviceKind::Cpu))
            .ok_or_else(|| {
                RunError::Device(format!(
                    "no GPU or CPU OpenCL device found; choose one with `--device P:D`; {}",
                    available(platforms)
                ))
            }),
        Some(DeviceSpec::Gpu) => first_of_kind(DeviceKind::Gpu).ok_or_else(|| {
            RunError::Device(format!("no GPU OpenCL device found; {}", available(platforms)))
        }),
        Some(DeviceSpec::Cpu) => first_of_kind(DeviceKind::Cpu).ok_or_else(|| {
            RunError::Device(format!("no CPU OpenCL device found; {}", available(platforms)))
        }),
        Some(DeviceSpec::Index { platform, device }) => match platforms.get(platform) {
            None => Err(RunError::Device(format!(
                "no OpenCL platform {platform}; {}",
                available(platforms)
            ))),
            Some(found) if device >= found.devices.len() => Err(RunError::Device(format!(
                "platform {platform} has no device {device}; {}",
                available(platforms)
            ))),
            Some(_) => Ok((platform, device)),
        },
    }
}

/// A chosen device and the platform it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Selected {
    pub(crate) platform: ocl::Platform,
    pub(crate) device: ocl::Device,
    /// `` `NAME` (device P:D) ``.
    pub(crate) description: String,
}

/// The device `spec` names, or the default one (`None`).
pub(crate) fn select_device(spec: Option<DeviceSpec>) -> Result<Selected, RunError> {
    let platforms = platforms()?;
    let infos = describe(&platforms);
    let (platform_idx, device_idx) = choose_device(&infos, spec)?;
    let chosen = platforms
        .get(platform_idx)
        .and_then(|(platform, devices)| devices.get(device_idx).map(|device| (*platform, *device)));
    let name = infos
        .get(platform_idx)
        .and_then(|platform| platform.devices.get(device_idx))
        .map_or("(unknown device)", |device| device.name.as_str());
    let (platform, device) = chosen.expect("invariant: choose_device returns listed indices");
    Ok(Selected {
        platform,
        device,
        description: format!("`{name}` (device {platform_idx}:{device_idx})"),
    })
}

fn describe(platforms: &[(ocl::Platform, Vec<ocl::Device>)]) -> Vec<PlatformInfo> {
    platforms
        .iter()
        .enumerate()
        .map(|(index, (platform, devices))| PlatformInfo {
            index,
            name: platform.name().map_or_else(|_| "(unknown)".to_owned(), |n| n.trim().to_owned()),
            vendor: platform.vendor().map(|v| v.trim().to_owned()).unwrap_or_default(),
            version: platform.version().map(|v| v.trim().to_owned()).unwrap_or_default(),
            devices: devices
                .iter()
                .enumerate()
                .map(|(device_idx, device)| DeviceInfoEntry {
                    platform: index,
                    index: device_idx,
                    name: device
                        .name()
                        .map_or_else(|_| "(unknown)".to_owned(), |n| n.trim().to_owned()),
                    vendor: device.vendor().map(|v| v.trim().to_owned()).unwrap_or_default(),
                    kind: device_kind(device),
                })
                .collect(),
        })
        .collect()
}

fn available(platforms: &[PlatformInfo]) -> String {
    let devices: Vec<String> = platforms
        .iter()
        .flat_map(|platform| &platform.devices)
        .map(|device| {
            format!("{}:{} {} `{}`", device.platform, device.index, device.kind, device.name)
        })
        .collect();
    if devices.is_empty() {
        "no platform has a device".to_owned()
    } else {
        format!("devices: {}", devices.join(", "))
    }
}

pub(crate) fn device_kind(device: &ocl::Device) -> DeviceKind {
    match device.info(DeviceInfo::Type) {
        Ok(DeviceInfoResult::Type(ty)) if ty.contains(DeviceType::GPU) => DeviceKind::Gpu,
        Ok(DeviceInfoResult::Type(ty)) if ty.contains(DeviceType::CPU) => DeviceKind::Cpu,
        Ok(DeviceInfoResult::Type(ty)) if ty.contains(DeviceType::ACCELERATOR) => {
            DeviceKind::Accelerator
        }
        _ => DeviceKind::Other,
    }
}

fn platforms() -> Result<Vec<(ocl::Platform, Vec<ocl::Device>)>, RunError> {
    // POCL initialises its devices on first use, and threads that list them at the
    // same time may see none: list them one thread at a time.
    static LISTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LISTING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !vendor_files_present() {
        return Err(RunError::NoPlatform(format!(
            "no OpenCL platform found (no ICD vendor file in {}); {NO_PLATFORM_HELP}",
            vendor_dir().display()
        )));
    }
    let ids = ocl::core::get_platform_ids().map_err(|error| {
        RunError::NoPlatform(format!("no OpenCL platform found ({error}); {NO_PLATFORM_HELP}"))
    })?;
    if ids.is_empty() {
        return Err(RunError::NoPlatform(format!("no OpenCL platform found; {NO_PLATFORM_HELP}")));
    }
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let platform = ocl::Platform::new(id);
        let devices = match ocl::core::get_device_ids(platform, Some(DeviceType::ALL), None) {
            Ok(ids) => ocl::Device::list_from_core(ids),
            Err(error) if error.api_status() == Some(Status::CL_DEVICE_NOT_FOUND) => Vec::new(),
            Err(error) => return Err(RunError::opencl("listing devices", error)),
        };
        out.push((platform, devices));
    }
    Ok(out)
}

fn vendor_dir() -> std::path::PathBuf {
    std::env::var_os("OCL_ICD_VENDORS")
        .or_else(|| std::env::var_os("OPENCL_VENDOR_PATH"))
        .map_or_else(|| "/etc/OpenCL/vendors".into(), std::path::PathBuf::from)
}

/// Whether an ICD loader can find a vendor file. Only decides `false` where that is
/// certain: on Linux, without `OCL_ICD_FILENAMES`, when the vendor directory is
/// missing or holds no `.icd` file. A vendor variable that names a file is left to
/// the loader.
fn vendor_files_present() -> bool {
    if !cfg!(target_os = "linux") || std::env::var_os("OCL_ICD_FILENAMES").is_some() {
        return true;
    }
    let dir = vendor_dir();
    if dir.exists() && !dir.is_dir() {
        return true;
    }
    let named_by_variable = std::env::var_os("OCL_ICD_VENDORS").is_some()
        || std::env::var_os("OPENCL_VENDOR_PATH").is_some();
    match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .any(|entry| entry.path().extension().is_some_and(|ext| ext == "icd")),
        // ocl-icd reads a variable that names no directory as a file name in the
        // default directory: leave that to the loader.
        Err(_) => named_by_variable && !dir.is_absolute(),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn spec(text: &str) -> String {
        match text.parse::<DeviceSpec>() {
            Ok(spec) => format!("{spec:?}"),
            Err(error) => format!("error: {error}"),
        }
    }

    /// The flag comes first; an empty variable is unset; a wrong one is named.
    #[test]
    fn the_flag_comes_before_the_variable() {
        let chosen = |flag, env| match DeviceSpec::from_flag_or_env(flag, env) {
            Ok(spec) => format!("{spec:?}"),
            Err(error) => format!("error: {error}"),
        };
        assert_eq!(chosen(Some("cpu"), Some("gpu")), "Some(Cpu)");
        assert_eq!(chosen(None, Some("gpu")), "Some(Gpu)");
        assert_eq!(chosen(None, Some("  ")), "None");
        assert_eq!(chosen(None, None), "None");
        assert!(
            chosen(None, Some("tpu")).contains("`WEFT_DEVICE`"),
            "{}",
            chosen(None, Some("tpu"))
        );
    }

    #[test]
    fn device_specs_parse() {
        assert_eq!(spec("gpu"), "Gpu");
        assert_eq!(spec(" CPU "), "Cpu");
        assert_eq!(spec("1:2"), "Index { platform: 1, device: 2 }");
        expect![[r#"error: invalid device `1:-2`: expected `gpu`, `cpu` or `PLATFORM:DEVICE` (indices as `weft-runner devices` lists them, e.g. `0:1`)"#]]
            .assert_eq(&spec("1:-2"));
        assert!(spec("").starts_with("error"));
        assert!(spec("0").starts_with("error"));
        assert!(spec("0:1:2").starts_with("error"));
        assert!(spec("+1:2").starts_with("error"));
        assert_eq!("0:1".parse::<DeviceSpec>().unwrap().to_string(), "0:1");
    }

    fn machine() -> Vec<PlatformInfo> {
        let device = |platform, index, kind, name: &str| DeviceInfoEntry {
            platform,
            index,
            name: name.to_owned(),
            vendor: String::new(),
            kind,
        };
        vec![
            PlatformInfo {
                index: 0,
                name: "pocl".to_owned(),
                vendor: String::new(),
                version: String::new(),
                devices: vec![device(0, 0, DeviceKind::Cpu, "epyc")],
            },
            PlatformInfo {
                index: 1,
                name: "nvidia".to_owned(),
                vendor: String::new(),
                version: String::new(),
                devices: vec![
                    device(1, 0, DeviceKind::Gpu, "h100"),
                    device(1, 1, DeviceKind::Gpu, "h200"),
                ],
            },
        ]
    }

    #[test]
    fn default_device_is_the_first_gpu_else_the_first_cpu() {
        let platforms = machine();
        assert_eq!(choose_device(&platforms, None).unwrap(), (1, 0));
        assert_eq!(choose_device(&platforms, Some(DeviceSpec::Cpu)).unwrap(), (0, 0));
        let cpu_only = &platforms[..1];
        assert_eq!(choose_device(cpu_only, None).unwrap(), (0, 0));
        let index = DeviceSpec::Index { platform: 1, device: 1 };
        assert_eq!(choose_device(&platforms, Some(index)).unwrap(), (1, 1));
    }

    #[test]
    fn missing_devices_list_the_available_ones() {
        let platforms = machine();
        let error = |spec| choose_device(&platforms[..1], Some(spec)).unwrap_err().to_string();
        expect![[r#"no GPU OpenCL device found; devices: 0:0 cpu `epyc`"#]]
            .assert_eq(&error(DeviceSpec::Gpu));
        expect![[r#"platform 0 has no device 3; devices: 0:0 cpu `epyc`"#]]
            .assert_eq(&error(DeviceSpec::Index { platform: 0, device: 3 }));
        expect![[r#"no OpenCL platform 2; devices: 0:0 cpu `epyc`"#]]
            .assert_eq(&error(DeviceSpec::Index { platform: 2, device: 0 }));
    }
}
