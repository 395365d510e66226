"""``DataModelUtil``: the base of the utilities over a data model."""

from datetime import datetime, timezone
from typing import List, Optional, Union

import pandas as pd

from ..data_model import DataModel
from ..processor import EventHandler


class DataModelUtil:
    """Utilities over a data model (or over a handler: its ``data``)."""

    def __init__(self, data_object: Union[DataModel, EventHandler, None]) -> None:
        self.__data = data_object.data if isinstance(data_object, EventHandler) else data_object

    @property
    def data(self) -> Optional[DataModel]:
        return self.__data

    @staticmethod
    def convert_time_columns(
        original: pd.DataFrame,
        columns_ns_to_ms: Optional[List[str]] = None,
        columns_ns_to_datetime: Optional[List[str]] = None,
        inplace: bool = True,
    ) -> pd.DataFrame:
        """Columns of ns to ms (float), and of ns since the epoch to datetimes (UTC, naive)."""
        df = original if inplace else original.copy()
        for column in columns_ns_to_ms or []:
            df[column] = _ns(df[column]) / 1000000.0
        for column in columns_ns_to_datetime or []:
            df[column] = df[column].map(_datetime).astype(object)
        return df

    @staticmethod
    def compute_column_difference(df: pd.DataFrame, left_column: str, right_column: str, diff_column: str) -> None:
        """Adds ``diff_column`` = ``left_column`` − ``right_column``."""
        df[diff_column] = df[left_column] - df[right_column]


def _ns(s: pd.Series) -> pd.Series:
    """Integer ns of a column of ns, datetimes or durations."""
    if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
        return s.astype("int64")
    return s


def _datetime(t):
    """A time in ns since the epoch (or a datetime64) as a naive UTC datetime; NaN stays."""
    if t is None or (isinstance(t, float) and t != t) or t is pd.NaT:
        return t
    ns = t.value if isinstance(t, (pd.Timestamp, pd.Timedelta)) else int(t)
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).replace(tzinfo=None)
