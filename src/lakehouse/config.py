"""Kept for lakehouse.cdc and lakehouse.cdc_workload only, which import the settings from
here: the settings are lakehouse.core.config. Remove once those two import that."""

from lakehouse.core.config import REPO_ROOT, SERVICES_DIR, Settings, load_settings

__all__ = ["REPO_ROOT", "SERVICES_DIR", "Settings", "load_settings"]
