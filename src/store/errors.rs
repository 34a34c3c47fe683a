//! object_store's errors as gdscan's typed ones, naming the object.

use crate::error::Error;

/// Maps `e`, raised by `op` on `object`, to the most specific variant.
pub(crate) fn from_store(object: &str, op: impl Into<String>, e: object_store::Error) -> Error {
    let object = object.to_string();
    match e {
        object_store::Error::NotFound { .. } => Error::ObjectNotFound { object, source: e },
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => {
            Error::StoreAccessDenied { object, source: e }
        }
        object_store::Error::Precondition { .. } => Error::ObjectChanged { object, source: e },
        _ => Error::Store {
            object,
            op: op.into(),
            source: e,
        },
    }
}
