def attr(*args, **kwargs):
    """nose's test attributes: a test tagged 'slow' still runs."""
    return lambda function: function
