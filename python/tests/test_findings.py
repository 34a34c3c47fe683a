"""The files fuzzing found to make arrow-rs's decoders panic
(fuzz/findings/reader) through read_parquet(device=None): each ends with a
table or gdscan's typed error, and nothing is printed (the panic stops at
gdscan's border, silently)."""

import pathlib

import pytest

import gdscan

FINDINGS = pathlib.Path(__file__).resolve().parents[2] / "fuzz" / "findings" / "reader"
FILES = sorted(FINDINGS.glob("*.parquet"))
ABORTS = sorted((FINDINGS.parent / "reader-abort").glob("*.parquet"))


def test_the_findings_are_there():
    assert len(FILES) >= 60, FINDINGS


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_finding_ends_in_a_table_or_a_typed_error_silently(path, capfd):
    try:
        gdscan.read_parquet(str(path), device=None)
    except gdscan.GdscanError as e:
        assert str(e), path
    captured = capfd.readouterr()
    assert "panicked" not in captured.err, captured.err
    assert "backtrace" not in captured.err, captured.err


def test_some_findings_are_stopped_at_the_border(capfd):
    stopped = []
    for path in FILES:
        try:
            gdscan.read_parquet(str(path), device=None)
        except gdscan.ParquetError as e:
            if "stopped by an internal check" in str(e):
                assert path.name in str(e), e
                stopped.append(path.name)
    assert stopped, "some findings reach arrow-rs's panics"
    assert "panicked" not in capfd.readouterr().err


@pytest.mark.parametrize("path", ABORTS, ids=[p.name for p in ABORTS])
def test_abort_finding_is_a_typed_error(path, capfd):
    # arrow-rs alone aborts the process on these (an allocation sized by a
    # corrupt DELTA_BYTE_ARRAY count); gdscan refuses them first.
    with pytest.raises(gdscan.GdscanError, match="prefix stream counts"):
        gdscan.read_parquet(str(path), device=None)
    assert "backtrace" not in capfd.readouterr().err


def test_the_abort_findings_are_there():
    assert len(ABORTS) == 7, ABORTS
