"""Operator overrides of the summary's thresholds and limits: every threshold is a documented
default (``core.settings``) that an operator can change without a new release.

``HAMI_SUMMARY_SETTINGS`` names a YAML file such as::

    thresholds:
      saturation_percent: 95      # a GPU this allocated counts as "full" / saturated
      dominant_percent: 60        # a namespace holding this share is the dominant tenant
    limits:
      max_input_bytes: 536870912  # refuse larger files and scrapes (default 256 MiB)
      top_rows: 30

``HAMI_SUMMARY_MAX_INPUT_MIB`` (and a command's ``--max-input-mib``) overrides the input limit
alone. The field names are those of
``core.settings.Thresholds`` and ``core.settings.Limits``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from core.settings import DEFAULT_SETTINGS, Settings, SettingsError, settings_from_mapping

SETTINGS_FILE_VARIABLE = "HAMI_SUMMARY_SETTINGS"
MAX_INPUT_VARIABLE = "HAMI_SUMMARY_MAX_INPUT_MIB"


def load_settings(
    env: Mapping[str, str], path: str | None = None, max_input_mib: float | None = None
) -> Settings:
    """Settings from ``path`` (or the file ``HAMI_SUMMARY_SETTINGS`` names) and the environment.

    The input limit is, first found: ``max_input_mib`` (a command's ``--max-input-mib``),
    ``HAMI_SUMMARY_MAX_INPUT_MIB``, the file's ``max_input_bytes``, the default.

    Raises ``SettingsError`` with a message naming the file, the variable or the field.
    """
    settings = DEFAULT_SETTINGS
    path = path or env.get(SETTINGS_FILE_VARIABLE) or None
    if path:
        import yaml  # only when there is a file: most commands run on the defaults

        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle.read())
        except OSError as err:
            raise SettingsError(f"cannot read the settings file {path}: {err.strerror}") from err
        except yaml.YAMLError as err:
            raise SettingsError(f"the settings file {path} is not valid YAML: {err}") from err
        if data is not None and not isinstance(data, Mapping):
            raise SettingsError(
                f"the settings file {path} must hold a mapping with thresholds/limits"
            )
        settings = settings_from_mapping(data or {}, where=path)
    raw = env.get(MAX_INPUT_VARIABLE)
    if max_input_mib is None and raw:
        try:
            max_input_mib = float(raw)
        except ValueError:
            max_input_mib = -1.0
        if not 0 < max_input_mib < float("inf"):
            raise SettingsError(
                f"{MAX_INPUT_VARIABLE} must be a positive number of MiB, got {raw!r}"
            )
    if max_input_mib is not None:
        limits = replace(settings.limits, max_input_bytes=max(1, int(max_input_mib * 1048576)))
        settings = replace(settings, limits=limits)
    return settings
