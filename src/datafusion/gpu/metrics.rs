//! The GPU path's metrics in the scan's metrics set (`EXPLAIN ANALYZE`
//! shows them on the `DataSourceExec`): files and rows per path, time
//! waiting for the decoder, bytes and time copied back to the host, and
//! one labelled counter per file naming where it was decoded and why.

use ::datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricCategory, MetricType, Time,
};

use crate::datafusion::metrics::{
    COPY_BACK_BYTES, COPY_BACK_TIME, CPU_ROWS, FALLBACK_FILES, FILE_PATH, GPU_DECODE_TIME,
    GPU_FILES, GPU_ROWS,
};

/// A partition's GPU metrics.
#[derive(Debug, Clone)]
pub(crate) struct GpuMetrics {
    set: ExecutionPlanMetricsSet,
    partition: usize,
    pub(crate) gpu_files: Count,
    pub(crate) fallback_files: Count,
    pub(crate) gpu_rows: Count,
    pub(crate) cpu_rows: Count,
    pub(crate) decode_time: Time,
    pub(crate) copy_back_bytes: Count,
    pub(crate) copy_back_time: Time,
}

fn builder(set: &ExecutionPlanMetricsSet) -> MetricBuilder<'_> {
    MetricBuilder::new(set).with_type(MetricType::Summary)
}

impl GpuMetrics {
    /// Registers `partition`'s metrics in `set` (the scan's).
    pub(crate) fn new(set: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let count = |name: &'static str| builder(set).counter(name, partition);
        GpuMetrics {
            set: set.clone(),
            partition,
            gpu_files: count(GPU_FILES),
            fallback_files: count(FALLBACK_FILES),
            gpu_rows: count(GPU_ROWS),
            cpu_rows: count(CPU_ROWS),
            decode_time: builder(set).subset_time(GPU_DECODE_TIME, partition),
            copy_back_bytes: builder(set)
                .with_category(MetricCategory::Bytes)
                .counter(COPY_BACK_BYTES, partition),
            copy_back_time: builder(set).subset_time(COPY_BACK_TIME, partition),
        }
    }

    /// Notes that `file` was decoded on the GPU.
    pub(crate) fn on_gpu(&self, file: &str) {
        self.gpu_files.add(1);
        self.file_path(file, "gpu", "");
    }

    /// Notes that `file` was decoded on the host, and why (logged once
    /// per reason).
    pub(crate) fn on_cpu(&self, file: &str, reason: &str) {
        self.fallback_files.add(1);
        self.file_path(file, "cpu", reason);
        super::fallback::log_once(file, reason);
    }

    fn file_path(&self, file: &str, path: &'static str, reason: &str) {
        let mut b = builder(&self.set)
            .with_new_label("file", file.to_string())
            .with_new_label("path", path);
        if !reason.is_empty() {
            b = b.with_new_label("reason", reason.to_string());
        }
        b.counter(FILE_PATH, self.partition).add(1);
    }
}
