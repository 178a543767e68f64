"""Expositions from older HAMi releases and their quirks, read as HAMi meant them."""

from __future__ import annotations

from core.api import summarize_text
from core.model import SourceInfo

PASTE = SourceInfo(kind="paste", label="pasted text")


def test_a_monitor_family_declared_counter_is_read_under_its_own_name() -> None:
    # Older vGPU monitors declare Device_memory_desc_of_container as a counter; the text format
    # then names its samples ..._total. The export holds nothing else, and is still HAMi's.
    labels = 'podnamespace="ml",podname="train-0",ctrname="main",vdeviceid="0",deviceuuid="GPU-1"'
    text = (
        "# HELP Device_memory_desc_of_container Container device memory description\n"
        "# TYPE Device_memory_desc_of_container counter\n"
        f'Device_memory_desc_of_container{{{labels},context="0",module="0",data="0"}} 2048\n'
        "# HELP vGPU_device_memory_usage_in_bytes vGPU device usage\n"
        "# TYPE vGPU_device_memory_usage_in_bytes counter\n"
        f"vGPU_device_memory_usage_in_bytes{{{labels}}} 1073741824\n"
    )
    summary = summarize_text(text, PASTE)
    assert summary.input.components == ("monitor",)
    assert summary.input.families == (
        ("Device_memory_desc_of_container_total", 1),
        ("vGPU_device_memory_usage_in_bytes_total", 1),
    )
    assert summary.input.ignored_series == 0
    assert summary.runtime is not None
    (container,) = summary.runtime.containers
    assert (container.namespace, container.pod, container.device_uuid) == ("ml", "train-0", "GPU-1")
    assert container.mem_used_mib == 1024.0
