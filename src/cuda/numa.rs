//! Which NUMA node a GPU hangs off, and pinning host memory there.
//!
//! On a host with several NUMA nodes, a bounce buffer on the far node costs
//! every byte a trip over the inter-socket link twice (the page-cache copy
//! into it, the GPU's DMA out of it). The node comes from sysfs
//! (`/sys/bus/pci/devices/<bus id>/numa_node`, -1 when the platform does
//! not say); pinned allocations for the device then prefer that node
//! (`set_mempolicy(MPOL_PREFERRED)` on the allocating thread around
//! `cuMemHostAlloc`, which faults the pages in). With one node nothing
//! changes.

use std::path::Path;

/// Where a device sits, as sysfs reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NumaPlacement {
    /// The device's PCI bus id, lower case (e.g. `0000:3b:00.0`).
    pub pci_bus_id: String,
    /// Its NUMA node (None when sysfs says -1 or has no entry).
    pub node: Option<usize>,
    /// NUMA nodes on the host (`/sys/devices/system/node/node*`).
    pub host_nodes: usize,
}

impl NumaPlacement {
    /// The node pinned memory for this device should prefer: Some only
    /// when the host has several nodes and the device's is known.
    pub fn preferred_node(&self) -> Option<usize> {
        if self.host_nodes > 1 {
            self.node
        } else {
            None
        }
    }
}

/// NUMA nodes on the host, from `root` (normally `/sys/devices/system/node`).
pub(crate) fn count_nodes(root: &Path) -> usize {
    std::fs::read_dir(root)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.strip_prefix("node")
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
                .count()
        })
        .unwrap_or(0)
        .max(1)
}

/// The node in a sysfs `numa_node` file's text (`-1` or absent: None).
pub(crate) fn parse_node(text: &str) -> Option<usize> {
    text.trim()
        .parse::<i64>()
        .ok()
        .and_then(|n| usize::try_from(n).ok())
}

/// The placement of the device with PCI bus id `bus_id`, read under `sys`
/// (normally `/sys`).
pub(crate) fn placement_under(sys: &Path, bus_id: &str) -> NumaPlacement {
    let id = bus_id.to_ascii_lowercase();
    let node = std::fs::read_to_string(sys.join("bus/pci/devices").join(&id).join("numa_node"))
        .ok()
        .and_then(|t| parse_node(&t));
    NumaPlacement {
        pci_bus_id: id,
        node,
        host_nodes: count_nodes(&sys.join("devices/system/node")),
    }
}

/// Runs `f` with the calling thread's memory policy preferring `node`
/// (restored to the default afterwards); with None, just runs `f`.
pub(crate) fn with_preferred_node<T>(node: Option<usize>, f: impl FnOnce() -> T) -> T {
    let Some(node) = node else {
        return f();
    };
    const MPOL_DEFAULT: libc::c_long = 0;
    const MPOL_PREFERRED: libc::c_long = 1;
    let bits = 8 * std::mem::size_of::<libc::c_ulong>();
    let mut mask = vec![0 as libc::c_ulong; node / bits + 1];
    mask[node / bits] |= 1 << (node % bits);
    // SAFETY: the mask holds `mask.len() * bits` bits, as passed; the call
    // only changes this thread's allocation policy.
    let set = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            MPOL_PREFERRED,
            mask.as_ptr(),
            (mask.len() * bits + 1) as libc::c_ulong,
        )
    };
    if set != 0 {
        tracing::debug!(node, error = %std::io::Error::last_os_error(), "set_mempolicy failed; pinning without a node preference");
    }
    let out = f();
    if set == 0 {
        // SAFETY: back to the default policy (no mask).
        unsafe {
            libc::syscall(
                libc::SYS_set_mempolicy,
                MPOL_DEFAULT,
                std::ptr::null::<libc::c_ulong>(),
                0 as libc::c_ulong,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_node_and_the_node_count_from_a_sysfs_tree() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path();
        let dev = sys.join("bus/pci/devices/0000:3b:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("numa_node"), "1\n").unwrap();
        for n in ["node0", "node1", "possible"] {
            std::fs::create_dir_all(sys.join("devices/system/node").join(n)).unwrap();
        }
        let p = placement_under(sys, "0000:3B:00.0");
        assert_eq!(p.node, Some(1));
        assert_eq!(p.host_nodes, 2);
        assert_eq!(p.preferred_node(), Some(1));
    }

    #[test]
    fn one_node_or_an_unknown_node_prefers_nothing() {
        assert_eq!(parse_node("-1\n"), None);
        assert_eq!(parse_node("0"), Some(0));
        let one = NumaPlacement {
            pci_bus_id: "x".into(),
            node: Some(0),
            host_nodes: 1,
        };
        assert_eq!(one.preferred_node(), None);
        let dir = tempfile::tempdir().unwrap();
        let p = placement_under(dir.path(), "0000:01:00.0");
        assert_eq!((p.node, p.host_nodes), (None, 1));
    }

    #[test]
    fn a_preferred_node_runs_the_closure_and_restores_the_policy() {
        // Node 0 exists on every Linux host; the call must not fail the closure.
        assert_eq!(with_preferred_node(Some(0), || 7), 7);
        assert_eq!(with_preferred_node(None, || 8), 8);
    }
}
