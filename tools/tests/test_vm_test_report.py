"""results/kernels/report.md's per-kernel section (vegaskit.cli.vm_test): each feature a
kernel lacks is listed with what `vegasctl features` says the kernel refused or lacked."""
from vegaskit.cli import vm_test


def test_each_missing_feature_is_listed_with_its_reason(tmp_path):
    k = vm_test.Kernel("host", release="6.18.44")
    r = vm_test.Result(k, status="ok", features={
        "features": {"btf": True, "iter_sk_storage_map": False},
        "why": {"iter_sk_storage_map": "the kernel refused probe_iter_sk_storage: "
                                       "Operation not permitted"}})
    out = tmp_path / "report.md"
    vm_test.write_report([r], ["bpf/tests"], out)
    text = out.read_text()
    assert "- features: btf yes, iter_sk_storage_map NO" in text
    assert ("  - iter_sk_storage_map: the kernel refused probe_iter_sk_storage: "
            "Operation not permitted") in text
    assert "lacks iter_sk_storage_map" in text
