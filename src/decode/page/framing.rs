//! What a page's stored bytes say about where it can be decompressed,
//! read without decompressing: the Hadoop framing of legacy LZ4 pages and
//! the trailing size of a GZIP member.

/// One block of a Hadoop-framed LZ4 page, offsets from the page body's
/// start (`src`) and from its decompressed start (`dst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HadoopBlock {
    /// Offset of the raw LZ4 block in the body (after its 8-byte prefix).
    pub src_offset: usize,
    /// Bytes of the raw LZ4 block.
    pub src_len: usize,
    /// Offset of its output in the page's decompressed bytes.
    pub dst_offset: usize,
    /// Bytes of its output.
    pub dst_len: usize,
}

/// The blocks of a legacy LZ4 page body when it is Hadoop-framed: repeated
/// `[u32 BE decompressed size][u32 BE compressed size][raw LZ4 block]`
/// that tile `body` exactly and whose sizes add up to `len`, the page's
/// decompressed size. `None` when the framing does not fit (the page is
/// then an LZ4 frame or one raw block), or a block is empty.
pub fn hadoop_blocks(body: &[u8], len: usize) -> Option<Vec<HadoopBlock>> {
    let mut blocks = Vec::new();
    let (mut at, mut out) = (0usize, 0usize);
    while at < body.len() {
        let prefix = body.get(at..at.checked_add(8)?)?;
        let dst_len = u32::from_be_bytes(prefix[..4].try_into().ok()?) as usize;
        let src_len = u32::from_be_bytes(prefix[4..].try_into().ok()?) as usize;
        at += 8;
        let end = at.checked_add(src_len)?;
        if src_len == 0 || dst_len == 0 || end > body.len() {
            return None;
        }
        blocks.push(HadoopBlock {
            src_offset: at,
            src_len,
            dst_offset: out,
            dst_len,
        });
        at = end;
        out = out.checked_add(dst_len)?;
    }
    (out == len && !blocks.is_empty()).then_some(blocks)
}

/// Whether a GZIP page body can be one member holding `len` bytes: its
/// last four bytes (the member's ISIZE, little-endian, the decompressed
/// length mod 2^32) say `len`. A page of several members (each with its own
/// ISIZE) fails this unless its earlier members are empty.
pub fn gzip_one_member(body: &[u8], len: usize) -> bool {
    body.len() >= 18 && body[body.len() - 4..] == (len as u32).to_le_bytes()
}
