//! Page headers: a Thrift compact-protocol reader and the `PageHeader`
//! struct of the Parquet format, parsed on the host.
//!
//! The parquet crate parses page headers too, but its `PageHeader` is not
//! public. This reader is written for the decoder's needs: it reads only the
//! fields the decoder uses, skips every other field (statistics, unknown
//! future fields) with a bounded nesting depth, never reads past the slice
//! and never panics: any malformed input is a typed [`PageError`].

use parquet::basic::{Encoding, PageType};

/// Largest page size (compressed or uncompressed) the decoder accepts: a
/// header claiming more is corrupt for every writer we know (pages are
/// usually about 1 MiB), and the bound keeps scratch allocations sane.
pub const MAX_PAGE_BYTES: u32 = 1 << 30;

/// Deepest nesting of structs, lists and maps the reader walks through when
/// skipping fields it does not use.
pub const MAX_DEPTH: usize = 16;

/// Why a page header could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PageError {
    /// The bytes end inside the header.
    #[error("page header truncated at byte {at} (the bytes hold {len})")]
    Truncated {
        /// Where more bytes were needed.
        at: usize,
        /// How many bytes there were.
        len: usize,
    },
    /// A varint runs longer than its type allows.
    #[error("varint at byte {at} is too long")]
    VarintTooLong {
        /// Where the varint starts.
        at: usize,
    },
    /// A varint's value does not fit the field's type.
    #[error("value at byte {at} does not fit in 32 bits")]
    IntOutOfRange {
        /// Where the value starts.
        at: usize,
    },
    /// A wire type the compact protocol does not define.
    #[error("unknown Thrift compact type {wire_type} at byte {at}")]
    UnknownWireType {
        /// The type nibble.
        wire_type: u8,
        /// Where it was read.
        at: usize,
    },
    /// A known field has the wrong wire type.
    #[error("field {field} has Thrift type {wire_type}, expected {expected}")]
    WrongFieldType {
        /// Field name.
        field: &'static str,
        /// Type found.
        wire_type: u8,
        /// Type expected.
        expected: u8,
    },
    /// Structs, lists or maps nested deeper than [`MAX_DEPTH`].
    #[error("header nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// A required field is absent.
    #[error("required field {0} is missing")]
    MissingField(&'static str),
    /// A page type the format does not define.
    #[error("unknown page type {0}")]
    UnknownPageType(i32),
    /// An encoding the format does not define.
    #[error("field {field} holds unknown encoding {value}")]
    UnknownEncoding {
        /// Field name.
        field: &'static str,
        /// Value found.
        value: i32,
    },
    /// A size or count that is negative.
    #[error("field {field} is negative ({value})")]
    Negative {
        /// Field name.
        field: &'static str,
        /// Value found.
        value: i32,
    },
    /// A page size past [`MAX_PAGE_BYTES`].
    #[error("field {field} is {value}, more than the {MAX_PAGE_BYTES} bytes a page may hold")]
    TooLarge {
        /// Field name.
        field: &'static str,
        /// Value found.
        value: i32,
    },
    /// The header of the page's type is absent (e.g. a DATA_PAGE without
    /// its `data_page_header`).
    #[error("{page_type} page has no {field}")]
    MissingSubHeader {
        /// Page type.
        page_type: PageType,
        /// The sub-header expected.
        field: &'static str,
    },
    /// A v2 page whose level lengths exceed its sizes.
    #[error(
        "DATA_PAGE_V2 levels ({levels} bytes) exceed its compressed ({compressed}) or uncompressed ({uncompressed}) size"
    )]
    LevelsTooLong {
        /// Repetition plus definition level bytes.
        levels: u64,
        /// Compressed page size.
        compressed: u32,
        /// Uncompressed page size.
        uncompressed: u32,
    },
}

/// `DataPageHeader` (data page v1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPageHeader {
    /// Values in the page, nulls included (for flat columns: its rows).
    pub num_values: u32,
    /// Encoding of the values.
    pub encoding: Encoding,
    /// Encoding of the definition levels.
    pub def_level_encoding: Encoding,
    /// Encoding of the repetition levels.
    pub rep_level_encoding: Encoding,
}

/// `DataPageHeaderV2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPageHeaderV2 {
    /// Values in the page, nulls included.
    pub num_values: u32,
    /// Nulls in the page.
    pub num_nulls: u32,
    /// Rows in the page.
    pub num_rows: u32,
    /// Encoding of the values.
    pub encoding: Encoding,
    /// Bytes of definition levels (after the repetition levels, never
    /// compressed).
    pub def_levels_len: u32,
    /// Bytes of repetition levels (at the start of the page, never
    /// compressed).
    pub rep_levels_len: u32,
    /// Whether the values part is compressed (the format's default: true).
    pub is_compressed: bool,
}

impl DataPageHeaderV2 {
    /// Bytes of levels at the start of the page body.
    pub fn levels_len(&self) -> u64 {
        u64::from(self.def_levels_len) + u64::from(self.rep_levels_len)
    }
}

/// `DictionaryPageHeader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DictionaryPageHeader {
    /// Entries in the dictionary.
    pub num_values: u32,
    /// Encoding of the entries (PLAIN or PLAIN_DICTIONARY, both plain).
    pub encoding: Encoding,
    /// Whether the entries are sorted.
    pub is_sorted: bool,
}

/// The type-specific part of a page header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// DATA_PAGE.
    Data(DataPageHeader),
    /// DATA_PAGE_V2.
    DataV2(DataPageHeaderV2),
    /// DICTIONARY_PAGE.
    Dictionary(DictionaryPageHeader),
    /// INDEX_PAGE (unused by writers; readers skip it).
    Index,
}

/// A parsed page header: what the decoder needs of the format's `PageHeader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageHeader {
    /// Bytes of the page body once decompressed (v2: levels included).
    pub uncompressed_size: u32,
    /// Bytes of the page body as stored, after the header.
    pub compressed_size: u32,
    /// CRC32 of the body as stored, when the writer gave one.
    pub crc: Option<u32>,
    /// The type-specific header.
    pub kind: PageKind,
}

impl PageHeader {
    /// The page type.
    pub fn page_type(&self) -> PageType {
        match self.kind {
            PageKind::Data(_) => PageType::DATA_PAGE,
            PageKind::DataV2(_) => PageType::DATA_PAGE_V2,
            PageKind::Dictionary(_) => PageType::DICTIONARY_PAGE,
            PageKind::Index => PageType::INDEX_PAGE,
        }
    }

    /// Whether this is a data page (v1 or v2).
    pub fn is_data(&self) -> bool {
        matches!(self.kind, PageKind::Data(_) | PageKind::DataV2(_))
    }

    /// Values in the page (nulls included), or entries of a dictionary; 0
    /// for an index page.
    pub fn num_values(&self) -> u32 {
        match self.kind {
            PageKind::Data(h) => h.num_values,
            PageKind::DataV2(h) => h.num_values,
            PageKind::Dictionary(h) => h.num_values,
            PageKind::Index => 0,
        }
    }

    /// The values' encoding (data and dictionary pages).
    pub fn encoding(&self) -> Option<Encoding> {
        match self.kind {
            PageKind::Data(h) => Some(h.encoding),
            PageKind::DataV2(h) => Some(h.encoding),
            PageKind::Dictionary(h) => Some(h.encoding),
            PageKind::Index => None,
        }
    }
}

// Thrift compact wire types.
const T_STOP: u8 = 0;
const T_TRUE: u8 = 1;
const T_FALSE: u8 = 2;
const T_BYTE: u8 = 3;
const T_I16: u8 = 4;
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_DOUBLE: u8 = 7;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_SET: u8 = 10;
const T_MAP: u8 = 11;
const T_STRUCT: u8 = 12;
const T_UUID: u8 = 13;

/// A Thrift compact-protocol reader over a byte slice: every read is
/// bounds-checked, every skip bounded in depth.
#[derive(Debug, Clone)]
pub struct CompactReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

/// A struct field's header: its id and wire type (never the stop marker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldHeader {
    /// Field id.
    pub id: i16,
    /// Wire type (1 and 2 are booleans true and false, with no payload).
    pub wire_type: u8,
}

impl<'a> CompactReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        CompactReader { bytes, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn truncated(&self, at: usize) -> PageError {
        PageError::Truncated {
            at,
            len: self.bytes.len(),
        }
    }

    /// One byte.
    pub fn read_byte(&mut self) -> Result<u8, PageError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.truncated(self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn skip_bytes(&mut self, n: u64) -> Result<(), PageError> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err(self.truncated(self.bytes.len()));
        }
        self.pos += n as usize;
        Ok(())
    }

    /// An unsigned LEB128 varint of at most 10 bytes (64 bits).
    pub fn read_varint(&mut self) -> Result<u64, PageError> {
        let start = self.pos;
        let mut value = 0u64;
        for i in 0..10 {
            let b = self.read_byte()?;
            let part = u64::from(b & 0x7f);
            if i == 9 && part > 1 {
                return Err(PageError::VarintTooLong { at: start });
            }
            value |= part << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(PageError::VarintTooLong { at: start })
    }

    /// A zigzag-encoded i64.
    pub fn read_i64(&mut self) -> Result<i64, PageError> {
        let v = self.read_varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A zigzag-encoded i32 (also i16 and enums).
    pub fn read_i32(&mut self) -> Result<i32, PageError> {
        let at = self.pos;
        let v = self.read_i64()?;
        i32::try_from(v).map_err(|_| PageError::IntOutOfRange { at })
    }

    /// The next field header, or None at the struct's end (STOP).
    /// `last_id` is the previous field's id in this struct (0 at its start).
    pub fn read_field_header(&mut self, last_id: i16) -> Result<Option<FieldHeader>, PageError> {
        let at = self.pos;
        let b = self.read_byte()?;
        let wire_type = b & 0x0f;
        if wire_type == T_STOP {
            return Ok(None);
        }
        let delta = b >> 4;
        let id = if delta == 0 {
            let v = self.read_i32()?;
            i16::try_from(v).map_err(|_| PageError::IntOutOfRange { at })?
        } else {
            last_id.wrapping_add(i16::from(delta))
        };
        Ok(Some(FieldHeader { id, wire_type }))
    }

    /// A list (or set) header: element type and element count.
    fn read_list_header(&mut self) -> Result<(u8, u64), PageError> {
        let b = self.read_byte()?;
        let elem = b & 0x0f;
        let size = match b >> 4 {
            15 => self.read_varint()?,
            n => u64::from(n),
        };
        Ok((elem, size))
    }

    /// Skips one value of wire type `wire_type`, nested at most
    /// `MAX_DEPTH - depth` levels further. Every element read consumes at
    /// least one byte, so a lying element count ends at the slice's end.
    pub fn skip(&mut self, wire_type: u8, depth: usize) -> Result<(), PageError> {
        if depth >= MAX_DEPTH {
            return Err(PageError::TooDeep);
        }
        let at = self.pos;
        match wire_type {
            T_TRUE | T_FALSE => Ok(()),
            T_BYTE => self.skip_bytes(1),
            T_I16 | T_I32 | T_I64 => self.read_varint().map(|_| ()),
            T_DOUBLE => self.skip_bytes(8),
            T_UUID => self.skip_bytes(16),
            T_BINARY => {
                let n = self.read_varint()?;
                self.skip_bytes(n)
            }
            T_LIST | T_SET => {
                let (elem, size) = self.read_list_header()?;
                for _ in 0..size {
                    self.skip_element(elem, depth + 1)?;
                }
                Ok(())
            }
            T_MAP => {
                let size = self.read_varint()?;
                if size == 0 {
                    return Ok(());
                }
                let types = self.read_byte()?;
                for _ in 0..size {
                    self.skip_element(types >> 4, depth + 1)?;
                    self.skip_element(types & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            T_STRUCT => {
                let mut last = 0;
                while let Some(f) = self.read_field_header(last)? {
                    self.skip(f.wire_type, depth + 1)?;
                    last = f.id;
                }
                Ok(())
            }
            other => Err(PageError::UnknownWireType {
                wire_type: other,
                at,
            }),
        }
    }

    /// Skips a list, set or map element: booleans there take one byte.
    fn skip_element(&mut self, wire_type: u8, depth: usize) -> Result<(), PageError> {
        match wire_type {
            T_TRUE | T_FALSE => self.skip_bytes(1),
            // A zero-size element would let a lying count spin without
            // consuming input.
            T_STOP => Err(PageError::UnknownWireType {
                wire_type,
                at: self.pos,
            }),
            _ => self.skip(wire_type, depth),
        }
    }
}

fn expect_type(field: &'static str, f: FieldHeader, expected: u8) -> Result<(), PageError> {
    if f.wire_type == expected {
        Ok(())
    } else {
        Err(PageError::WrongFieldType {
            field,
            wire_type: f.wire_type,
            expected,
        })
    }
}

fn read_i32_field(
    r: &mut CompactReader<'_>,
    field: &'static str,
    f: FieldHeader,
) -> Result<i32, PageError> {
    expect_type(field, f, T_I32)?;
    r.read_i32()
}

fn read_bool_field(field: &'static str, f: FieldHeader) -> Result<bool, PageError> {
    match f.wire_type {
        T_TRUE => Ok(true),
        T_FALSE => Ok(false),
        _ => Err(PageError::WrongFieldType {
            field,
            wire_type: f.wire_type,
            expected: T_TRUE,
        }),
    }
}

fn encoding_of(field: &'static str, value: i32) -> Result<Encoding, PageError> {
    Encoding::VARIANTS
        .iter()
        .copied()
        .find(|e| *e as i32 == value)
        .ok_or(PageError::UnknownEncoding { field, value })
}

fn read_encoding_field(
    r: &mut CompactReader<'_>,
    field: &'static str,
    f: FieldHeader,
) -> Result<Encoding, PageError> {
    let v = read_i32_field(r, field, f)?;
    encoding_of(field, v)
}

fn required<T>(v: Option<T>, field: &'static str) -> Result<T, PageError> {
    v.ok_or(PageError::MissingField(field))
}

fn count(field: &'static str, value: i32) -> Result<u32, PageError> {
    u32::try_from(value).map_err(|_| PageError::Negative { field, value })
}

fn size(field: &'static str, value: i32) -> Result<u32, PageError> {
    let v = count(field, value)?;
    if v > MAX_PAGE_BYTES {
        return Err(PageError::TooLarge { field, value });
    }
    Ok(v)
}

fn read_data_page_header(
    r: &mut CompactReader<'_>,
    depth: usize,
) -> Result<DataPageHeader, PageError> {
    if depth >= MAX_DEPTH {
        return Err(PageError::TooDeep);
    }
    let (mut num_values, mut encoding, mut def, mut rep) = (None, None, None, None);
    let mut last = 0;
    while let Some(f) = r.read_field_header(last)? {
        match f.id {
            1 => num_values = Some(read_i32_field(r, "num_values", f)?),
            2 => encoding = Some(read_encoding_field(r, "encoding", f)?),
            3 => def = Some(read_encoding_field(r, "definition_level_encoding", f)?),
            4 => rep = Some(read_encoding_field(r, "repetition_level_encoding", f)?),
            _ => r.skip(f.wire_type, depth + 1)?,
        }
        last = f.id;
    }
    Ok(DataPageHeader {
        num_values: count("num_values", required(num_values, "num_values")?)?,
        encoding: required(encoding, "encoding")?,
        def_level_encoding: required(def, "definition_level_encoding")?,
        rep_level_encoding: required(rep, "repetition_level_encoding")?,
    })
}

fn read_data_page_header_v2(
    r: &mut CompactReader<'_>,
    depth: usize,
) -> Result<DataPageHeaderV2, PageError> {
    if depth >= MAX_DEPTH {
        return Err(PageError::TooDeep);
    }
    let (mut num_values, mut num_nulls, mut num_rows, mut encoding) = (None, None, None, None);
    let (mut def_len, mut rep_len, mut is_compressed) = (None, None, true);
    let mut last = 0;
    while let Some(f) = r.read_field_header(last)? {
        match f.id {
            1 => num_values = Some(read_i32_field(r, "num_values", f)?),
            2 => num_nulls = Some(read_i32_field(r, "num_nulls", f)?),
            3 => num_rows = Some(read_i32_field(r, "num_rows", f)?),
            4 => encoding = Some(read_encoding_field(r, "encoding", f)?),
            5 => def_len = Some(read_i32_field(r, "definition_levels_byte_length", f)?),
            6 => rep_len = Some(read_i32_field(r, "repetition_levels_byte_length", f)?),
            7 => is_compressed = read_bool_field("is_compressed", f)?,
            _ => r.skip(f.wire_type, depth + 1)?,
        }
        last = f.id;
    }
    Ok(DataPageHeaderV2 {
        num_values: count("num_values", required(num_values, "num_values")?)?,
        num_nulls: count("num_nulls", required(num_nulls, "num_nulls")?)?,
        num_rows: count("num_rows", required(num_rows, "num_rows")?)?,
        encoding: required(encoding, "encoding")?,
        def_levels_len: size(
            "definition_levels_byte_length",
            required(def_len, "definition_levels_byte_length")?,
        )?,
        rep_levels_len: size(
            "repetition_levels_byte_length",
            required(rep_len, "repetition_levels_byte_length")?,
        )?,
        is_compressed,
    })
}

fn read_dictionary_page_header(
    r: &mut CompactReader<'_>,
    depth: usize,
) -> Result<DictionaryPageHeader, PageError> {
    if depth >= MAX_DEPTH {
        return Err(PageError::TooDeep);
    }
    let (mut num_values, mut encoding, mut is_sorted) = (None, None, false);
    let mut last = 0;
    while let Some(f) = r.read_field_header(last)? {
        match f.id {
            1 => num_values = Some(read_i32_field(r, "num_values", f)?),
            2 => encoding = Some(read_encoding_field(r, "encoding", f)?),
            3 => is_sorted = read_bool_field("is_sorted", f)?,
            _ => r.skip(f.wire_type, depth + 1)?,
        }
        last = f.id;
    }
    Ok(DictionaryPageHeader {
        num_values: count("num_values", required(num_values, "num_values")?)?,
        encoding: required(encoding, "encoding")?,
        is_sorted,
    })
}

/// Parses the page header at the start of `bytes`: the header and how many
/// bytes it took (the page body follows). Fields the decoder does not use
/// (statistics, unknown ones) are skipped; sizes are checked (not negative,
/// at most [`MAX_PAGE_BYTES`], v2 levels inside the page). Never reads past
/// `bytes`, never panics.
pub fn parse_page_header(bytes: &[u8]) -> Result<(PageHeader, usize), PageError> {
    let mut r = CompactReader::new(bytes);
    let (mut page_type, mut uncompressed, mut compressed, mut crc) = (None, None, None, None);
    let (mut data, mut data_v2, mut dict) = (None, None, None);
    let mut last = 0;
    while let Some(f) = r.read_field_header(last)? {
        match f.id {
            1 => page_type = Some(read_i32_field(&mut r, "type", f)?),
            2 => uncompressed = Some(read_i32_field(&mut r, "uncompressed_page_size", f)?),
            3 => compressed = Some(read_i32_field(&mut r, "compressed_page_size", f)?),
            4 => crc = Some(read_i32_field(&mut r, "crc", f)?),
            5 => {
                expect_type("data_page_header", f, T_STRUCT)?;
                data = Some(read_data_page_header(&mut r, 1)?);
            }
            7 => {
                expect_type("dictionary_page_header", f, T_STRUCT)?;
                dict = Some(read_dictionary_page_header(&mut r, 1)?);
            }
            8 => {
                expect_type("data_page_header_v2", f, T_STRUCT)?;
                data_v2 = Some(read_data_page_header_v2(&mut r, 1)?);
            }
            _ => r.skip(f.wire_type, 1)?,
        }
        last = f.id;
    }
    let page_type = required(page_type, "type")?;
    let uncompressed_size = size(
        "uncompressed_page_size",
        required(uncompressed, "uncompressed_page_size")?,
    )?;
    let compressed_size = size(
        "compressed_page_size",
        required(compressed, "compressed_page_size")?,
    )?;
    let page_type = PageType::VARIANTS
        .iter()
        .copied()
        .find(|t| *t as i32 == page_type)
        .ok_or(PageError::UnknownPageType(page_type))?;
    let missing = |field| PageError::MissingSubHeader { page_type, field };
    let kind = match page_type {
        PageType::DATA_PAGE => PageKind::Data(data.ok_or_else(|| missing("data_page_header"))?),
        PageType::DATA_PAGE_V2 => {
            let h = data_v2.ok_or_else(|| missing("data_page_header_v2"))?;
            if h.levels_len() > u64::from(compressed_size)
                || h.levels_len() > u64::from(uncompressed_size)
            {
                return Err(PageError::LevelsTooLong {
                    levels: h.levels_len(),
                    compressed: compressed_size,
                    uncompressed: uncompressed_size,
                });
            }
            PageKind::DataV2(h)
        }
        PageType::DICTIONARY_PAGE => {
            PageKind::Dictionary(dict.ok_or_else(|| missing("dictionary_page_header"))?)
        }
        PageType::INDEX_PAGE => PageKind::Index,
    };
    Ok((
        PageHeader {
            uncompressed_size,
            compressed_size,
            crc: crc.map(|c| c as u32),
            kind,
        },
        r.position(),
    ))
}
