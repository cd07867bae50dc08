"""`vegasctl trace`'s CSV lines come from loader/tracecsv.c, written without printf
(the reader's formatting was most of what tracing cost the host, docs/DESIGN.md
§5.1). loader/tests/tracecsv_check.c sets each of a million drawn records against
the line printf made before, column for column: IPv4 and IPv6 connections, more of
them than the identity table keeps, a state changing under a kept identity, names
out of range, negative values and every field's extremes."""
import subprocess

from vegaskit import paths

LOADER = paths.REPO / "loader"


def test_every_csv_line_is_the_one_printf_made(tmp_path):
    exe = tmp_path / "tracecsv_check"
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                    str(LOADER / "tests" / "tracecsv_check.c"), str(LOADER / "tracecsv.c"),
                    str(LOADER / "format.c"), "-o", str(exe)], check=True, timeout=120)
    r = subprocess.run([str(exe), "1000000"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "checked 1000000\n"
