//! cuFile status codes: names, numbers and conversion into [`CuFileError`].

use super::error::CuFileError;
use super::library::RawStatus;

/// cuFile's error codes with their names (cufile.h, CUDA 13.0).
const NAMES: &[(i32, &str)] = &[
    (0, "CU_FILE_SUCCESS"),
    (5001, "CU_FILE_DRIVER_NOT_INITIALIZED"),
    (5002, "CU_FILE_DRIVER_INVALID_PROPS"),
    (5003, "CU_FILE_DRIVER_UNSUPPORTED_LIMIT"),
    (5004, "CU_FILE_DRIVER_VERSION_MISMATCH"),
    (5005, "CU_FILE_DRIVER_VERSION_READ_ERROR"),
    (5006, "CU_FILE_DRIVER_CLOSING"),
    (5007, "CU_FILE_PLATFORM_NOT_SUPPORTED"),
    (5008, "CU_FILE_IO_NOT_SUPPORTED"),
    (5009, "CU_FILE_DEVICE_NOT_SUPPORTED"),
    (5010, "CU_FILE_NVFS_DRIVER_ERROR"),
    (5011, "CU_FILE_CUDA_DRIVER_ERROR"),
    (5012, "CU_FILE_CUDA_POINTER_INVALID"),
    (5013, "CU_FILE_CUDA_MEMORY_TYPE_INVALID"),
    (5014, "CU_FILE_CUDA_POINTER_RANGE_ERROR"),
    (5015, "CU_FILE_CUDA_CONTEXT_MISMATCH"),
    (5016, "CU_FILE_INVALID_MAPPING_SIZE"),
    (5017, "CU_FILE_INVALID_MAPPING_RANGE"),
    (5018, "CU_FILE_INVALID_FILE_TYPE"),
    (5019, "CU_FILE_INVALID_FILE_OPEN_FLAG"),
    (5020, "CU_FILE_DIO_NOT_SET"),
    (5022, "CU_FILE_INVALID_VALUE"),
    (5023, "CU_FILE_MEMORY_ALREADY_REGISTERED"),
    (5024, "CU_FILE_MEMORY_NOT_REGISTERED"),
    (5025, "CU_FILE_PERMISSION_DENIED"),
    (5026, "CU_FILE_DRIVER_ALREADY_OPEN"),
    (5027, "CU_FILE_HANDLE_NOT_REGISTERED"),
    (5028, "CU_FILE_HANDLE_ALREADY_REGISTERED"),
    (5029, "CU_FILE_DEVICE_NOT_FOUND"),
    (5030, "CU_FILE_INTERNAL_ERROR"),
    (5031, "CU_FILE_GETNEWFD_FAILED"),
    (5033, "CU_FILE_NVFS_SETUP_ERROR"),
    (5034, "CU_FILE_IO_DISABLED"),
    (5035, "CU_FILE_BATCH_SUBMIT_FAILED"),
    (5036, "CU_FILE_GPU_MEMORY_PINNING_FAILED"),
    (5037, "CU_FILE_BATCH_FULL"),
    (5038, "CU_FILE_ASYNC_NOT_SUPPORTED"),
    (5039, "CU_FILE_INTERNAL_BATCH_SETUP_ERROR"),
    (5040, "CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR"),
    (5041, "CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR"),
    (5042, "CU_FILE_INTERNAL_BATCH_CANCEL_ERROR"),
    (5043, "CU_FILE_NOMEM_ERROR"),
    (5044, "CU_FILE_IO_ERROR"),
    (5045, "CU_FILE_INTERNAL_BUF_REGISTER_ERROR"),
    (5046, "CU_FILE_HASH_OPR_ERROR"),
    (5047, "CU_FILE_INVALID_CONTEXT_ERROR"),
    (5048, "CU_FILE_NVFS_INTERNAL_DRIVER_ERROR"),
    (5049, "CU_FILE_BATCH_NOCOMPAT_ERROR"),
    (5050, "CU_FILE_IO_MAX_ERROR"),
];

/// The name of a cuFile code, or "CU_FILE_UNKNOWN_ERROR".
pub(crate) fn code_name(code: i32) -> &'static str {
    NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, n)| *n)
        .unwrap_or("CU_FILE_UNKNOWN_ERROR")
}

/// "NAME (code)" for messages, with the CUDA code when there is one.
pub(crate) fn describe(status: RawStatus) -> String {
    if status.cu_err != 0 {
        format!(
            "{} ({}), CUDA error {}",
            code_name(status.err),
            status.err,
            status.cu_err
        )
    } else {
        format!("{} ({})", code_name(status.err), status.err)
    }
}

/// `Ok` for success, else a [`CuFileError::Call`] naming the call.
pub(crate) fn check(op: &'static str, status: RawStatus) -> Result<(), CuFileError> {
    if status.err == 0 {
        Ok(())
    } else {
        Err(CuFileError::Call {
            op,
            name: code_name(status.err).to_string(),
            code: status.err,
            cuda_code: status.cu_err,
        })
    }
}

/// The error of a `cuFileRead`/`cuFileWrite` that returned the negative
/// cuFile code `code` (a return of -1 means errno instead; the engine maps
/// that one).
pub(crate) fn code_error(op: &'static str, code: i32) -> CuFileError {
    CuFileError::Call {
        op,
        name: code_name(code).to_string(),
        code,
        cuda_code: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_known_codes_and_flags_unknown_ones() {
        assert_eq!(code_name(5027), "CU_FILE_HANDLE_NOT_REGISTERED");
        assert_eq!(code_name(0), "CU_FILE_SUCCESS");
        assert_eq!(code_name(4242), "CU_FILE_UNKNOWN_ERROR");
        assert_eq!(
            describe(RawStatus {
                err: 5027,
                cu_err: 0
            }),
            "CU_FILE_HANDLE_NOT_REGISTERED (5027)"
        );
    }

    #[test]
    fn check_turns_codes_into_typed_errors() {
        assert!(check("x", RawStatus { err: 0, cu_err: 0 }).is_ok());
        let e = check(
            "cuFileHandleRegister",
            RawStatus {
                err: 5027,
                cu_err: 0,
            },
        )
        .unwrap_err();
        assert!(matches!(e, CuFileError::Call { code: 5027, .. }));
        assert!(e.to_string().contains("CU_FILE_HANDLE_NOT_REGISTERED"));
        assert!(e.to_string().contains("cuFileHandleRegister"));
    }
}
