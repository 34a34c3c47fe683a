//! Locations: which files a table location holds, and a reader for one.
//!
//! The only code of the module that knows what a location is: a local path
//! (or `file://` URL), a file or a folder; or the URL of one object in a
//! remote store (`s3://`, `gs://`, `az://`, `http(s)://`), read through
//! [`crate::store`].

use std::sync::Arc;

use super::error::Result;
use super::error::SqlError;
use super::options::GdsTableOptions;
use crate::engine::{Engine, FileHandle, IoError, OpenMode};
use crate::parquet::GdsParquetReader;
use crate::store::{classify, list_prefix, open_with, LocalSource, Source, Target};

/// One file of a table: where it is and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFile {
    /// The location, as [`open_reader`] takes it.
    pub location: String,
    /// Bytes.
    pub size: u64,
}

/// The files at `location`: the file itself, or the files of a folder whose
/// names end with `options.file_extension` (subfolders included, linked
/// folders not followed), sorted by location; a remote URL is one object,
/// or, ending with `/`, the objects under that prefix whose names end with
/// the extension. A folder or prefix without any is an error, as is a
/// missing path or object.
pub fn list_files(location: &str, options: &GdsTableOptions) -> Result<Vec<TableFile>> {
    // `classify` wants an object: the root of a bucket names none.
    if location.contains("://") && location.ends_with('/') && !location.starts_with("file:") {
        return listed(location, options);
    }
    let path = match classify(location)? {
        Target::Local(path) => path,
        Target::Remote { .. } => {
            let size = open_reader(location, options)?.source().size();
            return Ok(vec![TableFile {
                location: location.to_string(),
                size,
            }]);
        }
    };
    let path = path.as_path();
    let meta = std::fs::metadata(path).map_err(|e| IoError::from_open(location, e))?;
    if !meta.is_dir() {
        return Ok(vec![TableFile {
            location: path.display().to_string(),
            size: meta.len(),
        }]);
    }
    let mut files = Vec::new();
    let mut folders = vec![path.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let shown = folder.display().to_string();
        for entry in std::fs::read_dir(&folder).map_err(|e| IoError::from_open(&shown, e))? {
            let entry = entry.map_err(|e| IoError::os(&shown, "readdir", e))?;
            let p = entry.path();
            let shown = p.display().to_string();
            // Subfolders are entered, linked folders are not (no cycles);
            // a linked file counts as a file.
            let kind = entry
                .file_type()
                .map_err(|e| IoError::os(&shown, "stat", e))?;
            if kind.is_dir() {
                folders.push(p);
                continue;
            }
            let meta = std::fs::metadata(&p).map_err(|e| IoError::from_open(&shown, e))?;
            if meta.is_file() && shown.ends_with(&options.file_extension) {
                files.push(TableFile {
                    location: shown,
                    size: meta.len(),
                });
            }
        }
    }
    if files.is_empty() {
        return Err(SqlError::NoFiles {
            location: location.to_string(),
            kind: "files",
            extension: options.file_extension.clone(),
        });
    }
    files.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(files)
}

/// The objects under a remote prefix, as table files.
fn listed(location: &str, options: &GdsTableOptions) -> Result<Vec<TableFile>> {
    let files: Vec<TableFile> = list_prefix(location, &options.store, &options.file_extension)?
        .into_iter()
        .map(|o| TableFile {
            location: o.location,
            size: o.size,
        })
        .collect();
    if files.is_empty() {
        return Err(SqlError::NoFiles {
            location: location.to_string(),
            kind: "objects",
            extension: options.file_extension.clone(),
        });
    }
    Ok(files)
}

/// Opens gdscan's reader for the file or object at `location`: a local
/// file on `options.engine` (or the process-wide engine) in tasks of
/// `options.task_size`, a remote object with `options.store`; ranges merged
/// with `options.local_coalesce` or `options.coalesce`.
pub fn open_reader(location: &str, options: &GdsTableOptions) -> Result<GdsParquetReader> {
    let engine = match &options.engine {
        Some(engine) => engine.clone(),
        None => Engine::global()?,
    };
    let source: Arc<dyn Source> = match (classify(location)?, options.task_size) {
        (Target::Local(path), Some(task_size)) => Arc::new(LocalSource::new(Arc::new(
            FileHandle::open_with(engine, path, OpenMode::Read)?.with_task_size(task_size),
        ))?),
        _ => open_with(location, engine, &options.store)?,
    };
    let coalesce = match LocalSource::of(source.as_ref()) {
        Some(_) => options.local_coalesce,
        None => options.coalesce,
    };
    Ok(GdsParquetReader::new(source).with_coalesce(coalesce))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn local_readers_take_the_tables_task_size_or_the_engines() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.parquet");
        std::fs::write(&file, b"not read here").unwrap();
        let location = file.display().to_string();
        let settings = crate::config::Settings::builder()
            .task_size(4096)
            .build()
            .unwrap();
        let engine = Engine::new(settings).unwrap();
        let with = |task_size| GdsTableOptions {
            engine: Some(engine.clone()),
            task_size,
            ..GdsTableOptions::default()
        };
        let task_size = |reader: GdsParquetReader| {
            LocalSource::of(reader.source().as_ref()).map(|l| l.handle().task_size())
        };
        let handle_task_size =
            |options: &GdsTableOptions| task_size(open_reader(&location, options).unwrap());
        assert_eq!(handle_task_size(&with(Some(1 << 20))), Some(1 << 20));
        assert_eq!(handle_task_size(&with(None)), Some(4096));
        // The same through a file:// URL.
        let url = format!("file://{location}");
        let reader = open_reader(&url, &with(Some(3 << 20))).unwrap();
        assert_eq!(task_size(reader), Some(3 << 20));
    }

    #[test]
    fn a_folder_lists_its_files_with_the_extension_sorted_without_following_linked_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("b/c")).unwrap();
        std::fs::write(root.join("z.parquet"), b"12345").unwrap();
        std::fs::write(root.join("b/c/a.parquet"), b"1").unwrap();
        std::fs::write(root.join("b/notes.txt"), b"x").unwrap();
        std::fs::write(root.join("b/x.parquet.partial"), b"x").unwrap();
        std::os::unix::fs::symlink(root, root.join("b/loop")).unwrap();
        let found = list_files(root.to_str().unwrap(), &GdsTableOptions::default()).unwrap();
        let names: Vec<(String, u64)> = found
            .iter()
            .map(|f| {
                let rel = Path::new(&f.location).strip_prefix(root).unwrap();
                (rel.display().to_string(), f.size)
            })
            .collect();
        assert_eq!(
            names,
            vec![
                ("b/c/a.parquet".to_string(), 1),
                ("z.parquet".to_string(), 5)
            ]
        );
        let one = root.join("z.parquet");
        let single = list_files(one.to_str().unwrap(), &GdsTableOptions::default()).unwrap();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].location, one.to_str().unwrap());
    }
}
