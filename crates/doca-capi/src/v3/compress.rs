//! `doca_compress.h` of the task generation: the compress instance and its four tasks
//! (compress deflate, decompress deflate, decompress LZ4 stream, decompress LZ4 block),
//! each with the checksums of its uncompressed data once completed.

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::{doca_ctx3, doca_task};
use crate::common::{doca_error_t, ffi, ffi_value, handle, out_ptr, put};
use crate::v22::dev::doca_dev;
use crate::v22::mem::doca_buf;
use doca_compress::{Compress, task_checksums};

/// `struct doca_compress`.
pub type doca_compress3 = Lib3<Compress>;

/// `doca_compress_create`.
#[unsafe(export_name = "doca3__compress_create")]
pub unsafe extern "C" fn doca_compress_create(
    dev: *mut doca_dev,
    compress: *mut *mut doca_compress3,
) -> doca_error_t {
    let c = Compress::new();
    let ctx = c.as_ctx().clone();
    // SAFETY: NULL or a live device.
    unsafe { lib_create(dev, compress, c, ctx) }
}

/// `doca_compress_destroy`: only while idle.
#[unsafe(export_name = "doca3__compress_destroy")]
pub unsafe extern "C" fn doca_compress_destroy(compress: *mut doca_compress3) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(compress) }
}

/// `doca_compress_as_ctx`.
#[unsafe(export_name = "doca3__compress_as_ctx")]
pub unsafe extern "C" fn doca_compress_as_ctx(compress: *mut doca_compress3) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(compress) }
}

/// `doca_compress_cap_get_max_num_tasks`: the most tasks of all types together.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_cap_get_max_num_tasks(
    compress: *mut doca_compress3,
    max_num_tasks: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(compress, "compress") }?;
        let o = out_ptr(max_num_tasks, "max_num_tasks")?;
        // SAFETY: checked.
        unsafe { put(o, super::MAX_TASKS) };
        Ok(())
    })
}

// ---- tasks: from Compress's task table ----

doca_compress::compress_task_table!(crate::common::tasks::c3_tasks);

/// Which of a task's checksums a getter answers.
#[derive(Clone, Copy)]
enum Sum {
    Crc,
    Adler,
    /// xxHash-32 as DOCA's hardware reports it: its bytes in big-endian order (read as
    /// a number on this machine, the value byte-swapped), which is how NVIDIA's LZ4
    /// sample compares it with a frame's content checksum (`htobe32` of the frame's
    /// little-endian field).
    Xxh,
}

/// One of a completed task's checksums (0 for NULL, or before its first success).
fn checksum(task: *const doca_task, which: Sum) -> u32 {
    ffi_value(0, || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        let (crc, other) = task_checksums(t);
        Ok(match which {
            Sum::Crc => crc,
            Sum::Adler => other,
            Sum::Xxh => u32::from_be_bytes(other.to_le_bytes()),
        })
    })
}

/// `doca_compress_task_compress_deflate_get_crc_cs`: the CRC-32 of the uncompressed data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_compress_deflate_get_crc_cs(
    task: *const doca_compress_task_compress_deflate,
) -> u32 {
    checksum(task, Sum::Crc)
}

/// `doca_compress_task_compress_deflate_get_adler_cs`: the Adler-32 of the uncompressed data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_compress_deflate_get_adler_cs(
    task: *const doca_compress_task_compress_deflate,
) -> u32 {
    checksum(task, Sum::Adler)
}

/// `doca_compress_task_decompress_deflate_get_crc_cs`: the CRC-32 of the uncompressed data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_decompress_deflate_get_crc_cs(
    task: *const doca_compress_task_decompress_deflate,
) -> u32 {
    checksum(task, Sum::Crc)
}

/// `doca_compress_task_decompress_deflate_get_adler_cs`: the Adler-32 of the uncompressed data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_decompress_deflate_get_adler_cs(
    task: *const doca_compress_task_decompress_deflate,
) -> u32 {
    checksum(task, Sum::Adler)
}

/// `doca_compress_task_decompress_lz4_stream_get_crc_cs`: the CRC-32 of the uncompressed data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_decompress_lz4_stream_get_crc_cs(
    task: *const doca_compress_task_decompress_lz4_stream,
) -> u32 {
    checksum(task, Sum::Crc)
}

/// `doca_compress_task_decompress_lz4_stream_get_xxh_cs`: the xxHash-32 of the uncompressed data, in the hardware's byte order.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_decompress_lz4_stream_get_xxh_cs(
    task: *const doca_compress_task_decompress_lz4_stream,
) -> u32 {
    checksum(task, Sum::Xxh)
}

/// `doca_compress_task_decompress_lz4_block_get_crc_cs`: the CRC-32 of the uncompressed data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_decompress_lz4_block_get_crc_cs(
    task: *const doca_compress_task_decompress_lz4_block,
) -> u32 {
    checksum(task, Sum::Crc)
}

/// `doca_compress_task_decompress_lz4_block_get_xxh_cs`: the xxHash-32 of the uncompressed data, in the hardware's byte order.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_task_decompress_lz4_block_get_xxh_cs(
    task: *const doca_compress_task_decompress_lz4_block,
) -> u32 {
    checksum(task, Sum::Xxh)
}
