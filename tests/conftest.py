import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=60)
settings.load_profile(os.environ.get("SYMPILE_HYPOTHESIS_PROFILE", "default"))
