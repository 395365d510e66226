"""``DataModel``: the base of the data models."""


class DataModel:
    """A container of DataFrames, completed once by ``finalize``."""

    def __init__(self) -> None:
        self._finalized = False

    def finalize(self) -> None:
        if not self._finalized:
            self._finalized = True
            self._finalize()

    def _finalize(self) -> None:
        raise NotImplementedError

    def print_data(self) -> None:
        raise NotImplementedError
