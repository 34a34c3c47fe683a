//! What a worker does with one task, per route.

use std::time::Instant;

use super::counters::{device_counters, global_counters, IoPath};
use super::cufile_loop::{transfer_all, Shortfall};
use super::error::{IoError, Result};
use super::lane::Lane;
use super::memory::Memory;
use super::mmap::{page_span, Mapping};
use super::posix;
use super::request::{Request, Transfer};
use super::tasks::Task;
use crate::cuda::HostRegistration;

/// Runs one task of `req`. `lane` is the worker's lane to the request's
/// device (None for host memory).
pub(crate) fn run_task(req: &Request, task: Task, lane: Option<&mut Lane>) -> Result<()> {
    let start = Instant::now();
    let path = match (&req.transfer, lane) {
        (Transfer::ReadHost, _) => {
            read_host(req, task)?;
            IoPath::PosixHost
        }
        (Transfer::WriteHost, _) => {
            write_host(req, task)?;
            IoPath::PosixHost
        }
        (Transfer::ReadCuFile, _) => {
            cufile_task(req, task, false)?;
            IoPath::CuFile
        }
        (Transfer::WriteCuFile, _) => {
            cufile_task(req, task, true)?;
            IoPath::CuFile
        }
        (Transfer::ReadDeviceMmap(mapping), Some(lane)) => {
            if read_device_mmap(req, task, mapping, lane)? {
                IoPath::MmapRegistered
            } else {
                read_device_bounce(req, task, lane)?;
                IoPath::PosixDeviceBounce
            }
        }
        (Transfer::ReadDeviceBounce, Some(lane)) => {
            read_device_bounce(req, task, lane)?;
            IoPath::PosixDeviceBounce
        }
        (Transfer::WriteDevice, Some(lane)) => {
            write_device(req, task, lane)?;
            IoPath::PosixDeviceBounce
        }
        (_, None) => unreachable!("device routes always get a lane"),
    };
    let elapsed = start.elapsed();
    req.file.counters.add(path, task.len as u64, elapsed);
    global_counters().add(path, task.len as u64, elapsed);
    if let Memory::Device { device, .. } = req.memory {
        device_counters(device.ordinal()).add(path, task.len as u64, elapsed);
    }
    Ok(())
}

fn host_ptr(memory: &Memory) -> *mut u8 {
    match *memory {
        Memory::Host { ptr, .. } => ptr,
        Memory::Device { .. } => unreachable!("host route with device memory"),
    }
}

fn device_ptr(memory: &Memory) -> u64 {
    match *memory {
        Memory::Device { ptr, .. } => ptr,
        Memory::Host { .. } => unreachable!("device route with host memory"),
    }
}

/// Converts a negative `cuFileRead`/`cuFileWrite` return into an error:
/// -1 means errno is set, other negatives are cuFile codes.
fn cufile_error(op: &'static str, path: &str, ret: isize) -> IoError {
    if ret == -1 {
        IoError::os(path, op, std::io::Error::last_os_error())
    } else {
        crate::cufile::status::code_error(op, (-ret) as i32).into()
    }
}

fn short_read(req: &Request, offset: u64, expected: usize, got: usize) -> IoError {
    IoError::ShortRead {
        path: req.file.path.clone(),
        offset,
        expected,
        got,
    }
}

fn read_host(req: &Request, task: Task) -> Result<()> {
    // SAFETY: the request's memory is valid for its length (IoBufMut), tasks
    // are disjoint and inside it.
    let dst = unsafe {
        std::slice::from_raw_parts_mut(host_ptr(&req.memory).add(task.buffer_offset), task.len)
    };
    let got = posix::read_into(
        &req.file.fds,
        &req.file.path,
        task.file_offset,
        dst,
        req.use_direct,
    )?;
    if got < task.len {
        return Err(short_read(req, task.file_offset, task.len, got));
    }
    Ok(())
}

fn write_host(req: &Request, task: Task) -> Result<()> {
    // SAFETY: as in read_host, for reads.
    let src = unsafe {
        std::slice::from_raw_parts(host_ptr(&req.memory).add(task.buffer_offset), task.len)
    };
    posix::write_from(
        &req.file.fds,
        &req.file.path,
        task.file_offset,
        src,
        req.use_direct,
    )
}

fn read_device_bounce(req: &Request, task: Task, lane: &mut Lane) -> Result<()> {
    let dst = device_ptr(&req.memory) + task.buffer_offset as u64;
    let chunk = req.bounce_size.min(lane.bounce_size()).max(1);
    let mut done = 0;
    while done < task.len {
        let n = chunk.min(task.len - done);
        let at = task.file_offset + done as u64;
        let slot = lane.next_slot()?;
        let buf = lane.bounce(slot)?;
        let got = posix::read_into(
            &req.file.fds,
            &req.file.path,
            at,
            &mut buf.as_mut_slice()[..n],
            req.use_direct,
        )?;
        if got < n {
            return Err(short_read(req, at, n, got));
        }
        let src = buf.as_ptr();
        // SAFETY: the bounce buffer stays in the slot, untouched, until the
        // slot's event (recorded next) completes; `dst..dst+n` is inside the
        // request's device memory.
        unsafe { lane.stream().copy_to_device(dst + done as u64, src, n)? };
        lane.commit(slot, None)?;
        done += n;
    }
    Ok(())
}

/// Returns false (nothing done) when the pages cannot be registered, so the
/// caller falls back to the bounce route for this task.
fn read_device_mmap(req: &Request, task: Task, mapping: &Mapping, lane: &mut Lane) -> Result<bool> {
    let addr = mapping.address_of(task.file_offset);
    let (start, span) = page_span(addr as usize, task.len);
    let slot = lane.next_slot()?;
    // SAFETY: the mapping lives in the request, which outlives the lane's
    // slots (they are drained before the helper finishes).
    let registration = match unsafe {
        HostRegistration::register_read_only(lane.device(), start as *const u8, span)
    } {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(path = %req.file.path, error = %e, "page registration failed; using bounce buffers");
            return Ok(false);
        }
    };
    let dst = device_ptr(&req.memory) + task.buffer_offset as u64;
    // SAFETY: registered pages stay registered and mapped until the slot's
    // event completes; the destination is inside the request's memory.
    unsafe { lane.stream().copy_to_device(dst, addr, task.len)? };
    lane.commit(slot, Some(registration))?;
    Ok(true)
}

fn write_device(req: &Request, task: Task, lane: &mut Lane) -> Result<()> {
    let src = device_ptr(&req.memory) + task.buffer_offset as u64;
    let chunk = req.bounce_size.min(lane.bounce_size()).max(1);
    let mut done = 0;
    while done < task.len {
        let n = chunk.min(task.len - done);
        let slot = lane.next_slot()?;
        let buf = lane.bounce(slot)?;
        let ptr = buf.as_mut_ptr();
        // SAFETY: the bounce buffer holds at least `n` bytes and is only
        // read after the copy completes (wait below).
        unsafe { lane.stream().copy_to_host(ptr, src + done as u64, n)? };
        lane.commit(slot, None)?;
        lane.wait(slot)?;
        let buf = lane.bounce(slot)?;
        posix::write_from(
            &req.file.fds,
            &req.file.path,
            task.file_offset + done as u64,
            &buf.as_slice()[..n],
            req.use_direct,
        )?;
        done += n;
    }
    Ok(())
}

/// One task through `cuFileRead`/`cuFileWrite`, looping over partial transfers.
fn cufile_task(req: &Request, task: Task, write: bool) -> Result<()> {
    let handle = req
        .file
        .cufile
        .get()
        .expect("cuFile routes are only chosen for registered files");
    let base = device_ptr(&req.memory);
    let op = if write { "cuFileWrite" } else { "cuFileRead" };
    let moved = transfer_all(task.len, |asked, done| {
        let at = task.file_offset + done as u64;
        // SAFETY: the destination (or source) range lies inside the request's
        // device memory, which outlives the request.
        unsafe {
            if write {
                handle.write_raw(base, asked, at, task.buffer_offset + done)
            } else {
                handle.read_raw(base, asked, at, task.buffer_offset + done)
            }
        }
    });
    match moved {
        Ok(()) => Ok(()),
        Err(Shortfall::Failed { ret, .. }) => Err(cufile_error(op, &req.file.path, ret)),
        Err(Shortfall::Ended { done }) => Err(short_read(
            req,
            task.file_offset + done as u64,
            task.len - done,
            0,
        )),
        Err(Shortfall::Overcount { done, asked, ret }) => Err(IoError::Transfer {
            path: req.file.path.clone(),
            op,
            offset: task.file_offset + done as u64,
            len: asked,
            source: std::io::Error::other(format!(
                "cuFile reported {ret} bytes moved where {asked} were asked"
            )),
        }),
    }
}
