"""The GPU tests run each case on every device context there is: the CPU emulation always
(the kernels' index and broadcast logic, launches, placement and transfers), and 'cuda0'
where CuPy and a GPU are present; otherwise the cuda0 cases are skipped with the reason."""

import pytest

from sympile.config import GpuUnavailableError, require_cupy


def _cuda_reason() -> str | None:
    try:
        require_cupy(0)
    except GpuUnavailableError as error:
        return str(error)
    return None


CUDA_REASON = _cuda_reason()


@pytest.fixture(params=["emulated", "cuda0"])
def context(request):
    """The name of a device context the test compiles its functions for."""
    if request.param == "cuda0" and CUDA_REASON is not None:
        pytest.skip(f"no GPU: {CUDA_REASON}")
    return request.param
